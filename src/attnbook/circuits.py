"""Taking a trained induction circuit apart (chapter 10).

The scores of `attnbook.induction` say where heads look; the functions here test *how* the
two layers of `attnbook.attn_only.AttnOnlyTransformer` work together:

    path_ablation       layer 1 recomputed with one layer-0 head's output removed from the
                        input of its queries, keys or values only (any subset of "qkv"),
                        kept everywhere else: which of the three paths the circuit uses
    token_k_circuit     (V, V) the K-composition circuit token by token: the attention score
                        a layer-1 head gives from a query token to a key into which a
                        layer-0 head wrote another token
    ov_circuit          (V, V) W_U W_OV W_E^T of one head: the logits it adds per token it
                        attends to
    top1_diagonal       the fraction of tokens for which such a matrix's largest entry is
                        the token itself (chance: 1 / number of tokens)
    repeat_loss_grid    the loss on a repeat of n tokens placed after m random ones
    constant_writer     the same model written differently: one head also writes a fixed
                        vector, which the unembedding subtracts again (zero and mean
                        ablation then disagree about it)
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import integer, positive_int, tensor
from .attn_only import AttnOnlyTransformer
from .hooks import attention_layers, head_outputs
from .induction import BOS, ov_matrix, qk_matrix

__all__ = [
    "path_ablation",
    "token_k_circuit",
    "ov_circuit",
    "top1_diagonal",
    "repeat_loss_grid",
    "constant_writer",
]

PATHS = "qkv"


def _two_layers(model: object) -> AttnOnlyTransformer:
    if not isinstance(model, AttnOnlyTransformer):
        raise TypeError(
            f"model must be an AttnOnlyTransformer, got {type(model).__name__}"
        )
    if model.config.n_layer != 2:
        raise ValueError(f"model must have 2 layers, got {model.config.n_layer}")
    return model


def _head_index(name: str, head: object, n_head: int) -> int:
    head = integer(name, head)
    if not 0 <= head < n_head:
        raise ValueError(f"{name} must be in [0, {n_head}), got {head}")
    return head


@torch.no_grad()
def path_ablation(
    model: AttnOnlyTransformer, idx: Tensor, head: int, paths: str
) -> tuple[Tensor, Tensor]:
    """Logits (B, T, V) and layer 1's attention weights (B, H, T, T) of a two-layer model
    when what layer-0 head `head` wrote is removed from the inputs of layer 1's queries,
    keys and/or values named in `paths` ("" removes nothing, "qkv" all three), and kept in
    the residual stream that reaches the unembedding.

    Chapter 10.
    """
    model = _two_layers(model)
    head = _head_index("head", head, model.config.n_head)
    if not isinstance(paths, str) or set(paths) - set(PATHS):
        raise ValueError(f"paths must be letters of {PATHS!r}, got {paths!r}")
    layer0, layer1 = attention_layers(model)
    x0 = model.residual(idx)  # (B, T, d_model)
    out0, _ = layer0(x0, is_causal=True, need_weights=False)
    x1 = x0 + out0
    z = head_outputs(model, idx)[0][:, :, head]  # (B, T, d_head)
    cols = slice(head * layer0.d_k, (head + 1) * layer0.d_k)
    wrote = (
        z @ layer0.W_o.weight[:, cols].T
    )  # (B, T, d_model): the head's share of out0
    q, k, v = (x1 - wrote if p in paths else x1 for p in PATHS)
    out1, weights = layer1(q, k, v, is_causal=True, need_weights=True)
    return model.unembed(x1 + out1), weights


@torch.no_grad()
def token_k_circuit(model: AttnOnlyTransformer, reader: int, writer: int) -> Tensor:
    """(V, V): entry [a, b] = W_E[a] W_QK^{1,reader} W_OV^{0,writer} W_E[b]^T, the score
    (before the 1/sqrt(d_head) scaling) that head 1.reader gives from a query holding token
    a to a key into which head 0.writer wrote token b. Induction wants its diagonal largest:
    the query looks for the key whose previous token is its own.

    Chapter 10.
    """
    model = _two_layers(model)
    H = model.config.n_head
    reader, writer = _head_index("reader", reader, H), _head_index("writer", writer, H)
    W_E = model.tok_emb.weight  # (V, d_model)
    layer0, layer1 = attention_layers(model)
    qk = qk_matrix(layer1, reader)
    return W_E @ qk @ ov_matrix(layer0, writer) @ W_E.T


@torch.no_grad()
def ov_circuit(model: AttnOnlyTransformer, layer: int, head: int) -> Tensor:
    """(V, V): entry [out, in] = the logit of token `out` that head layer.head adds when it
    attends to a position holding token `in` (W_U W_OV W_E^T, without positions).

    Chapter 10.
    """
    if not isinstance(model, AttnOnlyTransformer):
        raise TypeError(
            f"model must be an AttnOnlyTransformer, got {type(model).__name__}"
        )
    layer = _head_index("layer", layer, model.config.n_layer)
    head = _head_index("head", head, model.config.n_head)
    ov = ov_matrix(attention_layers(model)[layer], head)
    return model.unembed.weight @ ov @ model.tok_emb.weight.T


def top1_diagonal(M: Tensor, skip: tuple[int, ...] = (BOS,)) -> float:
    """M (V, V) with one row per item: the fraction of rows r (r not in `skip`) whose
    largest entry among the columns not in `skip` is M[r, r]. Chance is 1 / (V - len(skip)).

    Chapter 10.
    """
    M = tensor("M", M, "(V, V)", dims=(2,))
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be square, got {tuple(M.shape)}")
    keep = torch.tensor([t for t in range(M.shape[0]) if t not in skip])
    if len(keep) == 0:
        raise ValueError("top1_diagonal needs at least one token outside `skip`")
    sub = M[keep][:, keep]  # (V', V')
    return float((sub.argmax(dim=1) == torch.arange(len(keep))).float().mean())


@torch.no_grad()
def repeat_loss_grid(
    model: nn.Module,
    periods: list[int],
    prefixes: list[int],
    vocab_size: int,
    batch_size: int = 256,
    generator: torch.Generator | None = None,
) -> Tensor:
    """(len(periods), len(prefixes)): the mean loss of predicting x_2 .. x_n of the second
    copy in BOS, m random tokens, x_1 .. x_n, x_1 .. x_n (n a period, m a prefix; tokens
    from 1 .. V - 1), NaN where 1 + m + 2n exceeds the model's block_size.

    Chapter 10.
    """
    block = getattr(getattr(model, "config", None), "block_size", None)
    if not isinstance(block, int):
        raise TypeError("model must have a config with an int block_size")
    batch_size, vocab_size = (
        positive_int("batch_size", batch_size),
        positive_int("vocab_size", vocab_size),
    )
    grid = torch.full((len(periods), len(prefixes)), float("nan"))
    for i, n in enumerate(periods):
        for j, m in enumerate(prefixes):
            n = positive_int("period", n)
            m = positive_int("prefix", m, allow_zero=True)
            if n < 2 or 1 + m + 2 * n > block:
                continue
            x = torch.randint(1, vocab_size, (batch_size, m + n), generator=generator)
            bos = torch.full((batch_size, 1), BOS, dtype=torch.long)
            idx = torch.cat([bos, x, x[:, m:]], dim=1)  # (B, 1 + m + 2n)
            logits = model(idx)[0]
            start = 1 + m + n  # the second copy's x_1; predict x_2 .. x_n
            pred = logits[:, start : start + n - 1]  # (B, n - 1, V)
            grid[i, j] = F.cross_entropy(pred.transpose(1, 2), idx[:, start + 1 :])
    return grid


@torch.no_grad()
def constant_writer(
    model: AttnOnlyTransformer, head: int, vector: Tensor
) -> AttnOnlyTransformer:
    """A copy of `model` with the same logits in which head `head` of the last layer also
    writes W_O^head `vector` at every position (`vector` (d_head,) added to its values, whose
    weights sum to 1), and the unembedding subtracts what that adds to the logits (a bias).

    Chapter 10.
    """
    if not isinstance(model, AttnOnlyTransformer):
        raise TypeError(
            f"model must be an AttnOnlyTransformer, got {type(model).__name__}"
        )
    out = copy.deepcopy(model)
    attn = attention_layers(out)[-1]
    head = _head_index("head", head, attn.n_head)
    vector = tensor("vector", vector, "(d_head,)", dims=(1,))
    if vector.shape[0] != attn.d_k:
        raise ValueError(
            f"vector must be (d_head={attn.d_k},), got {tuple(vector.shape)}"
        )
    bias = torch.zeros(attn.qkv_weight.shape[0])
    start = 2 * attn.d_model + head * attn.d_k  # the value rows of this head
    bias[start : start + attn.d_k] = vector
    attn.qkv_bias = nn.Parameter(bias)
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)
    written = attn.W_o.weight[:, cols] @ vector  # (d_model,)
    unembed = nn.Linear(attn.d_model, out.config.vocab_size, bias=True)
    unembed.weight.copy_(out.unembed.weight)
    unembed.bias.copy_(-out.unembed.weight @ written)
    out.unembed = unembed
    return out
