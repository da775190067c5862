"""What a multi-head attention layer (`attnbook.multihead`, chapter 3) accepts: query, key
and value of its width, batched or not, a boolean mask that broadcasts to every head's
weights, a key/value cache (chapter 6) and, with ALiBi (chapter 8), causal attention only.
Each check fails with an error that names the input and the shapes it expected.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import boolean, tensor
from .caches import KVCache

__all__ = ["checked_inputs"]


def checked_inputs(
    d_model: int,
    n_head: int,
    alibi: bool,
    query: Tensor,
    key: Tensor | None,
    value: Tensor | None,
    mask: Tensor | None,
    is_causal: bool,
    kv_cache: KVCache | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, bool]:
    """The inputs of a `MultiHeadAttention` of width `d_model` and `n_head` heads batched
    (B, T, d_model) (key and value default to query), the mask with a head axis
    (B|1, H|1, T_q|1, T_k) and whether the inputs were unbatched; a clear error for anything
    that does not fit (chapter 3; the cache: chapter 6; ALiBi: chapter 8)."""
    key = query if key is None else key
    value = key if value is None else value
    shape = f"(B, T, d_model={d_model}) or (T, d_model)"
    for name, x in (("query", query), ("key", key), ("value", value)):
        tensor(name, x, shape)
        if x.dim() not in (2, 3) or x.shape[-1] != d_model:
            raise ValueError(f"{name} must be {shape}, got {tuple(x.shape)}")
        if x.shape[-2] == 0:
            raise ValueError(
                f"{name} must hold at least one token, got {tuple(x.shape)}"
            )
    if not query.dim() == key.dim() == value.dim():
        raise ValueError(
            "query, key and value must all be batched (B, T, d) or all unbatched (T, d)"
        )
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(
            f"key {tuple(key.shape)} and value {tuple(value.shape)} must have the same B and T"
        )
    if key.shape[0] != query.shape[0]:
        raise ValueError(
            f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes"
        )
    if kv_cache is not None and not isinstance(kv_cache, KVCache):
        raise TypeError(f"kv_cache must be a KVCache, got {type(kv_cache).__name__}")
    if alibi and not is_causal:
        raise ValueError(
            "alibi=True is implemented for causal attention only: pass is_causal=True"
        )
    if mask is None:
        return query, key, value, None, unbatched
    boolean("mask", mask)
    target = (
        query.shape[0],
        n_head,
        query.shape[1],
        key.shape[1] + (0 if kv_cache is None else len(kv_cache)),
    )
    # (B, T_q|1, T_k) gets a head axis
    heads = mask.unsqueeze(1) if mask.dim() == 3 else mask
    try:
        ok = (
            mask.dim() in (2, 3, 4)
            and torch.broadcast_shapes(heads.shape, target) == target
        )
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to (B, H, T_q, T_k) = {target}: "
            "give it as (T_q, T_k), (B, T_q or 1, T_k) or (B, H or 1, T_q or 1, T_k)"
        )
    return query, key, value, heads, unbatched
