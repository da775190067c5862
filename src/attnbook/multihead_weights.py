"""How multi-head attention stores its weights (chapter 3): the fused input projection.

`MultiHeadAttention` keeps W_q, W_k and W_v stacked by rows in one matrix, `qkv_weight`
(d_model + 2 kv_dim, d_model), so that self-attention makes queries, keys and values with one
matrix product. Here:

    ProjectionRows              the rows of one role, used as the nn.Linear W_q, W_k or W_v
    init_as_separate_linears    the fused matrix starts as the three nn.Linear layers did
    to_torch, from_torch        the same weights in torch.nn.MultiheadAttention, which
                                stacks them the same way (its in_proj_weight)

The functions take any layer with the fused parameters (`FusedLayer`), so that this module
needs nothing from `multihead`, which imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "FusedLayer",
    "ProjectionRows",
    "init_as_separate_linears",
    "to_torch",
    "from_torch",
]


class FusedLayer(Protocol):
    """What these functions read of a `multihead.MultiHeadAttention` (chapter 3)."""

    d_model: int
    n_head: int
    n_kv_head: int
    bias: bool
    rope: bool
    alibi: bool
    W_o: nn.Linear

    @property
    def qkv_weight(self) -> Tensor: ...
    @property
    def qkv_bias(self) -> Tensor | None: ...
    @property
    def W_q(self) -> ProjectionRows: ...
    @property
    def W_k(self) -> ProjectionRows: ...
    @property
    def W_v(self) -> ProjectionRows: ...


Layer = TypeVar("Layer", bound=FusedLayer)


class ProjectionRows:
    """Rows `rows` of a `MultiHeadAttention`'s fused input projection, used as the layer
    W_q, W_k or W_v of chapter 3: calling it maps (..., d_model) -> (..., out_features) as an
    `nn.Linear` would, and `weight` (out_features, d_model) and `bias` are views of the fused
    parameters, so that writing into them (under `torch.no_grad()`) changes the layer."""

    def __init__(self, layer: FusedLayer, rows: slice) -> None:
        self.layer, self.rows = layer, rows
        self.in_features = layer.d_model
        self.out_features = rows.stop - rows.start

    @property
    def weight(self) -> Tensor:
        return self.layer.qkv_weight[self.rows]  # (out_features, d_model)

    @property
    def bias(self) -> Tensor | None:
        b = self.layer.qkv_bias
        return None if b is None else b[self.rows]

    def __call__(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)  # (..., out_features)

    def __repr__(self) -> str:  # what chapter 3 prints for each of its three layers
        return (
            f"Linear(in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None})"
        )


def init_as_separate_linears(layer: FusedLayer) -> None:
    """Fill W_q, W_k and W_v, in that order, as `nn.Linear` fills its weight and bias: the
    fused layer draws the very random numbers the three separate layers drew, so that seeded
    results (the book's stored outputs, the shipped benchmark records) stay the same.

    Chapter 3.
    """
    bound = 1 / math.sqrt(layer.d_model)  # nn.Linear's bias bound, 1 / sqrt(fan_in)
    with torch.no_grad():
        for rows in (layer.W_q, layer.W_k, layer.W_v):
            nn.init.kaiming_uniform_(rows.weight, a=math.sqrt(5))
            if rows.bias is not None:
                nn.init.uniform_(rows.bias, -bound, bound)


def to_torch(layer: FusedLayer) -> nn.MultiheadAttention:
    """A `nn.MultiheadAttention(batch_first=True)` computing the same function as `layer`.

    Chapters 3 and 4.
    """
    if layer.rope:
        raise ValueError(
            "nn.MultiheadAttention has no rotary positions: to_torch needs rope=False"
        )
    if layer.alibi or layer.n_kv_head != layer.n_head:
        raise ValueError(
            "nn.MultiheadAttention has one key/value head per query head and no ALiBi: "
            "to_torch needs n_kv_head == n_head and alibi=False"
        )
    w = layer.qkv_weight
    mha = nn.MultiheadAttention(
        layer.d_model,
        layer.n_head,
        bias=layer.bias,
        batch_first=True,
        device=w.device,
        dtype=w.dtype,  # float64 stays float64
    )
    with torch.no_grad():
        mha.in_proj_weight.copy_(w)  # the same [W_q; W_k; W_v] stacking
        mha.out_proj.weight.copy_(layer.W_o.weight)
        if layer.qkv_bias is not None:
            mha.in_proj_bias.copy_(layer.qkv_bias)
            mha.out_proj.bias.copy_(layer.W_o.bias)
    return mha


def from_torch(
    build: Callable[[int, int, bool], Layer], mha: nn.MultiheadAttention
) -> Layer:
    """`build(d_model, n_head, bias)` (a MultiHeadAttention) with the weights of `mha`
    (equal q/k/v widths), on the CPU.

    Chapter 3.
    """
    if not isinstance(mha, nn.MultiheadAttention):
        raise TypeError(
            f"mha must be a torch.nn.MultiheadAttention, got {type(mha).__name__}"
        )
    if not mha._qkv_same_embed_dim:
        raise ValueError(
            "only nn.MultiheadAttention with kdim == vdim == embed_dim can be copied"
        )
    bias = mha.in_proj_bias is not None
    if bias != (mha.out_proj.bias is not None) or mha.bias_k is not None:
        raise ValueError(
            "the input and output projections must both have biases or both not, "
            "and add_bias_kv is not supported"
        )
    ours = build(mha.embed_dim, mha.num_heads, bias)
    with torch.no_grad():
        ours.qkv_weight.copy_(mha.in_proj_weight)
        ours.W_o.weight.copy_(mha.out_proj.weight)
        if ours.qkv_bias is not None:
            ours.qkv_bias.copy_(mha.in_proj_bias)
            ours.W_o.bias.copy_(mha.out_proj.bias)
    return ours
