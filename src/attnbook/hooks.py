"""Reading and breaking heads with plain PyTorch hooks (chapters 6, 7 and 10).

A hook is a function PyTorch calls around a module's forward pass; it can read the module's
input and output, or replace them, without touching the model's code. This is the course's
one way to read attention weights: the tiny GPT's maps (`GPT.attention_maps`, chapter 6), the
car classifier's (`cars.attention_maps`, chapter 7) and the heads of chapter 10. Where a
caller feeds one layer inputs of its own choosing instead of reading a model's pass
(`circuits.path_ablation`, a cell each in chapters 5 and 7), it calls the layer with
``need_weights=True`` directly: no pass of the model is there to hook.

    attention_weights(model, idx)   each attention layer's weights (B, H, T, T)
    with_attention_weights(model, *inputs)
                                    the model's output and those weights, from one call
    head_outputs(model, idx)        each layer's per-head outputs before W_o (B, T, H, d_head)
    ablate_heads(model, {(layer, head): replacement})
                                    a context in which those heads write `replacement`
                                    (0: zero ablation; a mean from `head_outputs`: mean
                                    ablation) instead of what they computed

The layers are the model's attention modules, `MultiHeadAttention` or (chapter 9's latent
attention) `MultiHeadLatentAttention`, in the order `model.modules()` lists them: layer 0
first (`attention_layers` lists the multi-head ones alone, for chapter 10's circuits, which
read their W_q, W_k and W_v). Per-head outputs are read where every call of the layer passes, at the
input of its output projection W_o, whose columns h*d_head .. (h+1)*d_head - 1 belong to head
h. The weights need the layer to be called as a module (`attn(x, ...)`), as the tiny GPT's
`Block` and `attnbook.attn_only.AttnOnlyTransformer` do; the hook asks for them
(`need_weights=True`), so the layer takes its explicit path for that pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor, nn
from torch.utils.hooks import RemovableHandle

from ._checks import integer
from .latent import MultiHeadLatentAttention
from .multihead import MultiHeadAttention

__all__ = [
    "attention_layers",
    "attention_weights",
    "with_attention_weights",
    "head_outputs",
    "ablate_heads",
]


def attention_layers(model: nn.Module) -> list[MultiHeadAttention]:
    """The model's attention layers, layer 0 first; a ValueError if it has none (chapter 10)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    if not layers:
        raise ValueError(f"{type(model).__name__} has no MultiHeadAttention layer")
    return layers


def _layers(model: nn.Module) -> list[MultiHeadAttention | MultiHeadLatentAttention]:
    """Every attention layer the hooks read, layer 0 first: both kinds give their weights
    with `need_weights=True` and write their heads through `W_o`."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    kinds = (MultiHeadAttention, MultiHeadLatentAttention)
    layers = [m for m in model.modules() if isinstance(m, kinds)]
    if not layers:
        raise ValueError(
            f"{type(model).__name__} has no attention layer (MultiHeadAttention or "
            "MultiHeadLatentAttention)"
        )
    return layers


@contextmanager
def _hooked(handles: list[RemovableHandle]) -> Iterator[None]:
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@torch.no_grad()
def attention_weights(model: nn.Module, idx: Tensor) -> list[Tensor]:
    """Run `model(idx)` once and return each layer's attention weights (B, H, T, T), those
    it computed in that pass from its own input (chapters 6, 7 and 10)."""
    return with_attention_weights(model, idx)[1]


def with_attention_weights(model: nn.Module, *inputs: Any) -> tuple[Any, list[Tensor]]:
    """`model(*inputs)`'s output and each layer's attention weights (B, H, T_q, T_k) in that
    very pass, layer 0 first; gradients flow as in the plain call (chapter 7's classifier
    returns its weights with its logits this way)."""
    layers, caught = _layers(model), {}

    def ask(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        return args, {**kwargs, "need_weights": True}  # the explicit path

    def keep(i: int) -> Any:
        def hook(module: nn.Module, args: tuple, output: tuple) -> None:
            caught[i] = output[1]  # (B, H, T_q, T_k)

        return hook

    handles = [m.register_forward_pre_hook(ask, with_kwargs=True) for m in layers]
    handles += [m.register_forward_hook(keep(i)) for i, m in enumerate(layers)]
    with _hooked(handles):
        output = model(*inputs)
    if len(caught) != len(layers) or any(w is None for w in caught.values()):
        raise ValueError(
            "the model did not call its attention layers as modules with weights; "
            "attention_weights needs them called as attn(x, ...) (see gpt.Block)"
        )
    return output, [caught[i] for i in range(len(layers))]


@torch.no_grad()
def head_outputs(model: nn.Module, idx: Tensor) -> list[Tensor]:
    """Run `model(idx)` once; each layer's heads' outputs, the input of its W_o, split per
    head: a list of (B, T, H, d_head), layer 0 first (chapter 10)."""
    layers, caught = _layers(model), {}

    def keep(i: int, n_head: int) -> Any:
        def hook(module: nn.Module, args: tuple) -> None:
            z = args[0]  # (B, T, H * d_head)
            caught[i] = z.unflatten(-1, (n_head, z.shape[-1] // n_head))

        return hook

    handles = [
        m.W_o.register_forward_pre_hook(keep(i, m.n_head)) for i, m in enumerate(layers)
    ]
    with _hooked(handles):
        model(idx)
    return [caught[i] for i in range(len(layers))]


def _replacement(value: float | Tensor, d_head: int, where: str) -> float | Tensor:
    if isinstance(value, Tensor):
        if value.dim() == 0 or value.shape[-1] != d_head:
            raise ValueError(
                f"the replacement for {where} must end in d_head={d_head} "
                f"(e.g. (d_head,) or (T, d_head)), got shape {tuple(value.shape)}"
            )
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"the replacement for {where} must be a number or a tensor, "
            f"got {type(value).__name__}"
        )
    return float(value)


@contextmanager
def ablate_heads(
    model: nn.Module, heads: Mapping[tuple[int, int], float | Tensor]
) -> Iterator[nn.Module]:
    """Inside the block, head h of layer l writes `heads[(l, h)]` instead of its output:
    0.0 (zero ablation) or a tensor broadcastable to (B, T, d_head), e.g. the head's mean
    output over a batch, `head_outputs(model, idx)[l][:, :, h].mean(0)` of shape
    (T, d_head) (mean ablation). The hooks are removed on the way out, also on an error
    (chapter 10)."""
    layers = _layers(model)
    plan: dict[int, dict[int, float | Tensor]] = {}
    for key, value in heads.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise TypeError(f"heads' keys must be (layer, head) pairs, got {key!r}")
        layer, head = integer("layer", key[0]), integer("head", key[1])
        if not 0 <= layer < len(layers):
            raise ValueError(f"layer must be in [0, {len(layers)}), got {layer}")
        attn = layers[layer]
        if not 0 <= head < attn.n_head:
            raise ValueError(f"head must be in [0, {attn.n_head}), got {head}")
        where = f"head {layer}.{head}"
        d_head = attn.W_o.in_features // attn.n_head
        plan.setdefault(layer, {})[head] = _replacement(value, d_head, where)

    def replace(d_head: int, swaps: dict[int, float | Tensor]) -> Any:
        def hook(module: nn.Module, args: tuple) -> tuple:
            z = args[0].clone()  # (B, T, H * d_head)
            for h, value in swaps.items():
                cols = slice(h * d_head, (h + 1) * d_head)
                z[..., cols] = value  # broadcast over (B, T, d_head)
            return (z, *args[1:])

        return hook

    handles = [
        layers[i].W_o.register_forward_pre_hook(
            replace(layers[i].W_o.in_features // layers[i].n_head, swaps)
        )
        for i, swaps in plan.items()
    ]
    with _hooked(handles):
        yield model
