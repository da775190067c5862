"""Boolean attention masks: causal, padding, and their combination (chapter 4).

Convention everywhere in attnbook: a boolean mask broadcastable to (..., T_q, T_k) with
**True = may attend** (as `torch.nn.functional.scaled_dot_product_attention` reads it).
`torch.nn.MultiheadAttention` reads boolean masks the other way round (True = masked out):
use `to_torch_mha_mask` for it. Additive masks (0 = attend, -inf = blocked) convert with
`to_additive` / `from_additive`.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    "causal_mask", "padding_mask", "padding_mask_from_lengths", "combine_masks",
    "to_additive", "from_additive", "to_torch_mha_mask",
]


def causal_mask(T: int, device: torch.device | str | None = None) -> Tensor:
    """(T, T) lower-triangular boolean mask: query i may attend to keys 0..i."""
    if not isinstance(T, int) or T <= 0:
        raise ValueError(f"T must be a positive int, got {T!r}")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Key mask (B, 1, T) from token ids (B, T): True where the token is not padding."""
    if not isinstance(tokens, Tensor) or tokens.dim() != 2:
        shape = tuple(tokens.shape) if isinstance(tokens, Tensor) else type(tokens).__name__
        raise ValueError(f"tokens must be a (B, T) tensor of ids, got {shape}")
    return (tokens != pad_id).unsqueeze(1)  # (B, 1, T): broadcasts over the queries


def padding_mask_from_lengths(lengths: Sequence[int] | Tensor, max_len: int | None = None) -> Tensor:
    """Key mask (B, 1, T) from sequence lengths: True for the first `lengths[b]` positions."""
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.dtype.is_floating_point:
        raise ValueError(f"lengths must be a 1-D sequence of ints, got {lengths.tolist()!r}")
    if (lengths < 0).any():
        raise ValueError(f"lengths must be non-negative, got {lengths.tolist()}")
    longest = int(lengths.max()) if len(lengths) else 0
    max_len = longest if max_len is None else max_len
    if longest > max_len:
        raise ValueError(f"a length of {longest} does not fit in max_len={max_len}")
    positions = torch.arange(max_len, device=lengths.device)  # (T,)
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)  # (B, 1, T)


def combine_masks(*masks: Tensor | None) -> Tensor | None:
    """Logical AND of boolean masks (None is ignored), broadcast together.

    For example a causal mask (T, T) and a padding mask (B, 1, T) give (B, T, T): query i of
    sequence b may attend to key j only if j <= i and j is a real token.
    """
    present = [m for m in masks if m is not None]
    for m in present:
        if m.dtype != torch.bool:
            raise TypeError(f"masks must be boolean (True = may attend), got {m.dtype}")
    if not present:
        return None
    try:
        shape = torch.broadcast_shapes(*(m.shape for m in present))
    except RuntimeError:
        raise ValueError(f"masks of shapes {[tuple(m.shape) for m in present]} do not broadcast together") from None
    out = torch.ones(shape, dtype=torch.bool, device=present[0].device)
    for m in present:
        out = out & m
    return out


def to_additive(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Boolean mask (True = may attend) -> additive mask: 0.0 where allowed, -inf where not."""
    if mask.dtype != torch.bool:
        raise TypeError(f"expected a boolean mask, got {mask.dtype}")
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))


def from_additive(additive: Tensor) -> Tensor:
    """Additive mask (0 = attend, -inf = blocked) -> boolean mask (True = may attend)."""
    if not additive.dtype.is_floating_point:
        raise TypeError(f"expected a floating-point additive mask, got {additive.dtype}")
    if torch.isnan(additive).any() or (additive == float("inf")).any():
        raise ValueError("an additive mask holds 0 or -inf, not NaN or +inf")
    return additive != float("-inf")


def to_torch_mha_mask(mask: Tensor) -> Tensor:
    """attnbook's boolean mask -> the boolean `attn_mask` of `nn.MultiheadAttention`,
    where True means *masked out*: the same information, inverted."""
    if mask.dtype != torch.bool:
        raise TypeError(f"expected a boolean mask, got {mask.dtype}")
    return ~mask
