"""An attention-only transformer, the model of chapter 10 (induction heads).

    tokens (B, T) -> token embedding + learned positions (B, T, d_model)    the residual x
                  -> n_layer x [x + attn(x)]     no LayerNorm, no MLP
                  -> linear unembedding -> logits (B, T, vocab)

Each layer is the course's `attnbook.multihead.MultiHeadAttention` (chapter 3), causal
(chapter 4). With nothing but attention and the residual stream, every head's contribution is
a sum the reader can take apart (Elhage et al., 2021): what it reads (its QK circuit), what it
writes (its OV circuit) and which earlier head it reads from (composition). The model calls its
attention modules through `module(...)`, so plain PyTorch hooks see every call (`attnbook.hooks`).

`init`: "default" keeps PyTorch's initialisation of each layer (embeddings N(0, 1), linear
layers uniform with bound 1/sqrt(fan_in)); "gpt2" draws every weight from N(0, 0.02), as GPT-2
and the tiny GPT of chapter 6 do. Chapter 10 measures what that choice does to when the
heads form.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import positive_int
from .multihead import MultiHeadAttention

__all__ = ["AttnOnlyConfig", "AttnOnlyTransformer", "INITS"]

INITS = ("default", "gpt2")


@dataclass(frozen=True)
class AttnOnlyConfig:
    """Sizes of the attention-only transformer (chapter 10)."""

    vocab_size: int
    block_size: int = 32  # the longest context
    n_layer: int = 2
    n_head: int = 4
    d_model: int = 32
    init: str = "default"  # one of INITS

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "d_model"):
            positive_int(name, getattr(self, name))
        if self.d_model % self.n_head:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by n_head={self.n_head}"
            )
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head


class AttnOnlyTransformer(nn.Module):
    """Token and position embeddings, `n_layer` causal attention layers added to the
    residual stream, an unembedding (not tied to the embedding). No norms, no MLPs."""

    def __init__(self, config: AttnOnlyConfig) -> None:
        super().__init__()
        self.config = config
        d = config.d_model
        self.tok_emb = nn.Embedding(config.vocab_size, d)  # W_E: (V, d_model)
        self.pos_emb = nn.Embedding(config.block_size, d)  # (T_max, d_model)
        self.layers = nn.ModuleList(
            MultiHeadAttention(d, config.n_head) for _ in range(config.n_layer)
        )
        self.unembed = nn.Linear(d, config.vocab_size, bias=False)  # W_U: (V, d_model)
        if config.init == "gpt2":
            for p in self.parameters():
                nn.init.normal_(p, mean=0.0, std=0.02)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def _check(self, idx: object) -> Tensor:
        if not isinstance(idx, Tensor) or idx.dtype not in (torch.long, torch.int):
            raise TypeError(
                "idx must be a (B, T) tensor of integer token ids, got "
                f"{getattr(idx, 'dtype', type(idx).__name__)}"
            )
        if idx.dim() != 2 or not 0 < idx.shape[1] <= self.config.block_size:
            raise ValueError(
                f"idx must be (B, T) with 1 <= T <= block_size={self.config.block_size}, "
                f"got shape {tuple(idx.shape)}"
            )
        V = self.config.vocab_size
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= V):
            raise ValueError(
                f"token ids must be in [0, {V}), got {int(idx.min())} .. {int(idx.max())}"
            )
        return idx

    def residual(self, idx: Tensor) -> Tensor:
        """The residual stream after the embeddings: (B, T) -> (B, T, d_model)."""
        T = self._check(idx).shape[1]
        return self.tok_emb(idx) + self.pos_emb.weight[:T]  # (B, T, d_model)

    def forward(
        self, idx: Tensor, targets: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        """idx (B, T) -> logits (B, T, vocab), and the mean cross-entropy if `targets`."""
        x = self.residual(idx)  # (B, T, d_model)
        for attn in self.layers:
            out, _ = attn(x, is_causal=True, need_weights=False)  # hooks see this call
            x = x + out  # (B, T, d_model)
        logits = self.unembed(x)  # (B, T, vocab)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.flatten(0, 1), targets.reshape(-1))
        return logits, loss
