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
and the tiny GPT of chapter 6 start most of theirs (without their smaller, scaled residual
projections). Chapter 10 measures what that choice does to when the
heads form.

`smear_keys`: every layer is a `SmearedKeyAttention`, Olsson et al.'s (2022) "smeared key"
variant: head h's key at position j is s_h k_j + (1 - s_h) k_{j-1}, with s_h = sigmoid(a_h)
and one learned a_h per head (key 0 keeps its own). One such layer can put the previous
token into its keys by itself, which a plain layer cannot.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import positive_int
from .multihead import MultiHeadAttention

__all__ = ["AttnOnlyConfig", "AttnOnlyTransformer", "INITS", "SmearedKeyAttention"]

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
    smear_keys: bool = False  # SmearedKeyAttention layers

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


class SmearedKeyAttention(MultiHeadAttention):
    """Causal self-attention whose keys are smeared one position back: head h uses
    s_h k_j + (1 - s_h) k_{j-1} (key 0 keeps k_0), s_h = sigmoid(smear[h]), learned.

    Chapter 10.
    """

    def __init__(self, d_model: int, n_head: int) -> None:
        super().__init__(d_model, n_head)
        self.smear = nn.Parameter(torch.zeros(n_head))  # s_h = 0.5 at the start

    def smear_weights(self) -> Tensor:
        """(H,): the weight s_h of each head's own key."""
        return torch.sigmoid(self.smear)

    def _attend(
        self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        mask: Tensor | None,
        is_causal: bool,
        need_weights: bool,
        kv_cache: object,
        positions: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        if kv_cache is not None:
            raise ValueError("SmearedKeyAttention has no key-value cache")
        s = self.smear_weights()[:, None, None]  # (H, 1, 1)
        before = torch.cat([k[..., :1, :], k[..., :-1, :]], dim=-2)  # (B, H, T, d_k)
        k = s * k + (1 - s) * before
        return super()._attend(q, k, v, mask, is_causal, need_weights, None, positions)


class AttnOnlyTransformer(nn.Module):
    """Token and position embeddings, `n_layer` causal attention layers added to the
    residual stream, an unembedding (not tied to the embedding). No norms, no MLPs.

    Chapter 10.
    """

    def __init__(self, config: AttnOnlyConfig) -> None:
        super().__init__()
        self.config = config
        d = config.d_model
        self.tok_emb = nn.Embedding(config.vocab_size, d)  # W_E: (V, d_model)
        self.pos_emb = nn.Embedding(config.block_size, d)  # (T_max, d_model)
        layer = SmearedKeyAttention if config.smear_keys else MultiHeadAttention
        self.layers = nn.ModuleList(
            layer(d, config.n_head) for _ in range(config.n_layer)
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
