"""Grouped-query attention and the memory of the key/value cache (chapter 8).

In multi-head attention every query head has its own key and value head. Grouped-query
attention (GQA) lets a group of query heads share one key/value head: H query heads, H_kv
key/value heads, H divisible by H_kv, group size g = H / H_kv. Query head h reads key/value
head h // g, so the shared heads are *repeated in place* (head 0 0 1 1 ..., not 0 1 0 1 ...),
the layout `torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)` uses.

    H_kv = H   multi-head attention (nothing shared)
    H_kv = 1   multi-query attention (MQA): every query head reads the same keys and values

`repeat_kv` lives beside `attention.attend`, the one attention core, which calls it on its
explicit path when it gets fewer key/value heads than query heads (its fused path hands
the shared heads to PyTorch's kernel, `enable_gqa`, and copies nothing), and
`kv_cache_bytes` beside `KVCache` (`attnbook.multihead`, chapter 6); both are re-exported
here, where they are taught.

Only the keys and values are cached while generating, so the cache shrinks by the factor g:

    bytes per token = 2 (keys and values) x layers x H_kv x d_head x bytes per number

`decode_with_cache` generates with the caches and hands them back, so that a chapter can
weigh a filled cache against that formula and compare its tokens with the uncached path.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import floating, tensor
from .attention import attend, repeat_kv
from .gpt import GPT
from .caches import KVCache, kv_cache_bytes

__all__ = [
    "repeat_kv",
    "grouped_query_attention",
    "kv_cache_bytes",
    "decode_with_cache",
]


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


@torch.no_grad()
def decode_with_cache(
    model: GPT,
    idx: Tensor,
    max_new_tokens: int,
    generator: torch.Generator | None = None,
    temperature: float = 1.0,
    top_k: int | None = None,
) -> tuple[Tensor, list[KVCache]]:
    """Extend idx (B, T) by max_new_tokens sampled tokens with `GPT.generate`'s cache, and
    return (ids (B, T + max_new_tokens), the filled caches, one per layer) (chapter 8).

    Each layer's cache holds (B, H_kv, T_fed, d_head) keys and values, T_fed = T +
    max_new_tokens - 1 (the last drawn token is never fed), which must fit in the model's
    block_size; the tokens are those of `model.generate(..., use_cache=False)` with an
    equally seeded generator.
    """
    caches = model.new_caches()
    ids = model.generate(
        idx, max_new_tokens, temperature, top_k, generator, kv_caches=caches
    )
    return ids, caches
