"""The key/value cache family: what a decoder keeps of the tokens it has read (chapters 6-9;
chapter 11 compares its bytes with a fixed-size state).

    KVCache            keys and values as they are, each (B, H, T, d) (chapter 6)
    QuantizedKVCache   b-bit codes packed in bytes, dequantised on read (chapter 9, KIVI)
    Float8KVCache      keys and values cast to float8 e4m3, widened on read (chapter 9)
    StreamingCache     at most `capacity` tokens: the first `sinks` and the newest (chapter 9)
    LatentCache        one latent and one rotary key per token, for latent attention (ch. 9)

Each `append`s the new tokens and returns what attention reads; `nbytes` adds up the `.nbytes`
of the tensors the cache holds (`tensors()`), so it is measured, never computed by formula;
`kv_cache_bytes` is the formula a plain cache must meet (chapters 6 and 8). A cache may also
say which keys each query reads (`mask`, for a cache holding several sequences) and that its
keys are rotated by their slot (`keys_by_slot`). `attnbook.paged.PagedKVCache` and
`PagedBatchCache` (chapter 9) are members too, kept in their own module.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor

from ._checks import positive_int, tensor
from .kvquant import check_bits, dequantize_packed, quantize_packed

__all__ = [
    "kv_cache_bytes",
    "KVCache",
    "QuantizedKVCache",
    "Float8KVCache",
    "StreamingCache",
    "LatentCache",
]


def kv_cache_bytes(
    n_tokens: int,
    n_layer: int,
    n_kv_head: int,
    d_head: int,
    bytes_per_number: int,
    batch_size: int = 1,
) -> int:
    """Bytes the key/value cache holds after `n_tokens` tokens of `batch_size` sequences:
    2 x n_layer x n_kv_head x d_head x bytes_per_number per token (2 = keys and values).
    The package's one formula for it (chapters 6 and 8, where n_kv_head < n_head shrinks it);
    `KVCache.nbytes` measures a real cache."""
    for name, value in (
        ("n_layer", n_layer),
        ("n_kv_head", n_kv_head),
        ("d_head", d_head),
        ("bytes_per_number", bytes_per_number),
        ("batch_size", batch_size),
    ):
        positive_int(name, value)
    positive_int("n_tokens", n_tokens, allow_zero=True)
    return 2 * n_layer * n_kv_head * d_head * bytes_per_number * n_tokens * batch_size


@dataclass
class KVCache:
    """Keys and values of the positions seen so far, each (B, H, T_seen, d_k) (chapter 6)."""

    k: Tensor | None = None
    v: Tensor | None = None
    #: True: keys are stored unrotated and rotated by their slot when read (StreamingCache)
    keys_by_slot: ClassVar[bool] = False

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.shape[-2]

    def held_after(self, new: int) -> int:
        """How many positions attention reads once `new` more are appended: what
        `GPT.forward` checks against block_size (a streaming cache evicts, so it counts
        its slots after eviction)."""
        return len(self) + new

    def tensors(self) -> Iterator[Tensor]:
        """The tensors the cache holds (what `nbytes` adds up)."""
        yield from (t for t in (self.k, self.v) if t is not None)

    @property
    def nbytes(self) -> int:
        """Bytes of the tensors the cache holds (chapter 8; `kv_cache_bytes` predicts it for
        the plain cache)."""
        return sum(t.nbytes for t in self.tensors())

    def mask(self, positions: Tensor | None) -> Tensor | None:
        """Which keys each new query at `positions` may read, (B, 1, T_q, T_k), for a cache
        whose rows are not one contiguous sequence each (chapter 9's paged batch); None here:
        the causal mask of the cached sequence is right."""
        return None

    def _check_new(self, k: Tensor, v: Tensor, held: Tensor | None = None) -> None:
        """k and v (B, H, T_new, d) of one shape, fitting `held` (default `self.v`), a
        tensor (B, H, T, d) the cache holds."""
        tensor("k", k, "(B, H, T_new, d_k)", dims=(4,))
        tensor("v", v, "(B, H, T_new, d_k)", dims=(4,))
        if k.shape != v.shape:
            raise ValueError(
                f"k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}"
            )
        held = self.v if held is None else held
        if held is not None and (
            held.shape[:2] != k.shape[:2] or held.shape[3] != k.shape[3]
        ):
            raise ValueError(
                f"k of shape {tuple(k.shape)} does not fit the cached keys "
                f"{tuple(held.shape)}: B, H and d_k must agree"
            )

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add the new positions' keys and values; return all keys and values so far."""
        self._check_new(k, v)
        if self.k is None or self.v is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=-2)  # (B, H, T_seen, d_k)
            self.v = torch.cat([self.v, v], dim=-2)
        return self.k, self.v


class QuantizedKVCache(KVCache):
    """Keys and values stored as packed `bits`-bit codes with float scales and minima,
    dequantised whenever attention reads them (chapter 9; KIVI).

    The newest tokens stay in full precision, as in KIVI: keys until `residual` (R, a
    multiple of the group G, default G) of them have gathered, which are then quantised in
    groups of G consecutive tokens, one scale and minimum per group, head and channel
    (`keys_per="channel"`, KIVI's layout) or per token and head (`keys_per="token"`, for
    comparison); values in a sliding window of the newest R, each older value quantised per
    token (one scale and minimum per token and head) as it leaves the window. Scales and
    minima keep the dtype of the keys and values (float32 in the chapter). `self.k`,
    `self.v` stay None: `nbytes` counts the codes, scales, minima and the full-precision
    tokens.
    """

    def __init__(
        self,
        bits: int,
        group: int = 32,
        keys_per: str = "channel",
        residual: int | None = None,
    ) -> None:
        super().__init__()
        self.bits, self.group = check_bits(bits), positive_int("group", group)
        if keys_per not in ("channel", "token"):
            raise ValueError(f"keys_per must be 'channel' or 'token', got {keys_per!r}")
        self.residual = (
            group if residual is None else positive_int("residual", residual)
        )
        if self.residual % group:
            raise ValueError(
                f"residual={self.residual} must be a multiple of group={group}: the full-"
                "precision keys are quantised in whole groups"
            )
        self.keys_per = keys_per
        self.length = 0
        # (codes, scales, minima) of the quantised keys: codes (B, H, T_q, d*b/8); scales and
        # minima per channel (B, H, T_q / group, 1, d), per token (B, H, T_q, 1)
        self.k_quantised: Quantised | None = None
        self.k_residual: Tensor | None = None  # (B, H, < R, d), full precision
        # (codes, scales, minima) of the older values: (B, H, T_v, d*b/8), (B, H, T_v, 1)
        self.v_quantised: Quantised | None = None
        self.v_residual: Tensor | None = None  # (B, H, <= R, d), full precision

    def __len__(self) -> int:
        return self.length

    def tensors(self) -> Iterator[Tensor]:
        parts = (self.k_quantised, self.v_quantised, (self.k_residual, self.v_residual))
        for part in parts:
            yield from (t for t in part or () if t is not None)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add k, v (B, H, T_new, d); return all keys and values so far as attention reads
        them, (B, H, T, d) each: dequantised codes, then the full-precision newest ones."""
        self._check_new(k, v, self.k_residual)
        per_byte = 8 // self.bits
        if k.shape[-1] % per_byte:
            raise ValueError(
                f"{self.bits}-bit codes are packed {per_byte} to a byte: the head width "
                f"d={k.shape[-1]} must be a multiple of {per_byte}"
            )
        R, G = self.residual, self.group
        recent = k if self.k_residual is None else torch.cat([self.k_residual, k], -2)
        while recent.shape[-2] >= R:  # R keys gathered: quantise them, group by group
            for start in range(0, R, G):
                self._store_keys(recent[:, :, start : start + G])
            recent = recent[:, :, R:]
        self.k_residual = recent
        values = v if self.v_residual is None else torch.cat([self.v_residual, v], -2)
        old = values.shape[-2] - R  # values leaving the window: quantised per token
        if old > 0:
            new = quantize_packed(values[:, :, :old], self.bits, -1)
            self.v_quantised = _extend(self.v_quantised, new)
        self.v_residual = values[:, :, max(old, 0) :]
        self.length += k.shape[-2]
        return self.read()

    def _store_keys(self, group: Tensor) -> None:
        """Quantise one complete group (B, H, group, d) of keys and append its codes."""
        if (
            self.keys_per == "channel"
        ):  # over the group's tokens: scales (B, H, 1, 1, d)
            codes, scale, lo = quantize_packed(group[:, :, None], self.bits, -2)
            codes = codes[:, :, 0]  # (B, H, group, d*b/8)
        else:  # over each token's channels: scales (B, H, group, 1)
            codes, scale, lo = quantize_packed(group, self.bits, -1)
        self.k_quantised = _extend(
            self.k_quantised,
            (codes, scale, lo),
            dim_scale=-3 if self.keys_per == "channel" else -2,
        )

    def read(self) -> tuple[Tensor, Tensor]:
        """All keys and values (B, H, T, d), dequantised (the newest as stored)."""
        assert self.k_residual is not None and self.v_residual is not None
        keys, values = self.k_residual, self.v_residual
        if self.v_quantised is not None:
            older = dequantize_packed(*self.v_quantised, self.bits)
            values = torch.cat([older, values], dim=-2)
        if self.k_quantised is None:
            return keys, values
        codes, scale, lo = self.k_quantised
        if (
            self.keys_per == "channel"
        ):  # codes by group: (B, H, T_q / group, group, d*b/8)
            B, H, T_q, _ = codes.shape
            codes = codes.reshape(B, H, T_q // self.group, self.group, -1)
        older = dequantize_packed(codes, scale, lo, self.bits)
        older = older.reshape(*keys.shape[:2], -1, older.shape[-1])
        return torch.cat([older, keys], dim=-2), values


Quantised = tuple[Tensor, Tensor, Tensor]


def _extend(held: Quantised | None, new: Quantised, dim_scale: int = -2) -> Quantised:
    """Codes (along tokens, dim -2) and their scales and minima (along `dim_scale`) with
    the new ones appended."""
    if held is None:
        return new
    return (
        torch.cat([held[0], new[0]], dim=-2),
        torch.cat([held[1], new[1]], dim=dim_scale),
        torch.cat([held[2], new[2]], dim=dim_scale),
    )


class Float8KVCache(KVCache):
    """Keys and values stored as float8 e4m3 (one byte per number, no scale: the tiny
    model's keys and values lie well inside its range of +-448), returned in the dtype they
    came in (chapter 9; what serving engines offer as an fp8 `kv_cache_dtype`)."""

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add k, v (B, H, T_new, d); return all keys and values so far, widened."""
        self._check_new(k, v)
        keys, values = super().append(
            k.to(torch.float8_e4m3fn), v.to(torch.float8_e4m3fn)
        )
        return keys.to(k.dtype), values.to(v.dtype)


class StreamingCache(KVCache):
    """At most `capacity` tokens of one layer's keys and values, (B, H_kv, n, d) each: beyond
    it the oldest tokens after the first `sinks` are evicted (chapter 9; StreamingLLM). The
    keys are stored unrotated; attention rotates each by its slot in the cache."""

    keys_by_slot: ClassVar[bool] = True

    def __init__(self, capacity: int, sinks: int = 0) -> None:
        super().__init__()
        positive_int("capacity", capacity)
        positive_int("sinks", sinks, allow_zero=True)
        if sinks >= capacity:
            raise ValueError(
                f"sinks={sinks} must be smaller than capacity={capacity}: the cache "
                "must keep room for recent tokens"
            )
        self.capacity, self.sinks = capacity, sinks

    def held_after(self, new: int) -> int:
        """At most `capacity`: the slots left after eviction."""
        return min(len(self) + new, self.capacity)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append k, v (B, H_kv, T_new, d), evict, return what is kept (B, H_kv, n, d)."""
        k, v = super().append(k, v)
        excess = len(self) - self.capacity
        if excess > 0:
            keep = torch.cat(
                [torch.arange(self.sinks), torch.arange(self.sinks + excess, len(self))]
            ).to(k.device)
            self.k, self.v = k[:, :, keep], v[:, :, keep]
        assert self.k is not None and self.v is not None
        return self.k, self.v


class LatentCache(KVCache):
    """Per token the latent c (B, T, d_latent) and the rotated key part k_rope (B, T, d_rope)
    shared by all heads, for `latent.MultiHeadLatentAttention` (chapter 9). It holds no
    per-head keys or values: `self.k`, `self.v` stay None."""

    def __init__(self) -> None:
        super().__init__()
        self.latent: Tensor | None = None
        self.k_rope: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.latent is None else self.latent.shape[-2]

    def tensors(self) -> Iterator[Tensor]:
        yield from (t for t in (self.latent, self.k_rope) if t is not None)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add latents k (B, T_new, d_latent) and rotated keys v (B, T_new, d_rope); return
        all of both so far."""
        tensor("latents", k, "(B, T_new, d_latent)", dims=(3,))
        tensor("rope keys", v, "(B, T_new, d_rope)", dims=(3,))
        if k.shape[:2] != v.shape[:2]:
            raise ValueError(
                f"latents {tuple(k.shape)} and rope keys {tuple(v.shape)} must have the "
                "same B and T_new"
            )
        if self.latent is None or self.k_rope is None:
            self.latent, self.k_rope = k, v
        else:
            self.latent = torch.cat([self.latent, k], dim=-2)
            self.k_rope = torch.cat([self.k_rope, v], dim=-2)
        return self.latent, self.k_rope
