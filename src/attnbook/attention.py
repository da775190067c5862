"""Scaled dot-product attention and a single self-attention layer (chapter 1).

Shapes follow the course's row-vector convention: tokens are rows, so a sequence of T tokens
of width d is a (T, d) matrix and a batch of them is (B, T, d). For queries Q (T_q, d_k),
keys K (T_k, d_k) and values V (T_k, d_v),

    weights = softmax(Q K^T / sqrt(d_k))   (T_q, T_k), each row sums to 1
    output  = weights V                    (T_q, d_v)

Entry (i, j) of ``weights`` is how much query i attends to key j. `attention_from_scores` runs
the same softmax and weighted sum on scores computed another way (chapter 1's additive score).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import floating, positive_int, tensor
from .attention_checks import check_inputs, check_mask
from .masks import causal_mask

__all__ = [
    "scaled_dot_product_attention",
    "attention_from_scores",
    "attend",
    "repeat_kv",
    "SelfAttention",
    "row_entropy",
]


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Attention of queries ``q`` over keys ``k`` and values ``v`` (derived in chapter 1).

    Args:
        q: queries, shape (..., T_q, d_k).
        k: keys, shape (..., T_k, d_k).
        v: values, shape (..., T_k, d_v).
        mask: optional boolean tensor broadcastable to (..., T_q, T_k); ``True`` means
            "query i may attend to key j" (the convention of
            ``torch.nn.functional.scaled_dot_product_attention``).

    Returns:
        ``(output, weights)`` with shapes (..., T_q, d_v) and (..., T_q, T_k). Rows of
        ``weights`` sum to 1, except a query whose keys are all masked: its weights and its
        output are exactly zero (never NaN).
    """
    check_inputs(q, k, v, mask)
    return _explicit(q, k, v, mask, None, 0.0)


def attention_from_scores(
    scores: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """The softmax and weighted sum of `scaled_dot_product_attention`, on scores computed
    some other way, e.g. chapter 1's additive (Bahdanau) score.

    Args:
        scores: (..., T_q, T_k), entry (i, j) the score of query i for key j, already scaled
            as wanted (nothing is divided here); -inf blocks a key.
        v: values, shape (..., T_k, d_v).
        mask: optional boolean tensor broadcastable to (..., T_q, T_k), True = may attend.

    Returns:
        ``(output, weights)`` with shapes (..., T_q, d_v) and (..., T_q, T_k), as
        `scaled_dot_product_attention` returns them: a query with no key left gets zeros.
    """
    for name, t in (("scores", scores), ("v", v)):
        tensor(
            name,
            t,
            "(..., T_q, T_k)" if name == "scores" else "(..., T_k, d_v)",
            min_dims=2,
        )
        floating(name, t)
    if scores.dtype != v.dtype:
        raise TypeError(
            f"scores and v must have the same dtype, got {scores.dtype} and {v.dtype}"
        )
    if scores.shape[-1] != v.shape[-2] or v.shape[-2] == 0:
        raise ValueError(
            f"scores need one column per key and v one row per key (T_k >= 1): scores "
            f"{tuple(scores.shape)} has {scores.shape[-1]}, v {tuple(v.shape)} has {v.shape[-2]}"
        )
    try:
        batch = torch.broadcast_shapes(scores.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the leading (batch) dimensions of scores {tuple(scores.shape)} and "
            f"v {tuple(v.shape)} do not broadcast together"
        ) from None
    if torch.isnan(scores).any() or torch.isposinf(scores).any():
        raise ValueError(
            "scores must be finite numbers or -inf (a blocked key), got NaN or +inf"
        )
    check_mask(mask, tuple(batch), scores.shape[-2], scores.shape[-1])
    return _weigh(scores, v, mask, 0.0, guard=True)


def _explicit(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    bias: Tensor | None,
    dropout_p: float,
) -> tuple[Tensor, Tensor]:
    """softmax(q k^T / sqrt(d_k) + bias, masked) v with its weights (through `_weigh`).
    A query row whose keys are all blocked gets weights and output exactly 0."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if bias is not None:
        # additive: ALiBi's distance penalty (chapter 8), -inf = blocked
        scores = scores + bias
    return _weigh(
        scores, v, mask, dropout_p, guard=mask is not None or bias is not None
    )


def _weigh(
    scores: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float, guard: bool
) -> tuple[Tensor, Tensor]:
    """softmax(scores, masked) v with its weights: the one masked softmax and weighted sum.
    guard: a row may have no key left (a mask, or -inf scores); it gets weights and output 0."""
    if not guard:
        weights = torch.softmax(scores, dim=-1)  # softmax subtracts the row max: stable
    else:
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        # False: a fully blocked row
        has_key = scores.amax(dim=-1, keepdim=True) > float("-inf")
        # A row of only -inf would give 0/0 = NaN; give it finite scores, then zero its weights.
        scores = scores.masked_fill(~has_key, 0.0)
        # (..., T_q, T_k)
        weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
    if dropout_p > 0:
        weights = torch.nn.functional.dropout(weights, dropout_p)  # attention dropout
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def repeat_kv(x: Tensor, n_rep: int) -> Tensor:
    """(B, H_kv, T, d) -> (B, H_kv * n_rep, T, d): each key/value head repeated n_rep times in
    place, so that query head h of the result reads head h // n_rep of `x` (grouped-query
    attention, chapter 8; `attnbook.gqa` explains it, `attend` uses it)."""
    tensor("x", x, "(B, H_kv, T, d)", dims=(4,))
    positive_int("n_rep", n_rep)
    if n_rep == 1:
        return x
    B, H_kv, T, d = x.shape
    # (B, H_kv, n_rep, T, d), no copy yet
    expanded = x[:, :, None].expand(B, H_kv, n_rep, T, d)
    return expanded.reshape(B, H_kv * n_rep, T, d)  # (B, H, T, d): heads 0 0 .. 1 1 ..


def _as_heads(x: Tensor, H: int) -> Tensor:
    """(B, H_kv, T, d) -> a view of shape (B, H, T, d), for shape checks only (x itself
    when H_kv == H: no view, so an ungrouped step dispatches no extra operator)."""
    if x.shape[1] == H:
        return x
    return x[:, :1].expand(x.shape[0], H, *x.shape[2:])


def _band(
    bias: Tensor | None, T_q: int, T_k: int, is_causal: bool, device: torch.device
) -> Tensor:
    """What the fused kernel gets as attn_mask: the bias, the bottom-right causal band as a
    boolean mask (a key/value cache), or the bias with the band's blocked cells at -inf.
    Only called with a bias, a causal band, or both."""
    if not is_causal:
        assert bias is not None
        return bias
    causal = causal_mask(T_q, T_k, device=device)  # (T_q, T_k), True = may attend
    return causal if bias is None else bias.masked_fill(~causal, float("-inf"))


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    is_causal: bool = False,
    bias: Tensor | None = None,
    dropout_p: float = 0.0,
    need_weights: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """The one softmax attention of the package's layers (chapters 1-11).

    q: (B, H, T_q, d_k); k, v: (B, H_kv, T_k, d_k) with H_kv dividing H (grouped-query
    attention, chapter 8: each key/value head serves H / H_kv query heads).
    mask: boolean, True = may attend, broadcastable to (B, H, T_q, T_k) (chapter 4).
    is_causal: the queries are the last T_q of the T_k positions (T_q < T_k when decoding
        with a key/value cache, chapter 6) and see no later key: `masks.causal_mask(T_q, T_k)`.
    bias: additive, broadcastable to (B, H, T_q, T_k), e.g. ALiBi's (chapter 8); -inf blocks.
    dropout_p: attention dropout on the weights (pass 0.0 in eval mode).
    need_weights: True computes the weights explicitly and returns them (B, H, T_q, T_k);
        False returns None and, without a `mask`, takes PyTorch's fused kernel (chapter 2),
        which never holds them (a `mask` keeps the explicit path: see below).
    A query whose keys are all blocked gets output 0, never NaN (forward and backward).
    """
    tensor("q", q, "(B, H, T_q, d_k)", dims=(4,))
    tensor("k", k, "(B, H_kv, T_k, d_k)", dims=(4,))
    tensor("v", v, "(B, H_kv, T_k, d_v)", dims=(4,))
    H, H_kv = q.shape[1], k.shape[1]
    if H_kv == 0:
        raise ValueError(
            f"k and v need at least one head (H_kv >= 1), got {tuple(k.shape)}"
        )
    if H % H_kv:
        raise ValueError(
            f"the {H} query heads cannot be split into groups over {H_kv} key/value "
            f"heads: H must be divisible by H_kv"
        )
    if v.shape[1] != H_kv:
        raise ValueError(
            f"k and v must have the same number of heads H_kv, got {H_kv} and {v.shape[1]}"
        )
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p!r}")
    n_rep = H // H_kv
    # checked as if each key/value head were repeated n_rep times (views: nothing copied)
    check_inputs(q, _as_heads(k, H), _as_heads(v, H), mask)
    T_q, T_k = q.shape[-2], k.shape[-2]
    if is_causal and T_q > T_k:
        raise ValueError(
            f"is_causal needs T_q <= T_k (the queries are the last positions), "
            f"got T_q={T_q}, T_k={T_k}"
        )
    # PyTorch's fused kernel (chapter 2) reads shared key/value heads in place (enable_gqa):
    # the outputs equal those of the repeated heads, without the copies
    gqa = n_rep > 1
    if not need_weights and mask is None:
        if bias is None and (not is_causal or T_q == T_k):
            # its own causal band is aligned top-left: ours only when T_q == T_k
            return F.scaled_dot_product_attention(
                q, k, v, dropout_p=dropout_p, is_causal=is_causal, enable_gqa=gqa
            ), None
        band = _band(bias, T_q, T_k, is_causal, q.device)  # bottom-right causal band
        if band.dtype == torch.bool or not torch.isneginf(band).all(dim=-1).any():
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=band, dropout_p=dropout_p, enable_gqa=gqa
            ), None
    # Explicit path: the weights are wanted, or a row may have no key left. Its guard gives
    # such a row zeros on every device and version (fused kernels have differed there).
    causal = causal_mask(T_q, T_k, device=q.device) if is_causal else None
    mask = causal if mask is None else mask if causal is None else mask & causal
    k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)  # (B, H, T_k, d)
    out, weights = _explicit(q, k, v, mask, bias, dropout_p)
    return out, weights if need_weights else None


class SelfAttention(nn.Module):
    """One head of self-attention: queries, keys and values all come from ``x`` (chapter 1).

    ``W_q``, ``W_k`` and ``W_v`` are ``nn.Linear(d_in, d_out)`` layers, so with the row-vector
    convention Q = x W_Q (``nn.Linear`` stores the transpose of W_Q as its ``weight``).
    """

    def __init__(self, d_in: int, d_out: int, bias: bool = False) -> None:
        super().__init__()
        positive_int("d_in", d_in)
        positive_int("d_out", d_out)
        self.d_in, self.d_out = d_in, d_out
        self.W_q = nn.Linear(d_in, d_out, bias=bias)
        self.W_k = nn.Linear(d_in, d_out, bias=bias)
        self.W_v = nn.Linear(d_in, d_out, bias=bias)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """x: (..., T, d_in) -> output (..., T, d_out), weights (..., T, T)."""
        if not isinstance(x, Tensor):
            raise TypeError(
                f"x must be a torch.Tensor of shape (..., T, d_in={self.d_in}), "
                f"got {type(x).__name__}"
            )
        if x.dim() < 2:
            raise ValueError(
                f"x must be a tensor of shape (..., T, d_in={self.d_in}), got {tuple(x.shape)}"
            )
        if x.shape[-1] != self.d_in:
            raise ValueError(
                f"x has {x.shape[-1]} features per token but this layer expects d_in={self.d_in} "
                f"(x shape {tuple(x.shape)})"
            )
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)  # each (..., T, d_out)
        return scaled_dot_product_attention(q, k, v, mask)

    def extra_repr(self) -> str:
        return f"d_in={self.d_in}, d_out={self.d_out}"


def row_entropy(weights: Tensor) -> Tensor:
    """Entropy of each row of attention weights as a fraction of a uniform row's (chapters 1-3).

    ``weights`` has shape (..., T_q, T_k) with rows that sum to 1; the result has shape
    (..., T_q), with 1 for a perfectly uniform row and 0 for a one-hot row. Zero weights
    contribute nothing (0 log 0 = 0), so masked keys are allowed. Needs T_k >= 2.
    """
    if not isinstance(weights, Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if weights.dim() < 2 or weights.shape[-1] < 2:
        raise ValueError(
            f"weights must have shape (..., T_q, T_k) with T_k >= 2, got {tuple(weights.shape)}"
        )
    if (weights < 0).any():
        raise ValueError("weights must be non-negative (rows of a softmax)")
    w = weights.double()
    logs = torch.where(w > 0, w.log(), torch.zeros_like(w))
    entropy = -(w * logs).sum(dim=-1)  # (..., T_q), in nats
    return (entropy / math.log(weights.shape[-1])).to(weights.dtype)
