"""Boolean attention masks: causal, padding, and their combination (chapter 4); the banded
causal mask of sliding-window attention (chapter 8); masks by explicit positions, for blocks
of keys (chapter 8's blockwise attention) and ragged batches of sequences (chapter 9).

Convention everywhere in attnbook: a boolean mask broadcastable to (..., T_q, T_k) with
**True = may attend** (as `torch.nn.functional.scaled_dot_product_attention` reads it).
`torch.nn.MultiheadAttention` reads boolean masks the other way round (True = masked out):
use `to_torch_mha_mask` for it. Additive masks (0 = attend, -inf = blocked) convert with
`to_additive` / `from_additive`.

`from_additive` reads any value at or below `ADDITIVE_THRESHOLD` (-1e4) as blocked, so the
common finite conventions (-1e9, -1e4, `torch.finfo(dtype).min`) are understood as well as
-inf; a value strictly between the threshold and 0 is a soft bias, not a mask, and is an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ._checks import boolean, integer, positive_int, tensor

__all__ = [
    "causal_mask",
    "sliding_window_mask",
    "position_mask",
    "padding_mask",
    "padding_mask_from_lengths",
    "combine_masks",
    "to_additive",
    "from_additive",
    "to_torch_mha_mask",
    "ADDITIVE_THRESHOLD",
]

ADDITIVE_THRESHOLD = -1e4  # from_additive: a value <= this is "blocked"
_INTEGER_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def causal_mask(
    T: int, T_k: int | None = None, *, device: torch.device | str | None = None
) -> Tensor:
    """(T, T) lower-triangular boolean mask: query i may attend to keys 0..i (chapter 4).

    With `T_k` >= T keys (decoding with a key/value cache, chapter 6) the T queries are the
    last T of T_k positions: (T, T_k), query i may attend to keys 0 .. T_k - T + i (the band
    aligned bottom-right; `F.scaled_dot_product_attention(is_causal=True)` aligns it top-left).
    """
    positive_int("T", T)
    T_k = T if T_k is None else positive_int("T_k", T_k)
    if T > T_k:
        raise ValueError(
            f"T={T} queries cannot be the last positions of T_k={T_k} keys"
        )
    return torch.ones(T, T_k, dtype=torch.bool, device=device).tril(T_k - T)  # (T, T_k)


def sliding_window_mask(
    T: int, window: int, device: torch.device | str | None = None
) -> Tensor:
    """(T, T) banded causal mask (chapter 8): query i may attend to keys i-window+1 .. i, the
    `window` most recent positions, itself included. window >= T gives `causal_mask(T)`."""
    positive_int("T", T)
    positive_int("window", window)
    causal = causal_mask(T, device=device)  # (T, T)
    return causal & ~causal.tril(-window)  # (T, T): drop keys `window` or more behind


def position_mask(pos_q: Tensor, pos_k: Tensor, window: int | None = None) -> Tensor:
    """(..., T_q, T_k) causal mask by positions: the query at position pos_q[..., i] may attend
    to the key at pos_k[..., j] when pos_k <= pos_q (and, with a `window`, pos_k > pos_q -
    window: the `window` most recent positions). pos_q: (..., T_q), pos_k: (..., T_k), integer,
    broadcastable in their leading dims. For one block of a long sequence (blockwise attention,
    chapter 8) or a batch of sequences of different lengths, each row's queries at its own
    positions (chapter 9); with pos_q = T_k - T + arange(T) and pos_k = arange(T_k) it is
    `causal_mask(T, T_k)`."""
    for name, pos in (("pos_q", pos_q), ("pos_k", pos_k)):
        tensor(name, pos, "(..., T) integer positions", min_dims=1)
        if pos.dtype not in _INTEGER_DTYPES:
            raise TypeError(
                f"{name} must hold integer positions, got dtype {pos.dtype}"
            )
    try:
        torch.broadcast_shapes(pos_q.shape[:-1], pos_k.shape[:-1])
    except RuntimeError:
        raise ValueError(
            f"the leading dims of pos_q {tuple(pos_q.shape)} and pos_k "
            f"{tuple(pos_k.shape)} do not broadcast together"
        ) from None
    allowed = pos_k.unsqueeze(-2) <= pos_q.unsqueeze(-1)  # (..., T_q, T_k)
    if window is not None:
        positive_int("window", window)
        allowed = allowed & (pos_k.unsqueeze(-2) > pos_q.unsqueeze(-1) - window)
    return allowed


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Key mask (B, 1, T) from token ids (B, T): True where the token is not padding.
    The package's one padding-mask shape: it broadcasts over the queries (chapters 4, 7)."""
    tensor("tokens", tokens, "(B, T) tensor of ids", dims=(2,))
    if (
        tokens.dtype.is_floating_point
        or tokens.dtype.is_complex
        or tokens.dtype == torch.bool
    ):
        raise TypeError(f"tokens must hold integer ids, got dtype {tokens.dtype}")
    integer("pad_id", pad_id)
    return (tokens != pad_id).unsqueeze(1)  # (B, 1, T): broadcasts over the queries


def padding_mask_from_lengths(
    lengths: Sequence[int] | Tensor, max_len: int | None = None
) -> Tensor:
    """Key mask (B, 1, T) from sequence lengths: True for the first `lengths[b]` positions
    (chapter 4)."""
    try:
        lengths = torch.as_tensor(lengths)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"lengths must be a 1-D sequence of ints, got {lengths!r}"
        ) from None
    if (
        lengths.dim() != 1
        or lengths.dtype.is_floating_point
        or lengths.dtype == torch.bool
    ):
        raise ValueError(
            f"lengths must be a 1-D sequence of ints, got {lengths.tolist()!r}"
        )
    if (lengths < 0).any():
        raise ValueError(f"lengths must be non-negative, got {lengths.tolist()}")
    longest = int(lengths.max()) if len(lengths) else 0
    max_len = (
        longest
        if max_len is None
        else positive_int("max_len", max_len, allow_zero=True)
    )
    if longest > max_len:
        raise ValueError(f"a length of {longest} does not fit in max_len={max_len}")
    positions = torch.arange(max_len, device=lengths.device)  # (T,)
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)  # (B, 1, T)


def combine_masks(*masks: Tensor | None) -> Tensor | None:
    """Logical AND of boolean masks (None is ignored), broadcast together (chapter 4).

    For example a causal mask (T, T) and a padding mask (B, 1, T) give (B, T, T): query i of
    sequence b may attend to key j only if j <= i and j is a real token.
    """
    present = [boolean(f"masks[{i}]", m) for i, m in enumerate(masks) if m is not None]
    if not present:
        return None
    try:
        shape = torch.broadcast_shapes(*(m.shape for m in present))
    except RuntimeError:
        raise ValueError(
            f"masks of shapes {[tuple(m.shape) for m in present]} do not broadcast together"
        ) from None
    out = torch.ones(shape, dtype=torch.bool, device=present[0].device)
    for m in present:
        out = out & m
    return out


def to_additive(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Boolean mask (True = may attend) -> additive mask: 0.0 where allowed, -inf where not
    (chapter 4)."""
    boolean("mask", mask)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"dtype must be a floating-point torch.dtype (-inf needs one), got {dtype!r}"
        )
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
        ~mask, float("-inf")
    )


def from_additive(additive: Tensor, threshold: float = ADDITIVE_THRESHOLD) -> Tensor:
    """Additive mask -> boolean mask (True = may attend; chapter 4).

    0 means "attend"; any value at or below `threshold` (default -1e4) means "blocked", so
    -inf, -1e9 and `torch.finfo(dtype).min` all read as blocked. Anything else (a value between
    the threshold and 0, a positive value, NaN) is a soft bias rather than a mask: ValueError.
    """
    if not isinstance(additive, Tensor) or not additive.dtype.is_floating_point:
        got = (
            additive.dtype if isinstance(additive, Tensor) else type(additive).__name__
        )
        raise TypeError(
            f"additive must be a floating-point tensor (0 = attend, -inf = blocked), got {got}"
        )
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not threshold < 0
    ):
        raise ValueError(f"threshold must be a negative number, got {threshold!r}")
    if torch.isnan(additive).any():
        raise ValueError(
            "additive must not hold NaN: 0 = attend, <= threshold = blocked"
        )
    blocked = additive <= threshold
    soft = ~blocked & (additive != 0)  # positive values and +inf land here too
    if soft.any():
        bad = additive[soft][0].item()
        raise ValueError(
            f"additive must hold 0 (attend) or values <= threshold={threshold:g} (blocked); "
            f"found {bad!r}, a soft bias rather than a mask"
        )
    return ~blocked


def to_torch_mha_mask(mask: Tensor) -> Tensor:
    """attnbook's boolean mask -> the boolean `attn_mask` of `nn.MultiheadAttention`,
    where True means *masked out*: the same information, inverted (chapter 4)."""
    boolean("mask", mask)
    return ~mask
