"""attnbook.blocks (chapter 9): a prefix key cached by two blocks keeps the first, and both
blocks can then be evicted and reused."""

from __future__ import annotations

import pytest

from attnbook.blocks import BlockPool


def test_a_duplicate_key_keeps_its_first_block_and_both_evict_cleanly() -> None:
    pool = BlockPool(3, 2, 1, 1)
    a, b = pool.allocate(), pool.allocate()
    pool.cache_block(a, b"k")
    pool.cache_block(b, b"k")  # the same tokens computed twice
    assert pool.cached == {b"k": a}
    pool.release([a, b])
    # a later request finds the first block
    assert pool.take_cached(b"k") == a and pool.refs[a] == 1
    pool.release([a])
    # every block handed out again: the cached key goes with its block, and nothing else
    taken = [pool.allocate() for _ in range(3)]
    assert sorted(taken) == [0, 1, 2]
    assert pool.cached == {} and pool.hash_of == {}
    with pytest.raises(KeyError):
        pool.take_cached(b"k")
