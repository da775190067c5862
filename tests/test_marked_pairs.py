"""Tests of attnbook.marked_pairs (chapter 3): two marked letters, a trained multi-head layer."""

import pytest
import torch

from attnbook.marked_pairs import (
    TwoQuestionLayer,
    marked_pair_batch,
    pair_names,
    train_two_questions,
    weight_on_marks,
)


def test_batch_marks_two_different_tokens_and_reports_their_letters():
    n = 5
    tokens, marked, answers = marked_pair_batch(
        200, 7, n, torch.Generator().manual_seed(0)
    )
    assert tokens.shape == (200, 7) and marked.shape == answers.shape == (200, 2)
    first, second = (tokens >= n) & (tokens < 2 * n), tokens >= 2 * n
    assert (first.sum(1) == 1).all() and (second.sum(1) == 1).all()
    assert torch.equal(first.long().argmax(1), marked[:, 0])
    assert torch.equal(second.long().argmax(1), marked[:, 1])
    assert (marked[:, 0] != marked[:, 1]).all()
    rows = torch.arange(200)
    assert torch.equal(tokens[rows, marked[:, 0]] - n, answers[:, 0])
    assert torch.equal(tokens[rows, marked[:, 1]] - 2 * n, answers[:, 1])
    # both marks land on every position over many draws
    assert set(marked[:, 0].tolist()) == set(marked[:, 1].tolist()) == set(range(7))
    assert pair_names(2) == ["a", "b", "A", "B", "a*", "b*"]


def test_layer_shapes_and_weight_on_marks():
    _ = torch.manual_seed(0)
    layer = TwoQuestionLayer(4, d_model=8, n_head=2)
    batch = marked_pair_batch(3, 6, 4, torch.Generator().manual_seed(1))
    logits, weights = layer(batch[0])
    assert logits.shape == (3, 6, 2, 4) and weights.shape == (3, 2, 6, 6)
    per_head, accuracy = weight_on_marks(layer, *batch)
    assert per_head.shape == (2, 2) and accuracy.shape == (2,)
    # the mean weight on the first mark, computed the slow way for head 1
    slow = sum(weights[b, 1, :, batch[1][b, 0]].mean() for b in range(3)) / 3
    assert torch.isclose(per_head[1, 0], slow.detach(), atol=1e-6)


def test_training_learns_both_questions_and_looks_at_the_marks():
    _ = torch.manual_seed(0)
    layer = TwoQuestionLayer(6, d_model=16, n_head=2)
    test = marked_pair_batch(256, 8, 6, torch.Generator().manual_seed(100))
    losses = train_two_questions(layer, steps=200, batch_size=32, seed=1)
    per_head, accuracy = weight_on_marks(layer, *test)
    assert len(losses) == 200 and losses[-1] < 0.1 * losses[0]
    assert (accuracy > 0.95).all()
    assert (per_head.sum(-1) > 0.8).all()


def test_one_head_learns_both_questions_by_splitting_unevenly_per_sequence():
    # chapter 3's control: one head suffices; its mean split is even, its split per
    # sequence is not (it depends on the letters under the marks)
    _ = torch.manual_seed(0)
    layer = TwoQuestionLayer(6, d_model=16, n_head=1)
    tokens, marked, answers = marked_pair_batch(
        256, 8, 6, torch.Generator().manual_seed(100)
    )
    train_two_questions(layer, steps=400, seed=1)
    per_head, accuracy = weight_on_marks(layer, tokens, marked, answers)
    assert (accuracy > 0.95).all()
    assert (per_head[0, 0] - per_head[0, 1]).abs() < 0.1
    with torch.no_grad():
        _, weights = layer(tokens)  # (B, 1, T, T)
    rows = torch.arange(len(tokens))[:, None]
    on_marks = weights.permute(0, 3, 1, 2)[rows, marked]  # (B, 2, 1, T)
    assert (on_marks[:, 0] - on_marks[:, 1]).abs().mean() > 0.2


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: marked_pair_batch(4, 1, 5), "length >= 2"),
        (lambda: marked_pair_batch(0, 5, 5), "batch_size >= 1"),
        (lambda: pair_names(27), "n_letters"),
        (lambda: TwoQuestionLayer(1), "n_letters >= 2"),
        (lambda: TwoQuestionLayer(4)(torch.zeros(2, 3)), "tensor of ids"),
        (lambda: train_two_questions(TwoQuestionLayer(4), steps=0), "steps >= 1"),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_heads_that_split_evenly_cannot_tell_which_letter_has_which_mark():
    # the argument of chapter 3: a token is letter vector + mark vector, so with even
    # weights swapping the two marked letters leaves the output unchanged
    _ = torch.manual_seed(0)
    layer = TwoQuestionLayer(5, d_model=8, n_head=2)
    with torch.no_grad():
        layer.attn.W_q.weight.zero_()  # every query 0, so every score 0:
        layer.attn.W_q.bias.zero_()  # every row uniform
    tokens, marked, answers = marked_pair_batch(
        50, 6, 5, torch.Generator().manual_seed(3)
    )
    keep = (
        answers[:, 0] != answers[:, 1]
    )  # only tables where the swap changes the answers
    tokens, marked, answers = tokens[keep], marked[keep], answers[keep]
    swapped = tokens.clone()
    rows = torch.arange(len(tokens))
    first, second = marked[:, 0], marked[:, 1]
    swapped[rows, first] = (
        5 + answers[:, 1]
    )  # the second letter, now with the first mark
    swapped[rows, second] = 10 + answers[:, 0]
    with torch.no_grad():
        out, weights = layer(tokens)
        out_swapped, _ = layer(swapped)
    assert torch.allclose(weights, torch.full_like(weights, 1 / 6))
    assert torch.allclose(out, out_swapped, atol=1e-6)
