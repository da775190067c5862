"""A paged key/value cache: a shared pool of fixed-size blocks and one block table per
sequence (chapter 9; the idea of vLLM's PagedAttention, Kwon et al. 2023).

A contiguous cache preallocates room for the longest sequence a request may reach. A paged
cache holds keys and values in blocks of `block_size` tokens taken from one pool as a sequence
grows; sequence s's block table lists the pool blocks that hold its tokens in order, so
token t of s lives in block `table[t // block_size]`, slot `t % block_size`:

    pool.k: (num_blocks, H, block_size, d)     table: [7, 2, 9]  ->  tokens 0..3B-1 of s

Attention gathers the sequence's keys and values through its table and gives exactly what the
contiguous `KVCache` gives (`PagedKVCache` is a drop-in for it, batch size 1). At most
block_size - 1 slots per sequence are wasted, against max_len - length for preallocation.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ._checks import floating, positive_int, tensor
from .multihead import KVCache

__all__ = [
    "BlockPool",
    "PagedKVCache",
    "gather_blocks",
    "paged_attention",
    "reserved_vs_paged",
]


class BlockPool:
    """`num_blocks` blocks of `block_size` token slots, each holding keys and values of
    `n_head` heads of width `d_head` (chapter 9); a free list hands blocks out and takes
    them back. `k` and `v` are (num_blocks, n_head, block_size, d_head)."""

    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        n_head: int,
        d_head: int,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        for name, value in (
            ("num_blocks", num_blocks),
            ("block_size", block_size),
            ("n_head", n_head),
            ("d_head", d_head),
        ):
            positive_int(name, value)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(
                f"dtype must be a floating-point torch.dtype, got {dtype!r}"
            )
        self.num_blocks, self.block_size, self.n_head, self.d_head = (
            num_blocks,
            block_size,
            n_head,
            d_head,
        )
        self.k = torch.zeros(num_blocks, n_head, block_size, d_head, dtype=dtype)
        self.v = torch.zeros_like(self.k)
        # pop() hands out 0, 1, 2, ...
        self.free: list[int] = list(range(num_blocks - 1, -1, -1))

    @property
    def bytes_per_block(self) -> int:
        """Bytes of keys and values one block holds."""
        return 2 * self.n_head * self.block_size * self.d_head * self.k.element_size()

    @property
    def num_free(self) -> int:
        return len(self.free)

    def allocate(self) -> int:
        """Take a free block; a RuntimeError when the pool is exhausted."""
        if not self.free:
            raise RuntimeError(
                f"the block pool is exhausted: all {self.num_blocks} blocks are in use"
            )
        return self.free.pop()

    def release(self, blocks: Sequence[int]) -> None:
        """Give blocks back to the pool (a ValueError for a block that is not in use)."""
        in_use = set(range(self.num_blocks)) - set(self.free)
        for b in blocks:
            if b not in in_use:
                raise ValueError(
                    f"block {b} is not in use (pool of {self.num_blocks} blocks)"
                )
            in_use.discard(b)
            self.free.append(b)


def gather_blocks(pool_tensor: Tensor, block_table: Tensor, length: int) -> Tensor:
    """The first `length` tokens of one sequence, contiguous (chapter 9).

    pool_tensor: (num_blocks, H, block_size, d); block_table: (n_blocks,) integer pool indices,
    in token order. Returns (H, length, d): token t from block block_table[t // block_size],
    slot t % block_size.
    """
    tensor("pool_tensor", pool_tensor, "(num_blocks, H, block_size, d)", dims=(4,))
    tensor("block_table", block_table, "(n_blocks,)", dims=(1,))
    if block_table.dtype.is_floating_point or block_table.dtype == torch.bool:
        raise TypeError(
            f"block_table must hold integer block indices, got dtype {block_table.dtype}"
        )
    positive_int("length", length, allow_zero=True)
    num_blocks, H, block_size, d = pool_tensor.shape
    if length > block_table.shape[0] * block_size:
        raise ValueError(
            f"length {length} needs more than the {block_table.shape[0]} blocks of "
            f"{block_size} slots in block_table"
        )
    if block_table.numel() and (
        block_table.min() < 0 or block_table.max() >= num_blocks
    ):
        raise ValueError(
            f"block_table points outside the pool: indices must be in [0, {num_blocks}), "
            f"got {int(block_table.min())} .. {int(block_table.max())}"
        )
    blocks = pool_tensor[block_table.long()]  # (n_blocks, H, block_size, d)
    return blocks.transpose(0, 1).reshape(H, -1, d)[:, :length]  # (H, length, d)


def paged_attention(
    q: Tensor, pool: BlockPool, block_table: Tensor, length: int
) -> Tensor:
    """Attention of one sequence's queries over its cached tokens, read through its block
    table (chapter 9). q: (H_q, T_q, d), the last T_q of `length` positions (causal);
    H_q a multiple of the pool's heads (grouped-query attention). Returns (H_q, T_q, d)."""
    tensor("q", q, "(H_q, T_q, d)", dims=(3,))
    floating("q", q)
    positive_int("length", length)
    k = gather_blocks(pool.k, block_table, length)  # (H, length, d)
    v = gather_blocks(pool.v, block_table, length)
    H_q, T_q, d = q.shape
    if d != pool.d_head or H_q % pool.n_head:
        raise ValueError(
            f"q {tuple(q.shape)} does not fit the pool: d must be {pool.d_head} and "
            f"H_q a multiple of {pool.n_head}"
        )
    if T_q > length:
        raise ValueError(
            f"T_q={T_q} queries cannot be the last positions of length={length}"
        )
    group = H_q // pool.n_head
    # (H_q, length, d)
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    causal = torch.ones(T_q, length, dtype=torch.bool, device=q.device).tril(
        length - T_q
    )
    return torch.nn.functional.scaled_dot_product_attention(
        q, k.to(q.dtype), v.to(q.dtype), attn_mask=causal
    )


class PagedKVCache(KVCache):
    """One sequence's cache in a shared `BlockPool` (chapter 9): a drop-in for `KVCache`
    (batch size 1) that writes new tokens into blocks taken from the pool as needed and
    returns all keys and values so far, gathered through its block table."""

    def __init__(self, pool: BlockPool) -> None:
        super().__init__()
        if not isinstance(pool, BlockPool):
            raise TypeError(f"pool must be a BlockPool, got {type(pool).__name__}")
        self.pool = pool
        self.block_table: list[int] = []
        self.length = 0

    def __len__(self) -> int:
        return self.length

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks this sequence holds (whole blocks: the last may be part empty)."""
        return len(self.block_table) * self.pool.bytes_per_block

    def table(self) -> Tensor:
        return torch.tensor(self.block_table, dtype=torch.long)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write k, v (1, H, T_new, d) after the cached tokens; return all keys and values so
        far, (1, H, T_seen + T_new, d) each."""
        tensor("k", k, "(1, H, T_new, d)", dims=(4,))
        tensor("v", v, "(1, H, T_new, d)", dims=(4,))
        pool = self.pool
        want = (1, pool.n_head, k.shape[2], pool.d_head)
        if k.shape != v.shape or tuple(k.shape) != want:
            raise ValueError(
                f"k and v must both be (1, H={pool.n_head}, T_new, d={pool.d_head}) to "
                f"fit the pool, got {tuple(k.shape)} and {tuple(v.shape)}"
            )
        for t in range(k.shape[2]):
            block, slot = divmod(self.length, pool.block_size)
            if block == len(self.block_table):
                self.block_table.append(pool.allocate())
            pool.k[self.block_table[block], :, slot] = k[0, :, t]
            pool.v[self.block_table[block], :, slot] = v[0, :, t]
            self.length += 1
        table = self.table()
        return (
            gather_blocks(pool.k, table, self.length)[None],
            gather_blocks(pool.v, table, self.length)[None],
        )

    def free(self) -> None:
        """Return this sequence's blocks to the pool (the sequence is finished)."""
        self.pool.release(self.block_table)
        self.block_table, self.length = [], 0


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
