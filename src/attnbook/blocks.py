"""The block manager of a paged key/value cache (chapter 9; vLLM, Kwon et al. 2023): a pool of
fixed-size blocks, reference counts, block tables, copy-on-write, and prefix caching.

A contiguous cache preallocates room for the longest sequence a request may reach. A paged
cache takes blocks of `block_size` token slots from one pool as a sequence grows. Sequence s's
block table lists its blocks in token order: token t of s lives in block `table[t // B]`, slot
`t % B`, in every layer (one table serves all layers, as in vLLM):

    pool.k: (n_layer, num_blocks, H, block_size, d)     table: [7, 2, 9] -> tokens 0 .. 3B-1

A block may appear in several tables (a shared prompt, parallel samples of one prompt): the
pool counts its references and puts it back in its free queue when the last one is released.
A sequence that is about to write into a shared block first copies it (copy-on-write), so no
sequence ever writes into another's tokens. A full block can be cached under the hash of its
tokens and all before them; it stays findable after it is freed, until the free queue hands
it out again, least recently freed first (vLLM's automatic prefix caching).

How attention reads the pool is `attnbook.paged`'s.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

import torch
from torch import Tensor

from ._checks import positive_int
from .caches import kv_cache_bytes

__all__ = ["BlockPool", "BlockTable", "block_hash"]


def block_hash(parent: bytes, tokens: list[int]) -> bytes:
    """The prefix cache's key of a full block (chapter 9): SHA-256 of the previous block's
    key (b"" for the first block) and this block's token ids, so that it stands for every
    token up to the block's end."""
    return hashlib.sha256(parent + repr(tokens).encode()).digest()


class BlockPool:
    """`num_blocks` blocks of `block_size` token slots, each holding the keys and values of
    `n_head` heads of width `d_head` in each of `n_layer` layers (chapter 9). `k` and `v` are
    (n_layer, num_blocks, n_head, block_size, d_head); `refs[b]` counts the tables that hold
    block b (0 = free)."""

    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        n_head: int,
        d_head: int,
        n_layer: int = 1,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        for name, value in (
            ("num_blocks", num_blocks),
            ("block_size", block_size),
            ("n_head", n_head),
            ("d_head", d_head),
            ("n_layer", n_layer),
        ):
            positive_int(name, value)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(
                f"dtype must be a floating-point torch.dtype, got {dtype!r}"
            )
        self.num_blocks, self.block_size = num_blocks, block_size
        self.n_head, self.d_head, self.n_layer = n_head, d_head, n_layer
        shape = (n_layer, num_blocks, n_head, block_size, d_head)
        self.k = torch.zeros(shape, dtype=dtype)
        self.v = torch.zeros_like(self.k)
        self.refs = [0] * num_blocks
        # the free blocks, least recently freed first (a dict keeps insertion order): new
        # blocks come from the front, freed ones join at the back (LRU, as vLLM's queue)
        self.free_queue: dict[int, None] = dict.fromkeys(range(num_blocks))
        # prefix caching: the hash of a full block's tokens -> the block, kept when the
        # block is freed, forgotten when it is taken for something else (`take_cached`)
        self.cached: dict[bytes, int] = {}
        self.hash_of: dict[int, bytes] = {}

    @property
    def bytes_per_block(self) -> int:
        """Bytes of keys and values one block holds over all layers."""
        return kv_cache_bytes(
            self.block_size,
            self.n_layer,
            self.n_head,
            self.d_head,
            self.k.element_size(),
        )

    @property
    def num_free(self) -> int:
        return len(self.free_queue)

    @property
    def num_used(self) -> int:
        return self.num_blocks - len(self.free_queue)

    def allocate(self) -> int:
        """Take the least recently freed block (one reference), forgetting the prefix it
        may have cached; a RuntimeError when the pool is exhausted."""
        if not self.free_queue:
            raise RuntimeError(
                f"the block pool is exhausted: all {self.num_blocks} blocks are in use"
            )
        block = next(iter(self.free_queue))
        del self.free_queue[block]
        if block in self.hash_of:  # evicted: its tokens are overwritten from now on
            del self.cached[self.hash_of.pop(block)]
        self.refs[block] = 1
        return block

    def cache_block(self, block: int, key: bytes) -> None:
        """Make `block` (in use, full) findable by the hash `key` of its tokens and all
        before them; a key already cached keeps its block (vLLM tolerates the duplicate)."""
        self._check_in_use([block], "cache")
        if key not in self.cached and block not in self.hash_of:
            self.cached[key], self.hash_of[block] = block, key

    def take_cached(self, key: bytes) -> int:
        """The block cached under `key`, with one more reference (taken back from the free
        queue if no table held it); a KeyError if none is."""
        block = self.cached[key]
        if self.refs[block] == 0:
            del self.free_queue[block]
        self.refs[block] += 1
        return block

    def _check_in_use(self, blocks: Sequence[int], action: str) -> Counter[int]:
        counts = Counter(blocks)
        for b, n in counts.items():
            if not isinstance(b, int) or not 0 <= b < self.num_blocks:
                raise ValueError(
                    f"cannot {action} block {b!r}: blocks are ints in [0, {self.num_blocks})"
                )
            if self.refs[b] < (n if action == "release" else 1):
                raise ValueError(
                    f"cannot {action} block {b} {n} time(s): it has {self.refs[b]} "
                    f"reference(s) (a block that is not in use, or released twice)"
                )
        return counts

    def share(self, blocks: Sequence[int]) -> None:
        """One more reference to each of `blocks` (in use): another table holds them too."""
        for b, n in self._check_in_use(blocks, "share").items():
            self.refs[b] += n

    def release(self, blocks: Sequence[int]) -> None:
        """Drop one reference per entry of `blocks`; a block with none left is free again.
        Checked before anything changes: a ValueError for a block released more times than
        it is referenced (e.g. `release([0, 0])` on a block held once)."""
        for b, n in self._check_in_use(blocks, "release").items():
            self.refs[b] -= n
            if self.refs[b] == 0:
                self.free_queue[b] = None

    def write(
        self, layer: int, blocks: Tensor, slots: Tensor, k: Tensor, v: Tensor
    ) -> None:
        """Store N tokens' keys and values k, v (N, n_head, d_head) of `layer` at pool
        blocks[i], slot slots[i] (two (N,) long tensors)."""
        positive_int("layer", layer, allow_zero=True)
        N, want = blocks.shape[0], (self.n_head, self.d_head)
        if layer >= self.n_layer or slots.shape != blocks.shape or blocks.dim() != 1:
            raise ValueError(
                f"layer must be < {self.n_layer} and blocks, slots (N,) each, got layer "
                f"{layer}, {tuple(blocks.shape)} and {tuple(slots.shape)}"
            )
        if k.shape != v.shape or tuple(k.shape) != (N, *want):
            raise ValueError(
                f"k and v must both be (N={N}, n_head={want[0]}, d_head={want[1]}), got "
                f"{tuple(k.shape)} and {tuple(v.shape)}"
            )
        self.k[layer, blocks, :, slots] = k.to(self.k.dtype)
        self.v[layer, blocks, :, slots] = v.to(self.v.dtype)

    def copy(self, block: int) -> int:
        """A new block holding what `block` holds, in every layer (copy-on-write)."""
        self._check_in_use([block], "copy")
        new = self.allocate()
        self.k[:, new] = self.k[:, block]
        self.v[:, new] = self.v[:, block]
        return new


class BlockTable:
    """One sequence's blocks in a pool, in token order, and its length in tokens (chapter 9).
    It may hold more slots than tokens (blocks reserved ahead); blocks it shares with other
    tables are copied before it writes into them."""

    def __init__(self, pool: BlockPool) -> None:
        if not isinstance(pool, BlockPool):
            raise TypeError(f"pool must be a BlockPool, got {type(pool).__name__}")
        self.pool = pool
        self.blocks: list[int] = []
        self.length = 0

    def __len__(self) -> int:
        return self.length

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks this table holds (whole blocks, shared ones included)."""
        return len(self.blocks) * self.pool.bytes_per_block

    def reserve(self, n_tokens: int) -> None:
        """Hold blocks for `n_tokens` tokens in all (preallocation: a RuntimeError if the
        pool runs out, with nothing taken)."""
        positive_int("n_tokens", n_tokens, allow_zero=True)
        need = -(-n_tokens // self.pool.block_size) - len(self.blocks)
        if need > self.pool.num_free:
            raise RuntimeError(
                f"the block pool is exhausted: {need} blocks needed, "
                f"{self.pool.num_free} free"
            )
        self.blocks += [self.pool.allocate() for _ in range(need)]

    def grow(self, n: int) -> tuple[Tensor, Tensor]:
        """Make room for the next `n` tokens (positions length .. length + n - 1) and count
        them in: a new block when the last is full, a private copy of a shared block before
        writing into it. Returns their (block, slot) pairs as two (n,) long tensors."""
        positive_int("n", n)
        pool, size = self.pool, self.pool.block_size
        positions = range(self.length, self.length + n)
        for i in sorted({p // size for p in positions}):
            if i == len(self.blocks):
                self.blocks.append(pool.allocate())
            elif pool.refs[self.blocks[i]] > 1:  # shared: copy, then drop our reference
                shared = self.blocks[i]
                self.blocks[i] = pool.copy(shared)
                pool.release([shared])
        self.length += n
        pos = torch.arange(positions.start, positions.stop)
        table = torch.tensor(self.blocks, dtype=torch.long)
        return table[pos // size], pos % size

    def fork(self) -> BlockTable:
        """A second table holding the same blocks and length (one more reference each)."""
        self.pool.share(self.blocks)
        twin = BlockTable(self.pool)
        twin.blocks, twin.length = list(self.blocks), self.length
        return twin

    def free(self) -> None:
        """Give this table's references back (the sequence is finished or preempted), the
        last block first: the free queue then evicts a sequence's tail before its prefix."""
        self.pool.release(self.blocks[::-1])
        self.blocks, self.length = [], 0

    def tensor(self) -> Tensor:
        return torch.tensor(self.blocks, dtype=torch.long)
