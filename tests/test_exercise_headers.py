"""What an exercise says about itself agrees with its master notebook.

From each master (`exercises/masters/NAME.ipynb`) the test reads the questions (`# BEGIN
QUESTION` cells: name and points, a number or a list summed) and the functions the student
writes (top-level `def`s of the solution cells, between `# BEGIN SOLUTION` and `# END
SOLUTION`). Then it checks the text the student reads:
  - the header: "Fill in the N functions", "The exercise is worth T points" and, if it says
    so, "in Q questions";
  - every question heading, "## Question K (..., P of T points)": K in order, P the question's
    points, T the total;
  - the exercise's blurb in the chapter that links it: any count of functions, questions or
    points it states, and every function it names in backticks (a snake_case name).
Each test reports every disagreement of its exercise at once.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MASTERS = sorted((ROOT / "exercises" / "masters").glob("*.ipynb"))
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))
WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()
NUMBER = r"(\d+|" + "|".join(WORDS) + r")"


def number(text: str) -> int:
    text = text.lower()
    return WORDS.index(text) if text in WORDS else int(text)


def source(cell: dict) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


@dataclass
class Master:
    name: str
    header: str  # the first markdown cell
    points: dict[str, float] = field(
        default_factory=dict
    )  # question -> points, in order
    functions: list[str] = field(default_factory=list)  # in order
    headings: list[str] = field(default_factory=list)  # "## Question ..." lines

    @property
    def total(self) -> float:
        return sum(self.points.values())


def read_master(path: Path) -> Master:
    cells = json.loads(path.read_text())["cells"]
    markdown = [source(c) for c in cells if c["cell_type"] == "markdown"]
    master = Master(path.stem, markdown[0] if markdown else "")
    in_solution = False
    for cell in cells:
        text = source(cell)
        if cell["cell_type"] == "raw":
            first = text.strip().splitlines()[0] if text.strip() else ""
            if first == "# BEGIN QUESTION":
                config = yaml.safe_load(text.split("\n", 1)[1])
                points = config.get("points", 0)
                total = sum(points) if isinstance(points, list) else float(points)
                master.points[config["name"]] = round(total, 6)
            in_solution = {"# BEGIN SOLUTION": True, "# END SOLUTION": False}.get(
                first, in_solution
            )
        elif cell["cell_type"] == "code" and in_solution:
            master.functions += [
                node.name
                for node in ast.parse(text).body
                if isinstance(node, ast.FunctionDef)
            ]
        elif cell["cell_type"] == "markdown":
            master.headings += re.findall(r"(?m)^## Question .*$", text)
    return master


def blurb(name: str) -> tuple[str, str] | None:
    """(chapter file name, the paragraph that links exercises/student/NAME.ipynb)."""
    for chapter in CHAPTERS:
        for cell in json.loads(chapter.read_text())["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for paragraph in source(cell).split("\n\n"):
                if f"exercises/student/{name}.ipynb" in paragraph:
                    return chapter.name, paragraph
    return None


def fmt(points: float) -> str:
    return f"{points:g}"


def disagreements(master: Master) -> list[str]:
    found = []
    n = len(master.functions)
    stated = re.findall(rf"Fill in the {NUMBER} functions?", master.header, re.I)
    if not stated:
        found.append(f'the header does not say "Fill in the {n} functions"')
    for word in stated:
        if number(word) != n:
            found.append(
                f'the header says "Fill in the {word} functions"; the master has {n}: '
                + ", ".join(master.functions)
            )
    worth = re.findall(r"worth (\d+(?:\.\d+)?) points", master.header)
    if not worth:
        found.append(
            f'the header does not say "The exercise is worth {fmt(master.total)} points"'
        )
    for total in worth:
        if float(total) != master.total:
            found.append(
                f"the header says the exercise is worth {total} points; its questions add up "
                f"to {fmt(master.total)} ({master.points})"
            )
    for word in re.findall(rf"\b{NUMBER}\s+questions\b", master.header, re.I):
        if number(word) != len(master.points):
            found.append(
                f'the header says "{word} questions"; the master has {len(master.points)}'
            )
    if len(master.headings) != len(master.points):
        found.append(
            f"{len(master.headings)} question headings for {len(master.points)} questions "
            f"({list(master.points)})"
        )
    for k, (heading, (question, points)) in enumerate(
        zip(master.headings, master.points.items()), start=1
    ):
        got = re.match(
            r"## Question (\d+) \((?:[^()]*, )?(\d+(?:\.\d+)?) of (\d+(?:\.\d+)?) points?\)",
            heading,
        )
        if got is None:
            found.append(f'{question}: heading "{heading}" states no "P of T points"')
            continue
        if int(got[1]) != k:
            found.append(f'{question}: heading "{heading}" should be question {k}')
        if float(got[2]) != points:
            found.append(
                f'{question}: heading "{heading}" says {got[2]} points; the master gives '
                f"{fmt(points)}"
            )
        if float(got[3]) != master.total:
            found.append(
                f'{question}: heading "{heading}" says of {got[3]}; the total is '
                f"{fmt(master.total)}"
            )
    linked = blurb(master.name)
    if linked is not None:
        chapter, text = linked
        flat = " ".join(text.split())
        for word in re.findall(rf"\b{NUMBER} functions\b", flat, re.I):
            if number(word) != n:
                found.append(
                    f'{chapter}: the blurb says "{word} functions"; there are {n}'
                )
        for word in re.findall(rf"\b{NUMBER} questions\b", flat, re.I):
            if number(word) != len(master.points):
                found.append(
                    f'{chapter}: the blurb says "{word} questions"; there are '
                    f"{len(master.points)}"
                )
        for word in re.findall(r"\b(\d+(?:\.\d+)?) points\b", flat):
            if float(word) != master.total:
                found.append(
                    f'{chapter}: the blurb says "{word} points"; the exercise is worth '
                    f"{fmt(master.total)}"
                )
        for named in re.findall(r"`([a-z][a-z0-9]*_[a-z0-9_]+)(?:\(\))?`", flat):
            if named not in master.functions:
                found.append(
                    f"{chapter}: the blurb names `{named}`, which the exercise does not ask "
                    f"for (it asks for {', '.join(master.functions)})"
                )
    return found


def test_every_master_is_read() -> None:
    """The reading above finds questions, points and functions in every master (so the
    checks below cannot pass on an empty reading)."""
    assert MASTERS, "no master notebook"
    for path in MASTERS:
        master = read_master(path)
        assert master.points and master.total > 0, f"{path.name}: no question read"
        assert master.functions, f"{path.name}: no solution function read"
        assert master.headings, f"{path.name}: no question heading read"


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.stem)
def test_header_and_blurb_state_the_masters_counts(path: Path) -> None:
    master = read_master(path)
    found = disagreements(master)
    if found:
        pytest.fail(f"{path.name} disagrees with itself:\n  " + "\n  ".join(found))


def test_the_check_finds_a_wrong_count() -> None:
    """The control: a header that states one function too few and a heading with the wrong
    points are reported."""
    master = read_master(MASTERS[0])
    n = len(master.functions)
    question, points = next(iter(master.points.items()))
    fake = Master(
        master.name,
        f"Fill in the {WORDS[n - 1]} functions. The exercise is worth "
        f"{fmt(master.total)} points.",
        dict(master.points),
        list(master.functions),
        [
            f"## Question {k} ({fmt(p + (k == 1))} of {fmt(master.total)} points): x"
            for k, p in enumerate(master.points.values(), start=1)
        ],
    )
    found = "\n".join(disagreements(fake))
    assert f'"Fill in the {WORDS[n - 1]} functions"; the master has {n}' in found, found
    assert f"{question}: heading" in found and f"gives {fmt(points)}" in found, found
