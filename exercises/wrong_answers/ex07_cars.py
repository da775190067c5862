"""Classic wrong answers to exercise 7, as text edits of the reference solution.

`tools/exercises.py prove` applies each list of (old, new) edits to the reference answer cells
(every `old` must occur exactly once) and proves that every wrong answer loses points on the
hidden tests, that each question has a mistake its public checks flag, and that a submission
whose label starts with "tampering:" scores 0 (TAMPER, given by the tool, is the code such a
submission runs first). It prints the message each mistake gets.
"""

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
        ("total = (x * m).sum(dim=1)", "total = x.sum(dim=1)"),
    ],
    "mask broadcast on the wrong axis: (B, 1, T) multiplies the features": [
        ("m = mask.unsqueeze(-1).to(x.dtype)", "m = mask.unsqueeze(1).to(x.dtype)"),
        ("count = m.sum(dim=1)", "count = m.sum(dim=-1)"),
    ],
    "count of shape (B,) without keepdim: divides (B, D) along the features": [
        ("count = m.sum(dim=1)", "count = mask.sum(dim=1)"),
    ],
}
