"""What the grading engine computes once and then reuses (`attnbook_grader.engine`): the
shortcut verdicts of one submission (`Judge`, per reading and rules), the reference's swaps
(`Exercise.swaps`, while the reference and its functions stay the same) and IPython's
rewriting of a cell (`source_rules._transform`). None may serve a verdict or a swap that
another source, other rules or another reference would not get.
Cost: well under a second (no grading runs here).
"""

from __future__ import annotations

from attnbook_grader import engine, source_rules

SETUP = "import numpy as np\nimport otter\nimport torch"
HONEST = "def softmax(s):\n    e = np.exp(s - s.max())\n    return e / e.sum()"
SHORTCUT = "def softmax(s):\n    return torch.softmax(s, -1)"
LOOPING = "def softmax(s):\n    return np.array([v for v in s])"
NO_TORCH = {"libraries": ["torch"]}


def _judge(cell: str) -> engine.Judge:
    return engine.Judge(source_rules.scan([SETUP, cell], trusted=[SETUP]), {})


def test_each_source_gets_its_own_verdict():
    honest, shortcut = _judge(HONEST), _judge(SHORTCUT)
    assert honest("softmax", NO_TORCH) is None
    found = shortcut("softmax", NO_TORCH)
    assert found is not None and "torch" in found
    assert honest("softmax", NO_TORCH) is None  # the first reading's, still
    assert shortcut("softmax", NO_TORCH) == found


def test_other_rules_or_another_function_are_decided_again():
    judge = _judge(LOOPING)
    assert judge("softmax", NO_TORCH) is None
    found = judge("softmax", {"libraries": ["torch"], "loops": False})
    assert found is not None and "loop" in found
    assert judge("softmax", {"loops": True}) is None
    assert judge("softmax", {"loops": 0}) is None  # 0 is not False: no loop rule
    assert judge("other", {"loops": False}) is None
    assert len(judge.verdicts) == 5


def test_rules_that_are_not_plain_data_are_read_each_time():
    judge = _judge(SHORTCUT)
    rules = {"libraries": ["torch"], "note": object()}
    assert judge("softmax", rules) == _judge(SHORTCUT)("softmax", NO_TORCH)
    assert judge.verdicts == {}


def test_the_key_of_the_rules_tells_every_two_values_apart():
    values = [
        {"loops": False},
        {"loops": 0},
        {"loops": None},
        {"libraries": ["torch"]},
        {"libraries": ("torch",)},
        {"libraries": {"torch"}},
        {"libraries": ["torch", "scipy"]},
        {"libraries": ["scipy", "torch"]},
        {"names": ["1"]},
        {"names": [1]},
        {"names": [1.0]},
        {"names": [True]},
    ]
    keys = [engine._frozen(v) for v in values]
    assert len(set(keys)) == len(values)
    assert engine._frozen({"a": 1, "b": [2]}) == engine._frozen({"b": [2], "a": 1})
    assert engine._frozen({"libraries": {"a", "b"}}) == engine._frozen(
        {"libraries": {"b", "a"}}
    )


def test_the_swaps_follow_a_changed_reference():
    reference = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {"tags": [engine.SOLUTION_TAG]},
                "source": "def f(x):\n    return x",
            },
            {"cell_type": "code", "metadata": {}, "source": 'grader.check("q1")'},
            {
                "cell_type": "code",
                "metadata": {"tags": [engine.SOLUTION_TAG]},
                "source": "def g(x):\n    return x",
            },
            {"cell_type": "code", "metadata": {}, "source": 'grader.check("q2")'},
        ]
    }
    exercise = engine.Exercise.load({}, reference)
    assert exercise.swaps() == {"f": [], "g": []}
    exercise.swaps()["g"].append("f")  # a caller's copy: the next answer is the same
    assert exercise.swaps() == {"f": [], "g": []}
    exercise.reference[2] = "def g(x):\n    return f(x)"
    assert exercise.swaps() == {"f": [], "g": ["f"]}
    exercise.functions["q2"] = set()
    assert exercise.swaps() == {"f": []}


def test_a_rewritten_cell_is_the_rewriting_of_its_own_text():
    assert source_rules._transform("%time x = 1\n") != source_rules._transform(
        "x = 1\n"
    )
    for source in ("x = 1\n", "%time x = 1\n", "!ls\ny = 2\n"):
        assert source_rules._transform(source) == source_rules._transform.__wrapped__(
            source
        )
