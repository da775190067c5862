"""Helpers for the chapters' notebooks (every chapter; first used in chapter 1).

``agree`` prints a verdict against a tolerance instead of a rounding error, and
``expect_error`` runs a block that is *meant* to fail and prints the error the way a reader
needs it: the exception's type and message on a line or two, with no traceback and no file
paths of the machine that ran the notebook. If the block does not raise, it fails loudly, so
a demonstration of bad input can never silently stop demonstrating anything.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["agree", "bound", "expect_error", "glue"]


@contextmanager
def expect_error(*expected: type[BaseException], width: int = 88) -> Iterator[None]:
    """Run the ``with`` block, which must raise one of ``expected`` (default: any Exception).

    Prints ``TypeName: message``, wrapped to ``width`` characters. Raises ``AssertionError``
    if the block finishes without an error; an exception of another type propagates.

    Chapters 3-9.
    """
    if width < 20:
        raise ValueError(f"width must be at least 20 characters, got {width}")
    kinds = expected or (Exception,)
    try:
        yield
    except kinds as err:
        line = f"{type(err).__name__}: {err}"
        print(textwrap.fill(line, width=width, subsequent_indent="    "))
    else:
        names = " or ".join(k.__name__ for k in kinds)
        raise AssertionError(
            f"the block was expected to raise {names}, but it ran without error"
        )


def agree(label: str, actual, expected, atol: float) -> bool:
    """Print and return whether two arrays (NumPy or torch) agree within ``atol``.

    The printed line is a verdict against a stated tolerance — ``label: largest difference
    below 1e-06`` — never the difference itself, whose last digits depend on the CPU's
    kernels, the thread count and the library versions. On a failure the difference is
    printed, so ``assert agree(...)`` explains itself.

    Every chapter.
    """
    import numpy as np

    a = (
        actual.detach().cpu().numpy()
        if hasattr(actual, "detach")
        else np.asarray(actual)
    )
    b = (
        expected.detach().cpu().numpy()
        if hasattr(expected, "detach")
        else np.asarray(expected)
    )
    if a.shape != b.shape:
        raise ValueError(f"{label}: shapes differ, {a.shape} vs {b.shape}")
    if not atol > 0:
        raise ValueError(f"atol must be positive, got {atol}")
    diff = float(
        np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0)
    )
    ok = diff < atol  # a NaN difference is not agreement
    if ok:
        print(f"{label}: largest difference below {atol:g}")
    else:
        print(f"{label}: largest difference {diff:.2e}, NOT below {atol:g}")
    return ok


def plain_number(value):
    """A NumPy scalar as the Python number it holds (anything else as it is).

    NumPy 2 writes ``np.float64(3.2)`` for a scalar, which the book's ``{glue:text}`` roles
    cannot format; a Python float is written ``3.2``.
    """
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def glue(name: str, value, display: bool = False) -> None:
    """Store ``value`` under ``name`` for the book's prose (myst-nb's ``glue``).

    The prose quotes it as ``{glue:text}`name:.2f```, so the page and the cell's output always
    agree. Where myst-nb is not installed (Colab, Binder) nothing is stored; the value is
    shown when ``display`` is true.

    Every chapter.
    """
    value = plain_number(value)
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    myst_glue(name, value, display=display)


def bound(value: float, digits: int, side: str) -> float:
    """``value`` rounded outward to ``digits`` decimals, so that the prose's bound holds for
    the number it quotes: ``side="lower"`` rounds down ("at least 0.69" for 0.6954),
    ``side="upper"`` up ("at most 2.1" for 2.0457). Glue the result, formatted to ``digits``.

    Every chapter that states a bound (chapters 7, 10 and 11 among them).
    """
    import math

    if side not in ("lower", "upper"):
        raise ValueError(f'side must be "lower" or "upper", got {side!r}')
    scale = 10.0**digits
    # the product's own rounding (0.29 * 100 = 28.999...) must not move a value already
    # on the grid: snap to 9 significant digits first
    scaled = float(f"{float(value) * scale:.9g}")
    edge = math.floor(scaled) if side == "lower" else math.ceil(scaled)
    return edge / scale
