"""What a submission's grading records of its children: one child per set of
ruled-out packages (`reach`), and what the results file says of how they were isolated.
"""

from __future__ import annotations

from typing import Any

from attnbook_grader import seccomp
from attnbook_grader.session import Session

__all__ = ["Seen", "isolation"]


def isolation(how: str | None, grouped: dict[frozenset[str], list[str]]) -> dict:
    """What a results file records of how a submission was isolated: the level (`jail`),
    the system calls refused (`seccomp`) and, per child, its questions and what it lacks."""
    return {
        "level": how or "none",
        "hardening": seccomp.describe(how),
        "children": [
            {"questions": list(qs), "without": sorted(without)}
            for without, qs in grouped.items()
        ],
    }


class Seen:
    """What every child of one submission reported (`question_verdicts` reads it)."""

    def __init__(self, sessions: list[Session]):
        self.how = sessions[0].how
        self.events: dict[str, list[str]] = {}
        self.memory: set[str] = set()
        self.lost: dict[str, str] = {}
        self.survivors: list[int] = []
        errors: dict[int, Any] = {}
        events: list[Any] = []
        for session in sessions:
            for name, found in session.events.items():
                self.events.setdefault(name, []).extend(found)
            self.memory |= session.memory
            for name, why in session.lost.items():
                self.lost.setdefault(name, why)
            self.survivors += session.survivors
            for index, why in session.ready.get("cell_errors", []):
                errors.setdefault(int(index), why)
            events += [
                e for e in session.ready.get("cell_events", []) if e not in events
            ]
        self.ready = {
            "cell_errors": [[i, why] for i, why in sorted(errors.items())],
            "cell_events": events,
        }
