"""Count-based n-gram language models: the yardsticks of the tiny GPT (chapter 6).

An n-gram model predicts the next token from the previous n - 1 tokens alone, with
probabilities read off a table of counts from the training text. Unseen contexts are the
problem; the smoothing here is *interpolated absolute discounting* (Ney, Essen & Kneser):

    P_n(c | h) = (max(N(h, c) - D, 0) + D * U(h) * P_{n-1}(c | h')) / N(h)

where N(h, c) counts context h followed by c, N(h) counts h, U(h) is the number of distinct
tokens seen after h, and h' is h without its oldest token. A context never seen in training
falls back to P_{n-1}. The bottom of the ladder is the add-one unigram (`unigram_loss`, the
baseline of chapter 6's training curves). Every probability is > 0 and each row sums to 1.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ._checks import positive_int, tensor

__all__ = ["ngram_losses", "unigram_loss"]


def _codes(ids: np.ndarray, n: int, vocab_size: int) -> np.ndarray:
    """Each window of n consecutive ids as one base-`vocab_size` integer: (len(ids) - n + 1,)."""
    m = len(ids) - n + 1
    code = np.zeros(m, dtype=np.int64)
    for j in range(n):  # oldest token first, so code // vocab_size is the context
        code = code * vocab_size + ids[j : j + m]
    return code


def _lookup(table: np.ndarray, counts: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """counts[i] where table[i] == key, 0 for keys not in the (sorted) table."""
    pos = np.searchsorted(table, keys).clip(max=len(table) - 1)
    return np.where(table[pos] == keys, counts[pos], 0)


def ngram_losses(
    train_data: Tensor,
    val_data: Tensor,
    vocab_size: int,
    max_n: int = 4,
    discount: float = 0.75,
) -> list[float]:
    """Cross-entropy (nats per token) on val_data of the 1-, 2-, ..., max_n-gram models
    counted on train_data -> list of max_n floats, element n - 1 for the n-gram.

    All orders score the same positions: every token of val_data from index max_n - 1 on,
    each with its own preceding tokens of val_data as the context.

    Chapters 6 and 8.
    """
    tensor("train_data", train_data, "(N,) tensor of token ids", dims=(1,))
    tensor("val_data", val_data, "(N,) tensor of token ids", dims=(1,))
    for name, ids in (("train_data", train_data), ("val_data", val_data)):
        if (
            ids.dtype.is_floating_point
            or ids.dtype.is_complex
            or ids.dtype == torch.bool
        ):
            raise TypeError(
                f"{name} must hold integer token ids, got dtype {ids.dtype}"
            )
    positive_int("vocab_size", vocab_size)
    positive_int("max_n", max_n)
    if not 0.0 < discount < 1.0:
        raise ValueError(f"discount must be in (0, 1), got {discount!r}")
    if vocab_size**max_n >= 2**62:
        raise ValueError(
            f"max_n={max_n} is too large for vocab_size={vocab_size}: the "
            "n-gram codes would not fit in 64-bit integers"
        )
    train = train_data.detach().cpu().numpy().astype(np.int64)
    val = val_data.detach().cpu().numpy().astype(np.int64)
    for name, arr in (("train_data", train), ("val_data", val)):
        if len(arr) and (arr.min() < 0 or arr.max() >= vocab_size):
            raise ValueError(
                f"{name} must hold token ids in [0, {vocab_size}), got "
                f"{arr.min()} .. {arr.max()}"
            )
    if len(train) < max_n or len(val) < max_n:
        raise ValueError(
            f"train_data and val_data need at least max_n={max_n} tokens, got "
            f"{len(train)} and {len(val)}"
        )

    start = max_n - 1  # the first scored position of val_data
    counts = np.bincount(train, minlength=vocab_size) + 1.0  # add-one unigram
    p = (counts / counts.sum())[val[start:]]  # (M,): probability of each scored token
    losses = [float(-np.log(p).mean())]
    for n in range(2, max_n + 1):
        grams, n_gram = np.unique(_codes(train, n, vocab_size), return_counts=True)
        # U(h)
        contexts, n_distinct = np.unique(grams // vocab_size, return_counts=True)
        n_context = np.bincount(
            np.searchsorted(contexts, grams // vocab_size), weights=n_gram
        )
        # (M,): context and next token
        query = _codes(val[start - n + 1 :], n, vocab_size)
        n_hc = _lookup(grams, n_gram, query)  # N(h, c)
        n_h = _lookup(contexts, n_context, query // vocab_size)  # N(h)
        u_h = _lookup(contexts, n_distinct, query // vocab_size)  # U(h)
        seen = n_h > 0
        safe = np.where(seen, n_h, 1.0)
        p = np.where(
            seen, (np.maximum(n_hc - discount, 0.0) + discount * u_h * p) / safe, p
        )
        losses.append(float(-np.log(p).mean()))
    return losses


def unigram_loss(train_data: Tensor, val_data: Tensor, vocab_size: int) -> float:
    """Cross-entropy on val_data of a model that ignores context: token frequencies of
    train_data, add-one smoothed (chapter 6). Any useful language model must beat it. The
    first rung of `ngram_losses`."""
    return ngram_losses(train_data, val_data, vocab_size, max_n=1)[0]
