"""Property tests (Hypothesis) of attnbook.attention, attnbook.masks and attnbook.blockwise:
agreement with torch's F.scaled_dot_product_attention and the defining properties of attention
(rows sum to 1, masked weights exactly 0, no NaN, a convex combination of the values)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from prop_helpers import DENSITIES, DTYPES, SEEDS, close, randn, random_mask

from attnbook.attention import scaled_dot_product_attention
from attnbook.blockwise import blockwise_attention
from attnbook.masks import (
    causal_mask,
    combine_masks,
    from_additive,
    padding_mask,
    padding_mask_from_lengths,
    to_additive,
    to_torch_mha_mask,
)

pytestmark = pytest.mark.usefixtures("one_thread")
SIZES = st.integers(1, 6)


@st.composite
def qkv(draw: st.DrawFn) -> dict:
    """q (B, H, T_q, d_k), k (B, H, T_k, d_k), v (B, H, T_k, d_v) and a mask of a drawn layout."""
    B, H, T_q, T_k = draw(SIZES), draw(st.integers(1, 3)), draw(SIZES), draw(SIZES)
    d_k, d_v = draw(st.integers(1, 16)), draw(st.integers(1, 16))
    dtype, seed = draw(DTYPES), draw(SEEDS)
    layout = draw(
        st.sampled_from(
            [(T_q, T_k), (B, 1, T_q, T_k), (B, H, T_q, T_k), (B, 1, 1, T_k)]
        )
    )
    mask = random_mask(seed + 3, layout, draw(DENSITIES))
    if draw(st.booleans()):
        mask[..., 0, :] = False  # a query with no key at all
    return {
        "q": randn(seed, B, H, T_q, d_k, dtype=dtype),
        "k": randn(seed + 1, B, H, T_k, d_k, dtype=dtype),
        "v": randn(seed + 2, B, H, T_k, d_v, dtype=dtype),
        "mask": mask,
        "dtype": dtype,
    }


@given(qkv())
def test_unmasked_attention_equals_torch(case: dict) -> None:
    q, k, v, dtype = case["q"], case["k"], case["v"], case["dtype"]
    out, weights = scaled_dot_product_attention(q, k, v)
    close(out, F.scaled_dot_product_attention(q, k, v), dtype)
    close(weights.sum(-1), torch.ones(weights.shape[:-1], dtype=dtype), dtype)
    assert (weights >= 0).all()


@given(qkv())
def test_masked_attention_equals_torch_where_a_query_has_keys(case: dict) -> None:
    q, k, v, mask, dtype = case["q"], case["k"], case["v"], case["mask"], case["dtype"]
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    full = mask.expand(weights.shape)
    has_key = full.any(-1)  # (B, H, T_q)
    # torch's fused kernel is compared on the rows it defines (a row with no key is NaN or 0
    # there, depending on the version); ours is exactly 0 on those rows
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    close(out[has_key], ref[has_key], dtype)
    close(weights[has_key].sum(-1), torch.ones(int(has_key.sum()), dtype=dtype), dtype)
    assert torch.all(weights[~full] == 0), "masked weights must be exactly 0"
    assert torch.all(out[~has_key] == 0) and torch.all(weights[~has_key] == 0)
    assert not out.isnan().any() and not weights.isnan().any()


@given(qkv())
def test_output_is_a_convex_combination_of_the_values(case: dict) -> None:
    q, k, v, mask, dtype = (
        case["q"],
        case["k"],
        case["v"],
        case["mask"].clone(),
        case["dtype"],
    )
    mask[..., 0] = True  # every query sees at least the first key
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    slack = 1e-5 if dtype == torch.float32 else 1e-12
    low = v.min(-2, keepdim=True).values.expand_as(out) - slack  # (B, H, T_q, d_v)
    high = v.max(-2, keepdim=True).values.expand_as(out) + slack
    assert torch.all(out >= low) and torch.all(out <= high)


@given(SIZES, st.integers(1, 6), st.integers(1, 8), DTYPES, SEEDS, st.data())
def test_causal_output_does_not_see_future_tokens(
    B: int, T: int, d: int, dtype: torch.dtype, seed: int, data: st.DataObject
) -> None:
    q, k, v = (randn(seed + i, B, 2, T, d, dtype=dtype) for i in range(3))
    t = data.draw(st.integers(0, T - 1), label="last unchanged position")
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(T))
    later = slice(t + 1, None)
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    q2[..., later, :] += 3.0
    k2[..., later, :] -= 2.0
    v2[..., later, :] *= -5.0
    out2, _ = scaled_dot_product_attention(q2, k2, v2, causal_mask(T))
    # the future keys' weights are exactly 0, so the earlier outputs are bit for bit the same
    assert torch.equal(out[..., : t + 1, :], out2[..., : t + 1, :])


@given(qkv())
def test_additive_mask_gives_the_same_attention(case: dict) -> None:
    q, k, v, mask, dtype = case["q"], case["k"], case["v"], case["mask"], case["dtype"]
    has_key = mask.expand(*q.shape[:-1], k.shape[-2]).any(-1)
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=to_additive(mask, dtype))
    close(out[has_key], ref[has_key], dtype)


@given(
    st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=1, max_size=6),
    st.sampled_from([float("-inf"), -1e9, -1e4, None]),
)
def test_additive_round_trip_reads_every_blocking_convention(
    rows: list, blocked: float | None
) -> None:
    width = len(rows[0])
    mask = torch.tensor([(r * width)[:width] for r in rows])
    additive = to_additive(mask)
    value = torch.finfo(torch.float32).min if blocked is None else blocked
    finite = torch.zeros(mask.shape).masked_fill(~mask, value)
    assert torch.equal(from_additive(additive), mask) and torch.equal(
        from_additive(finite), mask
    )
    assert torch.equal(to_torch_mha_mask(to_torch_mha_mask(mask)), mask)


@given(st.integers(1, 12))
def test_causal_mask_is_the_lower_triangle_sdpa_uses(T: int) -> None:
    m = causal_mask(T)
    i, j = torch.meshgrid(torch.arange(T), torch.arange(T), indexing="ij")
    assert torch.equal(m, j <= i)
    q = randn(T, 1, T, 4)
    ours, _ = scaled_dot_product_attention(q, q, q, m)
    close(ours, F.scaled_dot_product_attention(q, q, q, is_causal=True), torch.float64)


@given(st.lists(st.integers(0, 7), min_size=1, max_size=5), st.integers(0, 3), SEEDS)
def test_padding_masks_from_ids_and_lengths_agree(
    lengths: list, extra: int, seed: int
) -> None:
    T = max(lengths) + extra
    by_len = padding_mask_from_lengths(lengths, max_len=T)  # (B, 1, T)
    ids = torch.randint(
        1, 9, (len(lengths), T), generator=torch.Generator().manual_seed(seed)
    )
    ids[by_len.squeeze(1).logical_not()] = 0
    assert torch.equal(padding_mask(ids, pad_id=0), by_len)
    assert by_len.sum(-1).squeeze(1).tolist() == lengths


@given(SEEDS, SIZES, SIZES, DENSITIES, DENSITIES)
def test_combined_mask_is_the_broadcast_and(
    seed: int, B: int, T: int, p1: float, p2: float
) -> None:
    a, b = random_mask(seed, (T, T), p1), random_mask(seed + 1, (B, 1, T), p2)
    both = combine_masks(a, None, b)
    assert both is not None and both.shape == (B, T, T)
    for n in range(B):
        assert torch.equal(both[n], a & b[n])


@given(SIZES, SIZES, st.integers(1, 8), st.integers(1, 8), st.integers(1, 9), SEEDS)
def test_blockwise_attention_is_exact_for_any_block_size(
    T_q: int, T_k: int, d_k: int, d_v: int, block: int, seed: int
) -> None:
    q, k, v = (
        randn(seed, T_q, d_k),
        randn(seed + 1, T_k, d_k),
        randn(seed + 2, T_k, d_v),
    )
    ours = blockwise_attention(q.numpy(), k.numpy(), v.numpy(), block_size=block)
    np.testing.assert_allclose(
        ours, F.scaled_dot_product_attention(q, k, v).numpy(), atol=1e-12, rtol=1e-10
    )
