"""Classic wrong answers to exercise 1, as text edits of the reference solution.

`tools/exercises.py prove` applies each list of (old, new) edits to the reference answer cells
(every `old` must occur exactly once) and proves that every wrong answer loses points on the
hidden tests, and that at least two of them pass every public check.
"""

WRONG_ANSWERS = {
    "softmax over the wrong axis (columns, not rows)": [
        ("scores.max(axis=-1, keepdims=True)", "scores.max(axis=0, keepdims=True)"),
        ("exps.sum(axis=-1, keepdims=True)", "exps.sum(axis=0, keepdims=True)"),
    ],
    "no scaling by sqrt(d_k)": [
        ("/ np.sqrt(d_k)", ""),
    ],
    "scaling by d_k instead of sqrt(d_k)": [
        ("/ np.sqrt(d_k)", "/ d_k"),
    ],
    "softmax without subtracting the row maximum (overflows)": [
        ("shifted = scores - scores.max(axis=-1, keepdims=True)", "shifted = scores"),
    ],
    "mask applied after the softmax (weights zeroed, rows no longer sum to 1)": [
        ("    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
         "    weights = scores_to_weights(scores)\n",
         "    weights = scores_to_weights(scores)\n"
         "    if mask is not None:\n        weights = np.where(mask, weights, 0.0)\n"),
    ],
}
