"""The data design of chapter 7's study (`benchmarks/cars_study.py`): what each seed trains
and tests on, and the tuning data that no test set touches.

- `study_sentences(seed)`: the 264 pairs of one seed (seed 0 is the chapter's data set); every
  seed draws its own sentences, so the seeds resample the test items as well as the weights;
- `balanced_length_split(seed)`: train on sentences of at most `LENGTH_MAX_TRAIN` tokens, test
  on longer ones, the same number of pairs from every family on each side, drawn from a
  larger pool of the generator;
- `tuning_sentences()`: pairs for choosing learning rates, drawn with their own seed, with
  every pair that shares a sentence with any study seed's data removed;
- `prefixed_descriptions`: the offset test with real words (a neutral clause in front of the
  description), which every model can fail.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache

from .data import FAMILIES, Sentence, generate_pairs
from .vocab import tokenize

__all__ = [
    "STUDY_PAIRS",
    "STUDY_SEEDS",
    "LENGTH_MAX_TRAIN",
    "LENGTH_TRAIN_PAIRS",
    "LENGTH_TEST_PAIRS",
    "PREFIXES",
    "study_sentences",
    "length_pool",
    "balanced_length_split",
    "tuning_sentences",
    "prefixed_descriptions",
]

#: Pairs per seed, as in the chapter (and the tutorial it comes from).
STUDY_PAIRS = 264
#: The seeds the study may use; the tuning data avoids the sentences of all of them.
STUDY_SEEDS = tuple(range(5))
#: The length split: training sentences have at most this many tokens ...
LENGTH_MAX_TRAIN = 22
#: ... with this many pairs per family on the training side and on the test side.
LENGTH_TRAIN_PAIRS, LENGTH_TEST_PAIRS = 38, 10
#: Pairs in the pool the length split draws from (every family needs long pairs).
LENGTH_POOL_PAIRS = 1500
#: Generator seeds of the length pools (seed + offset) and of the tuning data.
_LENGTH_SEED_OFFSET, _TUNING_DATA_SEED = 1000, 2000
#: The offset test with real words: k -> a distractor clause of k tokens, other colours.
PREFIXES = {4: "beside a red truck", 8: "near a red bus and a blue van"}


def study_sentences(seed: int) -> list[Sentence]:
    """The `STUDY_PAIRS` pairs of one seed (`generate_pairs(264, seed)`) (chapter 7)."""
    return generate_pairs(STUDY_PAIRS, seed=seed)


def length_pool(seed: int) -> list[Sentence]:
    """The pool the length split of `seed` draws from (its own generator seed).

    Chapter 7.
    """
    return generate_pairs(LENGTH_POOL_PAIRS, seed=seed + _LENGTH_SEED_OFFSET)


def balanced_length_split(
    seed: int,
) -> tuple[list[Sentence], list[int], list[int]]:
    """(sentences, train, test): from `length_pool(seed)`, `LENGTH_TRAIN_PAIRS` pairs of every
    family with at most `LENGTH_MAX_TRAIN` tokens (train) and `LENGTH_TEST_PAIRS` pairs of
    every family with more (test), drawn with `seed`; `sentences` holds just those pairs, so
    train and test are indices into it. Both sides have every family in equal shares, and
    every test sentence is longer than every training sentence.

    Chapter 7.
    """
    pool = length_pool(seed)
    short: defaultdict[str, list[int]] = defaultdict(list)
    long_: defaultdict[str, list[int]] = defaultdict(list)
    for k in range(0, len(pool), 2):  # pairs are consecutive, twins of the same length
        n = len(tokenize(pool[k].text))
        (short if n <= LENGTH_MAX_TRAIN else long_)[pool[k].family].append(k)
    rng = random.Random(seed)
    train_starts, test_starts = [], []
    for family in FAMILIES:
        if len(long_[family]) < LENGTH_TEST_PAIRS:
            raise RuntimeError(f"the pool has too few long {family!r} pairs")
        train_starts += rng.sample(short[family], LENGTH_TRAIN_PAIRS)
        test_starts += rng.sample(long_[family], LENGTH_TEST_PAIRS)
    sentences = [pool[k + j] for k in train_starts + test_starts for j in (0, 1)]
    n_train = 2 * len(train_starts)
    return sentences, list(range(n_train)), list(range(n_train, len(sentences)))


def tuning_sentences(seeds: Iterable[int] = STUDY_SEEDS) -> list[Sentence]:
    """Pairs to tune learning rates on: `STUDY_PAIRS` pairs drawn with their own generator
    seed, less every pair with a sentence that also occurs in the data of any of `seeds`
    (`study_sentences` and `length_pool`), so no tuning sentence is any study test sentence.

    Chapter 7.
    """
    return list(_tuning_sentences(tuple(seeds)))


@lru_cache(maxsize=4)
def _tuning_sentences(seeds: tuple[int, ...]) -> tuple[Sentence, ...]:
    """`tuning_sentences`, computed once per set of seeds (Sentence is frozen)."""
    taken = {
        s.text for seed in seeds for s in study_sentences(seed) + length_pool(seed)
    }
    drawn = generate_pairs(STUDY_PAIRS, seed=_TUNING_DATA_SEED)
    clash = {s.pair for s in drawn if s.text in taken}
    return tuple(s for s in drawn if s.pair not in clash)


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def prefixed_descriptions(
    sentences: Sequence[Sentence], idx: Sequence[int], k: int
) -> tuple[list[str], list[str]]:
    """(bare, moved) texts of the sentences `idx`: the description alone, and the same
    description behind the neutral clause `PREFIXES[k]` (k real tokens, colours that are not
    the cars'), as a distractor placed "before" is in the data. Every word moves k places
    right and k tokens are added, so every model sees a different input and can change its
    answer; a model that reads the description wherever it stands does not.

    Chapter 7.
    """
    if k not in PREFIXES:
        raise ValueError(f"no prefix of {k} tokens; choose one of {sorted(PREFIXES)}")
    bare = [_sentence(sentences[i].description) for i in idx]
    moved = [_sentence(f"{PREFIXES[k]}, {sentences[i].description}") for i in idx]
    return bare, moved
