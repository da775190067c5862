"""Small models of equal width for the recall experiment of chapter 11.

Every model is an embedding, `n_layer` residual layers x + mixer(RMSNorm(x)), a final RMSNorm
and a linear read-out. The layers differ only in how a token reads the earlier ones:

    softmax       attention over every earlier token (`attnbook.attention.attend`)
    linear        causal linear attention, phi = elu + 1, with the normaliser
    delta         the delta rule: keys and queries through SiLU, then L2-normalised (as in
                  DeltaNet and Gated DeltaNet), write strength beta = sigmoid(W_b x + b_b)
    gated_delta   the delta rule with the decay gate alpha = sigmoid(W_a x + b_a) (Gated DeltaNet)
    additive      a control: the delta layer without its correction, S_t = S_{t-1} + beta_t
                  k_t^T v_t on the same keys with the same beta (no normaliser), so that
                  it differs from `delta` in the write rule alone

(`attnbook.linear_attention` for linear and the delta rule). `MODEL_KINDS` names the stacks
of the chapter's sweep: one kind for every layer, or "hybrid": gated delta-rule layers with a
softmax layer last; `CONTROL_KINDS` the extra stacks of its controls (all "additive"). Each mixer
starts with a short causal depthwise convolution over the last `conv_kernel` tokens (as
Zoology's and Gated DeltaNet's layers do); keys come from its output one position earlier (a
token shift), so a value is written under a key that mixes the tokens before it, its pair's key
newest, and one layer can tie a value to its key; no positional encoding, and no MLP.

Two initial values are set as a precaution, argued and not measured (chapter 11, "Why the
write starts small"; no run trained the delta rule from other values): the write strength
starts small, beta = sigmoid(write_bias)
~ 0.12, because with unit keys in d_head = 8 dimensions a write of strength beta along a
random key erases on average beta / d_head of what each stored key reads, (1 - beta / 8)^n
after n writes: beta = 0.5 keeps 2 % of a pair after 63 writes, before training has taught
the layer which tokens to write, beta = 0.12 keeps 39 %; and the gate
starts open, alpha = sigmoid(gate_bias) ~ 0.993, keeping about half of a write over the
longest sequence of the task (96 tokens) instead of 0.95^96 ~ 0.7 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import positive_int, tensor
from .attention import attend
from .layers import RMSNorm
from .linear_attention import delta_rule_parallel, linear_attention_parallel
from .masks import causal_mask

__all__ = [
    "RecallModelConfig",
    "MODEL_KINDS",
    "LAYER_KINDS",
    "CONTROL_KINDS",
    "TokenMixer",
    "RecallModel",
]

LAYER_KINDS = ("softmax", "linear", "delta", "gated_delta", "additive")
_WRITES = ("delta", "gated_delta", "additive")  # the layers with a write strength beta


def _stack(kind: str, n_layer: int) -> tuple[str, ...]:
    if kind == "hybrid":
        return ("gated_delta",) * (n_layer - 1) + ("softmax",)
    return (kind,) * n_layer


MODEL_KINDS = ("softmax", "linear", "delta", "gated_delta", "hybrid")
CONTROL_KINDS = ("additive",)


@dataclass(frozen=True)
class RecallModelConfig:
    """Sizes shared by every kind of model (equal width) (chapter 11)."""

    vocab_size: int = 128
    d_model: int = 32
    n_head: int = 4
    n_layer: int = 2
    conv_kernel: int = 3
    write_bias: float = -2.0  # delta rule: beta = sigmoid(-2) ~ 0.12 at the start
    gate_bias: float = 5.0  # gated delta rule: alpha = sigmoid(5) ~ 0.993 at the start

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_head", "n_layer", "conv_kernel"):
            positive_int(name, getattr(self, name))
        for name in ("write_bias", "gate_bias"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(
                    f"{name} must be a number, got {type(value).__name__} {value!r}"
                )
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value}")
        if self.d_model % self.n_head:
            raise ValueError(
                f"d_model={self.d_model} must be divisible by n_head={self.n_head}"
            )

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head


class TokenMixer(nn.Module):
    """One layer's mixing of tokens, of kind LAYER_KINDS: x (B, T, C) -> (B, T, C).

    Chapter 11.
    """

    def __init__(self, kind: str, cfg: RecallModelConfig) -> None:
        super().__init__()
        if kind not in LAYER_KINDS:
            raise ValueError(f"unknown layer kind {kind!r}; kinds: {LAYER_KINDS}")
        self.kind, self.n_head = kind, cfg.n_head
        C, k = cfg.d_model, cfg.conv_kernel
        self.conv = nn.Conv1d(C, C, k, groups=C, padding=k - 1)  # causal after slicing
        self.W_q = nn.Linear(C, C, bias=False)
        self.W_k = nn.Linear(C, C, bias=False)
        self.W_v = nn.Linear(C, C, bias=False)
        self.out = nn.Linear(C, C, bias=False)
        self.beta = nn.Linear(C, cfg.n_head) if kind in _WRITES else None
        self.alpha = nn.Linear(C, cfg.n_head) if kind == "gated_delta" else None
        if self.beta is not None:
            nn.init.constant_(self.beta.bias, cfg.write_bias)
        if self.alpha is not None:
            nn.init.constant_(self.alpha.bias, cfg.gate_bias)

    def _heads(self, x: Tensor) -> Tensor:
        B, T, C = x.shape
        return x.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.shape
        h = self.conv(x.transpose(1, 2))[..., :T].transpose(1, 2)  # tokens t-k+1 .. t
        # a token shift: each position's key comes from the previous position's
        # convolution output, a mix of the conv_kernel tokens before it
        before = F.pad(h, (0, 0, 1, 0))[:, :T]
        q = self._heads(self.W_q(h))
        k = self._heads(self.W_k(before))
        v = self._heads(self.W_v(h))
        if self.kind == "softmax":
            y = attend(q, k, v, is_causal=True)[0]
        elif self.kind == "linear":
            y = linear_attention_parallel(q, k, v)
        else:
            q, k = F.normalize(F.silu(q), dim=-1), F.normalize(F.silu(k), dim=-1)
            assert self.beta is not None
            beta = torch.sigmoid(self.beta(h)).transpose(1, 2)  # (B, H, T)
            alpha = None
            if self.alpha is not None:
                alpha = torch.sigmoid(self.alpha(h)).transpose(1, 2)
            if self.kind == "additive":
                # S_t = S_{t-1} + beta_t k_t^T v_t, read as q_t S_t: all tokens at once
                below = causal_mask(T, device=q.device)
                scores = (q @ k.transpose(-2, -1)).masked_fill(~below, 0.0)
                y = scores @ (beta[..., None] * v)
            else:
                y = delta_rule_parallel(q, k, v, beta, alpha)
        return self.out(y.transpose(1, 2).reshape(B, T, C))

    def extra_repr(self) -> str:
        return f"kind={self.kind!r}, n_head={self.n_head}"


class RecallModel(nn.Module):
    """Tokens (B, T) -> next-token logits (B, T, vocab_size), layers of `kind`'s stack.

    Chapter 11.
    """

    def __init__(self, kind: str, cfg: RecallModelConfig | None = None) -> None:
        super().__init__()
        cfg = RecallModelConfig() if cfg is None else cfg
        if kind not in MODEL_KINDS + CONTROL_KINDS:
            raise ValueError(
                f"unknown model kind {kind!r}; kinds: {MODEL_KINDS + CONTROL_KINDS}"
            )
        self.kind, self.cfg = kind, cfg
        self.layer_kinds = _stack(kind, cfg.n_layer)
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.norms = nn.ModuleList(RMSNorm(cfg.d_model) for _ in self.layer_kinds)
        self.mixers = nn.ModuleList(TokenMixer(k, cfg) for k in self.layer_kinds)
        self.norm_f = RMSNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def forward(self, tokens: Tensor) -> Tensor:
        tensor("tokens", tokens, "(B, T)", dims=(2,))
        if tokens.dtype != torch.long:
            raise TypeError(f"tokens must be int64 token ids, got dtype {tokens.dtype}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.cfg.vocab_size):
            raise ValueError(
                f"token ids must lie in 0 .. {self.cfg.vocab_size - 1}, got "
                f"{int(tokens.min())} .. {int(tokens.max())}"
            )
        x = self.embed(tokens)  # (B, T, C)
        for norm, mixer in zip(self.norms, self.mixers):
            x = x + mixer(norm(x))
        return self.head(self.norm_f(x))

    def state_numbers(self) -> int:
        """Numbers a layer of fixed state keeps per sequence while generating: n_head x
        d_head x d_head (plus d_head per head for linear attention's normaliser); 0 for a
        softmax layer, whose cache grows instead. Summed over the layers."""
        dh, H = self.cfg.d_head, self.cfg.n_head
        per_layer = {"softmax": 0, "linear": H * (dh * dh + dh)}
        return sum(per_layer.get(k, H * dh * dh) for k in self.layer_kinds)
