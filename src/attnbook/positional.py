"""Positional information: sinusoidal encodings, learned embeddings and RoPE (chapter 5);
ALiBi's linear distance penalty (chapter 8).

Self-attention alone is permutation-equivariant; adding a position vector p_i to each token
x_i (x'_i = x_i + p_i) lets it tell "the shark bit the person" from "the person bit the shark".

    PE(pos, 2i)   = sin(pos / base^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / base^(2i / d_model))       base = 10000
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ._checks import floating, positive_float, positive_int, tensor
from .device import float64_device
from .masks import causal_mask

__all__ = [
    "sinusoidal_encoding",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
    "POSITIONS",
    "position_embedding",
    "embed_tokens",
    "apply_rope",
    "alibi_slopes",
    "alibi_bias",
]

#: The package's one vocabulary of position schemes (chapters 5 and 8): "learned" and
#: "sinusoidal" add a vector to each token's (`embed_tokens`), "rope" rotates queries and keys
#: and "alibi" penalises the scores inside attention, "none" gives no position at all.
POSITIONS = ("learned", "sinusoidal", "rope", "alibi", "none")


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    """(seq_len, d_model) float32 table; even columns sin, odd columns cos (odd d_model: the
    last column is a sin with no cos partner). Chapter 5."""
    positive_int("seq_len", seq_len)
    positive_int("d_model", d_model)
    positive_float("base", base)
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]  # (seq_len, 1)
    # (ceil(d/2),) = 0, 2, 4, ...
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = pos / base ** (two_i / d_model)  # (seq_len, ceil(d/2))
    pe = torch.zeros(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return pe.float()


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to (B, T, d_model) inputs; T may not exceed max_len
    (chapter 5)."""

    pe: Tensor  # (max_len, d_model), a buffer

    def __init__(self, max_len: int, d_model: int, base: float = 10000.0) -> None:
        super().__init__()
        self.max_len, self.d_model = (
            positive_int("max_len", max_len),
            positive_int("d_model", d_model),
        )
        self.register_buffer(
            "pe", sinusoidal_encoding(max_len, d_model, base), persistent=False
        )

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x: (B, T, d_model); positions offset .. offset+T-1 (offset > 0 when decoding with a cache)."""
        _check_x(x, self.d_model)
        positive_int("offset", offset, allow_zero=True)
        T = x.shape[-2]
        if offset + T > self.max_len:
            raise ValueError(
                f"sequence length {offset + T} is longer than max_len={self.max_len}"
            )
        return x + self.pe[offset : offset + T].to(x.dtype)  # (B, T, d_model)


class LearnedPositionalEmbedding(nn.Module):
    """One trained vector per position, `nn.Embedding(max_len, d_model)`, added to the input.
    Positions beyond max_len have no vector: a longer input is an error, not a silent wrap.
    Chapter 5 (and chapter 6's GPT, `positions="learned"`)."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len, self.d_model = (
            positive_int("max_len", max_len),
            positive_int("d_model", d_model),
        )
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x: (B, T, d_model); positions offset .. offset+T-1 (offset > 0 when decoding with a cache)."""
        _check_x(x, self.d_model)
        positive_int("offset", offset, allow_zero=True)
        T = x.shape[-2]
        if offset + T > self.max_len:
            raise ValueError(
                f"positions up to {offset + T - 1} requested but the model was built "
                f"with max_len={self.max_len} (the longest sequence it can take)"
            )
        positions = torch.arange(offset, offset + T, device=x.device)  # (T,)
        return x + self.embedding(positions)  # (B, T, d_model)


def position_embedding(
    positions: str, max_len: int, d_model: int
) -> LearnedPositionalEmbedding | SinusoidalPositionalEncoding | None:
    """The module that adds position vectors under scheme `positions` (one of `POSITIONS`):
    a `LearnedPositionalEmbedding`, a `SinusoidalPositionalEncoding`, or None for the schemes
    that add nothing to the token vectors (chapter 5)."""
    if positions not in POSITIONS:
        raise ValueError(f"positions must be one of {POSITIONS}, got {positions!r}")
    if positions == "learned":
        return LearnedPositionalEmbedding(max_len, d_model)
    if positions == "sinusoidal":
        return SinusoidalPositionalEncoding(max_len, d_model)
    return None


def embed_tokens(
    token: nn.Embedding,
    position: nn.Module | None,
    ids: Tensor,
    offset: int = 0,
    scale: float | None = None,
) -> Tensor:
    """The front end of the tiny GPT (chapter 6) and of the car classifier (chapter 7):
    token ids (B, T) -> token vectors (B, T, d_model), multiplied by `scale` if given, plus
    the vectors of positions offset .. offset+T-1 if `position` (`position_embedding`) adds
    any. "sinusoidal" always means the fixed table added; scaling is this separate option."""
    x = token(ids)  # (B, T, d_model)
    if scale is not None:
        x = x * scale
    return x if position is None else position(x, offset=offset)  # (B, T, d_model)


def _check_x(x: Tensor, d_model: int) -> None:
    tensor("x", x, f"(..., T, d_model={d_model})", min_dims=2)
    if x.shape[-1] != d_model:
        raise ValueError(
            f"x must have shape (..., T, d_model={d_model}), got {tuple(x.shape)}"
        )


def apply_rope(
    x: Tensor, positions: Tensor | None = None, base: float = 10000.0
) -> Tensor:
    """Rotary position embedding: rotate each feature pair (2i, 2i+1) of the token at position
    p by the angle p * base^(-2i/d). x: (..., T, d) with even d; positions: (T,) (default 0..T-1).
    Applied to queries and keys, it makes q_m . k_n depend on m - n only. Neighbouring pairs
    are RoFormer's and Meta's LLaMA layout; GPT-NeoX and Hugging Face pair the halves
    (i, i + d/2), the same rotation up to a reordering of the features (chapter 5)."""
    tensor("x", x, "(..., T, d) with even d", min_dims=2)
    floating("x", x)
    d = x.shape[-1]
    if d % 2 or d == 0:
        raise ValueError(
            f"RoPE rotates feature pairs: the last dimension of x must be even and > 0, "
            f"got shape {tuple(x.shape)}"
        )
    positive_float("base", base)
    T = x.shape[-2]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    tensor(
        "positions", positions, f"(T,) = ({T},), one position per token of x", dims=(1,)
    )
    if positions.shape[0] != T:
        raise ValueError(
            f"positions must have shape (T,) = ({T},), one position per token of x "
            f"{tuple(x.shape)}; got {tuple(positions.shape)}"
        )
    if positions.dtype == torch.bool or positions.dtype.is_complex:
        raise TypeError(
            f"positions must be integers or real numbers, got dtype {positions.dtype}"
        )
    if positions.dtype.is_floating_point and not torch.isfinite(positions).all():
        raise ValueError("positions must be finite, got NaN or inf")
    work = float64_device(x.device)  # the angles in float64: the CPU's when MPS runs x
    two_i = torch.arange(0, d, 2, device=work, dtype=torch.float64)  # (d/2,)
    theta = base ** (-two_i / d)  # (d/2,)
    angles = positions.to(work, torch.float64)[:, None] * theta  # (T, d/2)
    cos = torch.cos(angles).to(x.device, x.dtype)  # (T, d/2)
    sin = torch.sin(angles).to(x.device, x.dtype)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    rotated = torch.stack(
        (x_even * cos - x_odd * sin, x_even * sin + x_odd * cos), dim=-1
    )
    return rotated.flatten(-2)  # (..., T, d): pairs interleaved back


def alibi_slopes(n_head: int) -> Tensor:
    """(n_head,) float64 slopes of ALiBi (chapter 8): for H a power of two, head h = 1..H
    gets 2^(-8h/H), a geometric sequence from 2^(-8/H) down to 2^-8. For other H, the slopes
    of the power of two P just below H, then every other slope of 2P, as the ALiBi paper does."""
    positive_int("n_head", n_head)
    P = 2 ** int(math.floor(math.log2(n_head)))

    def powers(n: int) -> Tensor:
        return 2.0 ** (-8.0 * torch.arange(1, n + 1, dtype=torch.float64) / n)

    extra = powers(2 * P)[0::2][: n_head - P]  # empty when H is a power of two
    return torch.cat([powers(P), extra])


def alibi_bias(
    n_head: int,
    T_q: int,
    T_k: int | None = None,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Tensor:
    """(n_head, T_q, T_k) additive causal bias of ALiBi (chapter 8): -m_h (i - j) for a key j
    at or before query i, -inf after it. The queries are the last T_q of T_k positions
    (T_k defaults to T_q), so query i sits at position T_k - T_q + i, as with a KV cache."""
    positive_int("T_q", T_q)
    T_k = T_q if T_k is None else positive_int("T_k", T_k)
    if T_q > T_k:
        raise ValueError(
            f"T_q={T_q} queries cannot be the last positions of T_k={T_k} keys"
        )
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    work = float64_device(device)  # built in float64: on the CPU when the target is MPS
    pos_q = torch.arange(T_k - T_q, T_k, device=work)[:, None]  # (T_q, 1)
    pos_k = torch.arange(T_k, device=work)[None, :]  # (1, T_k)
    distance = (pos_q - pos_k).to(torch.float64)  # (T_q, T_k): i - j
    # (H, T_q, T_k), no -0.0
    bias = -alibi_slopes(n_head).to(work)[:, None, None] * distance + 0.0
    bias = bias.masked_fill(~causal_mask(T_q, T_k, device=work), float("-inf"))
    return bias.to(device=device, dtype=dtype)
