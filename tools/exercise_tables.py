"""The mistake tables of the worked-solution pages, held to the grades the proof measures.

A `## qN` section of `exercises/explanations/NAME.md` may hold a table of classic mistakes,
`| Mistake | The check that flags it | Points kept (of P) |`. The points are the grader's, so
they come from code: `PAGE_ROWS` in `exercises/wrong_answers/NAME.py` ties each row, by its
Mistake cell as written, to the wrong answers that make that mistake (a label, or a tuple of
labels for a row that names several slips), and `check_proof` (`tools.exercise_verdicts`)
fails, naming the row, when
- a row of a table is tied to no wrong answer, or a tie names a row no table has, or a label
  no wrong answer has;
- a tied wrong answer kept, on the row's question, more than a twentieth of a point more or
  less than the row says (the pages round to the tenth, and write quarters as quarters);
- the "of P" differs from what the reference solution scores on that question.
An exercise whose wrong-answer file has no `PAGE_ROWS` is not held to its tables (yet): the
proof prints a warning instead.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

from tools.exercise_build import ROOT, WRONG_ANSWERS

EXPLANATIONS = ROOT / "exercises" / "explanations"
HEADER = re.compile(r"\|\s*Mistake\s*\|.*\|\s*Points kept \(of ([\d.]+)\)\s*\|\s*$")
TOLERANCE = 0.05 + 1e-9  # half a tenth of a point: the pages' rounding


def table_rows(path: Path) -> list[tuple[str, str, float, float]]:
    """(question, mistake cell, points kept, points possible) for every row of every mistake
    table in the explanations file `path` (none if there is no file)."""
    if not path.is_file():
        return []
    rows, question, possible = [], "", None
    for line in path.read_text().splitlines():
        heading = re.fullmatch(r"##\s+(\S+)\s*", line)
        if heading:
            question, possible = heading[1], None
            continue
        header = HEADER.match(line)
        if header:
            possible = float(header[1])
            continue
        if not line.startswith("|"):
            possible = None  # the table ended
            continue
        if possible is None:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set(cells[0]) <= set("-: "):  # the separator line
            continue
        rows.append((question, cells[0], float(cells[-1]), possible))
    return rows


def page_rows(name: str) -> dict[str, str | tuple[str, ...]] | None:
    """`PAGE_ROWS` of the wrong-answer file of `name`, or None if it has none."""
    path = WRONG_ANSWERS / f"{name}.py"
    if not path.is_file():
        return None
    from tools.exercise_proof import TAMPER, TAMPERS

    found = runpy.run_path(
        str(path), init_globals={"TAMPER": TAMPER, "TAMPERS": TAMPERS}
    )
    return found.get("PAGE_ROWS")


def table_problems(
    name: str, kept: dict[str, dict[str, float]], reference: str
) -> list[str]:
    """What is wrong with the mistake tables of `name`'s page, given the points each graded
    submission kept per question (`kept[label][question]`; `reference` the reference
    solution's label). Empty when every row is tied and matches."""
    ties = page_rows(name)
    rows = table_rows(EXPLANATIONS / f"{name}.md")
    if ties is None:
        if rows:
            print(
                f"  warning (not yet held to it): {len(rows)} table rows not tied to wrong answers"
            )
        return []
    problems = []
    seen = set()
    for question, mistake, points, possible in rows:
        where = f"{name}.md, {question}, row {mistake!r}"
        seen.add(mistake)
        full = kept.get(reference, {}).get(question)
        if full is not None and abs(full - possible) > 1e-9:
            problems.append(
                f"{where}: the table says of {possible:g}, the question is worth {full:g}"
            )
        labels = ties.get(mistake)
        if labels is None:
            problems.append(f"{where}: tied to no wrong answer (PAGE_ROWS)")
            continue
        for label in (labels,) if isinstance(labels, str) else labels:
            if label not in kept:
                problems.append(
                    f"{where}: PAGE_ROWS names {label!r}, which is no wrong answer"
                )
                continue
            measured = kept[label].get(question, 0.0)
            if abs(measured - points) > TOLERANCE:
                problems.append(
                    f"{where}: the page says {points:g} points kept, the proof measured "
                    f"{measured:g} for {label!r}"
                )
    for mistake in set(ties) - seen:
        problems.append(f"{name}: PAGE_ROWS ties {mistake!r}, which no table row says")
    return problems
