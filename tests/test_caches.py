"""attnbook.caches (chapters 6-9): one family of key/value caches; every member is a KVCache,
measures its bytes from what it holds, and serves the attention layers that take a KVCache."""

from __future__ import annotations

import pytest
import torch

from attnbook.caches import (
    Float8KVCache,
    KVCache,
    LatentCache,
    QuantizedKVCache,
    StreamingCache,
)
from attnbook.blocks import BlockPool, BlockTable
from attnbook.masks import causal_mask, padding_mask_from_lengths
from attnbook.multihead import KVCache as FromMultihead
from attnbook.multihead import MultiHeadAttention
from attnbook.paged import PagedKVCache

pytestmark = pytest.mark.usefixtures("one_thread")

MEMBERS = [
    KVCache,
    lambda: QuantizedKVCache(4, 2),
    lambda: QuantizedKVCache(2, 2, "token"),
    Float8KVCache,
    lambda: StreamingCache(16, 2),
]


def test_the_family_has_one_root_where_chapter_6_found_it() -> None:
    assert FromMultihead is KVCache
    for cls in (QuantizedKVCache, Float8KVCache, StreamingCache, LatentCache):
        assert issubclass(cls, KVCache)


@pytest.mark.parametrize("make", MEMBERS)
def test_nbytes_is_the_sum_of_the_tensors_held(make) -> None:
    cache = make()
    assert cache.nbytes == 0 and len(cache) == 0
    for n in (3, 1, 4):
        cache.append(torch.randn(1, 2, n, 8), torch.randn(1, 2, n, 8))
    held = list(cache.tensors())
    assert held and cache.nbytes == sum(t.numel() * t.element_size() for t in held)
    assert len(cache) == 8


@pytest.mark.parametrize("make", MEMBERS)
def test_every_member_decodes_in_multi_head_attention(make) -> None:
    """Token by token through the cache against the full causal pass (an 8-bit or float8
    cache within its rounding, the others exactly)."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2, rope=True).eval()
    x = torch.randn(2, 6, 16)
    full, _ = mha(x, is_causal=True)
    cache = make()
    steps = [mha(x[:, :2], is_causal=True, kv_cache=cache)[0]]
    steps += [
        mha(x[:, t : t + 1], is_causal=True, kv_cache=cache)[0] for t in range(2, 6)
    ]
    tol = 0.3 if isinstance(cache, (QuantizedKVCache, Float8KVCache)) else 1e-5
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=tol, rtol=0)


def test_a_paged_cache_holds_the_bytes_of_its_layer_of_whole_blocks() -> None:
    """PagedKVCache, the paged member (chapter 9): in a pool of two layers, each layer's
    cache of 8 tokens in blocks of 4 holds what the plain cache holds; 9 tokens take a
    third block. It decodes exactly as the plain cache does."""
    pool = BlockPool(6, 4, 2, 8, n_layer=2)
    table = BlockTable(pool)
    caches = [PagedKVCache(table, layer) for layer in range(2)]
    plain = KVCache()
    for n in (3, 5):
        k, v = torch.randn(2, 1, 2, n, 8)
        for cache in caches:
            cache.append(k, v)
        plain.append(k, v)
    assert [c.nbytes for c in caches] == [plain.nbytes] * 2
    caches[0].append(torch.zeros(1, 2, 1, 8), torch.zeros(1, 2, 1, 8))
    assert caches[1].nbytes == plain.nbytes * 3 // 2
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2, rope=True).eval()
    x = torch.randn(1, 6, 16)
    paged = PagedKVCache(BlockPool(4, 4, 2, 8))
    steps = [mha(x[:, t : t + 1], is_causal=True, kv_cache=paged)[0] for t in range(6)]
    torch.testing.assert_close(torch.cat(steps, 1), mha(x, is_causal=True)[0])


def test_a_mask_with_a_kv_cache_covers_the_cached_keys_too() -> None:
    """The mask of a cached step is (T_new, T_cached + T_new): decoding with a padding mask
    equals the full pass with it, and a mask over the new keys alone is refused."""
    torch.manual_seed(1)
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 7, 16)
    keep = padding_mask_from_lengths(torch.tensor([7, 5]), 7)  # (B, 1, 7): row 2 padded
    full_mask = keep & causal_mask(7, 7)
    full, _ = mha(x, mask=full_mask)
    cache = KVCache()
    outs = [mha(x[:, :3], mask=full_mask[:, :3, :3], kv_cache=cache)[0]]
    for t in range(3, 7):
        outs.append(
            mha(x[:, t : t + 1], mask=full_mask[:, t : t + 1, : t + 1], kv_cache=cache)[
                0
            ]
        )
    torch.testing.assert_close(torch.cat(outs, 1), full)
    with pytest.raises(ValueError, match="does not broadcast"):
        mha(x[:, :1], mask=torch.ones(1, 2, dtype=torch.bool), kv_cache=cache)
