"""How sure chapter 7's study can be of an accuracy: intervals and an exact test.

A stored run keeps one "1"/"0" per test sentence (`train_and_measure`'s "<name>_correct"),
twins side by side. Three summaries, each naming the noise it covers:

- `seed_interval`: a t interval over seeds. Every seed draws its own sentences and its own
  weights and batches, so it covers the training noise *and* the choice of test sentences;
- `bootstrap_interval`: test pairs resampled within each run, the runs kept: the choice of
  test sentences alone, for models trained as they were;
- `pair_counts` and `sign_test`: a pair whose twins are both right has read the order, both
  wrong has read it backwards, one of each has not told them apart. Without any rule, both
  ways are equally likely: an exact two-sided binomial test of "both wrong" against "both
  right" says whether a model is *below* chance beyond the luck of its test pairs;
- `pair_wins`: two models on the same test pairs (the same split and seed), pair by pair:
  where one gets more twins right than the other. The same sign test on those two counts
  says whether one model is ahead beyond the luck of the test pairs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np

__all__ = [
    "pair_scores",
    "pair_counts",
    "pair_wins",
    "sign_test",
    "bootstrap_interval",
    "seed_interval",
]

#: Two-sided 95 % points of Student's t for 1 to 9 degrees of freedom.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}
_T95[9] = 2.262


def pair_scores(correct: str) -> np.ndarray:
    """(n_pairs,) accuracy of each pair (0, 0.5 or 1) from a "1"/"0" string of even length
    whose neighbours are twins.

    Chapter 7.
    """
    if len(correct) % 2 or set(correct) - {"0", "1"}:
        raise ValueError("correct must be an even-length string of '0' and '1'")
    bits = np.frombuffer(correct.encode(), dtype=np.uint8) - ord("0")  # (n,)
    return bits.reshape(-1, 2).mean(axis=1)


def pair_counts(corrects: Sequence[str]) -> tuple[int, int, int]:
    """(both right, one right, both wrong): pairs counted over all the runs' strings.

    Chapter 7.
    """
    scores = np.concatenate([pair_scores(c) for c in corrects])
    return (
        int((scores == 1).sum()),
        int((scores == 0.5).sum()),
        int((scores == 0).sum()),
    )


def pair_wins(model: Sequence[str], baseline: Sequence[str]) -> tuple[int, int]:
    """(pairs where `model` gets more twins right, pairs where `baseline` does), counted over
    matched runs: model[i] and baseline[i] are "1"/"0" strings of the same test sentences.

    Chapter 7.
    """
    if len(model) != len(baseline) or not model:
        raise ValueError("need the same number (at least one) of runs for both models")
    ahead = behind = 0
    for a, b in zip(model, baseline):
        if len(a) != len(b):
            raise ValueError("matched runs must score the same test sentences")
        diff = pair_scores(a) - pair_scores(b)  # (n_pairs,)
        ahead, behind = ahead + int((diff > 0).sum()), behind + int((diff < 0).sum())
    return ahead, behind


def sign_test(both_right: int, both_wrong: int) -> float:
    """Two-sided exact binomial p-value of both_wrong among both_right + both_wrong pairs
    against one half (1.0 when there is no such pair).

    Chapter 7.
    """
    if both_right < 0 or both_wrong < 0:
        raise ValueError("counts must be non-negative")
    n, k = both_right + both_wrong, min(both_right, both_wrong)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def bootstrap_interval(
    corrects: Sequence[str], n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile interval of the mean over runs of their test accuracy, resampling each
    run's test pairs with replacement (`n_boot` times, generator seeded by `seed`).

    Chapter 7.
    """
    if not corrects or not 0 < level < 1:
        raise ValueError("need at least one run and 0 < level < 1")
    rng = np.random.default_rng(seed)
    total = np.zeros(n_boot)
    for correct in corrects:
        scores = pair_scores(correct)  # (n_pairs,)
        draws = rng.integers(0, len(scores), size=(n_boot, len(scores)))
        total += scores[draws].mean(axis=1)
    means = total / len(corrects)  # (n_boot,)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def seed_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95 % t interval of the mean of one number per seed.

    Chapter 7.
    """
    values = list(values)
    if not 2 <= len(values) <= 10:
        raise ValueError(f"need 2 to 10 seeds, got {len(values)}")
    mean = statistics.mean(values)
    half = _T95[len(values) - 1] * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half
