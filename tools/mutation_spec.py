"""One mutation of `tools.mutations`: a one-line change of the course package or of the
grading engine that some unit test must catch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str  # inside src/attnbook, or attnbook_grader/NAME: the engine's
    old: str  # must occur exactly once in the file
    new: str
    first: tuple[
        str, ...
    ] = ()  # test files to run before the rest of TESTS (the telling ones)
