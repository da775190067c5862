"""Argument checks shared by the modules of every chapter: each raises a TypeError or
ValueError that names the argument and what was expected, before torch fails somewhere deep
inside with a cryptic message."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def integer(name: str, value: object) -> int:
    """`value` as an int; a TypeError for anything else (bool included)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return value


def positive_int(name: str, value: object, *, allow_zero: bool = False) -> int:
    """`value` as an int; a TypeError for non-ints (bool included), a ValueError below 1 (or 0)."""
    value = integer(name, value)
    low = 0 if allow_zero else 1
    if value < low:
        raise ValueError(
            f"{name} must be {'>= 0' if allow_zero else 'a positive int'}, got {value}"
        )
    return value


def positive_float(name: str, value: object) -> float:
    """`value` as a finite float > 0 (ints accepted, bools and NaN/inf not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{name} must be a number, got {type(value).__name__} {value!r}"
        )
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return float(value)


def tensor(
    name: str,
    x: object,
    shape: str,
    *,
    dims: tuple[int, ...] | None = None,
    min_dims: int = 0,
) -> Tensor:
    """`x` as a Tensor with `dims` dimensions (or at least `min_dims`); `shape` describes the
    expected shape in the message, e.g. "(B, T, d_model)"."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of shape {shape}, got {type(x).__name__}"
        )
    if (dims is not None and x.dim() not in dims) or x.dim() < min_dims:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(x.shape)}")
    return x


def floating(name: str, x: Tensor) -> None:
    """A TypeError unless `x` holds floating-point numbers."""
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")


def boolean(name: str, mask: object, meaning: str = "True = may attend") -> Tensor:
    """`mask` as a boolean Tensor; a TypeError naming `meaning` otherwise."""
    if not isinstance(mask, Tensor):
        raise TypeError(
            f"{name} must be a boolean torch.Tensor ({meaning}), got {type(mask).__name__}"
        )
    if mask.dtype != torch.bool:
        raise TypeError(f"{name} must be boolean ({meaning}), got dtype {mask.dtype}")
    return mask
