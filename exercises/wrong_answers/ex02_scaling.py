"""Classic wrong answers to exercise 2, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). Question 5 has a pool of tasks
(`tools.exercise_pools_more`): its mistakes on a line a task rewrites are written at every
roster task too (`AtEachTask`: the edits of that task's text)."""

from tools.exercise_variants import AtEachTask

_SOFTMAX_OF_RAW_SCORES = (
    "z = np.asarray(scores, dtype=float) / temperature",
    "z = np.asarray(scores, dtype=float)",
)

_KEYS_FIRST = (
    "    queries = draws.standard_normal((n_queries, d_k))\n    keys = draws.standard_normal((n_keys, d_k))",
    "    keys = draws.standard_normal((n_keys, d_k))\n    queries = draws.standard_normal((n_queries, d_k))",
)

_THIRD = (
    "    queries = draws.standard_normal((n_queries, d_k))\n    keys = draws.standard_normal((n_keys, d_k))",
    "    queries = draws.standard_normal((n_queries, d_k)) / np.sqrt(3)\n"
    "    keys = draws.standard_normal((n_keys, d_k)) / np.sqrt(3)",
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
    # q2: softmax with a temperature
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
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and those three questions answered wrongly": [
        ("def dot_product_variance(d_k, n_samples, seed):", TAMPER + "def dot_product_variance(d_k, n_samples, seed):"),
        ("np.sum(q * k, axis=1)", "np.sum(q * k, axis=0)"),
        ("np.asarray(scores, dtype=float) / temperature", "np.asarray(scores, dtype=float) * temperature"),
        ("return a * (g - along_row)", "return a * (g + along_row)"),
    ],
    # q5 (stretch): the mean largest weight
    "mean_max_weight scales in both cases (the flag ignored)": AtEachTask(
        [("softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)", "softmax_with_temperature(raw, np.sqrt(d_k))")],
        dk=[("softmax_with_temperature(raw, d_k if scaled else 1.0)", "softmax_with_temperature(raw, d_k)")],
        init=[("softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)", "softmax_with_temperature(raw, np.sqrt(d_k))")],
    ),
    "mean_max_weight averages every weight instead of each row's largest": [
        ("return float(weights.max(axis=-1).mean())", "return float(weights.mean())"),
    ],
    "mean_max_weight draws the keys before the queries": AtEachTask(
        [_KEYS_FIRST],
        dk=[_KEYS_FIRST],
        init=[("    queries = draws.standard_normal((n_queries, d_k)) / np.sqrt(3)\n"
               "    keys = draws.standard_normal((n_keys, d_k)) / np.sqrt(3)",
               "    keys = draws.standard_normal((n_keys, d_k)) / np.sqrt(3)\n"
               "    queries = draws.standard_normal((n_queries, d_k)) / np.sqrt(3)")],
    ),
    # q5 at its own tasks: the divisor or the draws of another task
    "mean_max_weight draws at another task's variance (1/3 for 1, 1 for 1/3)": AtEachTask(
        [_THIRD], dk=[_THIRD],
        init=[(_THIRD[1], _THIRD[0])],
    ),
    "mean_max_weight divides by another task's divisor (d_k for sqrt(d_k), sqrt(d_k) for d_k)": AtEachTask(
        [("softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)", "softmax_with_temperature(raw, d_k if scaled else 1.0)")],
        dk=[("softmax_with_temperature(raw, d_k if scaled else 1.0)", "softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)")],
        init=[("softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)", "softmax_with_temperature(raw, d_k if scaled else 1.0)")],
    ),
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

_VJP = "    return a * (g - along_row)"
_STEP_SUMS = ("    l_new = l * rescale + weights.sum(axis=-1)\n"
              "    acc_new = acc * rescale[:, None] + weights @ values")
WRONG_ANSWERS.update({
    # q3: the softmax's vector-Jacobian product and the gradient norm
    "softmax_vjp: the sign of a . g flipped (a * (g + a . g))": [(_VJP, "    return a * (g + along_row)")],
    "softmax_vjp: only the diagonal of the Jacobian (a * g)": [(_VJP, "    return a * g")],
    "softmax_vjp: a . g summed over every entry, not per row": [
        ("np.sum(a * g, axis=-1, keepdims=True)", "np.sum(a * g)"),
    ],
    "softmax_vjp: (g - a . g) without the factor a": [(_VJP, "    return g - along_row")],
    "softmax_vjp: computed in float32": [
        ("    a = np.asarray(weights, dtype=np.float64)\n    g = np.asarray(upstream, dtype=np.float64)",
         "    a = np.asarray(weights, dtype=np.float32)\n    g = np.asarray(upstream, dtype=np.float32)"),
    ],
    "softmax_vjp: subtracts a . g from the caller's upstream in place": [
        (_VJP, "    g -= along_row\n    return a * g"),
    ],
    "shortcut: softmax_vjp hands the gradient to torch.autograd": [
        (_VJP, "    import torch\n    s = torch.log(torch.from_numpy(a)).requires_grad_(True)\n"
               "    (out,) = torch.autograd.grad(torch.softmax(s, -1), s, torch.from_numpy(g))\n"
               "    return out.numpy()"),
    ],
    "score_gradient_norm: scales in both cases (the flag ignored)": [
        ("softmax_with_temperature(queries @ keys.T, np.sqrt(d_k) if scaled else 1.0)",
         "softmax_with_temperature(queries @ keys.T, np.sqrt(d_k))"),
    ],
    "score_gradient_norm: the norm of the whole matrix, not the mean of the rows' norms": [
        ("float(np.linalg.norm(grads, axis=-1).mean())", "float(np.linalg.norm(grads))"),
    ],
    "score_gradient_norm: the upstream gradient pushed through unchanged (no softmax_vjp)": [
        ("    grads = softmax_vjp(weights, upstream)", "    grads = weights * upstream"),
    ],
    # q4: the online softmax
    "online step: the running sums not rescaled when the max grows": [
        (_STEP_SUMS, "    l_new = l + weights.sum(axis=-1)\n    acc_new = acc + weights @ values"),
    ],
    "online step: l rescaled, acc not": [
        ("    acc_new = acc * rescale[:, None] + weights @ values",
         "    acc_new = acc + weights @ values"),
    ],
    "online step: no guard for a row that has seen only -inf (NaN from -inf - -inf)": [
        ("    shift = np.where(np.isfinite(m_new), m_new, 0.0)  # a row that has seen only -inf",
         "    shift = m_new"),
    ],
    "online step: rescales the caller's state in place (acc *= ...)": [
        (_STEP_SUMS, "    l_new = l * rescale + weights.sum(axis=-1)\n"
                     "    acc *= rescale[:, None]\n    acc_new = acc + weights @ values"),
    ],
    "online step: exp of the scores without subtracting the running max": [
        ("    weights = np.exp(scores - shift[:, None])  # 0 for masked keys",
         "    weights = np.exp(scores) * np.exp(-shift[:, None])"),
    ],
    "online average: a fully masked row divided by l = 0 (NaN)": [
        ("    out[seen] = acc[seen] / l[seen, None]", "    out = acc / l[:, None]"),
    ],
    "online average: the last, shorter block dropped": [
        ("range(0, t_k, block_size)", "range(0, t_k - block_size + 1, block_size)"),
    ],
    "online average: block_size < 1 not rejected": [
        ("    if block_size < 1:\n        raise ValueError(f\"block_size must be at least 1, got {block_size}\")\n", ""),
    ],
    "online average: computed in float32": [
        ("    scores = np.asarray(scores, dtype=np.float64)\n    values = np.asarray(values, dtype=np.float64)\n"
         "    t_q, t_k", "    scores = np.asarray(scores, dtype=np.float32)\n"
                        "    values = np.asarray(values, dtype=np.float32)\n    t_q, t_k"),
    ],
    # correct answers written differently: they must score 100 %
    "correct: softmax_vjp through the explicit Jacobian diag(a) - a a^T": [
        (_VJP, "    eye = np.eye(a.shape[-1])\n"
               "    jac = (eye - a[..., :, None]) * a[..., None, :]  # jac[i, j] = d a_j / d s_i\n"
               "    return np.einsum('...j,...ij->...i', g, jac)"),
    ],
    "correct: the online step with an explicit mask for the first finite score": [
        ("    rescale = np.exp(m - shift)  # exp(m_old - m_new): 0 where m_old is -inf",
         "    with np.errstate(invalid='ignore'):\n"
         "        rescale = np.where(np.isneginf(m), 0.0, np.exp(m - shift))"),
    ],
})

WRONG_ANSWERS.update({
    # q6: the conceptual question
    "why_gradients_vanish: (a), overflow (a stable softmax never overflows)": [
        ('    return "b"', '    return "a"'),
    ],
    "why_gradients_vanish: the right letter in upper case with its parenthesis, '(B)'": [
        ('    return "b"', '    return "(B)"'),
    ],
})

WRONG_ANSWERS.update({
    # the values are right (one step over all keys is the full softmax), the method is not:
    # only the check of the calls to online_softmax_step sees it
    "online average: every key fed to the step at once, block_size only checked": [
        ("    for start in range(0, t_k, block_size):\n"
         "        stop = start + block_size\n"
         "        state = online_softmax_step(state, scores[:, start:stop], values[start:stop])",
         "    state = online_softmax_step(state, scores, values)"),
    ],
    "online average: the full softmax computed directly, the step never called": [
        ("    for start in range(0, t_k, block_size):\n"
         "        stop = start + block_size\n"
         "        state = online_softmax_step(state, scores[:, start:stop], values[start:stop])\n"
         "    _, l, acc = state\n",
         "    m = scores.max(axis=-1, keepdims=True)\n"
         "    e = np.exp(scores - np.where(np.isfinite(m), m, 0.0))\n"
         "    l, acc = e.sum(axis=-1), e @ values\n"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: the step called with keyword arguments, in another order": [
        ("        state = online_softmax_step(state, scores[:, start:stop], values[start:stop])",
         "        state = online_softmax_step(values=values[start:stop], state=state,\n"
         "                                    scores=scores[:, start:stop])"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): the generator the question names, and integer scores
    "dot_product_variance draws from a legacy np.random.RandomState(seed)": [
        ("    rng = np.random.default_rng(seed)\n", "    rng = np.random.RandomState(seed)\n"),
    ],
    "softmax_with_temperature divides in place after the shift (integer scores cannot be)": [
        ("    z = np.asarray(scores, dtype=float) / temperature\n"
         "    z = z - z.max(axis=-1, keepdims=True)  # stability: the largest entry becomes 0\n",
         "    z = np.asarray(scores)\n    z = z - z.max(axis=-1, keepdims=True)\n    z /= temperature\n"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: variance with n - 1 (ddof=1), q and k drawn as one rng.normal array; "
    "integer scores made float by the division": [
        ("    q = rng.standard_normal((n_samples, d_k))\n    k = rng.standard_normal((n_samples, d_k))\n",
         "    q, k = rng.normal(0.0, 1.0, size=(2, n_samples, d_k))\n"),
        ("    return float(np.var(dots))", "    return float(np.var(dots, ddof=1))"),
        ("    z = np.asarray(scores, dtype=float) / temperature\n",
         "    z = np.asarray(scores) / temperature\n"),
    ],
})

WRONG_ANSWERS.update({
    # issue 28, item 6: new kinds of mistake, each caught by a hidden test
    "online average: the running maximum started at 0 (scores near -1000 underflow)": [
        ("    state = (np.full(t_q, -np.inf), np.zeros(t_q), np.zeros((t_q, values.shape[-1])))",
         "    state = (np.zeros(t_q), np.zeros(t_q), np.zeros((t_q, values.shape[-1])))"),
    ],
})

WRONG_ANSWERS.update({  # issue 28, item 6: a loop the question rules out, read from the source
    "dot products in a comprehension, one pair at a time (the question rules out loops)": [
        ("dots = np.sum(q * k, axis=1)", "dots = np.array([q[i] @ k[i] for i in range(n_samples)])"),
    ],
})

WRONG_ANSWERS.update({
    # issue 36, item 7: a small loss now warned, and a dtype the spec promises float64 for
    "warned (q3): score_gradient_norm draws the keys before the queries": [
        ("    queries = generator.standard_normal((n_queries, d_k))\n"
         "    keys = generator.standard_normal((n_keys, d_k))",
         "    keys = generator.standard_normal((n_keys, d_k))\n"
         "    queries = generator.standard_normal((n_queries, d_k))"),
    ],
    "softmax_vjp: float32 inputs converted to float64, float16 ones left in half precision": [
        ("    a = np.asarray(weights, dtype=np.float64)\n    g = np.asarray(upstream, dtype=np.float64)",
         "    a, g = np.asarray(weights), np.asarray(upstream)\n"
         "    if a.dtype == np.float32:\n"
         "        a, g = a.astype(np.float64), g.astype(np.float64)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45: the review's two silent losses, now warned by a public check, and answers that
    # do not solve their question (each must score 0 on it: every check compares values)
    "warned (q1): the variance over all pairs q_i . k_j (q @ k.T), not the matched pairs": [
        ("    dots = np.sum(q * k, axis=1)  # one dot product per pair: (n_samples,)",
         "    dots = q @ k.T  # every query with every key"),
    ],
    "warned (q4): a while loop over the blocks and no block_size check (block_size 0 never ends)": [
        ("    m, l, acc = state\n", "    m, l, acc = state\n    if np.shape(scores)[-1] == 0:  # an empty block\n        return m, l, acc\n"),
        ('    if block_size < 1:\n        raise ValueError(f"block_size must be at least 1, got {block_size}")\n', ""),
        ("    for start in range(0, t_k, block_size):\n        stop = start + block_size\n"
         "        state = online_softmax_step(state, scores[:, start:stop], values[start:stop])\n",
         "    start = 0\n    while start < t_k:\n        stop = start + block_size\n"
         "        state = online_softmax_step(state, scores[:, start:stop], values[start:stop])\n"
         "        start = stop\n"),
    ],
    "non-solving (q1): d_k itself, the answer the chapter predicts": [
        ("    return float(np.var(dots))", "    return float(d_k)"),
    ],
    "non-solving (q2): uniform weights at every temperature (the ValueError kept)": [
        ("    e = np.exp(z)\n    return e / e.sum(axis=-1, keepdims=True)",
         "    return np.full(z.shape, 1.0 / z.shape[-1])"),
    ],
    "non-solving (q5): the two limits the question describes, 1 raw and 1 / n_keys scaled": [
        ("    return float(weights.max(axis=-1).mean())",
         "    return 1.0 if not scaled else 1.0 / n_keys"),
    ],
})
