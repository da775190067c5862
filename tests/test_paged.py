"""attnbook.paged (chapter 9): attention through block tables equals attention over the
contiguous keys; the pool's reference counts, copy-on-write and free list; the memory of pages
against preallocation."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from prop_helpers import SEEDS, randn

from attnbook.attention import attend
from attnbook.gpt import GPT, GPTConfig
from attnbook.masks import causal_mask
from attnbook.multihead import KVCache
from attnbook.blocks import BlockPool, BlockTable
from attnbook.memory import reserved_vs_paged
from attnbook.paged import PagedBatchCache, PagedKVCache, gather_blocks

pytestmark = pytest.mark.usefixtures("one_thread")


@given(
    SEEDS,
    st.integers(1, 5),
    st.integers(1, 3),
    st.lists(st.integers(1, 7), min_size=1, max_size=4),
)
@settings(max_examples=30, deadline=None)
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
    st.lists(st.integers(1, 12), min_size=1, max_size=4),
    st.integers(1, 3),
)
@settings(max_examples=30, deadline=None)
def test_a_paged_batch_of_ragged_rows_equals_attention_on_each_sequence(
    seed: int, block_size: int, heads: tuple, lengths: list[int], T_max: int
) -> None:
    """Sequences of different lengths written in turns (blocks interleaved in the pool),
    the last T of each through PagedBatchCache: each row's output is causal attention over
    its own keys alone, at its own positions."""
    H_q, H = heads
    d, T = 4, min(T_max, *lengths)
    pool = BlockPool(40, block_size, H, d, dtype=torch.float64)
    tables = [BlockTable(pool) for _ in lengths]
    keys = [randn(seed + i, 2, H, n, d) for i, n in enumerate(lengths)]  # k and v
    for t in range(max(lengths)):  # one token of each sequence in turn
        for table, kv, n in zip(tables, keys, lengths):
            if t < n - T:
                blocks, slots = table.grow(1)
                pool.write(0, blocks, slots, kv[0, :, t][None], kv[1, :, t][None])
            elif t < n:
                table.grow(1)  # room for the last T, written by the cache
    width = max(len(tb.blocks) for tb in tables)
    padded = torch.tensor([tb.blocks + [0] * (width - len(tb.blocks)) for tb in tables])
    cache = PagedBatchCache(pool, 0, padded, torch.tensor(lengths))
    new_k = torch.stack([kv[0, :, n - T :] for kv, n in zip(keys, lengths)])
    new_v = torch.stack([kv[1, :, n - T :] for kv, n in zip(keys, lengths)])
    k, v = cache.append(new_k, new_v)  # (B, H, slots, d)
    positions = torch.tensor(lengths)[:, None] - T + torch.arange(T)
    q = randn(seed + 50, len(lengths), H_q, T, d)
    # rows of one length give no mask: the causal one of their keys (is_causal=True)
    got, _ = attend(q, k, v, cache.mask(positions), is_causal=True)
    for b, (kv, n) in enumerate(zip(keys, lengths)):
        want, _ = attend(q[b : b + 1], kv[:1], kv[1:], causal_mask(T, n))
        torch.testing.assert_close(got[b : b + 1], want)


def test_gather_reads_blocks_in_table_order() -> None:
    # block b holds 2b, 2b + 1
    pool = torch.arange(4 * 2, dtype=torch.float32).view(4, 1, 2, 1)
    got = gather_blocks(pool, torch.tensor([[3, 0, 2], [1, 1, 1]]))
    assert got[0].flatten().tolist() == [6, 7, 0, 1, 4, 5]
    assert got[1].flatten().tolist() == [2, 3] * 3


def test_a_gpt_decoding_through_pages_gives_the_plain_cache_logits() -> None:
    """All layers of a sequence share one block table in a pool of n_layer layers."""
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
    pool = BlockPool(30, 4, 2, 4, n_layer=2)
    table = BlockTable(pool)
    paged = [PagedKVCache(table, layer) for layer in range(2)]
    plain = [KVCache() for _ in model.blocks]
    with torch.no_grad():
        for chunk in (ids[:, :6], *ids[:, 6:].split(1, dim=1)):
            torch.testing.assert_close(
                model(chunk, kv_caches=paged)[0], model(chunk, kv_caches=plain)[0]
            )
    assert pool.num_free == 30 - 5 and len(table) == 20
    paged[0].free()
    assert pool.num_free == 30


def test_an_exhausted_pool_and_a_double_free_are_errors() -> None:
    pool = BlockPool(1, 2, 1, 1)
    cache = PagedKVCache(pool)
    cache.append(torch.zeros(1, 1, 2, 1), torch.zeros(1, 1, 2, 1))
    with pytest.raises(RuntimeError, match="exhausted"):
        cache.append(torch.zeros(1, 1, 1, 1), torch.zeros(1, 1, 1, 1))
    pool.release([0])
    with pytest.raises(ValueError, match="cannot release block 0"):
        pool.release([0])


def test_releasing_a_block_twice_in_one_call_changes_nothing() -> None:
    """release([0, 0]) of a block held once is refused before anything changes: the free
    list never holds a block twice (two sequences would be handed the same block)."""
    pool = BlockPool(3, 2, 1, 1)
    a, b = pool.allocate(), pool.allocate()
    with pytest.raises(ValueError, match="cannot release block 0 2 time"):
        pool.release([a, a])
    assert pool.refs == [1, 1, 0] and list(pool.free_queue) == [2]
    pool.share([a])
    pool.release([a, a, b])  # held twice: fine
    assert sorted(pool.free_queue) == [0, 1, 2] and pool.refs == [0, 0, 0]
    assert len({pool.allocate() for _ in range(3)}) == 3


def test_shared_blocks_are_counted_and_copied_before_a_write() -> None:
    pool = BlockPool(6, 4, 1, 2)
    table = BlockTable(pool)
    blocks, slots = table.grow(6)  # blocks 0 (full) and 1 (2 of 4 slots)
    pool.write(0, blocks, slots, torch.ones(6, 1, 2), torch.ones(6, 1, 2))
    twin = table.fork()
    assert pool.refs[:2] == [2, 2] and twin.blocks == table.blocks
    blocks, slots = twin.grow(1)  # writes into the shared block 1: copied first
    assert twin.blocks[0] == 0 and twin.blocks[1] not in (0, 1)
    assert pool.refs[:2] == [2, 1] and blocks.tolist() == [twin.blocks[1]]
    assert torch.equal(pool.k[0, twin.blocks[1]], pool.k[0, 1])  # the copy
    pool.write(0, blocks, slots, torch.full((1, 1, 2), 7.0), torch.zeros(1, 1, 2))
    assert pool.k[0, 1, 0, 2].tolist() == [0.0, 0.0]  # the original is untouched
    table.grow(1)  # block 1 is table's alone now: written in place, no copy
    assert table.blocks == [0, 1] and pool.num_used == 3


def test_a_freed_table_reused_takes_new_blocks_and_overwrites_nobody() -> None:
    """free() empties the table: reused, it must not write into blocks the pool has since
    given to another sequence."""
    pool = BlockPool(4, 2, 1, 1)
    first = PagedKVCache(pool)
    first.append(torch.ones(1, 1, 3, 1), torch.ones(1, 1, 3, 1))
    first.free()
    assert first.block_table == [] and len(first) == 0
    other = PagedKVCache(pool)
    other.append(torch.full((1, 1, 3, 1), 5.0), torch.full((1, 1, 3, 1), 5.0))
    keys, _ = first.append(torch.full((1, 1, 2, 1), 9.0), torch.full((1, 1, 2, 1), 9.0))
    assert keys.flatten().tolist() == [9.0, 9.0]
    assert not set(first.block_table) & set(other.block_table)
    assert (
        other.append(torch.zeros(1, 1, 0, 1), torch.zeros(1, 1, 0, 1))[0]
        .flatten()
        .tolist()
        == [5.0] * 3
    )


def test_reserve_holds_blocks_ahead_or_nothing() -> None:
    pool = BlockPool(4, 4, 1, 1)
    table = BlockTable(pool)
    table.reserve(9)  # 3 blocks for 9 tokens, none used yet
    assert len(table.blocks) == 3 and len(table) == 0 and pool.num_free == 1
    table.grow(9)
    assert len(table.blocks) == 3
    with pytest.raises(RuntimeError, match="2 blocks needed, 1 free"):
        BlockTable(pool).reserve(5)
    assert pool.num_free == 1


def test_reserved_vs_paged_counts_tokens_blocks_and_waste() -> None:
    got = reserved_vs_paged([1, 4, 5], max_len=8, block_size=4, bytes_per_token=10)
    assert got["used"] == 100 and got["reserved"] == 240 and got["paged"] == 160
    assert got["reserved_waste_pct"] == pytest.approx(100 * 140 / 240)
    assert got["paged_waste_pct"] == pytest.approx(100 * 60 / 160)
    one = reserved_vs_paged([8, 8], max_len=8, block_size=1, bytes_per_token=3)
    assert one["reserved_waste_pct"] == one["paged_waste_pct"] == 0
