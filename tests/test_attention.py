"""Tests of attnbook.attention (chapter 1)."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnbook.attention import SelfAttention, scaled_dot_product_attention


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("batch", [(), (3,), (2, 4)])
def test_matches_torch_without_mask(batch):
    q, k, v = (
        rand(*batch, 5, 8, seed=1),
        rand(*batch, 7, 8, seed=2),
        rand(*batch, 7, 3, seed=3),
    )
    out, w = scaled_dot_product_attention(q, k, v)
    assert out.shape == (*batch, 5, 3) and w.shape == (*batch, 5, 7)
    torch.testing.assert_close(
        out, F.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=0
    )
    manual = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
    torch.testing.assert_close(w, manual, atol=1e-6, rtol=0)


@pytest.mark.parametrize("mask_shape", [(5, 7), (2, 1, 5, 7), (2, 4, 1, 7), (7,)])
def test_matches_torch_with_mask(mask_shape):
    q, k, v = (
        rand(2, 4, 5, 8, seed=4),
        rand(2, 4, 7, 8, seed=5),
        rand(2, 4, 7, 6, seed=6),
    )
    mask = torch.rand(mask_shape, generator=torch.Generator().manual_seed(7)) > 0.4
    mask[..., 0] = True  # every query keeps at least one key
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.expand(2, 4, 5, 7))
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=0)
    assert torch.all(w.masked_select(~mask.expand_as(w)) == 0)


def test_rows_sum_to_one_and_weights_nonnegative():
    _, w = scaled_dot_product_attention(rand(4, 6, 16), rand(4, 9, 16), rand(4, 9, 16))
    torch.testing.assert_close(w.sum(-1), torch.ones(4, 6, dtype=w.dtype))
    assert (w >= 0).all()


def test_causal_mask_matches_is_causal():
    q, k, v = rand(2, 6, 8), rand(2, 6, 8), rand(2, 6, 8)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    out, w = scaled_dot_product_attention(q, k, v, mask=causal)
    torch.testing.assert_close(
        out, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-6, rtol=0
    )
    assert torch.all(w.triu(1) == 0)


def test_stable_for_huge_scores():
    q = torch.full((1, 2, 4), 1e4)
    k = torch.tensor([[[1e4] * 4, [-1e4] * 4]])
    out, w = scaled_dot_product_attention(q, k, torch.eye(2).unsqueeze(0))
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    torch.testing.assert_close(w[0, 0], torch.tensor([1.0, 0.0]))


def test_fully_masked_row_gives_zeros_not_nan():
    q, k, v = rand(3, 4), rand(5, 4), rand(5, 2)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    assert torch.all(out[1] == 0) and torch.all(w[1] == 0)
    torch.testing.assert_close(w[[0, 2]].sum(-1), torch.ones(2, dtype=w.dtype))


def test_gradients_flow_and_are_finite_with_masked_rows():
    q, k, v = (rand(2, 3, 4, seed=s).requires_grad_() for s in (1, 2, 3))
    mask = torch.tensor(
        [[True, True, False], [False, False, False], [True, False, True]]
    )
    out, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    out.sum().backward()
    for t in (q, k, v):
        assert t.grad is not None and torch.isfinite(t.grad).all()
    assert q.grad.abs().sum() > 0 and k.grad.abs().sum() > 0 and v.grad.abs().sum() > 0


def test_gradient_matches_torch():
    q, k, v = (rand(2, 5, 8, seed=s).requires_grad_() for s in (1, 2, 3))
    scaled_dot_product_attention(q, k, v)[0].pow(2).sum().backward()
    mine = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    F.scaled_dot_product_attention(q, k, v).pow(2).sum().backward()
    for a, t in zip(mine, (q, k, v)):
        torch.testing.assert_close(a, t.grad, atol=1e-6, rtol=0)


@pytest.mark.parametrize(
    "q_shape, k_shape, v_shape, message",
    [
        ((4, 8), (6, 7), (6, 8), "same width d_k"),
        ((4, 8), (6, 8), (5, 8), "same number of tokens"),
        ((8,), (6, 8), (6, 8), "at least 2 dimensions"),
        ((2, 4, 8), (3, 6, 8), (3, 6, 8), "do not broadcast"),
    ],
)
def test_clear_errors_for_bad_shapes(q_shape, k_shape, v_shape, message):
    with pytest.raises(ValueError, match=message):
        scaled_dot_product_attention(rand(*q_shape), rand(*k_shape), rand(*v_shape))


def test_clear_error_for_wrong_mask_shape():
    with pytest.raises(ValueError, match=r"mask of shape \(4, 5\) does not broadcast"):
        scaled_dot_product_attention(
            rand(4, 8), rand(6, 8), rand(6, 8), mask=torch.ones(4, 5, dtype=torch.bool)
        )


def test_mask_must_not_enlarge_the_batch():
    with pytest.raises(ValueError, match="does not broadcast"):
        scaled_dot_product_attention(
            rand(4, 8),
            rand(6, 8),
            rand(6, 8),
            mask=torch.ones(3, 4, 6, dtype=torch.bool),
        )


@pytest.mark.parametrize(
    "mask", [torch.ones(4, 6), torch.zeros(4, 6, dtype=torch.long), [[True] * 6] * 4]
)
def test_clear_error_for_non_boolean_mask(mask):
    with pytest.raises(TypeError, match="mask must be"):
        scaled_dot_product_attention(rand(4, 8), rand(6, 8), rand(6, 8), mask=mask)


def test_clear_error_for_non_tensor_input():
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        scaled_dot_product_attention([[1.0]], rand(1, 1), rand(1, 1))


def test_self_attention_layer_shapes_and_parts():
    torch.manual_seed(0)
    layer = SelfAttention(d_in=6, d_out=4)
    assert isinstance(layer.W_q, torch.nn.Linear) and layer.W_q.bias is None
    assert SelfAttention(6, 4, bias=True).W_v.bias is not None
    x = torch.randn(2, 5, 6)
    out, w = layer(x)
    assert out.shape == (2, 5, 4) and w.shape == (2, 5, 5)
    ref_out, ref_w = scaled_dot_product_attention(
        x @ layer.W_q.weight.T, x @ layer.W_k.weight.T, x @ layer.W_v.weight.T
    )
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)


def test_self_attention_passes_the_mask_and_rejects_wrong_width():
    layer = SelfAttention(3, 3)
    x = torch.randn(4, 3)
    _, w = layer(x, mask=torch.ones(4, 4, dtype=torch.bool).tril())
    assert torch.all(w.triu(1) == 0)
    with pytest.raises(ValueError, match="expects d_in=3"):
        layer(torch.randn(4, 5))
    with pytest.raises(ValueError, match="d_in must be a positive int"):
        SelfAttention(0, 3)


def test_row_entropy_is_1_for_uniform_and_0_for_one_hot_rows():
    from attnbook.attention import row_entropy

    w = torch.tensor(
        [[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]]
    )
    torch.testing.assert_close(row_entropy(w), torch.tensor([1.0, 0.0, 0.5]))
    assert row_entropy(torch.full((2, 3, 5, 5), 0.2)).shape == (2, 3, 5)
    with pytest.raises(ValueError, match="T_k >= 2"):
        row_entropy(torch.ones(3, 1))
    with pytest.raises(ValueError, match="non-negative"):
        row_entropy(torch.tensor([[1.5, -0.5]]))
    with pytest.raises(TypeError):
        row_entropy([[0.5, 0.5]])
