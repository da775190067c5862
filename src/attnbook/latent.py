"""Multi-head latent attention: cache one small latent vector per token (chapter 9;
DeepSeek-AI 2024, DeepSeek-V2).

Per token x (d_model), the cache holds a latent c = x W_dkv (d_latent) and one rotated key
part k_r = RoPE(x W_kr) (d_rope) shared by all heads. Head h reads

    keys    [c U_h^T ; k_r]      U_h = W_uk's rows of head h   (d_head x d_latent)
    values  c V_h^T              V_h = W_uv's rows of head h
    queries [x W_q,h ; RoPE(x W_qr,h)],   scores scaled by 1 / sqrt(d_head + d_rope)

Rotary positions cannot pass through U_h (a rotation between q and U_h does not commute
with it), hence the separate, "decoupled" d_rope part. The content score is
q_h . (c U_h^T) = (q_h U_h) . c: the up-projection can be folded into the query ("absorbed"),
and attention runs over the latents themselves, never expanding keys per head; likewise the
weighted sum of values is (weights c) V_h^T.

Cache per token and layer: d_latent + d_rope numbers, against 2 x H_kv x d_head for MHA / GQA.

The tiny GPT with latent attention in every block is a config, not a separate model:
`GPT(GPTConfig(..., positions="rope", attention="mla", d_latent=..., rope_dims=d_rope))`
(`attnbook.config`); `rope_dims` without attention="mla" rotates only the first rope_dims
features of each multi-head attention head (partial RoPE, the fair MHA arm of chapter 9).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ._checks import positive_int, tensor
from .attention import attend
from .caches import KVCache, LatentCache, kv_cache_bytes
from .multihead import merge_heads, split_heads
from .positional import apply_rope

__all__ = [
    "LatentCache",
    "MultiHeadLatentAttention",
    "cache_numbers_per_token",
    "attention_flops",
    "KINDS",
]

KINDS = ("MHA", "GQA", "MQA", "MLA")


class MultiHeadLatentAttention(nn.Module):
    """Causal multi-head latent attention with decoupled RoPE (chapter 9): (B, T, d_model) ->
    (B, T, d_model). `absorbed=True` folds W_uk into the queries and W_uv after the weights.

    As `MultiHeadAttention`: `dropout` on the attention weights in training mode, and `bias`
    on the projections from and to d_model (W_q, W_qr, W_dkv, W_kr, W_o). The
    up-projections W_uk and W_uv never have one: a key bias adds the same number to all of
    a query's scores, which the softmax ignores, and a value bias adds a constant to each
    head's output (the weights sum to one), which W_o's bias can add already. Without
    them, W_uk and W_uv fold exactly into the absorbed form."""

    def __init__(
        self,
        d_model: int,
        n_head: int,
        d_latent: int,
        d_rope: int,
        d_head: int | None = None,
        bias: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        for name, value in (
            ("d_model", d_model),
            ("n_head", n_head),
            ("d_latent", d_latent),
            ("d_rope", d_rope),
        ):
            positive_int(name, value)
        if d_head is None:
            if d_model % n_head:
                raise ValueError(
                    f"d_model={d_model} is not divisible by n_head={n_head}; give d_head"
                )
            d_head = d_model // n_head
        positive_int("d_head", d_head)
        if d_rope % 2:
            raise ValueError(
                f"d_rope={d_rope} must be even: RoPE rotates feature pairs"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        self.d_model, self.n_head, self.d_head = d_model, n_head, d_head
        self.d_latent, self.d_rope = d_latent, d_rope
        self.dropout = dropout  # attention dropout, applied in training mode only
        self.W_q = nn.Linear(d_model, n_head * d_head, bias=bias)
        self.W_qr = nn.Linear(d_model, n_head * d_rope, bias=bias)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=bias)
        self.W_kr = nn.Linear(d_model, d_rope, bias=bias)
        self.W_uk = nn.Linear(d_latent, n_head * d_head, bias=False)
        self.W_uv = nn.Linear(d_latent, n_head * d_head, bias=False)
        self.W_o = nn.Linear(n_head * d_head, d_model, bias=bias)

    def forward(
        self,
        query: Tensor,
        mask: Tensor | None = None,
        *,
        is_causal: bool = True,
        need_weights: bool = False,
        kv_cache: KVCache | None = None,
        absorbed: bool = False,
        positions: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """query (B, T, d_model) -> ((B, T, d_model), the weights (B, H, T, T_k) with
        `need_weights`, else None). Causal self-attention only; `kv_cache` must be a
        `LatentCache` (`new_cache`; positions continue after the cached ones). The weights
        are those of both forms (the absorbed one computes the same scores), as
        `MultiHeadAttention` gives them: how the hooks read them (`attnbook.hooks`)."""
        tensor("query", query, f"(B, T, d_model={self.d_model})", dims=(3,))
        if query.shape[-1] != self.d_model:
            raise ValueError(
                f"query must be (B, T, d_model={self.d_model}), got {tuple(query.shape)}"
            )
        if mask is not None or not is_causal:
            raise ValueError(
                "MultiHeadLatentAttention is causal self-attention only: no mask, "
                "is_causal=True"
            )
        if kv_cache is not None and not isinstance(kv_cache, LatentCache):
            raise TypeError(
                f"kv_cache must be a LatentCache, got {type(kv_cache).__name__}"
            )
        seen = 0 if kv_cache is None else len(kv_cache)
        T = query.shape[1]
        if positions is None:
            positions = torch.arange(seen, seen + T, device=query.device)
        elif positions.dim() != 1:
            raise ValueError("MultiHeadLatentAttention takes positions (T,) only")
        c = self.W_dkv(query)  # (B, T, d_latent)
        # (B, T, d_rope), shared by the heads
        k_r = apply_rope(self.W_kr(query), positions)
        if kv_cache is not None:
            c, k_r = kv_cache.append(c, k_r)  # (B, T_k, ...)
        q = split_heads(self.W_q(query), self.n_head)  # (B, H, T, d_head)
        # (B, H, T, d_rope)
        q_r = apply_rope(split_heads(self.W_qr(query), self.n_head), positions)
        if absorbed:
            heads, weights = self._absorbed(q, q_r, c, k_r, need_weights)
        else:  # per-head keys [c U_h^T ; k_r] (B, H, T_k, dh + dr), values c V_h^T
            k = torch.cat(
                [
                    split_heads(self.W_uk(c), self.n_head),
                    k_r[:, None].expand(-1, self.n_head, -1, -1),
                ],
                dim=-1,
            )
            v = split_heads(self.W_uv(c), self.n_head)  # (B, H, T_k, d_head)
            # scores scaled by 1 / sqrt(dh + dr), the width of [q ; q_r]
            heads, weights = attend(
                torch.cat([q, q_r], dim=-1),
                k,
                v,
                is_causal=True,
                dropout_p=self._p(),
                need_weights=need_weights,
            )
        return self.W_o(merge_heads(heads)), weights

    def new_cache(self) -> LatentCache:
        """An empty cache of the kind this layer reads and fills (`kv_cache=`): a latent
        and a rotated key part per token."""
        return LatentCache()

    def _p(self) -> float:
        """The attention dropout of this call: `dropout` in training mode, else 0."""
        return self.dropout if self.training else 0.0

    def _absorbed(
        self, q: Tensor, q_r: Tensor, c: Tensor, k_r: Tensor, need_weights: bool
    ) -> tuple[Tensor, Tensor | None]:
        """Attention over the latents, as multi-query attention with one shared key
        [c ; k_r] (B, 1, T_k, d_latent + d_rope) and value c: q (B, H, T, dh) becomes
        [q U_h ; q_r] (B, H, T, d_latent + d_rope). Returns the heads (B, H, T, d_head)
        and, with `need_weights`, the weights (B, H, T, T_k)."""
        # (H, dh, d_latent)
        U = self.W_uk.weight.view(self.n_head, self.d_head, self.d_latent)
        V = self.W_uv.weight.view(self.n_head, self.d_head, self.d_latent)
        query = torch.cat([q @ U, q_r], dim=-1)  # (B, H, T, d_latent + d_rope)
        # `attend` scales by 1 / sqrt(d_latent + d_rope); the scores need 1 / sqrt(dh + dr)
        query = query * math.sqrt(query.shape[-1] / (self.d_head + self.d_rope))
        key = torch.cat([c, k_r], dim=-1)[:, None]  # (B, 1, T_k, d_latent + d_rope)
        # (B, H, T, d_latent)
        mixed, weights = attend(
            query,
            key,
            c[:, None],
            is_causal=True,
            dropout_p=self._p(),
            need_weights=need_weights,
        )
        return mixed @ V.transpose(-2, -1), weights  # (B, H, T, d_head)


def attention_flops(
    n_head: int,
    d_head: int,
    d_latent: int,
    d_rope: int,
    n_new: int,
    n_cached: int,
    *,
    absorbed: bool,
    d_model: int | None = None,
) -> int:
    """Floating-point operations (2 per multiply-add) of one `MultiHeadLatentAttention`
    layer on `n_new` tokens after `n_cached` cached ones, every query-key pair counted
    (causal masking skips up to half of them in prefill, in both forms) (chapter 9).

    Both forms project the new tokens (W_q, W_qr, W_dkv, W_kr, W_o; counted only if d_model
    is given). The explicit form up-projects all T_k = n_cached + n_new latents to keys and
    values (2 x 2 T_k d_latent H d_head) and attends over d_head + d_rope wide keys; the
    absorbed form folds U_h into each new query and V_h after the weights (2 x 2 n_new H
    d_head d_latent) and attends over d_latent + d_rope wide keys, d_latent wide values.
    """
    for name, value in (
        ("n_head", n_head),
        ("d_head", d_head),
        ("d_latent", d_latent),
        ("n_new", n_new),
    ):
        positive_int(name, value)
    positive_int("d_rope", d_rope, allow_zero=True)
    positive_int("n_cached", n_cached, allow_zero=True)
    H, T_q, T_k = n_head, n_new, n_cached + n_new
    if absorbed:
        projection = 2 * 2 * T_q * H * d_head * d_latent
        pairs = 2 * H * T_q * T_k * (d_latent + d_rope + d_latent)
    else:
        projection = 2 * 2 * T_k * d_latent * H * d_head
        pairs = 2 * H * T_q * T_k * (d_head + d_rope + d_head)
    own = 0
    if d_model is not None:
        positive_int("d_model", d_model)
        own = 2 * T_q * d_model * (2 * H * d_head + H * d_rope + d_latent + d_rope)
    return projection + pairs + own


def cache_numbers_per_token(
    kind: str,
    n_layer: int,
    n_head: int,
    d_head: int,
    *,
    n_kv_head: int | None = None,
    d_latent: int | None = None,
    d_rope: int | None = None,
) -> int:
    """Numbers the cache holds per token (multiply by the bytes per number), chapter 9:
    MHA 2 L H d_head, GQA 2 L H_kv d_head, MQA 2 L d_head, MLA L (d_latent + d_rope)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    for name, value in (("n_layer", n_layer), ("n_head", n_head), ("d_head", d_head)):
        positive_int(name, value)
    if kind == "MLA":
        if d_latent is None or d_rope is None:
            raise ValueError("kind='MLA' needs d_latent and d_rope")
        return n_layer * (
            positive_int("d_latent", d_latent)
            + positive_int("d_rope", d_rope, allow_zero=True)
        )
    heads = {"MHA": n_head, "MQA": 1}.get(kind)
    if heads is None:
        if n_kv_head is None:
            raise ValueError("kind='GQA' needs n_kv_head")
        heads = positive_int("n_kv_head", n_kv_head)
        if n_head % heads:
            raise ValueError(f"n_kv_head={heads} must divide n_head={n_head}")
    return kv_cache_bytes(1, n_layer, heads, d_head, 1)
