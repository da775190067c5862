"""Python's cycle collector in the test suite's and the grading tools' long-lived processes.

A full collection walks every container object the process holds. After `import torch` that
is some 260,000 objects (PyTorch's modules, NumPy's, pytest's, otter's) that live as long as
the process, and a pytest run adds more with every module its tests import. Measured
with `gc.callbacks` on a 2-core machine: the collector took 13.8 s of the 109 s of CPU of
`make unit-package`'s pytest process and 12.6 s of the 70 s of `make unit-grading`'s (11.1 s of
it in 19 full collections), 4.5 s of each proof worker's ~125 s. With the survivors of each full
collection frozen (`freeze_survivors`, the pytest runs through the root conftest and the proof
workers): 3.6-4.2 s and 2.0 s for the two pytest processes. `gc.freeze` moves the objects alive
now to a generation no collection walks; they are never freed before the process ends, which for
objects alive through a full collection is what happens to almost all of them anyway. (Nor does
`gc.get_referrers` search them: the root conftest silences the one warning that misleads.)
"""

from __future__ import annotations

import gc
from typing import Any

__all__ = ["freeze_now", "freeze_survivors"]


def freeze_now() -> None:
    """Leave every object alive now out of later collections (after a process's imports)."""
    gc.freeze()


def _after_collection(phase: str, info: dict[str, Any]) -> None:
    # a full collection has just freed every unreachable cycle: what is left is alive
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


def freeze_survivors() -> None:
    """`freeze_now`, and from now on the survivors of every full collection too (for a
    pytest run: the objects of a test module alive through one are kept until the run ends,
    at the cost of the cycles among them that die later)."""
    gc.freeze()
    if _after_collection not in gc.callbacks:
        gc.callbacks.append(_after_collection)
