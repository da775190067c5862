#!/usr/bin/env python3
"""Build, check, prove and grade the course's graded exercises (otter-grader 7, no Docker).

    python tools/exercises.py build            student notebooks, public checks, autograder zips
    python tools/exercises.py check            the committed student files match the masters
    python tools/exercises.py prove [NAME ...] the proofs of `make exercises-prove` (below)
    python tools/exercises.py grade NAME DIR [--out grades.csv] [--timeout 300]

Each exercise is one master notebook `exercises/masters/NAME.ipynb` (solutions, public tests,
hidden tests). `build` runs `otter assign` on it into `_build/exercises/NAME/`, then publishes:
  - the student notebook to `exercises/student/NAME.ipynb` (it is a page of the book), its
    chapter links pointing at the published book (`html.baseurl` of _config.yml);
  - the public checks to `src/attnbook/exercise_checks/NAME/` (installed with the package so
    `grader.check` works on Colab and Binder too);
  - the Gradescope-compatible autograder zip to `_build/exercises/autograder/NAME.zip`.

`prove` requires, for every exercise: the reference solution scores 100 %, the untouched
student notebook 0, every wrong answer of `exercises/wrong_answers/NAME.py` (text edits of the
reference) less than 100 % and a tampering one exactly 0; each question has a listed mistake
that one of its public checks flags; it prints the message each mistake gets. The reference and
the untouched notebook go through otter's whole pipeline (a kernel per notebook); the wrong
answers through the fast path: one process per exercise, forked once per submission, running
the submission's cells and then the autograder's own test files with otter's own test classes
(the proof checks that both paths give the same verdicts). Exercises run two at a time.

`grade` (instructors) writes a CSV with one line per submission (`possible` is always the
exercise's total; the message says in one line what went wrong: not a notebook, the wrong
exercise, a syntax error in question N, a cell that raised, a timeout) and, beside it, a
report of the pass rate of every hidden test and its most frequent failure message. It never
writes into the repository. Every grading runs under a time limit: a submission that loops
forever gets a grade (zero, status "timeout"), never a hang.
"""
from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exercise_grading import (  # noqa: E402 - the other half of this tool, beside it
    DEFAULT_TIMEOUT, Grade, OtterRun, class_report, diagnosis, exercise_total, fast_grade,
    function_names, grade, preload, read_submission, rename_tests, zip_test_files,
)

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "exercises" / "masters"
STUDENT = ROOT / "exercises" / "student"
CHECKS = ROOT / "src" / "attnbook" / "exercise_checks"
BUILD = ROOT / "_build" / "exercises"
WRONG_ANSWERS = ROOT / "exercises" / "wrong_answers"
ANSWER_TAG = "otter_answer_cell"


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
        raise SystemExit(f"no master notebook {master.relative_to(ROOT)}; known: {exercise_names()}")
    out = out or BUILD / name
    shutil.rmtree(out, ignore_errors=True)
    (CHECKS / name).mkdir(parents=True, exist_ok=True)  # the init cell needs it to exist
    cmd = [sys.executable, "-m", "otter", "assign", "--no-run-tests", str(master), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"otter assign failed for {name}:\n{proc.stdout}\n{proc.stderr}")
    zips = sorted((out / "autograder").glob("*-autograder_*.zip"))
    if len(zips) != 1:
        raise SystemExit(f"expected one autograder zip for {name}, found {zips}")
    student_nb = link_to_book(_normalise(nbformat.read(out / "student" / f"{name}.ipynb", as_version=4)))
    public = {p.name: p.read_text() for p in sorted((out / "student" / "tests").glob("*.py"))}
    for fname, text in public.items():
        if "hidden=True" in text:
            raise SystemExit(f"{name}/{fname}: a hidden test reached the student folder")
    return Built(name, student_nb, public, zips[0], out / "autograder" / f"{name}.ipynb")


def publish(built: Built) -> None:
    """Write the student notebook, the public checks and the zip where they are served from."""
    STUDENT.mkdir(parents=True, exist_ok=True)
    nbformat.write(built.student_nb, STUDENT / f"{built.name}.ipynb")
    checks = CHECKS / built.name
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
        if [(c.cell_type, c.source) for c in have.cells] != [(c.cell_type, c.source) for c in want.cells]:
            problems.append(f"{committed.relative_to(ROOT)} differs from its master")
    checks = CHECKS / built.name
    have_tests = {p.name: p.read_text() for p in sorted(checks.glob("*.py"))}
    if have_tests != built.public_tests:
        problems.append(f"{checks.relative_to(ROOT)} differs from the master's public tests")
    return problems


def grade_folder(name: str, folder: Path, out_csv: Path, timeout: float,
                 fast_timeout: float | None = None) -> list[Grade]:
    """Instructor: grade every file in `folder` against exercise `name`: one CSV row each and,
    beside the CSV, a per-question report of the hidden tests. Writes nothing into the repository.

    Each notebook first runs through the fast path (within `fast_timeout`, default `timeout`),
    which finds syntax errors, cells that raise and endless loops (those get "timeout" there and
    then); the grade itself comes from otter's own pipeline (within `timeout` each)."""
    submissions = sorted(p for p in Path(folder).iterdir() if p.is_file() and not p.name.startswith("."))
    if not submissions:
        raise SystemExit(f"no files in {folder}")
    with tempfile.TemporaryDirectory(prefix="attnbook-grading-") as tmp:
        zip_path = BUILD / "autograder" / f"{name}.zip"
        if not zip_path.is_file():  # build into the temporary folder, never into the repository
            zip_path = build(name, Path(tmp) / name).autograder_zip
        test_files = zip_test_files(zip_path, Path(tmp) / "tests")
        total = exercise_total(test_files)
        names = function_names(test_files)
        preload()
        readable, notes, stopped = {}, {}, {}
        for path in submissions:  # the fast path first: forks are safe before any thread starts
            nb, problem = read_submission(path, name)
            notes[path] = problem
            if nb is None:
                continue
            fast = fast_grade(nb, test_files, str(path), fast_timeout or timeout)
            if fast.status == "ok":
                readable[path] = nb
                notes[path] = diagnosis(nb, fast)
            else:
                stopped[path] = fast
        with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
            graded = dict(zip(readable, pool.map(lambda p: grade(p, zip_path, timeout), readable)))
    grades = []
    for path in submissions:
        g = graded.get(path) or stopped.get(path) or Grade(str(path), "error", message=notes[path])
        if g.status == "ok" and notes[path]:
            g.message = notes[path]
        g.possible = total  # always the exercise's total, whatever happened
        grades.append(rename_tests(g, names))
    questions = sorted(test_files)
    with open(out_csv, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "status", *questions, "score", "possible", "percent", "message"])
        for g in grades:
            writer.writerow([Path(g.submission).name, g.status, *[g.questions.get(q, 0.0) for q in questions],
                             g.score, g.possible, f"{g.percent:.1f}", " ".join(g.message.split())[:300]])
    report = out_csv.with_name(out_csv.stem + "-report.txt")
    report.write_text(class_report(name, grades))
    for g in grades:
        print(f"{Path(g.submission).name:40s} {g.status:8s} {g.score:5.1f}/{g.possible:<5.1f} "
              f"({g.seconds:.1f} s) {g.message[:80]}")
    print(f"wrote {out_csv} and {report}")
    return grades


# ----------------------------------------------------------------------------- proofs
# What a tampering submission runs first (the wrong-answer files use it as TAMPER): every
# comparison a test could use now passes.
TAMPER = """import numpy as _np, torch as _torch
_torch.testing.assert_close = lambda *args, **kwargs: None
_np.testing.assert_allclose = lambda *args, **kwargs: None
_torch.equal = lambda *args, **kwargs: True
_torch.allclose = lambda *args, **kwargs: True

"""


def load_wrong_answers(name: str) -> dict[str, list[tuple[str, str]]]:
    """label -> list of (old, new) edits, from exercises/wrong_answers/NAME.py (empty if none)."""
    path = WRONG_ANSWERS / f"{name}.py"
    if not path.is_file():
        return {}
    return runpy.run_path(str(path), init_globals={"TAMPER": TAMPER})["WRONG_ANSWERS"]


def answer_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code" and ANSWER_TAG in c.metadata.get("tags", [])]


def reference_answer(built: Built, student_source: str) -> str:
    """The solution notebook's cell that fills the student answer cell (same first line)."""
    first = student_source.splitlines()[0]
    solution = nbformat.read(built.reference_nb, as_version=4)
    found = [c.source for c in solution.cells
             if c.cell_type == "code" and c.source.splitlines()[:1] == [first]]
    if len(found) != 1:
        raise SystemExit(f"{built.name}: {len(found)} solution cells start with {first!r}; expected 1")
    return found[0]


def make_submission(built: Built, edits: list[tuple[str, str]] | None) -> nbformat.NotebookNode:
    """The student notebook with its answer cells filled in from the reference solution,
    after applying `edits` (each `old` must occur exactly once across the answers).
    `edits=None` gives the untouched student notebook."""
    nb = copy.deepcopy(built.student_nb)
    if edits is None:
        return nb
    mine = answer_cells(nb)
    if not mine:
        raise SystemExit(f"{built.name}: the student notebook has no answer cells")
    sources = [reference_answer(built, cell.source) for cell in mine]
    for old, new in edits:
        hits = sum(s.count(old) for s in sources)
        if hits != 1:
            raise SystemExit(f"{built.name}: wrong-answer edit {old!r} matches {hits} times, not once")
        sources = [s.replace(old, new) for s in sources]
    for cell, source in zip(mine, sources):
        cell.source = source
    return nb


REFERENCE, UNTOUCHED = "reference solution", "untouched student notebook"
TAMPER_PREFIX = "tampering:"  # wrong answers whose label starts so must score exactly 0


def prove_one(name: str, out_json: Path, timeout: float) -> None:
    """Worker of `prove` for one exercise: build it, grade the reference and the untouched
    notebook with the real otter pipeline AND the fast path (their verdicts must agree), and
    every wrong answer with the fast path. Writes the grades as JSON."""
    built = build(name)
    problems = stale_files(built)
    publish_zip_only(built)
    work = BUILD / name / "proof"
    shutil.rmtree(work, ignore_errors=True)
    test_files = zip_test_files(built.autograder_zip, work / "tests")
    cases: dict[str, list[tuple[str, str]] | None] = {REFERENCE: [], UNTOUCHED: None}
    cases.update(load_wrong_answers(name))
    notebooks = {label: make_submission(built, edits) for label, edits in cases.items()}
    paths = {}
    for i, label in enumerate((REFERENCE, UNTOUCHED)):
        paths[label] = work / f"{i:02d}.ipynb"
        nbformat.write(notebooks[label], paths[label])
    preload(notebooks[REFERENCE], test_files)  # the fast path forks this warmed-up process
    otter_run = OtterRun(list(paths.values()), built.autograder_zip, 2 * timeout)  # meanwhile:
    fast = {label: fast_grade(nb, test_files, label, timeout) for label, nb in notebooks.items()}
    real = dict(zip(paths, otter_run.result()))
    names = function_names(test_files)
    fast = {label: rename_tests(g, names) for label, g in fast.items()}
    real = {label: rename_tests(g, names) for label, g in real.items()}
    out_json.write_text(json.dumps({
        "problems": problems, "questions": list(test_files),
        "fast": {label: asdict(g) for label, g in fast.items()},
        "real": {label: asdict(g) for label, g in real.items()}}))


def _verdicts(g: Grade) -> list[tuple[str, bool]]:
    return [(t["name"], t["passed"]) for t in g.tests]


def check_proof(name: str, data: dict) -> bool:
    """Print one exercise's table and the message each mistake gets; True if every rule holds."""
    problems = list(data["problems"])
    fast = {label: Grade(**g) for label, g in data["fast"].items()}
    real = {label: Grade(**g) for label, g in data["real"].items()}
    print(f"\n{name}")
    print(f"  {'submission':70s} {'score':>6s} {'public':>7s} {'hidden':>7s}  verdict")
    flagged = set()  # questions with a mistake that a public check flags
    for label, g in fast.items():
        pub, n_pub = g.passed(hidden=False)
        hid, n_hid = g.passed(hidden=True)
        if label == REFERENCE:
            good, expect = g.status == "ok" and g.score == g.possible > 0 and hid == n_hid and pub == n_pub, "100 %"
        elif label == UNTOUCHED:
            good, expect = g.status == "ok" and g.score == 0 and n_hid > 0, "0 points"
        elif label.startswith(TAMPER_PREFIX):
            good, expect = g.status == "ok" and g.score == 0, "0 points (tampering)"
        else:
            good, expect = g.status == "ok" and g.score < g.possible and hid < n_hid, "below 100 %"
        if label in real:
            r = real[label]
            same = r.status == "ok" and r.score == g.score and _verdicts(r) == _verdicts(g)
            if not same:
                problems.append(f"{label}: the fast path ({g.score}, {g.status}) and otter's pipeline "
                                f"({r.score}, {r.status} {r.message}) disagree")
            expect += ", same verdicts as otter's own pipeline"
        if label not in (REFERENCE, UNTOUCHED):
            flagged |= {t["question"] for t in g.tests if not t["hidden"] and not t["passed"]}
        verdict = ("OK: " if good else "FAILED: expected ") + expect
        if g.status != "ok":
            verdict += f" [{g.status}: {g.message}]"
        print(f"  {label[:70]:70s} {g.percent:5.1f}% {pub:>3d}/{n_pub:<3d} {hid:>3d}/{n_hid:<3d}  {verdict}")
        if label not in (REFERENCE, UNTOUCHED) and g.status == "ok":
            public_msg, hidden_msg = g.first_failure(hidden=False), g.first_failure(hidden=True)
            print(f"      public check says: {public_msg[:150] or '(all public checks pass)'}")
            print(f"      hidden tests say:  {hidden_msg[:150] or '(all hidden tests pass)'}")
        if not good:
            problems.append(f"{label}: expected {expect}")
    for question in data["questions"]:
        if question not in flagged:
            problems.append(f"question {question}: no listed mistake is flagged by a public check")
    if len(fast) < 4:
        problems.append("needs wrong answers in exercises/wrong_answers/")
    for p in problems:
        print(f"  FAILED: {p}")
    return not problems


def prove(names: list[str], timeout: float, jobs: int = 2) -> bool:
    """Every proof of every exercise, `jobs` exercises at a time (one process each)."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="attnbook-prove-") as tmp:
        def run(name: str) -> tuple[str, dict | None, str]:
            out = Path(tmp) / f"{name}.json"
            cmd = [sys.executable, str(Path(__file__).resolve()), "_prove-one", name, str(out), str(timeout)]
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if proc.returncode != 0 or not out.is_file():
                return name, None, proc.stdout + proc.stderr
            return name, json.loads(out.read_text()), ""

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(run, names))
    ok, report = True, {}
    for name, data, log in results:
        if data is None:
            print(f"\n{name}\n  FAILED: the proof did not run:\n{log[-3000:]}")
            ok = False
            continue
        ok &= check_proof(name, data)
        report[name] = data
    (BUILD / "proof.json").write_text(json.dumps(report, indent=1))
    print(f"\n{'all proofs hold' if ok else 'SOME PROOFS FAILED'} ({time.monotonic() - start:.0f} s)")
    return ok


def publish_zip_only(built: Built) -> None:
    (BUILD / "autograder").mkdir(parents=True, exist_ok=True)
    shutil.copy(built.autograder_zip, BUILD / "autograder" / f"{built.name}.zip")


# ----------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_prove-one"]:
        prove_one(argv[1], Path(argv[2]), float(argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_build = sub.add_parser("build", help="build and publish every (or the named) exercise")
    p_build.add_argument("names", nargs="*")
    p_check = sub.add_parser("check", help="fail if committed student files are stale")
    p_check.add_argument("names", nargs="*")
    p_prove = sub.add_parser("prove", help="CI proofs: reference, stub, wrong answers")
    p_prove.add_argument("names", nargs="*")
    p_prove.add_argument("--timeout", type=float, default=120.0)
    p_prove.add_argument("--jobs", type=int, default=2)
    p_grade = sub.add_parser("grade", help="grade a folder of submissions to a CSV and a report")
    p_grade.add_argument("name")
    p_grade.add_argument("folder", type=Path)
    p_grade.add_argument("--out", type=Path, default=None)
    p_grade.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    args = parser.parse_args(argv)

    names = getattr(args, "names", None) or exercise_names()
    if args.command == "build":
        for name in names:
            built = build(name)
            publish(built)
            print(f"{name}: exercises/student/{name}.ipynb, "
                  f"src/attnbook/exercise_checks/{name}/, _build/exercises/autograder/{name}.zip")
        return 0
    if args.command == "check":
        problems = [p for name in names for p in stale_files(build(name))]
        for p in problems:
            print(f"stale: {p} (run `make exercises`)")
        return 1 if problems else 0
    if args.command == "prove":
        return 0 if prove(names, args.timeout, args.jobs) else 1
    if args.command == "grade":
        if args.name not in exercise_names():
            raise SystemExit(f"unknown exercise {args.name!r}; known: {exercise_names()}")
        grade_folder(args.name, args.folder, args.out or Path(f"grades-{args.name}.csv"), args.timeout)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
