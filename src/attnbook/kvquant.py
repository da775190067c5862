"""Quantising keys and values: b-bit codes, their packing, and the two layouts KIVI compares
(chapter 9; KIVI, Liu et al. 2024).

b-bit asymmetric (min-max) quantisation of a group of numbers x with minimum lo and maximum hi:

    scale = (hi - lo) / (2^b - 1)     code = round((x - lo) / scale) in 0 .. 2^b - 1
    x' = lo + code * scale            |x - x'| <= scale / 2   (half a quantisation step)

Which numbers share a scale is the layout. Keys have a few outlier *channels* (features large
at every token), so KIVI shares a key's scale along the tokens of one channel (per channel, in
groups of G tokens); values have no such channels and are quantised per token (one scale per
token and head). Codes of b in {2, 4, 8} bits are packed along the last axis, 8 / b to a byte,
the first code in the lowest bits. The cache that stores them is
`attnbook.caches.QuantizedKVCache`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import floating, tensor

__all__ = [
    "BITS",
    "quantize",
    "dequantize",
    "pack_codes",
    "unpack_codes",
    "quantize_packed",
    "dequantize_packed",
]

BITS = (2, 4, 8)


def check_bits(bits: object) -> int:
    """`bits` if it is one of `BITS`, else a clear TypeError or ValueError."""
    if isinstance(bits, bool) or not isinstance(bits, int):
        raise TypeError(
            f"bits must be an int in {BITS}, got {type(bits).__name__} {bits!r}"
        )
    if bits not in BITS:
        raise ValueError(f"bits must be one of {BITS}, got {bits}")
    return bits


def quantize(x: Tensor, bits: int, dim: int) -> tuple[Tensor, Tensor, Tensor]:
    """Quantise `x` with one scale and minimum per slice along `dim` (chapter 9).

    dim=-2 on (..., T, d) keys: per channel (the reduction runs over tokens); dim=-1 on values:
    per token. Returns (codes uint8 shaped like x, scale, minimum), the last two with `dim`
    kept as size 1. A constant slice gets scale 1 and is reproduced exactly.
    """
    tensor("x", x, "(..., T, d)", min_dims=1)
    floating("x", x)
    check_bits(bits)
    if (
        isinstance(dim, bool)
        or not isinstance(dim, int)
        or not -x.dim() <= dim < x.dim()
    ):
        raise ValueError(f"dim must be an int in [-{x.dim()}, {x.dim()}), got {dim!r}")
    if x.shape[dim] == 0:
        raise ValueError(f"x has no entries along dim={dim}: shape {tuple(x.shape)}")
    levels = 2**bits - 1
    lo = x.amin(dim=dim, keepdim=True)
    scale = (x.amax(dim=dim, keepdim=True) - lo) / levels
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    codes = torch.round((x - lo) / scale).clamp(0, levels).to(torch.uint8)
    return codes, scale, lo


def dequantize(codes: Tensor, scale: Tensor, lo: Tensor) -> Tensor:
    """lo + codes * scale: the numbers `quantize` encoded (chapter 9), in scale's dtype."""
    tensor("codes", codes, "(..., T, d)", min_dims=1)
    if codes.dtype != torch.uint8:
        raise TypeError(f"codes must be uint8 (from quantize), got dtype {codes.dtype}")
    return lo + codes.to(scale.dtype) * scale


def pack_codes(codes: Tensor, bits: int) -> Tensor:
    """Store b-bit codes in as few bytes as they need, along the last axis (chapter 9):
    (..., d) uint8 -> (..., d * b / 8). The first code of each run of 8 / b sits in the
    lowest bits: byte = c0 | c1 << b | c2 << 2b | c3 << 3b. d must be a multiple of 8 / b."""
    tensor("codes", codes, "(..., d) uint8", min_dims=1)
    if codes.dtype != torch.uint8:
        raise TypeError(f"codes must be uint8 (from quantize), got dtype {codes.dtype}")
    per_byte = 8 // check_bits(bits)
    if codes.shape[-1] % per_byte:
        raise ValueError(
            f"{bits}-bit codes are packed {per_byte} to a byte: the last axis must be a "
            f"multiple of {per_byte}, got shape {tuple(codes.shape)}"
        )
    if codes.numel() and int(codes.max()) > 2**bits - 1:
        raise ValueError(f"{bits}-bit codes must be in 0 .. {2**bits - 1}")
    packed = codes[..., 0::per_byte].clone()
    for j in range(1, per_byte):
        packed |= codes[..., j::per_byte] << (j * bits)
    return packed


def unpack_codes(packed: Tensor, bits: int) -> Tensor:
    """The inverse of `pack_codes`: (..., d * b / 8) -> (..., d) codes in 0 .. 2^b - 1.

    Chapter 9.
    """
    tensor("packed", packed, "(..., d * b / 8) uint8", min_dims=1)
    if packed.dtype != torch.uint8:
        raise TypeError(
            f"packed must be uint8 (from pack_codes), got dtype {packed.dtype}"
        )
    per_byte = 8 // check_bits(bits)
    if per_byte == 1:
        return packed
    mask = 2**bits - 1
    runs = [(packed >> (j * bits)) & mask for j in range(per_byte)]
    return torch.stack(runs, dim=-1).flatten(-2)  # (..., d): c0 c1 c2 c3 of each byte


def quantize_packed(x: Tensor, bits: int, dim: int) -> tuple[Tensor, Tensor, Tensor]:
    """`quantize` then `pack_codes`: (packed codes, scale, minimum) as a cache stores them.

    Chapter 9.
    """
    codes, scale, lo = quantize(x, bits, dim)
    return pack_codes(codes, bits), scale, lo


def dequantize_packed(packed: Tensor, scale: Tensor, lo: Tensor, bits: int) -> Tensor:
    """The numbers behind packed codes (the inverse of `quantize_packed`, within half a
    step).

    Chapter 9.
    """
    return dequantize(unpack_codes(packed, bits), scale, lo)
