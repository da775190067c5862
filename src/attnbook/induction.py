"""Induction heads: the data that teaches them and the scores that find them (chapter 10).

Heads and layers are numbered from 0, as in the code and the circuits papers: "head 1.3" is
head 3 of layer 1. Token 0 is the start token (BOS); random tokens are drawn from 1 .. V - 1.

Data
    repeating_batch   training sequences: BOS, random tokens, then from a random position a
                      segment of random length n repeats to the end (period n)
    repeated_tokens   the evaluation batch of Olsson et al. (2022): [BOS] x_1..x_n x_1..x_n

Scores (weights are attention weights (B, H, T, T) of one layer, e.g. from
`attnbook.hooks.attention_weights`; each returns one number per head, (H,))
    previous_token_score   mean weight from each token to the one before it
    induction_score        mean weight from each token of the second copy to the token after
                           its first occurrence: query i, key i - n + 1, the diagonal at
                           offset 1 - n (not -n, which is the first occurrence itself)
    copying_score          from the OV circuit W_U W_OV W_E: sum of its eigenvalues over the
                           sum of their absolute values, +1 = a pure copier
    composition_score      ||A B||_F / (||A||_F ||B||_F) (Elhage et al., 2021); with
                           k_composition, how much a layer-1 head's keys read a layer-0 head
Losses
    loss_per_position      cross-entropy per position, averaged over the batch, (T - 1,)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import floating, integer, positive_int, tensor
from .multihead import MultiHeadAttention

__all__ = [
    "BOS",
    "repeating_batch",
    "repeated_tokens",
    "previous_token_score",
    "induction_score",
    "loss_per_position",
    "ov_matrix",
    "qk_matrix",
    "copying_score",
    "composition_score",
    "k_composition",
    "in_context_score",
    "copy_losses",
]

BOS = 0  # the start token's id


def _vocab(vocab_size: int) -> int:
    if positive_int("vocab_size", vocab_size) < 3:
        raise ValueError(
            f"vocab_size must be >= 3 (BOS and 2 tokens), got {vocab_size}"
        )
    return vocab_size


def repeating_batch(
    batch_size: int,
    seq_len: int,
    vocab_size: int,
    min_period: int,
    max_period: int,
    generator: torch.Generator | None = None,
) -> Tensor:
    """(B, seq_len) token ids: BOS, random tokens 1..V-1, and from a random start s >= 1 a
    segment of length n, drawn per row from min_period..max_period, repeated to the end, so
    that token t = token t - n for every t >= s + n. Each row holds two full copies at least.
    min_period == max_period is the fixed-length data of chapter 10's trap."""
    B, T, V = (
        positive_int("batch_size", batch_size),
        positive_int("seq_len", seq_len),
        _vocab(vocab_size),
    )
    lo, hi = (
        positive_int("min_period", min_period),
        positive_int("max_period", max_period),
    )
    if lo > hi or 1 + 2 * hi > T:
        raise ValueError(
            f"need 1 <= min_period <= max_period and 1 + 2 * max_period <= seq_len, "
            f"got {lo}, {hi} and seq_len={T}"
        )
    x = torch.randint(1, V, (B, T), generator=generator)
    x[:, 0] = BOS
    n = torch.randint(lo, hi + 1, (B, 1), generator=generator)  # (B, 1) periods
    room = T - 2 * n  # (B, 1): starts 1 .. T - 2n leave two full copies
    start = 1 + (torch.rand(B, 1, generator=generator) * room).long()  # (B, 1)
    t = torch.arange(T)  # (T,)
    src = torch.where(t >= start + n, start + (t - start) % n, t)  # (B, T)
    return x.gather(1, src)


def repeated_tokens(
    batch_size: int,
    n: int,
    vocab_size: int,
    generator: torch.Generator | None = None,
    bos: bool = True,
) -> Tensor:
    """(B, bos + 2n): [BOS] x_1 .. x_n x_1 .. x_n with x drawn uniformly from 1..V-1.

    Chapter 10.
    """
    B, n, V = (
        positive_int("batch_size", batch_size),
        positive_int("n", n),
        _vocab(vocab_size),
    )
    x = torch.randint(1, V, (B, n), generator=generator)  # (B, n)
    parts = [torch.full((B, 1), BOS, dtype=torch.long)] if bos else []
    return torch.cat([*parts, x, x], dim=1)


def _weights(weights: object) -> Tensor:
    w = tensor("weights", weights, "(B, H, T, T)", dims=(4,))
    floating("weights", w)
    if w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be square in T, got {tuple(w.shape)}")
    return w


def previous_token_score(weights: Tensor) -> Tensor:
    """(B, H, T, T) -> (H,): mean over the batch and queries i = 1..T-1 of weight[i, i-1].

    Chapter 10.
    """
    w = _weights(weights)
    if w.shape[-1] < 2:
        raise ValueError("previous_token_score needs T >= 2")
    return w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1))  # (H,)


def induction_score(weights: Tensor, n: int, bos: bool = True) -> Tensor:
    """(B, H, T, T) on `repeated_tokens(..., n, bos=bos)` -> (H,): mean over the batch and
    the n queries of the second copy (i = bos + n .. bos + 2n - 1) of weight[i, i - n + 1],
    the token after the query's first occurrence. The key of the last query is the first
    token of the second copy, which does follow x_n.

    Chapter 10.
    """
    w, n = _weights(weights), positive_int("n", n)
    T = w.shape[-1]
    if T != int(bos) + 2 * n:
        raise ValueError(
            f"weights are for T={T} tokens, but a repeated batch of n={n} has "
            f"{int(bos) + 2 * n} (bos={bos})"
        )
    stripe = w.diagonal(offset=1 - n, dim1=-2, dim2=-1)  # (B, H, T - n + 1): i >= n - 1
    return stripe[..., int(bos) + 1 :].mean(dim=(0, -1))  # queries i >= bos + n


def loss_per_position(model: nn.Module, idx: Tensor) -> Tensor:
    """(B, T) -> (T - 1,): the mean over the batch of the loss of predicting token t + 1
    from tokens 0..t, for t = 0..T-2 (a model returning (logits, loss)).

    Chapter 10.
    """
    idx = tensor("idx", idx, "(B, T)", dims=(2,))
    if idx.shape[1] < 2:
        raise ValueError("loss_per_position needs T >= 2")
    with torch.no_grad():
        logits = model(idx)[0][:, :-1]  # (B, T - 1, V)
        losses = F.cross_entropy(logits.transpose(1, 2), idx[:, 1:], reduction="none")
    return losses.mean(0)  # (T - 1,)


def _head(attn: MultiHeadAttention, head: int) -> slice:
    if not isinstance(attn, MultiHeadAttention):
        raise TypeError(f"attn must be a MultiHeadAttention, got {type(attn).__name__}")
    head = integer("head", head)
    if not 0 <= head < attn.n_head:
        raise ValueError(f"head must be in [0, {attn.n_head}), got {head}")
    return slice(head * attn.d_k, (head + 1) * attn.d_k)


def ov_matrix(attn: MultiHeadAttention, head: int) -> Tensor:
    """W_OV = W_O^h W_V^h (d_model, d_model): what the head writes for a residual vector it
    attends to (column convention: out = W_OV x).

    Chapter 10.
    """
    rows = _head(attn, head)
    return attn.W_o.weight[:, rows] @ attn.W_v.weight[rows]  # (d, d_k) @ (d_k, d)


def qk_matrix(attn: MultiHeadAttention, head: int) -> Tensor:
    """W_QK = W_Q^hT W_K^h (d_model, d_model): score(query x_q, key x_k) = x_q^T W_QK x_k
    (before the 1/sqrt(d_head) scaling).

    Chapter 10.
    """
    rows = _head(attn, head)
    return attn.W_q.weight[rows].T @ attn.W_k.weight[rows]  # (d, d_k) @ (d_k, d)


@torch.no_grad()
def copying_score(
    attn: MultiHeadAttention, head: int, W_E: Tensor, W_U: Tensor
) -> float:
    """Eigenvalue summary of the OV circuit W_U W_OV W_E^T (V, V), the logits the head adds
    for each token it attends to: sum(lambda) / sum(|lambda|), in [-1, 1]. Its non-zero
    eigenvalues are those of the small (d_head, d_head) W_V W_E^T W_U W_O, used here.
    W_E: (V, d_model) token embedding, W_U: (V, d_model) unembedding.

    Chapter 10.
    """
    rows = _head(attn, head)
    for name, M in (("W_E", W_E), ("W_U", W_U)):
        tensor(name, M, "(V, d_model)", dims=(2,))
        if M.shape[1] != attn.d_model:
            raise ValueError(
                f"{name} must be (V, d_model={attn.d_model}), got {tuple(M.shape)}"
            )
    small = attn.W_v.weight[rows] @ W_E.T @ W_U @ attn.W_o.weight[:, rows]
    eig = torch.linalg.eigvals(small.double())  # (d_head,) complex
    return float(eig.sum().real / eig.abs().sum())


def composition_score(A: Tensor, B: Tensor) -> float:
    """||A B||_F / (||A||_F ||B||_F) for A (m, k), B (k, n): how much of what B writes A
    reads, in [0, 1] (Elhage et al., 2021).

    Chapter 10.
    """
    A = tensor("A", A, "(m, k)", dims=(2,))
    B = tensor("B", B, "(k, n)", dims=(2,))
    if A.shape[1] != B.shape[0]:
        raise ValueError(
            f"A @ B needs A (m, k), B (k, n), got {tuple(A.shape)}, {tuple(B.shape)}"
        )
    norms = torch.linalg.norm(A) * torch.linalg.norm(B)
    if norms == 0:
        raise ValueError("composition_score is undefined for a zero matrix")
    return float(torch.linalg.norm(A @ B) / norms)


@torch.no_grad()
def k_composition(reader: MultiHeadAttention, writer: MultiHeadAttention) -> Tensor:
    """(H_reader, H_writer): composition_score(W_QK^r, W_OV^w) for every pair of a head r of
    the later layer `reader` and a head w of the earlier layer `writer`: how much the keys
    of r are built from what w writes (K-composition).

    Chapter 10.
    """
    return torch.tensor(
        [
            [
                composition_score(qk_matrix(reader, r), ov_matrix(writer, w))
                for w in range(writer.n_head)
            ]
            for r in range(reader.n_head)
        ]
    )


def in_context_score(losses: Tensor, early: int = 4, late: int = 4) -> float:
    """losses (T - 1,) from `loss_per_position` -> mean of the last `late` positions minus
    mean of the first `early`: negative when the context helps (Olsson et al.'s
    "in-context learning score", loss late in the context minus loss early).

    Chapter 10.
    """
    losses = tensor("losses", losses, "(T - 1,)", dims=(1,))
    early, late = positive_int("early", early), positive_int("late", late)
    if early + late > losses.shape[0]:
        raise ValueError(
            f"early + late = {early + late} positions, but losses has {losses.shape[0]}"
        )
    return float(losses[-late:].mean() - losses[:early].mean())


def copy_losses(losses: Tensor, n: int, bos: bool = True) -> tuple[float, float]:
    """losses (bos + 2n - 1,) of `loss_per_position` on `repeated_tokens` -> the mean loss
    of predicting x_2..x_n in the first copy and in the second (n - 1 positions each).

    Chapter 10.
    """
    losses, n = tensor("losses", losses, "(T - 1,)", dims=(1,)), positive_int("n", n)
    if n < 2 or losses.shape[0] != int(bos) + 2 * n - 1:
        raise ValueError(
            f"losses must have bos + 2n - 1 = {int(bos) + 2 * n - 1} entries with n >= 2, "
            f"got {losses.shape[0]} (n={n})"
        )
    b = int(bos)
    first = losses[b : b + n - 1]  # predicting x_2 .. x_n from x_1 .. x_{n-1}
    second = losses[b + n : b + 2 * n - 1]  # the same tokens, seen once before
    return float(first.mean()), float(second.mean())
