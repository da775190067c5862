"""Public checks of the graded exercises, installed with the package so that
``grader.check(...)`` works anywhere the exercise notebook runs (locally, Colab, Binder).

The files under this folder are generated from the master notebooks by ``make exercises-publish``;
only *public* tests are ever written here (``tests/test_exercises.py`` checks it). The hidden
tests live only in the instructors' autograder zips. Beside them, what the checks import:
`grading` (the house rules), `rules` (their messages, which the grading engine
uses too), `probes`, `watch`, `loop_rule` and `answer_allowlist`. The
engine that grades for credit is not here: it is the distribution ``attnbook-grader``
(``grader/`` of the repository), which imports this package; this package never imports it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["tests_dir"]


def tests_dir(exercise: str) -> str:
    """Folder of the public checks of ``exercise`` (for ``otter.Notebook(tests_dir=...)``).
    Unchecked where this package's folder is not there to list (a grading child locked in an
    empty folder: it has the modules, not their files, and never runs the checks)."""
    path = Path(__file__).with_name(exercise)
    if not path.is_dir() and path.parent.is_dir():
        known = sorted(
            p.name
            for p in Path(__file__).parent.iterdir()
            if p.is_dir() and not p.name.startswith("_")
        )
        raise ValueError(
            f"no public checks for exercise {exercise!r}; known exercises: {known}"
        )
    return str(path)
