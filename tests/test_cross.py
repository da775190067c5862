"""Tests of attnbook.cross (chapter 1): the reversal task, the additive score, and the
cross-attention head trained on it; and of `attention_from_scores`, the hook through which
a score computed another way reaches the package's one softmax and weighted sum."""

import math

import torch

from attnbook.attention import attention_from_scores, scaled_dot_product_attention
from attnbook.cross import (
    AdditiveScore,
    Reverser,
    reversal_batch,
    reversal_scores,
    reverse_greedy,
    train_reverser,
)


def test_batch_reverses_and_shifts_the_target_right():
    source, decoder_input, target = reversal_batch(
        5, 6, 4, torch.Generator().manual_seed(0)
    )
    assert source.shape == decoder_input.shape == target.shape == (5, 6)
    assert torch.equal(target[:, 0], source[:, -1])
    assert torch.equal(target, torch.stack([source[:, 5 - t] for t in range(6)], 1))
    assert (decoder_input[:, 0] == 4).all()  # the start symbol
    assert torch.equal(decoder_input[:, 1:], target[:, :-1])
    assert source.min() >= 0 and source.max() < 4


def test_dot_scores_through_the_hook_equal_scaled_dot_product_attention():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, n, 4, generator=gen) for n in (3, 5, 5))
    mask = torch.rand(2, 3, 5, generator=gen) > 0.4
    mask[0, 1] = False  # a query with no key left: zeros, as in the core
    scores = q @ k.transpose(-2, -1) / math.sqrt(4)  # (2, 3, 5)
    for m in (None, mask):
        out, weights = attention_from_scores(scores, v, m)
        ref_out, ref_weights = scaled_dot_product_attention(q, k, v, m)
        assert torch.allclose(out, ref_out) and torch.allclose(weights, ref_weights)
    assert (out[0, 1] == 0).all() and (weights[0, 1] == 0).all()
    # -inf in the scores blocks a key like a mask does
    blocked = scores.masked_fill(~mask, float("-inf"))
    out_inf, weights_inf = attention_from_scores(blocked, v)
    assert torch.allclose(out_inf, ref_out) and not weights_inf.isnan().any()


def test_additive_score_is_bahdanaus_formula_entry_by_entry():
    _ = torch.manual_seed(2)
    score = AdditiveScore(d_q=3, d_k=5, d_a=4)
    q, k = torch.randn(2, 3), torch.randn(6, 5)  # different widths are allowed
    s = score(q, k)
    assert s.shape == (2, 6)
    W_a, U_a, w_a = score.W_a.weight.T, score.U_a.weight.T, score.w_a.weight.T
    for i in range(2):
        for j in range(6):
            expected = torch.tanh(q[i] @ W_a + k[j] @ U_a) @ w_a  # (1,)
            assert torch.allclose(s[i, j], expected[0], atol=1e-6)
    batched = score(
        q.expand(3, 2, 3), k.expand(3, 6, 5)
    )  # leading dimensions pass through
    assert batched.shape == (3, 2, 6) and torch.allclose(batched[1], s)


def test_training_puts_the_weight_on_the_anti_diagonal():
    # margins on seeds 0-5 (80 steps): after training every sequence right, weight on the
    # aligned position at least 0.99 (dot) and 0.87 (additive); before, at most 0.19
    source, _, _ = reversal_batch(200, 6, 8, torch.Generator().manual_seed(3))
    for kind in ("dot", "additive"):
        _ = torch.manual_seed(0)
        model = Reverser(8, 6, d_model=16, score=kind)
        before = reversal_scores(model, source)
        losses = train_reverser(model, steps=80, batch_size=32, seed=1)
        after = reversal_scores(model, source)
        assert len(losses) == 80 and losses[-1] < 0.1 * losses[0], kind
        assert before["sequence_accuracy"] < 0.05 and before["weight_on_aligned"] < 0.3
        assert after["sequence_accuracy"] > 0.9 and after["weight_on_aligned"] > 0.7, (
            kind
        )
    predicted, weights = reverse_greedy(model, source[:4])
    assert predicted.shape == (4, 6) and weights.shape == (4, 6, 6)
    assert torch.allclose(weights.sum(-1), torch.ones(4, 6))
