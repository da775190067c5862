"""The exercises' pools of variants (`tools.exercise_variants` says what a pool holds): per
exercise, its reserved variant (the book's), the roster tasks, each task's edits and parameters.

Exercise 1, question 2: the mask's convention (the book's: True means "may attend"; the
roster's: True means "must not attend", or a float bias added to the scores).
Exercise 4, question 1: which mask a decoder needs (the book's: the causal mask of a whole
sequence; the roster's: a sliding window, or new tokens after a cache).
Exercise 5, question 1: the sinusoidal table's frequencies (the book's: base 10000; the
roster's: any base, or NTK-aware stretched rates), with the width of the student's example.
Exercise 9, question 1: how a quantised cache lays out its codes (the book's: keys per
channel in groups of G tokens, each group quantised once complete; the roster's: KIVI's
keys, quantised R at a time, or per token in groups of G channels with the newest R kept).
Exercises 2, 3, 8 (`tools.exercise_pools_more`), 6, 7, 10, 11 (`_ex06`, ...): below."""

from __future__ import annotations

from typing import Any

from tools.exercise_pools_ex06 import POOL_EX06
from tools.exercise_pools_ex07 import POOL_EX07
from tools.exercise_pools_ex10 import POOL_EX10
from tools.exercise_pools_ex11 import POOL_EX11
from tools.exercise_pools_more import MORE_POOLS

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

# exercise 9, question 1: the cache's layout (the book's: keys per channel, groups of G
# tokens, each quantised once complete)
_LAYOUT = """How the cache lays out its codes is the task of your variant (the `VARIANT` cell above); in
yours, """
_ZERO = """A channel whose values in a group are all equal has $\\max x - \\min x = 0$: give
it the scale 1 (any positive number would do), so that its codes are 0 and it comes back
exactly."""
_KEYS = f"""keys per channel, in groups of G tokens

{_LAYOUT}**keys per channel in groups of $G$ tokens, each group quantised once it is
complete**. Write one function, `quantize_keys(k, bits, G)`, for `bits` of 2, 4 or 8. Of the
$T$ tokens, the first $nG$, with $n = \\lfloor T / G \\rfloor$, are quantised in $n$ groups of
$G$ **consecutive** tokens (group $j$ holds tokens $jG, \\dots, jG + G - 1$). A group has one
scale and one minimum per batch entry, head and **channel**, taken over its $G$ tokens. The
last $T - nG$ tokens (fewer than $G$, perhaps none) are the **residual**: a cache keeps them in
full precision until $G$ of them have arrived, then quantises them as one more group. Return
four tensors:

- `codes`: shape $(B, H, nG, d)$, dtype `torch.uint8`, each in $0 \\dots 2^b - 1$: the codes of
  the quantised tokens, in token order;
- `scale` and `low`: shape $(B, H, n, d)$, in the dtype of `k`; row $j$ belongs to group $j$;
- `residual`: shape $(B, H, T - nG, d)$, the last $T - nG$ keys as they are (a slice of `k`
  will do).

With $T < G$ nothing is quantised yet: `codes`, `scale` and `low` have 0 rows and the residual
is all of `k`. {_ZERO}"""
_WINDOW_KEYS = f"""keys per channel, quantised R at a time

{_LAYOUT}**KIVI's key cache: keys per channel in groups of $G$ tokens, kept in full
precision until $R$ of them have gathered**. Write one function, `quantize_keys(k, bits, G,
R)`, for `bits` of 2, 4 or 8 and a residual length `R` that is a multiple of `G`. The cache keeps
the newest keys in full precision until $R$ of them have arrived, then quantises those $R$ at
once. So of the $T$ tokens the first $mR$, with $m = \\lfloor T / R \\rfloor$, are quantised, in
$n = mR / G$ groups of $G$ **consecutive** tokens (group $j$ holds tokens $jG, \\dots, jG + G -
1$), and the last $T - mR$ tokens (fewer than $R$, perhaps none) are the **residual**. A group
has one scale and one minimum per batch entry, head and **channel**, taken over its $G$ tokens.
Return four tensors:

- `codes`: shape $(B, H, mR, d)$, dtype `torch.uint8`, each in $0 \\dots 2^b - 1$: the codes of
  the quantised tokens, in token order;
- `scale` and `low`: shape $(B, H, n, d)$, in the dtype of `k`; row $j$ belongs to group $j$;
- `residual`: shape $(B, H, T - mR, d)$, the last $T - mR$ keys as they are (a slice of `k`
  will do).

With $T < R$ nothing is quantised yet: `codes`, `scale` and `low` have 0 rows and the residual
is all of `k`. {_ZERO}"""
_TOKEN = f"""per token, in groups of G channels

{_LAYOUT}**per token in groups of $G$ channels, the newest $R$ tokens kept in full
precision**: the layout KIVI gives the values, and the per-token layout chapter 9 compares keys
in. Write one function, `quantize_keys(k, bits, G, R)`, for `bits` of 2, 4 or 8, a width $d$
that is a multiple of `G` and a window `R` of 0 or more. The newest $R$ tokens (all $T$ when
$T \\le R$) are the **residual**, kept in full precision in a sliding window; each of the
$m = \\max(T - R, 0)$ older tokens is quantised on its own: its $d$ channels fall into $d / G$
groups of $G$ **consecutive** channels (group $j$ holds channels $jG, \\dots, jG + G - 1$), and
a group has one scale and one minimum per batch entry, head and **token**, taken over its $G$
channels. Return four tensors:

- `codes`: shape $(B, H, m, d)$, dtype `torch.uint8`, each in $0 \\dots 2^b - 1$: the codes of
  the older tokens, in token and channel order;
- `scale` and `low`: shape $(B, H, m, d / G)$, in the dtype of `k`; column $j$ belongs to
  channel group $j$;
- `residual`: shape $(B, H, T - m, d)$, the newest tokens as they are (a slice of `k` will do).

With $T \\le R$ nothing is quantised yet: `codes`, `scale` and `low` have 0 rows and the
residual is all of `k`. A group whose numbers are all equal has $\\max x - \\min x = 0$: give it
the scale 1 (any positive number would do), so that its codes are 0 and it comes back exactly."""
_KEYS_DEF = (
    'def quantize_keys(k, bits, G):\n    """k (B, H, T, d) -> codes (B, H, n*G, d) uint8, scale '
    "and low (B, H, n, d) and the\n    residual (B, H, T - n*G, d), with n = T // G complete "
    'groups of G tokens."""'
)
_N = "    n = T // G  # complete groups; the tokens after them are the residual\n"
_GROUPS = "    groups = k[:, :, : n * G].reshape(B, H, n, G, d)  # group j: tokens jG .. jG + G - 1\n"
_LOW = (
    "    low = groups.amin(dim=3)  # (B, H, n, d): one minimum per group and channel\n"
    "    scale = (groups.amax(dim=3) - low) / levels\n"
)
_RETURN = "    return codes.to(torch.uint8).reshape(B, H, n * G, d), scale, low, k[:, :, n * G :]\n"
_CODES = (
    "    codes = torch.round((groups - low[:, :, :, None]) / scale[:, :, :, None])\n"
)
_DATA = "B, H, T, d, G = 1, 2, 10, 8, 4\n"
_SAID = 'print(f"groups of G = {G} tokens: {T // G} complete groups, {T % G} tokens left over")'
_LOOK = "codes, scale, low, residual = quantize_keys(k, 2, G)\n"
_EX09_SEED = {"seed": [1, 999_999]}  # the example data's seed

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
    "ex09_kv_quant": {
        "exercise": "ex09_kv_quant",
        # the book's notebook and worked solutions: keys per channel, each group of G tokens
        # quantised once complete, seed 0
        "reserved": {"task": "keys", "seed": 0},
        "roster": ["window", "token"],
        "questions": ["q1"],
        # both keep the name and the four results (questions 3's bytes and the last cells
        # read them); R is a fourth argument
        "tasks": {
            "keys": {"edits": [], "params": {"seed": [0, 0]}},
            "window": {
                "edits": [
                    [_KEYS, _WINDOW_KEYS],
                    [
                        _KEYS_DEF,
                        'def quantize_keys(k, bits, G, R):\n    """k (B, H, T, d) -> codes (B, H, '
                        "n*G, d) uint8, scale and low (B, H, n, d) and the\n    residual (B, H, "
                        'T - n*G, d): keys quantised R at a time, n = T // R * R // G groups."""',
                    ],
                    [
                        _N,
                        "    n = T // R * R // G  # groups of the R-token blocks; the rest is "
                        "the residual\n",
                    ],
                    [_DATA, "B, H, T, d, G, R = 1, 2, 10, 8, 4, 8\n"],
                    [
                        _SAID,
                        'print(f"G = {G} tokens, R = {R} at a time: {T // R * R} quantised, '
                        '{T % R} kept")',
                    ],
                    [
                        _LOOK,
                        "codes, scale, low, residual = quantize_keys(k, 2, G, R)\n",
                    ],
                ],
                "params": _EX09_SEED,
            },
            "token": {
                "edits": [
                    [_KEYS, _TOKEN],
                    [
                        _KEYS_DEF,
                        'def quantize_keys(k, bits, G, R):\n    """k (B, H, T, d) -> codes (B, H, '
                        "m, d) uint8, scale and low (B, H, m, d / G) and the\n    residual (B, "
                        "H, T - m, d): the m = max(T - R, 0) older tokens per token in groups\n"
                        '    of G channels, the newest R as they are."""',
                    ],
                    [
                        _N,
                        "    m = max(T - R, 0)  # the older tokens, quantised; the newest R are "
                        "kept\n",
                    ],
                    [
                        _GROUPS,
                        "    groups = k[:, :, :m].reshape(B, H, m, d // G, G)  # group j: "
                        "channels jG .. jG + G - 1\n",
                    ],
                    [
                        _LOW,
                        "    low = groups.amin(dim=4)  # (B, H, m, d / G): one minimum per "
                        "token and group\n    scale = (groups.amax(dim=4) - low) / levels\n",
                    ],
                    [
                        _CODES,
                        "    codes = torch.round((groups - low[..., None]) / scale[..., None])\n",
                    ],
                    [
                        _RETURN,
                        "    return codes.to(torch.uint8).reshape(B, H, m, d), scale, low, "
                        "k[:, :, m:]\n",
                    ],
                    [_DATA, "B, H, T, d, G, R = 1, 2, 10, 8, 4, 2\n"],
                    [
                        _SAID,
                        'print(f"groups of G = {G} channels: {T - R} tokens quantised, the '
                        'newest {R} kept")',
                    ],
                    [
                        _LOOK,
                        "codes, scale, low, residual = quantize_keys(k, 2, G, R)\n",
                    ],
                    [
                        "axis = 2  # a group's scale is shared along the tokens\n",
                        "axis = 3  # a group's scale is shared along the channels\n",
                    ],
                ],
                "params": _EX09_SEED,
            },
        },
    },
}
POOLS.update(MORE_POOLS, ex06_sampling=POOL_EX06, ex07_cars=POOL_EX07)
POOLS.update(ex10_induction=POOL_EX10, ex11_linear_attention=POOL_EX11)
