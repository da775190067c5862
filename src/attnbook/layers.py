"""The two parts that today's open language models put around attention instead of GPT-2's
(chapter 8): RMSNorm in place of LayerNorm, and a SwiGLU feed-forward layer in place of the
GELU MLP, which lives here too (`MLP`, chapter 6's block).

    RMSNorm:  y = g * x / sqrt(mean_i(x_i^2) + eps)            x (..., C) -> (..., C)
    SwiGLU:   y = (SiLU(x W_gate) * (x W_up)) W_down            x (..., C) -> (..., C)

with SiLU(z) = z * sigmoid(z), * elementwise, W_gate and W_up of shape (C, h) and W_down
(h, C). A GELU MLP of hidden width 4C has 2 * 4C * C weights and SwiGLU with hidden width h
has 3 * h * C; `swiglu_hidden` gives h = 2/3 * 4C rounded to the nearest integer, so that the
two cost (nearly) the same (the LLaMA models round up to a multiple of 256 as well, which at
the course's widths would make the layer half again as big). Neither layer has biases.
`attnbook.gpt.GPTConfig(norm="rmsnorm", mlp="swiglu")` builds its blocks from them
(`norm_layer` picks the normalisation).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import floating, positive_float, positive_int, tensor

__all__ = [
    "RMSNorm",
    "SwiGLU",
    "MLP",
    "swiglu_hidden",
    "norm_layer",
    "feed_forward",
    "NORMS",
    "MLPS",
]

NORMS = ("layernorm", "rmsnorm")  # the choices of GPTConfig.norm
MLPS = ("gelu", "swiglu")  # the choices of GPTConfig.mlp


def swiglu_hidden(n_embd: int) -> int:
    """The hidden width h that gives SwiGLU (3 h C weights) the budget of a GELU MLP of
    width 4C (8 C^2 weights): 2/3 * 4C = 8C/3, rounded to the nearest integer. Chapter 8."""
    positive_int("n_embd", n_embd)
    return (8 * n_embd + 1) // 3  # round(8C / 3); 8C/3 is never exactly halfway


class RMSNorm(nn.Module):
    """Root-mean-square normalisation over the last dimension (chapter 8; Zhang &
    Sennrich, 2019): x (..., C) -> g * x / sqrt(mean(x^2) + eps), g (C,) a learned gain that
    starts at 1.

    Unlike LayerNorm it subtracts no mean and adds no bias: one reduction instead of two,
    and C weights per layer. Computed in float32 for half-precision inputs."""

    def __init__(self, n_embd: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.n_embd = positive_int("n_embd", n_embd)
        self.eps = positive_float("eps", eps)
        self.weight = nn.Parameter(torch.ones(n_embd))

    def forward(self, x: Tensor) -> Tensor:
        tensor("x", x, "(..., n_embd)", min_dims=1)
        floating("x", x)
        if x.shape[-1] != self.n_embd:
            raise ValueError(
                f"x must have last dimension n_embd={self.n_embd}, got shape "
                f"{tuple(x.shape)}"
            )
        x32 = x.float()
        inv_rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (x32 * inv_rms).to(x.dtype) * self.weight  # (..., C)

    def extra_repr(self) -> str:
        return f"{self.n_embd}, eps={self.eps}"


class SwiGLU(nn.Module):
    """Gated feed-forward layer (chapter 8; Shazeer, 2020): x (..., C) -> (..., C),
    down(SiLU(gate(x)) * up(x)), hidden width `hidden` (default `swiglu_hidden(n_embd)`).

    The output projection is called `proj`, as in the GELU MLP, so that the GPT's scaled
    initialisation of the residual projections finds it."""

    def __init__(
        self,
        n_embd: int,
        hidden: int | None = None,
        bias: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        positive_int("n_embd", n_embd)
        hidden = swiglu_hidden(n_embd) if hidden is None else hidden
        positive_int("hidden", hidden)
        self.gate = nn.Linear(n_embd, hidden, bias=bias)  # W_gate (C, h), stored (h, C)
        self.up = nn.Linear(n_embd, hidden, bias=bias)  # W_up (C, h)
        self.proj = nn.Linear(hidden, n_embd, bias=bias)  # W_down (h, C)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        tensor("x", x, "(..., n_embd)", min_dims=1)
        floating("x", x)
        if x.shape[-1] != self.gate.in_features:
            raise ValueError(
                f"x must have last dimension n_embd={self.gate.in_features}, got shape "
                f"{tuple(x.shape)}"
            )
        hidden = F.silu(self.gate(x)) * self.up(x)  # (..., h)
        return self.dropout(self.proj(hidden))  # (..., C)


def norm_layer(kind: str, n_embd: int, bias: bool = False) -> nn.Module:
    """A normalisation over the last dimension of width n_embd: "layernorm" (PyTorch's, with
    a bias if `bias`) or "rmsnorm" (never a bias; chapter 8)."""
    if kind not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {kind!r}")
    if kind == "rmsnorm":
        return RMSNorm(n_embd)
    return nn.LayerNorm(n_embd, bias=bias)


class MLP(nn.Module):
    """GPT-2's position-wise feed-forward layer (chapters 1 and 6): C -> 4C -> GELU -> C."""

    def __init__(self, n_embd: int, bias: bool = False, dropout: float = 0.0) -> None:
        super().__init__()
        self.fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.proj = nn.Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.proj(F.gelu(self.fc(x))))  # (..., C)


def feed_forward(
    kind: str, n_embd: int, bias: bool = False, dropout: float = 0.0
) -> nn.Module:
    """The GPT block's feed-forward layer (`GPTConfig.mlp`): "gelu" (GPT-2's MLP) or
    "swiglu" (chapters 6 and 8)."""
    if kind not in MLPS:
        raise ValueError(f"mlp must be one of {MLPS}, got {kind!r}")
    if kind == "swiglu":
        return SwiGLU(n_embd, bias=bias, dropout=dropout)
    return MLP(n_embd, bias=bias, dropout=dropout)
