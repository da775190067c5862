"""One wording of each house rule (issue 49, item 4): the same breaking function, run
through `grading.guarded` in this process (what a public check does on a student's machine)
and through the grading engine's call into a submission's process (what a hidden test does
while grading), fails with the same message; a function that keeps the rules passes both.

Cost: about a second where another grading test of the run has started the process server
(as in `make unit-package`: 0.3 s to start the session, milliseconds a call); alone, the
server's start adds ~15 s on a loaded 2-core machine.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from attnbook.exercise_checks import rules
from attnbook.exercise_checks.grading import guarded

CELL = """\
import random
import sys
import numpy as np
import torch

_TABLE = np.arange(4.0)

def writes_its_input(x):
    x += 1
    return x * 2

def seeds_numpy(x):
    np.random.seed(0)  # the caller's state is not seed 0's (the test makes sure)
    return x + 1

def draws_from_random(x):
    return x + random.random()

def draws_from_torch(x):
    return x + torch.rand(x.shape, dtype=x.dtype)

def returns_its_input(x):
    return x

def returns_its_list(xs):
    return xs

def returns_all_of_it_as_a_view(x):
    return x[:]

def returns_part_of_it_as_a_view(x):
    return x[1:]

def returns_its_table(x):
    return _TABLE

def calls_softmax(x):
    return torch.softmax(x, dim=-1)

def replaces_the_profiler(x):
    sys.setprofile(None)
    return x * 2

def keeps_the_rules(x):
    return x * 2
"""

# (function, rules, number of calls): the message the last call fails with, on both sides
CASES = [
    ("writes_its_input", {}, 1),
    ("seeds_numpy", {}, 1),
    ("draws_from_random", {}, 1),
    ("draws_from_torch", {}, 1),
    ("draws_from_torch", {"global_torch_rng": True}, 1),
    ("returns_its_input", {}, 1),
    ("returns_its_list", {}, 1),  # called with a list (ARGUMENT)
    ("returns_all_of_it_as_a_view", {}, 1),
    ("returns_part_of_it_as_a_view", {}, 1),
    ("returns_part_of_it_as_a_view", {"no_views": True}, 1),
    ("returns_its_table", {"separate_results": True}, 2),
    ("calls_softmax", {"names": ("softmax",)}, 1),
    ("replaces_the_profiler", {}, 1),
    ("keeps_the_rules", {"no_views": True, "separate_results": True}, 2),
]


# what a case is called with, where not torch.arange(4.0): a list is an input too
ARGUMENT = {"returns_its_list": lambda _: [1.0, 2.0]}


@pytest.fixture(scope="module")
def session():
    from attnbook_grader.session import Session

    opened = Session([CELL], {}, 120)
    yield opened
    opened.close()


def _message(fn, how: dict, calls: int, argument=torch.arange) -> str | None:
    """The message the `calls`-th call of `guarded(fn, **how)` fails with, or None."""
    wrapped = guarded(fn, **how)
    try:
        for _ in range(calls):
            wrapped(argument(4.0))
    except AssertionError as err:
        return str(err)
    return None


def _reseed(seed: int) -> None:
    torch.manual_seed(seed), np.random.seed(seed), random.seed(seed)


@pytest.mark.parametrize(("name", "how", "calls"), CASES)
def test_a_rule_reads_the_same_in_the_public_check_and_in_the_grade(
    session, name, how, calls
):
    from attnbook_grader.session import RemoteFunction

    namespace: dict = {}
    exec(compile(CELL, "<cell>", "exec"), namespace)
    argument = ARGUMENT.get(name, torch.arange)
    _reseed(1)
    local = _message(namespace[name], how, calls, argument)
    _reseed(2)
    remote = _message(RemoteFunction(session, name), how, calls, argument)
    assert local == remote, f"public check: {local!r}\ngrader: {remote!r}"
    keeps = (
        name == "keeps_the_rules"
        or (name == "draws_from_torch" and how.get("global_torch_rng"))
        or (name == "returns_part_of_it_as_a_view" and not how)
    )
    assert (local is None) == keeps, local  # each breaking case is caught
    if name == "replaces_the_profiler":
        assert local == rules.PROFILER_REPLACED
    if name == "returns_its_list":  # the list itself, as a tensor would be
        assert local == rules.returned_input("xs")


def test_the_random_states_are_named_and_compared_once():
    """Each global generator is seen moving, by its key of `RNG_NAMES`, in the order the
    wire carries them; a state that came back unchanged is not called moved."""
    saved = np.random.get_state()
    np.random.seed(0)  # mid-block after one draw: the next moves NumPy's position only
    np.random.rand()
    before = rules.rng_states()
    assert list(before) == list(rules.RNG_NAMES) == ["torch", "numpy", "random"]
    assert rules.moved_states(before, rules.rng_states()) == []
    torch.rand(1), np.random.rand(), random.random()
    assert rules.moved_states(before, rules.rng_states()) == [
        "torch",
        "numpy",
        "random",
    ]
    assert rules.rng_states(with_torch=False)["torch"] is None
    np.random.set_state(saved)
    for what in rules.RNG_NAMES:
        assert rules.RNG_NAMES[what] in rules.moved_state(what)
