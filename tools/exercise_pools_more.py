"""More of the exercises' pools of variants (`tools.exercise_pools` holds the first ones and
merges these into its `POOLS`; `tools.exercise_variants` says what a pool holds).

Exercise 2, question 5: which scaling the peakedness of attention is measured against (the
book's: unit-variance queries and keys, scores divided by sqrt(d_k); the roster's: the
divisor d_k, or queries and keys of variance 1/3, as an untrained `nn.Linear` gives them).
Exercise 3, questions 1 and 2: how heads are cut from a batch and put back (the book's: a batch
(B, T, D), head h owning the contiguous features h*d_k .. (h+1)*d_k - 1; the roster's: heads
owning interleaved features h, h + H, ..., or a batch stored sequence first, (T, B, D), as
`nn.MultiheadAttention` takes it by default). Questions 3 and 4 call the two and keep their
answers at every task (the sequence-first task's text says x and the output are (T, B, D)).
Exercise 8, question 1: which key/value head each query head reads (the book's: contiguous
groups, head h // g, keys (B, H_kv, T, d); the roster's: strided groups, head h % H_kv, or the
book's groups of keys stored token by token, (B, T, H_kv, d), which question 2 then receives
so too), with the example's head counts and seed.
"""

from __future__ import annotations

from typing import Any

# exercise 2, question 5: the scaling measured against (the book's: unit variance, sqrt(d_k))
_IN_YOURS = """cell above); in yours, **the book's: unit-variance queries and keys, the scores divided by
$\\sqrt{d_k}$**. Write"""
_BY_DK = """cell above); in yours, **the scores divided by $d_k$, not $\\sqrt{d_k}$**: the divisor the
chapter's table tries in its row "max weight, ÷ d_k" (μP, the "maximal update"
parametrisation, uses it so that settings tuned on a narrow model carry over to wide
ones), on unit-variance queries and keys. Write"""
_BY_INIT = """cell above); in yours, **queries and keys as an untrained layer makes them**: from
unit-variance inputs, PyTorch's default `nn.Linear` initialisation makes query and key entries
of variance $1/3$ (the chapter's section "Why untrained attention maps look flat"), and the
scores are divided by $\\sqrt{d_k}$. Write"""
_DRAW = """   the queries, shape `(n_queries, d_k)`, **then** the keys, shape `(n_keys, d_k)`, in this order;
"""
_DRAW_INIT = """   the queries, shape `(n_queries, d_k)`, **then** the keys, shape `(n_keys, d_k)`, in this order,
   and divide both by $\\sqrt{3}$ (entries of variance $1/3$);
"""
_DIVIDE = """2. the scores $Q K^\\top$, divided by $\\sqrt{d_k}$ when `scaled` is true (and left raw when it
   is false);"""
_DIVIDE_DK = """2. the scores $Q K^\\top$, divided by $d_k$ when `scaled` is true (and left raw when it is
   false);"""
_SQRT_LINE = (
    "    weights = softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)\n"
)
_DRAWS = (
    "    queries = draws.standard_normal((n_queries, d_k))\n"
    "    keys = draws.standard_normal((n_keys, d_k))\n"
)
_SEED = {"seed": [1, 999_999]}  # the example data's seed (and a seed of q5's checks)

MORE_POOLS: dict[str, dict[str, Any]] = {
    "ex02_scaling": {
        "exercise": "ex02_scaling",
        # the book's notebook and worked solutions: unit variance, sqrt(d_k), seed 0
        "reserved": {"task": "sqrt", "seed": 0},
        "roster": ["dk", "init"],
        "questions": ["q5"],
        # questions 3 and 6 keep the book's sqrt(d_k) on unit-variance draws
        "tasks": {
            "sqrt": {"edits": [], "params": {"seed": [0, 0]}},
            "dk": {
                "edits": [
                    [_IN_YOURS, _BY_DK],
                    [_DIVIDE, _DIVIDE_DK],
                    [
                        _SQRT_LINE,
                        "    weights = softmax_with_temperature(raw, d_k if scaled else 1.0)\n",
                    ],
                ],
                "params": _SEED,
            },
            "init": {
                "edits": [
                    [_IN_YOURS, _BY_INIT],
                    [_DRAW, _DRAW_INIT],
                    [
                        _DRAWS,
                        "    queries = draws.standard_normal((n_queries, d_k)) / np.sqrt(3)\n"
                        "    keys = draws.standard_normal((n_keys, d_k)) / np.sqrt(3)  # variance 1/3\n",
                    ],
                ],
                "params": _SEED,
            },
        },
    },
}

# exercise 3, questions 1 and 2: the heads' layout (the book's: (B, T, D), contiguous slices)
_EX03_YOURS = """in yours, **the book's: a batch of sequences has shape $(B, T, D)$, and head $h$ owns the
contiguous features $h\\,d_k, \\dots, (h+1)\\,d_k - 1$ of every token**."""
_INTERLEAVED = """in yours, **a batch of sequences has shape $(B, T, D)$, and the heads own interleaved
features: head $h$ owns features $h, h + H, h + 2H, \\dots, h + (d_k - 1) H$ of every token**
(feature $f$ is position $\\lfloor f / H \\rfloor$ of head $f \\bmod H$). Which features a head owns
is a convention that splitting and merging must share: interleaved heads are the book's
contiguous ones with the columns of $W_q$, $W_k$, $W_v$ (and the rows of $W_o$) reordered."""
_SEQFIRST = """in yours, **a batch of sequences is stored sequence first, with shape $(T, B, D)$** (the
layout `nn.MultiheadAttention` takes by default, `batch_first=False`), **and head $h$ owns the
contiguous features $h\\,d_k, \\dots, (h+1)\\,d_k - 1$ of every token**; the heads are still
$(B, H, T, d_k)$."""
_TAKES = "it takes a tensor of shape\n$(B, T, D)$ and returns"
_RULE = "split_heads(x, n_head)[b, h, t] == x[b, t, h * d_k : (h + 1) * d_k]"
_HEAD_GETS = "    Head h gets features h*d_k ... (h+1)*d_k - 1.\n"
_SPLIT = "    return x.reshape(B, T, n_head, d_k).transpose(1, 2)\n"
_SPLIT_ALL = "    B, T, D = x.shape\n    d_k = D // n_head\n" + _SPLIT
_PLACES = """with head $h$'s features of token $t$ in positions
$h\\,d_k, \\dots, (h+1)\\,d_k - 1$ of row $t$."""
_MERGE = "    return x.transpose(1, 2).reshape(B, T, H * d_k)\n"
_MERGE_DOC = '"""(B, H, T, d_k) -> (B, T, H * d_k): the inverse of split_heads."""'

MORE_POOLS["ex03_multihead"] = {
    "exercise": "ex03_multihead",
    # the book's notebook and worked solutions: (B, T, D), contiguous heads, seed 0
    "reserved": {"task": "contiguous", "seed": 0},
    "roster": ["interleaved", "seqfirst"],
    "questions": ["q1", "q2"],
    # questions 3 and 4 call split_heads and merge_heads: their answers are the same at
    # every task, their checks follow the variant (tests read VARIANT)
    "tasks": {
        "contiguous": {"edits": [], "params": {"seed": [0, 0]}},
        "interleaved": {
            "edits": [
                [_EX03_YOURS, _INTERLEAVED],
                [_RULE, "split_heads(x, n_head)[b, h, t] == x[b, t, h::n_head]"],
                [
                    _HEAD_GETS,
                    "    Head h gets features h, h + n_head, h + 2 * n_head, ... (interleaved).\n",
                ],
                [
                    _SPLIT,
                    "    return x.reshape(B, T, d_k, n_head).permute(0, 3, 1, 2)  # f: head f % H\n",
                ],
                [
                    _PLACES,
                    "with feature $i$ of head $h$ of token $t$ in position\n$i H + h$ of row "
                    "$t$ (the heads' features dealt in turn, as question 1 took them).",
                ],
                [
                    _MERGE,
                    "    return x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)  # (B, T, d_k, H)\n",
                ],
                # with interleaved heads the other order of question 4's cuts gives the
                # same numbers: the book's warning would be untrue there
                [
                    "The hard part is the order of the cuts:\nfirst into queries, keys and "
                    "values, then each into heads.",
                    "Cut it first into queries, keys and\nvalues, then split each into heads.",
                ],
            ],
            "params": {"seed": [1, 999_999]},
        },
        "seqfirst": {
            "edits": [
                [_EX03_YOURS, _SEQFIRST],
                [
                    "of width 12, and four\nweight",
                    "of width 12, stored\nsequence first as $(T, B, D)$, and four weight",
                ],
                [
                    "x = torch.randn(B, T, D)\n",
                    "x = torch.randn(T, B, D)  # sequence first: (T, B, D)\n",
                ],
                [
                    _TAKES,
                    "it takes a tensor of shape\n$(T, B, D)$ (sequence first) and returns",
                ],
                [
                    _RULE,
                    "split_heads(x, n_head)[b, h, t] == x[t, b, h * d_k : (h + 1) * d_k]",
                ],
                [
                    '"""(B, T, D) -> (B, H, T, d_k) with d_k',
                    '"""(T, B, D) -> (B, H, T, d_k) with d_k',
                ],
                [
                    _SPLIT_ALL,
                    "    T, B, D = x.shape  # sequence first\n    d_k = D // n_head\n"
                    "    return x.reshape(T, B, n_head, d_k).permute(1, 2, 0, 3)\n",
                ],
                [
                    "returns\n$(B, T, H \\cdot d_k)$, " + _PLACES,
                    "returns\n$(T, B, H \\cdot d_k)$, sequence first as the input of question 1, "
                    "with head $h$'s\nfeatures of token $t$ of sequence $b$ in positions "
                    "$h\\,d_k, \\dots, (h+1)\\,d_k - 1$ of row $(t, b)$.",
                ],
                [
                    _MERGE_DOC,
                    '"""(B, H, T, d_k) -> (T, B, H * d_k): the inverse of split_heads."""',
                ],
                [
                    _MERGE,
                    "    return x.permute(2, 0, 1, 3).reshape(T, B, H * d_k)  # (T, B, H, d_k)\n",
                ],
                [
                    "$V = x W_v$, each $(B, T, D)$;",
                    "$V = x W_v$, each $(T, B, D)$ like `x`;",
                ],
                [
                    "`output` has shape $(B, T, D)$.",
                    "`output` has shape $(T, B, D)$, sequence first like `x`.",
                ],
                [
                    '    """x (B, T, D); W_q, W_k, W_v, W_o (D, D), row-vector convention.\n\n'
                    "    Returns (output (B, T, D),",
                    '    """x (T, B, D); W_q, W_k, W_v, W_o (D, D), row-vector convention.\n\n'
                    "    Returns (output (T, B, D),",
                ],
                [
                    "for `x` of shape $(B, T, D)$:",
                    "for `x` of shape $(T, B, D)$ (sequence first):",
                ],
                ['"""x (B, T, D), W_qkv (D, 3D)', '"""x (T, B, D), W_qkv (D, 3D)'],
            ],
            "params": {"seed": [1, 999_999]},
        },
    },
}

# exercise 8, question 1: which key/value head each query head reads (the book's: contiguous
# groups, head h // g, as Llama's repeat_kv and PyTorch's enable_gqa)
_EX08_YOURS = """**the book's: contiguous groups, query head $h$ uses key/value head $\\lfloor h / g \\rfloor$**
(query heads $0, \\dots, g - 1$ share key/value head 0, as in Llama's `repeat_kv`)."""
_STRIDED = """**strided groups, query head $h$ uses key/value head $h \\bmod H_{kv}$** (query heads
$h, h + H_{kv}, h + 2H_{kv}, \\dots$ share one key/value head: the book's groups with the query
heads numbered in another order, a convention some code uses; a model works with either as
long as it is trained and run with the same)."""
_EX08_RULE = """in which head $h$ is head
$\\lfloor h / n_{\\text{rep}} \\rfloor$ of `x` (your variant's groups). With two key/value heads
and $n_{\\text{rep}} = 2$ the heads of the result are therefore $0, 0, 1, 1$ — the copies of a
head next to each other, not $0, 1, 0, 1$."""
_EX08_TILED = """in which head $h$ is head
$h \\bmod H_{kv}$ of `x` (your variant's groups). With two key/value heads and
$n_{\\text{rep}} = 2$ the heads of the result are therefore $0, 1, 0, 1$ — the whole set of heads
tiled, not the copies of a head next to each other ($0, 0, 1, 1$)."""
_EX08_WALK = (
    "the heads $0, 0, 1, 1, \\dots$ of `x` it would have to walk are not evenly spaced"
)
_EX08_FORMULA = """K_{\\lfloor h/g \\rfloor}^\\top}{\\sqrt{d_k}}\\Big)\\,
V_{\\lfloor h/g \\rfloor},$$"""
EX08_COPIES = "    copies = x[:, :, None].expand(B, H_kv, n_rep, T, d)  # (B, H_kv, n_rep, T, d)\n"
EX08_TILES = (
    "    copies = x[:, None].expand(B, n_rep, H_kv, T, d)  # (B, n_rep, H_kv, T, d)\n"
)
EX08_EXPANDED = (
    "    k, v = expand_kv(k, n_rep), expand_kv(v, n_rep)  # (B, H, T_k, d_k)\n"
)
EX08_TOKENS = "    copies = x[:, :, :, None].expand(B, T, H_kv, n_rep, d)  # (B, T, H_kv, n_rep, d)\n"
EX08_RETURN = (
    "    return copies.reshape(B, H_kv * n_rep, T, d)  # a view of x when n_rep = 1"
)
EX08_N_REP = "    n_rep = q.shape[1] // k.shape[1]\n"
EX08_TURNED = "    k, v = (expand_kv(t, n_rep).transpose(1, 2) for t in (k, v))  # (B, H, T_k, d_k)\n"

_TOKENS = """**the book's contiguous groups, query head $h$ uses key/value head $\\lfloor h / g
\\rfloor$, with keys and values stored token by token, $(B, T, H_{kv}, d_k)$** (the layout of
FlashAttention's key/value cache and of vLLM's cache blocks: the heads of one token side by
side); the queries keep the shape $(B, H, T, d_k)$."""
_TOKEN_EDITS = [
    [_EX08_YOURS, _TOKENS],
    [
        "Conventions (the same as in the book):",
        "Conventions (the book's, but for how keys are stored):",
    ],
    [
        "keys and values have shape $(B, H_{kv}, T, d_k)$ with",
        "keys and values have shape $(B, T, H_{kv}, d_k)$ in your variant (below) with",
    ],
    [
        "k = torch.randn(B, H_kv, T, d_k)\nv = torch.randn(B, H_kv, T, d_k)\n",
        "k = torch.randn(B, T, H_kv, d_k)  # stored token by token\n"
        "v = torch.randn(B, T, H_kv, d_k)\n",
    ],
    [
        "it takes keys (or values) of shape $(B, H_{kv}, T, d)$ and\nreturns a tensor of shape "
        "$(B, H_{kv} \\cdot n_{\\text{rep}}, T, d)$",
        "it takes keys (or values) stored token by token, of shape\n$(B, T, H_{kv}, d)$, and "
        "returns a tensor of shape $(B, T, H_{kv} \\cdot n_{\\text{rep}}, d)$ (the heads\nare its "
        "axis 2)",
    ],
    [
        '"""(B, H_kv, T, d) -> (B, H_kv * n_rep, T, d).',
        '"""(B, T, H_kv, d) -> (B, T, H_kv * n_rep, d): keys stored token by token.',
    ],
    [
        "    B, H_kv, T, d = x.shape\n",
        "    B, T, H_kv, d = x.shape  # token by token\n",
    ],
    [EX08_COPIES, EX08_TOKENS],
    [
        EX08_RETURN,
        "    return copies.reshape(B, T, H_kv * n_rep, d)  # a view of x when n_rep = 1",
    ],
    [
        "so\nthat every query head has its own copy (your variant's groups),",
        "so\nthat every query head has its own copy (your variant's groups; `k` and `v` arrive "
        "token by\ntoken, $(B, T_k, H_{kv}, d_k)$, so bring their heads forward, to "
        "$(B, H, T_k, d_k)$, before the\nproducts),",
    ],
    [
        '"""q (B, H, T_q, d_k), k and v (B, H_kv, T_k, d_k) -> (B, H, T_q, d_k)."""',
        '"""q (B, H, T_q, d_k), k and v token by token (B, T_k, H_kv, d_k) -> (B, H, T_q, d_k)."""',
    ],
    [EX08_N_REP, "    n_rep = q.shape[1] // k.shape[2]  # k is (B, T_k, H_kv, d_k)\n"],
    [EX08_EXPANDED, EX08_TURNED],
    ["k[:, :1], v[:, :1]", "k[:, :, :1], v[:, :, :1]"],
    ["v[:, :1, 0].expand(B, 3, d_k)", "v[:, 0, :1].expand(B, 3, d_k)"],
]

MORE_POOLS["ex08_gqa"] = {
    "exercise": "ex08_gqa",
    # the book's notebook and worked solutions: contiguous groups, 4 query heads over 2, seed 0
    "reserved": {"task": "grouped", "H_kv": 2, "group": 2, "seed": 0},
    "roster": ["strided", "tokens"],
    "questions": ["q1"],
    # question 2 calls expand_kv: its answer is the same at every task, its checks follow the
    # variant (tests read VARIANT); question 3 is the same at every variant
    "tasks": {
        "grouped": {
            "edits": [],
            "params": {"H_kv": [2, 2], "group": [2, 2], "seed": [0, 0]},
        },
        "strided": {
            "edits": [
                [_EX08_YOURS, _STRIDED],
                [_EX08_RULE, _EX08_TILED],
                [
                    _EX08_WALK,
                    "the heads $0, 1, \\dots, H_{kv} - 1, 0, 1, \\dots$ of `x` it would have to walk "
                    "are not evenly spaced",
                ],
                [
                    "    Head h of the result is head h // n_rep of x.\n",
                    "    Head h of the result is head h % H_kv of x (the heads tiled).\n",
                ],
                [EX08_COPIES, EX08_TILES],
                [
                    _EX08_FORMULA,
                    "K_{h \\bmod H_{kv}}^\\top}{\\sqrt{d_k}}\\Big)\\,\nV_{h \\bmod H_{kv}},$$",
                ],
                [EX08_EXPANDED, EX08_EXPANDED[:-1] + ", tiled\n"],
            ],
            # the example's head counts: 2 or 3 key/value heads, groups of 2 or 3 query heads
            # (with one key/value head, or groups of one, the two tasks would coincide)
            "params": {"H_kv": [2, 3], "group": [2, 3], "seed": [1, 999_999]},
        },
        "tokens": {
            "edits": _TOKEN_EDITS,
            "params": {"H_kv": [2, 3], "group": [2, 3], "seed": [1, 999_999]},
        },
    },
}
