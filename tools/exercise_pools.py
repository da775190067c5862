"""The exercises' pools of variants (`tools.exercise_variants` says what a pool holds and
what the tool does with it): per exercise, its reserved variant (the book's), the roster tasks,
and each task's text edits of the master and its parameters.

Exercise 1, question 2: the mask's convention (the book's: True means "may attend"; the
roster's: True means "must not attend", or a float bias added to the scores).
Exercise 4, question 1: which mask a decoder needs (the book's: the causal mask of a whole
sequence; the roster's: a sliding window, or new tokens after a cache).
"""

from __future__ import annotations

from typing import Any

_ALLOW = """   **a boolean mask where True means "may attend"** (the convention of PyTorch's
   `scaled_dot_product_attention`): set the scores where the mask is False to $-\\infty$
   *before* the softmax;"""
_BLOCK = """   **a boolean mask where True means "must not attend"** (the convention of the boolean
   `attn_mask` of PyTorch's `nn.MultiheadAttention`): set the scores where the mask is True
   to $-\\infty$ *before* the softmax;"""
_BIAS = """   **a float mask that is added to the scaled scores** (the convention of a float
   `attn_mask` in PyTorch): $-\\infty$ where the query must not attend and, where it may, a
   finite shift of its score, 0 or not (a bias such as ALiBi's of chapter 5, which lowers the
   scores of distant keys); add it to the scores *before* the softmax;"""
_MASKED = "        scores = np.where(mask, scores, -np.inf)\n"
# exercise 4, question 1: which mask a decoder needs (the book's: a whole sequence)
_Q1 = """**the causal mask of a whole sequence**. Write `causal_mask(T)`: it returns a boolean tensor
of shape $(T, T)$ whose entry $(i, j)$ is `True` when query $i$ may attend to key $j$ in a
decoder, that is when key $j$ is not in the future of query $i$. Every token may attend to
itself."""
_WINDOW = """**a causal mask with a sliding window**, as some decoders use (Mistral 7B, the local layers
of Gemma 2): each query reads only its most recent positions. Write `causal_mask(T, window)`:
it returns a boolean tensor of shape $(T, T)$ whose entry $(i, j)$ is `True` when query $i$
may attend to key $j$, that is when key $j$ is not in the future of query $i$ **and** is one of
its `window` most recent positions, $i - \\text{window} < j \\le i$. Every token may attend to
itself; `window` is at least 1."""
_CACHE = """**the causal mask of new tokens after a cache**. A decoder that has kept the keys and values
of the first `past` tokens (a cache, as in question 4) computes the next $T$ tokens at once:
its queries are the positions $\\text{past}, \\dots, \\text{past} + T - 1$ and its keys all
$\\text{past} + T$ positions. Write `causal_mask(T, past)`: it returns a boolean tensor of shape
$(T, \\text{past} + T)$ whose entry $(i, j)$ is `True` when query $i$ (position past + i) may
attend to key $j$, that is when key $j$ is not in its future. Every token may attend to itself
and to every cached token; `past` may be 0."""
_DEF = 'def causal_mask(T):\n    """(T, T) boolean mask: True where query i may attend to key j."""'
_TRIL = "    return torch.ones(T, T, dtype=torch.bool).tril()\n"
_DEMO = "both = causal_mask(5) & padding_mask([3], 5)  # (1, 5, 5)"
_SEED = {"seed": [1, 999_999]}  # the example data's seed: the parameter of every task

POOLS: dict[str, dict[str, Any]] = {
    "ex01_attention": {
        "exercise": "ex01_attention",
        # the book's notebook and worked solutions: PyTorch's SDPA convention, seed 0
        "reserved": {"task": "allow", "seed": 0},
        "roster": ["block", "bias"],
        "questions": ["q2"],  # the questions whose task the variant changes
        # "bias"'s mask shifts allowed scores by finite values too: with 0 and -inf alone,
        # "block"'s solution, np.where(mask, -np.inf, scores), read it right (-inf is truthy)
        "tasks": {
            "allow": {"edits": [], "params": {"seed": [0, 0]}},
            "block": {
                "edits": [
                    [_ALLOW, _BLOCK],
                    [_MASKED, "        scores = np.where(mask, -np.inf, scores)\n"],
                ],
                "params": _SEED,
            },
            "bias": {
                "edits": [
                    [_ALLOW, _BIAS],
                    [_MASKED, "        scores = scores + mask\n"],
                ],
                "params": _SEED,
            },
        },
    },
    "ex04_masks": {
        "exercise": "ex04_masks",
        # the book's notebook and worked solutions: the causal mask of a whole sequence, seed 0
        "reserved": {"task": "causal", "seed": 0},
        "roster": ["window", "cache"],
        "questions": ["q1"],
        "tasks": {
            "causal": {"edits": [], "params": {"seed": [0, 0]}},
            "window": {
                "edits": [
                    [
                        "the causal mask\n\nWhich",
                        "the sliding-window causal mask\n\nWhich",
                    ],
                    [_Q1, _WINDOW],
                    [
                        _DEF,
                        'def causal_mask(T, window):\n    """(T, T) boolean mask: True where query i '
                        'may attend to key j, one of its window most recent."""',
                    ],
                    [
                        _TRIL,
                        "    causal = torch.ones(T, T, dtype=torch.bool).tril()  # keys 0..i\n"
                        "    return causal & ~causal.tril(-window)  # less the keys window or more behind\n",
                    ],
                    [
                        _DEMO,
                        "both = causal_mask(5, 2) & padding_mask([3], 5)  # (1, 5, 5): a window of 2",
                    ],
                ],
                "params": _SEED,
            },
            "cache": {
                "edits": [
                    [
                        "the causal mask\n\nWhich",
                        "the causal mask after a cache\n\nWhich",
                    ],
                    [_Q1, _CACHE],
                    [
                        _DEF,
                        'def causal_mask(T, past):\n    """(T, past + T) boolean mask: True where '
                        'query i (position past + i) may attend to key j."""',
                    ],
                    [
                        _TRIL,
                        "    return torch.ones(T, past + T, dtype=torch.bool).tril(diagonal=past)\n",
                    ],
                    [
                        _DEMO,
                        "both = causal_mask(5, 0) & padding_mask([3], 5)  # (1, 5, 5): no cached token",
                    ],
                ],
                "params": _SEED,
            },
        },
    },
}
