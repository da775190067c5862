"""Building the exercises (half of `tools/exercises.py`, which documents the whole tool):
`otter assign` on a master notebook, then the student notebook, its public checks and the
autograder zip, published where the book and the package serve them from.
"""

from __future__ import annotations

import copy
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "exercises" / "masters"
STUDENT = ROOT / "exercises" / "student"
CHECKS = ROOT / "src" / "attnbook" / "exercise_checks"
BUILD = ROOT / "_build" / "exercises"
WRONG_ANSWERS = ROOT / "exercises" / "wrong_answers"
ANSWER_TAG = "otter_answer_cell"


class ExerciseError(Exception):
    """An exercise cannot be built, proven or graded as asked (the command line exits 1)."""


# ----------------------------------------------------------------------------- building
@dataclass
class Built:
    name: str
    student_nb: nbformat.NotebookNode  # normalised, as committed
    public_tests: dict[str, str]  # file name -> text
    autograder_zip: Path
    reference_nb: Path  # otter's solution notebook


def exercise_names() -> list[str]:
    return sorted(p.stem for p in MASTERS.glob("*.ipynb"))


def _normalise(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip outputs and run metadata so the committed student notebook is stable."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.pop("id", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.nbformat_minor = 4
    return nb


def book_url() -> str:
    """The published book's address, from `html.baseurl` in _config.yml (its one source)."""
    import yaml

    url = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["baseurl"]
    return url if url.endswith("/") else url + "/"


def link_to_book(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Masters write chapter links as `{{ book_url }}book/NN_name.html`: the student notebook
    (opened in Colab, far from the repository) gets the published book's address."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace("{{ book_url }}", book_url())
    return nb


def build(name: str, out: Path | None = None) -> Built:
    """Run otter assign on one master notebook into `out` (default `_build/exercises/NAME`)."""
    master = MASTERS / f"{name}.ipynb"
    if not master.is_file():
        raise ExerciseError(
            f"no master notebook {master.relative_to(ROOT)}; known: {exercise_names()}"
        )
    out = out or BUILD / name
    shutil.rmtree(out, ignore_errors=True)
    _assign(name, master, out)
    zips = sorted((out / "autograder").glob("*-autograder_*.zip"))
    if len(zips) != 1:
        raise ExerciseError(f"expected one autograder zip for {name}, found {zips}")
    seal_zip(zips[0], out / "autograder" / f"{name}.ipynb")
    student_nb = link_to_book(
        _normalise(nbformat.read(out / "student" / f"{name}.ipynb", as_version=4))
    )
    public = {
        p.name: p.read_text() for p in sorted((out / "student" / "tests").glob("*.py"))
    }
    for fname, text in public.items():
        if "hidden=True" in text:
            raise ExerciseError(
                f"{name}/{fname}: a hidden test reached the student folder"
            )
    return Built(
        name, student_nb, public, zips[0], out / "autograder" / f"{name}.ipynb"
    )


def _assign(name: str, master: Path, out: Path) -> None:
    """`otter assign --no-run-tests master out`, in this process (its output kept for the
    error message): a proof builds nine exercises, one Python start and one import of otter
    for all of them."""
    import contextlib
    import io

    from otter.assign import main as assign

    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            assign(str(master), str(out), no_run_tests=True)
    except Exception as err:  # noqa: BLE001 - otter's errors are of many kinds
        raise ExerciseError(
            f"otter assign failed for {name}: {type(err).__name__}: {err}\n{log.getvalue()}"
        ) from None


def seal_zip(zip_path: Path, reference_nb: Path) -> None:
    """Make the autograder zip grade with the course's engine: its `run_otter.py` calls
    `attnbook.exercise_checks.autograder.main` (the submission runs in a child process, the
    grade is decided in the grader's), and the reference solution travels with the tests."""
    import zipfile

    from attnbook.exercise_checks.autograder import RUN_SCRIPT
    from attnbook.exercise_checks.otter_plugin import engine_only_config

    # the entries keep their permissions (run_autograder); `otter run` refuses (its plugin)
    with zipfile.ZipFile(zip_path) as z:
        members = [
            (info, z.read(info))
            if info.filename != "otter_config.json"
            else (info, engine_only_config(z.read(info)))
            for info in z.infolist()
            if info.filename not in ("run_otter.py", "reference.ipynb")
        ]
    members += [
        (zipfile.ZipInfo("run_otter.py"), RUN_SCRIPT.encode()),
        (zipfile.ZipInfo("reference.ipynb"), reference_nb.read_bytes()),
    ]
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in members:
            z.writestr(info, data, zipfile.ZIP_DEFLATED)


def publish(built: Built) -> None:
    """Write the student notebook, the public checks and the zip where they are served from:
    the only step that writes outside `_build/` (`python -m tools.exercises publish`)."""
    STUDENT.mkdir(parents=True, exist_ok=True)
    nbformat.write(built.student_nb, STUDENT / f"{built.name}.ipynb")
    checks = CHECKS / built.name
    checks.mkdir(parents=True, exist_ok=True)
    for old in checks.glob("*.py"):
        old.unlink()
    for fname, text in built.public_tests.items():
        (checks / fname).write_text(text)
    (BUILD / "autograder").mkdir(parents=True, exist_ok=True)
    shutil.copy(built.autograder_zip, BUILD / "autograder" / f"{built.name}.zip")


def stale_files(built: Built) -> list[str]:
    """What differs between a fresh build and the committed student files (empty = in sync)."""
    problems = []
    committed = STUDENT / f"{built.name}.ipynb"
    if not committed.is_file():
        problems.append(f"{committed.relative_to(ROOT)} is missing")
    else:
        have = _normalise(nbformat.read(committed, as_version=4))
        want = built.student_nb
        if [(c.cell_type, c.source) for c in have.cells] != [
            (c.cell_type, c.source) for c in want.cells
        ]:
            problems.append(f"{committed.relative_to(ROOT)} differs from its master")
    checks = CHECKS / built.name
    have_tests = {p.name: p.read_text() for p in sorted(checks.glob("*.py"))}
    if have_tests != built.public_tests:
        problems.append(
            f"{checks.relative_to(ROOT)} differs from the master's public tests"
        )
    return problems


def publish_zip_only(built: Built) -> None:
    (BUILD / "autograder").mkdir(parents=True, exist_ok=True)
    shutil.copy(built.autograder_zip, BUILD / "autograder" / f"{built.name}.zip")
