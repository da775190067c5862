"""Timing a call and reading a growth rate off the timings (chapters 2 and 8, benchmarks/).

`best_time(fn)` is the shortest wall-clock time of a few calls: the run least disturbed by
whatever else the machine was doing. `loglog_slope(xs, ys)` fits log y = a log x + b by
least squares and returns a, so y ~ x^a: about 1 for linear growth, 2 for quadratic.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable

from ._checks import positive_int

__all__ = ["best_time", "loglog_slope"]


def best_time(fn: Callable[[], object], repeats: int = 3, warmup: bool = True) -> float:
    """Shortest wall-clock time of fn() in seconds over `repeats` calls, after one untimed
    warm-up call (first calls pay for lazy initialisation) unless `warmup` is False."""
    if not callable(fn):
        raise TypeError(f"fn must be a callable, got {type(fn).__name__}")
    positive_int("repeats", repeats)
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def loglog_slope(xs: Iterable[float], ys: Iterable[float]) -> float:
    """Least-squares slope of log(ys) against log(xs): the a of ys ~ xs^a. Needs at least
    two distinct, positive xs and positive ys of the same length."""
    xs, ys = [float(x) for x in xs], [float(y) for y in ys]
    if len(xs) != len(ys):
        raise ValueError(
            f"xs and ys must have the same length, got {len(xs)} and {len(ys)}"
        )
    if min(xs + ys, default=0.0) <= 0:
        raise ValueError("xs and ys must be positive (their logarithms are fitted)")
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    spread = sum((a - mx) ** 2 for a in lx)
    if spread == 0:
        raise ValueError("xs must hold at least two distinct values")
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / spread
