"""Classic wrong answers to exercise 1, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). Question 2 has a pool of mask
conventions (`tools.exercise_variants`): a mistake on the mask's line, which each task
rewrites, is written at each roster task too (`AtEachTask`: the edits of that task's text),
so the proof at every sampled variant grades the same mistake."""

from tools.exercise_variants import AtEachTask

# The mask's line at each task of question 2's pool (the book's "allow" first)
_ALLOW = "        scores = np.where(mask, scores, -np.inf)\n"
_BLOCK = "        scores = np.where(mask, -np.inf, scores)\n"
_BIAS = "        scores = scores + mask\n"
_SOFTMAX = "    weights = scores_to_weights(scores)\n"
_IF = "    if mask is not None:\n"


def _after_softmax(line: str, zeroed: str, renormalise: bool = False) -> list:
    """The mask's line (`line`) moved after the softmax as `zeroed` (weights, not scores)."""
    again = "        weights = weights / weights.sum(axis=-1, keepdims=True)\n"
    return [(_IF + line + _SOFTMAX, _SOFTMAX + _IF + zeroed + (again if renormalise else ""))]

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
    "mask applied after the softmax (weights zeroed, rows no longer sum to 1)": AtEachTask(
        _after_softmax(_ALLOW, "        weights = np.where(mask, weights, 0.0)\n"),
        block=_after_softmax(_BLOCK, "        weights = np.where(mask, 0.0, weights)\n"),
        bias=_after_softmax(_BIAS, "        weights = weights * np.exp(mask)\n"),
    ),
    "softmax over the whole array (no axis): rows do not sum to 1": [
        ("exps.sum(axis=-1, keepdims=True)", "exps.sum()"),
    ],
    "shortcut: the softmax handed to torch.softmax": [
        ("    scores = np.asarray(scores, dtype=float)\n    shifted = scores - scores.max(axis=-1, keepdims=True)\n"
         "    exps = np.exp(shifted)\n    return exps / exps.sum(axis=-1, keepdims=True)",
         "    import torch\n    return torch.softmax(torch.as_tensor(np.asarray(scores, dtype=float)), dim=-1).numpy()"),
    ],
    "shortcut: attention handed to the course package": [
        ("    d_k = Q.shape[-1]\n", "    from attnbook.attention import scaled_dot_product_attention\n    d_k = Q.shape[-1]\n"),
        ("    return weights @ V, weights",
         "    import torch\n    out, _ = scaled_dot_product_attention(*(torch.as_tensor(a) for a in (Q, K, V)))\n"
         "    return out.numpy(), weights"),
    ],
    "shifts the caller's scores in place (scores -= max)": [
        ("    scores = np.asarray(scores, dtype=float)\n    shifted = scores - scores.max(axis=-1, keepdims=True)\n"
         "    exps = np.exp(shifted)",
         "    scores = np.asarray(scores, dtype=float)\n    scores -= scores.max(axis=-1, keepdims=True)\n"
         "    exps = np.exp(scores)"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and two of the three functions wrong": [
        ("def scores_to_weights(scores):", TAMPER + "def scores_to_weights(scores):"),
        ("exps.sum(axis=-1, keepdims=True)", "exps.sum()"),
        ("/ np.sqrt(d_k)", ""),
    ],
    "self-attention without the projections (X as queries, keys and values)": [
        ("    return attention(X @ W_q, X @ W_k, X @ W_v)", "    return attention(X, X, X)"),
    ],
    "self-attention with the value features in reverse order": [
        ("    return attention(X @ W_q, X @ W_k, X @ W_v)", "    return attention(X @ W_q, X @ W_k, (W_v.T @ X.T).T[:, ::-1])"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def scores_to_weights(scores):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    return exps / exps.sum(axis=-1, keepdims=True)', '    return np.zeros_like(scores)'),
    ]
    for kind in ['grading module', 'profiler']
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    'correct: the normalising sum written with np.sum': [
        ('    return exps / exps.sum(axis=-1, keepdims=True)',
         '    return exps / np.sum(exps, axis=-1, keepdims=True)'),
    ],
})

WRONG_ANSWERS.update({
    # q4: the conceptual question
    "what_attention_returns: (c), a tempting wrong statement": [
        ('    return "a"', '    return "c"'),
    ],
    "what_attention_returns: the right letter in upper case with its parenthesis": [
        ('    return "a"', '    return "(A)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7)
    "scores_to_weights in float32 (np.exp of float32 scores)": [
        ("    scores = np.asarray(scores, dtype=float)",
         "    scores = np.asarray(scores, dtype=np.float32)"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: the mask as -1e9 added to the scores (exp underflows to exactly 0)": AtEachTask(
        [(_ALLOW, "        scores = scores + np.where(mask, 0.0, -1e9)\n")],
        block=[(_BLOCK, "        scores = scores + np.where(mask, -1e9, 0.0)\n")],
        bias=[(_BIAS, "        scores = scores + np.maximum(mask, -1e9)\n")],
    ),
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): shifts that are stable for most rows, not for every row
    "softmax shifted by each row's first score (a row starting with -inf gives NaN)": [
        ("    shifted = scores - scores.max(axis=-1, keepdims=True)",
         "    shifted = scores - scores[..., :1]"),
    ],
    "softmax shifted by the largest score of the whole array (a low row underflows to 0 / 0)": [
        ("    shifted = scores - scores.max(axis=-1, keepdims=True)",
         "    shifted = scores - scores.max()"),
    ],
})

# ---------------------------------------------------------------------------------------
# Tampering with the shortcut rule (issue 28): the plain shortcut above ("the softmax handed
# to torch.softmax"), plus code that would switch the rule off if it were decided in the
# submission's process. Under isolation that code runs in the answer's child (the allowlist
# only notes it), where it changes nothing the grader sees, and torch is not there (q1 rules
# it out): q1 loses by what its tests see.
_TORCH_SOFTMAX = (
    "    scores = np.asarray(scores, dtype=float)\n    shifted = scores - scores.max(axis=-1, keepdims=True)\n"
    "    exps = np.exp(shifted)\n    return exps / exps.sum(axis=-1, keepdims=True)",
    "    import torch\n    return torch.softmax(torch.as_tensor(np.asarray(scores, dtype=float)), dim=-1).numpy()",
)
WRONG_ANSWERS.update({
    "tampering (q1): a default argument rebinds grading.guarded when the def runs, q1 handed to torch.softmax": [
        ("def scores_to_weights(scores):",
         'def scores_to_weights(scores, _rules_off=setattr(__import__("attnbook.exercise_checks.grading", '
         'fromlist=["guarded"]), "guarded", lambda fn, **kwargs: fn)):'),
        _TORCH_SOFTMAX,
    ],
    "tampering (q1): the profiler switched off inside the function (sys.setprofile(None)), q1 handed to torch.softmax": [
        (_TORCH_SOFTMAX[0],
         "    import sys\n    sys.setprofile(None)\n" + _TORCH_SOFTMAX[1]),
    ],
})

WRONG_ANSWERS.update({
    # issue 28: mistakes that used to pass every public check (item 3) and new kinds (item 6)
    "d_k from the wrong axis: K.shape[0], the number of keys": [
        ("    d_k = Q.shape[-1]\n", "    d_k = K.shape[0]\n"),
    ],
    "self-attention with W_q and W_k swapped": [
        ("    return attention(X @ W_q, X @ W_k, X @ W_v)", "    return attention(X @ W_k, X @ W_q, X @ W_v)"),
    ],
    "softmax shifted by the row mean (a row from -1000 to 1000 overflows)": [
        ("    shifted = scores - scores.max(axis=-1, keepdims=True)",
         "    shifted = scores - scores.mean(axis=-1, keepdims=True)"),
    ],
    "softmax row by row in a Python loop, np.stack of the rows (no rows: fails)": [
        ("    return exps / exps.sum(axis=-1, keepdims=True)",
         "    rows = [row / row.sum() for row in exps.reshape(-1, exps.shape[-1])]\n"
         "    return np.stack(rows).reshape(exps.shape)"),
    ],
    "mask made by multiplying, then zeros set to -inf (an allowed score of 0 is masked)": AtEachTask(
        [(_ALLOW, "        scores = scores * mask\n        scores[scores == 0] = -np.inf\n")],
        block=[(_BLOCK, "        scores = scores * ~mask\n        scores[scores == 0] = -np.inf\n")],
        bias=[(_BIAS, "        scores = scores * (mask == 0)\n        scores[scores == 0] = -np.inf\n")],
    ),
    "warned (q2): mask applied after the softmax, then renormalised (a huge masked score: 0 / 0)": AtEachTask(
        _after_softmax(_ALLOW, "        weights = np.where(mask, weights, 0.0)\n", renormalise=True),
        block=_after_softmax(_BLOCK, "        weights = np.where(mask, 0.0, weights)\n", renormalise=True),
        bias=_after_softmax(_BIAS, "        weights = weights * np.exp(mask)\n", renormalise=True),
    ),
    "correct: the softmax through the log-sum-exp of each row": [
        ("    shifted = scores - scores.max(axis=-1, keepdims=True)\n    exps = np.exp(shifted)\n"
         "    return exps / exps.sum(axis=-1, keepdims=True)",
         "    top = scores.max(axis=-1, keepdims=True)\n"
         "    log_total = top + np.log(np.exp(scores - top).sum(axis=-1, keepdims=True))\n"
         "    return np.exp(scores - log_total)"),
    ],
    "correct: self-attention written out inline, without calling attention": [
        ("    return attention(X @ W_q, X @ W_k, X @ W_v)",
         "    q, k, v = X @ W_q, X @ W_k, X @ W_v\n"
         "    s = q @ k.T / np.sqrt(q.shape[-1])\n"
         "    e = np.exp(s - s.max(axis=-1, keepdims=True))\n"
         "    w = e / e.sum(axis=-1, keepdims=True)\n"
         "    return w @ v, w"),
    ],
})

WRONG_ANSWERS.update({
    # issue 36, item 7: a shape the public examples now show, and an answer that does not
    # solve the question
    "warned (q1): the keys' axis taken as axis 1 (right for a matrix, not for a batch)": [
        ("    shifted = scores - scores.max(axis=-1, keepdims=True)\n    exps = np.exp(shifted)\n"
         "    return exps / exps.sum(axis=-1, keepdims=True)",
         "    axis = 0 if scores.ndim == 1 else 1\n"
         "    shifted = scores - scores.max(axis=axis, keepdims=True)\n    exps = np.exp(shifted)\n"
         "    return exps / exps.sum(axis=axis, keepdims=True)"),
    ],
    "non-solving (q2): uniform weights over the allowed keys (the scores ignored)": [
        ("    weights = scores_to_weights(scores)\n",
         "    weights = scores_to_weights(np.where(np.isfinite(scores), 0.0, scores))\n"),
    ],
    "self-attention of the weight matrices (X forgotten: right only when X is the identity)": [
        ("    return attention(X @ W_q, X @ W_k, X @ W_v)", "    return attention(W_q, W_k, W_v)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45: the review's answers written from the student notebook, and answers that do
    # not solve their question (each must score 0 on it: every check compares values)
    # at block, the book's line; at bias, the float mask taken for a boolean one: its -inf
    # (must not attend) is truthy and its 0 (may attend) is not
    "mask read backwards: np.where(mask, -inf, scores) hides the keys the query may read": AtEachTask(
        [(_ALLOW, _BLOCK)],
        block=[(_BLOCK, _ALLOW)],
        bias=[(_BIAS, _ALLOW)],
    ),
    # the bias task's classic slips, each written at every task: the mask multiplied into
    # the scores instead of added (or used to hide them), and a mask read as the other kind
    # (a boolean one added as a bias; the bias read as a boolean mask, its finite shifts lost)
    "mask multiplied into the scores (a hidden score becomes 0 or +-inf, not -inf)": AtEachTask(
        [(_ALLOW, "        scores = scores * mask\n")],
        block=[(_BLOCK, "        scores = scores * ~mask\n")],
        bias=[(_BIAS, "        scores = scores * mask\n")],
    ),
    "mask taken for the other kind: a boolean mask added as a bias, a bias read as a boolean mask": AtEachTask(
        [(_ALLOW, "        scores = scores + mask\n")],
        block=[(_BLOCK, "        scores = scores + mask\n")],
        bias=[(_BIAS, "        scores = np.where(np.isneginf(mask), -np.inf, scores)\n")],
    ),
    "attention returns (weights, output), the pair in the wrong order": [
        ("    return weights @ V, weights", "    return weights, weights @ V"),
    ],
    "self-attention with the queries X @ W_q.T (the nn.Linear habit)": [
        ("    return attention(X @ W_q, X @ W_k, X @ W_v)", "    return attention(X @ W_q.T, X @ W_k, X @ W_v)"),
    ],
    "non-solving (q1): uniform weights whatever the scores": [
        ("    return exps / exps.sum(axis=-1, keepdims=True)",
         "    return np.full_like(scores, 1.0 / scores.shape[-1])"),
    ],
    "non-solving (q2): zeros of the right shapes": [
        ("    return weights @ V, weights",
         "    return np.zeros((Q.shape[0], V.shape[1])), np.zeros((Q.shape[0], K.shape[0]))"),
    ],
    "non-solving (q3): every token reads itself (identity weights)": [
        ("    return attention(X @ W_q, X @ W_k, X @ W_v)", "    return X @ W_v, np.eye(len(X))"),
    ],
})
