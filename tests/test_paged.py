"""attnbook.paged (chapter 9): attention through a block table equals the contiguous cache;
the pool's bookkeeping; the memory of pages against preallocation."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from prop_helpers import SEEDS, randn

from attnbook.gpt import GPT, GPTConfig
from attnbook.multihead import KVCache
from attnbook.paged import (
    BlockPool,
    PagedKVCache,
    gather_blocks,
    paged_attention,
    reserved_vs_paged,
)

pytestmark = pytest.mark.usefixtures("one_thread")


@given(
    SEEDS,
    st.integers(1, 5),
    st.integers(1, 3),
    st.lists(st.integers(1, 7), min_size=1, max_size=4),
)
@settings(max_examples=40, deadline=None)
def test_paged_cache_returns_what_the_contiguous_cache_returns(
    seed: int, block_size: int, H: int, steps: list[int]
) -> None:
    """Appends of any sizes, into a pool whose first blocks another sequence took: the same
    keys and values as KVCache, and whole blocks held."""
    d = 3
    pool = BlockPool(40, block_size, H, d, dtype=torch.float64)
    other = PagedKVCache(pool)
    other.append(
        randn(seed + 99, 1, H, block_size + 1, d),
        randn(seed + 98, 1, H, block_size + 1, d),
    )
    paged, plain = PagedKVCache(pool), KVCache()
    for i, n in enumerate(steps):
        k, v = randn(seed + 2 * i, 1, H, n, d), randn(seed + 2 * i + 1, 1, H, n, d)
        got, want = paged.append(k, v), plain.append(k, v)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert len(paged) == len(plain) == sum(steps)
    assert len(paged.block_table) == math.ceil(sum(steps) / block_size)
    assert not set(paged.block_table) & set(other.block_table)
    assert paged.nbytes == len(paged.block_table) * 2 * H * block_size * d * 8


@given(
    SEEDS,
    st.integers(1, 4),
    st.sampled_from([(2, 1), (2, 2), (4, 2)]),
    st.integers(1, 12),
    st.data(),
)
@settings(max_examples=40, deadline=None)
def test_paged_attention_equals_sdpa_on_the_contiguous_keys(
    seed: int, block_size: int, heads: tuple, length: int, data: st.DataObject
) -> None:
    H_q, H = heads
    d = 4
    pool = BlockPool(16, block_size, H, d, dtype=torch.float64)
    cache = PagedKVCache(pool)
    k, v = randn(seed, 1, H, length, d), randn(seed + 1, 1, H, length, d)
    cache.append(k, v)
    T_q = data.draw(st.integers(1, length))
    q = randn(seed + 2, H_q, T_q, d)
    got = paged_attention(q, pool, cache.table(), length)
    k_all, v_all = (
        k[0].repeat_interleave(H_q // H, 0),
        v[0].repeat_interleave(H_q // H, 0),
    )
    causal = torch.ones(T_q, length, dtype=torch.bool).tril(length - T_q)
    want = torch.nn.functional.scaled_dot_product_attention(
        q, k_all, v_all, attn_mask=causal
    )
    torch.testing.assert_close(got, want)


def test_gather_reads_blocks_in_table_order() -> None:
    # block b holds 2b, 2b + 1
    pool = torch.arange(4 * 2, dtype=torch.float32).view(4, 1, 2, 1)
    got = gather_blocks(pool, torch.tensor([3, 0, 2]), 5)
    assert got.flatten().tolist() == [6, 7, 0, 1, 4]


def test_a_gpt_decoding_through_pages_gives_the_plain_cache_logits() -> None:
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=11,
            block_size=24,
            n_layer=2,
            n_head=4,
            n_embd=16,
            n_kv_head=2,
            positions="rope",
        )
    ).eval()
    ids = torch.randint(0, 11, (1, 20))
    pool = BlockPool(30, 4, 2, 4)
    paged = [PagedKVCache(pool) for _ in model.blocks]
    plain = [KVCache() for _ in model.blocks]
    with torch.no_grad():
        for chunk in (ids[:, :6], *ids[:, 6:].split(1, dim=1)):
            torch.testing.assert_close(
                model(chunk, kv_caches=paged)[0], model(chunk, kv_caches=plain)[0]
            )
    assert pool.num_free == 30 - 2 * 5
    for cache in paged:
        cache.free()
    assert pool.num_free == 30


def test_an_exhausted_pool_and_a_double_free_are_errors() -> None:
    pool = BlockPool(1, 2, 1, 1)
    cache = PagedKVCache(pool)
    cache.append(torch.zeros(1, 1, 2, 1), torch.zeros(1, 1, 2, 1))
    with pytest.raises(RuntimeError, match="exhausted"):
        cache.append(torch.zeros(1, 1, 1, 1), torch.zeros(1, 1, 1, 1))
    pool.release([0])
    with pytest.raises(ValueError, match="block 0 is not in use"):
        pool.release([0])


def test_reserved_vs_paged_counts_tokens_blocks_and_waste() -> None:
    got = reserved_vs_paged([1, 4, 5], max_len=8, block_size=4, bytes_per_token=10)
    assert got["used"] == 100 and got["reserved"] == 240 and got["paged"] == 160
    assert got["reserved_waste_pct"] == pytest.approx(100 * 140 / 240)
    assert got["paged_waste_pct"] == pytest.approx(100 * 60 / 160)
    one = reserved_vs_paged([8, 8], max_len=8, block_size=1, bytes_per_token=3)
    assert one["reserved_waste_pct"] == one["paged_waste_pct"] == 0
