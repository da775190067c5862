"""A call of a submission's function under the profiler watcher, in the
process that runs the submission (`sandbox`): the watcher's finding is a second opinion the
grader can use to take points away, never to give them.
"""

from __future__ import annotations

import sys
from typing import Any

from attnbook.exercise_checks.rules import PROFILER_REPLACED
from attnbook.exercise_checks.watch import Watcher

__all__ = ["as_called", "labelled", "watched"]


def labelled(fn: Any, args: list, kwargs: dict) -> dict[str, Any]:
    """The inputs of a call by parameter name (or "argument i")."""
    import inspect

    try:
        bound = dict(inspect.signature(fn).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        bound = {}
    return bound or {f"argument {i + 1}": a for i, a in enumerate(args)}


def as_called(own: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments of a call of the submission's own function `own`, its defaults filled
    in: the reference that stands in for it (`sandbox`'s swaps) is called as the student's
    code calls its own version, even where the reference has no such default."""
    import inspect

    try:
        bound = inspect.signature(own).bind(*args, **kwargs)
    except (TypeError, ValueError):  # not a function, or a call it refuses: as it is
        return tuple(args), dict(kwargs)
    bound.apply_defaults()
    return tuple(bound.args), dict(bound.kwargs)


def watched(fn: Any, rules: dict, args: list, kwargs: dict) -> tuple[Any, str]:
    """fn(*args, **kwargs) under the profiler watcher (a second opinion): (result, finding),
    the finding "" when the watcher saw nothing. A function that replaced the watcher (called
    sys.setprofile) fails with `rules.PROFILER_REPLACED`, the public checks' message."""
    watcher = Watcher(
        rules.get("libraries", ()),
        rules.get("names", ()),
        bool(rules.get("allow_attnbook")),
    )
    previous = sys.getprofile()
    sys.setprofile(watcher)
    try:
        result = fn(*args, **kwargs)
    finally:
        replaced = sys.getprofile() is not watcher
        sys.setprofile(previous)
    if watcher.found:
        return result, watcher.found[0]
    if replaced:  # the call fails as `grading.guarded` fails it, with the same message
        raise AssertionError(PROFILER_REPLACED)
    return result, ""
