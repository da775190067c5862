"""Grouped-query attention and the memory of the key/value cache (chapter 8).

In multi-head attention every query head has its own key and value head. Grouped-query
attention (GQA) lets a group of query heads share one key/value head: H query heads, H_kv
key/value heads, H divisible by H_kv, group size g = H / H_kv. Query head h reads key/value
head h // g, so the shared heads are *repeated in place* (head 0 0 1 1 ..., not 0 1 0 1 ...),
the layout `torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)` uses.

    H_kv = H   multi-head attention (nothing shared)
    H_kv = 1   multi-query attention (MQA): every query head reads the same keys and values

Only the keys and values are cached while generating, so the cache shrinks by the factor g:

    bytes per token = 2 (keys and values) x layers x H_kv x d_head x bytes per number
"""
from __future__ import annotations

import torch
from torch import Tensor

from ._checks import boolean, floating, positive_int, tensor
from .attention import scaled_dot_product_attention

__all__ = ["repeat_kv", "grouped_query_attention", "kv_cache_bytes"]


def repeat_kv(x: Tensor, n_rep: int) -> Tensor:
    """(B, H_kv, T, d) -> (B, H_kv * n_rep, T, d): each key/value head repeated n_rep times in
    place, so that query head h of the result reads head h // n_rep of `x`."""
    tensor("x", x, "(B, H_kv, T, d)", dims=(4,))
    positive_int("n_rep", n_rep)
    if n_rep == 1:
        return x
    B, H_kv, T, d = x.shape
    expanded = x[:, :, None].expand(B, H_kv, n_rep, T, d)  # (B, H_kv, n_rep, T, d), no copy yet
    return expanded.reshape(B, H_kv * n_rep, T, d)  # (B, H, T, d): heads 0 0 .. 1 1 ..


def grouped_query_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
                            is_causal: bool = False) -> tuple[Tensor, Tensor]:
    """Attention of H query heads over H_kv shared key/value heads.

    q: (B, H, T_q, d_k); k: (B, H_kv, T_k, d_k); v: (B, H_kv, T_k, d_v), H divisible by H_kv.
    mask: optional boolean, True = may attend, broadcastable to (B, H, T_q, T_k).
    is_causal: the queries are the last T_q of T_k positions and see no later key.
    Returns (output (B, H, T_q, d_v), weights (B, H, T_q, T_k)).
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        tensor(name, x, f"(B, {'H' if name == 'q' else 'H_kv'}, T, d)", dims=(4,))
        floating(name, x)
    H, H_kv = q.shape[1], k.shape[1]
    if v.shape[1] != H_kv:
        raise ValueError(f"k and v must have the same number of heads H_kv, got {H_kv} and {v.shape[1]}")
    if H % H_kv:
        raise ValueError(f"the {H} query heads cannot be split into groups over {H_kv} key/value "
                         f"heads: H must be divisible by H_kv")
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be a bool, got {type(is_causal).__name__}")
    k_all, v_all = repeat_kv(k, H // H_kv), repeat_kv(v, H // H_kv)  # (B, H, T_k, d)
    if is_causal:
        T_q, T_k = q.shape[-2], k.shape[-2]
        if T_q > T_k:
            raise ValueError(f"is_causal needs T_q <= T_k (the queries are the last positions), "
                             f"got T_q={T_q}, T_k={T_k}")
        causal = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(T_k - T_q)
        mask = causal if mask is None else boolean("mask", mask) & causal
    return scaled_dot_product_attention(q, k_all, v_all, mask)


def kv_cache_bytes(n_tokens: int, n_layer: int, n_kv_head: int, d_head: int,
                   bytes_per_number: int, batch_size: int = 1) -> int:
    """Bytes the key/value cache holds after `n_tokens` tokens of `batch_size` sequences:
    2 x n_layer x n_kv_head x d_head x bytes_per_number per token (2 = keys and values)."""
    for name, value in (("n_layer", n_layer), ("n_kv_head", n_kv_head), ("d_head", d_head),
                        ("bytes_per_number", bytes_per_number), ("batch_size", batch_size)):
        positive_int(name, value)
    positive_int("n_tokens", n_tokens, allow_zero=True)
    return 2 * n_layer * n_kv_head * d_head * bytes_per_number * n_tokens * batch_size
