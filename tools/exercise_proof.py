"""The proofs of `make exercises-prove` (documented in `tools/exercises.py`): the reference
solution scores 100 %, the untouched notebook 0, every listed wrong answer less, a tampering
one exactly 0 on the questions it tampers with, a correct-but-different one 100 % (the first
with type hints' imports at the top of its first answer cell, `TYPING_PRELUDE`), each
question has a mistake its public checks flag, and no mistake loses a question silently: a
wrong answer that loses half or more of a question's points fails at least one public check of
that question (multiple-choice questions are exempt, see `question_verdicts`).

Wrong answers live in `exercises/wrong_answers/NAME.py` as `WRONG_ANSWERS`, a dict from a
label to a list of (old, new) text edits of the reference answer cells; every `old` must
occur exactly once. A label "tampering (q1, q2): ..." must score 0 on the questions named (all
of them without a list); a label "refused: ..." (code the allowlist refuses: under isolation
it runs in the answer's child, noted, not counted) must be noted and gain nothing, no
question above its twin graded without the edits that only put code before a line
(`exercise_verdicts.untampered`); a label starting with "correct:" must score 100 %; a label "warned
(q1, q2): ..." must fail a public check of each named question it loses points on, however
few; a label "non-solving (q1): ..." (a constant, only the right shapes, a catch-all `except`
returning zeros) must score 0 on each named question (`tools.exercise_public_rule`). The
attacks (`tools.exercise_attacks`) run with every source verdict off, the allowlist included,
so that the isolation alone must stop them. `TAMPER` (given to
the file by this tool) is a ready-made tampering prelude. Every submission is graded by the one
engine (`attnbook_grader.engine`). The proof prints the message each mistake gets
from the public checks and from the hidden tests (`tools.exercise_verdicts`: what it expects of
each graded notebook, and the table it prints). An exercise with a pool of variants is also
proved at one sampled variant of each roster task (`tools.exercise_variants.prove_variants`):
the reference 100 %, the untouched notebook 0, the wrong answers below 100 %, the book's worked
solution pasted into a roster student's notebook no better than a wrong answer, and the book's
notebook itself refused.
"""

from __future__ import annotations

import copy
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import nbformat

from attnbook_grader.processes import ONE_THREAD
from tools.exercise_attacks import ATTACKED, attacks
from tools.exercise_build import (
    ANSWER_TAG,
    BUILD,
    ROOT,
    WRONG_ANSWERS,
    Built,
    ExerciseError,
    build,
    publish_zip_only,
    stale_files,
)
from tools.exercise_variants import check_variants, prove_variants
from tools.exercise_verdicts import (  # noqa: F401 - re-exported for tools.exercises
    CORRECT_PREFIX,
    NO_ANSWER,
    REFERENCE,
    TAMPER_PREFIX,
    REFUSED_PREFIX,
    untampered,
    UNTOUCHED,
    check_proof,
    tampered_questions,
)
from tools.gc_policy import freeze_survivors
from tools.exercise_grading import (
    Grader,
    function_names,
    rename_tests,
    zip_test_files,
)


# ----------------------------------------------------------------------------- proofs
# Tampering preludes, by kind (the wrong-answer files get them as TAMPERS[kind], and all of
# them at once as TAMPER): each would let a wrong answer through if the tests ran in the
# submission's process. The allowlist finds each ("dynamic code / tampering",
# `attnbook_grader.source_rules`), but under isolation it only notes it: the prelude runs in
# the answer's child, and loses by itself there, since the tests run in the grader, on data.
TAMPERS = {
    "grading module": """import attnbook.exercise_checks.grading as _grading
_grading.guarded = lambda fn, **kwargs: fn
_grading.grad_of = lambda fn, *args, **kwargs: (fn(*args), ())
""",
    "comparison helpers": """import numpy as _np, torch as _torch
_torch.testing.assert_close = lambda *args, **kwargs: None
_np.testing.assert_allclose = lambda *args, **kwargs: None
_np.testing.assert_array_equal = lambda *args, **kwargs: None
_torch.equal = lambda *args, **kwargs: True
_torch.allclose = lambda *args, **kwargs: True
_np.allclose = lambda *args, **kwargs: True
""",
    "builtins": """import builtins as _builtins
_builtins.isinstance = lambda *args: True
_builtins.all = lambda *args: True
_builtins.AssertionError = type("AssertionError", (Warning,), {})
""",
    "profiler": """import sys as _sys
_sys.setprofile = lambda *args: None
_sys.getprofile = lambda: None
""",
    "sys.modules": """import sys as _sys, types as _types
_sys.modules["attnbook.exercise_checks.grading"] = _types.SimpleNamespace(
    guarded=lambda fn, **kwargs: fn, grad_of=None, calls_of=None)
""",
    "otter's results": """import otter.test_files.abstract_test as _abstract
import otter.test_files.exception_test as _exception_test
_abstract.TestCaseResult.passed = property(lambda self: True, lambda self, value: None)
_exception_test.ExceptionTestFile.score = property(lambda self: self.possible)
""",
    "results file": """import json as _json, os as _os
for _folder in ("/autograder/results", _os.getcwd()):
    try:
        _os.makedirs(_folder, exist_ok=True)
        with open(_os.path.join(_folder, "results.json"), "w") as _f:
            _json.dump({"score": 100.0, "tests": []}, _f)
    except OSError:
        pass
""",
}
TAMPER = "".join(TAMPERS.values()) + "\n"


def load_wrong_answers(name: str) -> dict[str, list[tuple[str, str]]]:
    """label -> list of (old, new) edits, from exercises/wrong_answers/NAME.py (empty if none)."""
    path = WRONG_ANSWERS / f"{name}.py"
    if not path.is_file():
        return {}
    return runpy.run_path(
        str(path), init_globals={"TAMPER": TAMPER, "TAMPERS": TAMPERS}
    )["WRONG_ANSWERS"]


def answer_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [
        c
        for c in nb.cells
        if c.cell_type == "code" and ANSWER_TAG in c.metadata.get("tags", [])
    ]


def reference_answer(built: Built, student_source: str) -> str:
    """The solution notebook's cell that fills the student answer cell (same first line)."""
    first = student_source.splitlines()[0]
    solution = nbformat.read(built.reference_nb, as_version=4)
    found = [
        c.source
        for c in solution.cells
        if c.cell_type == "code" and c.source.splitlines()[:1] == [first]
    ]
    if len(found) != 1:
        raise ExerciseError(
            f"{built.name}: {len(found)} solution cells start with {first!r}; expected 1"
        )
    return found[0]


# the lines otter keeps in the solution's cells; a student's notebook never holds them (and
# with them, each untouched answer cell would equal the reference's cell: trusted, unread)
SOLUTION_MARKERS = ("# BEGIN SOLUTION", "# END SOLUTION")
# what a student may well put at the top of an answer cell (issue 45, N1: such a line cost
# a correct notebook every point): given to each exercise's first correct variant
TYPING_PRELUDE = (
    "from __future__ import annotations\n\nimport functools\nfrom dataclasses import "
    "dataclass\nfrom typing import Optional, Tuple\n\n"
)


def _as_pasted(source: str) -> str:
    """A solution cell without otter's marker lines (a closing marker's line break kept, so
    that an edit ending at the last solution line still matches)."""
    lines = source.split("\n")
    kept = [line for line in lines if line.strip() not in SOLUTION_MARKERS]
    return "\n".join(kept + [""] * (lines[-1].strip() in SOLUTION_MARKERS))


def make_submission(
    built: Built, edits: list[tuple[str, str]] | None, prelude: str = ""
) -> nbformat.NotebookNode:
    """The student notebook with its answer cells filled in from the reference solution
    (without otter's marker lines, as a student would paste it), after applying `edits`
    (each `old` must occur exactly once across the answers), `prelude` put at the top of
    the first answer cell. `edits=None` gives the untouched student notebook."""
    nb = copy.deepcopy(built.student_nb)
    if edits is None:
        return nb
    mine = answer_cells(nb)
    if not mine:
        raise ExerciseError(f"{built.name}: the student notebook has no answer cells")
    sources = [_as_pasted(reference_answer(built, cell.source)) for cell in mine]
    for old, new in edits:
        hits = sum(s.count(old) for s in sources)
        if hits != 1:
            raise ExerciseError(
                f"{built.name}: wrong-answer edit {old!r} matches {hits} times, not once"
            )
        sources = [s.replace(old, new) for s in sources]
    sources[0] = prelude + sources[0]
    for cell, source in zip(mine, sources):
        cell.source = source
    return nb


def prove_one(name: str, out_json: Path, timeout: float) -> None:
    """Worker of `prove` for one exercise: build it and grade the reference, the untouched
    notebook and every listed submission with the engine. Writes the grades as JSON, with
    the proof's wall time (printed beside the exercise's name: where the proofs' time goes)."""
    start = time.monotonic()
    built = build(name)
    problems = stale_files(built)
    publish_zip_only(built)
    work = BUILD / name / "proof"
    shutil.rmtree(work, ignore_errors=True)
    test_files = zip_test_files(built.autograder_zip, work / "tests")
    cases: dict[str, list[tuple[str, str]] | None] = {REFERENCE: [], UNTOUCHED: None}
    cases.update(load_wrong_answers(name))
    names = function_names(test_files)
    typed = next((label for label in cases if label.startswith(CORRECT_PREFIX)), None)
    with Grader(built.autograder_zip) as grader:
        graded = {
            label: rename_tests(
                grader.grade(
                    make_submission(
                        built, edits, TYPING_PRELUDE if label == typed else ""
                    ),
                    label,
                    timeout,
                ),
                names,
            )
            for label, edits in cases.items()
        }
        twins = {  # each refused row graded again without its refused code
            label: asdict(
                grader.grade(make_submission(built, untampered(edits)), label, timeout)
            )
            for label, edits in cases.items()
            if label.startswith(REFUSED_PREFIX) and edits
        }
        attacked = (
            attacks(built, grader, work, timeout, make_submission)
            if name in ATTACKED
            else {}
        )
        at_variants = prove_variants(
            built, grader, timeout, cases, make_submission, graded
        )
    out_json.write_text(
        json.dumps(
            {
                "problems": problems,
                "questions": list(test_files),
                "grades": {label: asdict(g) for label, g in graded.items()},
                "twins": twins,
                "attacks": attacked,
                "variants": at_variants,
                "seconds": round(time.monotonic() - start, 1),
            }
        )
    )


def _expected_cost(name: str) -> int:
    """How many notebooks the proof of `name` grades (its wrong answers, plus two)."""
    return len(load_wrong_answers(name)) + 2


def prove_worker(folder: Path, timeout: float, names: list[str]) -> None:
    """One long-lived worker of `prove`: takes the exercises in order, each one that no other
    worker has claimed yet (a file created exclusively in `folder`), and writes its grades to
    `folder/NAME.json`, or what went wrong to `folder/NAME.log`. One Python start, one import
    of PyTorch and otter and one process server for all the exercises it proves."""
    import traceback

    freeze_survivors()  # the imports' objects, then what lives through each full collection

    for name in names:
        try:
            os.close(os.open(folder / f"{name}.claim", os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            continue
        try:
            prove_one(name, folder / f"{name}.json", timeout)
        except Exception:  # noqa: BLE001 - reported with the exercise, the others go on
            (folder / f"{name}.log").write_text(traceback.format_exc())


_WORKER_MAIN = (
    "import sys; from pathlib import Path; from tools.exercise_proof import prove_worker; "
    "prove_worker(Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:])"
)


def prove(names: list[str], timeout: float, jobs: int = 2) -> bool:
    """Every proof of every exercise: `jobs` worker processes share the exercises, the
    longest proofs first."""
    start = time.monotonic()
    order = sorted(names, key=_expected_cost, reverse=True)
    with tempfile.TemporaryDirectory(prefix="attnbook-prove-") as tmp:
        folder = Path(tmp)
        # `python -c`: a main module with neither a name nor a file, so the children that
        # run the submissions (forked from the process server) skip multiprocessing's
        # import of the main module; the tests in the workers on one thread (two workers
        # share two cores: a second thread per worker only waits on the other)
        cmd = [sys.executable, "-c", _WORKER_MAIN, tmp]
        env = {**os.environ, **ONE_THREAD}
        workers = []
        for i in range(max(1, min(jobs, len(order)))):
            log = open(folder / f"worker-{i}.out", "w")  # noqa: SIM115 - closed below
            workers.append(
                (
                    subprocess.Popen(
                        [*cmd, str(timeout), *order],
                        cwd=ROOT,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    ),
                    log,
                )
            )
        for process, log in workers:
            process.wait()
            log.close()
        output = "".join(p.read_text() for p in sorted(folder.glob("worker-*.out")))
        results = []
        for name in names:
            out, err = folder / f"{name}.json", folder / f"{name}.log"
            if out.is_file():
                results.append((name, json.loads(out.read_text()), ""))
            else:
                log_text = err.read_text() if err.is_file() else output
                results.append((name, None, log_text))
    ok, report = True, {}
    for name, data, log_text in results:
        if data is None:
            print(f"\n{name}\n  FAILED: the proof did not run:\n{log_text[-3000:]}")
            ok = False
            continue
        ok &= check_proof(name, data)
        ok &= check_variants(name, data, REFERENCE, UNTOUCHED)
        report[name] = data
    (BUILD / "proof.json").write_text(json.dumps(report, indent=1))
    print(
        f"\n{'all proofs hold' if ok else 'SOME PROOFS FAILED'} ({time.monotonic() - start:.0f} s)"
    )
    return ok
