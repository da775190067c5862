"""Classic wrong answers to exercise 2, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py)."""

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
    "seeds NumPy's global generator (np.random.seed) and draws from np.random": [
        ("    rng = np.random.default_rng(seed)\n    q = rng.standard_normal((n_samples, d_k))\n"
         "    k = rng.standard_normal((n_samples, d_k))",
         "    np.random.seed(seed)\n    q = np.random.standard_normal((n_samples, d_k))\n"
         "    k = np.random.standard_normal((n_samples, d_k))"),
    ],
    "shortcut: the softmax handed to torch.softmax": [
        ("    z = z - z.max(axis=-1, keepdims=True)  # stability: the largest entry becomes 0\n"
         "    e = np.exp(z)\n    return e / e.sum(axis=-1, keepdims=True)",
         "    import torch\n    return torch.softmax(torch.from_numpy(z), dim=-1).numpy()"),
    ],
    "divides the caller's scores in place (z /= temperature)": [
        ("    z = np.asarray(scores, dtype=float) / temperature",
         "    z = np.asarray(scores, dtype=float)\n    z /= temperature"),
    ],
    "tampering: every kind at once (TAMPER), and three of the four functions wrong": [
        ("def dot_product_variance(d_k, n_samples, seed):", TAMPER + "def dot_product_variance(d_k, n_samples, seed):"),
        ("np.sum(q * k, axis=1)", "np.sum(q * k, axis=0)"),
        ("return Q @ K.T / np.sqrt(d_k)", "return Q @ K.T"),
        ("np.asarray(scores, dtype=float) / temperature", "np.asarray(scores, dtype=float) * temperature"),
    ],
    "mean_max_weight scales in both cases (the flag ignored)": [
        ("softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)", "softmax_with_temperature(raw, np.sqrt(d_k))"),
    ],
    "mean_max_weight averages every weight instead of each row's largest": [
        ("return float(weights.max(axis=-1).mean())", "return float(weights.mean())"),
    ],
    "mean_max_weight draws the keys before the queries": [
        ("    queries = draws.standard_normal((n_queries, d_k))\n    keys = draws.standard_normal((n_keys, d_k))",
         "    keys = draws.standard_normal((n_keys, d_k))\n    queries = draws.standard_normal((n_queries, d_k))"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def dot_product_variance(d_k, n_samples, seed):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    return float(np.var(dots))', '    return None'),
    ]
    for kind in ['comparison helpers', "otter's results"]
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    'correct: the dot products with np.einsum': [
        ('    dots = np.sum(q * k, axis=1)',
         '    dots = np.einsum("ij,ij->i", q, k)'),
    ],
})
