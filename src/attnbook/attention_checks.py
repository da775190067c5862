"""What attention accepts (chapter 1): the checks `attention` runs on queries, keys, values
and a mask before any arithmetic, so that a wrong input fails with an error that names the
problem (which tensor, which dimension, which shapes) instead of deep inside PyTorch.

Shapes as in `attention`: q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); a boolean
mask (True = may attend) that broadcasts to the weights' (..., T_q, T_k).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["check_inputs", "check_mask"]


def check_inputs(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> None:
    """Raise a ValueError/TypeError that names the problem, before torch does something
    cryptic (chapter 1)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., tokens, features); "
                f"got shape {tuple(t.shape)}"
            )
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not t.dtype.is_floating_point:
            raise TypeError(
                f"{name} must be a floating-point tensor, got dtype {t.dtype}"
            )
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(
            f"q, k and v must have the same dtype, got {q.dtype}, {k.dtype} and {v.dtype}"
        )
    if q.shape[-1] == 0:
        raise ValueError(
            f"q and k need at least one feature (d_k >= 1), got q of shape {tuple(q.shape)}"
        )
    if k.shape[-2] == 0:
        raise ValueError(
            f"k and v need at least one token (T_k >= 1), got k of shape {tuple(k.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries and keys must have the same width d_k: q has {q.shape[-1]} "
            f"(shape {tuple(q.shape)}), k has {k.shape[-1]} (shape {tuple(k.shape)})"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"keys and values must have the same number of tokens: k has {k.shape[-2]} "
            f"(shape {tuple(k.shape)}), v has {v.shape[-2]} (shape {tuple(v.shape)})"
        )
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the leading (batch) dimensions of q {tuple(q.shape)}, k {tuple(k.shape)} and "
            f"v {tuple(v.shape)} do not broadcast together"
        ) from None
    check_mask(
        mask,
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]),
        q.shape[-2],
        k.shape[-2],
    )


def check_mask(mask: Tensor | None, batch: tuple[int, ...], t_q: int, t_k: int) -> None:
    """A boolean mask that broadcasts to the weights' shape (*batch, t_q, t_k), or None
    (chapter 1; masks themselves: chapter 4)."""
    if mask is None:
        return
    if not isinstance(mask, Tensor):
        raise TypeError(
            f"mask must be a boolean torch.Tensor, got {type(mask).__name__}"
        )
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must be boolean (True = may attend), got dtype {mask.dtype}; "
            "for an additive 0/-inf mask, add it to the scores yourself or convert it with "
            "`mask == 0`"
        )
    target = (*batch, t_q, t_k)
    ok = mask.dim() >= 1
    if ok:
        try:
            ok = torch.broadcast_shapes(mask.shape, target) == torch.Size(target)
        except RuntimeError:
            ok = False
    if not ok:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the attention weights' "
            f"shape {target} (..., T_q={t_q}, T_k={t_k})"
        )
