"""The car sentences of chapter 7: phrasings, pairs, tokens (the train/test splits of
them: `attnbook.cars.splits`).

Every sentence describes a white car and a black car; its label is 1 when the white car is on
the left. Sentences come in *pairs* made of exactly the same words, one positive and one
negative, so a bag-of-words model sees both as the same input and scores exactly 50 % on them.

A phrasing is a pattern with slots: {L} / {R} the colours of the cars on the left / right,
{N} a noun ("car", "old sedan", ...), {V} a verb, {I} where a distractor clause may go inside.
Phrasings come in families (sides, relative, inverted, ordinal, followed-by, attribute).
Every phrasing names a side in words, so its mirror image (side words and {L}/{R} swapped)
describes the same scene. Labels are read off the scene, never off the words.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


from .vocab import bag_of_words, tokenize

__all__ = [
    "Sentence",
    "PHRASINGS",
    "FAMILIES",
    "COLOURS",
    "NOUNS",
    "ADJECTIVES",
    "VERBS",
    "DISTRACTOR_COLOURS",
    "DISTRACTORS",
    "WHERE",
    "render",
    "mirror_phrasing",
    "generate_pairs",
    "save_sentences",
    "load_sentences",
]

# family -> {phrasing name: pattern}. Inside a family the phrasings say the same thing in
# different words; across families the sentence shapes differ.
FAMILIES: dict[str, dict[str, str]] = {
    "sides": {
        "sides_and": "the {L} {N} {V} on the left{I} and the {R} {N} {V} on the right",
        "sides_fronted": "on the left{I} {V} a {L} {N} and on the right {V} a {R} {N}",
        "sides_there_is": "there is a {L} {N} on the left side{I} and a {R} {N} on the right side",
        "sides_end": "the {L} {N} {V} at the left end{I} while the {R} {N} {V} at the right end",
    },
    "relative": {
        "to_the_left_of": "the {L} {N}{I} {V} to the left of the {R} {N}",
        "left_of": "the {L} {N} {V}{I} left of the {R} {N}",
        "further_left": "the {L} {N}{I} {V} further left than the {R} {N}",
        "on_the_left_of": "a {L} {N}{I} {V} on the left of a {R} {N}",
    },
    "inverted": {
        "inv_to_the_left_of": "to the left of the {R} {N}{I} {V} the {L} {N}",
        "inv_left_of": "left of the {R} {N}{I} {V} a {L} {N}",
        "inv_you_see": "on the left of the {R} {N}{I} you can see the {L} {N}",
    },
    "ordinal": {
        "listed": "listed left to right{I} is a {L} {N} then a {R} {N}",
        "we_see": "from left to right{I} we see a {L} {N} and a {R} {N}",
        "going": "going from left to right there is a {L} {N}{I} and then a {R} {N}",
        "plural": "left to right{I} the {N}s are {L} and {R}",
    },
    "followed": {
        "followed_by": "from left to right a {L} {N}{I} is followed by a {R} {N}",
        "reading": "reading from left to right the {L} {N}{I} is followed by the {R} {N}",
        "comes_first": "left to right the {L} {N} comes first{I} and the {R} {N} comes second",
    },
    "attribute": {
        "the_one_on": "the {N} on the left is {L}{I} and the {N} on the right is {R}",
        "leftmost": "the leftmost {N}{I} is {L} and the rightmost {N} is {R}",
        "of_the_two": "the leftmost of the two {N}s is {L}{I} and the other one is {R}",
        "painted": "the left {N} is painted {L}{I} while the right {N} is painted {R}",
    },
}
PHRASINGS: dict[str, str] = {
    name: p for fam in FAMILIES.values() for name, p in fam.items()
}
FAMILY_OF: dict[str, str] = {name: fam for fam, ps in FAMILIES.items() for name in ps}
_SIDE_WORDS = {
    "left": "right",
    "right": "left",
    "leftmost": "rightmost",
    "rightmost": "leftmost",
}
COLOURS = ("white", "black")
NOUNS = ("car", "vehicle", "auto", "sedan", "hatchback", "coupe")
ADJECTIVES = ("", "small", "old", "new", "shiny", "little")  # "" = no adjective
VERBS = ("is", "sits", "stands", "waits", "is parked", "is placed", "rests")
DISTRACTOR_COLOURS = ("white", "black", "red", "blue", "grey")
# Clauses about other coloured objects; they change no label. One per pair at most, put
# before the description, inside it (at {I}) or after it.
DISTRACTORS = (
    "under a {D1} sky",
    "in front of a {D1} house with a {D2} door",
    "next to a {D1} wall and a {D2} fence",
    "on a {D1} road with {D2} lines",
    "beside a {D1} truck",
    "near a {D1} bus and a {D2} van",
    "within a {D1} frame and {D2} border",
    "behind a {D1} gate",
)
WHERE = ("none", "before", "inside", "after")


def mirror_phrasing(phrasing: str) -> str:
    """Side words swapped (left <-> right, leftmost <-> rightmost) and {L} <-> {R}: the same
    scene in other words.

    Chapter 7.
    """
    swapped = re.sub(
        r"\b(leftmost|rightmost|left|right)\b",
        lambda m: _SIDE_WORDS[m.group(1)],
        phrasing,
    )
    return swapped.replace("{L}", "{TMP}").replace("{R}", "{L}").replace("{TMP}", "{R}")


def _balanced(phrasing: str) -> bool:
    """True if the phrasing has as many 'left' words as 'right' words (its mirror then uses
    the same words)."""
    counts = Counter(re.sub(r"\{\w+\}", " ", phrasing).split())
    return all(counts[a] == counts[b] for a, b in _SIDE_WORDS.items())


def render(
    phrasing: str,
    left: str,
    right: str,
    *,
    noun: str = "car",
    verb: str = "is",
    distractor: str = "",
    where: str = "none",
    distractor_colours: tuple[str, str] = ("red", "blue"),
) -> tuple[str, str, int]:
    """The sentence for a scene (the car on the left is `left`, the one on the right `right`).

    Returns (text, description, start): the capitalised sentence with a full stop, the
    description alone (lowercase, no distractor) and the token index where it starts.

    Chapter 7.
    """
    if {left, right} != set(COLOURS):
        raise ValueError(
            f"a scene has one white and one black car, got left={left!r}, right={right!r}"
        )
    if where not in WHERE:
        raise ValueError(f"where must be one of {WHERE}, got {where!r}")
    clause = (
        distractor.format(D1=distractor_colours[0], D2=distractor_colours[1])
        if distractor
        else ""
    )
    if clause == "" and where != "none":
        raise ValueError(f"where={where!r} needs a distractor clause")
    fill = {"L": left, "R": right, "N": noun, "V": verb}
    description = phrasing.format(I="", **fill)
    text = phrasing.format(I=" " + clause if where == "inside" else "", **fill)
    if where == "before":
        text = f"{clause}, {text}"
    elif where == "after":
        text = f"{text}, {clause}"
    start = len(tokenize(clause)) if where == "before" else 0
    return text[0].upper() + text[1:] + ".", description, start


@dataclass(frozen=True)
class Sentence:
    """One labelled sentence: `left` is the colour of the car on the left (the scene) and
    `label` = int(left == "white"). `pair` numbers its pair; `phrasing` names the pattern
    ("/mirror": its mirror image) and `family` its family; `description` is the sentence
    without the distractor, `start` the token where the description begins, `where` the
    place of the distractor (one of `WHERE`).

    Chapter 7.
    """

    text: str
    label: int
    pair: int
    left: str
    phrasing: str
    family: str = ""
    description: str = ""
    start: int = 0
    where: str = "none"


def generate_pairs(
    n_pairs: int = 264,
    seed: int = 0,
    where_weights: tuple[float, float, float, float] = (0.2, 0.25, 0.25, 0.3),
) -> list[Sentence]:
    """`n_pairs` pairs of car sentences (chapter 7), reproducible for a given `seed`.

    Each pair (positive first) shares phrasing, noun, verb and distractor. Its second
    sentence swaps the two car colours or, for phrasings with as many "left" as "right",
    renders the mirrored scene with the mirror phrasing; either way both sentences hold the
    same words (checked). Phrasings take turns (equal shares); the distractor goes before,
    inside or after the description, or nowhere, with `where_weights`; no sentence repeats.
    """
    if not isinstance(n_pairs, int) or isinstance(n_pairs, bool) or n_pairs <= 0:
        raise ValueError(f"n_pairs must be a positive int, got {n_pairs!r}")
    if (
        len(where_weights) != len(WHERE)
        or min(where_weights) < 0
        or sum(where_weights) <= 0
    ):
        raise ValueError(
            f"where_weights must be {len(WHERE)} non-negative weights, got {where_weights!r}"
        )
    rng = random.Random(seed)
    names = sorted(PHRASINGS)
    schedule = (names * (n_pairs // len(names) + 1))[:n_pairs]  # equal shares ...
    rng.shuffle(schedule)  # ... in a seeded random order
    seen: set[str] = set()
    sentences: list[Sentence] = []
    for k, name in enumerate(schedule):
        for _ in range(1000):
            pair = _draw_pair(rng, name, where_weights, k)
            if not seen.intersection(s.text for s in pair):
                break
        else:
            raise RuntimeError(
                f"could not find {n_pairs} distinct pairs; ask for fewer"
            )
        seen.update(s.text for s in pair)
        sentences += pair
    return sentences


def _draw_pair(
    rng: random.Random, name: str, where_weights: Sequence[float], k: int
) -> list[Sentence]:
    """One (positive, negative) pair, number k, of phrasing `name` (or its mirror)."""
    phrasing = PHRASINGS[name]
    mirrored = rng.random() < 0.5
    if mirrored:
        phrasing = mirror_phrasing(phrasing)
    where = rng.choices(WHERE, weights=where_weights)[0]
    adjective, noun = rng.choice(ADJECTIVES), rng.choice(NOUNS)
    options: dict[str, Any] = dict(
        noun=f"{adjective} {noun}".strip(),
        verb=rng.choice(VERBS),
        where=where,
        distractor=rng.choice(DISTRACTORS) if where != "none" else "",
        distractor_colours=(
            rng.choice(DISTRACTOR_COLOURS),
            rng.choice(DISTRACTOR_COLOURS),
        ),
    )
    left = rng.choice(COLOURS)
    right = "black" if left == "white" else "white"
    scenes = [(phrasing, mirrored, left, right)]
    if _balanced(phrasing) and rng.random() < 0.5:
        # the mirrored scene in the mirror phrasing: only the side words move
        scenes.append((mirror_phrasing(phrasing), not mirrored, right, left))
    else:
        scenes.append((phrasing, mirrored, right, left))  # the car colours swapped
    pair = []
    for p, is_mirror, lft, rgt in scenes:
        text, description, start = render(p, lft, rgt, **options)
        pair.append(
            Sentence(
                text,
                int(lft == "white"),
                k,
                lft,
                name + ("/mirror" if is_mirror else ""),
                FAMILY_OF[name],
                description,
                start,
                where,
            )
        )
    # a bug in a phrasing, not luck
    if bag_of_words(pair[0].text) != bag_of_words(pair[1].text):
        raise AssertionError(
            f"pair is not bag-of-words identical: {pair[0].text!r} / {pair[1].text!r}"
        )
    return sorted(pair, key=lambda s: -s.label)  # positive first


def save_sentences(sentences: Sequence[Sentence], path: str | Path) -> None:
    """Write the sentences to a JSON file (a list of objects, one per sentence).

    Chapter 7.
    """
    Path(path).write_text(json.dumps([asdict(s) for s in sentences], indent=1) + "\n")


def load_sentences(path: str | Path) -> list[Sentence]:
    """Read sentences written by `save_sentences`; a clear error for anything else.

    Chapter 7.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no sentence file at {path.name!r}")
    try:
        return [Sentence(**item) for item in json.loads(path.read_text())]
    except (json.JSONDecodeError, TypeError) as err:
        raise ValueError(
            f"{path.name} is not a sentence file written by save_sentences: {err}"
        ) from None
