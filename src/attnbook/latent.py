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
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import positive_int, tensor
from .gpt import GPT, GPTConfig
from .gqa import kv_cache_bytes
from .multihead import KVCache, merge_heads, split_heads
from .positional import apply_rope

__all__ = [
    "LatentCache",
    "MultiHeadLatentAttention",
    "mla_gpt",
    "cache_numbers_per_token",
    "KINDS",
]

KINDS = ("MHA", "GQA", "MQA", "MLA")


class LatentCache(KVCache):
    """Latents c (B, T, d_latent) in `k` and rotated key parts (B, T, d_rope) in `v` (chapter 9);
    pass it wherever a `KVCache` goes into a model whose blocks use latent attention."""

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.shape[-2]

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add latents k (B, T_new, d_latent) and rope keys v (B, T_new, d_rope); return all."""
        tensor("latents", k, "(B, T_new, d_latent)", dims=(3,))
        tensor("rope keys", v, "(B, T_new, d_rope)", dims=(3,))
        if self.k is None or self.v is None:
            self.k, self.v = k, v
        else:
            self.k, self.v = (
                torch.cat([self.k, k], dim=-2),
                torch.cat([self.v, v], dim=-2),
            )
        return self.k, self.v


class MultiHeadLatentAttention(nn.Module):
    """Causal multi-head latent attention with decoupled RoPE (chapter 9): (B, T, d_model) ->
    (B, T, d_model). `absorbed=True` folds W_uk into the queries and W_uv after the weights."""

    def __init__(
        self,
        d_model: int,
        n_head: int,
        d_latent: int,
        d_rope: int,
        d_head: int | None = None,
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
        self.d_model, self.n_head, self.d_head = d_model, n_head, d_head
        self.d_latent, self.d_rope = d_latent, d_rope
        self.W_q = nn.Linear(d_model, n_head * d_head, bias=False)
        self.W_qr = nn.Linear(d_model, n_head * d_rope, bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, n_head * d_head, bias=False)
        self.W_uv = nn.Linear(d_latent, n_head * d_head, bias=False)
        self.W_o = nn.Linear(n_head * d_head, d_model, bias=False)

    def forward(
        self,
        query: Tensor,
        mask: Tensor | None = None,
        *,
        is_causal: bool = True,
        need_weights: bool = False,
        kv_cache: KVCache | None = None,
        absorbed: bool = False,
    ) -> tuple[Tensor, None]:
        """query (B, T, d_model) -> ((B, T, d_model), None). Causal self-attention only;
        `kv_cache` must be a `LatentCache` (positions continue after the cached ones)."""
        tensor("query", query, f"(B, T, d_model={self.d_model})", dims=(3,))
        if query.shape[-1] != self.d_model:
            raise ValueError(
                f"query must be (B, T, d_model={self.d_model}), got {tuple(query.shape)}"
            )
        if mask is not None or not is_causal or need_weights:
            raise ValueError(
                "MultiHeadLatentAttention is causal self-attention only: no mask, "
                "is_causal=True, need_weights=False"
            )
        if kv_cache is not None and not isinstance(kv_cache, LatentCache):
            raise TypeError(
                f"kv_cache must be a LatentCache, got {type(kv_cache).__name__}"
            )
        seen = 0 if kv_cache is None else len(kv_cache)
        T = query.shape[1]
        positions = torch.arange(seen, seen + T, device=query.device)
        c = self.W_dkv(query)  # (B, T, d_latent)
        # (B, T, d_rope), shared by the heads
        k_r = apply_rope(self.W_kr(query), positions)
        if kv_cache is not None:
            c, k_r = kv_cache.append(c, k_r)  # (B, T_k, ...)
        q = split_heads(self.W_q(query), self.n_head)  # (B, H, T, d_head)
        # (B, H, T, d_rope)
        q_r = apply_rope(split_heads(self.W_qr(query), self.n_head), positions)
        T_k = c.shape[1]
        causal = torch.ones(T, T_k, dtype=torch.bool, device=query.device).tril(T_k - T)
        scale = 1.0 / math.sqrt(self.d_head + self.d_rope)
        if absorbed:
            heads = self._absorbed(q, q_r, c, k_r, causal, scale)
        else:
            k = torch.cat(
                [
                    split_heads(self.W_uk(c), self.n_head),
                    # (B, H, T_k, dh + dr)
                    k_r[:, None].expand(-1, self.n_head, -1, -1),
                ],
                dim=-1,
            )
            v = split_heads(self.W_uv(c), self.n_head)  # (B, H, T_k, d_head)
            heads = F.scaled_dot_product_attention(
                torch.cat([q, q_r], dim=-1), k, v, attn_mask=causal, scale=scale
            )
        return self.W_o(merge_heads(heads)), None

    def _absorbed(
        self,
        q: Tensor,
        q_r: Tensor,
        c: Tensor,
        k_r: Tensor,
        causal: Tensor,
        scale: float,
    ) -> Tensor:
        """Attention over the latents: q (B, H, T, dh) -> (q U_h) (B, H, T, d_latent)."""
        # (H, dh, d_latent)
        U = self.W_uk.weight.view(self.n_head, self.d_head, self.d_latent)
        V = self.W_uv.weight.view(self.n_head, self.d_head, self.d_latent)
        q_lat = q @ U  # (B, H, T, d_latent)
        scores = (
            q_lat @ c[:, None].transpose(-2, -1) + q_r @ k_r[:, None].transpose(-2, -1)
        ) * scale
        # (B, H, T, T_k)
        weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        return (weights @ c[:, None]) @ V.transpose(-2, -1)  # (B, H, T, d_head)


def mla_gpt(config: GPTConfig, d_latent: int, d_rope: int) -> GPT:
    """The tiny GPT of chapter 6 with latent attention in every block (chapter 9); it
    carries positions in its decoupled RoPE part, so `config.positions` must be "none"."""
    if (
        config.positions != "none"
        or config.n_kv_head not in (None, config.n_head)
        or not config.causal
    ):
        raise ValueError(
            "mla_gpt needs a causal GPTConfig with positions='none' and n_kv_head=None: "
            "latent attention brings its own rotary part and shares no heads"
        )
    model = GPT(config)
    for block in model.blocks:
        block.attn = MultiHeadLatentAttention(
            config.n_embd, config.n_head, d_latent, d_rope
        )
        for name, p in block.attn.named_parameters():
            std = 0.02 / math.sqrt(2 * config.n_layer) if name == "W_o.weight" else 0.02
            nn.init.normal_(p, mean=0.0, std=std)
    return model


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
