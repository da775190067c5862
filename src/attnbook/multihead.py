"""Multi-head attention (chapter 3).

d_model is split into H heads of width d_k = d_model / H. One projection per role (W_q, W_k,
W_v, each d_model -> d_model) computes all heads at once; the result is reshaped so that heads
become a batch dimension, attention runs per head, and W_o mixes the concatenated heads:

    (B, T, d_model) -W_q-> (B, T, d_model) -split-> (B, H, T, d_k)
    attention per head  -> (B, H, T_q, d_k) -merge-> (B, T_q, d_model) -W_o-> (B, T_q, d_model)

Parameters: 4 d_model^2 (+ 4 d_model with biases), whatever H is.

The three input projections are stored as one matrix, `qkv_weight` (d_model + 2 kv_dim, d_model)
= [W_q; W_k; W_v] stacked by rows (kv_dim = n_kv_head * d_k, d_model without GQA), so that
self-attention projects queries, keys and values with one matrix product instead of three.
`W_q`, `W_k` and `W_v` remain: each is a `ProjectionRows`, its own rows of that matrix, which
computes and can be written exactly like the `nn.Linear` of chapter 3.

For decoding one token at a time (chapter 6), `forward` takes a `KVCache`: the keys and values
of earlier positions are kept, so each new token is projected once instead of recomputing the
whole prefix at every step. New tokens sit after the cached ones unless `positions` says
where each row's tokens sit (chapter 9's engine, whose cache holds sequences of different
lengths and supplies the mask that keeps each row to its own keys, `KVCache.mask`).

Chapter 8 adds two options: `n_kv_head` < n_head shares each key/value head among a group of
query heads (grouped-query attention, `attnbook.gqa`; W_k and W_v then map d_model to
n_kv_head * d_k and the cache holds only those heads), and `alibi=True` adds ALiBi's linear
distance penalty to the scores (causal attention only).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import positive_int, tensor
from .attention import attend
from .caches import KVCache  # the cache family lives in `caches` (chapter 9)
from .multihead_checks import checked_inputs
from .multihead_weights import (
    ProjectionRows,
    from_torch,
    init_as_separate_linears,
    to_torch,
)
from .positional import alibi_bias, apply_rope

__all__ = [
    "MultiHeadAttention",
    "ProjectionRows",
    "KVCache",
    "split_heads",
    "merge_heads",
]


def split_heads(x: Tensor, n_head: int) -> Tensor:
    """(B, T, d_model) -> (B, H, T, d_k): head h gets features h*d_k .. (h+1)*d_k - 1.

    Chapters 3, 5 and 6.
    """
    tensor("x", x, "(B, T, d_model)", dims=(3,))
    positive_int("n_head", n_head)
    if x.shape[-1] % n_head:
        raise ValueError(f"d_model={x.shape[-1]} is not divisible by n_head={n_head}")
    return _split(x, n_head)


def _split(x: Tensor, n_head: int) -> Tensor:
    """`split_heads` without the checks, for the layer's own (B, T, n_head * d_k) tensors."""
    B, T, D = x.shape
    return x.view(B, T, n_head, D // n_head).transpose(1, 2)  # (B, H, T, d_k)


def merge_heads(x: Tensor) -> Tensor:
    """(B, H, T, d_k) -> (B, T, H * d_k): the inverse of `split_heads`.

    Chapters 3 and 6.
    """
    tensor("x", x, "(B, H, T, d_k)", dims=(4,))
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_k)  # (B, T, d_model)


class MultiHeadAttention(nn.Module):
    """H attention heads in parallel, then an output projection W_o (chapter 3).

    `forward(query, key=None, value=None, mask=None)` is self-attention when `key` and `value`
    are None, cross-attention otherwise. Inputs are (B, T, d_model) (or unbatched (T, d_model));
    `mask` is boolean, True = may attend, shaped (T_q, T_k), (B, T_q or 1, T_k) or
    (B, H or 1, T_q or 1, T_k). Returns `(output, weights)`: (B, T_q, d_model) and
    (B, H, T_q, T_k). The tiny GPT's blocks call it as a module, `attn(x, ...)`, so that forward
    hooks read every call (`attnbook.hooks`); `self_attention(x, ...)` is that call.

    Options of later chapters: `rope` rotates queries and keys by their positions (chapter 5),
    `n_kv_head` key/value heads shared by groups of query heads and `alibi`, ALiBi's distance
    penalty on the scores (chapter 8), `dropout` on the attention weights in training,
    `rope_dims`: rotate only the first rope_dims features of each head (chapter 9).
    """

    def __init__(
        self,
        d_model: int,
        n_head: int,
        bias: bool = False,
        rope: bool = False,
        n_kv_head: int | None = None,
        alibi: bool = False,
        dropout: float = 0.0,
        rope_dims: int | None = None,
    ) -> None:
        super().__init__()
        n_kv_head = n_head if n_kv_head is None else n_kv_head
        for name, size in (
            ("d_model", d_model),
            ("n_head", n_head),
            ("n_kv_head", n_kv_head),
        ):
            positive_int(name, size)
        if n_head % n_kv_head:
            raise ValueError(
                f"n_head={n_head} is not divisible by n_kv_head={n_kv_head}: each "
                "key/value head serves a group of the same number of query heads"
            )
        if d_model % n_head:
            divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
            shown = f"{divisors[:8]}" + ("…" if len(divisors) > 8 else "")
            raise ValueError(
                f"d_model={d_model} is not divisible by n_head={n_head}: every head needs "
                f"the same width d_k = d_model / n_head (try n_head in {shown})"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        self.d_model, self.n_head, self.d_k, self.bias = (
            d_model,
            n_head,
            d_model // n_head,
            bias,
        )
        if rope and self.d_k % 2:
            raise ValueError(
                f"rope=True rotates feature pairs: d_k={self.d_k} must be even"
            )
        # rotate queries and keys by their positions (chapter 5's apply_rope)
        self.rope = rope
        # chapter 9: rotate only the first rope_dims features of each head (None: all d_k)
        if rope_dims is not None and (
            not rope or positive_int("rope_dims", rope_dims) % 2 or rope_dims > self.d_k
        ):
            raise ValueError(
                f"rope_dims={rope_dims} needs rope=True and an even width <= d_k={self.d_k}"
            )
        self.rope_dims = self.d_k if rope_dims is None else rope_dims
        self.n_kv_head, self.alibi = n_kv_head, bool(alibi)  # chapter 8
        self.dropout = dropout  # attention dropout, applied in training mode only
        kv_dim = n_kv_head * self.d_k
        # output widths of W_q, W_k, W_v: the row blocks of qkv_weight
        self.qkv_widths = (d_model, kv_dim, kv_dim)
        self.qkv_weight = nn.Parameter(torch.empty(d_model + 2 * kv_dim, d_model))
        self.qkv_bias = (
            nn.Parameter(torch.empty(d_model + 2 * kv_dim)) if bias else None
        )
        init_as_separate_linears(self)  # the numbers W_q, W_k, W_v drew as nn.Linear
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    @property
    def W_q(self) -> ProjectionRows:
        """The query projection d_model -> d_model: rows 0 .. d_model - 1 of qkv_weight."""
        return ProjectionRows(self, slice(0, self.d_model))

    @property
    def W_k(self) -> ProjectionRows:
        """The key projection d_model -> kv_dim: the next kv_dim rows of qkv_weight."""
        q, kv, _ = self.qkv_widths
        return ProjectionRows(self, slice(q, q + kv))

    @property
    def W_v(self) -> ProjectionRows:
        """The value projection d_model -> kv_dim: the last kv_dim rows of qkv_weight."""
        q, kv, _ = self.qkv_widths
        return ProjectionRows(self, slice(q + kv, q + 2 * kv))

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        need_weights: bool = True,
        kv_cache: KVCache | None = None,
        positions: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attention of `query` over `key`/`value` (default: `query` itself).

        is_causal: add the causal mask (query i sees keys up to its own position; with a
            `kv_cache` the queries are the last positions of the sequence).
        need_weights: False returns None for the weights and, without a `mask`, takes
            PyTorch's fused kernel, which never materialises them (`attention.attend`).
        kv_cache: keys/values of earlier positions; this call's are appended to it.
        positions: self-attention only, (T,) or (B, T): where the tokens sit, for the rotary
            positions (default: after the cached ones; chapter 9's engine gives each row its own).
        """
        fused = (key is None or key is query) and (value is None or value is query)
        if positions is not None and not fused:
            raise ValueError("positions= is for self-attention (key and value None)")
        query, key, value, mask, unbatched = checked_inputs(
            self.d_model,
            self.n_head,
            self.alibi,
            query,
            key,
            value,
            mask,
            is_causal,
            kv_cache,
        )
        if fused:  # self-attention: one product for queries, keys and values
            q, k, v = self._qkv(query)
        else:  # cross-attention: each role from its own input
            q = _split(self.W_q(query), self.n_head)  # (B, H, T_q, d_k)
            k = _split(self.W_k(key), self.n_kv_head)  # (B, H_kv, T_k, d_k)
            v = _split(self.W_v(value), self.n_kv_head)  # (B, H_kv, T_k, d_k)
        out, weights = self._attend(
            q, k, v, mask, is_causal, need_weights, kv_cache, positions
        )
        if unbatched:
            return out.squeeze(0), None if weights is None else weights.squeeze(0)
        return out, weights

    def self_attention(
        self, x: Tensor, mask: Tensor | None = None, **options: object
    ) -> tuple[Tensor, Tensor | None]:
        """`self(x, mask=mask, **options)`: self-attention of x (B, T, d_model), called as a
        module (forward hooks see it), with `forward`'s keyword options."""
        return self(x, mask=mask, **options)

    def _qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """x (B, T, d_model) -> q (B, H, T, d_k), k and v (B, H_kv, T, d_k): one product."""
        q, k, v = F.linear(x, self.qkv_weight, self.qkv_bias).split(self.qkv_widths, -1)
        H, H_kv = self.n_head, self.n_kv_head
        return _split(q, H), _split(k, H_kv), _split(v, H_kv)

    def _attend(
        self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        mask: Tensor | None,
        is_causal: bool,
        need_weights: bool,
        kv_cache: KVCache | None,
        positions: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Heads q (B, H, T_q, d_k), k, v (B, H_kv, T_k, d_k) -> rotated, cached, attended and
        mixed by W_o: (B, T_q, d_model), and the weights (B, H, T_q, T_k) or None."""
        if kv_cache is not None and kv_cache.keys_by_slot:
            # a streaming cache (chapter 9) keeps keys unrotated: each is rotated by its
            # slot in the cache, the queries by the last slots
            k, v = kv_cache.append(k, v)  # (B, H_kv, n, d_k)
            n, T = k.shape[-2], q.shape[-2]
            q = self.rotate(q, torch.arange(n - T, n, device=q.device))
            k = self.rotate(k, torch.arange(n, device=k.device))
        else:
            if positions is None and self.rope:  # after the cached positions
                seen = 0 if kv_cache is None else len(kv_cache)
                positions = torch.arange(seen, seen + q.shape[-2], device=q.device)
            if positions is not None:
                q, k = self.rotate(q, positions), self.rotate(k, positions)
            if kv_cache is not None:
                # (B, H_kv, T_seen + T_k, d_k): only the shared heads
                k, v = kv_cache.append(k, v)
                rows = kv_cache.mask(positions)  # a cache of several sequences' keys
                if rows is not None:  # (B, 1, T_q, T_k): each query's own keys
                    mask, is_causal = rows if mask is None else mask & rows, False
        # ALiBi (chapter 8): (H, T_q, T_k), -m_h x distance to each key, -inf on later keys
        bias = (
            alibi_bias(self.n_head, q.shape[-2], k.shape[-2], q.dtype, q.device)
            if self.alibi
            else None
        )
        heads, weights = attend(
            q,
            k,
            v,
            mask,
            is_causal=is_causal,
            bias=bias,
            dropout_p=self.dropout if self.training else 0.0,
            need_weights=need_weights,
        )  # (B, H, T_q, d_k)
        return self.W_o(merge_heads(heads)), weights  # (B, T_q, d_model)

    def new_cache(self) -> KVCache:
        """An empty cache of the kind this layer reads and fills (`kv_cache=`): keys and
        values per head (chapter 6)."""
        return KVCache()

    def rotate(self, x: Tensor, positions: Tensor) -> Tensor:
        """RoPE on the first `rope_dims` features of each head of x (B, H, T, d_k), positions
        (T,) or each row's own (B, T); the rest pass unrotated (partial rotary, chapter 9).
        Identity without `rope`."""
        if not self.rope:
            return x
        if positions.dim() == 2:  # every row's tokens in one line, rotated, put back
            B, H, T, d = x.shape
            flat = self.rotate(
                x.transpose(0, 1).reshape(H, B * T, d), positions.flatten()
            )
            return flat.reshape(H, B, T, d).transpose(0, 1)
        r = self.rope_dims
        if r == x.shape[-1]:
            return apply_rope(x, positions)
        return torch.cat([apply_rope(x[..., :r], positions), x[..., r:]], dim=-1)

    def extra_repr(self) -> str:
        rope = ", rope=True" if self.rope else ""
        if self.rope and self.rope_dims != self.d_k:
            rope += f", rope_dims={self.rope_dims}"
        drop = f", dropout={self.dropout}" if self.dropout else ""
        kv = f", n_kv_head={self.n_kv_head}" if self.n_kv_head != self.n_head else ""
        alibi = ", alibi=True" if self.alibi else ""
        head = f"d_model={self.d_model}, n_head={self.n_head}, d_k={self.d_k}, bias={self.bias}{rope}{kv}{alibi}{drop}"
        # the fused projection shown as the three layers it computes, as in chapter 3
        roles = "".join(f"\n({n}): {getattr(self, n)!r}" for n in ("W_q", "W_k", "W_v"))
        return head + roles

    # -- interoperability with torch.nn.MultiheadAttention (`multihead_weights`) -------------
    def to_torch(self) -> nn.MultiheadAttention:
        """A `nn.MultiheadAttention(batch_first=True)` computing the same function."""
        return to_torch(self)

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of a `nn.MultiheadAttention` (with equal q/k/v widths)."""
        ours = from_torch(lambda d, h, bias: cls(d, h, bias=bias), mha)
        return ours.to(mha.in_proj_weight.device)
