"""Classic wrong answers to exercise 6 (sampling), as text edits of the reference
solution: label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points
(the format and the rules are in tools/exercise_proof.py). Question 4 has a pool of variants
(tools/exercise_pools_ex06.py): each roster task's answer inserts one line after the check of
p, so the book's mistakes read the same there; a mistake that the inserted line changes, and
the mistakes of each task's own row, are written at every task (`AtEachTask`)."""

from tools.exercise_pools_ex06 import LINES
from tools.exercise_variants import AtEachTask

_CHECKED = '        raise ValueError(f"p must lie in (0, 1], got {p}")\n'
_PROBS = "probs = torch.softmax(logits.double(), dim=-1)"
_MASKED = '    return logits.masked_fill(drop, float("-inf"))'

WRONG_ANSWERS = {
    # question 1: temperature
    "temperature applied after the softmax: probabilities divided by T": [
        ("torch.softmax(logits / temperature, dim=-1)", "torch.softmax(logits, dim=-1) / temperature"),
    ],
    "temperature applied after the softmax: probabilities ** (1/T), not renormalised": [
        ("torch.softmax(logits / temperature, dim=-1)", "torch.softmax(logits, dim=-1) ** (1 / temperature)"),
    ],
    "logits multiplied by the temperature instead of divided": [
        ("torch.softmax(logits / temperature,", "torch.softmax(logits * temperature,"),
    ],
    "softmax by hand without subtracting the maximum (overflows)": [
        ("torch.softmax(logits / temperature, dim=-1)",
         "torch.exp(logits / temperature) / torch.exp(logits / temperature).sum(dim=-1, keepdim=True)"),
    ],
    # question 2: top-k
    "top-k keeps k - 1 (the k-th largest is removed too)": [
        ("logits < kth_largest", "logits <= kth_largest"),
    ],
    "top-k keeps k + 1": [
        ("torch.topk(logits, k, dim=-1)", "torch.topk(logits, k + 1, dim=-1)"),
    ],
    "top-k keeps the k smallest logits": [
        ("torch.topk(logits, k, dim=-1)", "torch.topk(logits, k, dim=-1, largest=False)"),
        ("logits < kth_largest", "logits > kth_largest"),
    ],
    "top-k sets the other logits to 0 instead of -inf": [
        ('logits < kth_largest, float("-inf")', 'logits < kth_largest, 0.0'),
    ],
    "k-th largest without keepdim (breaks for more than one row)": [
        ("values[..., -1:]", "values[..., -1]"),
    ],
    "k larger than the vocabulary not handled": [
        ("    k = min(k, logits.shape[-1])\n", ""),
    ],
    "top-k changes the caller's logits in place": [
        ('    return logits.masked_fill(logits < kth_largest, float("-inf"))\n',
         '    logits[logits < kth_largest] = float("-inf")\n    return logits\n'),
    ],
    # question 3: the sampling step
    "argmax (greedy decoding) instead of sampling": [
        ("torch.multinomial(probs, num_samples=1, generator=generator)", "probs.argmax(dim=-1, keepdim=True)"),
    ],
    "draws from the global random generator, not the one given": [
        ("torch.multinomial(probs, num_samples=1, generator=generator)", "torch.multinomial(probs, num_samples=1)"),
    ],
    "temperature ignored in the sampling step": [
        ("probs = temperature_softmax(logits, temperature)", "probs = temperature_softmax(logits, 1.0)"),
    ],
    "a new torch.Generator() when generator is None: every call draws the same tokens": [
        ("torch.multinomial(probs, num_samples=1, generator=generator)",
         "torch.multinomial(probs, num_samples=1, generator=generator or torch.Generator())"),
    ],
    "shortcut: the sampling step handed to attnbook.gpt.sample_next_token": [
        ("    if top_k is not None:\n        logits = top_k_filter(logits, top_k)\n",
         "    from attnbook.gpt import sample_next_token\n"
         "    return sample_next_token(logits, temperature, top_k, generator)\n"),
    ],
    "top-k returns the caller's tensor itself when k >= V": [
        ("    k = min(k, logits.shape[-1])\n",
         "    if k >= logits.shape[-1]:\n        return logits\n"),
    ],
    "float32 probabilities whatever the logits' dtype": [
        ("return torch.softmax(logits / temperature, dim=-1)", "return torch.softmax(logits.float() / temperature, dim=-1)"),
    ],
    "reseeds PyTorch's global generator at every step (torch.manual_seed(0))": [
        ("    probs = temperature_softmax(logits, temperature)  # (B, V)\n",
         "    torch.manual_seed(0)\n    probs = temperature_softmax(logits, temperature)  # (B, V)\n"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and three of the four functions wrong": [
        ("def temperature_softmax(logits, temperature):", TAMPER + "def temperature_softmax(logits, temperature):"),
        ("logits / temperature", "logits * temperature"),
        ("logits < kth_largest", "logits > kth_largest"),
        ("torch.multinomial(probs, num_samples=1, generator=generator)", "probs.argmax(dim=-1, keepdim=True)"),
    ],
    "top-p drops the token that crosses p (keeps cumulative probability <= p)": [
        ("    mass_above = torch.cat([torch.zeros_like(running[..., :1]), running[..., :-1]], dim=-1)  # ranked higher",
         "    mass_above = running  # probability up to and including this token"),
    ],
    "top-p fills the caller's logits in place": AtEachTask(  # at the tasks the row is a new tensor
        [("    return logits.masked_fill(drop, float(\"-inf\"))", "    return logits.masked_fill_(drop, float(\"-inf\"))")],
        tempered=[(LINES["tempered"], "    logits /= temperature  # the caller's logits divided in place\n")],
        cut=[(LINES["cut"], "    logits.masked_fill_(logits < torch.topk(logits, min(k, logits.shape[-1]), dim=-1)"
                            ".values[..., -1:], float(\"-inf\"))  # the caller's logits cut in place\n")]),
    "top-p keeps the order of the sorted probabilities (no scatter back)": [
        ("drop = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, order, mass_above >= p)",
         "drop = mass_above >= p"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def temperature_softmax(logits, temperature):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    return torch.softmax(logits / temperature, dim=-1)', '    return torch.zeros_like(logits)'),
    ]
    for kind in ['comparison helpers', 'builtins']
})

WRONG_ANSWERS.update({
    "correct: draws by inverting the cumulative distribution (no torch.multinomial)": [
        ("    return torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)",
         "    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=probs.dtype)  # (B, 1)\n"
         "    below = (probs.cumsum(dim=-1) < u).sum(dim=-1, keepdim=True)  # tokens passed by u\n"
         "    return below.clamp(max=probs.shape[-1] - 1)  # (B, 1) long"),
    ],
})

WRONG_ANSWERS.update({
    "top-k returns a view of the logits when k >= V (not a new tensor)": [
        ("    k = min(k, logits.shape[-1])\n",
         "    if k >= logits.shape[-1]:\n        return logits[:]\n    k = min(k, logits.shape[-1])\n"),
    ],
})

WRONG_ANSWERS.update({
    # q5: the conceptual question
    "what_a_cold_temperature_does: (a), a tempting wrong statement": [
        ('    return "b"', '    return "a"'),
    ],
    "what_a_cold_temperature_does: the right letter in upper case with its parenthesis": [
        ('    return "b"', '    return "(B)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7)
    "temperature clamped at 0.1 from below (colder temperatures act as 0.1)": [
        ("    return torch.softmax(logits / temperature, dim=-1)",
         "    return torch.softmax(logits / max(temperature, 0.1), dim=-1)"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): float32 inside, the dtype of the result restored
    "temperature softmax in float32, cast back to the logits' dtype": [
        ("    return torch.softmax(logits / temperature, dim=-1)",
         "    return torch.softmax(logits.float() / temperature, dim=-1).to(logits.dtype)"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: the softmax written out in the logits' dtype": [
        ("    return torch.softmax(logits / temperature, dim=-1)",
         "    z = logits / temperature\n    e = torch.exp(z - z.amax(dim=-1, keepdim=True))\n"
         "    return e / e.sum(dim=-1, keepdim=True)"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): top_k at or past the vocabulary size in the sampling step
    "sample_next filters with torch.topk inline (top_k > V raises)": [
        ("        logits = top_k_filter(logits, top_k)\n",
         "        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]\n"
         "        logits = logits.masked_fill(logits < kth, float(\"-inf\"))\n"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: sample_next filters inline with torch.topk, k capped at the vocabulary size": [
        ("        logits = top_k_filter(logits, top_k)\n",
         "        kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]\n"
         "        logits = logits.masked_fill(logits < kth, float(\"-inf\"))\n"),
    ],
})

WRONG_ANSWERS.update({  # issue 28: the reference's own float32 nucleus, and item 6's kinds
    "top-p from float32 probabilities and a float32 running sum (the nucleus drifts)": [
        ("    probs = torch.softmax(logits.double(), dim=-1)", "    probs = torch.softmax(logits, dim=-1)"),
    ],
    "top-p ranked in NumPy (fails for logits that require grad)": [
        ("    probs = torch.softmax(logits.double(), dim=-1)",
         "    probs = torch.from_numpy(torch.softmax(logits.double(), dim=-1).numpy())"),
    ],
    "softmax by hand, shifted by the row mean instead of the maximum (inf and nan at +-1000, -inf rows)": [
        ("    return torch.softmax(logits / temperature, dim=-1)",
         "    z = logits / temperature\n    e = torch.exp(z - z.mean(dim=-1, keepdim=True))\n"
         "    return e / e.sum(dim=-1, keepdim=True)"),
    ],
    "top-k by multiplying with a 0/1 mask, then zeros set to -inf (a kept logit of 0 is lost)": [
        ('    return logits.masked_fill(logits < kth_largest, float("-inf"))',
         '    kept = logits * (logits >= kth_largest)\n    return kept.masked_fill(kept == 0, float("-inf"))'),
    ],
    "a default generator made once, in the signature (a mutable default shared between calls)": [
        ("def sample_next(logits, temperature=1.0, top_k=None, generator=None):",
         "def sample_next(logits, temperature=1.0, top_k=None, generator=torch.Generator().manual_seed(0)):"),
    ],
    "correct: top-p as Hugging Face writes it (ascending order, the tail dropped)": [
        ("    ranked, order = probs.sort(dim=-1, descending=True)  # (B, V) each\n"
         "    running = ranked.cumsum(dim=-1)  # float64\n"
         "    mass_above = torch.cat([torch.zeros_like(running[..., :1]), running[..., :-1]], dim=-1)  # ranked higher\n"
         "    drop = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, order, mass_above >= p)",
         "    ranked, order = probs.sort(dim=-1)  # ascending\n"
         "    tail = ranked.cumsum(dim=-1) <= 1 - p  # the least likely tokens, up to 1 - p in all\n"
         "    tail[..., -1] = False  # the most likely token always stays\n"
         "    drop = torch.zeros_like(tail).scatter(-1, order, tail)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 36, item 7: answers that do not solve the question must score 0 on it
    "non-solving (q1): uniform probabilities of the right shape": [
        ("    return torch.softmax(logits / temperature, dim=-1)",
         "    return torch.full_like(logits, 1.0 / logits.shape[-1])"),
    ],
    "non-solving (q3): always token 0, a (B, 1) long tensor": [
        ("    return torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)",
         "    return torch.zeros(probs.shape[0], 1, dtype=torch.long)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45, item 2: edges no test reached, each now warned by a public check
    "warned (q4): top-p keeps a token whose mass above equals p (<= p, not the strict < p)": [
        ("scatter(-1, order, mass_above >= p)", "scatter(-1, order, mass_above > p)"),
    ],
    "warned (q4): top-p at p = 1 by the running sum alone (a token below float64's resolution is dropped)": [
        ("    if p == 1:  # every token (a float32 running sum can reach 1 before the last token)\n"
         "        return logits.clone()\n", ""),
    ],
    "warned (q1): probabilities in float32 for bfloat16 logits (the dtype is not kept)": [
        ("    return torch.softmax(logits / temperature, dim=-1)",
         "    p = torch.softmax(logits.double() / temperature, dim=-1)\n"
         "    return p if logits.dtype == torch.float64 else p.float()"),
    ],
    "temperature applied only at the public value (2), 1 elsewhere": [
        ("    return torch.softmax(logits / temperature, dim=-1)",
         "    return torch.softmax(logits / (2.0 if temperature == 2.0 else 1.0), dim=-1)"),
    ],
    "non-solving (q2): every logit kept (a copy of the row)": [
        ('    return logits.masked_fill(logits < kth_largest, float("-inf"))', "    return logits.clone()"),
    ],
    "non-solving (q4): every logit kept (a copy of the row)": [
        ('    return logits.masked_fill(drop, float("-inf"))', "    return logits.clone()"),
    ],
})

WRONG_ANSWERS.update({  # question 4 at each task of its pool: the row the nucleus is taken of
    "top-p of the row as given (the temperature or the top-k cut forgotten; at the book's task, a temperature of 2 applied)":
        AtEachTask([(_CHECKED, _CHECKED + "    logits = logits / 2\n")],
                   tempered=[(LINES["tempered"], "")], cut=[(LINES["cut"], "")]),
    "top-p of the task's row, the logits returned as given (at the book's task, the nucleus at temperature 2)":
        AtEachTask([(_PROBS, "probs = torch.softmax((logits / 2).double(), dim=-1)")],
                   tempered=[(LINES["tempered"], ""),
                             (_PROBS, "probs = torch.softmax((logits / temperature).double(), dim=-1)")],
                   cut=[(LINES["cut"], ""), (_PROBS, "probs = torch.softmax(top_k_filter(logits, k).double(), dim=-1)")]),
    "top-p before the top-k cut (the nucleus of the whole row, then cut; at the other tasks a top-1 cut after it)":
        AtEachTask([(_MASKED, '    return top_k_filter(logits.masked_fill(drop, float("-inf")), 1)')],
                   tempered=[(_MASKED, '    return top_k_filter(logits.masked_fill(drop, float("-inf")), 1)')],
                   cut=[(LINES["cut"], ""),
                        (_MASKED, '    return top_k_filter(logits.masked_fill(drop, float("-inf")), k)')]),
    "correct: the task's row written another way (a multiplication by 1 / temperature, an inline top-k cut)":
        AtEachTask([(_CHECKED, '        raise ValueError("p must lie in (0, 1], got " + str(p))\n')],
                   tempered=[(LINES["tempered"], "    logits = logits * (1.0 / temperature)\n")],
                   cut=[(LINES["cut"], "    kth = torch.topk(logits, min(k, logits.shape[-1]), dim=-1).values[..., -1:]\n"
                         '    logits = logits.masked_fill(logits < kth, float("-inf"))\n')]),
})
