"""What an exercise's introduction promises matches its master (issue 28, item 5): the number
of functions to fill in, the exercise's total and each heading's points.

The counts are read from the master itself: the functions are the `def`s of the solution
cells, the points are those of each question's `points:` list.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "exercises" / "masters"
# The exercises whose introductions state their counts in this form; add the others as
# their introductions are brought to it.
NAMES = ["ex01_attention", "ex02_scaling", "ex03_multihead", "ex04_masks"]
WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


def solution_functions(nb: nbformat.NotebookNode) -> list[str]:
    """The functions a student fills in: those defined in the solution cells."""
    names = []
    for i, cell in enumerate(nb.cells[1:], start=1):
        before = nb.cells[i - 1]
        if cell.cell_type == "code" and before.source.startswith("# BEGIN SOLUTION"):
            tree = ast.parse(cell.source)
            names += [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    return names


def question_points(nb: nbformat.NotebookNode) -> dict[str, float]:
    """question name -> its points (the sum of its `points:` list)."""
    points = {}
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            name = re.search(r"name: (\w+)", cell.source).group(1)
            listed = re.search(r"points: \[([^\]]*)\]", cell.source).group(1)
            points[name] = round(sum(float(p) for p in listed.split(",")), 6)
    return points


@pytest.mark.parametrize("name", NAMES)
def test_the_introduction_counts_the_functions_and_points(name):
    nb = nbformat.read(MASTERS / f"{name}.ipynb", as_version=4)
    intro = next(c.source for c in nb.cells if c.cell_type == "markdown")
    said = re.search(r"Fill in the (\w+) functions", intro)
    assert said, f"{name}: the introduction does not say how many functions to fill in"
    functions = solution_functions(nb)
    assert WORDS.get(said.group(1)) == len(functions), (
        f"{name}: the introduction says {said.group(1)} functions, the master has "
        f"{len(functions)}: {functions}"
    )
    points = question_points(nb)
    total = re.search(r"The exercise is worth (\d+) points", intro)
    assert total and float(total.group(1)) == pytest.approx(sum(points.values())), (
        f"{name}: the introduction says {total and total.group(1)} points, the questions "
        f"sum to {sum(points.values())}"
    )
    headings = [
        re.search(
            r"## Question (\d+) \([^)]*?(\d+(?:\.\d+)?) of (\d+) points\)", c.source
        )
        for c in nb.cells
        if c.cell_type == "markdown" and c.source.startswith("## Question")
    ]
    assert len(headings) == len(points), f"{name}: one heading per question"
    for found in headings:
        assert found, f"{name}: a question heading does not state its points"
        question, worth, of = found.groups()
        assert float(worth) == pytest.approx(points[f"q{question}"]), (
            f"{name}: question {question}'s heading says {worth} points, its tests "
            f"sum to {points[f'q{question}']}"
        )
        assert float(of) == pytest.approx(sum(points.values()))
