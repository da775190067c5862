"""attnbook.timing: the best of a few timings, and the log-log slope of a growth curve."""

import math

import pytest

from attnbook.timing import best_time, loglog_slope


def test_best_time_is_the_shortest_of_the_timed_calls_after_a_warm_up():
    calls = []
    seconds = best_time(lambda: calls.append(1), repeats=4)
    # how long is the machine's business, not the gate's
    assert len(calls) == 5 and seconds >= 0
    calls.clear()
    best_time(lambda: calls.append(1), repeats=2, warmup=False)
    assert len(calls) == 2


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0, 3.0])
def test_the_slope_of_a_power_law_is_its_exponent(power):
    xs = [128, 256, 512, 1024, 4096]
    assert loglog_slope(xs, [7.0 * x**power for x in xs]) == pytest.approx(
        power, abs=1e-12
    )


def test_the_slope_is_the_least_squares_fit():
    # not a power law: the fitted line through the logs
    xs, ys = [1, 2, 4], [1.0, 3.0, 4.0]
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / 3, sum(ly) / 3
    expected = sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum(
        (a - mx) ** 2 for a in lx
    )
    assert loglog_slope(xs, ys) == pytest.approx(expected) and 0.9 < expected < 1.1


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: best_time("f"), TypeError, "fn must be a callable"),
        (
            lambda: best_time(lambda: None, repeats=0),
            ValueError,
            "repeats must be a positive int",
        ),
        (lambda: loglog_slope([1, 2], [1.0]), ValueError, "same length"),
        (lambda: loglog_slope([0, 2], [1.0, 2.0]), ValueError, "must be positive"),
        (lambda: loglog_slope([3, 3], [1.0, 2.0]), ValueError, "two distinct values"),
    ],
)
def test_bad_input_gets_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_kernels_called_names_the_operators_and_keeps_stderr_quiet(capfd):
    import torch

    from attnbook.timing import kernels_called

    a = torch.ones(3, 3)
    names = kernels_called(lambda: a @ a)
    assert any("mm" in name for name in names), names
    assert capfd.readouterr().err == ""
    with pytest.raises(TypeError, match="fn must be a callable"):
        kernels_called(a)


def test_call_times_gives_one_time_per_call_after_the_warm_up():
    from attnbook.timing import call_times

    calls = []
    times = call_times(lambda: calls.append(1), repeats=3)
    assert len(times) == 3 and len(calls) == 4 and min(times) >= 0
    assert len(call_times(lambda: calls.append(1), 2, warmup=False)) == 2
    with pytest.raises(ValueError, match="repeats"):
        call_times(lambda: None, 0)


def test_call_times_reads_the_clock_it_is_given():
    from attnbook.timing import call_times

    ticks = iter(range(0, 100, 5))  # a fake clock: each reading 5 s after the last
    assert call_times(lambda: None, 3, clock=lambda: next(ticks)) == [5, 5, 5]
    with pytest.raises(TypeError, match="clock"):
        call_times(lambda: None, 3, clock=5)
