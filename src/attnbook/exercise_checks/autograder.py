"""Gradescope's entry point for the exercises' autograder zips (exercises 1-9).

The zip's `run_autograder` runs ``run_otter.py``, which calls `main`: the submission in
``/autograder/submission`` is graded by `engine` (its code runs in a child process, the grade
is decided here) against ``/autograder/source/tests`` and ``reference.ipynb``, and the grade
goes to ``/autograder/results/results.json`` in Gradescope's format, one entry per question.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from attnbook.exercise_checks.engine import (
    code_sources,
    grade_notebook,
    read_exercise,
    reference_session,
)

__all__ = ["main", "RUN_SCRIPT"]

RUN_SCRIPT = '''"""Grades the submission with the course's engine (attnbook.exercise_checks.engine): the
notebook runs in a child process, the grade is decided in this one."""
from attnbook.exercise_checks.autograder import main

if __name__ == "__main__":
    main("/autograder")
'''


def results_json(result: dict) -> dict:
    """Gradescope's results format: one entry per question; hidden tests' messages are shown
    once the grades are published."""
    tests = []
    for question, score in result["questions"].items():
        rows = [t for t in result["tests"] if t["question"] == question]
        failed = [
            f"{t['name']}{' (hidden)' if t['hidden'] else ''}: {t['message'].strip()}"
            for t in rows
            if not t["passed"]
        ]
        tests.append(
            {
                "name": question,
                "score": score,
                "max_score": result.get("maxima", {}).get(
                    question, sum(t["points"] for t in rows)
                ),
                "visibility": "after_published",
                "output": "\n\n".join(failed) or "all tests passed",
            }
        )
    return {
        "score": result["score"],
        "tests": tests,
        "output": result["message"],
        "stdout_visibility": "hidden",
    }


def main(root: str = "/autograder", timeout: float = 420.0) -> None:
    """Grade and write results.json, whatever happens (timeout: the engine's limit for the
    whole submission, well within Gradescope's default 10 minutes with the start-up)."""
    folder = Path(root)
    try:
        _main(folder, timeout)
    except Exception as err:  # noqa: BLE001 - the results file is always written
        failed = {"score": 0.0, "questions": {}, "tests": []}
        failed["message"] = f"grading error ({type(err).__name__}): {str(err)[:500]}"
        _write(folder, failed)


def _write(folder: Path, result: dict) -> None:
    out = folder / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    fresh = out.with_name(f".results-{os.getpid()}.json")
    fresh.write_text(json.dumps(results_json(result), indent=1))
    os.replace(fresh, out)  # replaces a file the submission planted, whatever its mode


def _main(folder: Path, timeout: float) -> None:
    exercise = read_exercise(folder / "source")
    notebooks = sorted((folder / "submission").glob("*.ipynb"))
    message = "the notebook has no code cells"
    if notebooks:
        try:
            sources = code_sources(json.loads(notebooks[0].read_text()))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
            sources, message = [], f"not a notebook: {type(err).__name__}"
        if sources:
            reference = reference_session(exercise)
            try:
                result = grade_notebook(exercise, sources, reference, timeout)
            finally:
                reference.close()
        else:
            result = {"score": 0.0, "questions": {}, "tests": [], "message": message}
    else:
        result = {
            "score": 0.0,
            "questions": {},
            "tests": [],
            "message": "no .ipynb file was submitted",
        }
    _write(folder, result)
