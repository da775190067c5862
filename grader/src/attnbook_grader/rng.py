"""The global random states that cross the wire with every call: PyTorch's,
NumPy's and Python's `random` module's, in that order (`attnbook.exercise_checks.rules`
takes them and names them, for the grader as for the public checks).

In a child that must not hold PyTorch (`torchless`), PyTorch's state is kept as it came, in
wire form, and sent back unchanged: nothing in that process can draw from it.

Where the states are those both sides already hold, `wire.SAME_STATES` crosses instead of them
(about half of what an ordinary call cost the child, issue 46): a request's means "the states
this process last took or reported", which the child sets again (`take_request_states`); a
reply's means "the states the request named", sent only where they equal them exactly
(`reply_states`). The grader sends it only where the states it would send equal those the
child last reported (`session.Session.call`), and forgets them whenever the child ends.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from attnbook.exercise_checks import rules
from attnbook_grader import wire
from attnbook_grader.torchless import has_torch, torch

__all__ = [
    "SAME_STATES",
    "rng_states",
    "set_rng_states",
    "take_request_states",
    "reply_states",
    "take_wire_states",
    "wire_states",
]
SAME_STATES = wire.SAME_STATES

_HELD: list[Any] = []  # PyTorch's state in wire form, where PyTorch is absent
# the child's: the states its last request or reply named (as `_raw` gives them)
_NAMED: list[Any] = []


def rng_states() -> dict[str, Any]:
    """The global random states of PyTorch, NumPy and Python's random module (PyTorch's:
    None where it is absent): the snapshot the public checks take (`rules.rng_states`)."""
    return rules.rng_states(with_torch=has_torch())


def set_rng_states(states: dict[str, Any]) -> None:
    if has_torch():
        torch.set_rng_state(states["torch"])
    np.random.set_state(states["numpy"])
    version, internal, gauss = states["random"]
    # an array's 625 numbers as Python ints in one step (int() of each NumPy scalar took
    # ~0.1 ms of the ~0.2 ms this costs on each side of every call)
    values = internal.tolist() if isinstance(internal, np.ndarray) else internal
    random.setstate((version, tuple(int(n) for n in values), gauss))


def take_wire_states(encoded: Any) -> None:
    """Set the states sent on the wire (`encode(rng_states())`); without PyTorch its state
    is held as sent, never decoded."""
    if has_torch():
        set_rng_states(wire.decode(encoded))
        return
    if not (isinstance(encoded, dict) and isinstance(encoded.get("$d"), list)):
        raise wire.WireError("random states must be a dict")
    pairs = [p for p in encoded["$d"] if isinstance(p, list) and len(p) == 2]
    _HELD[:] = [next((v for k, v in pairs if k == "torch"), None)]
    rest = {"$d": [p for p in pairs if p[0] != "torch"]}
    set_rng_states({"torch": None, **wire.decode(rest)})


def wire_states() -> Any:
    """The states now, in wire form (PyTorch's as it was last sent, where it is absent)."""
    encoded = wire.encode(rng_states())
    if not has_torch():
        encoded["$d"][0][1] = _HELD[0] if _HELD else None
    return encoded


def _raw() -> tuple[Any, Any, Any]:
    """The states now as the generators give them (no conversion): PyTorch's (in wire form,
    as held, where it is absent), NumPy's, Python's."""
    held = torch.get_rng_state() if has_torch() else (_HELD[0] if _HELD else None)
    return held, np.random.get_state(), random.getstate()


def _equal(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any]) -> bool:
    """Whether two `_raw` states are exactly the same."""
    if a[2] != b[2] or a[1][0] != b[1][0] or tuple(a[1][2:]) != tuple(b[1][2:]):
        return False
    if not np.array_equal(a[1][1], b[1][1]):
        return False
    if has_torch():
        return bool(torch.equal(a[0], b[0]))
    return bool(a[0] == b[0])


def take_request_states(encoded: Any) -> None:
    """Set the states a request names: sent (`take_wire_states`), or `SAME_STATES`, those
    this process last took or reported, set again (WireError where it has none)."""
    if encoded == SAME_STATES:
        if not _NAMED:
            raise wire.WireError("no random states to keep: none was sent yet")
        held, numpy_state, python_state = _NAMED[0]
        if has_torch():
            torch.set_rng_state(held)
        else:
            _HELD[:] = [held]
        np.random.set_state(numpy_state)
        random.setstate(python_state)
        return
    take_wire_states(encoded)
    _NAMED[:] = [_raw()]


def reply_states() -> Any:
    """The states after a request, for its reply: `SAME_STATES` where they are exactly those
    the request named, else in wire form (and then those a next request can name)."""
    now = _raw()
    if _NAMED and _equal(now, _NAMED[0]):
        return SAME_STATES
    _NAMED[:] = [now]
    return wire_states()
