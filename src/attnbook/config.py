"""`GPTConfig`: every hyper-parameter of the tiny GPT, and so every model the course builds
from it (chapters 6-9). `GPT(config)` builds the model the config describes, nothing is
changed after construction; vary one with `dataclasses.replace(config, field=value)`.

    chapter 6   vocab_size, block_size, n_layer, n_head, n_embd, dropout, bias
    chapter 7   causal=False: every token attends to every real token (the car classifier)
    chapter 8   positions (`positional.POSITIONS`), scale_embeddings, n_kv_head (grouped-query
                attention; 1 = multi-query), norm ("rmsnorm") and mlp ("swiglu")
    chapter 9   rope_dims: rotate only the first rope_dims features of each head (partial
                RoPE); attention="mla": multi-head latent attention, which caches d_latent
                numbers per token and layer plus a rotary key part of rope_dims features

A latent-attention model rotates keys, so its config says positions="rope" with the width
of its rotary part in rope_dims: the config never says "none" for a model that rotates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._checks import positive_int
from .layers import MLPS, NORMS
from .positional import POSITIONS

__all__ = ["GPTConfig", "ATTENTIONS"]

#: "mha": multi-head attention (grouped with n_kv_head); "mla": latent attention (chapter 9)
ATTENTIONS = ("mha", "mla")


@dataclass
class GPTConfig:
    """The hyper-parameters of the tiny GPT (chapter 6), of chapter 7's classifier, which
    builds its blocks from one, and of the variants of chapters 8 and 9 (module docstring)."""

    vocab_size: int
    block_size: int = 64  # the longest context the model can take
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = False  # biases in Linear layers and LayerNorms
    # False: every token may attend to every (real) token (chapter 7)
    causal: bool = True
    # key/value heads (chapter 8); None = n_head (multi-head)
    n_kv_head: int | None = None
    positions: str = "learned"  # one of POSITIONS (chapters 5 and 8)
    # x sqrt(n_embd) first; None: only with "sinusoidal"
    scale_embeddings: bool | None = None
    # today's block (chapter 8): "rmsnorm" for every LayerNorm, "swiglu" for the GELU MLP
    norm: str = "layernorm"  # one of NORMS
    mlp: str = "gelu"  # one of MLPS
    attention: str = "mha"  # one of ATTENTIONS (chapter 9)
    # rotated features per head (chapter 9), positions="rope" only: "mha" rotates the first
    # rope_dims of its d_head (None: all); "mla" adds a rotary part this wide (required)
    rope_dims: int | None = None
    d_latent: int | None = None  # "mla" only: the latent cached per token and layer

    @property
    def d_head(self) -> int:
        """The width of one head's queries, keys and values (without MLA's rotary part)."""
        return self.n_embd // self.n_head

    @property
    def embedding_scale(self) -> float | None:
        """sqrt(n_embd) if the token embeddings are scaled (`scale_embeddings`), else None."""
        scale = (
            self.positions == "sinusoidal"
            if self.scale_embeddings is None
            else self.scale_embeddings
        )
        return math.sqrt(self.n_embd) if scale else None

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            positive_int(name, getattr(self, name))
        if self.n_embd % self.n_head:
            raise ValueError(
                f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}"
            )
        if self.n_kv_head is not None and self.n_head % positive_int(
            "n_kv_head", self.n_kv_head
        ):
            raise ValueError(
                f"n_kv_head must be a positive int dividing n_head={self.n_head} "
                f"(or None), got {self.n_kv_head!r}"
            )
        if self.positions not in POSITIONS:
            raise ValueError(
                f"positions must be one of {POSITIONS}, got {self.positions!r}"
            )
        if self.positions == "alibi" and not self.causal:
            raise ValueError(
                "positions='alibi' is implemented for causal models only (causal=True)"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {self.norm!r}")
        if self.mlp not in MLPS:
            raise ValueError(f"mlp must be one of {MLPS}, got {self.mlp!r}")
        self._check_attention()

    def _check_attention(self) -> None:
        """attention, rope_dims and d_latent (chapter 9) agree with each other."""
        if self.attention not in ATTENTIONS:
            raise ValueError(
                f"attention must be one of {ATTENTIONS}, got {self.attention!r}"
            )
        if self.rope_dims is not None:
            if self.positions != "rope":
                raise ValueError(
                    f"rope_dims needs positions='rope', got {self.positions!r}"
                )
            widest = self.d_head if self.attention == "mha" else None
            if positive_int("rope_dims", self.rope_dims) % 2 or (
                widest is not None and self.rope_dims > widest
            ):
                most = "" if widest is None else f" and at most d_head={widest}"
                raise ValueError(
                    f"rope_dims={self.rope_dims} must be even{most}: RoPE rotates pairs"
                )
        if self.attention == "mha":
            if self.d_latent is not None:
                raise ValueError("d_latent is for attention='mla' only")
            return
        if self.n_kv_head is not None:
            raise ValueError(
                f"n_kv_head={self.n_kv_head} is for attention='mha' (grouped-query "
                "attention): attention='mla' shares no key/value heads, every head reads "
                "the one latent; leave n_kv_head None"
            )
        if (
            self.positions != "rope"
            or self.rope_dims is None
            or self.d_latent is None
            or not self.causal
        ):
            raise ValueError(
                "attention='mla' needs a causal config with positions='rope', rope_dims "
                "(its rotary part) and d_latent: latent attention brings its own rotary "
                "part"
            )
        positive_int("d_latent", self.d_latent)
