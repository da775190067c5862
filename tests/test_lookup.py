"""Tests of attnbook.lookup (chapter 1): the lookup-table task and its one-head model."""

import pytest
import torch

from attnbook.lookup import (
    LookupHead,
    lookup_batch,
    lookup_names,
    lookup_scores,
    train_lookup_head,
)


def test_batch_asks_each_letter_once_and_points_at_its_entry():
    n_keys, n_values = 5, 3
    tokens, source, answer = lookup_batch(
        40, n_keys, n_values, torch.Generator().manual_seed(0)
    )
    assert tokens.shape == (40, 10) and source.shape == answer.shape == (40, 5)
    letter, slot = tokens // (n_values + 1), tokens % (n_values + 1)
    every_letter = torch.arange(n_keys).expand(40, -1)
    # entries: each letter once, with a digit; questions: each letter once, with "?"
    assert torch.equal(letter[:, :5].sort(-1).values, every_letter)
    assert torch.equal(letter[:, 5:].sort(-1).values, every_letter)
    assert (slot[:, :5] < n_values).all() and (slot[:, 5:] == n_values).all()
    # each question's source holds the question's letter, and its digit is the answer
    assert torch.equal(letter.gather(1, source), letter[:, 5:])
    assert torch.equal(slot.gather(1, source), answer)
    names = lookup_names(2, 2)
    assert names == ["a0", "a1", "a?", "b0", "b1", "b?"]
    with pytest.raises(ValueError, match="n_keys"):
        lookup_names(27, 4)
    with pytest.raises(ValueError, match="batch_size >= 1"):
        lookup_batch(0, 4, 4)


def test_training_learns_to_read_the_entry_each_question_names():
    _ = torch.manual_seed(0)
    model = LookupHead(6, 4, d_model=16)
    test = lookup_batch(256, 6, 4, torch.Generator().manual_seed(1))
    before = lookup_scores(model, *test)
    losses = train_lookup_head(model, steps=200, seed=2)
    after = lookup_scores(model, *test)
    assert len(losses) == 200 and losses[-1] < 0.1 * losses[0]
    assert before["accuracy"] < 0.45 and before["weight_on_entry"] < 0.2
    assert after["accuracy"] > 0.95 and after["weight_on_entry"] > 0.8
    logits, weights = model(test[0])
    assert logits.shape == (256, 12, 4) and weights.shape == (256, 12, 12)
    with pytest.raises(ValueError, match="steps >= 1"):
        train_lookup_head(model, steps=0)
    with pytest.raises(ValueError, match="tensor of ids"):
        model(torch.zeros(2, 3))
