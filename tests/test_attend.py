"""attnbook.attention.attend, the one attention core: its fused and explicit paths agree, the
causal band sits bottom-right with a key/value cache, an all-masked row gives zeros (forward
and backward), shared key/value heads, an additive bias, attention dropout."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attnbook.attention import attend, repeat_kv
from attnbook.masks import causal_mask, padding_mask
from attnbook.multihead import MultiHeadAttention
from attnbook.positional import alibi_bias

pytestmark = pytest.mark.usefixtures("one_thread")


def qkv(T_q=5, T_k=5, H=4, H_kv=4, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, H, T_q, d, generator=g, dtype=torch.float64)
    k, v = (
        torch.randn(2, H_kv, T_k, d, generator=g, dtype=torch.float64) for _ in range(2)
    )
    return q, k, v


@pytest.mark.parametrize("T_q, T_k", [(5, 5), (1, 7), (3, 7)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_fused_and_explicit_paths_agree(T_q, T_k, with_bias):
    q, k, v = qkv(T_q, T_k)
    bias = alibi_bias(4, T_q, T_k, dtype=torch.float64) if with_bias else None
    fused, none = attend(q, k, v, is_causal=True, bias=bias)
    explicit, weights = attend(q, k, v, is_causal=True, bias=bias, need_weights=True)
    assert none is None and weights.shape == (2, 4, T_q, T_k)
    torch.testing.assert_close(fused, explicit)


def test_the_causal_band_sits_bottom_right_with_a_cache():
    q, k, v = qkv(2, 6)
    _, weights = attend(q, k, v, is_causal=True, need_weights=True)
    # query i sees keys 0 .. 4 + i
    assert torch.equal(weights[0, 0] > 0, causal_mask(2, 6))
    ours, _ = attend(q, k, v, is_causal=True)
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(2, 6))
    # PyTorch's alignment
    top_left = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(ours, theirs)
    assert not torch.allclose(ours, top_left)


@pytest.mark.parametrize("need_weights", [False, True])
def test_a_query_with_no_key_gets_zeros_and_finite_gradients(need_weights):
    q, k, v = (t.requires_grad_() for t in qkv(4, 4))
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False  # query 2 may attend to nothing
    out, weights = attend(q, k, v, mask, need_weights=need_weights)
    assert torch.all(out[:, :, 2] == 0) and torch.isfinite(out).all()
    if need_weights:
        assert torch.all(weights[:, :, 2] == 0) and torch.allclose(
            weights[:, :, 0].sum(-1), torch.ones(()).double()
        )
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
    bias = torch.zeros(4, 4, dtype=torch.float64).masked_fill(~mask, float("-inf"))
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    # the row blocked by a bias
    via_bias, _ = attend(q2, k2, v2, bias=bias, need_weights=need_weights)
    torch.testing.assert_close(via_bias, out)
    # -inf + scores reaches the softmax: the guard keeps NaN out
    via_bias.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q2, k2, v2))


def test_shared_key_value_heads_are_repeated_in_place():
    q, k, v = qkv(5, 5, H=4, H_kv=2)
    out, _ = attend(q, k, v, is_causal=True)
    expanded, _ = attend(
        q, repeat_kv(k, 2), repeat_kv(v, 2), is_causal=True, need_weights=True
    )
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    torch.testing.assert_close(out, expanded)
    torch.testing.assert_close(out, theirs)
    with pytest.raises(ValueError, match="H must be divisible by H_kv"):
        attend(*qkv(5, 5, H=4, H_kv=3))
    with pytest.raises(ValueError, match="at least one head"):
        attend(*qkv(5, 5, H=4, H_kv=0))


@pytest.mark.parametrize(
    "T_q, T_k, with_bias, dropout_p",
    [(5, 5, False, 0.0), (2, 6, False, 0.0), (5, 5, True, 0.0), (5, 5, False, 0.3)],
)
def test_shared_heads_are_read_in_place_with_the_outputs_of_repeated_ones(
    T_q, T_k, with_bias, dropout_p, monkeypatch
):
    """The fused paths hand the H_kv heads to PyTorch (enable_gqa) and copy nothing; the
    outputs are those of the repeated heads, bit for bit (the same dropout draws too)."""
    q, k, v = qkv(T_q, T_k, H=4, H_kv=2)
    bias = alibi_bias(4, T_q, T_k, dtype=torch.float64) if with_bias else None
    torch.manual_seed(0)
    repeated, _ = attend(
        q,
        repeat_kv(k, 2),
        repeat_kv(v, 2),
        is_causal=True,
        bias=bias,
        dropout_p=dropout_p,
    )

    def no_copies(x, n_rep):
        raise AssertionError("the fused path repeated the key/value heads")

    monkeypatch.setattr("attnbook.attention.repeat_kv", no_copies)
    torch.manual_seed(0)
    shared, _ = attend(q, k, v, is_causal=True, bias=bias, dropout_p=dropout_p)
    assert torch.equal(shared, repeated)


def test_attention_dropout_zeroes_and_rescales_weights():
    q, k, v = qkv()
    _, plain = attend(q, k, v, need_weights=True)
    torch.manual_seed(0)
    _, dropped = attend(q, k, v, dropout_p=0.5, need_weights=True)
    kept = dropped != 0
    assert 0.3 < kept.double().mean() < 0.7
    # survivors scaled by 1 / (1 - p)
    torch.testing.assert_close(dropped[kept], 2 * plain[kept])
    with pytest.raises(ValueError, match="dropout_p must be in"):
        attend(q, k, v, dropout_p=1.0)


def test_multihead_dropout_acts_in_training_only():
    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4, dropout=0.5).double()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    layer.eval()
    plain, _ = layer(x)
    layer.train()
    dropped, _ = layer(x, need_weights=False)
    assert not torch.allclose(plain, dropped)
    layer.eval()
    torch.testing.assert_close(layer(x, need_weights=False)[0], plain)
    assert "dropout=0.5" in repr(layer)


def test_alibi_keeps_the_padding_mask():
    """ALiBi's bias and a padding mask together: padded keys get weight 0, and the output is
    the explicit softmax(q k^T / sqrt(d_k) + bias) over the real keys."""
    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4, alibi=True).double()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    # row 1: keys 1 and 3 padded
    ids = torch.tensor([[5, 6, 7, 8, 9, 4], [5, 0, 7, 0, 9, 4]])
    key_mask = padding_mask(ids, 0)  # (B, 1, T)
    out, weights = layer(x, mask=key_mask, is_causal=True)
    assert torch.all(weights[1, :, :, [1, 3]] == 0) and torch.all(
        weights[1, :, :, [0, 2]][:, 2:] > 0
    )
    q = layer.W_q(x).view(2, 6, 4, 4).transpose(1, 2)
    k = layer.W_k(x).view(2, 6, 4, 4).transpose(1, 2)
    v = layer.W_v(x).view(2, 6, 4, 4).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(4) + alibi_bias(
        4, 6, dtype=torch.float64
    )
    expected = torch.softmax(scores.masked_fill(~key_mask[:, None], float("-inf")), -1)
    torch.testing.assert_close(weights, expected)
    fused, _ = layer(x, mask=key_mask, is_causal=True, need_weights=False)
    reference = layer.W_o((expected @ v).transpose(1, 2).reshape(2, 6, 16))
    torch.testing.assert_close(fused, reference)
    torch.testing.assert_close(out, reference)


def test_causal_mask_with_more_keys_than_queries():
    assert torch.equal(
        causal_mask(2, 4), torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    )
    assert torch.equal(causal_mask(4, 4), causal_mask(4))
    with pytest.raises(ValueError, match="cannot be the last positions"):
        causal_mask(5, 4)
