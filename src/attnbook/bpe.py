"""A small byte-pair encoding (chapter 6): characters merged, most frequent pair first, into
longer tokens, to measure what subword tokens change against the tiny GPT's characters.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from operator import itemgetter

from ._checks import positive_int

__all__ = ["learn_bpe", "bpe_segment"]

# Pieces a merge never crosses: a word or number with its leading space, a run of other
# symbols with its leading space, a run of whitespace. (GPT-2 splits text the same way.)
_PIECES = re.compile(r" ?[^\W\d]\w*| ?\d+| ?[^\w\s]+|\s+")


def _merge(symbols: list[str], pair: tuple[str, str]) -> list[str]:
    """Replace every non-overlapping occurrence of `pair`, left to right, by one symbol."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def learn_bpe(text: str, num_merges: int) -> list[tuple[str, str]]:
    """Byte-pair encoding on characters (Sennrich et al., chapter 6): start from single
    characters and `num_merges` times merge the most frequent adjacent pair of symbols into a
    new one. Returns the merges in the order learned (fewer if no pair is left)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    positive_int("num_merges", num_merges, allow_zero=True)
    words = Counter(_PIECES.findall(text))  # each distinct piece once, with its count
    segments = [list(w) for w in words]
    freqs = list(words.values())
    pairs: Counter[tuple[str, str]] = Counter()
    # pair -> pieces holding it
    where: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
    for i, seg in enumerate(segments):
        for pair in zip(seg, seg[1:]):
            pairs[pair] += freqs[i]
            where[pair].add(i)
    merges: list[tuple[str, str]] = []
    while len(merges) < num_merges and pairs:
        best = max(pairs.items(), key=itemgetter(1))[0]  # ties: the pair counted first
        merges.append(best)
        for i in where.pop(best):
            old, new = segments[i], _merge(segments[i], best)
            for pair in zip(old, old[1:]):
                pairs[pair] -= freqs[i]
                if not pairs[pair]:
                    del pairs[pair]
            for pair in zip(new, new[1:]):
                pairs[pair] += freqs[i]
                where[pair].add(i)
            segments[i] = new
    return merges


def bpe_segment(text: str, merges: Sequence[tuple[str, str]]) -> list[str]:
    """Split `text` into BPE tokens: each piece starts as characters and the learned merges
    are applied in the order learned. "".join(tokens) == text.

    Chapter 6.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    rank = {tuple(pair): r for r, pair in enumerate(merges)}
    if any(len(pair) != 2 for pair in rank):
        raise ValueError("merges must be pairs of strings, as learn_bpe returns them")
    cache: dict[str, list[str]] = {}
    tokens: list[str] = []
    for piece in _PIECES.findall(text):
        if piece not in cache:
            symbols = list(piece)
            while len(symbols) > 1:
                first = min(
                    zip(symbols, symbols[1:]), key=lambda pr: rank.get(pr, len(rank))
                )
                if first not in rank:
                    break
                symbols = _merge(symbols, first)
            cache[piece] = symbols
        tokens.extend(cache[piece])
    return tokens
