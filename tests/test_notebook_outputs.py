"""The stored outputs of every notebook hold on any machine (the outputs convention,
CONTRIBUTING.md): no path of the machine that ran it, no rounding noise in compared cells,
no traceback where a short message was meant, no progress bar.

These read the committed notebooks only (no kernel): strict nbval, run twice in `make test`,
is what proves the compared outputs are reproduced.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = (
    sorted(ROOT.glob("book/*.ipynb"))
    + sorted(ROOT.glob("exercises/masters/*.ipynb"))
    + sorted(ROOT.glob("exercises/student/*.ipynb"))
)

# An absolute path: a slash-separated run of at least two names that starts with "/" (POSIX) or
# a drive letter (Windows), and is not the tail of a URL ("https://host/a/b") or of a fraction.
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])(?:/[\w.+@-]+){2,}|\b[A-Za-z]:\\[\w.+ -]+\\")
# Rounding noise as Python prints it by default: 4.2e-16, 1.2e-07 (two-digit negative exponent).
ROUNDING_NOISE = re.compile(r"\b\d\.\d+e-(?:0[5-9]|[1-9]\d)\b")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# an inline picture (the interactive views' fallback PNG): base64 holds slashes, not paths
DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def cells(notebook: Path) -> list[dict]:
    return json.loads(notebook.read_text())["cells"]


def output_texts(cell: dict) -> list[str]:
    """Everything a code cell's stored outputs would show as text."""
    texts = []
    for out in cell.get("outputs", []):
        text = out.get("text", "")
        texts.append("".join(text) if isinstance(text, list) else text)
        for mime, value in out.get("data", {}).items():
            if mime.startswith("text/") or mime.endswith("json"):
                text = "".join(value) if isinstance(value, list) else json.dumps(value)
                texts.append(DATA_URI.sub("data:", text))
        texts.append(out.get("evalue", ""))
        texts.extend(ANSI.sub("", line) for line in out.get("traceback", []))
    return texts


def compared(cell: dict) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    source = (
        "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    )
    return "nbval-ignore-output" not in tags and "NBVAL_IGNORE_OUTPUT" not in source


def test_the_scanner_recognises_paths_and_noise() -> None:
    """The patterns catch what they are for and leave ordinary text alone."""
    for path in [
        "/work/main/src/attnbook/attention.py:92",
        "File /usr/lib/python3.11/x.py",
        "/root/.venv/lib/site-packages/torch/nn/modules/module.py",
        r"C:\Users\me\x.py",
    ]:
        assert ABSOLUTE_PATH.search(path), path
    for text in [
        "https://github.com/a/b/blob/main/x.ipynb",
        "../exercises/student/ex01.ipynb",
        "1/8 of the weight",
        "d_model / n_head",
        "q/k/v",
        "(B, H, T)/2",
    ]:
        assert not ABSOLUTE_PATH.search(text), text
    picture = '<img src="data:image/png;base64,iVBOR/w0K/Ggo+AAA/v79/f78=">'
    assert not ABSOLUTE_PATH.search(DATA_URI.sub("data:", picture))
    assert ROUNDING_NOISE.search("max difference 4.2e-16") and ROUNDING_NOISE.search(
        "2.4e-07"
    )
    assert not ROUNDING_NOISE.search("lr 3.0e-04, ratio 9.33e-6, 1e-6 tolerance")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=rel)
def test_no_stored_output_shows_a_machine_path(notebook: Path) -> None:
    found = [
        (i, m.group(0))
        for i, cell in enumerate(cells(notebook))
        if cell["cell_type"] == "code"
        for text in output_texts(cell)
        for m in ABSOLUTE_PATH.finditer(DATA_URI.sub("data:", text))
    ]
    assert not found, (
        f"{rel(notebook)}: outputs show paths of the machine that ran it: {found[:5]}"
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=rel)
def test_compared_outputs_print_no_rounding_noise(notebook: Path) -> None:
    """A difference printed as 4.2e-16 changes on the next CPU; print a verdict against a
    tolerance instead (attnbook.notebook.agree), or tag the cell nbval-ignore-output."""
    found = [
        (i, m.group(0))
        for i, cell in enumerate(cells(notebook))
        if cell["cell_type"] == "code" and compared(cell)
        for text in output_texts(cell)
        for m in ROUNDING_NOISE.finditer(text)
    ]
    assert not found, (
        f"{rel(notebook)}: compared cells print rounding noise: {found[:5]}"
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=rel)
def test_deliberate_errors_show_a_message_not_a_traceback(notebook: Path) -> None:
    """Bad-input demonstrations use attnbook.notebook.expect_error, which prints one or two
    lines; a stored error output would show a traceback with the machine's paths."""
    errors = [
        i
        for i, cell in enumerate(cells(notebook))
        if cell["cell_type"] == "code"
        for out in cell.get("outputs", [])
        if out["output_type"] == "error"
    ]
    assert not errors, f"{rel(notebook)}: cells {errors} store a traceback"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=rel)
def test_no_progress_bar_is_stored(notebook: Path) -> None:
    bars = [
        i
        for i, cell in enumerate(cells(notebook))
        if cell["cell_type"] == "code"
        for text in output_texts(cell)
        if re.search(r"\d+%\|[█▏▎▍▌▋▊▉ #]*\|", text)
    ]
    assert not bars, f"{rel(notebook)}: cells {bars} store a progress bar"


PAGES = sorted(ROOT.glob("book/*.ipynb")) + sorted(
    ROOT.glob("exercises/student/*.ipynb")
)
COLUMN = 88  # characters of code the page's column shows without scrolling sideways


@pytest.mark.parametrize("notebook", PAGES, ids=rel)
def test_code_fits_the_page_column(notebook: Path) -> None:
    """The code a reader sees on a page fits its column (issue "The pages as readers see
    them"): no line of a code cell is wider than 88 characters."""
    long = [
        (i, line)
        for i, cell in enumerate(cells(notebook))
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if len(line) > COLUMN
    ]
    assert not long, (
        f"{len(long)} code lines wider than {COLUMN} columns, e.g. cell {long[0][0]}: {long[0][1]!r}"
    )


@pytest.mark.parametrize("notebook", sorted(ROOT.glob("book/*.ipynb")), ids=rel)
def test_figures_use_the_course_style(notebook: Path) -> None:
    """A chapter that draws figures imports `attnbook.plot`, which sets the course's style
    (colour-blind-safe palette, 11-pt labels, 2x PNGs at the column width). Exercises may
    not import the course package, so they are not asked to."""
    nb = cells(notebook)
    draws = any(
        "image/png" in out.get("data", {}) for c in nb for out in c.get("outputs", [])
    )
    sources = "\n".join("".join(c["source"]) for c in nb if c["cell_type"] == "code")
    assert not draws or "attnbook.plot" in sources, (
        "draws figures without the course's style"
    )
