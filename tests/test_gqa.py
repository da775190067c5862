"""Tests of chapter 8's attention variants: attnbook.gqa (grouped-query attention, KV-cache
bytes), MultiHeadAttention's n_kv_head and alibi options, the GPT's n_kv_head and positions
options, the sliding-window mask, ALiBi's bias, blockwise_sdpa and the tensor-memory meter,
each against PyTorch's own scaled_dot_product_attention where one exists."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from prop_helpers import DTYPES, SEEDS, close, randn

from attnbook.blockwise import blockwise_sdpa
from attnbook.gpt import GPT, POSITIONS, GPTConfig
from attnbook.gqa import (
    decode_with_cache,
    grouped_query_attention,
    kv_cache_bytes,
    repeat_kv,
)
from attnbook.masks import causal_mask, sliding_window_mask
from attnbook.memory import peak_tensor_bytes
from attnbook.multihead import KVCache, MultiHeadAttention
from attnbook.positional import alibi_bias, alibi_slopes

pytestmark = pytest.mark.usefixtures("one_thread")
GROUPS = st.sampled_from([(1, 1), (2, 1), (4, 2), (4, 1), (6, 3), (6, 2)])  # (H, H_kv)


def test_repeat_kv_puts_the_copies_of_a_head_next_to_each_other() -> None:
    x = torch.arange(2.0).view(1, 2, 1, 1)  # heads 0 and 1
    assert repeat_kv(x, 3).flatten().tolist() == [0, 0, 0, 1, 1, 1]
    assert torch.equal(repeat_kv(x, 3), x.repeat_interleave(3, dim=1))


@given(
    GROUPS,
    st.integers(1, 4),
    st.integers(1, 6),
    st.integers(1, 6),
    DTYPES,
    SEEDS,
    st.booleans(),
)
def test_gqa_equals_torch_enable_gqa(
    groups: tuple,
    B: int,
    T_q: int,
    T_k: int,
    dtype: torch.dtype,
    seed: int,
    is_causal: bool,
) -> None:
    H, H_kv = groups
    T_k = max(T_k, T_q) if is_causal else T_k
    q = randn(seed, B, H, T_q, 8, dtype=dtype)
    k, v = (
        randn(seed + 1, B, H_kv, T_k, 8, dtype=dtype),
        randn(seed + 2, B, H_kv, T_k, 5, dtype=dtype),
    )
    out, weights = grouped_query_attention(q, k, v, is_causal=is_causal)
    mask = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q) if is_causal else None
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    close(out, ref, dtype)
    assert weights.shape == (B, H, T_q, T_k)
    close(weights.sum(-1), torch.ones(B, H, T_q, dtype=dtype), dtype)


def test_mqa_query_heads_read_the_same_keys() -> None:
    """With one key/value head, two query heads with equal queries get equal outputs."""
    q = randn(0, 1, 1, 5, 4).expand(1, 3, 5, 4)
    out, _ = grouped_query_attention(q, randn(1, 1, 1, 7, 4), randn(2, 1, 1, 7, 3))
    assert torch.equal(out[:, 0], out[:, 2])


@given(GROUPS, st.integers(1, 3), st.integers(1, 6), SEEDS, st.booleans())
def test_gqa_layer_equals_explicit_formula_and_fast_path(
    groups: tuple, B: int, T: int, seed: int, causal: bool
) -> None:
    H, H_kv = groups
    torch.manual_seed(seed % 2**31)
    layer = MultiHeadAttention(4 * H, H, n_kv_head=H_kv).double()
    assert layer.W_k.weight.shape == (4 * H_kv, 4 * H)
    x = randn(seed, B, T, 4 * H)
    out, weights = layer(x, is_causal=causal)
    fast, _ = layer(x, is_causal=causal, need_weights=False)
    q = layer.W_q(x).view(B, T, H, 4).transpose(1, 2)  # (B, H, T, 4)
    k = layer.W_k(x).view(B, T, H_kv, 4).transpose(1, 2)  # (B, H_kv, T, 4)
    v = layer.W_v(x).view(B, T, H_kv, 4).transpose(1, 2)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    ref = layer.W_o(ref.transpose(1, 2).reshape(B, T, 4 * H))
    close(out, ref, torch.float64)
    close(fast, ref, torch.float64)


def test_groups_equal_heads_is_todays_multihead_attention() -> None:
    torch.manual_seed(0)
    plain = MultiHeadAttention(12, 3)
    torch.manual_seed(0)
    grouped = MultiHeadAttention(12, 3, n_kv_head=3)
    assert all(
        torch.equal(a, b) for a, b in zip(plain.parameters(), grouped.parameters())
    )
    x = randn(3, 2, 5, 12, dtype=torch.float32)
    assert torch.equal(plain(x, is_causal=True)[0], grouped(x, is_causal=True)[0])


def test_kv_cache_holds_only_the_shared_heads_and_matches_the_formula() -> None:
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=20, block_size=16, n_layer=2, n_head=4, n_embd=32, n_kv_head=2
        )
    ).eval()
    caches = [KVCache() for _ in model.blocks]
    idx = torch.randint(0, 20, (3, 10))
    with torch.no_grad():
        logits, _ = model(idx[:, :6], kv_caches=caches)
        step, _ = model(idx[:, 6:], kv_caches=caches)
        full, _ = model(idx)
    assert caches[0].k.shape == (3, 2, 10, 8)
    assert sum(c.nbytes for c in caches) == kv_cache_bytes(10, 2, 2, 8, 4, batch_size=3)
    torch.testing.assert_close(torch.cat([logits, step], 1), full, atol=1e-5, rtol=1e-4)


def test_kv_cache_bytes_of_gpt2_small() -> None:
    # 36 KiB per token in 16-bit numbers
    assert kv_cache_bytes(1, 12, 12, 64, 2) == 36_864
    assert kv_cache_bytes(1024, 12, 12, 64, 2) == 36 * 2**20
    assert kv_cache_bytes(0, 1, 1, 1, 4) == 0


@pytest.mark.parametrize("positions", POSITIONS)
def test_every_position_scheme_caches_exactly(positions: str) -> None:
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=20,
            block_size=12,
            n_layer=2,
            n_head=2,
            n_embd=16,
            positions=positions,
            n_kv_head=1,
        )
    ).eval()
    prompt = torch.randint(0, 20, (2, 3))
    kw = dict(max_new_tokens=15, top_k=5)
    a = model.generate(
        prompt, generator=torch.Generator().manual_seed(1), use_cache=True, **kw
    )
    b = model.generate(
        prompt, generator=torch.Generator().manual_seed(1), use_cache=False, **kw
    )
    assert torch.equal(a, b)
    assert (model.pos_emb is None) == (positions in ("rope", "alibi", "none"))


def test_gpt_defaults_unchanged() -> None:
    config = GPTConfig(vocab_size=10)
    assert config.n_kv_head is None and config.positions == "learned"
    model = GPT(config)
    assert (
        model.num_parameters()
        == 10 * 128 + 64 * 128 + 4 * (12 * 128 * 128 + 2 * 128) + 128
    )


def test_sliding_window_mask() -> None:
    m = sliding_window_mask(6, 3)
    assert m.sum(-1).tolist() == [1, 2, 3, 3, 3, 3]
    assert m[5].tolist() == [False, False, False, True, True, True]
    assert torch.equal(sliding_window_mask(5, 5), causal_mask(5))
    assert torch.equal(sliding_window_mask(5, 50), causal_mask(5))
    assert torch.equal(sliding_window_mask(4, 1), torch.eye(4, dtype=torch.bool))


def test_receptive_field_grows_by_window_minus_one_per_layer() -> None:
    w, T = 4, 20
    reach = sliding_window_mask(T, w).double()
    seen = torch.eye(T, dtype=torch.double)
    for layer in range(1, 4):
        seen = reach @ seen  # which inputs can reach each position after `layer` layers
        assert int((seen[-1] > 0).sum()) == layer * (w - 1) + 1


def test_alibi_slopes_and_bias() -> None:
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    assert alibi_slopes(4).tolist() == [2.0**-k for k in (2, 4, 6, 8)]
    s6 = alibi_slopes(6)
    assert s6[:4].tolist() == alibi_slopes(4).tolist() and s6[4:].tolist() == [
        2.0**-1,
        2.0**-3,
    ]
    b = alibi_bias(2, 4)
    assert b.shape == (2, 4, 4) and b.dtype == torch.float32
    assert torch.isinf(b[:, 0, 1:]).all() and torch.equal(
        b.diagonal(dim1=1, dim2=2), torch.zeros(2, 4)
    )
    assert b[0, 3, 0].item() == -3 * 2.0**-4 and b[1, 3, 1].item() == -2 * 2.0**-8
    # one query after three cached keys
    assert torch.equal(alibi_bias(2, 1, 4), b[:, -1:])


@given(st.integers(1, 3), st.integers(1, 7), SEEDS)
def test_alibi_layer_equals_torch_with_the_bias_as_attn_mask(
    H: int, T: int, seed: int
) -> None:
    torch.manual_seed(seed % 2**31)
    layer = MultiHeadAttention(4 * H, H, alibi=True).double()
    x = randn(seed, 2, T, 4 * H)
    out, weights = layer(x, is_causal=True)
    fast, _ = layer(x, is_causal=True, need_weights=False)
    q, k, v = (
        lin(x).view(2, T, H, 4).transpose(1, 2)
        for lin in (layer.W_q, layer.W_k, layer.W_v)
    )
    ref = F.scaled_dot_product_attention(
        q, k, v, attn_mask=alibi_bias(H, T, dtype=torch.float64)
    )
    ref = layer.W_o(ref.transpose(1, 2).reshape(2, T, 4 * H))
    close(out, ref, torch.float64)
    close(fast, ref, torch.float64)
    assert (weights.masked_select(~causal_mask(T)) == 0).all()


def test_alibi_prefers_near_keys_for_equal_scores() -> None:
    layer = MultiHeadAttention(4, 1, alibi=True)
    with torch.no_grad():
        layer.W_q.weight.zero_()  # every score 0: only the bias decides
    _, w = layer(torch.randn(1, 6, 4), is_causal=True)
    row = w[0, 0, -1]
    assert torch.all(row[1:] > row[:-1])
    slope = alibi_slopes(1).item()
    torch.testing.assert_close(row[-1] / row[-2], torch.tensor(math.exp(slope)))


@pytest.mark.parametrize("window", [None, 1, 5, 100])
@pytest.mark.parametrize("block_size", [1, 6, 64])
def test_blockwise_sdpa_equals_torch(window: int | None, block_size: int) -> None:
    q, k, v = randn(0, 2, 3, 23, 8), randn(1, 2, 3, 23, 8), randn(2, 2, 3, 23, 4)
    if window is None:
        close(
            blockwise_sdpa(q, k, v, block_size),
            F.scaled_dot_product_attention(q, k, v),
            torch.float64,
        )
        mask = causal_mask(23)
    else:
        mask = sliding_window_mask(23, window)
    out = blockwise_sdpa(q, k, v, block_size, is_causal=True, window=window)
    close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), torch.float64)
    last = blockwise_sdpa(
        q[..., -5:, :], k, v, block_size, is_causal=True, window=window
    )
    close(
        last,
        F.scaled_dot_product_attention(q[..., -5:, :], k, v, attn_mask=mask[-5:]),
        torch.float64,
    )


def test_blockwise_sdpa_is_stable_and_leaves_inputs_alone() -> None:
    q, k, v = randn(3, 1, 2, 9, 4), randn(4, 1, 2, 9, 4), randn(5, 1, 2, 9, 4)
    k[..., -1, :] *= 1000.0  # the largest score arrives in the last block
    before = q.clone()
    out = blockwise_sdpa(q, k, v, block_size=4)
    assert torch.isfinite(out).all() and torch.equal(q, before)
    close(out, F.scaled_dot_product_attention(q, k, v), torch.float64)


def test_peak_memory_of_blockwise_is_a_fraction_of_naive() -> None:
    T = 1024
    q, k, v = (
        randn(0, 1, 2, T, 16, dtype=torch.float32),
        randn(1, 1, 2, T, 16, dtype=torch.float32),
        randn(2, 1, 2, T, 16, dtype=torch.float32),
    )

    def naive() -> torch.Tensor:
        return torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v

    _, naive_peak = peak_tensor_bytes(naive)
    _, block_peak = peak_tensor_bytes(lambda: blockwise_sdpa(q, k, v, block_size=64))
    scores = 2 * T * T * 4  # one (B, H, T, T) float32 matrix
    assert naive_peak >= 2 * scores  # the scores and the weights are alive together
    assert block_peak < naive_peak / 8
    with pytest.raises(TypeError, match="fn must be a callable"):
        peak_tensor_bytes(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_decode_with_cache_fills_the_formula_and_draws_the_uncached_tokens(n_kv: int):
    torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=30, block_size=24, n_layer=2, n_head=4, n_embd=32, n_kv_head=n_kv
    )
    model = GPT(config).eval()
    prompt = torch.randint(0, 30, (2, 4), generator=torch.Generator().manual_seed(1))
    ids, caches = decode_with_cache(model, prompt, 21, torch.Generator().manual_seed(2))
    plain = model.generate(
        prompt, 21, generator=torch.Generator().manual_seed(2), use_cache=False
    )
    assert torch.equal(ids, plain) and ids.shape == (2, 25)
    assert caches[0].k.shape == (2, n_kv, 24, 8)  # 4 + 21 - 1 positions fed
    assert sum(c.nbytes for c in caches) == kv_cache_bytes(24, 2, n_kv, 8, 4, 2)
    with pytest.raises(
        ValueError, match="block_size=24; the cache would have to slide"
    ):
        decode_with_cache(model, prompt, 22)
    with pytest.raises(ValueError, match="2 empty KVCache objects, one per block"):
        model.generate(prompt, 3, kv_caches=caches)  # already filled
