"""Classic wrong answers to exercise 2, as text edits of the reference solution.

`tools/exercises.py prove` applies each list of (old, new) edits to the reference answer cells
(every `old` must occur exactly once) and proves that every wrong answer loses points on the
hidden tests, and that at least two of them pass every public check.
"""

_SOFTMAX_OF_RAW_SCORES = (
    "z = np.asarray(scores, dtype=float) / temperature",
    "z = np.asarray(scores, dtype=float)",
)

WRONG_ANSWERS = {
    # q1: the variance of q . k
    "variance of the entries of q instead of the dot products (about 1, not d_k)": [
        ("return float(np.var(dots))", "return float(np.var(q))"),
    ],
    "standard deviation instead of variance (about sqrt(d_k))": [
        ("return float(np.var(dots))", "return float(np.std(dots))"),
    ],
    "mean of the dot products instead of their variance": [
        ("return float(np.var(dots))", "return float(np.mean(dots))"),
    ],
    "generator not seeded (a different answer on every call)": [
        ("rng = np.random.default_rng(seed)", "rng = np.random.default_rng()"),
    ],
    # q2: scaled scores
    "no scaling by sqrt(d_k)": [
        ("return Q @ K.T / np.sqrt(d_k)", "return Q @ K.T"),
    ],
    "scaling by d_k instead of sqrt(d_k)": [
        ("return Q @ K.T / np.sqrt(d_k)", "return Q @ K.T / d_k"),
    ],
    "d_k read from the number of keys instead of their width": [
        ("d_k = Q.shape[-1]", "d_k = K.shape[0]"),
    ],
    "keys times queries (K Q^T): rows are keys, not queries": [
        ("return Q @ K.T / np.sqrt(d_k)", "return K @ Q.T / np.sqrt(d_k)"),
    ],
    # q3: softmax with a temperature
    "temperature multiplied instead of divided": [
        ("z = np.asarray(scores, dtype=float) / temperature",
         "z = np.asarray(scores, dtype=float) * temperature"),
    ],
    "temperature applied after the softmax: softmax(s) / T": [
        _SOFTMAX_OF_RAW_SCORES,
        ("return e / e.sum(axis=-1, keepdims=True)",
         "return e / e.sum(axis=-1, keepdims=True) / temperature"),
    ],
    "temperature applied after the softmax: softmax(s) ** (1 / T), not renormalised": [
        _SOFTMAX_OF_RAW_SCORES,
        ("return e / e.sum(axis=-1, keepdims=True)",
         "return (e / e.sum(axis=-1, keepdims=True)) ** (1 / temperature)"),
    ],
    "softmax over the wrong axis (columns, not rows)": [
        ("z.max(axis=-1, keepdims=True)", "z.max(axis=0, keepdims=True)"),
        ("e.sum(axis=-1, keepdims=True)", "e.sum(axis=0, keepdims=True)"),
    ],
    "no subtraction of the row maximum (overflows at small temperatures)": [
        ("    z = z - z.max(axis=-1, keepdims=True)  # stability: the largest entry becomes 0\n", ""),
    ],
    "only temperature == 0 rejected (negative temperatures accepted)": [
        ("if temperature <= 0:", "if temperature == 0:"),
    ],
}
