"""Exercise 7's pool of variants (`tools.exercise_pools` merges it into its `POOLS`;
`tools.exercise_variants` says what a pool holds).

What question 3's split holds out (the book's: single phrasings, drawn at random). The
roster's tasks are the chapter's two other held-out-phrasing designs: a phrasing together with
its mirror image (ids such as "2" and "2/mirror", the twins of a pair possibly one in each:
`attnbook.cars.splits.make_split`'s held-out phrasings), or a whole family of phrasings
(`split_by_phrasing(pair_ids, phrasing_ids, family_of, test_fraction, seed)`, the study's
held-out families). The parameter is a seed: the example's data (which twins are mirrored) and
the seeds the checks draw with. The reference's rewrite inserts one line inside the answer
(each sentence's unit), so every mistake of the book's answer reads the same at every task.
Questions 1, 2 and 4 are the same at every variant.
"""

from __future__ import annotations

from typing import Any

_INTRO = "in yours, **single phrasings, drawn at random**."
_INTRO_MIRROR = (
    "in yours, **a phrasing together with its mirror image, drawn at random**."
)
_INTRO_FAMILY = "in yours, **whole families of phrasings, drawn at random**."
_DATA_TEXT = "`phrasing_ids[i]` its phrasing."
_LOOP = """for pair in range(20):
    phrasing, other = pair % 5, colours[pair % 4]
    for label, (a, b) in ((1, ("white", other)), (0, (other, "white"))):
        sentences.append((pair, phrasing, phrasings[phrasing].format(a=a, b=b), label))
"""
_IDS = """phrasing_ids = [s[1] for s in sentences]
n_pairs, n_phrasings = len(set(pair_ids)), len(set(phrasing_ids))
"""
_MIRROR_LOOP = """rng = np.random.default_rng(VARIANT["seed"])  # your variant's seed: which twins are mirrored
swap = {"left": "right", "right": "left", "Left": "Right", "Right": "Left"}
for pair in range(20):
    phrasing, other = pair % 5, colours[pair % 4]
    mirrored = phrasing < 3 and bool(rng.integers(2))  # phrasings 0-2 name both sides
    for label, (a, b) in ((1, ("white", other)), (0, (other, "white"))):
        text, name = phrasings[phrasing].format(a=a, b=b), str(phrasing)
        if mirrored and label == 0:  # the mirror image: the same words, left and right swapped
            text = phrasings[phrasing].format(a=b, b=a)  # the positive twin's words ...
            text = re.sub("[Ll]eft|[Rr]ight", lambda m: swap[m.group()], text)  # ... mirrored
            name = f"{phrasing}/mirror"
        sentences.append((pair, name, text, label))
"""
_Q3 = """Write `split_by_phrasing(pair_ids, phrasing_ids, test_fraction, seed)`. Like `split_pairs` it
returns `(train, test)`, two increasing lists of sentence indices that together hold every
index once, and the unit it holds out is **a phrasing**:

- **no phrasing is on both sides**: every sentence of a held-out phrasing is in `test`, every
  other sentence in `train`; the twins of a pair then stay together, since they share a
  phrasing;
- `test` holds `round(test_fraction * n_phrasings)` whole phrasings (`n_phrasings` = the number
  of distinct values in `phrasing_ids`), chosen at random with `np.random.default_rng(seed)`
  from the distinct phrasing ids in sorted order (as in question 1, its `choice` or its `permutation`: every set of phrasings
  can come out, and the split is the same in every run of Python);
- a pair whose sentences have **different** phrasings cannot be split this way: raise a
  `ValueError` that names the pair.
"""
_Q3_MIRROR = """Write `split_by_phrasing(pair_ids, phrasing_ids, test_fraction, seed)`. Like `split_pairs` it
returns `(train, test)`, two increasing lists of sentence indices that together hold every
index once. In your data, as in the chapter's, a phrasing id is a string, and a sentence may be
written in the **mirror image** of its phrasing ("left" and "right" swapped, and the cars too,
so that it holds the same words): its id is its phrasing's followed by `"/mirror"` (`"2"` and
`"2/mirror"`), and the twins of a pair may be one in each. A held-out phrasing takes its mirror
image with it (the chapter's split does), so the unit your split holds out is **a phrasing with
its mirror**, named by the part of the id before the `"/"`:

- **no unit is on both sides**: every sentence of a held-out phrasing or of its mirror image is
  in `test`, every other sentence in `train`;
- `test` holds `round(test_fraction * n_units)` whole units (`n_units` = the number of distinct
  phrasings, each mirror counted with its phrasing), chosen at random with
  `np.random.default_rng(seed)` from the distinct units in sorted order (as in question 1, its
  `choice` or its `permutation`: every set of units can come out, and the split is the same in
  every run of Python);
- a pair whose sentences belong to **different** units (a phrasing and its own mirror image are
  one unit) cannot be split this way: raise a `ValueError` that names the pair.
"""
_Q3_FAMILY = """Write `split_by_phrasing(pair_ids, phrasing_ids, family_of, test_fraction, seed)`. Like
`split_pairs` it returns `(train, test)`, two increasing lists of sentence indices that
together hold every index once. Chapter 7's study holds out a whole **family** of phrasings at
a time (phrasings that describe the scene the same way in other words, such as "on the left
... on the right" and "on the left stands ..., on the right ..."): `family_of`, a dict, maps
every phrasing id to the name of its family (a string), and the unit your split holds out is
**a family**:

- **no family is on both sides**: every sentence whose phrasing belongs to a held-out family is
  in `test`, every other sentence in `train`;
- `test` holds `round(test_fraction * n_families)` whole families, where `n_families` counts the
  distinct families **of the sentences' phrasings** (`family_of` may also name phrasings that no
  sentence is written in: their families are not drawn), chosen at random with
  `np.random.default_rng(seed)` from those family names in sorted order (as in question 1, its
  `choice` or its `permutation`: every set of families can come out, and the split is the same
  in every run of Python);
- a pair whose sentences belong to **different** families cannot be split this way: raise a
  `ValueError` that names the pair.
"""
_DEF3 = "def split_by_phrasing(pair_ids, phrasing_ids, test_fraction, seed):"
_FIRST = "    phrasing_of_pair = {}\n"  # the answer's first line: each task's unit follows it
_TRY = "train, test = split_by_phrasing(pair_ids, phrasing_ids, 0.4, 0)\n"
_SHARED = (
    "shared = {phrasing_ids[i] for i in train} & {phrasing_ids[i] for i in test}\n"
)
_PARAMS = {"seed": [1, 999_999]}  # the example's data and the checks' seeds

POOL_EX07: dict[str, Any] = {
    "exercise": "ex07_cars",
    # the book's notebook and worked solutions: single phrasings held out, seed 0
    "reserved": {"task": "phrasing", "seed": 0},
    "roster": ["mirror", "family"],
    "questions": ["q3"],
    "tasks": {
        "phrasing": {"edits": [], "params": {"seed": [0, 0]}},
        "mirror": {
            "edits": [
                [_INTRO, _INTRO_MIRROR],
                [
                    _DATA_TEXT,
                    _DATA_TEXT
                    + " Some second twins are written in the mirror image of\n"
                    'their phrasing, with "left" and "right" swapped: their phrasing id ends '
                    'in `"/mirror"`.',
                ],
                ["phrasings = [\n", "import re\n\nphrasings = [\n"],
                [_LOOP, _MIRROR_LOOP],
                [
                    _IDS,
                    'phrasing_ids = [s[1] for s in sentences]  # strings: "2", or '
                    '"2/mirror" for its mirror image\n'
                    "n_pairs = len(set(pair_ids))\n"
                    'n_phrasings = len({f.split("/")[0] for f in phrasing_ids})  # with '
                    "their mirrors\n",
                ],
                [_Q3, _Q3_MIRROR],
                [
                    _FIRST,
                    _FIRST + '    phrasing_ids = [str(f).split("/")[0] for f in '
                    "phrasing_ids]  # a phrasing with its mirror\n",
                ],
                [
                    _SHARED,
                    'shared = {phrasing_ids[i].split("/")[0] for i in train} & '
                    '{phrasing_ids[i].split("/")[0] for i in test}\n',
                ],
            ],
            "params": _PARAMS,
        },
        "family": {
            "edits": [
                [_INTRO, _INTRO_FAMILY],
                [
                    _DATA_TEXT,
                    _DATA_TEXT + " `family_of` maps each phrasing to its family.",
                ],
                [
                    _IDS,
                    _IDS
                    + "# the family of each phrasing: the chapter's study holds out "
                    "whole families\n"
                    'family_of = {0: "sides", 1: "sides", 2: "sequence", 3: "relative", '
                    '4: "relative"}\n',
                ],
                [_Q3, _Q3_FAMILY],
                [
                    _DEF3,
                    "def split_by_phrasing(pair_ids, phrasing_ids, family_of, "
                    "test_fraction, seed):",
                ],
                [
                    _FIRST,
                    _FIRST + "    phrasing_ids = [family_of[f] for f in phrasing_ids]  "
                    "# each sentence's family\n",
                ],
                [
                    _TRY,
                    "train, test = split_by_phrasing(pair_ids, phrasing_ids, family_of, "
                    "0.4, 0)\n",
                ],
                [
                    _SHARED,
                    "shared = {family_of[phrasing_ids[i]] for i in train} & "
                    "{family_of[phrasing_ids[i]] for i in test}\n",
                ],
            ],
            "params": _PARAMS,
        },
    },
}
