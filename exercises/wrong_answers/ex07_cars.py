"""Classic wrong answers to exercise 7, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). A mistake on the line question 3's roster
tasks insert (tools/exercise_pools_ex07.py: each sentence's unit) is written at every task
(`AtEachTask`); the others read the same at every task."""

from tools.exercise_variants import AtEachTask

_UNIT = "    phrasing_of_pair = {}\n"  # the roster tasks insert each sentence's unit after it
_MIRROR = '    phrasing_ids = [str(f).split("/")[0] for f in phrasing_ids]'
_FAMILY = "    phrasing_ids = [family_of[f] for f in phrasing_ids]"
_DISTINCT = "    distinct = sorted(set(phrasing_ids))\n"

WRONG_ANSWERS = {
    "split by sentences, not by pairs (pairs leak across the split)": [
        ("    pairs = sorted(set(pair_ids))\n"
         "    n_test = round(test_fraction * len(pairs))\n"
         "    rng = np.random.default_rng(seed)\n"
         "    test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())\n"
         "    train = [i for i, p in enumerate(pair_ids) if p not in test_pairs]\n"
         "    test = [i for i, p in enumerate(pair_ids) if p in test_pairs]\n",
         "    n_test = round(test_fraction * len(pair_ids))\n"
         "    order = np.random.default_rng(seed).permutation(len(pair_ids))\n"
         "    test = sorted(order[:n_test].tolist())\n"
         "    train = sorted(order[n_test:].tolist())\n"),
    ],
    "the seed is ignored: always the first pairs go to the test set": [
        ("test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())",
         "test_pairs = set(pairs[:n_test])"),
    ],
    "unseeded generator: a different split on every call": [
        ("rng = np.random.default_rng(seed)", "rng = np.random.default_rng()"),
    ],
    "test fraction taken of the sentences, not of the pairs": [
        ("n_test = round(test_fraction * len(pairs))", "n_test = round(test_fraction * len(pair_ids))"),
    ],
    "number of test pairs truncated instead of rounded": [
        ("n_test = round(test_fraction * len(pairs))", "n_test = int(test_fraction * len(pairs))"),
    ],
    "padding included in the mean: divides by T, not by the number of real tokens": [
        ("return total / count", "return total / x.shape[1]"),
    ],
    "padded vectors summed: the mask only used for the count": [
        ("total = x.masked_fill(~m, 0).sum(dim=1)", "total = x.sum(dim=1)"),
    ],
    "mask broadcast on the wrong axis: (B, 1, T) multiplies the features": [
        ("m = mask.unsqueeze(-1)  #", "m = mask.unsqueeze(1)  #"),
        ("count = m.sum(dim=1)", "count = m.sum(dim=-1)"),
    ],
    "count of shape (B,) without keepdim: divides (B, D) along the features": [
        ("count = m.sum(dim=1).to(x.dtype)", "count = mask.sum(dim=1).to(x.dtype)"),
    ],
    "sorts the caller's pair_ids in place (pair_ids.sort())": [
        ("    pairs = sorted(set(pair_ids))\n", "    pair_ids.sort()\n    pairs = sorted(set(pair_ids))\n"),
    ],
    "seeds NumPy's global generator and draws the test pairs from np.random": [
        ("    rng = np.random.default_rng(seed)\n    test_pairs = set(rng.choice(",
         "    np.random.seed(seed)\n    test_pairs = set(np.random.choice("),
    ],
    "shortcut: masked_mean handed to the course package": [
        ("    m = mask.unsqueeze(-1)  # (B, T, 1): one flag per token, for every feature\n",
         "    import attnbook.cars\n    return attnbook.cars.masked_mean(x, mask)\n"),
    ],
    "zeroes the caller's padded vectors in place before summing": [
        ("    total = x.masked_fill(~m, 0).sum(dim=1)  # (B, D): padded values (even inf, nan) never enter",
         "    x[~mask] = 0.0\n    total = x.sum(dim=1)  # (B, D)"),
    ],
    "float32 mean whatever the input dtype": [
        ("    return total / count", "    return (total / count).float()"),
    ],
    "phrasing split by pairs: held-out phrasings leak into training": [
        ("    distinct = sorted(set(phrasing_ids))\n    n_held_out = round(test_fraction * len(distinct))\n"
         "    generator = np.random.default_rng(seed)\n"
         "    held_out = set(generator.choice(distinct, size=n_held_out, replace=False).tolist())\n"
         "    train = [i for i, f in enumerate(phrasing_ids) if f not in held_out]\n"
         "    test = [i for i, f in enumerate(phrasing_ids) if f in held_out]\n",
         "    distinct = sorted(set(pair_ids))\n    n_held_out = round(test_fraction * len(distinct))\n"
         "    generator = np.random.default_rng(seed)\n"
         "    held_out = set(generator.choice(distinct, size=n_held_out, replace=False).tolist())\n"
         "    train = [i for i, p in enumerate(pair_ids) if p not in held_out]\n"
         "    test = [i for i, p in enumerate(pair_ids) if p in held_out]\n"),
    ],
    "phrasing split without the check of pairs that mix phrasings": [
        ("            raise ValueError(f\"pair {pair} mixes phrasings {phrasing_of_pair[pair]} and {phrasing}\")",
         "            pass"),
    ],
    "phrasing split ignores the seed: always the first phrasings held out": [
        ("held_out = set(generator.choice(distinct, size=n_held_out, replace=False).tolist())",
         "held_out = set(distinct[:n_held_out])"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and all three functions wrong": [
        ("def split_pairs(pair_ids, test_fraction, seed):", TAMPER + "def split_pairs(pair_ids, test_fraction, seed):"),
        ("test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())", "test_pairs = set(pairs[:n_test])"),
        ("    return total / count", "    return total / x.shape[1]"),
        ("n_held_out = round(test_fraction * len(distinct))", "n_held_out = 0"),
    ],
}

# Tampering of two more kinds (TAMPERS, in tools/exercise_proof.py), each with question 1
# answered wrongly: the tests run in the grader's process, so q1 must still score 0.
_FIRST = 'def split_pairs(pair_ids, test_fraction, seed):'
WRONG_ANSWERS.update({
    f"tampering (q1): {kind} patched, q1 answered wrongly": [
        (_FIRST, TAMPERS[kind] + _FIRST),
        ('    train = [i for i, p in enumerate(pair_ids) if p not in test_pairs]', '    return None'),
    ]
    for kind in ['grading module', 'results file']
})

WRONG_ANSWERS.update({
    "the number of test pairs from the sentences: round(fraction * sentences / 2)": [
        ("    n_test = round(test_fraction * len(pairs))", "    n_test = round(test_fraction * len(pair_ids) / 2)"),
    ],
    "held-out phrasings by a seed offset (neighbours), not at random": [
        ("    held_out = set(generator.choice(distinct, size=n_held_out, replace=False).tolist())",
         "    start = seed % len(distinct)\n"
         "    held_out = set((distinct + distinct)[start:start + n_held_out])"),
    ],
})

WRONG_ANSWERS.update({
    "warned (q2): padding zeroed by multiplying with the 0/1 mask (0 * inf is nan)": [
        ("    total = x.masked_fill(~m, 0).sum(dim=1)", "    total = (x * m.to(x.dtype)).sum(dim=1)"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    'correct: padding removed with torch.where': [
        ('    total = x.masked_fill(~m, 0).sum(dim=1)',
         '    total = torch.where(m, x, torch.zeros((), dtype=x.dtype)).sum(dim=1)'),
    ],
})

WRONG_ANSWERS.update({
    # q4: the conceptual question
    "why_split_by_pairs: (a), a tempting wrong statement": [
        ('    return "c"', '    return "a"'),
    ],
    "why_split_by_pairs: the right letter in upper case with its parenthesis": [
        ('    return "c"', '    return "(C)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7)
    "a count ending in .5 rounded half up (int(x + 0.5)), not as round() does": [
        ("    n_test = round(test_fraction * len(pairs))",
         "    n_test = int(test_fraction * len(pairs) + 0.5)"),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7): counts ending in .5 and the extreme fractions in question 3
    "split_by_phrasing rounds half up, int(x + 0.5) (2.5 phrasings become 3)": [
        ("n_held_out = round(test_fraction * len(distinct))",
         "n_held_out = int(test_fraction * len(distinct) + 0.5)"),
    ],
})

WRONG_ANSWERS.update({  # a correct answer written differently: it must score 100 %
    "correct: split_by_phrasing rounds with NumPy (also half to even) and draws by permutation": [
        ("    n_held_out = round(test_fraction * len(distinct))\n    generator = np.random.default_rng(seed)\n"
         "    held_out = set(generator.choice(distinct, size=n_held_out, replace=False).tolist())\n",
         "    n_held_out = int(np.round(test_fraction * len(distinct)))\n    generator = np.random.default_rng(seed)\n"
         "    held_out = {distinct[i] for i in generator.permutation(len(distinct))[:n_held_out]}\n"),
    ],
})

WRONG_ANSWERS.update({  # issue 28: draws that are not random, an order that changes with the hash seed
    "test pairs: a window of the sorted pairs rotated by the seed (not random)": [
        ("    test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())",
         "    start = seed % len(pairs)\n"
         "    test_pairs = set((pairs + pairs)[start:start + n_test])"),
    ],
    "test pairs: the pairs sorted by (index * (seed + 1)) % n_pairs, the first taken (not random)": [
        ("    test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())",
         "    key = {p: (i * (seed + 1)) % len(pairs) for i, p in enumerate(pairs)}\n"
         "    test_pairs = set(sorted(pairs, key=key.get)[:n_test])"),
    ],
    "test pairs: neighbouring pairs from a random start": [
        ("    test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())",
         "    start = int(rng.integers(len(pairs)))\n"
         "    test_pairs = set((pairs + pairs)[start:start + n_test])"),
    ],
    "the distinct pair ids in a set's order (string ids: it changes with the hash seed)": [
        ("    pairs = sorted(set(pair_ids))", "    pairs = list(set(pair_ids))"),
    ],
    "held-out phrasings by a stride of 2 from a seed offset, not at random": [
        ("    held_out = set(generator.choice(distinct, size=n_held_out, replace=False).tolist())",
         "    start = seed % len(distinct)\n"
         "    held_out = {distinct[(start + 2 * i) % len(distinct)] for i in range(n_held_out)}"),
    ],
    "masked mean computed in NumPy (fails for vectors that require grad)": [
        ("    total = x.masked_fill(~m, 0).sum(dim=1)  # (B, D): padded values (even inf, nan) never enter",
         "    total = torch.from_numpy(np.where(m.numpy(), x.numpy(), 0.0).sum(axis=1)).to(x.dtype)"),
    ],
    "correct: test pairs by default_rng(seed).permutation, the mean with einsum": [
        ("    test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())",
         "    test_pairs = {pairs[i] for i in rng.permutation(len(pairs))[:n_test]}"),
        ("    total = x.masked_fill(~m, 0).sum(dim=1)  # (B, D): padded values (even inf, nan) never enter",
         "    total = torch.einsum(\"btd,bt->bd\", x.masked_fill(~m, 0), torch.ones_like(mask, dtype=x.dtype))"),
    ],
})

WRONG_ANSWERS.update({
    # issue 36, item 7: answers that do not solve the question must score 0 on it
    "non-solving (q1): every sentence in train, none in test": [
        ("    test = [i for i, p in enumerate(pair_ids) if p in test_pairs]\n    return train, test",
         "    return sorted(range(len(pair_ids))), []"),
    ],
})

WRONG_ANSWERS.update({
    # issue 45, item 2: the review's silent losses (2.15/5 and 0.65/4), each now warned by a public check
    "warned (q1): int() where round is specified (0.35 of 10 pairs gives 3, not 4)": [
        ("    n_test = round(test_fraction * len(pairs))", "    n_test = int(test_fraction * len(pairs))"),
    ],
    "warned (q3): no ValueError for a pair with two phrasings": [
        ("        if phrasing_of_pair.setdefault(pair, phrasing) != phrasing:\n"
         "            raise ValueError(f\"pair {pair} mixes phrasings {phrasing_of_pair[pair]} and {phrasing}\")\n",
         "        phrasing_of_pair.setdefault(pair, phrasing)\n"),
    ],
    # the fresh batch: Python's random where the NumPy generator is asked
    "warned (q1): the test pairs drawn with Python's random.Random(seed), not the NumPy generator": [
        ("    rng = np.random.default_rng(seed)\n"
         "    test_pairs = set(rng.choice(pairs, size=n_test, replace=False).tolist())",
         "    import random\n    test_pairs = set(random.Random(seed).sample(pairs, n_test))"),
    ],
    # the fresh batch: hidden inputs in the layouts the course makes (a transposed x)
    "masked mean flattens x with .view (fails on a transposed, non-contiguous x)": [
        ("    total = x.masked_fill(~m, 0).sum(dim=1)  # (B, D): padded values (even inf, nan) never enter",
         "    B, T, D = x.shape\n"
         "    flat = x.view(B * T, D).masked_fill(~mask.reshape(B * T, 1), 0)\n"
         "    total = flat.reshape(B, T, D).sum(dim=1)"),
    ],
    "non-solving (q2): zeros of the right shape": [
        ("    return total / count", "    return torch.zeros(x.shape[0], x.shape[-1], dtype=x.dtype)"),
    ],
})

WRONG_ANSWERS.update({
    # question 3's pool: the held-out units drawn from the wrong list, in each task's terms
    "held-out units from the wrong list (book: phrasings numbered 0..n-1; mirror: the part after "
    "the '/'; family: every family family_of names, also of phrasings no sentence uses)": AtEachTask(
        [(_DISTINCT, "    distinct = list(range(len(set(phrasing_ids))))\n")],
        mirror=[(_MIRROR, '    phrasing_ids = [str(f).split("/")[-1] for f in phrasing_ids]')],
        family=[(_DISTINCT, "    distinct = sorted(set(family_of.values()))\n")],
    ),
    "correct: each sentence's unit by another route (book: the pairs' phrasings in dict(); mirror: "
    "'/mirror' removed; family: family_of.get)": AtEachTask(
        [(_UNIT, "    phrasing_of_pair = dict()\n")],
        mirror=[(_MIRROR, '    phrasing_ids = [str(f).replace("/mirror", "") for f in phrasing_ids]')],
        family=[(_FAMILY, "    phrasing_ids = [family_of.get(f) for f in phrasing_ids]")],
    ),
})
