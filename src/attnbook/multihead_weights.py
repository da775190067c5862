"""How multi-head attention stores its weights (chapter 3): the fused input projection.

`MultiHeadAttention` keeps W_q, W_k and W_v stacked by rows in one matrix, `qkv_weight`
(d_model + 2 kv_dim, d_model), so that self-attention makes queries, keys and values with one
matrix product. Here:

    ProjectionRows              the rows of one role, used as the nn.Linear W_q, W_k or W_v
    init_as_separate_linears    the fused matrix starts as the three nn.Linear layers did
    join_separate_projections   loads checkpoints saved with three separate layers
    to_torch, from_torch        the same weights in torch.nn.MultiheadAttention, which
                                stacks them the same way (its in_proj_weight)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

if TYPE_CHECKING:
    from .multihead import MultiHeadAttention

__all__ = [
    "ProjectionRows",
    "init_as_separate_linears",
    "join_separate_projections",
    "to_torch",
    "from_torch",
]


class ProjectionRows:
    """Rows `rows` of a `MultiHeadAttention`'s fused input projection, used as the layer
    W_q, W_k or W_v of chapter 3: calling it maps (..., d_model) -> (..., out_features) as an
    `nn.Linear` would, and `weight` (out_features, d_model) and `bias` are views of the fused
    parameters, so that writing into them (under `torch.no_grad()`) changes the layer."""

    def __init__(self, layer: MultiHeadAttention, rows: slice) -> None:
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


def init_as_separate_linears(layer: MultiHeadAttention) -> None:
    """Fill W_q, W_k and W_v, in that order, as `nn.Linear` fills its weight and bias: the
    fused layer draws the very random numbers the three separate layers drew, so that seeded
    results (the book's stored outputs, the shipped benchmark records) stay the same."""
    bound = 1 / math.sqrt(layer.d_model)  # nn.Linear's bias bound, 1 / sqrt(fan_in)
    with torch.no_grad():
        for rows in (layer.W_q, layer.W_k, layer.W_v):
            nn.init.kaiming_uniform_(rows.weight, a=math.sqrt(5))
            if rows.bias is not None:
                nn.init.uniform_(rows.bias, -bound, bound)


def join_separate_projections(
    module: nn.Module, state_dict: dict[str, Tensor], prefix: str, *args: Any
) -> None:
    """`load_state_dict` pre-hook of `MultiHeadAttention`: a checkpoint saved with three
    separate projections (keys W_q.weight, W_k.weight, W_v.weight and their biases, the
    layout before they were fused) gets them stacked into qkv_weight (and qkv_bias), in the
    dictionary being loaded, before its keys are matched to the parameters."""
    for kind in ("weight", "bias"):
        keys = [f"{prefix}{role}.{kind}" for role in ("W_q", "W_k", "W_v")]
        if all(k in state_dict for k in keys):
            joined = torch.cat([state_dict.pop(k) for k in keys])  # [W_q; W_k; W_v]
            state_dict[f"{prefix}qkv_{kind}"] = joined


def to_torch(layer: MultiHeadAttention) -> nn.MultiheadAttention:
    """A `nn.MultiheadAttention(batch_first=True)` computing the same function as `layer`."""
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
    cls: type[MultiHeadAttention], mha: nn.MultiheadAttention
) -> MultiHeadAttention:
    """A `cls` (MultiHeadAttention) with the weights of `mha` (equal q/k/v widths)."""
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
    ours = cls(mha.embed_dim, mha.num_heads, bias=bias)
    with torch.no_grad():
        ours.qkv_weight.copy_(mha.in_proj_weight)
        ours.W_o.weight.copy_(mha.out_proj.weight)
        if ours.qkv_bias is not None:
            ours.qkv_bias.copy_(mha.in_proj_bias)
            ours.W_o.bias.copy_(mha.out_proj.bias)
    return ours.to(mha.in_proj_weight.device)
