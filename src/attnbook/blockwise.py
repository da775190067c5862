"""Exact attention over blocks of keys with an online softmax, in NumPy (chapter 2).

The softmax of a row can be built up block by block: keep the running maximum m, the running
sum l of exp(score - m), and the running weighted sum of values; when a new block raises the
maximum, rescale what was accumulated by exp(m_old - m_new). The (T_q, T_k) score matrix is
never held in memory, only (T_q, block) at a time: the idea behind FlashAttention.

`blockwise_sdpa` is the same idea in PyTorch, batched over (B, H) (chapter 8). It also walks
the queries in blocks, and with a causal or sliding-window mask it skips every key block that
no query of the block may see, so a window of w keys costs O(N w) instead of O(N^2).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from ._checks import floating, positive_int, tensor
from .masks import position_mask

__all__ = ["blockwise_attention", "blockwise_sdpa"]


def blockwise_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, block_size: int = 64
) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_k)) V for Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v), keys in blocks.

    Chapter 2.
    """
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    if Q.ndim != 2 or K.ndim != 2 or V.ndim != 2:
        raise ValueError(
            f"Q, K, V must be 2-D, got shapes {Q.shape}, {K.shape}, {V.shape}"
        )
    if Q.shape[1] != K.shape[1] or K.shape[0] != V.shape[0]:
        raise ValueError(
            f"shapes do not fit: Q {Q.shape}, K {K.shape}, V {V.shape} "
            "(need Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v))"
        )
    if K.shape[0] == 0 or Q.shape[1] == 0:
        raise ValueError(
            f"K needs at least one key and Q, K at least one feature, got shapes "
            f"Q {Q.shape}, K {K.shape}"
        )
    positive_int("block_size", block_size)
    scale = 1.0 / np.sqrt(Q.shape[1])
    m = np.full(Q.shape[0], -np.inf)  # running max of each query's scores   (T_q,)
    l = np.zeros(Q.shape[0])  # running sum of exp(score - m)                 (T_q,)
    acc = np.zeros((Q.shape[0], V.shape[1]))  # running sum of exp(...) * v   (T_q, d_v)
    for start in range(0, K.shape[0], block_size):
        S = Q @ K[start : start + block_size].T * scale  # (T_q, block)
        m_new = np.maximum(m, S.max(axis=1))
        P = np.exp(S - m_new[:, None])  # (T_q, block)
        rescale = np.exp(m - m_new)  # shrinks what was summed under the old maximum
        l = l * rescale + P.sum(axis=1)
        acc = acc * rescale[:, None] + P @ V[start : start + block_size]
        m = m_new
    return acc / l[:, None]  # (T_q, d_v)


def blockwise_sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    block_size: int = 256,
    is_causal: bool = False,
    window: int | None = None,
) -> Tensor:
    """Exact softmax(Q K^T / sqrt(d_k)) V, keys taken `block_size` at a time (chapter 8).

    q: (..., T_q, d_k); k: (..., T_k, d_k); v: (..., T_k, d_v) (e.g. (B, H, T, d)).
    is_causal: the queries are the last T_q of the T_k positions and see no later key.
    window: query i sees only the `window` most recent keys (itself included); needs is_causal.
    Returns (..., T_q, d_v); never holds more than one (..., block, block) block of scores.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        tensor(name, x, "(..., T, d)", min_dims=2)
        floating(name, x)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(
            f"q, k and v must have the same dtype, got {q.dtype}, {k.dtype} and {v.dtype}"
        )
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2] or k.shape[-2] == 0:
        raise ValueError(
            f"shapes do not fit: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} "
            "(need q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v), T_k >= 1)"
        )
    positive_int("block_size", block_size)
    if window is not None:
        positive_int("window", window)
        if not is_causal:
            raise ValueError(
                "window needs is_causal=True (a sliding window looks back only)"
            )
    T_q, T_k = q.shape[-2], k.shape[-2]
    if is_causal and T_q > T_k:
        raise ValueError(
            f"is_causal needs T_q <= T_k (the queries are the last positions), got {T_q}, {T_k}"
        )
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    out = q.new_empty(*batch, T_q, v.shape[-1])  # (..., T_q, d_v)
    # scaled once here, not every block of scores
    q = q * (1.0 / math.sqrt(q.shape[-1]))
    offset = T_k - T_q  # absolute position of query i is offset + i
    # query blocks too: each block of scores stays small (cache-friendly)
    q_step = block_size
    for qs in range(0, T_q, q_step):
        qb = q[..., qs : qs + q_step, :]  # (..., bq, d_k)
        # positions of its queries
        first, last = offset + qs, offset + qs + qb.shape[-2] - 1
        lo = 0 if window is None else max(0, first - window + 1)
        hi = last + 1 if is_causal else T_k
        # running max       (..., bq, 1)
        m = q.new_full((*batch, qb.shape[-2], 1), float("-inf"))
        # running sum of exp(s - m)       (..., bq, 1)
        l = q.new_zeros((*batch, qb.shape[-2], 1))
        # running sum, values (..., bq, d_v)
        acc = q.new_zeros((*batch, qb.shape[-2], v.shape[-1]))
        for ks in range(lo, hi, block_size):
            ke = min(ks + block_size, hi)
            s = qb @ k[..., ks:ke, :].transpose(-2, -1)  # (..., bq, bk)
            # no key masked
            inside = ke - 1 <= first and (window is None or ks > last - window)
            if is_causal and not inside:
                allowed = position_mask(  # (bq, bk): the band's edge inside this block
                    torch.arange(first, last + 1, device=q.device),
                    torch.arange(ks, ke, device=q.device),
                    window,
                )
                s.masked_fill_(~allowed, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            # rows that saw no key yet
            shift = m_new.masked_fill(m_new == float("-inf"), 0.0)
            # (..., bq, bk), in place: one block of scores alive
            p = s.sub_(shift).exp_()
            # shrinks what was summed under the old maximum
            rescale = torch.exp(m - shift)
            l = l.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))
            acc = acc.mul_(rescale).add_(p @ v[..., ks:ke, :])
            m = m_new
            del s, p  # free this block's scores before the next block's exist
        out[..., qs : qs + qb.shape[-2], :] = acc.div_(l)
    return out
