"""The global random states that cross the wire with every call: PyTorch's,
NumPy's and Python's `random` module's, in that order (`attnbook.exercise_checks.rules`
takes them and names them, for the grader as for the public checks).

In a child that must not hold PyTorch (`torchless`), PyTorch's state is kept as it came, in
wire form, and sent back unchanged: nothing in that process can draw from it.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from attnbook.exercise_checks import rules
from attnbook_grader import wire
from attnbook_grader.torchless import has_torch, torch

__all__ = ["rng_states", "set_rng_states", "take_wire_states", "wire_states"]

_HELD: list[Any] = []  # PyTorch's state in wire form, where PyTorch is absent


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
