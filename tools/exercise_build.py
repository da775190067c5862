"""Building the exercises (half of `tools/exercises.py`, which documents the whole tool):
`otter assign` on a master notebook, then the student notebook, its public checks and the
autograder zip, published where the book and the package serve them from, and the worked
solutions page of the book.

The masters are public. An instructor who grades for credit keeps a private copy (other
hidden tests, other data) and builds, grades and proves from it with `MASTERS=path` (make) or
`--masters path` (the command line), which set the environment variable ATTNBOOK_MASTERS
that this module reads: `exercise_names()` and `build()` then read that folder, the proofs
take their wrong answers from a `wrong_answers/` folder beside it (if there is one), and no
solutions page is written or linked from it.
"""

from __future__ import annotations

import copy
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools.exercise_solutions import solutions_notebook

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_MASTERS = ROOT / "exercises" / "masters"
MASTERS = Path(os.environ.get("ATTNBOOK_MASTERS") or PUBLIC_MASTERS).resolve()
PRIVATE = MASTERS != PUBLIC_MASTERS.resolve()
STUDENT = ROOT / "exercises" / "student"
SOLUTIONS = ROOT / "exercises" / "solutions"
CHECKS = ROOT / "src" / "attnbook" / "exercise_checks"
BUILD = ROOT / "_build" / "exercises"
WRONG_ANSWERS = (
    MASTERS.parent / "wrong_answers"
    if PRIVATE and (MASTERS.parent / "wrong_answers").is_dir()
    else ROOT / "exercises" / "wrong_answers"
)
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
    solutions_nb: (
        nbformat.NotebookNode | None
    )  # the book's page; None from private masters


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
    url = book_url()  # (_config.yml read once, not once a cell: 0.2 s a build)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace("{{ book_url }}", url)
    return nb


def link_to_solutions(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The student notebook's first text cell ends with a link to the solutions page."""
    first = next(c for c in nb.cells if c.cell_type == "markdown")
    first.source = first.source.rstrip("\n") + (
        "\n\n**Worked solutions.** The exercise's master notebook is public, so its "
        f"[worked solutions]({book_url()}exercises/solutions/{name}.html) are a page of the "
        "book: try each question before you open them."
    )
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
    solutions_nb = None
    if not PRIVATE:
        student_nb = link_to_solutions(student_nb, name)
        solutions_nb = _normalise(solutions_notebook(name, master, link_to_book))
    # the notebook to hand out, as published (book link filled in, solutions line), not otter's raw copy
    nbformat.write(student_nb, out / "student" / f"{name}.ipynb")
    public = {
        p.name: p.read_text() for p in sorted((out / "student" / "tests").glob("*.py"))
    }
    for fname, text in public.items():
        if "hidden=True" in text:
            raise ExerciseError(
                f"{name}/{fname}: a hidden test reached the student folder"
            )
    return Built(
        name,
        student_nb,
        public,
        zips[0],
        out / "autograder" / f"{name}.ipynb",
        solutions_nb,
    )


def _assign(name: str, master: Path, out: Path) -> None:
    """`otter assign --no-run-tests master out`, in this process (its output kept for the
    error message): a proof builds every exercise, one Python start and one import of otter
    for all of them."""
    import contextlib
    import io

    from otter.assign import main as assign

    from tools.exercise_messages import course_test_files

    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            with course_test_files():  # the test files use the course's test_case
                assign(str(master), str(out), no_run_tests=True)
    except Exception as err:  # noqa: BLE001 - otter's errors are of many kinds
        raise ExerciseError(
            f"otter assign failed for {name}: {type(err).__name__}: {err}\n{log.getvalue()}"
        ) from None


TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
GRADESCOPE_SOURCE = "/autograder/source"  # where Gradescope unpacks the zip
# the modes of the zip's files, chosen (a bare ZipInfo gets 600, otter's tests 644): only
# the grader, root on Gradescope, reads them; the two scripts it runs are executable
_EXECUTABLE = ("run_autograder", "setup.sh")


def locked_pins(names: tuple[str, ...] = ("numpy", "torch")) -> dict[str, str]:
    """name -> version pinned in requirements/lock.txt (torch: its Linux CPU build)."""
    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        for name in names:
            if line.startswith(f"{name}==") and (
                name != "torch" or "+cpu" in line.split(";")[0]
            ):
                pins[name] = line.split(";")[0].split("==")[1].strip(" \\")
    return pins


def pinned_environment(text: str, wheels: dict[str, str] | None = None) -> str:
    """otter's environment.yml with numpy and torch pinned as the lock pins them, torch
    the CPU build from PyTorch's CPU index (not the multi-GB CUDA build), otter's line
    replaced by the lock's pins of everything the engine imports (`_closure`, no Jupyter
    server), and the course
    package and its grading engine installed from the wheels the zip carries (`wheels`:
    distribution name -> the wheel's path once Gradescope unpacked the zip) where the
    requirements pin them (at this checkout's version, or refused)."""
    pins = locked_pins()
    carried = dict(wheels or {})
    closure = _closure(wheels)
    lines = []
    for line in text.splitlines():
        name = line.strip().removeprefix("- ").strip()
        indent = line[: len(line) - len(line.lstrip())]
        dist, _, pinned = name.partition("==")
        if name in _UNUSED:
            continue
        if dist.split("[")[0] == "otter-grader" and wheels:
            lines += [f"{indent}- {pin}" for pin in closure]
            closure = []  # once
        elif wheels and dist in wheels:
            built = Path(wheels[dist]).name.split("-")[1]
            if pinned and pinned != built:
                raise ExerciseError(
                    f"the autograder's requirements pin {name}, this checkout is {built}: "
                    "run `make release-files` (the masters' autograder-requirements.txt)"
                )
            lines += [f"{indent}- {path}" for path in carried.values()]
            carried.clear()
        elif name == "torch" and "torch" in pins:
            lines.append(f"{indent}- --extra-index-url {TORCH_CPU_INDEX}")
            lines.append(f"{indent}- torch=={pins['torch']}")
        elif name in pins:
            lines.append(f"{indent}- {name}=={pins[name]}")
        else:
            lines.append(line)
    if wheels and len(carried) == len(wheels):
        raise ExerciseError(
            "the autograder's requirements (autograder-requirements.txt beside the "
            "masters) name no attnbook: the zip could not install the course"
        )
    return "\n".join(lines) + "\n"


_UNUSED = ("jupyter_server",)  # otter's environment: what the engine never runs


def _closure(wheels: dict[str, str] | None) -> list[str]:
    """The lock's pins of the engine's dependency closure but what `pinned_environment`
    pins itself (numpy, torch, the carried wheels); none for a bare test of that function."""
    from tools.exercise_wheels import WheelError, closure_pins

    if not wheels or "attnbook-grader" not in wheels:
        return []
    try:
        return closure_pins(skip=("numpy", "torch", *wheels))
    except WheelError as err:
        raise ExerciseError(str(err)) from None


_VARIANT_FILES = ("variants.json", "course_secret")  # `attnbook_grader.variants`


def seal_zip(zip_path: Path, reference_nb: Path) -> None:
    """Make the autograder zip grade with the course's engine: its `run_otter.py` calls
    `attnbook_grader.autograder.main` (the submission runs in a child process, the
    grade is decided in the grader's), and the reference solution travels with the tests.
    The zip carries the wheels of the course and of the engine built from this checkout
    (`tools/exercise_wheels.py`, in wheels/) and its environment installs them, beside
    numpy and the CPU build of torch as the lock pins them. Every file gets a mode chosen
    here (root's only, 600; the scripts 700)."""
    import zipfile

    from attnbook_grader.autograder import RUN_SCRIPT
    from attnbook_grader.otter_plugin import engine_only_config

    from tools.exercise_wheels import IN_ZIP, SETUP_SCRIPT, WheelError, course_wheels
    from tools.exercise_variants import zip_members as variant_members

    try:
        wheels = course_wheels()
    except WheelError as err:
        raise ExerciseError(str(err)) from None
    in_zip = {name: f"{IN_ZIP}/{path.name}" for name, path in wheels.items()}

    with zipfile.ZipFile(zip_path) as z:
        members = [
            (info.filename, z.read(info))
            for info in z.infolist()
            if info.filename not in ("run_otter.py", "reference.ipynb", *_VARIANT_FILES)
            and not info.is_dir()
        ]
    members = [(n, data) for n, data in members if not n.startswith(f"{IN_ZIP}/")]
    members += [
        ("run_otter.py", RUN_SCRIPT.encode()),
        ("reference.ipynb", reference_nb.read_bytes()),
        *((in_zip[name], path.read_bytes()) for name, path in wheels.items()),
        *variant_members(reference_nb.stem),  # its pool of variants (and course secret)
    ]
    gradescope = {name: f"{GRADESCOPE_SOURCE}/{p}" for name, p in in_zip.items()}
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            if name == "otter_config.json":
                data = engine_only_config(data)
            elif name == "environment.yml":
                data = pinned_environment(data.decode(), gradescope).encode()
            elif name == "setup.sh":  # otter's installs a browser, TeX, compilers
                data = SETUP_SCRIPT.encode()
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            mode = 0o700 if name in _EXECUTABLE else 0o600
            info.external_attr = (0o100000 | mode) << 16  # a regular file, `mode`
            info.create_system = 3  # Unix: unzip applies the mode
            z.writestr(info, data, zipfile.ZIP_DEFLATED)


def publish(built: Built) -> None:
    """Write the student notebook, the public checks and the zip where they are served from:
    the only step that writes outside `_build/` (`python -m tools.exercises publish`)."""
    STUDENT.mkdir(parents=True, exist_ok=True)
    nbformat.write(built.student_nb, STUDENT / f"{built.name}.ipynb")
    if built.solutions_nb is not None:
        SOLUTIONS.mkdir(parents=True, exist_ok=True)
        nbformat.write(built.solutions_nb, SOLUTIONS / f"{built.name}.ipynb")
    checks = CHECKS / built.name
    checks.mkdir(parents=True, exist_ok=True)
    for old in checks.glob("*.py"):
        old.unlink()
    for fname, text in built.public_tests.items():
        (checks / fname).write_text(text)
    (BUILD / "autograder").mkdir(parents=True, exist_ok=True)
    publish_zip_only(built)


def stale_files(built: Built) -> list[str]:
    """What differs between a fresh build and the committed student files (empty = in sync).
    From a private copy of the masters nothing is compared: the committed files are the
    public masters' (`publish` with MASTERS set writes the private ones, if that is wanted)."""
    if PRIVATE:
        return []
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
    solutions = SOLUTIONS / f"{built.name}.ipynb"
    if built.solutions_nb is not None and (
        not solutions.is_file()
        or [(c.cell_type, c.source) for c in nbformat.read(solutions, 4).cells]
        != [(c.cell_type, c.source) for c in built.solutions_nb.cells]
    ):
        problems.append(f"{solutions.relative_to(ROOT)} differs from its master")
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
    (BUILD / "autograder" / f"{built.name}.masters").write_text(f"{MASTERS}\n")
    from tools.exercise_grading import masters_hash  # `make grade` refuses a stale zip

    stamp = BUILD / "autograder" / f"{built.name}.sha256"
    stamp.write_text(masters_hash(built.name, MASTERS) + "\n")


def built_zip(name: str, build_dir: Path = BUILD) -> Path | None:
    """`_build/exercises/autograder/NAME.zip` if the last build made it from the masters in
    use (public or private: a zip of the other kind is never graded with), else None."""
    zip_path = build_dir / "autograder" / f"{name}.zip"
    source = zip_path.with_suffix(".masters")
    if (
        zip_path.is_file()
        and source.is_file()
        and source.read_text().strip() == str(MASTERS)
    ):
        return zip_path
    return None
