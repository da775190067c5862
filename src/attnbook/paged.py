"""Attention over a paged key/value cache (chapter 9; vLLM's PagedAttention, Kwon et al. 2023).

A sequence's keys and values lie in blocks of a shared pool (`attnbook.blocks`), listed in its
block table. Attention needs them in token order: `gather_blocks` lays a table's blocks end to
end with one index operation. `PagedKVCache` is the drop-in for `KVCache` of one sequence;
the serving engine (`attnbook.serving`) runs the model's own blocks over a `PagedBatchCache`,
which reads every row of a batch through its table and keeps each query to its own row.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import positive_int, tensor
from .blocks import BlockPool, BlockTable
from .caches import KVCache
from .masks import position_mask

__all__ = ["gather_blocks", "PagedBatchCache", "PagedKVCache"]


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


class PagedBatchCache(KVCache):
    """One layer of a batch of sequences in a `BlockPool`, as the serving engine hands it to
    the model for one forward pass (chapter 9): `GPT.forward(new, kv_caches, positions)`
    runs the model's own blocks, and this cache is all that differs from decoding one
    sequence. tables: (B, n_blocks) each row's blocks, a short row padded with any valid
    index; lengths: (B,) each row's tokens once the new ones are in (its table already grown
    to hold them, `BlockTable.grow`). `append` writes the new keys and values into their
    slots and returns every row's blocks end to end, (B, H, n_blocks * block_size, d): one
    index gather per layer and step (`gather_blocks`), into a temporary. `mask` keeps each
    query to the keys of its own row up to its own position: the empty slots and the padding
    are never read. Rows of one length (one sequence, or the samples of one prompt) need no
    mask: `append` returns their keys up to that length and, for queries at the last
    positions, `mask` gives None, as a plain `KVCache` does, so the model's causal attention
    takes PyTorch's fused kernel (`attention.attend`). A fused paged kernel (vLLM's,
    FlashInfer's) reads each block straight from the pool into on-chip memory instead and
    never writes the gathered copy."""

    def __init__(
        self, pool: BlockPool, layer: int, tables: Tensor, lengths: Tensor
    ) -> None:
        super().__init__()
        if not isinstance(pool, BlockPool):
            raise TypeError(f"pool must be a BlockPool, got {type(pool).__name__}")
        positive_int("layer", layer, allow_zero=True)
        if layer >= pool.n_layer:
            raise ValueError(
                f"layer={layer} is outside the pool's {pool.n_layer} layers"
            )
        tensor("tables", tables, "(B, n_blocks)", dims=(2,))
        tensor("lengths", lengths, "(B,)", dims=(1,))
        slots = tables.shape[1] * pool.block_size
        if lengths.shape[0] != tables.shape[0] or (lengths > slots).any():
            raise ValueError(
                f"tables and lengths must have one row per sequence and each length at "
                f"most the {slots} slots of the tables, got {tuple(tables.shape)} and "
                f"{lengths.tolist()}"
            )
        self.pool, self.layer = pool, layer
        self.tables, self.lengths = tables.long(), lengths.long()
        # rows of one length read their keys up to it, no empty slot among them
        self.uniform = bool(lengths.numel()) and bool((lengths == lengths[0]).all())
        self.width = int(lengths[0]) if self.uniform else slots

    def __len__(self) -> int:
        """Keys `append` returns per row: the rows' length when they share one, else every
        slot the tables reach (each row reads its own up to its length)."""
        return self.width

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write k, v (B, H, T, d), the last T tokens of each row, into their slots; return
        every row's keys and values read through its table, (B, H, slots, d) each."""
        tensor("k", k, "(B, H, T, d)", dims=(4,))
        pool, (B, H, T, d) = self.pool, k.shape
        if k.shape != v.shape or (B, H, d) != (
            self.tables.shape[0],
            pool.n_head,
            pool.d_head,
        ):
            raise ValueError(
                f"k and v must both be (B={self.tables.shape[0]}, H={pool.n_head}, T, "
                f"d={pool.d_head}), got {tuple(k.shape)} and {tuple(v.shape)}"
            )
        if (self.lengths < T).any():
            raise ValueError(
                f"each length must be >= T={T}, got {self.lengths.tolist()}"
            )
        pos = self.lengths[:, None] - T + torch.arange(T)  # (B, T)
        blocks = self.tables.gather(1, pos // pool.block_size).flatten()  # (B*T,)
        slots = (pos % pool.block_size).flatten()
        pool.write(
            self.layer,
            blocks,
            slots,
            k.transpose(1, 2).flatten(0, 1),  # (B*T, H, d)
            v.transpose(1, 2).flatten(0, 1),
        )
        keys = gather_blocks(pool.k[self.layer], self.tables)  # (B, H, slots, d)
        values = gather_blocks(pool.v[self.layer], self.tables)
        keys, values = keys[:, :, : self.width], values[:, :, : self.width]
        return keys.to(k.dtype), values.to(v.dtype)

    def mask(self, positions: Tensor | None) -> Tensor | None:
        """(B, 1, T, len(self)): the query at positions[b, i] reads row b's slots up to it;
        None when every row has the same length and the queries are its last T positions:
        then that is the causal mask of the keys `append` returns (pass is_causal=True)."""
        if positions is None:
            raise ValueError(
                "a PagedBatchCache holds rows of different lengths: give each row's "
                "positions (GPT.forward(..., positions=))"
            )
        positions = positions.long()
        T = positions.shape[-1]
        last = self.lengths[:, None] - T + torch.arange(T)  # (B, T): the last positions
        shapes = (last.shape, last.shape[1:])  # (B, T) or the same T for every row
        if (
            self.uniform
            and positions.shape in shapes
            and bool((positions == last).all())
        ):
            return None
        return position_mask(positions, torch.arange(len(self)))[:, None]


class PagedKVCache(KVCache):
    """One layer of one sequence's cache in a `BlockPool` (chapter 9): a drop-in for `KVCache`
    (batch size 1) in `GPT.forward`. The layers of a sequence share one `BlockTable` (pass
    it); given a pool, the cache makes its own. `append` writes the new tokens into the pool
    and returns all keys and values so far gathered into a contiguous copy, because the
    model's attention takes tensors: this drop-in copies the sequence at every step, as the
    engine's `PagedBatchCache` gathers the batch's blocks."""

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
        n = k.shape[2]
        if self.length + n > len(
            self.table
        ):  # the first layer to reach these positions
            self.table.grow(self.length + n - len(self.table))
        self.length += n
        batch = PagedBatchCache(
            pool, self.layer, self.table.tensor()[None], torch.tensor([self.length])
        )
        keys, values = batch.append(k, v)  # (1, H, slots, d): whole blocks
        return keys[:, :, : self.length], values[:, :, : self.length]

    def free(self) -> None:
        """Give the sequence's blocks back (call it on one layer's cache: they share them)."""
        self.table.free()
        self.length = 0
