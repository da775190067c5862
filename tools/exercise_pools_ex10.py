"""Exercise 10's pool of variants (`tools.exercise_pools` merges it into its `POOLS`;
`tools.exercise_variants` says what a pool holds).

Question 4, the body of the hook that ablates one head, follows the task: which ablation.
The book's: zero ablation, the head's d_head columns set to 0. The roster's: mean ablation,
the other ablation chapter 10 teaches, in which the head writes its average output at each
position over the batch, so that what it writes whatever the input stays and only what it
computes from this input goes (the columns' mean over the batch axis, dim 0, computed from
`z` itself and kept differentiable). The function keeps its name and signature,
`zero_head(z, head, d_head)`, since the closing cell hooks it into the trained model. The
roster task's answer inserts one line before the return, so every mistake of the book's
lines reads the same at both tasks. The parameters: the width d_head of the public example,
and the seed of its activations, which also picks its head (seed % 4). Chapter 10 teaches no third ablation that this
hook can do (its key-, query- and value-only ablations recompute the next layer), so the
roster has one task. Questions 1-3, 5 and 6 are the same at every variant.
"""

from __future__ import annotations

from typing import Any

_INTRO = """In your variant (your notebook's `VARIANT` cell) the ablation is **the book's: zero
ablation**."""
_INTRO_MEAN = """In your variant (the `VARIANT` cell at the top) the ablation is **mean ablation**,
the other one chapter 10 teaches: the head writes its *average* output at each position over
the batch, so what it writes whatever the input stays and only what it computes from this
input is removed."""
_WRITE = """Write its body, `zero_head(z, head, d_head)`: return a **new** tensor equal to `z` with head
`head`'s columns set to zero, in the dtype of `z` (a bfloat16 `z` gives a bfloat16 copy). The
head's columns must be exactly 0 and the others equal to `z`'s within `1e-6`; a copy in
another dtype costs a small part of the question."""
_WRITE_MEAN = """Write its body, `zero_head(z, head, d_head)` (the name stays: the cell after question 6
hooks it into the trained model): `z` has the batch first, shape $(B, \\dots, H \\cdot
d_{\\text{head}})$, and you return a **new** tensor equal to `z` except in head `head`'s columns,
which hold their **mean over the batch** (axis 0) at each position: every sequence gets the
same values there, the average of what the head wrote at that position over the $B$
sequences. Return it in the dtype of `z` (a bfloat16 `z` gives a bfloat16 copy). The head's
columns must equal that mean, and the others `z`'s, within `1e-6` (in bfloat16 and float16
within their rounding); a copy in another dtype costs a small part of the question. Compute
the mean from `z` itself and keep it in the graph too: the gradient reaching a head column
of the copy passes back to that column of every sequence, divided by $B$."""
_EXAMPLE = """**Your example.** The first public check also runs your function on activations
`torch.randn(3, 5, 4 * d_head)` drawn from a generator seeded with your variant's `seed`, at
your `d_head` and the head `seed % 4`, and prints what it expected where yours differs."""

_DEF = (
    "def zero_head(z, head, d_head):\n"
    '    """z (..., H * d_head) -> a copy with head `head`\'s d_head columns set to 0."""'
)
_RETURN = "    return out\n"
# the line the roster task's answer inserts before the return
LINES = {
    "mean": "    out[..., head * d_head : (head + 1) * d_head] += "
    "z[..., head * d_head : (head + 1) * d_head].mean(0)  # the mean over the batch\n",
}

POOL_EX10: dict[str, Any] = {
    "exercise": "ex10_induction",
    # the book's notebook and worked solutions: zero ablation, the example at width 2, seed 0
    "reserved": {"task": "zero", "d_head": 2, "seed": 0},
    "roster": ["mean"],
    "questions": ["q4"],
    "tasks": {
        "zero": {
            "edits": [],
            "params": {"d_head": [2, 2], "seed": [0, 0]},
        },
        "mean": {
            "edits": [
                [_INTRO, _INTRO_MEAN],
                [_WRITE, _WRITE_MEAN],
                [
                    _DEF,
                    "def zero_head(z, head, d_head):\n"
                    '    """z (B, ..., H * d_head) -> a copy with head `head`\'s d_head columns\n'
                    '    replaced by their mean over the batch (axis 0)."""',
                ],
                [_RETURN, LINES["mean"] + _RETURN],
            ],
            "params": {"d_head": [2, 6], "seed": [1, 999_999]},
        },
    },
}
