"""Classic wrong answers to exercise 8, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). Question 1 has a pool of tasks
(`tools.exercise_variants.POOLS`): each mistake on the lines a task rewrites is written at the
roster task too (`AtEachTask`: the edits of that task's text, `_q1`), so the proof at every
sampled variant grades the same mistake."""

from tools.exercise_variants import AtEachTask

# question 1's answer at each task: contiguous groups (the book's), strided (tiled) ones, or
# the book's groups of keys stored token by token, (B, T, H_kv, d)
_COPIES = {"book": "    copies = x[:, :, None].expand(B, H_kv, n_rep, T, d)  # (B, H_kv, n_rep, T, d)\n",
           "strided": "    copies = x[:, None].expand(B, n_rep, H_kv, T, d)  # (B, n_rep, H_kv, T, d)\n",
           "tokens": "    copies = x[:, :, :, None].expand(B, T, H_kv, n_rep, d)  # (B, T, H_kv, n_rep, d)\n"}
_RETURN = dict.fromkeys(("book", "strided"), "    return copies.reshape(B, H_kv * n_rep, T, d)  # a view of x when n_rep = 1")
_RETURN["tokens"] = "    return copies.reshape(B, T, H_kv * n_rep, d)  # a view of x when n_rep = 1"
_SHAPE = dict.fromkeys(("book", "strided"), "    B, H_kv, T, d = x.shape\n")
_SHAPE["tokens"] = "    B, T, H_kv, d = x.shape  # token by token\n"
TASKS = ("book", "strided", "tokens")


def _at_each(edits: dict) -> AtEachTask:
    """task -> its edits: the book's first, the roster tasks' as keywords."""
    return AtEachTask(edits["book"], **{task: edits[task] for task in TASKS[1:]})


def _q1(book: str, strided: str, tokens: str, shape: bool = False) -> AtEachTask:
    """One mistake of question 1 at each task: the two answer lines (and the line reading the
    shape above them where `shape`) replaced by the task's own form of the mistake."""
    new = {"book": book, "strided": strided, "tokens": tokens}
    return _at_each({task: [((_SHAPE[task] if shape else "") + _COPIES[task] + _RETURN[task], new[task])]
                     for task in TASKS})


# question 2's lines that count the copies and expand the keys and values (the strided task's
# comment says "tiled"; the tokens task reads H_kv from axis 2 and brings the heads forward)
_N_REP = dict.fromkeys(("book", "strided"), "    n_rep = q.shape[1] // k.shape[1]\n")
_N_REP["tokens"] = "    n_rep = q.shape[1] // k.shape[2]  # k is (B, T_k, H_kv, d_k)\n"
_EXPANDED = {"book": "    k, v = expand_kv(k, n_rep), expand_kv(v, n_rep)  # (B, H, T_k, d_k)\n"}
_EXPANDED["strided"] = _EXPANDED["book"][:-1] + ", tiled\n"
_EXPANDED["tokens"] = "    k, v = (expand_kv(t, n_rep).transpose(1, 2) for t in (k, v))  # (B, H, T_k, d_k)\n"

WRONG_ANSWERS = {
    # at the strided task the mistake is the other way round: each head repeated in place
    "heads in the other order (tiled 0, 1, 0, 1 where repeated in place 0, 0, 1, 1, or back)": _q1(
        "    return x.repeat(1, n_rep, 1, 1)", "    return x.repeat_interleave(n_rep, dim=1)",
        "    return x.repeat(1, 1, n_rep, 1)"),
    "scores not divided by sqrt(d_k)": [
        ("scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])", "scores = q @ k.transpose(-2, -1)"),
    ],
    "warned (q1): expand_kv takes B, H_kv, T and d from the notebook's variables, not from x.shape": _at_each({
        task: [(_SHAPE[task] + "    copies", "    d = d_k  # the notebook's sizes\n    copies")] for task in TASKS}),
    "expand_kv expands x.data, not x (the result drops out of autograd's graph)": _at_each({
        task: [(_COPIES[task], _COPIES[task].replace("= x[", "= x.data["))] for task in TASKS}),
    "warned (q2): the causal mask multiplied in (hidden scores 0, not -inf)": [
        ("        scores = scores.masked_fill(future, float(\"-inf\"))\n    weights",
         "        scores = scores * ~future\n    weights"),
    ],
    "causal mask applied to the weights after the softmax": [
        ("        scores = scores.masked_fill(future, float(\"-inf\"))\n    weights = torch.softmax(scores, dim=-1)",
         "        scores = torch.softmax(scores, dim=-1).masked_fill(future, 0.0)\n"
         "        return scores @ v\n    weights = torch.softmax(scores, dim=-1)"),
    ],
    "shortcut: PyTorch's scaled_dot_product_attention with enable_gqa=True": _at_each({
        task: [(_N_REP[task], "    import torch.nn.functional as F\n"
                "    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)\n"
                .replace("q, k, v,", "q, k.transpose(1, 2), v.transpose(1, 2)," if task == "tokens" else "q, k, v,"))]
        for task in TASKS}),
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and both functions wrong": [
        ("def expand_kv(x, n_rep):", TAMPER + "def expand_kv(x, n_rep):"),
        ("    copies = x[:, :, None].expand(B, H_kv, n_rep, T, d)  # (B, H_kv, n_rep, T, d)\n"
         "    return copies.reshape(B, H_kv * n_rep, T, d)  # a view of x when n_rep = 1",
         "    return x.repeat(1, n_rep, 1, 1)"),
        ("scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])", "scores = q @ k.transpose(-2, -1)"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def expand_kv(x, n_rep):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    return copies.reshape(B, H_kv * n_rep, T, d)  # a view of x when n_rep = 1', '    return None'),
    ]
    for kind in ["otter's results", 'profiler']
})

WRONG_ANSWERS.update({
    # the core test also decodes (T_q < T_k, the mask aligned at the bottom-right): review 57 (issue 45)
    "warned (q2): decoding: the causal mask aligned at the top-left (query i sees keys j <= i)": [
        ("triu(T_k - T_q + 1)", "triu(1)"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    'correct: heads repeated with repeat_interleave (x.repeat at the strided task)': _q1(
        '    return x.repeat_interleave(n_rep, dim=1)', '    return x.repeat(1, n_rep, 1, 1)',
        '    return x.repeat_interleave(n_rep, dim=2)'),
})

WRONG_ANSWERS.update({
    # q3: the conceptual question
    "what_gqa_saves: (b), a tempting wrong statement": [
        ('    return "a"', '    return "b"'),
    ],
    "what_gqa_saves: the right letter in upper case with its parenthesis": [
        ('    return "a"', '    return "(A)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): float32 inside, the dtype of the result restored
    "softmax in float32, the result cast back to the input's dtype": [
        ("    weights = torch.softmax(scores, dim=-1)\n    return weights @ v",
         "    weights = torch.softmax(scores.float(), dim=-1).to(v.dtype)\n    return weights @ v"),
    ],
})

WRONG_ANSWERS.update({  # issue 28: the question allows a view (the course's repeat_kv returns x at n_rep = 1)
    "correct: the course's repeat_kv, typed in (x itself when n_rep = 1, else expand and reshape)": _at_each({
        task: [(_SHAPE[task], "    if n_rep == 1:\n        return x\n" + _SHAPE[task])] for task in TASKS}),
    "correct: grouped attention without expand_kv (the query heads reshaped into groups)": AtEachTask(
        [("    n_rep = q.shape[1] // k.shape[1]\n" + _EXPANDED["book"]
          + "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T_q, T_k)\n",
          "    B, H, T_q, d_k = q.shape\n"
          "    grouped = q.reshape(B, k.shape[1], H // k.shape[1], T_q, d_k)  # (B, H_kv, g, T_q, d_k)\n"
          "    scores = grouped @ k[:, :, None].transpose(-2, -1) / math.sqrt(d_k)  # (B, H_kv, g, T_q, T_k)\n"),
         ("    return weights @ v", "    return (weights @ v[:, :, None]).reshape(B, H, T_q, d_k)")],
        # strided: query head h = i * H_kv + j reads key/value head j, so the groups are (g, H_kv)
        strided=[("    n_rep = q.shape[1] // k.shape[1]\n" + _EXPANDED["strided"]
                  + "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T_q, T_k)\n",
                  "    B, H, T_q, d_k = q.shape\n"
                  "    grouped = q.reshape(B, H // k.shape[1], k.shape[1], T_q, d_k)  # (B, g, H_kv, T_q, d_k)\n"
                  "    scores = grouped @ k[:, None].transpose(-2, -1) / math.sqrt(d_k)  # (B, g, H_kv, T_q, T_k)\n"),
                 ("    return weights @ v", "    return (weights @ v[:, None]).reshape(B, H, T_q, d_k)")],
        # tokens: the book's groups once the heads of k and v are brought forward
        tokens=[(_N_REP["tokens"] + _EXPANDED["tokens"]
                 + "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T_q, T_k)\n",
                 "    B, H, T_q, d_k = q.shape\n"
                 "    k, v = k.transpose(1, 2), v.transpose(1, 2)  # (B, H_kv, T_k, d_k)\n"
                 "    grouped = q.reshape(B, k.shape[1], H // k.shape[1], T_q, d_k)  # (B, H_kv, g, T_q, d_k)\n"
                 "    scores = grouped @ k[:, :, None].transpose(-2, -1) / math.sqrt(d_k)  # (B, H_kv, g, T_q, T_k)\n"),
                ("    return weights @ v", "    return (weights @ v[:, :, None]).reshape(B, H, T_q, d_k)")]),
    # issue 28, item 6: mistakes that passed every test before
    "scale fixed at sqrt(8), the example's width (a constant, not sqrt(d_k))": [
        ("/ math.sqrt(q.shape[-1])", "/ math.sqrt(8)"),
    ],
    "mask made by multiplying: scores that are exactly 0 (allowed ones too) set to -inf": [
        ("        scores = scores.masked_fill(future, float(\"-inf\"))",
         "        scores = scores * ~future\n        scores = scores.masked_fill(scores == 0, float(\"-inf\"))"),
    ],
    "keys expanded through NumPy (fails for inputs that require grad)": _at_each({
        task: [(_RETURN[task], "    import numpy as np\n    return torch.from_numpy(" + numpy + ")")]
        for task, numpy in zip(TASKS, ("np.repeat(x.numpy(), n_rep, axis=1)", "np.tile(x.numpy(), (1, n_rep, 1, 1))",
                                       "np.repeat(x.numpy(), n_rep, axis=2)"))}),
})

# ---------------------------------------------------------------------------------------
# Shortcuts to the course package's repeat_kv (issue 28): plainly, and reached through
# getattr(__import__(...)) or after removing import hooks. The plain one fails the tests
# that state the rule; the dynamic ones are read from the source as tampering, and cost the
# question whose function holds them (q1): 0.
WRONG_ANSWERS.update({
    "shortcut: expand_kv handed to the course package's repeat_kv (copied)": _q1(
        *["    from attnbook.attention import repeat_kv\n    return repeat_kv(x, n_rep).clone()"] * 3, shape=True),
    "tampering (q1): repeat_kv reached through getattr(__import__('attnbook.attention'), ...)": [
        ("    B, H_kv, T, d = x.shape\n    copies = x[:, :, None].expand(B, H_kv, n_rep, T, d)  # (B, H_kv, n_rep, T, d)\n"
         "    return copies.reshape(B, H_kv * n_rep, T, d)  # a view of x when n_rep = 1",
         '    return getattr(__import__("attnbook.attention"), "attention").repeat_kv(x, n_rep).clone()'),
    ],
    "tampering (q1): import hooks removed (sys.meta_path rewritten), then repeat_kv from the course package": [
        ("    B, H_kv, T, d = x.shape\n    copies = x[:, :, None].expand(B, H_kv, n_rep, T, d)  # (B, H_kv, n_rep, T, d)\n"
         "    return copies.reshape(B, H_kv * n_rep, T, d)  # a view of x when n_rep = 1",
         "    import sys\n    sys.meta_path[:] = [hook for hook in sys.meta_path if 'attnbook' not in repr(hook)]\n"
         "    from attnbook.attention import repeat_kv\n    return repeat_kv(x, n_rep).clone()"),
    ],
})

# issue 28, item 6: a tensor built on the CPU beside inputs on another device (the meta
# device in the checks, a GPU in real use)
WRONG_ANSWERS.update({
    "expand_kv fills a torch.empty(...) made without device= (on the CPU) head by head": _q1(*(
        "    B, H_kv, T, d = x.shape\n    out = torch.empty(B, H_kv * n_rep, T, d, dtype=x.dtype)\n"
        f"    for h in range(H_kv * n_rep):\n        out[:, h] = x[:, {source}]\n"
        "    return out" for source in ("h // n_rep", "h % H_kv")),
        "    B, T, H_kv, d = x.shape\n    out = torch.empty(B, T, H_kv * n_rep, d, dtype=x.dtype)\n"
        "    for h in range(H_kv * n_rep):\n        out[:, :, h] = x[:, :, h // n_rep]\n"
        "    return out", shape=True),
    "gqa_attention builds the causal mask without device= (on the CPU)": [
        ("torch.ones(T_q, T_k, dtype=torch.bool, device=q.device)",
         "torch.ones(T_q, T_k, dtype=torch.bool)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 36, item 7: a group layout the example cannot tell apart, and catch-all answers
    # that return zeros of the right shape (they passed the meta-device checks)
    "warned (q2): n_rep taken as the number of key/value heads (the example's 4 over 2 hides it)": _at_each({
        task: [(_N_REP[task], "    n_rep = k.shape[2]\n" if task == "tokens" else "    n_rep = k.shape[1]\n")]
        for task in TASKS}),
    "non-solving (q1): a catch-all except returns zeros of the right shape": _q1(*[
        "    try:\n"
        f"        return x.expand({shape})\n"
        "    except Exception:\n"
        f"        return x.new_zeros({shape})"
        for shape in ["B, H_kv * n_rep, T, d"] * 2 + ["B, T, H_kv * n_rep, d"]]),
    "non-solving (q2): a catch-all except hides a typo and returns zeros shaped like q": [
        ("    weights = torch.softmax(scores, dim=-1)\n    return weights @ v",
         "    try:\n"
         "        weights = torch.softmax(scores, dim=-1, keepdim=True)\n"
         "        return weights @ v\n"
         "    except Exception:\n"
         "        return torch.zeros_like(q)"),
    ],
})

# issue 36, item 7: inputs laid out as the course passes them (keys from
# x.view(B, T, H_kv, d).transpose(1, 2): not contiguous) reach the hidden tests so too
WRONG_ANSWERS.update({
    "warned (q1): flattens batch and heads with view (fails on the course's transposed keys)": _q1(
        "    rows = x.view(B * H_kv, 1, T, d)  # one row per sequence and head\n"
        "    return rows.expand(B * H_kv, n_rep, T, d).reshape(B, H_kv * n_rep, T, d)",
        # strided: a sequence's heads and tokens folded into one axis, tiled, unfolded
        "    rows = x.view(B, H_kv * T, d)  # one row per sequence: its heads' tokens\n"
        "    return rows.repeat(1, n_rep, 1).view(B, n_rep * H_kv, T, d)",
        # tokens: a batch's tokens folded into one axis with view
        "    rows = x.view(B * T, H_kv, 1, d)  # one row per token\n"
        "    return rows.expand(B * T, H_kv, n_rep, d).reshape(B, T, H_kv * n_rep, d)"),
})

WRONG_ANSWERS.update({
    # issue 45, item 2: inputs in the course's layout (heads split by a transpose) are not contiguous
    "gqa flattens batch and heads with .view (fails on heads split by a transpose)": [
        ("    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T_q, T_k)",
         "    B, H, T_q, d = q.shape\n"
         "    scores = (q.view(B * H, T_q, d) @ k.reshape(B * H, -1, d).transpose(1, 2)).view(B, H, T_q, -1) / math.sqrt(d)"),
    ],
    "non-solving (q2): the values of each query's key/value head averaged, no scores": [
        ("    weights = torch.softmax(scores, dim=-1)\n    return weights @ v",
         "    return v.mean(dim=-2, keepdim=True).expand(*q.shape[:-1], v.shape[-1]).clone()"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45: .view after expand cannot merge the stride-0 axis into the heads, whatever the
    # keys' layout: it raises for every n_rep > 1 with two or more key/value heads
    "warned (q1): expand, then .view instead of .reshape (raises for every n_rep > 1)": _at_each({
        task: [(_RETURN[task], _RETURN[task].split("  #")[0].replace(".reshape(", ".view("))] for task in TASKS}),
})

WRONG_ANSWERS.update({
    # review 52 (issue 45): the square mask of q's length passes the checks with T_q = T_k and with
    # T_q = 1 (a (1, 1) mask broadcasts over the keys); it fails for 1 < T_q < T_k
    "warned (q2): the causal mask square, (T, T) with T = q.shape[-2] (not (T_q, T_k))": [
        ("        T_q, T_k = q.shape[-2], k.shape[-2]\n"
         "        future = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).triu(T_k - T_q + 1)",
         "        T = q.shape[-2]\n"
         "        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)"),
    ],
})

WRONG_ANSWERS.update({  # review 60 (issue 45): each flagged by a public check of q2 first
    "warned (q2): softmax over dim=-2 (the queries), not the keys": [
        ("    weights = torch.softmax(scores, dim=-1)", "    weights = torch.softmax(scores, dim=-2)"),
    ],
    "warned (q2): returns (out, weights), as the chapter's attention function does": [
        ("    return weights @ v", "    return weights @ v, weights"),
    ],
    "warned (q2): softmax written by hand, exp(s) / exp(s).sum(-1), no maximum subtracted": [
        ("    weights = torch.softmax(scores, dim=-1)",
         "    e = scores.exp()\n    weights = e / e.sum(-1, keepdim=True)"),
    ],
    "warned (q2): the causal mask sized from the notebook's global T": [
        ("        T_q, T_k = q.shape[-2], k.shape[-2]", "        T_q = T_k = T"),
    ],
    "correct: softmax written by hand with each row's maximum subtracted": [
        ("    weights = torch.softmax(scores, dim=-1)",
         "    e = (scores - scores.amax(-1, keepdim=True)).exp()\n    weights = e / e.sum(-1, keepdim=True)"),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (issue 45, F1): a float32 result passed every public check and cost 2.9 of 4; the
    # public house rules now pass float64 keys, and the dtype has its own small hidden test
    "warned (q1): expand_kv's result in float32 whatever the keys' dtype (.float())": _q1(
        "    return x.repeat_interleave(n_rep, dim=1).float()", "    return x.repeat(1, n_rep, 1, 1).float()",
        "    return x.repeat_interleave(n_rep, dim=2).float()"),
    "warned (q1): expand_kv fills torch.zeros(..., device=x.device), made without dtype=, head by head": _q1(*(
        "    out = torch.zeros(B, H_kv * n_rep, T, d, device=x.device)\n"
        "    for h in range(H_kv * n_rep):\n"
        f"        out[:, h] = x[:, {source}]\n"
        "    return out" for source in ("h // n_rep", "h % H_kv")),
        "    out = torch.zeros(B, T, H_kv * n_rep, d, device=x.device)\n"
        "    for h in range(H_kv * n_rep):\n"
        "        out[:, :, h] = x[:, :, h // n_rep]\n"
        "    return out"),
    # review 64 (F6): the copies along the batch, told about the shape (not about tiling)
    "warned (q1): the copies along dim 0 (the batch), not the heads": _q1(
        "    return x.repeat_interleave(n_rep, dim=0)", "    return x.repeat(n_rep, 1, 1, 1)",
        "    return x.repeat_interleave(n_rep, dim=0)"),
})

_MASK = ("    if causal:  # the T_q queries are the last T_q of the T_k positions\n"
         "        T_q, T_k = q.shape[-2], k.shape[-2]\n"
         "        future = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).triu(T_k - T_q + 1)\n"
         "        scores = scores.masked_fill(future, float(\"-inf\"))\n")
WRONG_ANSWERS.update({
    # review 64 (F4, F5): told that the causal flag is ignored, or that the mask is inverted
    "warned (q2): the causal flag ignored (the mask always applied)": [
        (_MASK, "    T_q, T_k = q.shape[-2], k.shape[-2]\n"
                "    future = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).triu(T_k - T_q + 1)\n"
                "    scores = scores.masked_fill(future, float(\"-inf\"))\n"),
    ],
    "warned (q2): an inverted mask (tril marks the keys to hide: the past and the query itself)": [
        ("triu(T_k - T_q + 1)", "tril(T_k - T_q)"),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (F7): the values left with H_kv heads, told to expand both k and v
    "warned (q2): only the keys expanded, v left with H_kv heads": _at_each({
        task: [(_EXPANDED[task], "    k = expand_kv(k, n_rep)" + (".transpose(1, 2)" if task == "tokens" else "")
                + "  # (B, H, T_k, d_k)\n")] for task in TASKS}),
})

PAGE_ROWS = {  # each row of the worked-solutions page -> its wrong answers (tools/exercise_tables.py)
    # q1
    "the sizes taken from the notebook's variables (`B`, `T`, `d_k`), not from `x.shape`": "warned (q1): expand_kv takes B, H_kv, T and d from the notebook's variables, not from x.shape",
    '`x.data` expanded instead of `x` (the result drops out of the graph)': "expand_kv expands x.data, not x (the result drops out of autograd's graph)",
    'heads tiled with `repeat` (0, 1, 0, 1)': 'heads in the other order (tiled 0, 1, 0, 1 where repeated in place 0, 0, 1, 1, or back)',
    '`repeat_interleave` along dim 0, the batch': 'warned (q1): the copies along dim 0 (the batch), not the heads',
    '`expand`, then `view` instead of `reshape`': 'warned (q1): expand, then .view instead of .reshape (raises for every n_rep > 1)',
    "the course package's `repeat_kv` called": "shortcut: expand_kv handed to the course package's repeat_kv (copied)",
    'batch and heads folded together with `view`': "warned (q1): flattens batch and heads with view (fails on the course's transposed keys)",
    'a detour through NumPy': 'keys expanded through NumPy (fails for inputs that require grad)',
    '`torch.empty` made without `device=`, filled head by head': 'expand_kv fills a torch.empty(...) made without device= (on the CPU) head by head',
    "the result in float32 whatever the keys' dtype (`.float()`)": "warned (q1): expand_kv's result in float32 whatever the keys' dtype (.float())",
    '`torch.zeros(..., device=x.device)` made without `dtype=`, filled head by head': 'warned (q1): expand_kv fills torch.zeros(..., device=x.device), made without dtype=, head by head',
    # q2
    "returns `(out, weights)`, as the chapter's attention function does": "warned (q2): returns (out, weights), as the chapter's attention function does",
    'softmax over `dim=-2` (the queries)': 'warned (q2): softmax over dim=-2 (the queries), not the keys',
    'scores not divided by $\\sqrt{d_k}$': 'scores not divided by sqrt(d_k)',
    'the mask put on the weights after the softmax': 'causal mask applied to the weights after the softmax',
    'an inverted mask (`tril` marks the keys to hide: the past)': 'warned (q2): an inverted mask (tril marks the keys to hide: the past and the query itself)',
    'only the keys expanded, `v` left with $H_{kv}$ heads': 'warned (q2): only the keys expanded, v left with H_kv heads',
    "the mask sized from the notebook's global `T`": "warned (q2): the causal mask sized from the notebook's global T",
    "a scale fixed at $\\sqrt{8}$, the example's width": "scale fixed at sqrt(8), the example's width (a constant, not sqrt(d_k))",
    'a square mask from `q.shape[-2]` alone': 'warned (q2): the causal mask square, (T, T) with T = q.shape[-2] (not (T_q, T_k))',
    "`n_rep = H_kv` (right for the example's 4 over 2 only)": "warned (q2): n_rep taken as the number of key/value heads (the example's 4 over 2 hides it)",
    'the `causal` flag ignored (the mask always applied)': 'warned (q2): the causal flag ignored (the mask always applied)',
    "the mask aligned at the top-left (PyTorch's `is_causal`)": 'warned (q2): decoding: the causal mask aligned at the top-left (query i sees keys j <= i)',
    'the softmax in float32, cast back': "softmax in float32, the result cast back to the input's dtype",
    'batch and heads folded together with `.view`': 'gqa flattens batch and heads with .view (fails on heads split by a transpose)',
    'a softmax written by hand, `exp(s) / exp(s).sum(-1)`, no maximum subtracted': 'warned (q2): softmax written by hand, exp(s) / exp(s).sum(-1), no maximum subtracted',
    'the mask built without `device=`': 'gqa_attention builds the causal mask without device= (on the CPU)',
    'the causal mask multiplied in (the hidden scores 0, not $-\\infty$)': 'warned (q2): the causal mask multiplied in (hidden scores 0, not -inf)',
    'scores multiplied by the mask, then every score equal to 0 hidden': 'mask made by multiplying: scores that are exactly 0 (allowed ones too) set to -inf',
    "PyTorch's `scaled_dot_product_attention` with `enable_gqa=True`": "shortcut: PyTorch's scaled_dot_product_attention with enable_gqa=True",
    # q3
    '(b), or another wrong letter': 'what_gqa_saves: (b), a tempting wrong statement',
    'the right letter written `"(A)"`': 'what_gqa_saves: the right letter in upper case with its parenthesis',
}
