"""A tiny GPT: a decoder-only transformer built from the course's own parts (chapter 6).

    tokens (B, T) -> token embedding + learned positions (B, T, C)
                  -> n_layer x [x + attn(LN(x)), x + mlp(LN(x))]   (pre-LayerNorm blocks)
                  -> LN -> linear head (tied to the token embedding) -> logits (B, T, vocab)

Attention is `attnbook.multihead.MultiHeadAttention` with `is_causal=True` (chapter 4); in
training it takes PyTorch's fused kernel (`need_weights=False`), which computes the same
function as the explicit path used to draw attention maps. Generation keeps a key/value cache
per layer and gives exactly the tokens of recomputing the whole prefix at every step.

Chapter 8's options: `n_kv_head` key/value heads shared by groups of query heads
(grouped-query attention; 1 = multi-query), and `positions` (`positional.POSITIONS`), what
tells the model where a token sits: "learned" (the default above), "sinusoidal" (chapter 5's
fixed table, added), "rope" (queries and keys rotated in every block), "alibi" (a linear
distance penalty on the scores) or "none". `scale_embeddings` multiplies the token embeddings
by sqrt(n_embd) before positions are added, as the original transformer does; by default
only with "sinusoidal" (the table's entries are of size 1, the embeddings start at 0.02).
`norm="rmsnorm"` and `mlp="swiglu"` build today's block instead of GPT-2's (`attnbook.layers`):
RMSNorm in place of every LayerNorm, a SwiGLU feed-forward layer of about the same size in
place of the GELU MLP. Chapter 9's: `rope_dims` (partial RoPE) and attention="mla" (multi-head
latent attention, `attnbook.latent`). The model is what its `GPTConfig` (`attnbook.config`)
says: `Block` builds the attention the config names, nothing is swapped afterwards.

Every block calls its attention layer as a module, `attn(x, ...)`, so forward hooks see each
call: `attention_maps` reads the weights that way (`attnbook.hooks`), as chapter 10 does.
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import positive_int
from .config import GPTConfig
from .hooks import attention_weights
from .latent import MultiHeadLatentAttention
from .layers import feed_forward, norm_layer
from .multihead import KVCache, MultiHeadAttention
from .positional import POSITIONS, embed_tokens, position_embedding
from .sampling import sample_next_token

__all__ = [
    "GPTConfig",
    "GPT",
    "Block",
    "attention_layer",
    "sample_next_token",
    "POSITIONS",
]


def attention_layer(config: GPTConfig) -> MultiHeadAttention | MultiHeadLatentAttention:
    """The attention layer `config` describes: multi-head attention (chapters 3-8; grouped
    with `n_kv_head`, rotary on `rope_dims` features with positions "rope", ALiBi) or, with
    attention="mla", multi-head latent attention (chapter 9)."""
    if config.attention == "mla":
        # GPTConfig.__post_init__ has checked that both are given
        assert config.d_latent is not None and config.rope_dims is not None
        return MultiHeadLatentAttention(
            config.n_embd,
            config.n_head,
            config.d_latent,
            config.rope_dims,
            bias=config.bias,
            dropout=config.dropout,  # on the attention weights
        )
    return MultiHeadAttention(
        config.n_embd,
        config.n_head,
        bias=config.bias,
        rope=config.positions == "rope",
        n_kv_head=config.n_kv_head,
        alibi=config.positions == "alibi",
        dropout=config.dropout,  # on the attention weights
        rope_dims=config.rope_dims,
    )


class Block(nn.Module):
    """Pre-LayerNorm transformer block: multi-head attention (causal unless
    `config.causal` is False), then the MLP, each wrapped in a residual connection. The one
    block of the package: the tiny GPT (chapter 6) and the car classifier (chapter 7) use it."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = norm_layer(config.norm, config.n_embd, config.bias)
        self.causal = config.causal
        self.attn = attention_layer(config)
        self.ln_2 = norm_layer(config.norm, config.n_embd, config.bias)
        self.mlp = feed_forward(
            config.mlp, config.n_embd, bias=config.bias, dropout=config.dropout
        )
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self,
        x: Tensor,
        kv_cache: KVCache | None = None,
        key_mask: Tensor | None = None,
        positions: Tensor | None = None,
    ) -> Tensor:
        """x (B, T, C) -> (B, T, C): the residual stream after attention and the MLP.

        key_mask: optional boolean (B, 1, T_k), True = a real token (padded keys get weight 0).
        positions: (T,) or (B, T), where x's tokens sit (default: after the cached ones).
        The caller (`GPT`, chapter 7's classifier) has checked its token ids once for all
        blocks; the attention layer checks the shapes it is given on every call. The
        weights are read from this same pass by hooks (`hooks.attention_weights`).
        """
        a = self.attention(self.ln_1(x), kv_cache, key_mask, positions)  # (B, T, C)
        x = x + self.dropout(a)
        x = x + self.mlp(self.ln_2(x))  # (B, T, C)
        return x

    def attention(
        self,
        h: Tensor,
        kv_cache: KVCache | None = None,
        key_mask: Tensor | None = None,
        positions: Tensor | None = None,
    ) -> Tensor:
        """The attention sub-layer, h (B, T, C) -> (B, T, C) before the residual add: a
        module call, so hooks on the layer see it (`attnbook.hooks`). It takes the fused
        kernel where it can; a hook that asks for the weights makes that call explicit."""
        out, _ = self.attn(
            h,
            mask=None if key_mask is None else key_mask.unsqueeze(1),  # (B, 1, 1, T_k)
            is_causal=self.causal,
            need_weights=False,
            kv_cache=kv_cache,
            positions=positions,
        )
        return out


class GPT(nn.Module):
    """Character- (or any token-) level decoder-only transformer (chapter 6; chapters 2-10
    use it)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = position_embedding(
            config.positions, config.block_size, config.n_embd
        )
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = norm_layer(config.norm, config.n_embd, config.bias)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # weight tying: one matrix reads and writes tokens
        self.head.weight = self.tok_emb.weight
        for module in self.modules():  # parents first: W_q, W_k, W_v before W_o
            self._init_weights(module)
        # scaled init of the residual projections
        for name, p in self.named_parameters():
            if name.endswith("attn.W_o.weight") or name.endswith("mlp.proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        # each Linear, and W_q, W_k, W_v: the row blocks of an attention's fused projection
        layers: list = [module] if isinstance(module, nn.Linear) else []
        if isinstance(module, MultiHeadAttention):
            layers = [module.W_q, module.W_k, module.W_v]
        for layer in layers:
            nn.init.normal_(layer.weight, mean=0.0, std=0.02)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)

    def num_parameters(self) -> int:
        """All trainable parameters, positional embedding included (tied weights counted once)."""
        return sum(p.numel() for p in self.parameters())

    def _check_tokens(self, idx: Tensor, offset: int = 0) -> None:
        if not isinstance(idx, Tensor):
            raise TypeError(
                f"idx must be a (B, T) tensor of token ids, got {type(idx).__name__}"
            )
        if idx.dtype not in (torch.long, torch.int):
            raise TypeError(
                f"idx must hold integer token ids (torch.long), got {idx.dtype}"
            )
        if idx.dim() != 2:
            raise ValueError(
                f"idx must be a (B, T) tensor of token ids, got {tuple(idx.shape)}"
            )
        if offset + idx.shape[1] > self.config.block_size:
            raise ValueError(
                f"sequence of length {offset + idx.shape[1]} is longer than the "
                f"model's block_size={self.config.block_size}"
            )

    def _check_positions(self, idx: Tensor, positions: Tensor) -> int:
        """positions (B, T) of idx's tokens: checked; returns the offset that makes
        `_check_tokens` check the last one against block_size."""
        if self.config.positions not in ("rope", "none"):
            raise ValueError("positions= needs a model with positions 'rope' or 'none'")
        if not isinstance(positions, Tensor) or positions.shape != idx.shape:
            raise ValueError(f"positions must be a tensor shaped like idx {idx.shape}")
        if positions.numel() and int(positions.min()) < 0:
            raise ValueError("positions must be >= 0")
        return int(positions.max()) + 1 - idx.shape[1] if positions.numel() else 0

    def _check_range(self, idx: Tensor) -> None:
        """A ValueError if a token id is outside the vocabulary (reads the ids to the host)."""
        V = self.config.vocab_size
        if idx.numel() and (idx.min() < 0 or idx.max() >= V):
            lo, hi = int(idx.min()), int(idx.max())
            raise ValueError(f"token ids must be in [0, {V}), got {lo} .. {hi}")

    def _embed(self, idx: Tensor, offset: int = 0) -> Tensor:
        """idx (B, T) -> (B, T, C) (`positional.embed_tokens`). Ids outside the vocabulary:
        on the CPU the embedding's bounds check fails, made a clear error here at no cost per
        step; on a GPU (a device assert) they are checked first, outside training only."""
        if idx.device.type not in ("cpu", "meta") and not self.training:
            self._check_range(idx)
        try:
            return embed_tokens(
                self.tok_emb, self.pos_emb, idx, offset, self.config.embedding_scale
            )
        except IndexError:
            self._check_range(idx)
            raise

    def forward(
        self,
        idx: Tensor,
        targets: Tensor | None = None,
        kv_caches: list[KVCache] | None = None,
        positions: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """idx (B, T) -> logits (B, T, vocab), and the mean cross-entropy if `targets` (B, T).
        With `kv_caches` (one per layer) idx holds only the new positions; what the caches
        hold with them (`KVCache.held_after`: a streaming cache counts its slots after
        eviction, chapter 9) must fit in block_size. `positions` (B, T): where each row's
        tokens sit, for caches of rows of different lengths (chapter 9's engine; positions
        'rope' or 'none' only). Default: after the cached ones."""
        offset = 0
        if kv_caches:  # the positions held before idx's, once idx's are appended
            new = idx.shape[1] if isinstance(idx, Tensor) and idx.dim() == 2 else 0
            offset = kv_caches[0].held_after(new) - new
            if kv_caches[0].keys_by_slot and self.pos_emb is not None:
                raise ValueError(
                    "a cache that places keys by their slot (StreamingCache) needs "
                    "relative positions ('rope', 'alibi' or 'none'), the model has "
                    f"positions={self.config.positions!r}"
                )
        if positions is not None:
            offset = self._check_positions(idx, positions)
        self._check_tokens(idx, offset)
        x = self.drop(self._embed(idx, offset))  # (B, T, C)
        for i, block in enumerate(self.blocks):
            x = block(
                x, kv_cache=kv_caches[i] if kv_caches else None, positions=positions
            )
        logits = self.head(self.ln_f(x))  # (B, T, vocab)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.shape[-1]), targets.reshape(-1)
            )
        return logits, loss

    def attention_maps(self, idx: Tensor) -> list[Tensor]:
        """Each layer's attention weights (B, H, T, T) from its actual input, explicit path:
        one forward pass read by hooks on the attention layers (`hooks.attention_weights`)."""
        return attention_weights(self, idx)

    @torch.no_grad()
    def generate(
        self,
        idx: Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        generator: torch.Generator | None = None,
        use_cache: bool = True,
        top_p: float | None = None,
        kv_caches: list[KVCache] | None = None,
    ) -> Tensor:
        """Extend idx (B, T) by max_new_tokens sampled tokens -> (B, T + max_new_tokens).

        temperature, top_k and top_p reshape each step's distribution (`sample_next_token`).

        Without the cache every step re-runs the last block_size tokens. With it, each step
        feeds only the newest token; when the context would outgrow block_size the cache is
        rebuilt from the last block_size tokens, exactly what the uncached path sees.
        `kv_caches` (empty, one per block) are the caller's to read afterwards (chapter 8):
        they hold T + max_new_tokens - 1 positions, which must fit in block_size.
        """
        positive_int("max_new_tokens", max_new_tokens, allow_zero=True)
        if not isinstance(idx, Tensor):
            raise TypeError(
                f"idx must be a (B, T) tensor of token ids, got {type(idx).__name__}"
            )
        self._check_tokens(idx[:, -self.config.block_size :])
        if kv_caches is not None:
            self._check_caller_caches(kv_caches, idx.shape[-1] + max_new_tokens - 1)
        caches = kv_caches
        for _ in range(max_new_tokens):
            context = idx[:, -self.config.block_size :]
            if not use_cache:
                logits, _ = self(context)
            elif (
                caches is None
                or len(caches[0]) == 0
                or len(caches[0]) + 1 > self.config.block_size
            ):
                if caches is None or len(caches[0]) > 0:  # none yet, or about to slide
                    caches = self.new_caches()
                logits, _ = self(context, kv_caches=caches)  # (re)fill the cache
            else:
                logits, _ = self(idx[:, -1:], kv_caches=caches)  # only the newest token
            next_id = sample_next_token(
                logits[:, -1, :], temperature, top_k, generator, top_p
            )
            idx = torch.cat([idx, next_id], dim=1)
        return idx

    def new_caches(self) -> list[KVCache]:
        """Empty caches, one per block, each of the kind its attention layer reads and
        fills (`new_cache`: a LatentCache for latent attention): what `generate` uses."""
        return [cast(Block, block).attn.new_cache() for block in self.blocks]

    def _check_caller_caches(self, kv_caches: list[KVCache], fed: int) -> None:
        """Caller caches for `generate`: one empty KVCache per block, never slid."""
        if len(kv_caches) != len(self.blocks) or not all(
            isinstance(c, KVCache) and len(c) == 0 for c in kv_caches
        ):
            raise ValueError(
                f"kv_caches must be {len(self.blocks)} empty KVCache objects, one per block"
            )
        if fed > self.config.block_size:
            raise ValueError(
                f"generating feeds {fed} positions, more than "
                f"block_size={self.config.block_size}; the cache would have to slide"
            )
