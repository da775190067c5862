"""A paged key/value cache: a shared pool of fixed-size blocks, one block table per sequence,
blocks shared between sequences by reference count (chapter 9; vLLM's PagedAttention, Kwon
et al. 2023).

A contiguous cache preallocates room for the longest sequence a request may reach. A paged
cache takes blocks of `block_size` token slots from one pool as a sequence grows. Sequence s's
block table lists its blocks in token order: token t of s lives in block `table[t // B]`, slot
`t % B`, in every layer (one table serves all layers, as in vLLM):

    pool.k: (n_layer, num_blocks, H, block_size, d)     table: [7, 2, 9] -> tokens 0 .. 3B-1

A block may appear in several tables (a shared prompt, parallel samples of one prompt): the
pool counts its references and gives it back when the last one is released. A sequence that
is about to write into a shared block first copies it (copy-on-write), so no sequence ever
writes into another's tokens.

Attention reads the keys and values through the tables (`paged_attention`): one index gather
per layer and step for the whole batch, into a temporary; nothing is stored contiguously. A
fused kernel (vLLM's, FlashInfer's) reads each block straight from the pool into on-chip
memory instead and never writes the gathered copy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch
from torch import Tensor

from ._checks import floating, positive_int, tensor
from .attention import attend
from .masks import position_mask
from .multihead import KVCache, kv_cache_bytes

__all__ = [
    "BlockPool",
    "BlockTable",
    "PagedKVCache",
    "gather_blocks",
    "paged_attention",
    "reserved_vs_paged",
]


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
        self.free: list[int] = list(
            range(num_blocks - 1, -1, -1)
        )  # pop() gives 0, 1, ..

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
        return len(self.free)

    @property
    def num_used(self) -> int:
        return self.num_blocks - len(self.free)

    def allocate(self) -> int:
        """Take a free block (one reference); a RuntimeError when the pool is exhausted."""
        if not self.free:
            raise RuntimeError(
                f"the block pool is exhausted: all {self.num_blocks} blocks are in use"
            )
        block = self.free.pop()
        self.refs[block] = 1
        return block

    def _check_in_use(self, blocks: Sequence[int], action: str) -> Counter[int]:
        counts = Counter(blocks)
        for b, n in counts.items():
            if not isinstance(b, int) or not 0 <= b < self.num_blocks:
                raise ValueError(
                    f"cannot {action} block {b!r}: blocks are ints in [0, {self.num_blocks})"
                )
            if self.refs[b] < n:
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
                self.free.append(b)

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
        """Give this table's references back (the sequence is finished or preempted)."""
        self.pool.release(self.blocks)
        self.blocks, self.length = [], 0

    def tensor(self) -> Tensor:
        return torch.tensor(self.blocks, dtype=torch.long)


def gather_blocks(pool_tensor: Tensor, tables: Tensor) -> Tensor:
    """The blocks of each row of `tables`, end to end (chapter 9): one index gather.

    pool_tensor: (num_blocks, H, block_size, d), one layer of a pool; tables: (B, n_blocks)
    integer pool indices in token order (a short row padded with any valid index; the padding
    must be masked). Returns (B, H, n_blocks * block_size, d): token t of row b from block
    tables[b, t // block_size], slot t % block_size. A copy, not a view.
    """
    tensor("pool_tensor", pool_tensor, "(num_blocks, H, block_size, d)", dims=(4,))
    tensor("tables", tables, "(B, n_blocks)", dims=(2,))
    if tables.dtype.is_floating_point or tables.dtype == torch.bool:
        raise TypeError(
            f"tables must hold integer block indices, got dtype {tables.dtype}"
        )
    num_blocks, H, block_size, d = pool_tensor.shape
    if tables.numel() and (tables.min() < 0 or tables.max() >= num_blocks):
        raise ValueError(
            f"tables point outside the pool: indices must be in [0, {num_blocks}), "
            f"got {int(tables.min())} .. {int(tables.max())}"
        )
    B, n = tables.shape
    blocks = pool_tensor[tables.long()]  # (B, n_blocks, H, block_size, d)
    return blocks.transpose(1, 2).reshape(B, H, n * block_size, d)


def paged_attention(
    q: Tensor, pool: BlockPool, layer: int, tables: Tensor, lengths: Tensor
) -> Tensor:
    """Causal attention of a batch of sequences of different lengths over their cached keys
    and values, read through their block tables (chapter 9); the attention is `attend`'s.

    q: (B, H_q, T, d), the last T of row b's `lengths[b]` positions (T = 1 when decoding);
    H_q a multiple of the pool's heads (grouped-query attention). tables: (B, n_blocks), row
    b padded past its blocks with any valid index; lengths: (B,) integers. Returns
    (B, H_q, T, d). Keys past a row's length (empty slots, padding) are masked.
    """
    tensor("q", q, "(B, H_q, T, d)", dims=(4,))
    floating("q", q)
    positive_int("layer", layer, allow_zero=True)
    tensor("lengths", lengths, "(B,)", dims=(1,))
    B, H_q, T, d = q.shape
    if layer >= pool.n_layer:
        raise ValueError(f"layer={layer} is outside the pool's {pool.n_layer} layers")
    if d != pool.d_head or H_q % pool.n_head:
        raise ValueError(
            f"q {tuple(q.shape)} does not fit the pool: d must be {pool.d_head} and "
            f"H_q a multiple of {pool.n_head}"
        )
    keys = gather_blocks(pool.k[layer], tables)  # (B, H, n_blocks * block_size, d)
    values = gather_blocks(pool.v[layer], tables)
    if tables.shape[0] != B or lengths.shape[0] != B:
        raise ValueError(
            f"q, tables and lengths must have one row per sequence, got {B}, "
            f"{tables.shape[0]} and {lengths.shape[0]}"
        )
    if (lengths < T).any() or (lengths > keys.shape[2]).any():
        raise ValueError(
            f"each length must be in [T={T}, {keys.shape[2]}] (the slots of the tables), "
            f"got {lengths.tolist()}"
        )
    # (B, T): each row's queries at its own positions, the last T of its length
    pos_q = lengths.long()[:, None] - T + torch.arange(T)
    mask = position_mask(pos_q, torch.arange(keys.shape[2]))  # (B, T, slots)
    out, _ = attend(q, keys.to(q.dtype), values.to(q.dtype), mask[:, None])
    return out  # (B, H_q, T, d)


class PagedKVCache(KVCache):
    """One layer of one sequence's cache in a `BlockPool` (chapter 9): a drop-in for `KVCache`
    (batch size 1) in `GPT.forward`. The layers of a sequence share one `BlockTable` (pass
    it); given a pool, the cache makes its own. `append` writes the new tokens into the pool
    and returns all keys and values so far gathered into a contiguous copy, because the
    model's attention takes tensors: this drop-in copies the sequence at every step. The
    batched engine (`attnbook.serving`) reads through `paged_attention` instead."""

    def __init__(self, table: BlockTable | BlockPool, layer: int = 0) -> None:
        super().__init__()
        self.table = BlockTable(table) if isinstance(table, BlockPool) else table
        if not isinstance(self.table, BlockTable):
            raise TypeError(
                f"table must be a BlockTable or a BlockPool, got {type(table).__name__}"
            )
        positive_int("layer", layer, allow_zero=True)
        if layer >= self.table.pool.n_layer:
            raise ValueError(
                f"layer={layer} is outside the pool's {self.table.pool.n_layer} layers"
            )
        self.pool, self.layer, self.length = self.table.pool, layer, 0

    def __len__(self) -> int:
        return self.length

    @property
    def block_table(self) -> list[int]:
        return self.table.blocks

    @property
    def nbytes(self) -> int:
        """Bytes of this layer's share of the sequence's blocks (whole blocks)."""
        return self.table.nbytes // self.pool.n_layer

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write k, v (1, H, T_new, d) after the cached tokens; return all keys and values so
        far, (1, H, T_seen + T_new, d) each: a gathered copy."""
        tensor("k", k, "(1, H, T_new, d)", dims=(4,))
        tensor("v", v, "(1, H, T_new, d)", dims=(4,))
        pool = self.pool
        want = (1, pool.n_head, k.shape[2], pool.d_head)
        if k.shape != v.shape or tuple(k.shape) != want:
            raise ValueError(
                f"k and v must both be (1, H={pool.n_head}, T_new, d={pool.d_head}) to "
                f"fit the pool, got {tuple(k.shape)} and {tuple(v.shape)}"
            )
        n, start = k.shape[2], self.length
        if start + n > len(self.table):  # the first layer to reach these positions
            self.table.grow(start + n - len(self.table))
        pos = torch.arange(start, start + n)
        blocks = self.table.tensor()[pos // pool.block_size]
        slots = pos % pool.block_size
        pool.write(
            self.layer, blocks, slots, k[0].transpose(0, 1), v[0].transpose(0, 1)
        )
        self.length += n
        table = self.table.tensor()[None]
        return (
            gather_blocks(pool.k[self.layer], table)[:, :, : self.length].to(k.dtype),
            gather_blocks(pool.v[self.layer], table)[:, :, : self.length].to(v.dtype),
        )

    def free(self) -> None:
        """Give the sequence's blocks back (call it on one layer's cache: they share them)."""
        self.table.free()
        self.length = 0


def reserved_vs_paged(
    lengths: Sequence[int], max_len: int, block_size: int, bytes_per_token: int
) -> dict[str, float]:
    """Cache memory of a batch of sequences of `lengths` tokens (chapter 9): "reserved" when
    each request preallocates `max_len` tokens, "paged" when it holds ceil(length /
    block_size) blocks, "used" for the tokens themselves, and the waste of each in %."""
    positive_int("max_len", max_len)
    positive_int("block_size", block_size)
    positive_int("bytes_per_token", bytes_per_token)
    lengths = list(lengths)
    if not lengths:
        raise ValueError("lengths must hold at least one sequence length")
    for n in lengths:
        positive_int("each length", n)
        if n > max_len:
            raise ValueError(f"a length of {n} exceeds max_len={max_len}")
    used = sum(lengths) * bytes_per_token
    reserved = len(lengths) * max_len * bytes_per_token
    paged = sum(-(-n // block_size) * block_size for n in lengths) * bytes_per_token
    return {
        "used": used,
        "reserved": reserved,
        "paged": paged,
        "reserved_waste_pct": 100 * (reserved - used) / reserved,
        "paged_waste_pct": 100 * (paged - used) / paged,
    }
