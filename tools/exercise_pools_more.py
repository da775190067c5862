"""More of the exercises' pools of variants (`tools.exercise_pools` holds the first ones and
merges these into its `POOLS`; `tools.exercise_variants` says what a pool holds).

Exercise 2, question 5: which scaling the peakedness of attention is measured against (the
book's: unit-variance queries and keys, scores divided by sqrt(d_k); the roster's: the
divisor d_k, or queries and keys of variance 1/3, as an untrained `nn.Linear` gives them).
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
