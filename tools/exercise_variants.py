"""The exercises' pools of variants, and what the tool does with them: the pool travels in
the autograder zip (`zip_members`), `make exercises ROSTER=class.csv` renders one student
notebook per student (`render_roster`), and the proofs grade every pool member
(`prove_variants`, `check_variants`). Choosing a variant is `attnbook_grader.variants`'.

A pool (`POOLS`, in `tools.exercise_pools`) names its exercise, its ``reserved`` variant (the book's pages and worked
solutions, a task no roster student gets), the ``roster`` tasks the hash draws from, and per
task its text edits of the master ("edits": old -> new, applied to the student notebook's
text and to the reference solution) and its parameters (inclusive integer ranges). An
exercise without a pool has one variant, its notebook as it is.
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path
from typing import Any

import nbformat

from attnbook_grader import variants
from tools.exercise_build import ANSWER_TAG
from tools.exercise_pools import POOLS
from tools.exercise_roster import read_roster, roster_file_name

__all__ = [
    "POOLS",
    "AtEachTask",
    "check_variants",
    "pool",
    "prove_variants",
    "render_notebook",
    "render_roster",
    "sample_variants",
    "zip_members",
]


def pool(name: str) -> dict | None:
    """Exercise `name`'s pool, or None (one variant)."""
    found = POOLS.get(name)
    return copy.deepcopy(found) if found else None


def zip_members(name: str) -> list[tuple[str, bytes]]:
    """What the autograder zip carries for the variants: the pool, and the course secret
    where the zip is built with one (then the zip is the instructor's alone: Gradescope)."""
    found = pool(name)
    if found is None:
        return []
    members = [(variants.POOL_FILE, json.dumps(found, indent=1).encode())]
    secret = variants.course_secret()
    if secret is not None:
        members.append((variants.SECRET_IN_ZIP, secret))
    return members


def render_notebook(
    nb: nbformat.NotebookNode, variant: dict, found: dict
) -> nbformat.NotebookNode:
    """A copy of `nb` (a student or reference notebook) at `variant`."""
    out = copy.deepcopy(nb)
    rendered = variants.render([c.source for c in out.cells], variant, found)
    for cell, source in zip(out.cells, rendered):
        cell.source = source
    return out


def render_roster(
    name: str, student_nb: nbformat.NotebookNode, roster: Path, out: Path
) -> list[tuple[str, str, str, Path]]:
    """One student notebook per student of `roster` (`read_roster`'s CSV) into `out/NAME/`,
    each at the variant its student is graded at (the course secret required: without it
    every student would get the book's variant), and `out/NAME/variants.csv` (id, name,
    variant, file): [(id, name, variant, path)]."""
    secret = variants.course_secret()
    found = pool(name)
    if found is not None and secret is None:
        raise ValueError(
            f"ROSTER given but no course secret: set ${variants.SECRET_ENV} or "
            f"${variants.SECRET_FILE_ENV} (README, 'Grading for credit'), else every "
            "student would get the book's own variant"
        )
    people = {p.id: p for p in read_roster(roster).values()}
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for student_id, person in sorted(people.items()):
        nb, text = student_nb, "-"
        if found is not None and secret is not None:
            variant = variants.choose(secret, name, [student_id], found)
            nb, text = (
                render_notebook(student_nb, variant, found),
                variants.label(variant),
            )
        path = folder / roster_file_name(student_id, person.name)
        nbformat.write(nb, path)
        rows.append((student_id, person.name, text, path))
    with open(folder / "variants.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "name", "variant", "notebook"])
        writer.writerows([i, n, v, p.name] for i, n, v, p in rows)
    return rows


# ----------------------------------------------------------------------------- proofs
class AtEachTask(list):
    """A wrong answer that edits a line a task of the pool rewrites, written at every task:
    a list of its edits at the reserved variant (what the proof at the book's variant
    applies, as for any wrong answer) whose `tasks` give, per roster task, the same mistake
    as edits of that task's text (the reference rendered at the task). In a wrong-answers
    file: ``WRONG_ANSWERS[label] = AtEachTask([(old, new)], block=[...], bias=[...])``."""

    def __init__(self, book: list, **tasks: list) -> None:
        super().__init__(book)
        self.tasks = tasks


def _rewritten(found: dict) -> set[str]:
    """The lines (stripped) some task of the pool rewrites."""
    return {
        line.strip()
        for task in found["tasks"].values()
        for old, _ in task["edits"]
        for line in old.splitlines()
        if line.strip()
    }


def _touches(edits: list | None, rewritten: set[str]) -> bool:
    return bool(
        {ln.strip() for old, _ in edits or [] for ln in old.splitlines()} & rewritten
    )


def _edited(nb: nbformat.NotebookNode, edits: list, what: str) -> nbformat.NotebookNode:
    """`nb` with `edits` applied to its answer cells, each `old` found exactly once."""
    cells = [
        c for c in nb.cells if c.cell_type == "code" and ANSWER_TAG in c.metadata.get("tags", [])
    ]  # fmt: skip
    for old, new in edits:
        hits = sum(c.source.count(old) for c in cells)
        if hits != 1:
            raise variants.VariantError(
                f"{what}: the edit {old!r} matches {hits} times, not once"
            )
        for c in cells:
            c.source = c.source.replace(old, new)
    return nb


def sample_variants(found: dict, per_task: int = 1) -> list[dict]:
    """Every roster task at `per_task` parameter draws (from a fixed proof key, so the
    sample is the same on every run), the drawn ids told apart by their number."""
    sample: dict[str, list[dict]] = {task: [] for task in found["roster"]}
    i = 0
    while any(len(v) < per_task for v in sample.values()) and i < 1000:
        variant = variants.choose(b"proof", found["exercise"], [f"s{i}"], found)
        if len(sample[variant["task"]]) < per_task:
            sample[variant["task"]].append(variant)
        i += 1
    return [v for task in found["roster"] for v in sample[task]]


def _pasted(
    mine: nbformat.NotebookNode, answers: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """The student's notebook `mine` with the code of `answers` pasted over its own code
    (its VARIANT cell kept)."""
    for cell, theirs in zip(mine.cells, answers.cells):
        if cell.cell_type == "code" and "VARIANT = " not in cell.source:
            cell.source = theirs.source
    return mine


def _other(task: str) -> str:
    """The proof case of task `task`'s worked solution handed in at another variant."""
    return f"task {task}'s solution"


def prove_variants(
    built: Any, grader: Any, timeout: float, cases: dict, make: Any, graded: dict
) -> dict[str, dict[str, dict]]:
    """variant label -> case -> {"score", "possible", "status", "message", "q"} for the
    sampled pool members (`sample_variants`): the reference rendered at the variant, the
    untouched notebook, the wrong answers that lose points on a question of the pool's at
    the reserved variant (`graded`: label -> Grade there; edited, then rendered), the book's
    worked solution answered in the student's notebook ("book solution"), each other roster
    task's worked solution answered there (`_other`) and the book's notebook as it is ("book
    notebook": refused). A mistake written on a line a task
    rewrites is graded as its `AtEachTask` form of the variant's task (refused without one),
    and so is a correct answer written there. Left out: tampering (the engine's, the same
    at every variant)."""
    found = pool(built.name)
    if found is None:
        return {}
    book = variants.reserved(found)
    rewritten = _rewritten(found)
    first, second = list(cases)[:2]  # the reference and the untouched notebook
    unwritten = [  # tampering is not graded at the variants: it needs no task forms
        label
        for label, edits in cases.items()
        if _touches(edits, rewritten)
        and "tampering" not in label
        and set(found["roster"]) - set(getattr(edits, "tasks", {}))
    ]
    if unwritten:
        raise variants.VariantError(
            f"{built.name}: {unwritten} edit a line a task of the pool rewrites: write "
            f"each at every roster task {found['roster']} "
            "(tools.exercise_variants.AtEachTask)"
        )

    def relevant(label: str, edits: list | None) -> bool:
        if label in (first, second):
            return True
        if label.startswith("correct:"):
            return _touches(edits, rewritten)
        lost = any(
            graded[label].questions.get(q, 0) < graded[first].questions.get(q, 0)
            for q in found["questions"]
        )
        return lost and "tampering" not in label

    chosen = {k: v for k, v in cases.items() if relevant(k, v)}
    results: dict[str, dict[str, dict]] = {}
    for variant in sample_variants(found):
        got: dict[str, Any] = {}
        for label, edits in chosen.items():
            at = getattr(edits, "tasks", None)
            if at is None:
                nb = render_notebook(make(built, edits), variant, found)
            else:  # the same mistake written at the variant's task
                nb = render_notebook(make(built, []), variant, found)
                nb = _edited(nb, at[variant["task"]], f"{label!r} at {variant['task']}")
            got[label] = grader.grade(nb, label, timeout, variant=variant)
        solution = make(built, [])  # the reference as the book shows it (reserved)
        mine = _pasted(render_notebook(solution, variant, found), solution)
        got["book solution"] = grader.grade(mine, "book", timeout, variant=variant)
        for other in found["roster"]:  # a classmate's worked solution, of another task
            if other != variant["task"]:
                theirs = render_notebook(solution, {**variant, "task": other}, found)
                mine = _pasted(render_notebook(solution, variant, found), theirs)
                got[_other(other)] = grader.grade(mine, other, timeout, variant=variant)
        got["book notebook"] = grader.grade(solution, "page", timeout, variant=variant)
        assert variants.stated([c.source for c in solution.cells]) == book
        results[variants.label(variant)] = {
            k: {
                "score": g.score,
                "possible": g.possible,
                "status": g.status,
                "message": g.message[:300],
                "q": g.questions,
                "seconds": round(g.seconds, 2),
            }
            for k, g in got.items()
        }
    return results


def check_variants(name: str, data: dict, reference: str, untouched: str) -> bool:
    """The proofs per variant: the reference 100 %, the untouched notebook 0, every wrong
    answer below 100 % (a "correct:" one 100 %), the book's solution in a roster student's
    notebook scored as a realistic bug is (below 100 %, at most half of each question of
    the pool's: the course's scoring rule for a bug in a question's core property), and so
    is each other roster task's worked solution there, the book's notebook refused; one line
    per variant."""
    ok = True
    questions = (pool(name) or {}).get("questions", [])
    roster = (pool(name) or {}).get("roster", [])
    for label, cases in data.get("variants", {}).items():
        problems = []
        full = {k: c["score"] >= c["possible"] > 0 for k, c in cases.items()}
        copied = ["book solution"] + [_other(t) for t in roster if _other(t) in cases]
        wrong = [
            k for k in cases
            if k not in (reference, untouched, "book notebook", *copied)
        ]  # fmt: skip
        if not full[reference]:
            problems.append(f"the reference scored {cases[reference]['score']}")
        if cases[untouched]["score"] != 0:
            problems.append(
                f"the untouched notebook scored {cases[untouched]['score']}"
            )
        for k in wrong:
            if full[k] != k.startswith("correct:"):
                problems.append(f"{k!r} scored {cases[k]['score']}")
        best_wrong = max(
            (cases[k]["score"] for k in wrong if not k.startswith("correct:")),
            default=0,
        )
        book, top = cases["book solution"], cases[reference]["q"]
        for k in copied:  # the book's answers, and each other task's, copied
            halves = [
                q for q in questions if cases[k]["q"].get(q, 0) > top.get(q, 0) / 2
            ]
            if full[k] or halves:
                problems.append(
                    f"{k!r} scored {cases[k]['score']} ({', '.join(halves)}: more than "
                    "half, where a realistic bug of the core property loses half)"
                )
        page = cases["book notebook"]
        if page["score"] != 0 or "states variant" not in page["message"]:
            problems.append(f"the book's notebook was not refused: {page['message']!r}")
        print(
            f"  {name} at variant {label}: reference {cases[reference]['score']:g}, "
            f"book solution {book['score']:g} ("
            + ", ".join(
                f"{q} {book['q'].get(q, 0):g}/{top.get(q, 0):g}" for q in questions
            )
            + "), "
            + "".join(
                f"{k} {cases[k]['score']:g}, " for k in copied if k != "book solution"
            )
            + f"best wrong answer {best_wrong:g}, "
            f"{len(wrong)} wrong answers, "
            f"{sum(c.get('seconds', 0) for c in cases.values()):.0f} s of grading"
            + ("" if not problems else "\n    FAILED: " + "; ".join(problems))
        )
        ok &= not problems
    return ok
