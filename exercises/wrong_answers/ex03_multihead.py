"""Classic wrong answers to exercise 3 (multi-head attention), as text edits of the reference
solution: label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points
(the format and the rules are in tools/exercise_proof.py). Questions 1 and 2 have a pool of
tasks (`tools.exercise_variants.POOLS`): each mistake on their answer lines is written at every
roster task too (`AtEachTask`: the edits of that task's text), so the proof at every sampled
variant grades the same mistake."""

from tools.exercise_variants import AtEachTask

# the answer lines of questions 1 and 2 at each task (the book's "contiguous" first)
_SPLIT = {"book": "x.reshape(B, T, n_head, d_k).transpose(1, 2)\n",
          "interleaved": "x.reshape(B, T, d_k, n_head).permute(0, 3, 1, 2)  # f: head f % H\n",
          "seqfirst": "x.reshape(T, B, n_head, d_k).permute(1, 2, 0, 3)\n"}
_MERGE = {"book": "x.transpose(1, 2).reshape(B, T, H * d_k)\n",
          "interleaved": "x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)  # (B, T, d_k, H)\n",
          "seqfirst": "x.permute(2, 0, 1, 3).reshape(T, B, H * d_k)  # (T, B, H, d_k)\n"}
_HEAD = {"book": "    B, T, D = x.shape\n    d_k = D // n_head\n",
         "interleaved": "    B, T, D = x.shape\n    d_k = D // n_head\n",
         "seqfirst": "    T, B, D = x.shape  # sequence first\n    d_k = D // n_head\n"}


def _split(book: str, interleaved: str, seqfirst: str, whole: bool = False) -> AtEachTask:
    """One mistake of question 1 at each task: its answer line replaced by `return NEW`
    (and the two lines above it too where `whole`, NEW then the whole body)."""
    def at(task: str, new: str) -> list:
        if whole:
            return [(_HEAD[task] + "    return " + _SPLIT[task], new + "\n")]
        return [("    return " + _SPLIT[task], "    return " + new + "\n")]
    return AtEachTask(at("book", book), interleaved=at("interleaved", interleaved),
                      seqfirst=at("seqfirst", seqfirst))


def _merge(book: str, interleaved: str, seqfirst: str) -> AtEachTask:
    """One mistake of question 2 at each task: its answer line replaced by `return NEW`."""
    def at(task: str, new: str) -> list:
        return [("    return " + _MERGE[task], "    return " + new + "\n")]
    return AtEachTask(at("book", book), interleaved=at("interleaved", interleaved),
                      seqfirst=at("seqfirst", seqfirst))


WRONG_ANSWERS = {
    "split with view(B, H, T, d_k), no transpose (right shape, tokens mixed up)": _split(
        "x.reshape(B, n_head, T, d_k)", "x.reshape(B, n_head, T, d_k)", "x.reshape(B, n_head, T, d_k)"),
    # at the interleaved task the mistake is the other way round: contiguous slices
    "split deals the features out the other way (interleaved where contiguous, or back)": _split(
        "x.reshape(B, T, d_k, n_head).permute(0, 3, 1, 2)", "x.reshape(B, T, n_head, d_k).transpose(1, 2)",
        "x.reshape(T, B, d_k, n_head).permute(1, 3, 0, 2)"),
    "split cuts the sequence T into heads instead of the features D": _split(
        "x.reshape(B, n_head, T // n_head, D)", "x.reshape(B, n_head, T // n_head, D)",
        "x.reshape(B, n_head, T // n_head, D)"),
    "merge without transposing back (reshape only)": _merge(
        "x.reshape(B, T, H * d_k)", "x.reshape(B, T, H * d_k)", "x.reshape(T, B, H * d_k)"),
    "output projection W_o forgotten": [
        ("return merge_heads(heads) @ W_o, weights", "return merge_heads(heads), weights"),
    ],
    "scaled by sqrt(d_model) instead of sqrt(d_k)": [
        ("/ math.sqrt(d_k)", "/ math.sqrt(x.shape[-1])"),
    ],
    "no scaling at all": [
        ("/ math.sqrt(d_k)", ""),
    ],
    "softmax over the queries (wrong axis)": [
        ("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)"),
    ],
    "weights used transposed (column-vector / nn.Linear habit: x @ W.T)": [
        ("x @ W_q", "x @ W_q.T"),
        ("x @ W_k", "x @ W_k.T"),
        ("x @ W_v", "x @ W_v.T"),
        ("@ W_o", "@ W_o.T"),
    ],
    "shortcut: split_heads imported from the course package": _split(
        *["    from attnbook.multihead import split_heads as split\n    return split(x, n_head)"] * 3, whole=True),
    "shortcut: the attention step handed to F.scaled_dot_product_attention": [
        ("    heads = weights @ v  # (B, H, T, d_k)",
         "    heads = torch.nn.functional.scaled_dot_product_attention(q, k, v)  # (B, H, T, d_k)"),
    ],
    "float32 buffer for the heads: float64 input comes back as float32": [
        ("    heads = weights @ v  # (B, H, T, d_k)",
         "    heads = torch.empty(v.shape)  # (B, H, T, d_k), float32 whatever the input\n    heads[:] = weights @ v"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and three of the four functions wrong": [
        ("def split_heads(x, n_head):", TAMPER + "def split_heads(x, n_head):"),
        ("return x.reshape(B, T, n_head, d_k).transpose(1, 2)", "return x.reshape(B, n_head, T, d_k)"),
        ("return x.transpose(1, 2).reshape(B, T, H * d_k)", "return x.reshape(B, T, H * d_k)"),
        ("    return merge_heads(heads) @ W_o, weights", "    return merge_heads(heads), weights"),
    ],
    "fused projection cut into heads first (each head's slice holds q, k and v)": [
        ("    q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]  # (B, T, D) each\n"
         "    return split_heads(q, n_head), split_heads(k, n_head), split_heads(v, n_head)",
         "    heads = split_heads(qkv, n_head)  # (B, H, T, 3 d_k)\n"
         "    d_k = D // n_head\n"
         "    return heads[..., :d_k], heads[..., d_k:2 * d_k], heads[..., 2 * d_k:]"),
    ],
    "fused projection cut along the tokens (chunk on the wrong axis)": [
        ("    q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]  # (B, T, D) each",
         "    q, k, v = (t.reshape(t.shape[0], -1, D) for t in qkv.chunk(3, dim=1))  # (B, T, D) each"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def split_heads(x, n_head):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    return x.reshape(B, T, n_head, d_k).transpose(1, 2)', '    return None'),
    ]
    for kind in ['builtins', 'results file']
})

# The headline mistakes of question 3, each flagged by its public check on the example.
WRONG_ANSWERS.update({
    "layer: scores divided by sqrt(D), not sqrt(d_k)": [
        ("    d_k = q.shape[-1]\n    scores = q @ k", "    d_k = x.shape[-1]\n    scores = q @ k"),
    ],
    "layer: the output projection W_o forgotten": [
        ("    return merge_heads(heads) @ W_o, weights", "    return merge_heads(heads), weights"),
    ],
    "layer: the keys made with W_q": [
        ("    k = split_heads(x @ W_k, n_head)", "    k = split_heads(x @ W_q, n_head)"),
    ],
    "layer: W_o applied transposed (column-vector convention)": [
        ("    return merge_heads(heads) @ W_o, weights", "    return merge_heads(heads) @ W_o.T, weights"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    'correct: split with view and permute': _split(
        "x.view(B, T, n_head, d_k).permute(0, 2, 1, 3)",
        "x.view(B, T, d_k, n_head).transpose(1, 3).transpose(2, 3)",
        "x.view(T, B, n_head, d_k).transpose(0, 1).transpose(1, 2)"),
})

WRONG_ANSWERS.update({
    # q5: the conceptual question
    "why_several_heads: (a), a tempting wrong statement": [
        ('    return "b"', '    return "a"'),
    ],
    "why_several_heads: the right letter in upper case with its parenthesis": [
        ('    return "b"', '    return "(B)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): float32 inside, the dtype of the result restored
    "softmax in float32, the weights cast back to the input's dtype": [
        ("    weights = torch.softmax(scores, dim=-1)  # over the keys",
         "    weights = torch.softmax(scores.float(), dim=-1).to(scores.dtype)"),
    ],
})

# ---------------------------------------------------------------------------------------
# Tampering and processes (issue 28). sys.modules surgery beside the plain shortcut "split_heads
# imported from the course package": the grader reads it from the source, every question 0.
# A process started (a fork, or a detached watcher that would rewrite ../results/results.json
# after the grader wrote it) or 20 GB asked for: the child's process and memory limits refuse
# it, the grader sees the attempt and that question scores 0, whatever its answer.
_SPLIT_FROM_PACKAGE = (
    "    B, T, D = x.shape\n    d_k = D // n_head\n    return x.reshape(B, T, n_head, d_k).transpose(1, 2)",
    "    from attnbook.multihead import split_heads as split\n    return split(x, n_head)",
)
_WATCHER = '''import json as _json, os as _os, time as _time
try:  # a watcher in a session of its own, meant to outlive the grading
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            _time.sleep(3)
            for _path in ("../results/results.json", "/autograder/results/results.json"):
                try:
                    with open(_path, "w") as _f:
                        _json.dump({"score": 100.0, "tests": []}, _f)
                except OSError:
                    pass
        _os._exit(0)
except OSError:
    pass
'''
WRONG_ANSWERS.update({
    "refused: tampering by sys.modules surgery (the grading module replaced by a stand-in), split_heads from the course package": [
        ("def split_heads(x, n_head):",
         "import sys as _sys, types as _types\n"
         "_sys.modules['attnbook.exercise_checks.grading'] = _types.SimpleNamespace(\n"
         "    guarded=lambda fn, **kwargs: fn, grad_of=None, calls_of=None)\n"
         "def split_heads(x, n_head):"),
        _SPLIT_FROM_PACKAGE,
    ],
    "tampering (q1): split_heads forks a process first (os.fork), correct otherwise": [
        ("    B, T, D = x.shape\n    d_k = D // n_head\n",
         "    import os\n    try:\n        if os.fork() == 0:\n            os._exit(0)\n    except OSError:\n        pass\n"
         "    B, T, D = x.shape\n    d_k = D // n_head\n"),
    ],
    "tampering (q2): merge_heads asks for 20 GB first, correct otherwise": [
        ("    B, H, T, d_k = x.shape\n",
         "    _ = torch.empty(5 * 2**30)  # 20 GB of float32\n"
         "    B, H, T, d_k = x.shape\n"),
    ],
    "refused: tampering by a detached watcher q3's cell starts (fork, setsid) to rewrite results.json, correct otherwise": [
        ("def multihead_attention(x, W_q, W_k, W_v, W_o, n_head):",
         _WATCHER + "def multihead_attention(x, W_q, W_k, W_v, W_o, n_head):"),
    ],
})

WRONG_ANSWERS.update({
    # issue 28, item 6: an empty sequence, inputs requiring grad and other float dtypes
    "split with view(B, T, n_head, -1): no tokens, the -1 cannot be inferred": _split(
        "x.view(B, T, n_head, -1).transpose(1, 2)", "x.view(B, T, -1, n_head).permute(0, 3, 1, 2)",
        "x.view(T, B, n_head, -1).permute(1, 2, 0, 3)"),
    "split through NumPy (fails for inputs requiring grad and for bfloat16)": _split(
        "torch.from_numpy(x.numpy().reshape(B, T, n_head, d_k).transpose(0, 2, 1, 3))",
        "torch.from_numpy(x.numpy().reshape(B, T, d_k, n_head).transpose(0, 3, 1, 2))",
        "torch.from_numpy(x.numpy().reshape(T, B, n_head, d_k).transpose(1, 2, 0, 3))"),
    # item 4: correct answers written differently
    "correct: merge with permute, contiguous and view": _merge(
        "x.permute(0, 2, 1, 3).contiguous().view(B, T, H * d_k)",
        "x.permute(0, 2, 3, 1).contiguous().view(B, T, H * d_k)",
        "x.permute(2, 0, 1, 3).contiguous().view(T, B, H * d_k)"),
    "correct: the layer's scores with einsum": [
        ("    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, T, T)",
         '    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d_k)'),
    ],
    "correct: the fused product cut with chunk(3)": [
        ("    q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]  # (B, T, D) each",
         "    q, k, v = qkv.chunk(3, dim=-1)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 36, item 7: a layer that cannot train
    "the output projection computed under torch.no_grad() (no gradient reaches the weights)": [
        ("    return merge_heads(heads) @ W_o, weights",
         "    with torch.no_grad():\n"
         "        output = merge_heads(heads) @ W_o\n"
         "    return output, weights"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45: the layouts the course produces, the review's strided cut, and answers that do
    # not solve their question (each must score 0 on it: every check compares values)
    # splitting one axis in two is a view of any layout (transposed or sliced): .view works here
    "correct: split with .view (splitting the last axis is a view in every layout)": _split(
        "x.view(B, T, n_head, d_k).transpose(1, 2)", "x.view(B, T, d_k, n_head).permute(0, 3, 1, 2)",
        "x.view(T, B, n_head, d_k).permute(1, 2, 0, 3)"),
    "fused projection cut with a stride (qkv[..., 0::3]: q, k, v interleaved)": [
        ("    q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]",
         "    q, k, v = qkv[..., 0::3], qkv[..., 1::3], qkv[..., 2::3]"),
    ],
    "non-solving (q1): zeros of the right shape": _split(
        *["torch.zeros(B, n_head, T, d_k, dtype=x.dtype)"] * 3),
    "non-solving (q3): uniform weights (the scores ignored)": [
        ("    weights = torch.softmax(scores, dim=-1)  # over the keys",
         "    weights = torch.full_like(scores, 1.0 / scores.shape[-1])"),
    ],
})
