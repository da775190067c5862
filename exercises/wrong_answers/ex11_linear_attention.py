"""Classic wrong answers to exercise 11, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). A mistake on a line a task of the pool
(tools/exercise_pools_ex11.py) rewrites is written at every roster task too (`AtEachTask`):
question 2's on the masked line read the same at every task (the decay is multiplied in on
the line after it), question 3's are written on each task's own answer lines."""

from tools.exercise_pools_ex11 import Q3_LINES
from tools.exercise_variants import AtEachTask


def _everywhere(edits: list) -> AtEachTask:
    """A mistake whose edits read the same at every task."""
    return AtEachTask(edits, decay=edits, gate=edits)


def _q3(plain: str, decay: str, gate: str) -> AtEachTask:
    """One mistake of question 3 at each task: its answer lines replaced by the task's body
    (the gated task's own first line, the gate, kept before it)."""
    first = Q3_LINES["gate"].split("\n")[0] + "\n"
    return AtEachTask([(Q3_LINES["plain"], plain)], decay=[(Q3_LINES["decay"], decay)],
                      gate=[(Q3_LINES["gate"], first + gate)])


_OLD = "    old = (k[:, None, :] @ S)[:, 0]\n"  # k S, the course's read
_OLD_P = "    old = (S @ k[:, :, None])[..., 0]\n"  # S k, the papers'

WRONG_ANSWERS = {
    # q1: the recurrence
    "linear_attention_recurrent: no normaliser (sums, not averages)": [
        ("        outputs.append(read / ((fq[:, t] * z).sum(-1, keepdim=True) + EPS))",
         "        outputs.append(read)"),
    ],
    "linear_attention_recurrent: reads before it writes (a token does not see itself)": [
        ("        S = S + fk[:, t, :, None] * v[:, t, None, :]  # write token t ...\n"
         "        z = z + fk[:, t]\n"
         "        read = (fq[:, t, None, :] @ S)[:, 0]  # ... then read: (B, d_v)\n"
         "        outputs.append(read / ((fq[:, t] * z).sum(-1, keepdim=True) + EPS))",
         "        read = (fq[:, t, None, :] @ S)[:, 0]\n"
         "        outputs.append(read / ((fq[:, t] * z).sum(-1, keepdim=True) + EPS))\n"
         "        S = S + fk[:, t, :, None] * v[:, t, None, :]\n"
         "        z = z + fk[:, t]"),
    ],
    "linear_attention_recurrent: no feature map (raw q and k)": [
        ("    fq, fk = phi(q), phi(k)\n    S = k.new_zeros", "    fq, fk = q, k\n    S = k.new_zeros"),
    ],
    "correct: the state stored transposed, v^T phi(k) (d_v x d_k), and read as S phi(q)^T": [
        ("    S = k.new_zeros(B, d_k, v.shape[-1])  # the state: sum of phi(k_i)^T v_i",
         "    S = k.new_zeros(B, v.shape[-1], d_k)"),
        ("        S = S + fk[:, t, :, None] * v[:, t, None, :]  # write token t ...",
         "        S = S + v[:, t, :, None] * fk[:, t, None, :]"),
        ("        read = (fq[:, t, None, :] @ S)[:, 0]  # ... then read: (B, d_v)",
         "        read = (S @ fq[:, t, :, None])[..., 0]"),
    ],
    "linear_attention_recurrent: the outer product v^T phi(k), read as phi(q) S": [
        ("    S = k.new_zeros(B, d_k, v.shape[-1])  # the state: sum of phi(k_i)^T v_i",
         "    S = k.new_zeros(B, v.shape[-1], d_k)"),
        ("        S = S + fk[:, t, :, None] * v[:, t, None, :]  # write token t ...",
         "        S = S + v[:, t, :, None] * fk[:, t, None, :]"),
    ],
    "linear_attention_recurrent: one state for the whole batch": [
        ("    S = k.new_zeros(B, d_k, v.shape[-1])  # the state: sum of phi(k_i)^T v_i\n"
         "    z = k.new_zeros(B, d_k)  # the normaliser: sum of phi(k_i)",
         "    S = k.new_zeros(1, d_k, v.shape[-1])\n    z = k.new_zeros(1, d_k)"),
        ("        S = S + fk[:, t, :, None] * v[:, t, None, :]  # write token t ...\n"
         "        z = z + fk[:, t]\n",
         "        S = S + (fk[:, t, :, None] * v[:, t, None, :]).sum(0, keepdim=True)\n"
         "        z = z + fk[:, t].sum(0, keepdim=True)\n"),
    ],
    "correct: the recurrence with einsum": [
        ("        S = S + fk[:, t, :, None] * v[:, t, None, :]  # write token t ...\n"
         "        z = z + fk[:, t]\n"
         "        read = (fq[:, t, None, :] @ S)[:, 0]  # ... then read: (B, d_v)\n"
         "        outputs.append(read / ((fq[:, t] * z).sum(-1, keepdim=True) + EPS))",
         "        S = S + torch.einsum('bk,bv->bkv', fk[:, t], v[:, t])\n"
         "        z = z + fk[:, t]\n"
         "        read = torch.einsum('bk,bkv->bv', fq[:, t], S)\n"
         "        outputs.append(read / (torch.einsum('bk,bk->b', fq[:, t], z)[:, None] + EPS))"),
    ],
    "warned (q1): linear_attention_recurrent makes its state without device= (right on the CPU only)": [
        ("    S = k.new_zeros(B, d_k, v.shape[-1])  # the state: sum of phi(k_i)^T v_i\n"
         "    z = k.new_zeros(B, d_k)  # the normaliser: sum of phi(k_i)",
         "    S = torch.zeros(B, d_k, v.shape[-1])\n    z = torch.zeros(B, d_k)"),
    ],
    "non-solving (q1): only the shapes: zeros of (B, T, d_v)": [
        ("    B, T, d_k = k.shape\n    fq, fk = phi(q), phi(k)\n",
         "    return torch.zeros_like(v)\n    B, T, d_k = k.shape\n    fq, fk = phi(q), phi(k)\n"),
    ],
    # q2: the parallel form
    "linear_attention_parallel: no causal mask": _everywhere([
        ("    scores = scores * keep\n", ""),
    ]),
    "linear_attention_parallel: no normaliser": [
        ("    return (scores @ v) / (scores.sum(-1, keepdim=True) + EPS)", "    return scores @ v"),
    ],
    "linear_attention_parallel: the upper triangle kept (triu: the future, not the past)": [
        (".tril()  # key j <= query i", ".triu()"),
    ],
    "linear_attention_parallel: the mask filled with -inf, as for a softmax": _everywhere([
        ("    scores = scores * keep\n", "    scores = scores.masked_fill(~keep, float('-inf'))\n"),
    ]),
    "linear_attention_parallel: normalised over every key, then masked": _everywhere([
        ("    scores = scores * keep\n",
         "    total = scores.sum(-1, keepdim=True) + EPS\n    scores = scores * keep\n"),
        ("    return (scores @ v) / (scores.sum(-1, keepdim=True) + EPS)", "    return (scores @ v) / total"),
    ]),
    "linear_attention_parallel: a softmax of the feature scores": _everywhere([
        ("    scores = scores * keep\n", "    scores = scores.masked_fill(~keep, float('-inf'))\n"),
        ("    return (scores @ v) / (scores.sum(-1, keepdim=True) + EPS)",
         "    return torch.softmax(scores, dim=-1) @ v"),
    ]),
    "correct: the parallel form with masked_fill(0.0) and an einsum": _everywhere([
        ("    scores = phi(q) @ phi(k).transpose(-2, -1)  # (B, T, T)",
         "    scores = torch.einsum('bid,bjd->bij', phi(q), phi(k))"),
        ("    scores = scores * keep\n", "    scores = scores.masked_fill(~keep, 0.0)\n"),
    ]),
    # q3: one delta-rule write
    # q3: one delta-rule write, at each task (the papers' orientation at "decay": S k, (v - S k) k^T)
    "delta_update: no subtraction (S + beta k^T v, linear attention's write)": _q3(
        "    return S + beta[:, None, None] * k[:, :, None] * v[:, None, :]",
        "    return S + beta[:, None, None] * v[:, :, None] * k[:, None, :]",
        "    return S + beta[:, None, None] * k[:, :, None] * v[:, None, :]"),
    "delta_update: the outer product the wrong way round, (v - k S)^T k": _q3(
        _OLD + "    return S + beta[:, None, None] * (v - old)[:, :, None] * k[:, None, :]",
        _OLD_P + "    return S + beta[:, None, None] * k[:, :, None] * (v - old)[:, None, :]",
        _OLD + "    return S + beta[:, None, None] * (v - old)[:, :, None] * k[:, None, :]"),
    "delta_update: the state read as S k^T instead of k S": _q3(  # at "decay": k S instead of S k
        _OLD_P + "    return S + beta[:, None, None] * k[:, :, None] * (v - old)[:, None, :]",
        _OLD + "    return S + beta[:, None, None] * (v - old)[:, :, None] * k[:, None, :]",
        _OLD_P + "    return S + beta[:, None, None] * k[:, :, None] * (v - old)[:, None, :]"),
    "delta_update: beta forgotten (always a full overwrite)": _q3(
        _OLD + "    return S + k[:, :, None] * (v - old)[:, None, :]",
        _OLD_P + "    return S + (v - old)[:, :, None] * k[:, None, :]",
        _OLD + "    return S + k[:, :, None] * (v - old)[:, None, :]"),
    "delta_update: S changed in place": AtEachTask(  # at "gate" the gate too: S *= alpha
        [(Q3_LINES["plain"],
          _OLD + "    S += beta[:, None, None] * k[:, :, None] * (v - old)[:, None, :]\n    return S")],
        decay=[(Q3_LINES["decay"],
                _OLD_P + "    S += beta[:, None, None] * (v - old)[:, :, None] * k[:, None, :]\n    return S")],
        gate=[(Q3_LINES["gate"], "    S *= alpha[:, None, None]\n" + _OLD
               + "    S += beta[:, None, None] * k[:, :, None] * (v - old)[:, None, :]\n    return S")]),
}
WRONG_ANSWERS.update({  # mistakes students write that the lists above lacked
    "linear_attention_recurrent: phi on the keys only (raw queries)": [
        ("    fq, fk = phi(q), phi(k)\n    S = k.new_zeros", "    fq, fk = q, phi(k)\n    S = k.new_zeros"),
    ],
    "delta_update: beta broadcast along the last axis (beta * ..., not beta[:, None, None])": _q3(
        _OLD + "    return S + beta * k[:, :, None] * (v - old)[:, None, :]",
        _OLD_P + "    return S + beta * (v - old)[:, :, None] * k[:, None, :]",
        _OLD + "    return S + beta * k[:, :, None] * (v - old)[:, None, :]"),
    "non-solving (q2): only the shapes: zeros of (B, T, d_v)": [
        ("    T = q.shape[-2]\n", "    return torch.zeros_like(v)\n    T = q.shape[-2]\n"),
    ],
    "warned (q3): delta_update as a convex mix, (1 - beta) S + beta k^T v (every row decays)": _q3(
        "    b = beta[:, None, None]\n    return (1 - b) * S + b * k[:, :, None] * v[:, None, :]",
        "    b = beta[:, None, None]\n    return (1 - b) * S + b * v[:, :, None] * k[:, None, :]",
        "    b = beta[:, None, None]\n    return (1 - b) * S + b * k[:, :, None] * v[:, None, :]"),
    "non-solving (q3): the state returned unchanged (a copy, no write)": AtEachTask(
        [(Q3_LINES["plain"], "    return S.clone()")], decay=[(Q3_LINES["decay"], "    return S.clone()")],
        gate=[(Q3_LINES["gate"], "    return S.clone()")]),
})

WRONG_ANSWERS.update({  # review 52 (issue 45): mistakes that passed every public check
    # phi > 0, so the normaliser is never 0 and EPS looks like a mere guard; without it the outputs
    # move by about 1e-7 relative: invisible in float32, wrong at the hidden float64 tolerance
    "warned (q1): linear_attention_recurrent: EPS left out of the normaliser": [
        ("        outputs.append(read / ((fq[:, t] * z).sum(-1, keepdim=True) + EPS))",
         "        outputs.append(read / (fq[:, t] * z).sum(-1, keepdim=True))"),
    ],
    "warned (q2): linear_attention_parallel: EPS left out of the row sums": [
        ("    return (scores @ v) / (scores.sum(-1, keepdim=True) + EPS)",
         "    return (scores @ v) / scores.sum(-1, keepdim=True)"),
    ],
    "warned (q2): linear_attention_parallel: EPS added to the quotient, not to the row sums": [
        ("    return (scores @ v) / (scores.sum(-1, keepdim=True) + EPS)",
         "    return (scores @ v) / scores.sum(-1, keepdim=True) + EPS"),
    ],
    "warned (q3): delta_update: beta on the write only, the old row removed in full (S + beta k^T v - k^T k S)": _q3(
        _OLD + "    return S + beta[:, None, None] * k[:, :, None] * v[:, None, :] - k[:, :, None] * old[:, None, :]",
        _OLD_P + "    return S + beta[:, None, None] * v[:, :, None] * k[:, None, :] - old[:, :, None] * k[:, None, :]",
        _OLD + "    return S + beta[:, None, None] * k[:, :, None] * v[:, None, :] - k[:, :, None] * old[:, None, :]"),
    "warned (q2): linear_attention_parallel: the mask made on the CPU, torch.tril(torch.ones(T, T))": [
        ("torch.ones(T, T, dtype=torch.bool, device=q.device).tril()", "torch.tril(torch.ones(T, T))"),
    ],
})

WRONG_ANSWERS.update({  # review 60 (issue 45)
    "warned (q1): the state made with torch.zeros (CPU, float32) and updated in place, S += ...": [
        ("    S = k.new_zeros(B, d_k, v.shape[-1])  # the state: sum of phi(k_i)^T v_i\n"
         "    z = k.new_zeros(B, d_k)  # the normaliser: sum of phi(k_i)",
         "    S = torch.zeros(B, d_k, v.shape[-1])\n    z = torch.zeros(B, d_k)"),
        ("        S = S + fk[:, t, :, None] * v[:, t, None, :]", "        S += fk[:, t, :, None] * v[:, t, None, :]"),
        ("        z = z + fk[:, t]", "        z += fk[:, t]"),
    ],
    "warned (q2): phi applied through a generator expression, fq, fk = (phi(x) for x in (q, k))": [
        ("    scores = phi(q) @ phi(k).transpose(-2, -1)  # (B, T, T)",
         "    fq, fk = (phi(x) for x in (q, k))\n    scores = fq @ fk.transpose(-2, -1)"),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (F17): the strict lower triangle is told to keep the diagonal
    "warned (q2): linear_attention_parallel keeps the strict lower triangle, tril(-1) (no token reads itself)": [
        (".tril()  # key j <= query i", ".tril(-1)"),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (F23): two slips of question 1 its table lacked
    "warned (q1): linear_attention_recurrent updates the normaliser after the read (z one token behind S)": [
        ("        z = z + fk[:, t]\n"
         "        read = (fq[:, t, None, :] @ S)[:, 0]  # ... then read: (B, d_v)\n"
         "        outputs.append(read / ((fq[:, t] * z).sum(-1, keepdim=True) + EPS))\n",
         "        read = (fq[:, t, None, :] @ S)[:, 0]  # ... then read: (B, d_v)\n"
         "        outputs.append(read / ((fq[:, t] * z).sum(-1, keepdim=True) + EPS))\n"
         "        z = z + fk[:, t]\n"),
    ],
    "warned (q1): linear_attention_recurrent applies phi to the values too": [
        ("        S = S + fk[:, t, :, None] * v[:, t, None, :]  # write token t ...\n",
         "        S = S + fk[:, t, :, None] * phi(v[:, t, None, :])  # write token t ...\n"),
    ],
})

PAGE_ROWS = {  # each row of the worked-solutions page -> its wrong answers (tools/exercise_tables.py)
    # q1
    'no normaliser (sums, not averages)': 'linear_attention_recurrent: no normaliser (sums, not averages)',
    'reads before it writes (a token does not see itself)': 'linear_attention_recurrent: reads before it writes (a token does not see itself)',
    'the normaliser updated after the read (token 0 divides by $0 + \\varepsilon$)': 'warned (q1): linear_attention_recurrent updates the normaliser after the read (z one token behind S)',
    '`phi` applied to the values too': 'warned (q1): linear_attention_recurrent applies phi to the values too',
    'the state built as $v^\\top\\phi(k)$ but read as $\\phi(q) S$': 'linear_attention_recurrent: the outer product v^T phi(k), read as phi(q) S',
    'raw queries and keys (no `phi`), or `phi` on the keys only': ('linear_attention_recurrent: no feature map (raw q and k)', 'linear_attention_recurrent: phi on the keys only (raw queries)'),
    'one state for the whole batch': 'linear_attention_recurrent: one state for the whole batch',
    'the state made with `torch.zeros` (CPU, float32), updated with `S += ...`': 'warned (q1): the state made with torch.zeros (CPU, float32) and updated in place, S += ...',
    'the state made with `torch.zeros`, updated with `S = S + ...`': 'warned (q1): linear_attention_recurrent makes its state without device= (right on the CPU only)',
    '`EPS` left out of the normaliser': 'warned (q1): linear_attention_recurrent: EPS left out of the normaliser',
    # q2
    'no causal mask': 'linear_attention_parallel: no causal mask',
    'no normaliser': 'linear_attention_parallel: no normaliser',
    'the upper triangle kept (`triu`: the future)': 'linear_attention_parallel: the upper triangle kept (triu: the future, not the past)',
    'the strict lower triangle, `tril(-1)` (no token reads itself)': 'warned (q2): linear_attention_parallel keeps the strict lower triangle, tril(-1) (no token reads itself)',
    'the mask filled with $-\\infty$, as for a softmax': 'linear_attention_parallel: the mask filled with -inf, as for a softmax',
    'normalised over every key, then masked': 'linear_attention_parallel: normalised over every key, then masked',
    'a softmax of the feature scores': 'linear_attention_parallel: a softmax of the feature scores',
    'a generator expression, `fq, fk = (phi(x) for x in (q, k))`': 'warned (q2): phi applied through a generator expression, fq, fk = (phi(x) for x in (q, k))',
    '`EPS` left out of the row sums': 'warned (q2): linear_attention_parallel: EPS left out of the row sums',
    '`EPS` added to the quotient, not to the row sums': 'warned (q2): linear_attention_parallel: EPS added to the quotient, not to the row sums',
    'the mask made on the CPU, `torch.tril(torch.ones(T, T))`': 'warned (q2): linear_attention_parallel: the mask made on the CPU, torch.tril(torch.ones(T, T))',
    # q3
    "no subtraction (linear attention's write)": "delta_update: no subtraction (S + beta k^T v, linear attention's write)",
    'the outer product the wrong way round, $(v - kS)^\\top k$': 'delta_update: the outer product the wrong way round, (v - k S)^T k',
    'the read $Sk^\\top$ instead of $kS$': 'delta_update: the state read as S k^T instead of k S',
    '$\\beta$ forgotten (always a full overwrite)': 'delta_update: beta forgotten (always a full overwrite)',
    '$\\beta$ broadcast along the last axis, not `beta[:, None, None]`': 'delta_update: beta broadcast along the last axis (beta * ..., not beta[:, None, None])',
    '`S` changed in place': 'delta_update: S changed in place',
    'the convex mix $(1 - \\beta) S + \\beta\\,k^\\top v$': 'warned (q3): delta_update as a convex mix, (1 - beta) S + beta k^T v (every row decays)',
    '$\\beta$ on the write only, $S + \\beta\\,k^\\top v - k^\\top (kS)$': 'warned (q3): delta_update: beta on the write only, the old row removed in full (S + beta k^T v - k^T k S)',
}
