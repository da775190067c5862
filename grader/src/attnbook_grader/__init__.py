"""The grading engine of the course's exercises (the distribution ``attnbook-grader``).

The course package `attnbook` holds what a student runs: the teaching code and the public
checks (`attnbook.exercise_checks`, ``grader.check(...)``). This package holds what only the
grader runs: the sandboxed child process and its wire (`child`, `sandbox`, `jail`,
`processes`, `wire`, `session`), the verdicts decided outside the child (`engine`,
`verdicts`, `facts`, `source_rules`, `source_scopes`), the reading of submissions and the
feedback (`submissions`, `feedback`), Gradescope's entry point (`autograder`) and the otter
plugin that refuses `otter run` (`otter_plugin`). It imports `attnbook`; `attnbook` never
imports it. Its version is the course's.
"""

from importlib.metadata import PackageNotFoundError, version

try:  # the version lives in grader/pyproject.toml only
    __version__ = version("attnbook-grader")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"
