"""Tests of attnbook.multihead (chapter 3)."""

import pytest
import torch

from attnbook.attention import scaled_dot_product_attention
from attnbook.masks import (
    causal_mask,
    combine_masks,
    padding_mask_from_lengths,
    to_torch_mha_mask,
)
from attnbook.multihead import MultiHeadAttention, merge_heads, split_heads


def make(d_model=16, n_head=4, bias=False, seed=0):
    torch.manual_seed(seed)
    return MultiHeadAttention(d_model, n_head, bias=bias)


def test_split_and_merge_heads_are_inverse_and_slice_features():
    x = torch.arange(2 * 3 * 8.0).view(2, 3, 8)
    h = split_heads(x, 4)
    assert h.shape == (2, 4, 3, 2)
    assert torch.equal(h[1, 2, 0], x[1, 0, 4:6])  # head 2 holds features 4..5
    assert torch.equal(merge_heads(h), x)


def test_parameter_count_is_independent_of_heads():
    for h in (1, 2, 4, 8):
        assert (
            sum(p.numel() for p in MultiHeadAttention(32, h).parameters())
            == 4 * 32 * 32
        )
    assert (
        sum(p.numel() for p in MultiHeadAttention(32, 4, bias=True).parameters())
        == 4 * 32 * 32 + 4 * 32
    )


def test_indivisible_d_model_is_a_clear_error():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_head=4"):
        MultiHeadAttention(10, 4)


@pytest.mark.parametrize("bias", [False, True])
def test_self_attention_equals_torch(bias):
    ours = make(bias=bias)
    theirs = ours.to_torch()
    x = torch.randn(3, 7, 16)
    out, w = ours(x)
    ref, ref_w = theirs(x, x, x)  # weights averaged over heads by default
    assert w.shape == (3, 4, 7, 7)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)
    torch.testing.assert_close(w.mean(1), ref_w, atol=1e-5, rtol=0)


def test_cross_attention_with_padding_and_causal_masks_equals_torch():
    ours = make(bias=True, seed=1)
    theirs = ours.to_torch()
    q, kv = torch.randn(2, 5, 16), torch.randn(2, 6, 16)
    pad = padding_mask_from_lengths([6, 4])  # (2, 1, 6)
    out, w = ours(q, kv, kv, mask=pad)
    assert out.shape == (2, 5, 16) and w.shape == (2, 4, 5, 6)
    ref, ref_w = theirs(
        q,
        kv,
        kv,
        key_padding_mask=to_torch_mha_mask(pad.squeeze(1)),
        average_attn_weights=False,
    )
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)
    torch.testing.assert_close(w, ref_w, atol=1e-5, rtol=0)
    x = torch.randn(2, 6, 16)
    both = combine_masks(causal_mask(6), pad)
    out, _ = ours(x, mask=both)
    ref, _ = theirs(
        x,
        x,
        x,
        attn_mask=to_torch_mha_mask(causal_mask(6)),
        key_padding_mask=to_torch_mha_mask(pad.squeeze(1)),
    )
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)


def test_from_torch_round_trip():
    torch.manual_seed(2)
    theirs = torch.nn.MultiheadAttention(12, 3, batch_first=True)
    ours = MultiHeadAttention.from_torch(theirs)
    x = torch.randn(2, 4, 12)
    torch.testing.assert_close(ours(x)[0], theirs(x, x, x)[0], atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="kdim"):
        MultiHeadAttention.from_torch(
            torch.nn.MultiheadAttention(12, 3, kdim=5, vdim=5)
        )


def test_one_head_equals_single_head_attention_then_output_projection():
    ours = make(d_model=8, n_head=1)
    x = torch.randn(1, 5, 8)
    q, k, v = ours.W_q(x), ours.W_k(x), ours.W_v(x)
    ref = ours.W_o(scaled_dot_product_attention(q, k, v)[0])
    torch.testing.assert_close(ours(x)[0], ref)


def test_unbatched_input_and_permutation_equivariance():
    ours = make()
    x = torch.randn(6, 16)
    out, w = ours(x)
    assert out.shape == (6, 16) and w.shape == (4, 6, 6)
    perm = torch.randperm(6, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(ours(x[perm])[0], out[perm], atol=1e-6, rtol=0)


def test_clear_errors_for_bad_inputs():
    ours = make()
    with pytest.raises(ValueError, match="d_model=16"):
        ours(torch.randn(2, 5, 15))
    with pytest.raises(ValueError, match="same B and T"):
        ours(torch.randn(2, 5, 16), torch.randn(2, 6, 16), torch.randn(2, 5, 16))
    with pytest.raises(ValueError, match="does not broadcast"):
        ours(torch.randn(2, 5, 16), mask=torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="boolean"):
        ours(torch.randn(2, 5, 16), mask=torch.ones(5, 5))


def test_is_causal_matches_an_explicit_causal_mask_and_the_fast_path():
    ours = make(seed=3)
    x = torch.randn(2, 6, 16)
    explicit, w = ours(x, mask=causal_mask(6))
    flag, w_flag = ours(x, is_causal=True)
    fast, none = ours(x, is_causal=True, need_weights=False)
    assert none is None and torch.equal(w, w_flag)
    torch.testing.assert_close(flag, explicit, atol=1e-6, rtol=0)
    torch.testing.assert_close(fast, explicit, atol=1e-5, rtol=0)
    # explicit path, no weights
    masked_fast, _ = ours(x, mask=causal_mask(6), need_weights=False)
    torch.testing.assert_close(masked_fast, explicit)


def test_kv_cache_one_token_at_a_time_equals_the_full_causal_pass():
    from attnbook.multihead import KVCache

    ours = make(seed=4)
    x = torch.randn(2, 7, 16)
    full, _ = ours(x, is_causal=True)
    cache = KVCache()
    prefix, _ = ours(x[:, :3], is_causal=True, kv_cache=cache)  # prefill 3 positions
    steps = [prefix]
    for t in range(3, 7):
        out, w = ours(x[:, t : t + 1], is_causal=True, kv_cache=cache)
        assert w.shape == (2, 4, 1, t + 1)
        steps.append(out)
    assert len(cache) == 7
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-6, rtol=0)


# -- the fused input projection (qkv_weight) and its row views W_q, W_k, W_v ---------------------


@pytest.mark.parametrize(
    "d_model, n_head, n_kv_head, bias",
    [
        (12, 3, None, False),
        (12, 3, None, True),
        (32, 4, 2, True),
        (128, 4, None, False),
    ],
)
def test_fused_projection_draws_the_numbers_of_three_separate_linears(
    d_model, n_head, n_kv_head, bias
):
    """The layer starts from the very numbers it had when W_q, W_k, W_v were three
    nn.Linear layers built in that order: no stored chapter output changes with the fusion."""
    torch.manual_seed(7)
    ours = MultiHeadAttention(d_model, n_head, bias=bias, n_kv_head=n_kv_head)
    kv = d_model // n_head * (n_head if n_kv_head is None else n_kv_head)
    torch.manual_seed(7)
    separate = [torch.nn.Linear(d_model, n, bias=bias) for n in (d_model, kv, kv)]
    W_o = torch.nn.Linear(d_model, d_model, bias=bias)
    for view, lin in zip((ours.W_q, ours.W_k, ours.W_v), separate):
        assert torch.equal(view.weight, lin.weight)
        assert (view.bias is None) == (not bias)
        if bias:
            assert torch.equal(view.bias, lin.bias)
    assert torch.equal(ours.W_o.weight, W_o.weight)
    assert ours.qkv_weight.shape == (d_model + 2 * kv, d_model)


def test_row_views_compute_and_write_like_linear_layers():
    layer = make(d_model=12, n_head=3, seed=2)
    x = torch.randn(2, 4, 12)
    q, k, v = layer.W_q(x), layer.W_k(x), layer.W_v(x)
    fused = x @ layer.qkv_weight.T  # (B, T, 3 d_model)
    for part, cols in zip((q, k, v), (slice(0, 12), slice(12, 24), slice(24, 36))):
        torch.testing.assert_close(part, fused[..., cols], atol=1e-6, rtol=0)
    with torch.no_grad():  # chapter 3 writes each head's rows into W_q, W_k, W_v
        layer.W_k.weight[4:8] = 1.0
    assert (layer.qkv_weight[16:20] == 1.0).all() and (
        layer.qkv_weight[12:16] != 1.0
    ).all()
    assert repr(layer.W_v) == "Linear(in_features=12, out_features=12, bias=False)"
    # self-attention (one product) and the same input given as key and value (three)
    out_self, _ = layer(x)
    out_cross, _ = layer(x, x.clone(), x.clone())
    torch.testing.assert_close(out_self, out_cross, atol=1e-6, rtol=0)


def test_positions_rotate_a_self_attention_call_and_hooks_see_it():
    """`positions` (chapter 9) reach the rotary path through the module call; a hook sees
    `self_attention`, which is that call; cross-attention takes no positions."""
    torch.manual_seed(0)
    attn = MultiHeadAttention(8, 2, rope=True)
    x = torch.randn(1, 5, 8)
    seen = []
    handle = attn.register_forward_hook(lambda m, args, out: seen.append(out[1]))
    try:
        _, near = attn.self_attention(x, need_weights=True, positions=torch.arange(5))
        _, far = attn(x, need_weights=True, positions=torch.arange(5) + 100)
        _, plain = attn(x, need_weights=True)
    finally:
        handle.remove()
    assert len(seen) == 3 and seen[0] is near
    torch.testing.assert_close(near, far)  # RoPE: only distances count
    torch.testing.assert_close(near, plain)  # default: positions 0 .. T - 1
    gap = torch.tensor([0, 1, 2, 3, 9])  # the last token further away: other weights
    assert not torch.allclose(attn(x, positions=gap)[1], near)
    with pytest.raises(ValueError, match="positions= is for self-attention"):
        attn(x, torch.randn(1, 3, 8), positions=torch.arange(5))
