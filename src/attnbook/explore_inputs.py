"""What an attention view (`attnbook.explore`, chapters 1, 3, 6, 7, 9, 10) accepts: the
weights' shapes and values, the token lists and the layer and head names, each checked, so
that a wrong argument fails with an error that names it before any page is written.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["MAX_WEIGHTS", "as_weights", "axis_names", "tokens_of", "layer_tokens"]

#: At most this many weights in one view: keeps the page's HTML well under 200 KB.
MAX_WEIGHTS = 40_000
#: How far above 1 a weight or a row's sum may be (float rounding of a softmax).
_SLACK = 1e-3


def as_weights(weights: object) -> np.ndarray:
    """The weights as a float64 (layers, heads, T_q, T_k) array, checked (chapter 1's
    view and every later one)."""
    if isinstance(weights, torch.Tensor):
        if not weights.dtype.is_floating_point:
            raise TypeError(
                f"weights must hold floating-point numbers, got {weights.dtype}"
            )
        weights = weights.detach().cpu().double().numpy()
    if not isinstance(weights, np.ndarray):
        raise TypeError(
            "weights must be a torch.Tensor or numpy array of shape (T_q, T_k), "
            f"(heads, T_q, T_k) or (layers, heads, T_q, T_k), got {type(weights).__name__}"
        )
    if not np.issubdtype(weights.dtype, np.floating):
        raise TypeError(
            f"weights must hold floating-point numbers, got {weights.dtype}"
        )
    w = weights.astype(np.float64)
    if w.ndim not in (2, 3, 4):
        raise ValueError(
            "weights must have shape (T_q, T_k), (heads, T_q, T_k) or "
            f"(layers, heads, T_q, T_k), got {w.shape}"
        )
    w = w.reshape((1,) * (4 - w.ndim) + w.shape)
    if 0 in w.shape:
        raise ValueError(f"weights must not be empty, got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights hold NaN or infinite values")
    if w.min() < 0 or w.max() > 1 + _SLACK:
        raise ValueError(
            "weights must lie in [0, 1] (attention weights after the softmax), got values "
            f"from {w.min():.4g} to {w.max():.4g}: pass the weights, not the scores"
        )
    sums = w.sum(-1)
    if sums.max() > 1 + _SLACK:
        raise ValueError(
            f"each query's weights must sum to at most 1, a row sums to {sums.max():.4g}: "
            "is the last axis the keys?"
        )
    if w.size > MAX_WEIGHTS:
        raise ValueError(
            f"{w.size} weights (shape {w.shape}) are too many for one view (at most "
            f"{MAX_WEIGHTS}): show fewer tokens, layers or heads"
        )
    return w


def axis_names(what: str, names: Sequence[str] | None, n: int) -> list[str]:
    """The `n` names of the layers or heads (`what`): "layer 0", ... by default;
    chapters 3, 6 and 10 name them."""
    if names is None:
        return [f"{what} {i}" for i in range(n)]
    if isinstance(names, str) or not all(isinstance(s, str) for s in names):
        raise TypeError(f"{what}_names must be a sequence of strings, got {names!r}")
    if len(names) != n:
        raise ValueError(f"{len(names)} {what}_names for {n} {what}s in the weights")
    return list(names)


def tokens_of(what: str, tokens: object, n: int, axis: str) -> list[str]:
    """`tokens` as a list of `n` strings, one per query or key (`axis`) of the weights
    (chapter 1)."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(
            f"{what} must be a list of strings, one per token, got {type(tokens).__name__}"
        )
    if not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"{what} must all be strings, got {list(tokens)[:5]!r}...")
    if len(tokens) != n:
        raise ValueError(f"{len(tokens)} {what} for {n} {axis} in the weights")
    return list(tokens)


def layer_tokens(tokens: object, n_layer: int, n: int) -> list[list[str]] | None:
    """One token list per layer when `tokens` is a list of lists, checked; else None
    (chapter 10's tokens, shifted by a layer)."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        return None  # `tokens_of` names the problem
    lists = [t for t in tokens if isinstance(t, Sequence) and not isinstance(t, str)]
    if not lists:
        return None
    if len(lists) != len(tokens):
        raise TypeError("tokens must be all strings or all lists of strings")
    if len(tokens) != n_layer:
        raise ValueError(
            f"{len(tokens)} token lists for {n_layer} layers in the weights: pass one "
            "list per layer"
        )
    per_layer = [
        tokens_of(f"tokens[{l}]", t, n, "queries") for l, t in enumerate(tokens)
    ]
    breaks = {tuple(i for i, t in enumerate(seq) if t == "\n") for seq in per_layer}
    if len(breaks) > 1:
        raise ValueError("the token lists must put line breaks at the same places")
    return per_layer
