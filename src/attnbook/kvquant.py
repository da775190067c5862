"""A quantised key/value cache: keys per channel, values per token (chapter 9; KIVI, Liu et
al. 2024).

b-bit asymmetric quantisation of a group of numbers x with minimum lo and maximum hi:

    scale = (hi - lo) / (2^b - 1)     code = round((x - lo) / scale) in 0 .. 2^b - 1
    x' = lo + code * scale            |x - x'| <= scale / 2   (half a quantisation step)

Keys have a few outlier *channels* (features large at every token), so a key's scale is
shared along the tokens of one channel (per channel, over groups of `group` tokens); values
have no such channels and are quantised per token (one scale per token and head). Codes are
packed two to a byte at 4 bits; scales and minima are stored in float32.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import floating, positive_int, tensor
from .multihead import KVCache

__all__ = [
    "BITS",
    "quantize",
    "dequantize",
    "pack_codes",
    "unpack_codes",
    "QuantizedKVCache",
]

BITS = (4, 8)


def _bits(bits: object) -> int:
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
    _bits(bits)
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
    """Store codes in as few bytes as they need: 8-bit codes as they are, 4-bit codes two to
    a byte along the last axis (even length): (..., d) -> (..., d / 2)."""
    if _bits(bits) == 8:
        return codes
    if codes.shape[-1] % 2:
        raise ValueError(
            f"4-bit codes are packed in pairs: the last axis must be even, got {tuple(codes.shape)}"
        )
    if codes.numel() and int(codes.max()) > 15:
        raise ValueError("4-bit codes must be in 0 .. 15")
    return codes[..., 0::2] | (codes[..., 1::2] << 4)


def unpack_codes(packed: Tensor, bits: int) -> Tensor:
    """The inverse of `pack_codes`."""
    if _bits(bits) == 8:
        return packed
    return torch.stack((packed & 15, packed >> 4), dim=-1).flatten(-2)


class QuantizedKVCache(KVCache):
    """A drop-in for `KVCache` that stores keys and values in `bits` bits (chapter 9).

    Values are quantised per token as they arrive. Keys are quantised per channel once a group
    of `group` tokens is complete; the newest, incomplete group stays in full precision (as in
    KIVI); `keys_per="token"` quantises keys per token instead, for comparison. `append` returns the dequantised keys and values, which attention reads; `nbytes`
    counts what the cache stores: packed codes, float32 scales and minima, the recent keys.
    """

    def __init__(self, bits: int, group: int = 32, keys_per: str = "channel") -> None:
        super().__init__()
        self.bits, self.group = _bits(bits), positive_int("group", group)
        if keys_per not in ("channel", "token"):
            raise ValueError(f"keys_per must be 'channel' or 'token', got {keys_per!r}")
        # "token": keys quantised like values (the layout KIVI avoids)
        self.keys_per = keys_per
        self.stored_bytes = 0  # codes, scales and minima of the quantised part
        self.k_recent: Tensor | None = None  # (B, H, < group, d), full precision
        # (B, H, T_done, d), dequantised (read by attention)
        self.k_done: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.v is None else self.v.shape[-2]

    @property
    def nbytes(self) -> int:
        recent = (
            0
            if self.k_recent is None
            else self.k_recent.numel() * self.k_recent.element_size()
        )
        return self.stored_bytes + recent

    def _store(self, x: Tensor, dim: int) -> Tensor:
        codes, scale, lo = quantize(x, self.bits, dim)
        packed = pack_codes(codes, self.bits)
        self.stored_bytes += (
            packed.numel() * packed.element_size()
            + 2 * scale.numel() * scale.element_size()
        )
        return dequantize(unpack_codes(packed, self.bits), scale, lo)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add k, v (B, H, T_new, d); return all keys and values so far as attention reads them."""
        tensor("k", k, "(B, H, T_new, d)", dims=(4,))
        tensor("v", v, "(B, H, T_new, d)", dims=(4,))
        if k.shape != v.shape:
            raise ValueError(
                f"k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}"
            )
        if self.v is not None and (
            self.v.shape[:2] != v.shape[:2] or self.v.shape[3] != v.shape[3]
        ):
            raise ValueError(
                f"k of shape {tuple(k.shape)} does not fit the cached keys: B, H and d must agree"
            )
        v_new = self._store(v, dim=-1)  # per token
        self.v = v_new if self.v is None else torch.cat([self.v, v_new], dim=-2)
        if self.keys_per == "token":  # no groups: every key at once, like the values
            k_new = self._store(k, dim=-1)
            self.k = k_new if self.k is None else torch.cat([self.k, k_new], dim=-2)
            return self.k, self.v
        recent = k if self.k_recent is None else torch.cat([self.k_recent, k], dim=-2)
        # a complete group: quantise it per channel
        while recent.shape[-2] >= self.group:
            done = self._store(recent[:, :, : self.group], dim=-2)
            self.k_done = (
                done if self.k_done is None else torch.cat([self.k_done, done], dim=-2)
            )
            recent = recent[:, :, self.group :]
        self.k_recent = recent
        parts = [t for t in (self.k_done, recent) if t is not None and t.shape[-2]]
        self.k = torch.cat(parts, dim=-2)
        return self.k, self.v
