#!/usr/bin/env python3
"""Build, check, prove and grade the course's graded exercises (otter-grader 7, no Docker).

    python tools/exercises.py build            student notebooks, public checks, autograder zips
    python tools/exercises.py check            the committed student files match the masters
    python tools/exercises.py prove [NAME ...] reference 100 %, untouched stub passes no hidden
                                               test, every classic wrong answer caught
    python tools/exercises.py grade NAME DIR [--out grades.csv] [--timeout 300]

Each exercise is one master notebook `exercises/masters/NAME.ipynb` (solutions, public tests,
hidden tests). `build` runs `otter assign` on it into `_build/exercises/NAME/`, then publishes:
  - the student notebook to `exercises/student/NAME.ipynb` (it is a page of the book);
  - the public checks to `src/attnbook/exercise_checks/NAME/` (installed with the package so
    `grader.check` works on Colab and Binder too);
  - the Gradescope-compatible autograder zip to `_build/exercises/autograder/NAME.zip`.
Classic wrong answers live in `exercises/wrong_answers/NAME.py` as text edits of the reference.
Every grading call runs in its own process group under a time limit: a submission that loops
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
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "exercises" / "masters"
STUDENT = ROOT / "exercises" / "student"
CHECKS = ROOT / "src" / "attnbook" / "exercise_checks"
BUILD = ROOT / "_build" / "exercises"
WRONG_ANSWERS = ROOT / "exercises" / "wrong_answers"
ANSWER_TAG = "otter_answer_cell"
DEFAULT_TIMEOUT = 300.0


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
    student_nb = _normalise(nbformat.read(out / "student" / f"{name}.ipynb", as_version=4))
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


# ----------------------------------------------------------------------------- grading
@dataclass
class Grade:
    submission: str
    status: str  # "ok", "timeout" or "error"
    score: float = 0.0
    possible: float = 0.0
    questions: dict[str, float] = field(default_factory=dict)
    tests: list[dict] = field(default_factory=list)  # {"name", "question", "hidden", "passed"}
    seconds: float = 0.0
    message: str = ""

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.possible if self.possible else 0.0

    def passed(self, hidden: bool) -> tuple[int, int]:
        chosen = [t for t in self.tests if t["hidden"] == hidden]
        return sum(t["passed"] for t in chosen), len(chosen)


def _grade_in_this_process(submission: str, zip_path: str, out_json: str) -> None:
    """Worker: grade one submission with otter and write the per-test results as JSON."""
    import otter.api

    results = otter.api.grade_submission(submission, zip_path, quiet=True)
    tests = []
    questions = {}
    for qname, test_file in results.results.items():
        questions[qname] = float(test_file.score)
        for r in test_file.test_case_results:
            tests.append({"name": r.test_case.name, "question": qname,
                          "hidden": bool(r.test_case.hidden), "passed": bool(r.passed)})
    Path(out_json).write_text(json.dumps({
        "score": float(results.total), "possible": float(results.possible),
        "questions": questions, "tests": tests}))


def grade(submission: Path, zip_path: Path, timeout: float = DEFAULT_TIMEOUT) -> Grade:
    """Grade one .ipynb in a separate process group, killed after `timeout` seconds."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="attnbook-grade-") as tmp:
        out_json = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "_grade-one",
               str(Path(submission).resolve()), str(Path(zip_path).resolve()), str(out_json)]
        proc = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the kernel otter started dies with it
            proc.communicate()
            return Grade(str(submission), "timeout", seconds=time.monotonic() - start,
                         message=f"grading took longer than {timeout:.0f} s: scored 0")
        seconds = time.monotonic() - start
        if proc.returncode != 0 or not out_json.is_file():
            return Grade(str(submission), "error", seconds=seconds, message=log[-2000:])
        data = json.loads(out_json.read_text())
    return Grade(str(submission), "ok", data["score"], data["possible"], data["questions"],
                 data["tests"], seconds)


def grade_folder(name: str, folder: Path, out_csv: Path, timeout: float) -> list[Grade]:
    """Instructor: grade every .ipynb in `folder` against exercise `name`, write one CSV row each."""
    zip_path = BUILD / "autograder" / f"{name}.zip"
    if not zip_path.is_file():
        publish(build(name))
    submissions = sorted(Path(folder).glob("*.ipynb"))
    if not submissions:
        raise SystemExit(f"no .ipynb files in {folder}")
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        grades = list(pool.map(lambda s: grade(s, zip_path, timeout), submissions))
    questions = sorted({q for g in grades for q in g.questions})
    with open(out_csv, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "status", *questions, "score", "possible", "percent", "message"])
        for g in grades:
            writer.writerow([Path(g.submission).name, g.status,
                             *[g.questions.get(q, 0.0) for q in questions],
                             g.score, g.possible, f"{g.percent:.1f}", g.message.strip()[:200]])
    for g in grades:
        print(f"{Path(g.submission).name:40s} {g.status:8s} {g.score:5.1f}/{g.possible:<5.1f} ({g.seconds:.1f} s)")
    print(f"wrote {out_csv}")
    return grades


# ----------------------------------------------------------------------------- proofs
def load_wrong_answers(name: str) -> dict[str, list[tuple[str, str]]]:
    """label -> list of (old, new) edits, from exercises/wrong_answers/NAME.py (empty if none)."""
    path = WRONG_ANSWERS / f"{name}.py"
    return runpy.run_path(str(path))["WRONG_ANSWERS"] if path.is_file() else {}


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


def prove(names: list[str], timeout: float) -> bool:
    """Grade reference, stub and wrong answers of each exercise; print a table; True if all hold."""
    ok = True
    report = {}
    for name in names:
        built = build(name)
        problems = stale_files(built)
        publish_zip_only(built)
        cases: dict[str, list[tuple[str, str]] | None] = {"reference solution": [], "untouched student notebook": None}
        variants = load_wrong_answers(name)
        if len(variants) < 2:
            problems.append(f"{name}: needs at least two classic wrong answers, has {len(variants)}")
        cases.update(variants)
        subs_dir = BUILD / name / "submissions"
        subs_dir.mkdir(parents=True, exist_ok=True)
        paths = []
        for i, (label, edits) in enumerate(cases.items()):
            path = subs_dir / f"{i:02d}.ipynb"
            nbformat.write(make_submission(built, edits), path)
            paths.append(path)
        with ThreadPoolExecutor(max_workers=2) as pool:
            grades = list(pool.map(lambda p: grade(p, built.autograder_zip, timeout), paths))
        sneaky = 0
        print(f"\n{name}")
        print(f"  {'submission':66s} {'score':>7s} {'public':>7s} {'hidden':>7s}  verdict")
        for (label, _), g in zip(cases.items(), grades):
            pub, n_pub = g.passed(hidden=False)
            hid, n_hid = g.passed(hidden=True)
            if label == "reference solution":
                good = g.status == "ok" and g.score == g.possible > 0 and pub == n_pub and hid == n_hid
                expect = "scores 100 %"
            elif label == "untouched student notebook":
                good = g.status == "ok" and n_hid > 0 and hid == 0
                expect = "passes no hidden test"
            else:
                good = g.status == "ok" and hid < n_hid and g.score < g.possible
                expect = "loses points on hidden tests"
                if good and pub == n_pub > 0:
                    sneaky += 1
                    expect = "passes every public check, caught by hidden tests"
            ok &= good
            verdict = ("OK: " if good else "FAILED: expected it ") + expect
            if g.status != "ok":
                verdict += f" [{g.status}: {g.message.strip()[-300:]}]"
            print(f"  {label[:66]:66s} {g.percent:6.1f}% {pub:>3d}/{n_pub:<3d} {hid:>3d}/{n_hid:<3d}  {verdict}")
        if sneaky < 2:
            problems.append(f"{name}: only {sneaky} wrong answers pass the public checks and are "
                            "caught by hidden tests; at least two must")
        for p in problems:
            print(f"  FAILED: {p}")
        ok &= not problems
        report[name] = {label: asdict(g) for (label, _), g in zip(cases.items(), grades)}
    (BUILD / "proof.json").write_text(json.dumps(report, indent=1))
    return ok


def publish_zip_only(built: Built) -> None:
    (BUILD / "autograder").mkdir(parents=True, exist_ok=True)
    shutil.copy(built.autograder_zip, BUILD / "autograder" / f"{built.name}.zip")


# ----------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_grade-one"]:
        _grade_in_this_process(*argv[1:4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_build = sub.add_parser("build", help="build and publish every (or the named) exercise")
    p_build.add_argument("names", nargs="*")
    p_check = sub.add_parser("check", help="fail if committed student files are stale")
    p_check.add_argument("names", nargs="*")
    p_prove = sub.add_parser("prove", help="CI proofs: reference, stub, wrong answers")
    p_prove.add_argument("names", nargs="*")
    p_prove.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    p_grade = sub.add_parser("grade", help="grade a folder of submissions to a CSV")
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
        return 0 if prove(names, args.timeout) else 1
    if args.command == "grade":
        grade_folder(args.name, args.folder, args.out or Path(f"grades-{args.name}.csv"), args.timeout)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
