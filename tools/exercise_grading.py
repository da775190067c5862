"""Grading submissions for the exercises tool (`python -m tools.exercises`).

One engine grades everything, `attnbook_grader.engine`: a submission's notebook runs
in a child process and only sends data back; otter's test classes run the autograder's tests,
and every score is decided in the grading process. `Grader` holds an exercise (its tests and
reference solution, read from the autograder zip before any submission runs) and its
reference process. Plus what instructors read: one-line diagnoses and the class report.

Run as a normal user (`make grade` on a laptop), the child runs as that user, in a temp
folder, with a session of its own, memory and process limits, and is ended with everything
it started after each submission (`attnbook_grader.processes`); as root
(Gradescope), as a sandbox user of its own. `otter run` on the zips refuses
(`attnbook_grader.otter_plugin`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from attnbook_grader import variants
from attnbook_grader.autograder import no_dtensor_import
from attnbook_grader.engine import (
    Exercise,
    Session,
    code_sources,
    grade_notebook,
    reference_session,
)
from attnbook_grader.feedback import hint
from attnbook_grader.submissions import read_notebook

DEFAULT_TIMEOUT = 300.0


@dataclass
class Grade:
    submission: str
    status: str  # "ok", "timeout" or "error"
    score: float = 0.0
    possible: float = 0.0
    questions: dict[str, float] = field(default_factory=dict)
    # {"name", "question", "hidden", "passed", "points", "message"}
    tests: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    message: str = ""
    # [cell index, "Type: message"]
    cell_errors: list[list] = field(default_factory=list)
    # the isolation level the children ran at (`attnbook_grader.jail`); "" if none ran
    isolation: str = ""
    # the variant graded at, in words (`attnbook_grader.variants.label`); "" without a pool
    variant: str = ""

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.possible if self.possible else 0.0

    def passed(self, hidden: bool) -> tuple[int, int]:
        chosen = [t for t in self.tests if t["hidden"] == hidden]
        return sum(t["passed"] for t in chosen), len(chosen)

    def first_failure(self, hidden: bool) -> str:
        for t in self.tests:
            if t["hidden"] == hidden and not t["passed"]:
                return f"{t['name']}: {t['message']}"
        return ""


class Grader:
    """Grades notebooks of one exercise (a context manager: it holds the reference process).
    An exercise with a pool of variants is graded at the variant recomputed from the
    submitters' ids and the course secret ($ATTNBOOK_COURSE_SECRET, else the zip's), its
    reference started again at each new variant; a notebook stating another is refused."""

    def __init__(self, zip_path: Path):
        no_dtensor_import()  # as on Gradescope: ~1.5 s of CPU and 47 MiB less per grader
        self.exercise = load_exercise(zip_path)
        self.pool, zip_secret = load_variants(zip_path)
        self.secret = variants.course_secret() or zip_secret
        self.reference: Session | None = None
        self.at: dict | None = None  # the variant the reference runs at
        self._rendered: tuple[dict | None, Exercise] = (None, self.exercise)

    def __enter__(self) -> Grader:
        self.at = variants.reserved(self.pool) if self.pool else None
        self.reference = reference_session(self.exercise)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.reference is not None:
            self.reference.close()

    def _at(self, variant: dict | None) -> Exercise:
        """The exercise at `variant`, its reference process running there."""
        if variant is None or self.pool is None:
            return self.exercise
        if self._rendered[0] == variant:  # its source rules read once per variant
            return self._rendered[1]
        source = variants.render(self.exercise.reference, variant, self.pool)
        exercise = dataclasses.replace(self.exercise, reference=source)
        self._rendered = (variant, exercise)
        if variant != self.at:
            if self.reference is not None:
                self.reference.close()
            self.reference = reference_session(exercise)
            self.at = variant
        return exercise

    def grade(
        self,
        nb: nbformat.NotebookNode,
        label: str,
        timeout: float = DEFAULT_TIMEOUT,
        ids: list[str] | None = None,
        variant: dict | None = None,
    ) -> Grade:
        """`variant`: given (the proofs), else recomputed from `ids` (`variants.variant_for`)."""
        assert self.reference is not None, "use Grader as a context manager"
        start = time.monotonic()
        sources = code_sources(nb)
        try:
            variant = variant or variants.variant_for(self.pool, ids, self.secret)
        except variants.VariantError as err:
            return Grade(label, "error", message=f"not graded: {err}")
        words = variants.label(variant, self.pool) if variant else ""
        refused = variants.refusal(sources, variant)
        if refused:
            return Grade(label, "error", message=refused, variant=words)
        exercise = self._at(variant)
        assert self.reference is not None
        data = grade_notebook(exercise, sources, self.reference, timeout)
        for t in data["tests"]:
            t["message"] = hint(t["message"]) if t["message"] else ""
        return Grade(
            label,
            data["status"],
            data["score"],
            data["possible"],
            data["questions"],
            data["tests"],
            time.monotonic() - start,
            data["message"],
            data["cell_errors"],
            data.get("isolation", {}).get("level", ""),
            words,
        )


def load_variants(zip_path: Path) -> tuple[dict | None, bytes | None]:
    """(the pool, the course secret) an autograder zip carries (`attnbook_grader.variants`)."""
    with zipfile.ZipFile(zip_path) as z:
        names = set(z.namelist())
        pool = (
            json.loads(z.read(variants.POOL_FILE))
            if variants.POOL_FILE in names
            else None
        )
        secret = (
            z.read(variants.SECRET_IN_ZIP).strip()
            if variants.SECRET_IN_ZIP in names
            else None
        )
    return pool, secret or None


def load_exercise(zip_path: Path) -> Exercise:
    """The tests and the reference solution of an autograder zip, read into memory."""
    with zipfile.ZipFile(zip_path) as z:
        tests = {
            Path(m).stem: z.read(m).decode()
            for m in z.namelist()
            if re.fullmatch(r"tests/\w+\.py", m)
        }
        reference = json.loads(z.read("reference.ipynb"))
    return Exercise.load(tests, reference)


def grade(submission: Path, zip_path: Path, timeout: float = DEFAULT_TIMEOUT) -> Grade:
    """Grade one .ipynb (its code runs in a child process, killed after `timeout` seconds)."""
    nb = nbformat.read(submission, as_version=4)
    with Grader(zip_path) as grader:
        return grader.grade(nb, str(submission), timeout)


# ----------------------------------------------------------------------------- test files
def zip_test_files(zip_path: Path, dest: Path) -> dict[str, Path]:
    """Extract the test files (tests/qN.py) of an autograder zip: question name -> path."""
    dest.mkdir(parents=True, exist_ok=True)
    found = {}
    with zipfile.ZipFile(zip_path) as z:
        for member in sorted(z.namelist()):
            if re.fullmatch(r"tests/\w+\.py", member):
                path = dest / Path(member).name
                path.write_bytes(z.read(member))
                found[path.stem] = path
    return dict(sorted(found.items()))


def function_names(test_files: dict[str, Path]) -> dict[str, str]:
    """otter's test names ("q1 - 3") -> the test functions' names, from the test files."""
    import ast

    names = {}
    for question, path in test_files.items():
        tests = [
            node.name
            for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef) and node.decorator_list
        ]
        names.update({f"{question} - {i}": fn for i, fn in enumerate(tests, start=1)})
    return names


def rename_tests(g: Grade, names: dict[str, str]) -> Grade:
    for t in g.tests:
        t["name"] = names.get(t["name"], t["name"])
    return g


def exercise_total(test_files: dict[str, Path]) -> float:
    """The points of the whole exercise, from its test files."""
    from otter.test_files.exception_test import ExceptionTestFile

    total = sum(
        ExceptionTestFile.from_file(str(p)).possible for p in test_files.values()
    )
    return round(float(total), 6)  # points in tenths: no 14.000000000000002


# ----------------------------------------------------------------------------- instructors
def question_of_cell(nb: nbformat.NotebookNode, index: int) -> str | None:
    """The question a cell belongs to: the next `grader.check("qN")` after it."""
    for cell in nb.cells[index:]:
        found = (
            re.search(r"grader\.check\(\s*[\"'](\w+)[\"']", cell.source)
            if cell.cell_type == "code"
            else None
        )
        if found:
            return found.group(1)
    return None


def read_submission(path: Path, name: str) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook, or None and a one-line reason why it cannot be graded as exercise `name`
    (`attnbook_grader.submissions`, which Gradescope's entry point reads with too)."""
    return read_notebook(path, name)


def question_points(test_files: dict[str, Path]) -> dict[str, float]:
    """Each question's points, from its test file."""
    from otter.test_files.exception_test import ExceptionTestFile

    return {
        q: round(float(ExceptionTestFile.from_file(str(p)).possible), 6)
        for q, p in test_files.items()
    }


def masters_hash(name: str, masters: Path) -> str:
    """SHA-256 of the master notebook of exercise `name` and the requirements next to the
    masters: what an autograder zip is built from (`make grade` refuses a zip built from
    other masters)."""
    digest = hashlib.sha256()
    for path in (
        masters / f"{name}.ipynb",
        masters.parent / "autograder-requirements.txt",
    ):
        digest.update(path.read_bytes() if path.is_file() else b"")
    return digest.hexdigest()


def lost_summary(g: Grade) -> str:
    """One line: per question that lost points, its first failed test and hint."""
    notes = []
    for question in sorted(g.questions):
        failed = [t for t in g.tests if t["question"] == question and not t["passed"]]
        failed.sort(key=lambda t: not t["name"].endswith("house rules"))  # why, first
        if failed:
            t = failed[0]
            more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
            notes.append(
                f"{question}: {t['name']}: {_cut(hint(t['message']), 160)}{more}"
            )
    return "; ".join(notes)


def _cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters at a word boundary, an ellipsis marking the cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if " " in head and not text[limit - 1].isspace():
        head = head[: head.rindex(" ")]
    return head.rstrip() + "\u2026"


def diagnosis(nb: nbformat.NotebookNode, graded: Grade) -> str:
    """One line for the instructor: syntax errors and cells that raised, by question."""
    notes = []
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    for code_index, error in graded.cell_errors:
        index = code_cells[code_index] if code_index < len(code_cells) else code_index
        question = question_of_cell(nb, index)
        where = f"question {question}" if question else f"cell {index}"
        if error.startswith("SyntaxError"):
            notes.append(
                f"syntax error in {where} ({error.removeprefix('SyntaxError: ')})"
            )
        elif error.startswith("dynamic code"):  # the allowlist's note: no cost
            notes.append(f"{where}: {error}")
        else:
            notes.append(f"a cell of {where} raised {error}")
    return "; ".join(notes)
