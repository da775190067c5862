"""The headers of the graded exercises state what the masters hold (issue 28, item 5): the
number of functions to fill in, each question's points and the exercise's total."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

MASTERS = Path(__file__).resolve().parents[1] / "exercises" / "masters"
# the exercises whose headers follow this format (the others are being rebuilt)
CHECKED = ["ex05_positional", "ex06_sampling", "ex07_cars", "ex08_gqa"]
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def _questions(nb: nbformat.NotebookNode) -> list[tuple[str, list[float], str]]:
    """(name, points of each test, the question's heading) for every question, in order."""
    found = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            name = re.search(r"name: (\w+)", cell.source).group(1)
            points = re.search(r"points: \[([^\]]*)\]", cell.source).group(1)
            heading = next(
                c.source for c in cells[i + 1 :] if c.cell_type == "markdown"
            )
            found.append((name, [float(p) for p in points.split(",")], heading))
    return found


@pytest.mark.parametrize("name", CHECKED)
def test_header_counts_the_functions_and_the_points(name):
    nb = nbformat.read(MASTERS / f"{name}.ipynb", as_version=4)
    intro = nb.cells[1].source
    questions = _questions(nb)
    stated = re.search(r"Fill in the (\w+) functions", intro).group(1)
    assert NUMBERS[stated] == len(questions), (
        f"{name}: says {stated} functions, has {len(questions)}"
    )
    total = sum(sum(points) for _, points, _ in questions)
    worth = int(re.search(r"worth (\d+) points", intro).group(1))
    assert abs(total - worth) < 1e-9, (
        f"{name}: the intro says {worth} points, the questions hold {total}"
    )
    for q, points, heading in questions:
        of = re.search(r"\((?:stretch, )?([\d.]+) of (\d+) points\)", heading)
        assert of, f"{name} {q}: no '(N of T points)' in its heading"
        assert int(of.group(2)) == worth, f"{name} {q}: heading says of {of.group(2)}"
        assert abs(float(of.group(1)) - sum(points)) < 1e-9, (
            f"{name} {q}: heading says {of.group(1)} points, its tests hold {sum(points)}"
        )
