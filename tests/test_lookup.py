"""Tests of attnbook.lookup (chapter 1): the marked-letter task and its one-head model."""

import pytest
import torch

from attnbook.lookup import (
    LookupHead,
    lookup_scores,
    marked_letter_batch,
    token_names,
    train_lookup_head,
)


def test_batch_marks_exactly_one_token_and_reports_its_letter():
    gen = torch.Generator().manual_seed(0)
    tokens, marked, answer = marked_letter_batch(50, 7, 5, gen)
    assert tokens.shape == (50, 7) and marked.shape == answer.shape == (50,)
    is_marked = tokens >= 5
    assert (is_marked.sum(1) == 1).all()
    assert torch.equal(is_marked.long().argmax(1), marked)
    assert torch.equal(tokens[torch.arange(50), marked] - 5, answer)
    assert token_names(3) == ["a", "b", "c", "A", "B", "C"]
    with pytest.raises(ValueError, match="length >= 2"):
        marked_letter_batch(4, 1, 5)
    with pytest.raises(ValueError, match="n_letters"):
        token_names(27)


def test_training_learns_to_attend_to_the_marked_token():
    _ = torch.manual_seed(0)
    model = LookupHead(6, 16)
    tokens, marked, answer = marked_letter_batch(
        256, 8, 6, torch.Generator().manual_seed(1)
    )
    before = lookup_scores(model, tokens, marked, answer)
    losses = train_lookup_head(model, steps=300, seed=2)
    after = lookup_scores(model, tokens, marked, answer)
    assert len(losses) == 300 and losses[-1] < 0.2 * losses[0]
    assert before["accuracy"] < 0.5 and before["weight_on_marked"] < 0.3
    assert after["accuracy"] > 0.95 and after["weight_on_marked"] > 0.7
    logits, weights = model(tokens)
    assert logits.shape == (256, 8, 6) and weights.shape == (256, 8, 8)
    with pytest.raises(ValueError, match="steps >= 1"):
        train_lookup_head(model, steps=0)
