"""Gradescope's entry point for the exercises' autograder zips.

The zip's `run_autograder` runs ``run_otter.py``, which calls `main`: the submission in
``/autograder/submission`` is graded by `engine` (its code runs in a child process, the grade
is decided here) against ``/autograder/source/tests`` and ``reference.ipynb``, and the grade
goes to ``/autograder/results/results.json`` in Gradescope's format, one entry per question.
The submission is found and read as `make grade` reads it (`submissions`: any nbformat,
subfolders searched, several notebooks or another exercise's refused with the reason).
An exercise with a pool of variants (`variants`) is graded at the variant recomputed from
``submission_metadata.json``'s users and the course secret the zip carries; a notebook that
states another variant is refused, naming both.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.machinery
import json
import os
import sys
import types
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from attnbook_grader import variants

from attnbook_grader.engine import (
    grade_notebook,
    read_exercise,
    reference_session,
)
from attnbook_grader.feedback import failed_lines
from attnbook_grader.submissions import (
    code_cells,
    exercise_of,
    find_submission,
    read_notebook,
)

__all__ = ["main", "RUN_SCRIPT"]

RUN_SCRIPT = '''"""Grades the submission with the course's engine (attnbook_grader.engine): the
notebook runs in a child process, the grade is decided in this one."""
from attnbook_grader.autograder import main

if __name__ == "__main__":
    main("/autograder")
'''


def question_points(tests: dict[str, str]) -> dict[str, float]:
    """Each question's points, from the text of its otter test file."""
    from otter.test_files.exception_test import ExceptionTestFile

    return {
        q: round(
            float(ExceptionTestFile.from_string(text, path=f"tests/{q}.py").possible), 6
        )
        for q, text in sorted(tests.items())
    }


def results_json(result: dict, possible: dict[str, float] | None = None) -> dict:
    """Gradescope's results format: one entry per question, its maximum from the test files
    (`possible`; kept whatever happened), its output the failed tests with their hints, as
    in the feedback `make grade` writes; hidden tests' messages shown once the grades are
    published."""
    tests = []
    questions = dict(possible or {})
    for question in result.get("questions", {}):
        questions.setdefault(question, 0.0)
    for question, points in questions.items():
        rows = [t for t in result.get("tests", []) if t["question"] == question]
        # one line per failed test, one in all for a question not answered yet
        failed = failed_lines([t for t in rows if not t["passed"]])
        if not rows:
            output = f"not graded: {result.get('message') or 'no test ran'}"
        else:
            output = "\n\n".join(failed) or "all tests passed"
        tests.append(
            {
                "name": question,
                "score": float(result.get("questions", {}).get(question, 0.0)),
                "max_score": points
                or result.get("maxima", {}).get(
                    question, sum(t["points"] for t in rows)
                ),
                "visibility": "after_published",
                "output": output,
            }
        )
    return {
        "score": result["score"],
        "tests": tests,
        "output": result["message"],
        "stdout_visibility": "hidden",
        "extra_data": {
            "isolation": result.get("isolation", {"level": "not graded"}),
            "variant": result.get("variant", ""),
        },
    }


def light_otter() -> bool:
    """Make ``otter`` in this process only what grading uses of it: its test-file classes
    (``otter.test_files.exception_test`` and ``abstract_test``, standard library only), not
    the package's own ``__init__`` and ``otter.test_files``', which import pandas, IPython,
    nbconvert, jupyter_client and ipywidgets (some 50 MiB, ~1,000 modules, of the grader's
    memory); False (nothing done) where ``otter`` is imported already or not installed."""
    spec = None if "otter" in sys.modules else find_spec("otter")
    if spec is None or not spec.submodule_search_locations:
        return False
    home = list(spec.submodule_search_locations)[0]
    for name, path in (("otter", home), ("otter.test_files", f"{home}/test_files")):
        module = types.ModuleType(name, "otter's test-file classes only (autograder)")
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__spec__.submodule_search_locations = module.__path__ = [path]
        sys.modules[name] = module
    tests = importlib.import_module("otter.test_files.exception_test")
    vars(sys.modules["otter.test_files"]).update(
        test_case=tests.test_case, ExceptionTestFile=tests.ExceptionTestFile
    )
    return True


def no_dtensor_import() -> bool:
    """Keep PyTorch's ``torch.testing.assert_close`` from importing
    ``torch.distributed.tensor`` on its first call (PyTorch 2.13: some 500 modules, SymPy
    among them, 47 MiB of the grader's memory) only to ask whether an input is a DTensor:
    none can be before that module is imported, so until then the inputs pass unchanged;
    False (nothing done) where this PyTorch has no such step."""
    from torch.testing import _comparison

    unwrap = getattr(_comparison, "_unwrap_dtensor_for_comparison", None)
    if unwrap is None or getattr(unwrap, "attnbook_lazy", False):
        return False

    def lazy(actual: Any, expected: Any) -> tuple[Any, Any]:
        if "torch.distributed.tensor" not in sys.modules:
            return actual, expected
        return unwrap(actual, expected)

    lazy.attnbook_lazy = True  # type: ignore[attr-defined]
    vars(_comparison)["_unwrap_dtensor_for_comparison"] = lazy
    return True


def main(root: str = "/autograder", timeout: float = 420.0) -> None:
    """Grade the one notebook of ``root/submission`` (read as `make grade` reads it:
    `submissions`) and write ``root/results/results.json``, whatever happens (timeout: the
    engine's limit for the whole submission, well within Gradescope's default 10 minutes
    with the start-up)."""
    folder = Path(root)
    try:
        light_otter()  # the grader's memory: what it does not use, not imported
        no_dtensor_import()
        _main(folder, timeout)
    except Exception as err:  # noqa: BLE001 - the results file is always written
        failed = {"score": 0.0, "questions": {}, "tests": []}
        failed["message"] = f"grading error ({type(err).__name__}): {str(err)[:500]}"
        _write(folder, failed)


def _write(
    folder: Path, result: dict, possible: dict[str, float] | None = None
) -> None:
    out = folder / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    fresh = out.with_name(f".results-{os.getpid()}.json")
    fresh.write_text(json.dumps(results_json(result, possible), indent=1))
    os.replace(fresh, out)  # replaces a file the submission planted, whatever its mode


def _main(folder: Path, timeout: float) -> None:
    exercise = read_exercise(folder / "source")
    possible = question_points(exercise.tests)
    name = exercise_of(exercise.reference)
    path, message = find_submission(folder / "submission")
    nb = None
    if path is not None:
        nb, message = read_notebook(path, name)
    pool, secret = variants.load_pool(folder / "source")
    variant, words = None, ""
    if nb is not None and pool is not None:
        try:
            meta = json.loads((folder / "submission_metadata.json").read_text())
        except (OSError, ValueError):
            meta = {}
        try:
            ids = variants.ids_from_metadata(meta)
            variant = variants.variant_for(pool, ids, secret) or variants.reserved(pool)
            words = variants.label(variant, pool)
            message = variants.refusal(code_cells(nb), variant) or ""
        except variants.VariantError as err:
            message = f"not graded: {err}"
        nb = None if message else nb
    if nb is not None:
        if variant is not None and pool is not None:
            source = variants.render(exercise.reference, variant, pool)
            exercise = dataclasses.replace(exercise, reference=source)
        reference = reference_session(exercise)
        try:
            result = grade_notebook(exercise, code_cells(nb), reference, timeout)
        finally:
            reference.close()
        if words and variant != variants.reserved(pool or {}):
            result["message"] = (
                f"graded at your variant: {words}. {result['message']}".strip()
            )
    else:
        result = {"score": 0.0, "questions": {}, "tests": [], "message": message}
    result["variant"] = words
    _write(folder, result, possible)
