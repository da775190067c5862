"""Classic wrong answers to exercise 5, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). Question 1 has a pool of tasks
(`tools.exercise_pools`): each of its mistakes is written at every roster task too
(`AtEachTask`: the edits of that task's text), so the proof at every sampled variant grades
the same mistake."""

from tools.exercise_variants import AtEachTask

# question 1's answer line at each task of its pool (the book's "fixed" first)
_FIXED = "    return 1.0 / 10000.0 ** (two_i / d_model)\n"
_BASE = "    return 1.0 / base ** (two_i / d_model)\n"
_STRETCH = ("    i, last = two_i / 2, max(len(two_i) - 1, 1)  # pair i; the slowest\n"
            "    return 1.0 / 10000.0 ** (two_i / d_model) / stretch ** (i / last)\n")


def _q1(fixed: str, base: str, stretch: str, *more: tuple) -> AtEachTask:
    """One mistake of question 1 at each task: its answer line replaced (`more`: edits of
    other questions, the same at every task)."""
    return AtEachTask([(_FIXED, fixed), *more], base=[(_BASE, base), *more],
                      stretch=[(_STRETCH, stretch), *more])


_I_LAST = "    i, last = two_i / 2, max(len(two_i) - 1, 1)  # pair i; the slowest\n"

WRONG_ANSWERS = {
    "sin and cos swapped (cosines in the even columns)": [
        ("pe[:, 0::2] = np.sin(theta)", "pe[:, 0::2] = np.cos(theta)"),
        ("pe[:, 1::2] = np.cos(theta[:, : d_model // 2])",
         "pe[:, 1::2] = np.sin(theta[:, : d_model // 2])"),
    ],
    "exponent i / d_model instead of 2i / d_model": _q1(
        _FIXED.replace("two_i / d_model", "two_i / 2 / d_model"),
        _BASE.replace("two_i / d_model", "two_i / 2 / d_model"),
        _STRETCH.replace("(two_i / d_model)", "(two_i / 2 / d_model)"),
    ),
    "exponent 2i without dividing by d_model": _q1(
        _FIXED.replace("(two_i / d_model)", "two_i"),
        _BASE.replace("(two_i / d_model)", "two_i"),
        _STRETCH.replace("(two_i / d_model)", "two_i"),
    ),
    "rate multiplied instead of divided (10000 ** (2i / d_model))": _q1(
        "    return 10000.0 ** (two_i / d_model)\n",
        "    return base ** (two_i / d_model)\n",
        _I_LAST + "    return 10000.0 ** (two_i / d_model) * stretch ** (i / last)\n",
    ),
    "the setting ignored or mistyped (the book: base 1000; base: 10000 whatever the base; "
    "stretch: the unstretched rates)": _q1(
        _FIXED.replace("10000.0", "1000.0"),
        _FIXED,
        _I_LAST + _FIXED,
    ),
    "stretch spread over d_model, not over the pairs: stretch ** (2i / d_model) (the book: "
    "10000 ** (2i / (d_model - 1)); base: base ** (2i / (d_model - 1)))": _q1(
        _FIXED.replace("(two_i / d_model)", "(two_i / (d_model - 1))"),
        _BASE.replace("(two_i / d_model)", "(two_i / (d_model - 1))"),
        _STRETCH.replace("stretch ** (i / last)", "stretch ** (two_i / d_model)"),
    ),
    "each column its own frequency (column index j instead of the pair index)": [
        ("theta = angles(seq_len, d_model)",
         "theta = np.arange(seq_len)[:, None] / 10000.0 ** (2 * np.arange(d_model) / d_model)"),
        ("pe[:, 0::2] = np.sin(theta)", "pe[:, 0::2] = np.sin(theta[:, 0::2])"),
        ("pe[:, 1::2] = np.cos(theta[:, : d_model // 2])", "pe[:, 1::2] = np.cos(theta[:, 1::2])"),
    ],
    "odd d_model crashes: a cosine for every pair, even the incomplete one": [
        ("np.cos(theta[:, : d_model // 2])", "np.cos(theta)"),
    ],
    "warned (q1): only d_model // 2 frequencies (an odd width loses its last pair)": [
        ("np.arange(0, d_model, 2, dtype=float)", "2 * np.arange(d_model // 2, dtype=float)"),
    ],
    "odd d_model gives one column too many (the table is rounded up to full pairs)": [
        ("pe = np.zeros((seq_len, d_model))", "pe = np.zeros((seq_len, 2 * theta.shape[1]))"),
        ("np.cos(theta[:, : d_model // 2])", "np.cos(theta)"),
    ],
    "positions start at 1 instead of 0": [
        ("np.arange(seq_len, dtype=float)", "np.arange(1, seq_len + 1, dtype=float)"),
    ],
    "[sin | cos] halves concatenated instead of interleaved": [
        ("pe[:, 0::2] = np.sin(theta)", "pe[:, : theta.shape[1]] = np.sin(theta)"),
        ("pe[:, 1::2] = np.cos(theta[:, : d_model // 2])",
         "pe[:, theta.shape[1]:] = np.cos(theta[:, : d_model // 2])"),
    ],
    "shortcut: the table taken from attnbook.positional": [
        ("    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n",
         "    from attnbook.positional import sinusoidal_encoding as table\n"
         "    return table(seq_len, d_model).double().numpy()\n"),
    ],
    "shortcut: the sines and cosines computed in torch": [
        ("    pe[:, 0::2] = np.sin(theta)  # ceil(d_model / 2) even columns",
         "    import torch\n    pe[:, 0::2] = torch.sin(torch.from_numpy(theta)).numpy()  # ceil(d_model / 2) even columns"),
    ],
    "float32 table: precision lost for long sequences": [
        ("    pe = np.zeros((seq_len, d_model))", "    pe = np.zeros((seq_len, d_model), dtype=np.float32)"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and three of the four functions wrong": [
        ("def angle_rates(d_model):", TAMPER + "def angle_rates(d_model):"),
        ("1.0 / 10000.0 ** (two_i / d_model)", "1.0 / 10000.0 ** (two_i / 2 / d_model)"),
        ("np.arange(seq_len, dtype=float)[:, None]", "np.arange(1, seq_len + 1, dtype=float)[:, None]"),
        ("pe[:, 0::2] = np.sin(theta)", "pe[:, 0::2] = np.cos(theta)"),
    ],
    "rotary turned the other way (the sine signs swapped)": [
        ("    out[:, 0::2] = even * cos - odd * sin\n    out[:, 1::2] = even * sin + odd * cos",
         "    out[:, 0::2] = even * cos + odd * sin\n    out[:, 1::2] = odd * cos - even * sin"),
    ],
    "rotary pairs column i with column i + d/2 (the half-split layout)": [
        ("    even, odd = x[:, 0::2], x[:, 1::2]  # (T, d / 2) each",
         "    even, odd = x[:, : d // 2], x[:, d // 2 :]  # (T, d / 2) each"),
    ],
    "rotary writes into the caller's array": [
        ("    out = np.empty((T, d))", "    out = x"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def angle_rates(d_model):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    return 1.0 / 10000.0 ** (two_i / d_model)', '    return np.zeros(len(two_i))'),
    ]
    for kind in ['profiler', 'results file']
})

WRONG_ANSWERS.update({
    # q5: the conceptual question
    "why_many_frequencies: (b), a tempting wrong statement": [
        ('    return "a"', '    return "b"'),
    ],
    "why_many_frequencies: the right letter in upper case with its parenthesis": [
        ('    return "a"', '    return "(A)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): a table precomputed once, as in many tutorials, and sliced
    "a table precomputed for 5000 positions and sliced (longer sequences come back short)": [
        ("def sinusoidal_encoding(seq_len, d_model):",
         "def sinusoidal_encoding(seq_len, d_model, _max_len=5000):"),
        ("    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n"
         "    pe = np.zeros((seq_len, d_model))",
         "    theta = angles(min(seq_len, _max_len), d_model)\n"
         "    pe = np.zeros((min(seq_len, _max_len), d_model))"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: the table built for the even width and cut to d_model": [
        ("    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n"
         "    pe = np.zeros((seq_len, d_model))\n"
         "    pe[:, 0::2] = np.sin(theta)  # ceil(d_model / 2) even columns\n"
         "    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n"
         "    return pe",
         "    theta = angles(seq_len, d_model)\n"
         "    pairs = np.stack([np.sin(theta), np.cos(theta)], axis=-1)  # (seq_len, pairs, 2)\n"
         "    return pairs.reshape(seq_len, 2 * theta.shape[1])[:, :d_model].copy()"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): a size past a table made in advance
    "rotary reads its angles from a table of 2048 positions (LLaMA's default context)": [
        ("    theta = angles(T, d)  # (T, d / 2)", "    theta = angles(2048, d)[:T]  # a table made for 2048 positions"),
    ],
})

WRONG_ANSWERS.update({  # issue 28: correct answers written differently, each must score 100 %
    "correct: rates as exp(-ln(10000) 2i / d), angles with np.outer, the table by column parity": _q1(
        "    return np.exp(-np.log(10000.0) * two_i / d_model)\n",
        "    return np.exp(-np.log(base) * two_i / d_model)\n",
        _I_LAST + "    return np.exp(-np.log(10000.0) * two_i / d_model - np.log(stretch) * i / last)\n",
        ("    return positions * angle_rates(d_model)[None, :]  # (seq_len, ceil(d_model / 2))",
         "    return np.outer(positions[:, 0], angle_rates(d_model))"),
        ("    pe = np.zeros((seq_len, d_model))\n"
         "    pe[:, 0::2] = np.sin(theta)  # ceil(d_model / 2) even columns\n"
         "    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n"
         "    return pe",
         "    columns = np.arange(d_model)\n"
         "    angle = theta[:, columns // 2]  # (seq_len, d_model): each column's pair\n"
         "    return np.where(columns % 2 == 0, np.sin(angle), np.cos(angle))"),
    ),
    "correct: rotary with each pair as a complex number": [
        ("    cos, sin = np.cos(theta), np.sin(theta)\n"
         "    even, odd = x[:, 0::2], x[:, 1::2]  # (T, d / 2) each\n"
         "    out = np.empty((T, d))\n"
         "    out[:, 0::2] = even * cos - odd * sin\n"
         "    out[:, 1::2] = even * sin + odd * cos\n"
         "    return out",
         "    z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * theta)  # each pair turned by its angle\n"
         "    return np.stack([z.real, z.imag], axis=-1).reshape(T, d)"),
    ],
    # issue 28, item 6: what chapter 5 returns, a table kept between calls, an empty input
    "the whole table in float32, as chapter 5's sinusoidal_encoding returns": [
        ("    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n"
         "    pe = np.zeros((seq_len, d_model))",
         "    theta = angles(seq_len, d_model).astype(np.float32)\n"
         "    pe = np.zeros((seq_len, d_model), dtype=np.float32)"),
    ],
    "tables kept in a mutable default argument, keyed by seq_len only": [
        ("def sinusoidal_encoding(seq_len, d_model):",
         "def sinusoidal_encoding(seq_len, d_model, _tables={}):"),
        ("    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n",
         "    if seq_len in _tables:\n        return _tables[seq_len].copy()\n"
         "    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n"),
        ("    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n    return pe",
         "    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n"
         "    _tables[seq_len] = pe\n    return pe.copy()"),
    ],
    "rows built one position at a time and stacked (seq_len = 0 fails)": [
        ("    pe = np.zeros((seq_len, d_model))\n"
         "    pe[:, 0::2] = np.sin(theta)  # ceil(d_model / 2) even columns\n"
         "    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n"
         "    return pe",
         "    rows = []\n"
         "    for t in range(seq_len):\n"
         "        row = np.zeros(d_model)\n"
         "        row[0::2], row[1::2] = np.sin(theta[t]), np.cos(theta[t, : d_model // 2])\n"
         "        rows.append(row)\n"
         "    return np.stack(rows)"),
    ],
})

WRONG_ANSWERS.update({  # issue 28, item 6: a loop the question rules out, read from the source
    "angles filled one position at a time in a for loop (the question rules out loops)": [
        ("    positions = np.arange(seq_len, dtype=float)[:, None]  # (seq_len, 1)\n"
         "    return positions * angle_rates(d_model)[None, :]  # (seq_len, ceil(d_model / 2))",
         "    rates = angle_rates(d_model)\n"
         "    out = np.zeros((seq_len, len(rates)))\n"
         "    for pos in range(seq_len):\n"
         "        out[pos] = pos * rates\n"
         "    return out"),
    ],
})

WRONG_ANSWERS.update({  # issue 28, item 6: two calls whose results must not share memory
    "tables cached in a mutable default argument and the cached array itself returned": [
        ("def sinusoidal_encoding(seq_len, d_model):",
         "def sinusoidal_encoding(seq_len, d_model, _tables={}):"),
        ("    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n",
         "    if (seq_len, d_model) in _tables:\n        return _tables[seq_len, d_model]\n"
         "    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n"),
        ("    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n    return pe",
         "    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n"
         "    _tables[seq_len, d_model] = pe\n    return pe"),
    ],
    "correct: tables cached in a dict keyed by both sizes, a copy returned each call": [
        ("def sinusoidal_encoding(seq_len, d_model):",
         "_TABLES = {}\n\n\ndef sinusoidal_encoding(seq_len, d_model):"),
        ("    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n",
         "    if (seq_len, d_model) in _TABLES:\n        return _TABLES[seq_len, d_model].copy()\n"
         "    theta = angles(seq_len, d_model)  # (seq_len, ceil(d_model / 2))\n"),
        ("    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n    return pe",
         "    pe[:, 1::2] = np.cos(theta[:, : d_model // 2])  # d_model // 2 odd columns\n"
         "    _TABLES[seq_len, d_model] = pe\n    return pe.copy()"),
    ],
})

WRONG_ANSWERS.update({
    # issue 36, item 7: positions and pairs beyond the first (the examples turned pair 0 only)
    "rotary: the angles of half the width, angles(T, d // 2) (pair 1 turns at pair 0's rate)": [
        ("    theta = angles(T, d)  # (T, d / 2)", "    theta = angles(T, d // 2)"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45, item 2: identity and constant answers satisfy the properties; they must score 0
    "non-solving (q4): rotary returns a copy of x, unrotated (every score depends on the offset only)": [
        ("    out = np.empty((T, d))\n    out[:, 0::2] = even * cos - odd * sin\n    out[:, 1::2] = even * sin + odd * cos\n    return out",
         "    return np.array(x, dtype=float)"),
    ],
    "non-solving (q2): angles of the right shape, all zero": [
        ("    return positions * angle_rates(d_model)[None, :]  # (seq_len, ceil(d_model / 2))",
         "    return np.zeros((seq_len, (d_model + 1) // 2))"),
    ],
    # issue 45, item 2: a public value check at one setting; right only for d_model = 4
    "angle rates with the exponent 2i / 4 whatever d_model (right only at the public d_model = 4)": _q1(
        _FIXED.replace("(two_i / d_model)", "(two_i / 4)"),
        _BASE.replace("(two_i / d_model)", "(two_i / 4)"),
        _STRETCH.replace("(two_i / d_model)", "(two_i / 4)"),
    ),
})
