"""Timing a call and reading a growth rate off the timings (chapters 2, 8 and 11,
benchmarks/).

`best_time(fn)` is the shortest wall-clock time of a few calls: the run least disturbed by
whatever else the machine was doing. `loglog_slope(xs, ys)` fits log y = a log x + b by
least squares and returns a, so y ~ x^a: about 1 for linear growth, 2 for quadratic.
`kernels_called(fn)` names the PyTorch operators a call runs (chapter 2: which attention
kernel the fused function dispatches to).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator

from torch.profiler import ProfilerActivity, profile

from ._checks import positive_int

__all__ = ["call_times", "best_time", "loglog_slope", "kernels_called"]


def call_times(
    fn: Callable[[], object],
    repeats: int = 3,
    warmup: bool = True,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Seconds of each of `repeats` calls of fn(), after one untimed warm-up call (first
    calls pay for lazy initialisation) unless `warmup` is False. `clock` is wall-clock time
    by default; `time.thread_time` counts only the time the calling thread ran, which on a
    busy machine leaves out the waits while other jobs had the core (single-threaded work).
    `best_time`'s timings (chapters 2, 8 and 11) and the benchmarks'."""
    if not callable(fn):
        raise TypeError(f"fn must be a callable, got {type(fn).__name__}")
    if not callable(clock):
        raise TypeError(f"clock must be a callable, got {type(clock).__name__}")
    positive_int("repeats", repeats)
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return times


def best_time(fn: Callable[[], object], repeats: int = 3, warmup: bool = True) -> float:
    """Shortest wall-clock time of fn() in seconds over `repeats` calls, after one untimed
    warm-up call (first calls pay for lazy initialisation) unless `warmup` is False
    (chapters 2, 8 and 11)."""
    return min(call_times(fn, repeats, warmup))


def loglog_slope(xs: Iterable[float], ys: Iterable[float]) -> float:
    """Least-squares slope of log(ys) against log(xs): the a of ys ~ xs^a. Needs at least
    two distinct, positive xs and positive ys of the same length (chapters 2 and 8)."""
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


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Points the process's file descriptor 2 at /dev/null: the profiler's C++ side writes
    start/stop notes there, which no Python redirection catches."""
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def kernels_called(fn: Callable[[], object]) -> list[str]:
    """Names of the PyTorch operators that run inside fn() on the CPU (chapter 2), in the
    order the profiler lists them, e.g. ['aten::scaled_dot_product_attention', ...]."""
    if not callable(fn):
        raise TypeError(f"fn must be a callable, got {type(fn).__name__}")
    with _quiet_stderr(), warnings.catch_warnings():
        # torch 2.11 warns that its profiler clears events at the end of each cycle
        warnings.filterwarnings("ignore", message=".*[Pp]rofiler clears events")
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn()
    return [event.key for event in prof.key_averages()]
