"""Exact attention over blocks of keys with an online softmax, in NumPy (chapter 2).

The softmax of a row can be built up block by block: keep the running maximum m, the running
sum l of exp(score - m), and the running weighted sum of values; when a new block raises the
maximum, rescale what was accumulated by exp(m_old - m_new). The (T_q, T_k) score matrix is
never held in memory, only (T_q, block) at a time: the idea behind FlashAttention.
"""
from __future__ import annotations

import numpy as np

__all__ = ["blockwise_attention"]


def blockwise_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, block_size: int = 64) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_k)) V for Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v), keys in blocks."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    if Q.ndim != 2 or K.ndim != 2 or V.ndim != 2:
        raise ValueError(f"Q, K, V must be 2-D, got shapes {Q.shape}, {K.shape}, {V.shape}")
    if Q.shape[1] != K.shape[1] or K.shape[0] != V.shape[0]:
        raise ValueError(f"shapes do not fit: Q {Q.shape}, K {K.shape}, V {V.shape} "
                         "(need Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v))")
    if K.shape[0] == 0 or Q.shape[1] == 0:
        raise ValueError(f"K needs at least one key and Q, K at least one feature, got shapes "
                         f"Q {Q.shape}, K {K.shape}")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size <= 0:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    scale = 1.0 / np.sqrt(Q.shape[1])
    m = np.full(Q.shape[0], -np.inf)  # running max of each query's scores   (T_q,)
    l = np.zeros(Q.shape[0])  # running sum of exp(score - m)                 (T_q,)
    acc = np.zeros((Q.shape[0], V.shape[1]))  # running sum of exp(...) * v   (T_q, d_v)
    for start in range(0, K.shape[0], block_size):
        S = Q @ K[start:start + block_size].T * scale  # (T_q, block)
        m_new = np.maximum(m, S.max(axis=1))
        P = np.exp(S - m_new[:, None])  # (T_q, block)
        rescale = np.exp(m - m_new)  # shrinks what was summed under the old maximum
        l = l * rescale + P.sum(axis=1)
        acc = acc * rescale[:, None] + P @ V[start:start + block_size]
        m = m_new
    return acc / l[:, None]  # (T_q, d_v)
