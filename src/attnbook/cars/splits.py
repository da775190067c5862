"""The three train/test splits of chapter 7's car sentences (`attnbook.cars.data`):
random pairs (in distribution), held-out phrasings, shifted positions; and how much of a
test set's wording the training set already holds.

No pair is ever on both sides of a split: its two sentences are made of the same words.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from .data import FAMILIES, PHRASINGS, Sentence

__all__ = ["split_pairs", "SPLITS", "make_split", "overlap_share"]


def split_pairs(
    pair_ids: Sequence[int], test_fraction: float = 0.2, seed: int = 0
) -> tuple[list[int], list[int]]:
    """Sentence indices (train, test) with no pair on both sides: round(test_fraction x
    pairs) pairs, drawn with `seed`, go to the test set (chapter 7)."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    pairs = sorted({int(p) for p in pair_ids})
    if len(pairs) < 2:
        raise ValueError(f"need at least two pairs to split, got {len(pairs)}")
    # both sides non-empty
    n_test = min(max(round(test_fraction * len(pairs)), 1), len(pairs) - 1)
    test_pairs = set(random.Random(seed).sample(pairs, n_test))
    train = [i for i, p in enumerate(pair_ids) if int(p) not in test_pairs]
    test = [i for i, p in enumerate(pair_ids) if int(p) in test_pairs]
    return train, test


SPLITS = ("random pairs", "held-out phrasings", "shifted positions")


def make_split(
    kind: str,
    sentences: Sequence[Sentence],
    seed: int = 0,
    test_fraction: float = 0.2,
    held_out: Sequence[str] | None = None,
) -> tuple[list[int], list[int]]:
    """(train, test) sentence indices for one of the three splits of chapter 7 (`SPLITS`).

    - "random pairs": `split_pairs` (in distribution).
    - "held-out phrasings": every sentence of the phrasings `held_out` (a phrasing and its
      mirror, or a family name for the whole family) is a test sentence; by default
      round(test_fraction x number of phrasings) phrasings drawn with `seed`.
    - "shifted positions": training sentences all start with their description (no
      distractor before it); the test set is a random `test_fraction` of the pairs whose
      description starts later, after a distractor clause.
    """
    if kind == "random pairs":
        return split_pairs([s.pair for s in sentences], test_fraction, seed)
    if kind == "held-out phrasings":
        if held_out is None:
            names = sorted({s.phrasing.split("/")[0] for s in sentences})
            held_out = random.Random(seed).sample(
                names, max(1, round(test_fraction * len(names)))
            )
        unknown = set(held_out) - set(PHRASINGS) - set(FAMILIES)
        if unknown:
            raise ValueError(
                f"unknown phrasings or families to hold out: {sorted(unknown)}"
            )
        out = set(held_out)
        test = [
            i
            for i, s in enumerate(sentences)
            if s.phrasing.split("/")[0] in out or s.family in out
        ]
        train = [i for i, s in enumerate(sentences) if i not in set(test)]
    elif kind == "shifted positions":
        late = sorted({s.pair for s in sentences if s.start > 0})
        n_test = round(test_fraction * len({s.pair for s in sentences}))
        test_pairs = set(random.Random(seed).sample(late, min(n_test, len(late))))
        test = [i for i, s in enumerate(sentences) if s.pair in test_pairs]
        train = [i for i, s in enumerate(sentences) if s.start == 0]
    else:
        raise ValueError(f"unknown split {kind!r}; choose one of {SPLITS}")
    if not train or not test:
        raise ValueError(
            f"the {kind!r} split left an empty side ({len(train)} train, {len(test)} test)"
        )
    return train, test


def overlap_share(
    sentences: Sequence[Sentence], train_idx: Iterable[int], test_idx: Iterable[int]
) -> float:
    """Share of the test sentences whose description (distractor stripped) also occurs,
    word for word, among the training descriptions.

    Chapter 7.
    """
    seen = {sentences[i].description for i in train_idx}
    test = [sentences[i].description for i in test_idx]
    return sum(d in seen for d in test) / len(test)
