"""Grouped-query attention and the memory of the key/value cache (chapter 8).

In multi-head attention every query head has its own key and value head. Grouped-query
attention (GQA) lets a group of query heads share one key/value head: H query heads, H_kv
key/value heads, H divisible by H_kv, group size g = H / H_kv. Query head h reads key/value
head h // g, so the shared heads are *repeated in place* (head 0 0 1 1 ..., not 0 1 0 1 ...),
the layout `torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)` uses.

    H_kv = H   multi-head attention (nothing shared)
    H_kv = 1   multi-query attention (MQA): every query head reads the same keys and values

`repeat_kv` lives beside `attention.attend`, the one attention core, which calls it whenever
it gets fewer key/value heads than query heads, and `kv_cache_bytes` beside `KVCache`
(`attnbook.multihead`, chapter 6); both are re-exported here, where they are taught.

Only the keys and values are cached while generating, so the cache shrinks by the factor g:

    bytes per token = 2 (keys and values) x layers x H_kv x d_head x bytes per number
"""

from __future__ import annotations

from torch import Tensor

from ._checks import floating, tensor
from .attention import attend, repeat_kv
from .multihead import kv_cache_bytes

__all__ = ["repeat_kv", "grouped_query_attention", "kv_cache_bytes"]


def grouped_query_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, is_causal: bool = False
) -> tuple[Tensor, Tensor]:
    """Attention of H query heads over H_kv shared key/value heads (chapter 8).

    q: (B, H, T_q, d_k); k: (B, H_kv, T_k, d_k); v: (B, H_kv, T_k, d_v), H divisible by H_kv.
    mask: optional boolean, True = may attend, broadcastable to (B, H, T_q, T_k).
    is_causal: the queries are the last T_q of T_k positions and see no later key.
    Returns (output (B, H, T_q, d_v), weights (B, H, T_q, T_k)): `attention.attend`, which
    repeats each key/value head for its group (`repeat_kv`), with the weights.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        tensor(name, x, f"(B, {'H' if name == 'q' else 'H_kv'}, T, d)", dims=(4,))
        floating(name, x)
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be a bool, got {type(is_causal).__name__}")
    out, weights = attend(q, k, v, mask, is_causal=is_causal, need_weights=True)
    assert weights is not None
    return out, weights
