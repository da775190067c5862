"""The exercises' pools of variants (`tools.exercise_variants` says what a pool holds and
what the tool does with it): per exercise, its reserved variant (the book's), the roster tasks,
and each task's text edits of the master and its parameters.

Exercise 1, question 2: the mask's convention (the book's: True means "may attend"; the
roster's: True means "must not attend", or a float bias added to the scores).
Exercise 4, question 1: which mask a decoder needs (the book's: the causal mask of a whole
sequence; the roster's: a sliding window, or new tokens after a cache).
Exercise 5, question 1: which frequencies the sinusoidal table turns at (the book's: the
original transformer's, base 10000; the roster's: any base, or NTK-aware stretched rates),
with the width of the student's example.
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

# exercise 5, question 1: the frequencies (the book's: base 10000)
_RATES = """**the original transformer's, base 10000**. Write `angle_rates(d_model)`: a 1-D
NumPy array holding $\\omega_0, \\omega_1, \\dots$, one frequency for each pair of columns, so
$\\lceil d_{\\text{model}} / 2 \\rceil$ values in all (4 for $d_{\\text{model}} = 8$, and also 4
for $d_{\\text{model}} = 7$).

Read the exponent carefully: it is $2i / d_{\\text{model}}$, where $i$ counts *pairs*."""
_DEFAULT = """The default keeps the original transformer's rates, the ones questions 2 to 4 use:
`angle_rates(d_model)` must still give $10000^{-2i / d_{\\text{model}}}$."""
_BASE = f"""**the frequencies for any base**. The base 10000 is a setting, not a law: RoPE models
use others (Llama 3 uses 500,000), and "NTK-aware" scaling (chapter 5) raises it to stretch a
trained model's context. Write `angle_rates(d_model, base=10000.0)`: a 1-D NumPy array holding
$\\omega_i = \\text{{base}}^{{-2i / d_{{\\text{{model}}}}}}$, one frequency for each pair of columns, so
$\\lceil d_{{\\text{{model}}}} / 2 \\rceil$ values in all (4 for $d_{{\\text{{model}}}} = 8$, and also 4
for $d_{{\\text{{model}}}} = 7$). {_DEFAULT}

Read the exponent carefully: it is $2i / d_{{\\text{{model}}}}$, where $i$ counts *pairs*."""
_STRETCH = f"""**rates stretched for a longer context**. "NTK-aware" scaling (chapter 5) raises the
base so that the fastest pair keeps its rate and the slowest turns `stretch` times more
slowly, the pairs in between stretched geometrically: with $n = \\lceil d_{{\\text{{model}}}} / 2
\\rceil$ pairs, $\\omega_i = 10000^{{-2i / d_{{\\text{{model}}}}}} \\cdot \\text{{stretch}}^{{-i / (n - 1)}}$, so
$\\omega_0 = 1$ and the last rate is `stretch` times smaller than the original transformer's (a
single pair, $n = 1$, keeps $\\omega_0 = 1$). Write `angle_rates(d_model, stretch=1.0)`: a 1-D
NumPy array holding $\\omega_0, \\omega_1, \\dots$, one frequency for each pair of columns, so
$n$ values in all (4 for $d_{{\\text{{model}}}} = 8$, and also 4 for $d_{{\\text{{model}}}} = 7$).
{_DEFAULT}

Read the exponents carefully: $2i / d_{{\\text{{model}}}}$ and $i / (n - 1)$, where $i$ counts
*pairs*."""
_RATES_DEF = (
    'def angle_rates(d_model):\n    """One frequency per pair of columns, as an array of shape '
    '(ceil(d_model / 2),)."""'
)
_RATES_RETURN = "    return 1.0 / 10000.0 ** (two_i / d_model)\n"
_WIDTH = {"width": [9, 512]}  # the width of the student's example

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
    "ex05_positional": {
        "exercise": "ex05_positional",
        # the book's notebook and worked solutions: base 10000, the example at width 8
        "reserved": {"task": "fixed", "width": 8},
        "roster": ["base", "stretch"],
        "questions": ["q1"],
        # both keep angle_rates(d_model) at the book's rates (the default), which questions
        # 2-4 call: only question 1 changes
        "tasks": {
            "fixed": {"edits": [], "params": {"width": [8, 8]}},
            "base": {
                "edits": [
                    [_RATES, _BASE],
                    [
                        _RATES_DEF,
                        'def angle_rates(d_model, base=10000.0):\n    """One frequency per '
                        'pair of columns for the base `base`, shape (ceil(d_model / 2),)."""',
                    ],
                    [_RATES_RETURN, "    return 1.0 / base ** (two_i / d_model)\n"],
                ],
                "params": {"base": [20_000, 1_000_000], **_WIDTH},
            },
            "stretch": {
                "edits": [
                    [_RATES, _STRETCH],
                    [
                        _RATES_DEF,
                        'def angle_rates(d_model, stretch=1.0):\n    """One frequency per '
                        "pair of columns, the slowest stretch times slower, shape "
                        '(ceil(d_model / 2),)."""',
                    ],
                    [
                        _RATES_RETURN,
                        "    i, last = two_i / 2, max(len(two_i) - 1, 1)  # pair i; the slowest\n"
                        "    return 1.0 / 10000.0 ** (two_i / d_model) / stretch ** (i / last)\n",
                    ],
                ],
                "params": {"stretch": [2, 64], **_WIDTH},
            },
        },
    },
}
