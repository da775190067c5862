"""The proofs of `make exercises-prove` (documented in `tools/exercises.py`): the reference
solution scores 100 %, the untouched notebook 0, every listed wrong answer less, a tampering
one exactly 0, and each question has a mistake its public checks flag.

Wrong answers live in `exercises/wrong_answers/NAME.py` as `WRONG_ANSWERS`, a dict from a
label to a list of (old, new) text edits of the reference answer cells; every `old` must
occur exactly once. A label starting with "tampering:" must score exactly 0; such a
submission runs `TAMPER` (given to the file by this tool) first. The proof prints the message
each mistake gets from the public checks and from the hidden tests.
"""
from __future__ import annotations

import copy
import json
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

import nbformat

from exercise_build import (
    ANSWER_TAG, BUILD, ROOT, WRONG_ANSWERS, Built, build, publish_zip_only, stale_files,
)
from exercise_grading import (
    Grade, OtterRun, fast_grade, function_names, preload, rename_tests, zip_test_files,
)

TOOL = Path(__file__).resolve().with_name("exercises.py")  # the command line that runs a proof

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
            cmd = [sys.executable, str(TOOL), "_prove-one", name, str(out), str(timeout)]
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
