"""Exercise 6's pool of variants (`tools.exercise_pools` merges it into its `POOLS`;
`tools.exercise_variants` says what a pool holds).

Question 4, top-p, follows the task: which row the nucleus is taken of. The book's: the
logits as given (temperature 1). The roster's, both in the chapter's order of a sampling step
(temperature, then the top-k cut, then top-p): "tempered", the nucleus of the row at the
sampling temperature, `top_p_filter(logits, p, temperature)` returning `logits / temperature`
with every token outside its nucleus at -inf; and "cut", the nucleus among the survivors of a
top-k cut, their probabilities renormalised, `top_p_filter(logits, p, k)`. The parameters:
the example's p (in hundredths), its temperature (hundredths) or k, and the seed of its rows.
Each roster task's answer inserts one line after the check of p, so that every mistake of the
book's lines reads the same at every task. Questions 1-3 and 5 are the same at every variant.
"""

from __future__ import annotations

from typing import Any

_INTRO = """**the book's: the nucleus of the logits as given, at temperature 1**."""
_INTRO_TEMPERED = """**the nucleus of the row at the sampling temperature: `top_p_filter(logits, p,
temperature)` returns `logits / temperature` with every token outside its nucleus at
$-\\infty$**."""
_INTRO_CUT = """**the nucleus among the survivors of a top-k cut, their probabilities
renormalised: `top_p_filter(logits, p, k)`**."""

_WRITE = """Write `top_p_filter(logits, p)` for logits of shape $(B, V)$: it returns a **new** tensor
shaped like `logits` (the input must not change) in which each row keeps the logits of its
nucleus unchanged. Rank the tokens of a row by probability (the softmax of the row at
temperature 1); a token is kept when the tokens ranked above it hold **less than** `p` of
the probability, so the most likely token is always kept and `p = 1` keeps everything."""
_WRITE_TEMPERED = """A sampling step applies the temperature first and the filters after it (the chapter's
`sample_next_token` applies top-p "after the temperature and the top-k cut"), so the nucleus
is taken of the distribution that is sampled: at the temperature. Write
`top_p_filter(logits, p, temperature)` for logits of shape $(B, V)$ and a positive
`temperature`: it returns a **new** tensor shaped like `logits` (the input must not change),
the row at the temperature, `logits / temperature`, with every token outside its nucleus set
to $-\\infty$ (what a plain softmax then turns into the step's probabilities, as a chain of
logits processors hands it on). Rank the tokens of a row by probability, the softmax of
`logits / temperature` (a low temperature shrinks the nucleus, a high one widens it); a token
is kept when the tokens ranked above it hold **less than** `p` of that probability, so the
most likely token is always kept and `p = 1` keeps every token of `logits / temperature`.
The kept entries are compared with `logits / temperature` to $10^{-6}$, relative."""
_WRITE_CUT = """A sampling step applies top-p after the temperature and **after the top-k cut** (the
chapter's `sample_next_token` applies it "after the temperature and the top-k cut"), so the
nucleus is taken among the survivors of the cut, whose probabilities add up to 1 among
themselves. Write `top_p_filter(logits, p, k)` for logits of shape $(B, V)$ and an integer
`k` $\\ge 1$: it returns a **new** tensor shaped like `logits` (the input must not change)
in which each row keeps the logits of its nucleus unchanged and every other entry is
$-\\infty$. First cut the row to its `k` largest logits, the others $-\\infty$ (your
`top_k_filter` of question 2; a `k` of at least $V$ cuts nothing); then rank the survivors
by probability, the softmax of the cut row (renormalised over the `k` survivors); a survivor
is kept when the survivors ranked above it hold **less than** `p` of that probability, so
the most likely token is always kept and `p = 1` keeps every survivor of the cut."""

_DEF = (
    "def top_p_filter(logits, p):\n"
    '    """Keep the nucleus of each row of (B, V) logits (top-p); the others -> -inf."""'
)
_CHECKED = '        raise ValueError(f"p must lie in (0, 1], got {p}")\n'
# the line each roster task's answer inserts after the check of p
LINES = {
    "tempered": "    logits = logits / temperature  # the row at the temperature\n",
    "cut": "    logits = top_k_filter(logits, k)  # the top-k cut first: its survivors\n",
}
_P = [50, 90]  # the example's p, in hundredths

POOL_EX06: dict[str, Any] = {
    "exercise": "ex06_sampling",
    # the book's notebook and worked solutions: the nucleus of the logits as given
    "reserved": {"task": "plain", "p": 50, "seed": 0},
    "roster": ["tempered", "cut"],
    "questions": ["q4"],
    "tasks": {
        "plain": {"edits": [], "params": {"p": [50, 50], "seed": [0, 0]}},
        "tempered": {
            "edits": [
                [_INTRO, _INTRO_TEMPERED],
                [_WRITE, _WRITE_TEMPERED],
                [
                    _DEF,
                    "def top_p_filter(logits, p, temperature):\n"
                    '    """The row at the temperature, logits / temperature, outside its nucleus -> -inf."""',
                ],
                [_CHECKED, _CHECKED + LINES["tempered"]],
            ],
            "params": {"p": _P, "tau": [30, 80], "seed": [1, 999_999]},
        },
        "cut": {
            "edits": [
                [_INTRO, _INTRO_CUT],
                [_WRITE, _WRITE_CUT],
                [
                    _DEF,
                    "def top_p_filter(logits, p, k):\n"
                    '    """Keep the nucleus of the top-k survivors of each (B, V) row; the others -> -inf."""',
                ],
                [_CHECKED, _CHECKED + LINES["cut"]],
            ],
            "params": {"p": _P, "k": [3, 8], "seed": [1, 999_999]},
        },
    },
}
