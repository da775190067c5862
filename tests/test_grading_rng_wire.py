"""The global random states cross the wire only where they changed (issue 46): a request
or a reply carries `wire.SAME_STATES` where the states are those both sides already hold,
and the semantics stay those of sending them every time. The child sets the named states
again (whatever moved them since), says SAME only where they are exactly those the request
named, and the grader sends SAME only where its own states are those the child last
reported; a child started again is sent them whole.

Cost: a few seconds (one child process)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from attnbook_grader import rng, wire
from attnbook_grader.rng import SAME_STATES, rng_states, set_rng_states
from attnbook.exercise_checks.rules import moved_states

DRAWS = {
    "torch": lambda: torch.rand(1),
    "numpy": np.random.rand,
    "random": random.random,
}


@pytest.fixture
def saved_states(monkeypatch):
    monkeypatch.setattr(rng, "_NAMED", [])
    saved = rng_states()
    yield
    set_rng_states(saved)


def _seed(n: int) -> None:
    torch.manual_seed(n)
    np.random.seed(n)
    random.seed(n)


@pytest.mark.usefixtures("saved_states")
def test_the_child_sets_the_named_states_again_and_says_same_only_where_exact():
    with pytest.raises(wire.WireError, match="none was sent yet"):
        rng.take_request_states(SAME_STATES)
    _seed(3)
    sent = rng_states()
    rng.take_request_states(wire.encode(sent))
    assert rng.reply_states() == SAME_STATES  # nothing drawn
    for what, draw in DRAWS.items():
        draw()  # something moved one generator since the last request
        rng.take_request_states(SAME_STATES)
        assert moved_states(sent, rng_states()) == []  # set again
        draw()  # the call draws: the reply carries the states, which SAME names next
        reported = rng.reply_states()
        assert reported != SAME_STATES
        after = wire.decode(reported)
        assert moved_states(sent, after) == [what]
        assert moved_states(after, rng_states()) == []
        rng.take_request_states(SAME_STATES)
        assert rng.reply_states() == SAME_STATES
        rng.take_request_states(wire.encode(sent))  # whole again: back to `sent`


def test_a_reply_saying_same_needs_no_states_and_others_must_be_whole():
    frame = {"seq": 1, "result": 1, "args_after": [], "kwargs_after": {"$d": []}}
    assert wire.checked_reply({**frame, "rng": SAME_STATES}, 1)["rng"] == SAME_STATES
    for bad in ("same", {"$d": []}, None):
        with pytest.raises(wire.WireError, match="rng"):
            wire.checked_reply({**frame, "rng": bad}, 1)


CELL = """import random
import numpy as np
import torch

def draw():
    return float(torch.rand(1)) + float(np.random.rand()) + random.random()

def still():
    return 1
"""


def _local_draw() -> float:
    return float(torch.rand(1)) + float(np.random.rand()) + random.random()


@pytest.mark.usefixtures("saved_states")
def test_calls_move_the_callers_states_as_before_with_same_crossing_where_unchanged():
    from attnbook_grader.session import Session

    _seed(1)
    local = [_local_draw(), _local_draw()]
    after_two = rng_states()
    session = Session([CELL], {}, 120)
    sent: list = []
    send = session._send

    def spy(message: dict) -> None:
        if message.get("op") == "call":
            sent.append(message["rng"])
        send(message)

    session._send = spy  # type: ignore[method-assign]
    try:
        _seed(1)
        assert session.call("draw", (), {}) == local[0]
        assert session.call("still", (), {}) == 1
        # from where the child left them
        assert session.call("draw", (), {}) == local[1]
        assert moved_states(after_two, rng_states()) == []  # the caller's moved as well
        _seed(1)  # the caller's own states changed: sent whole again
        assert session.call("draw", (), {}) == local[0]
        session.close()  # a child started again is sent them whole
        _seed(1)
        assert session.call("draw", (), {}) == local[0]
    finally:
        session.close()
    whole = [s != SAME_STATES for s in sent]
    assert whole == [True, False, False, True, True], sent
