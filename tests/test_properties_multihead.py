"""Property tests (Hypothesis) of attnbook.multihead: MultiHeadAttention against
torch.nn.MultiheadAttention (self and cross, masks, biases, float32/float64), its fast and
explicit paths against each other, causality, the KV cache, and split/merge of heads."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from prop_helpers import DENSITIES, DTYPES, SEEDS, close, randn, random_mask

from attnbook.masks import causal_mask, to_torch_mha_mask
from attnbook.multihead import KVCache, MultiHeadAttention, merge_heads, split_heads

pytestmark = pytest.mark.usefixtures("one_thread")
SIZES = st.integers(1, 5)


@st.composite
def layers(draw: st.DrawFn) -> tuple[MultiHeadAttention, torch.dtype, int]:
    """A MultiHeadAttention with random d_model = H * d_k, bias and dtype, seeded weights."""
    H, d_k, bias, dtype, seed = (
        draw(st.integers(1, 4)),
        draw(st.integers(1, 6)),
        draw(st.booleans()),
        draw(DTYPES),
        draw(SEEDS),
    )
    torch.manual_seed(seed % 2**31)
    layer = MultiHeadAttention(H * d_k, H, bias=bias).to(dtype)
    if bias:  # nn.Linear starts biases small but non-zero; make them matter
        with torch.no_grad():
            for lin in (layer.W_q, layer.W_k, layer.W_v, layer.W_o):
                lin.bias.normal_()
    return layer, dtype, seed


@given(
    layers(),
    SIZES,
    SIZES,
    SIZES,
    DENSITIES,
    st.sampled_from(["none", "attn", "padding"]),
)
def test_equals_torch_multihead_attention(
    made: tuple, B: int, T_q: int, T_k: int, density: float, kind: str
) -> None:
    layer, dtype, seed = made
    d = layer.d_model
    query, key = (
        randn(seed, B, T_q, d, dtype=dtype),
        randn(seed + 1, B, T_k, d, dtype=dtype),
    )
    value = randn(seed + 2, B, T_k, d, dtype=dtype)
    theirs = layer.to_torch().eval()
    kwargs: dict = {}
    mask = None
    # (T_q, T_k), every query keeps key 0 (torch gives NaN for a query with none)
    if kind == "attn":
        mask = random_mask(seed, (T_q, T_k), density)
        mask[:, 0] = True
        kwargs["attn_mask"] = to_torch_mha_mask(mask)
    elif kind == "padding":  # (B, 1, T_k), every sequence keeps at least one key
        keep = random_mask(seed, (B, T_k), density)
        keep[:, 0] = True
        mask = keep.unsqueeze(1)
        kwargs["key_padding_mask"] = ~keep
    out, weights = layer(query, key, value, mask=mask)
    ref, ref_weights = theirs(query, key, value, average_attn_weights=False, **kwargs)
    close(out, ref, dtype)
    close(weights, ref_weights, dtype)


@given(layers(), SIZES, SIZES, DENSITIES, st.booleans())
def test_self_attention_equals_torch(
    made: tuple, B: int, T: int, density: float, is_causal: bool
) -> None:
    layer, dtype, seed = made
    x = randn(seed, B, T, layer.d_model, dtype=dtype)
    # each sees itself
    mask = random_mask(seed, (T, T), density) | torch.eye(T, dtype=torch.bool)
    theirs = layer.to_torch().eval()
    if is_causal:
        out, weights = layer(x, mask=mask, is_causal=True)
        mask = mask & causal_mask(T)
    else:
        out, weights = layer(x, mask=mask)
    ref, ref_weights = theirs(
        x, x, x, attn_mask=to_torch_mha_mask(mask), average_attn_weights=False
    )
    close(out, ref, dtype)
    close(weights, ref_weights, dtype)


@given(layers(), SIZES, SIZES, st.booleans())
def test_fast_path_equals_explicit_path(
    made: tuple, B: int, T: int, is_causal: bool
) -> None:
    layer, dtype, seed = made
    x = randn(seed, B, T, layer.d_model, dtype=dtype)
    explicit, weights = layer(x, is_causal=is_causal)
    fast, no_weights = layer(x, is_causal=is_causal, need_weights=False)
    assert weights is not None and no_weights is None
    close(fast, explicit, dtype)
    if is_causal:
        close(explicit, layer(x, mask=causal_mask(T))[0], dtype)
        assert torch.all(weights.triu(1) == 0)


@given(layers(), SIZES, st.integers(2, 6), st.data())
def test_causal_outputs_unchanged_by_future_tokens(
    made: tuple, B: int, T: int, data: st.DataObject
) -> None:
    layer, dtype, seed = made
    t = data.draw(st.integers(0, T - 2), label="last unchanged position")
    x = randn(seed, B, T, layer.d_model, dtype=dtype)
    y = x.clone()
    y[:, t + 1 :] = randn(seed + 1, B, T - t - 1, layer.d_model, dtype=dtype) * 4
    with torch.no_grad():
        for need_weights in (True, False):
            before, _ = layer(x, is_causal=True, need_weights=need_weights)
            after, _ = layer(y, is_causal=True, need_weights=need_weights)
            if need_weights:  # explicit path: the future weights are exactly 0
                assert torch.equal(before[:, : t + 1], after[:, : t + 1])
            else:  # fused kernel: same function, not promised bit for bit
                close(before[:, : t + 1], after[:, : t + 1], dtype)


@given(layers(), SIZES, st.integers(1, 6), st.integers(1, 3))
def test_kv_cache_decoding_equals_one_causal_pass(
    made: tuple, B: int, T: int, step: int
) -> None:
    layer, dtype, seed = made
    x = randn(seed, B, T, layer.d_model, dtype=dtype)
    full, _ = layer(x, is_causal=True)
    cache, pieces = KVCache(), []
    for start in range(0, T, step):
        out, _ = layer(x[:, start : start + step], is_causal=True, kv_cache=cache)
        pieces.append(out)
    assert len(cache) == T
    close(torch.cat(pieces, dim=1), full, dtype)


@given(layers(), SIZES, SIZES, DENSITIES)
def test_query_with_no_key_gets_a_zero_mix_not_nan(
    made: tuple, T_q: int, T_k: int, density: float
) -> None:
    layer, dtype, seed = made
    q, kv = (
        randn(seed, 2, T_q, layer.d_model, dtype=dtype),
        randn(seed + 1, 2, T_k, layer.d_model, dtype=dtype),
    )
    mask = random_mask(seed, (T_q, T_k), density)
    mask[0] = False
    out, weights = layer(q, kv, mask=mask)
    assert not out.isnan().any() and torch.all(weights[:, :, 0] == 0)
    bias = (
        layer.W_o.bias
        if layer.W_o.bias is not None
        else torch.zeros(layer.d_model, dtype=dtype)
    )
    # W_o applied to all-zero heads
    assert torch.equal(out[:, 0], bias.detach().expand(2, -1))


@given(layers(), SIZES, SIZES)
def test_unbatched_input_equals_a_batch_of_one(made: tuple, T_q: int, T_k: int) -> None:
    layer, dtype, seed = made
    q, kv = (
        randn(seed, T_q, layer.d_model, dtype=dtype),
        randn(seed + 1, T_k, layer.d_model, dtype=dtype),
    )
    out, weights = layer(q, kv)
    out_b, weights_b = layer(q[None], kv[None])
    close(out, out_b[0], dtype)
    close(weights, weights_b[0], dtype)


@given(SIZES, SIZES, st.integers(1, 4), st.integers(1, 5), SEEDS)
def test_split_heads_slices_features_and_merge_inverts_it(
    B: int, T: int, H: int, d_k: int, seed: int
) -> None:
    x = randn(seed, B, T, H * d_k)
    heads = split_heads(x, H)  # (B, H, T, d_k)
    assert heads.shape == (B, H, T, d_k)
    for h in range(H):
        assert torch.equal(heads[:, h], x[..., h * d_k : (h + 1) * d_k])
    assert torch.equal(merge_heads(heads), x)
