"""Classic wrong answers to exercise 4, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). Question 1 has a pool of tasks
(`tools.exercise_variants.POOLS`): each of its mistakes is written at every roster task too
(`AtEachTask`: the edits of that task's text), so the proof at every sampled variant grades
the same mistake."""

from tools.exercise_variants import AtEachTask

# question 1's answer at each task of its pool (the book's "causal" first)
_CAUSAL = "    return torch.ones(T, T, dtype=torch.bool).tril()\n"
_WINDOW = ("    causal = torch.ones(T, T, dtype=torch.bool).tril()  # keys 0..i\n"
           "    return causal & ~causal.tril(-window)  # less the keys window or more behind\n")
_CACHE = "    return torch.ones(T, past + T, dtype=torch.bool).tril(diagonal=past)\n"
_DEFS = {"book": "def causal_mask(T):", "window": "def causal_mask(T, window):",
         "cache": "def causal_mask(T, past):"}


def _q1(book: str, window: str, cache: str, defs: str = "") -> AtEachTask:
    """One mistake of question 1 at each task: its answer line(s) replaced, and `defs`
    written before the function where given."""
    def at(task: str, old: str, new: str) -> list:
        return [(_DEFS[task], defs + _DEFS[task])] * bool(defs) + [(old, new)]
    return AtEachTask(at("book", _CAUSAL, book), window=at("window", _WINDOW, window),
                      cache=at("cache", _CACHE, cache))


WRONG_ANSWERS = {
    "causal mask is the upper triangle (triu): queries read the future": _q1(
        _CAUSAL.replace(".tril()", ".triu()"),
        _WINDOW.replace(".tril()", ".triu()"),
        _CACHE.replace(".tril(", ".triu("),
    ),
    "causal mask inverted (~tril), the nn.MultiheadAttention convention (True = masked out)": _q1(
        _CAUSAL.replace("return ", "return ~"),
        _WINDOW.replace("return causal & ~causal.tril(-window)", "return ~(causal & ~causal.tril(-window))"),
        _CACHE.replace("return ", "return ~"),
    ),
    "causal mask without the diagonal (tril(-1)): a token may not read itself": _q1(
        _CAUSAL.replace(".tril()", ".tril(diagonal=-1)"),
        _WINDOW.replace(".tril()", ".tril(diagonal=-1)"),
        _CACHE.replace("diagonal=past", "diagonal=past - 1"),
    ),
    "causal mask one key too wide (tril(1); a window of window + 1; diagonal past + 1)": _q1(
        _CAUSAL.replace(".tril()", ".tril(1)"),
        _WINDOW.replace("tril(-window)", "tril(-window - 1)"),
        _CACHE.replace("diagonal=past", "diagonal=past + 1"),
    ),
    "padding mask of shape (B, T, 1): masks queries instead of keys": [
        ("return is_real[:, None, :]", "return is_real[:, :, None]"),
    ],
    "padding mask off by one (<=): the first padding key stays visible": [
        ("positions[None, :] < lengths[:, None]", "positions[None, :] <= lengths[:, None]"),
    ],
    "mask applied after the softmax (weights zeroed, rows no longer sum to 1)": [
        ('    scores = scores.masked_fill(~mask, float("-inf"))  # before the softmax\n', ""),
        ("weights = weights.masked_fill(~has_keys, 0.0)", "weights = weights.masked_fill(~mask, 0.0)"),
    ],
    "mask inverted in attention (masked_fill where the mask is True)": [
        ("scores.masked_fill(~mask,", "scores.masked_fill(mask,"),
    ],
    "no guard: a query whose keys are all masked gets NaN": [
        ("    has_keys = mask.any(dim=-1, keepdim=True)", "    has_keys = torch.ones(1, dtype=torch.bool)"),
        ("    weights = weights.masked_fill(~has_keys, 0.0)\n", ""),
    ],
    "correct: -1e9 instead of -inf (the fully masked rows are handled apart)": [
        ('float("-inf")', "-1e9"),
    ],
    "no scaling by sqrt(d_k)": [
        (" / math.sqrt(d_k)", ""),
    ],
    "shortcut: causal_mask imports the course package's mask": _q1(
        "    from attnbook import masks\n    return masks.causal_mask(T)\n",
        "    from attnbook import masks\n    return masks.sliding_window_mask(T, window)\n",
        "    from attnbook import masks\n    return masks.causal_mask(T, past + T)\n",
    ),
    "shortcut: the output comes from F.scaled_dot_product_attention": [
        ("    return weights @ v, weights",
         "    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask), weights"),
    ],
    "softmax written out without subtracting the row maximum: NaN on large scores": [
        ("weights = torch.softmax(scores.masked_fill(~has_keys, 0.0), dim=-1)",
         "weights = scores.masked_fill(~has_keys, 0.0).exp()\n"
         "    weights = weights / weights.sum(dim=-1, keepdim=True)"),
    ],
    "scales the caller's queries in place (q /= sqrt(d_k))": [
        ("    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)",
         "    q /= math.sqrt(d_k)\n    scores = q @ k.transpose(-2, -1)"),
    ],
    "float32 result whatever the input dtype": [
        ("    return weights @ v, weights", "    return (weights @ v).float(), weights.float()"),
    ],
    "padding mask as int (0/1) instead of bool": [
        ("    return is_real[:, None, :]  # (B, 1, T)", "    return is_real[:, None, :].int()  # (B, 1, T)"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and three of the four functions wrong": [
        ("def causal_mask(T):", TAMPER + "def causal_mask(T):"),
        (".tril()", ".triu()"),
        ("positions[None, :] < lengths[:, None]", "positions[None, :] <= lengths[:, None]"),
        (" / math.sqrt(d_k)", ""),
    ],
    "decode step attends before appending: the new token does not see itself": [
        ("    scores = (K @ q[..., :, None])[..., 0] / math.sqrt(q.shape[-1])  # (..., t + 1)\n"
         "    p = torch.softmax(scores, dim=-1)  # over the cached keys and its own\n"
         "    return (p[..., None, :] @ V)[..., 0, :], (K, V)",
         "    K_old = cache[0] if cache is not None else K\n    V_old = cache[1] if cache is not None else V\n"
         "    scores = (K_old @ q[..., :, None])[..., 0] / math.sqrt(q.shape[-1])  # (..., t)\n"
         "    p = torch.softmax(scores, dim=-1)  # over the cached keys only\n"
         "    return (p[..., None, :] @ V_old)[..., 0, :], (K, V)"),
    ],
    "decode step without the sqrt(d_k) scaling": [
        ("(K @ q[..., :, None])[..., 0] / math.sqrt(q.shape[-1])", "(K @ q[..., :, None])[..., 0]"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def causal_mask(T):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    return torch.ones(T, T, dtype=torch.bool).tril()', '    return torch.zeros(T, T)'),
    ]
    for kind in ['grading module', "otter's results"]
})

WRONG_ANSWERS.update({
    "fully masked rows: an additive -inf mask, then nan_to_num (a finite output, NaN gradients)": [
        ('    scores = scores.masked_fill(~mask, float("-inf"))  # before the softmax',
         '    scores = scores + torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(~mask, float("-inf"))'),
        ("    has_keys = mask.any(dim=-1, keepdim=True)", "    has_keys = torch.ones(1, dtype=torch.bool)"),
        ("    weights = weights.masked_fill(~has_keys, 0.0)\n", "    weights = torch.nan_to_num(weights, nan=0.0)\n"),
    ],
})

WRONG_ANSWERS.update({
    # q5: the conceptual question
    "why_mask_before_softmax: (b), a tempting wrong statement": [
        ('    return "a"', '    return "b"'),
    ],
    "why_mask_before_softmax: the right letter in upper case with its parenthesis": [
        ('    return "a"', '    return "(A)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): squeeze() also drops the batch axis of a batch of one
    "padding mask squeezes the lengths (a batch of one loses its axis)": [
        ("    lengths = torch.as_tensor(lengths)  # (B,)",
         "    lengths = torch.as_tensor(lengths).reshape(-1, 1).squeeze()  # (B,)"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): squeeze() drops every axis of size 1, the batch's too
    "decode step squeezes the scores and the output (a batch of one loses its axis)": [
        ("    scores = (K @ q[..., :, None])[..., 0] / math.sqrt(q.shape[-1])  # (..., t + 1)",
         "    scores = (K @ q[..., :, None]).squeeze() / math.sqrt(q.shape[-1])  # (..., t + 1)"),
        ("    return (p[..., None, :] @ V)[..., 0, :], (K, V)",
         "    return (p[..., None, :] @ V).squeeze(), (K, V)"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): float64 precision in the decode step
    "decode step takes the softmax in float32 and casts back (float64 off by about 1e-7)": [
        ("    p = torch.softmax(scores, dim=-1)  # over the cached keys and its own",
         "    p = torch.softmax(scores.float(), dim=-1).to(scores.dtype)"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: decode step with broadcast products and sums instead of matrix products": [
        ("    scores = (K @ q[..., :, None])[..., 0] / math.sqrt(q.shape[-1])  # (..., t + 1)\n"
         "    p = torch.softmax(scores, dim=-1)  # over the cached keys and its own\n"
         "    return (p[..., None, :] @ V)[..., 0, :], (K, V)",
         "    scores = (K * q[..., None, :]).sum(dim=-1) * q.shape[-1] ** -0.5\n"
         "    p = torch.softmax(scores, dim=-1)\n"
         "    return (p[..., :, None] * V).sum(dim=-2), (K, V)"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): a size past a buffer made in advance
    "causal mask sliced from a (1024, 1024) buffer made once (GPT-2's context)": _q1(
        "    return _CAUSAL[:T, :T].clone()\n",
        "    causal = _CAUSAL[:T, :T].clone()\n    return causal & ~causal.tril(-window)\n",
        "    return _CAUSAL[past:past + T, :past + T].clone()\n",
        defs="_CAUSAL = torch.ones(1024, 1024, dtype=torch.bool).tril()\n\n\n",
    ),
})

WRONG_ANSWERS.update({
    # issue 28, item 6: new kinds of mistake, each caught by a hidden test
    "masked attention: the mask made by multiplying (an allowed score of exactly 0 is masked)": [
        ('    scores = scores.masked_fill(~mask, float("-inf"))  # before the softmax',
         '    scores = scores * mask\n    scores = scores.masked_fill(scores == 0, float("-inf"))'),
    ],
    "masked attention: weights masked after the softmax, then renormalised": [
        ("    weights = torch.softmax(scores.masked_fill(~has_keys, 0.0), dim=-1)\n"
         "    weights = weights.masked_fill(~has_keys, 0.0)\n",
         "    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1).masked_fill(~mask, 0.0)\n"
         "    total = weights.sum(dim=-1, keepdim=True)\n"
         "    weights = torch.where(total > 0, weights / total, torch.zeros_like(weights))\n"),
    ],
    "padding mask from a list comprehension (an empty batch loses its shape)": [
        ("    lengths = torch.as_tensor(lengths)  # (B,)\n    positions = torch.arange(T)  # (T,)\n"
         "    is_real = positions[None, :] < lengths[:, None]  # (B, T)\n    return is_real[:, None, :]  # (B, 1, T)",
         "    return torch.tensor([[t < int(n) for t in range(T)] for n in lengths], dtype=torch.bool)[:, None, :]"),
    ],
    "padding mask with a mutable default list, shared between calls": [
        ("def padding_mask(lengths, T):", "def padding_mask(lengths, T, rows=[]):"),
        ("    lengths = torch.as_tensor(lengths)  # (B,)\n    positions = torch.arange(T)  # (T,)\n"
         "    is_real = positions[None, :] < lengths[:, None]  # (B, T)\n    return is_real[:, None, :]  # (B, 1, T)",
         "    rows.extend([t < int(n) for t in range(T)] for n in lengths)\n"
         "    return torch.tensor(rows, dtype=torch.bool).reshape(-1, 1, T)"),
    ],
    "correct: the causal mask by comparing positions": _q1(
        "    i = torch.arange(T)\n    return i[:, None] >= i[None, :]\n",
        "    i = torch.arange(T)\n    behind = i[:, None] - i[None, :]\n    return (behind >= 0) & (behind < window)\n",
        "    i, j = torch.arange(T), torch.arange(past + T)\n    return j[None, :] <= i[:, None] + past\n",
    ),
})

WRONG_ANSWERS.update({
    # issue 36, item 7: answers that do not solve the question must score 0 on it
    "non-solving (q1): every key allowed, a mask of True": _q1(
        "    return torch.ones(T, T, dtype=torch.bool)\n",
        "    return torch.ones(T, T, dtype=torch.bool)\n",
        "    return torch.ones(T, past + T, dtype=torch.bool)\n",
    ),
    "non-solving (q4): the cache grown, the output zeros": [
        ("    return (p[..., None, :] @ V)[..., 0, :], (K, V)", "    return torch.zeros_like(v), (K, V)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45, item 2: the review's silent loss (0.7/3), now warned by a public check
    "warned (q4): the cache kept new-first (torch.cat([new, cache])): outputs right, the cache's order wrong": [
        ("        K = torch.cat([cache[0], K], dim=-2)  # (..., t + 1, d_k)\n"
         "        V = torch.cat([cache[1], V], dim=-2)  # (..., t + 1, d_v)",
         "        K = torch.cat([K, cache[0]], dim=-2)  # (..., t + 1, d_k)\n"
         "        V = torch.cat([V, cache[1]], dim=-2)  # (..., t + 1, d_v)"),
    ],
    # issue 45, item 2: inputs in the layout a head split makes (a transpose) are not contiguous
    "masked attention flattens the batch axes with .view for torch.bmm (fails on transposed heads)": [
        ("    return weights @ v, weights",
         "    flat = weights.reshape(-1, *weights.shape[-2:])\n"
         "    out = torch.bmm(flat, v.expand(*weights.shape[:-2], *v.shape[-2:]).view(-1, *v.shape[-2:]))\n"
         "    return out.reshape(*weights.shape[:-1], v.shape[-1]), weights"),
    ],
    "non-solving (q3): weights spread evenly over the allowed keys, no scores": [
        ("    weights = torch.softmax(scores.masked_fill(~has_keys, 0.0), dim=-1)",
         "    weights = torch.softmax(torch.zeros_like(scores).masked_fill(~mask, float('-inf')).masked_fill(~has_keys, 0.0), dim=-1)"),
    ],
})
WRONG_ANSWERS.update({  # layouts: an answer that works only on freshly made, contiguous queries
    "decode step flattens the batch axes of q with .view for torch.bmm (fails on heads split by a transpose)": [
        ("    scores = (K @ q[..., :, None])[..., 0] / math.sqrt(q.shape[-1])  # (..., t + 1)\n",
         "    d_k = q.shape[-1]\n"
         "    flat_q = q.view(-1, d_k, 1)  # one column per query, the batch axes flattened\n"
         "    flat_K = K.reshape(-1, K.shape[-2], d_k)\n"
         "    scores = torch.bmm(flat_K, flat_q)[..., 0].reshape(K.shape[:-1]) / math.sqrt(d_k)\n"),
    ],
})
WRONG_ANSWERS.update({
    "correct: decode step with torch.bmm over a .reshape of q's batch axes": [
        ("    scores = (K @ q[..., :, None])[..., 0] / math.sqrt(q.shape[-1])  # (..., t + 1)\n",
         "    d_k = q.shape[-1]\n"
         "    flat_q = q.reshape(-1, d_k, 1)\n"
         "    flat_K = K.reshape(-1, K.shape[-2], d_k)\n"
         "    scores = torch.bmm(flat_K, flat_q)[..., 0].reshape(K.shape[:-1]) / math.sqrt(d_k)\n"),
    ],
})
