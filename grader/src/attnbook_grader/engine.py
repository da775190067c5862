"""The grading engine of the exercises: student code never runs where grades
are decided.

A submission's notebook runs in a child process (`session.Session`, forked from a server
that imported PyTorch and NumPy but never ran student code; the child's `otter` is a
stand-in). This process, the grader, runs the autograder's test files with otter's own test
classes; a test's arguments are `RemoteFunction`s for the functions of its own question (each
call sends the inputs to the child and gets the result back as data, `wire`) and, for
everything else (the example data, the other questions' functions), the reference's, which
runs in a second child. Every comparison, verdict and score is decided here; the child only
executes and sends data. A rule that rules a package out holds by construction: the
questions sharing a rule run in a child that cannot reach the package (`reach`). What no
process can enforce (the loop rule, a compiled routine `disarm` cannot take away) is read
from the source (`source_rules`) before the child starts; the rest comes from the data.
Under isolation the allowlist decides nothing: what it would refuse runs and is noted.

Some verdicts cost a whole question (`question_verdicts`): a process started or memory
refused (in its functions' calls or its cells), a process left running after the submission
(every question), refused code its functions reach (a practice grade only). A child past the
submission's time is killed ("timeout"): questions graded before keep their points.
"""

from __future__ import annotations

import ast
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnbook_grader import jail, reach, source_rules, verdicts, wire
from attnbook_grader.seen import Seen, isolation
from attnbook_grader.servers import server_for, want_meta
from attnbook_grader.submissions import cell_sources
from attnbook_grader.session import (
    RemoteFunction,
    Session,
    SubmissionGone,
    SubmissionTimeout,
)

__all__ = [
    "Exercise",
    "Session",
    "RemoteFunction",
    "SubmissionTimeout",
    "grade_notebook",
    "code_sources",
    "read_exercise",
    "reference_session",
    "TestRow",
]

SOLUTION_TAG = "otter_assign_solution_cell"
UNSAFE = (
    "PRACTICE GRADE, NOT FOR CREDIT: graded without isolation (ATTNBOOK_GRADE_UNSAFE=1); "
    "the notebook could read and change the grader's files"
)


def code_sources(nb: dict) -> list[str]:
    """The code cells' sources as the grader runs them (`submissions.cell_sources`)."""
    return cell_sources(nb)


# ----------------------------------------------------------------------------- the exercise
@dataclass
class Exercise:
    """What the grader knows about an exercise, read before any submission runs."""

    tests: dict[str, str]  # question -> the text of its otter test file
    reference: list[str]  # the reference solution notebook's code cells
    # question -> names its answer binds
    own: dict[str, set[str]] = field(default_factory=dict)
    # question -> functions it defines
    functions: dict[str, set[str]] = field(default_factory=dict)
    # question -> the packages its answers may not reach (`reach.question_reach`)
    reach: dict[str, frozenset[str]] = field(default_factory=dict)
    # what `swaps` computed, with the reference and functions it was computed from
    _swaps: tuple[Any, dict[str, list[str]]] | None = field(
        default=None, repr=False, compare=False
    )

    @classmethod
    def load(cls, tests: dict[str, str], reference_nb: dict) -> Exercise:
        exercise = cls(dict(sorted(tests.items())), code_sources(reference_nb))
        exercise.reach = reach.question_reach(exercise.tests)
        question_cells: dict[str, list[str]] = {}
        pending: list[str] = []
        for cell in reference_nb["cells"]:
            source = (
                "".join(cell["source"])
                if isinstance(cell["source"], list)
                else cell["source"]
            )
            if cell["cell_type"] != "code":
                continue
            if SOLUTION_TAG in cell.get("metadata", {}).get("tags", []):
                pending.append(source)
            found = re.search(r"grader\.check\(\s*[\"'](\w+)[\"']", source)
            if found:
                question_cells.setdefault(found.group(1), []).extend(pending)
                pending = []
        for question, sources in question_cells.items():
            tree = [node for s in sources for node in ast.parse(s).body]
            defs = {
                n.name for n in tree if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            }
            bound = {
                t.id
                for n in tree
                if isinstance(n, ast.Assign)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
            exercise.own[question] = defs | bound
            exercise.functions[question] = {
                n.name for n in tree if isinstance(n, ast.FunctionDef)
            }
        return exercise

    def question_of(self, name: str) -> str | None:
        return next((q for q, names in self.own.items() if name in names), None)

    def swaps(self) -> dict[str, list[str]]:
        """Function -> the other questions' functions that are the reference's while it
        runs: those its reference calls, no more (`source_rules.reference_swaps`); computed
        once for as long as the reference and the functions stay the same."""
        key = (
            tuple(self.reference),
            sorted((q, sorted(fs)) for q, fs in self.functions.items()),
        )
        if self._swaps is None or self._swaps[0] != key:
            found = source_rules.reference_swaps(self.reference, self.functions)
            self._swaps = (key, found)
        return {f: list(gs) for f, gs in self._swaps[1].items()}


class _Environment(dict):
    """What otter's test classes look names up in: this question's names from the submission,
    the rest (example data, other questions' functions) from the reference solution."""

    def __init__(
        self, exercise: Exercise, question: str, student: Session, reference: Session
    ):
        super().__init__()
        self.exercise, self.question = exercise, question
        self.student, self.reference = student, reference

    def get(self, name: str, default: Any = None) -> Any:
        owner = self.exercise.question_of(name)
        session = self.student if owner == self.question else self.reference
        described = session.describe(name)
        if described["kind"] == "function":
            return RemoteFunction(session, name)
        if described["kind"] == "data":
            return wire.decode(described["value"])
        return default


@dataclass
class TestRow:
    name: str
    question: str
    hidden: bool
    passed: bool
    points: float
    message: str


def grade_notebook(
    exercise: Exercise,
    sources: list[str],
    reference: Session,
    timeout: float,
    source_checks: bool = True,
) -> dict:
    """Grade one notebook's code cells: {"status", "score", "possible", "questions",
    "maxima", "reasons", "tests", "cell_errors", "message"}; status "ok", "timeout" or
    "error". source_checks=False (or `source_rules.NO_ALLOWLIST` set): no verdict read
    from the source, the allowlist included (the proof's attacks, which the isolation must
    stop by itself); never for grading."""
    from attnbook_grader.otter_files import read_test_files

    files = read_test_files(exercise.tests)  # read before the submission starts
    maxima = {q: round(float(f.possible), 6) for q, f in files.items()}  # 0.1 + 0.2
    result: dict[str, Any] = {
        "status": "ok",
        "score": 0.0,
        "possible": round(sum(maxima.values()), 6),
        "questions": {q: 0.0 for q in files},
        "maxima": maxima,  # every question's points, whatever happened
        "reasons": {},  # question -> why it scored 0 whatever its tests said
        "tests": [],
        "cell_errors": [],
        "message": "",
    }
    source_checks = source_rules.checks_on(source_checks)  # the one switch
    answers = set().union(*exercise.functions.values())  # every question's functions
    how = jail.require()
    hint_only = how is not None  # isolated: what the allowlist finds runs, noted
    reading = source_rules.scan(
        sources, exercise.reference, None, source_checks, answers, hint_only
    )
    swaps = exercise.swaps()
    judge = Judge(reading, swaps) if source_checks else None

    reference.refresh()  # a reference that ended (or was ended) is started again
    graded: list[str] = []
    # one child per set of ruled-out packages, each built without them (`reach`)
    grouped = reach.groups({q: exercise.reach.get(q, frozenset()) for q in files})
    result["isolation"] = isolation(how, grouped)
    trusted = [i for i, s in enumerate(sources) if s in set(exercise.reference)]
    deadline = time.monotonic() + timeout if timeout else None
    sessions: list[Session] = []
    try:
        runnable = sources if hint_only else reading.runnable(sources)
        for without, questions in grouped.items():
            if sessions:
                sessions[-1].close()  # one child at a time
            student = Session(
                runnable, swaps, timeout, reference, judge, True,
                without, trusted, deadline,
            )  # fmt: skip
            sessions.append(student)
            for question in questions:
                student.begin_question()
                environment = _Environment(exercise, question, student, reference)
                files[question].run(environment)
                graded.append(question)
    except SubmissionTimeout as err:
        result.update(status="timeout", message=str(err))
    except SubmissionGone as err:
        result.update(status="error", message=str(err))
        result["reasons"] = {q: str(err) for q in files}
        return result
    finally:
        for session in sessions:
            session.close()
    if not sessions:  # the whole limit passed before the notebook had run
        result["reasons"] = {q: result["message"] for q in files}
        return result
    seen = Seen(sessions)
    refused, notes = dict[str, str](), reading.hints()  # isolated: noted, not counted
    if not hint_only:  # a practice grade: the allowlist is the gate
        refused, notes = reading.refusals(exercise.functions, swaps)
    result["cell_errors"] = seen.ready["cell_errors"] + [[c, n] for c, n in notes]
    if seen.how is None:
        result["message"] = f"{UNSAFE}. {result['message']}".strip()
    lost = question_verdicts(exercise, sources, refused, seen)
    for question in files:
        if question not in graded:
            lost.setdefault(question, result["message"])
    for question, test_file in files.items():
        if question not in graded:
            continue
        result["questions"][question] = round(float(test_file.score), 6)
        result["tests"] += [
            TestRow(
                r.test_case.name,
                question,
                bool(r.test_case.hidden),
                bool(r.passed),
                float(r.test_case.points or 0),
                "" if r.passed else r.message,
            ).__dict__
            for r in test_file.test_case_results
        ]
    for question, message in lost.items():
        if question in result["questions"]:
            result["questions"][question] = 0.0
            result["reasons"][question] = message
            row = TestRow(
                f"{question} - house rules", question, True, False, 0.0, message
            )
            result["tests"].append(row.__dict__)
    result["score"] = round(sum(result["questions"].values()), 6)
    return result


class Judge:
    """The shortcut verdicts on one submission's source (`Reading.shortcut`, the reference's
    functions `swaps` skipped): each (function, rules) read once per reading."""

    def __init__(self, reading: source_rules.Reading, swaps: dict[str, list[str]]):
        self.reading, self.swaps = reading, swaps
        self.verdicts: dict[tuple[str, Any], str | None] = {}

    def __call__(self, name: str, rules: dict) -> str | None:
        key = (name, _frozen(rules))
        if key[1] is None:  # rules that are not plain data: read each time
            return self.reading.shortcut(name, rules, set(self.swaps.get(name, [])))
        if key not in self.verdicts:
            found = self.reading.shortcut(name, rules, set(self.swaps.get(name, [])))
            self.verdicts[key] = found
        return self.verdicts[key]


def _frozen(value: Any) -> Any:
    """`value` (a hidden test's rules) as a hashable key that tells apart every two values
    that differ (types included); None where it holds something else than plain data."""
    if isinstance(value, dict):
        items = [(_frozen(k), _frozen(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return ("dict", tuple(sorted(items, key=repr)))
    if isinstance(value, (list, tuple, set, frozenset)):
        parts = [_frozen(v) for v in value]
        if any(p is None for p in parts):
            return None
        if isinstance(value, (set, frozenset)):
            parts.sort(key=repr)
        return (type(value).__name__, tuple(parts))
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, value)
    return None


def _question_of_cell(sources: list[str], index: int) -> str | None:
    """The question a code cell belongs to: the next `grader.check("qN")` from it on."""
    for source in sources[index:]:
        found = re.search(r"grader\.check\(\s*[\"'](\w+)[\"']", source)
        if found:
            return found.group(1)
    return None


def question_verdicts(
    exercise: Exercise,
    sources: list[str],
    refused: dict[str, str],
    student: Session | Seen,
) -> dict[str, str]:
    """question -> why it scores 0 whatever its tests say: refused code it reaches (`refused`),
    a process started or memory refused (in its cells or its functions' calls), a process
    left running after the submission that no question's code was seen starting (every one)."""
    questions = list(exercise.functions)
    lost = dict(refused)
    trusted = set(exercise.reference)
    for index, what in student.ready.get("cell_events", []):
        if sources[int(index)] in trusted:
            continue  # the notebook's own cell calling an answer: its calls decide
        question = _question_of_cell(sources, int(index))
        message = (
            verdicts.MEMORY_MESSAGE
            if what == "memory"
            else verdicts.process_events([str(what)])
        )
        for q in [question] if question in questions else questions:
            lost.setdefault(q, f"{message} (cell {index})")
    for name, events in student.events.items():
        question = exercise.question_of(name)
        if question:
            lost.setdefault(question, f"{verdicts.process_events(events)} ({name})")
    for name in student.memory:
        question = exercise.question_of(name)
        if question:
            lost.setdefault(question, f"{verdicts.MEMORY_MESSAGE} ({name})")
    for name, why in student.lost.items():  # timed out, crashed, refused
        question = exercise.question_of(name)
        if question:
            lost.setdefault(question, why)
    started = student.events or any(
        what != "memory" for _, what in student.ready.get("cell_events", [])
    )
    if student.survivors and not started:  # started unseen (the audit hook evaded?)
        message = (
            f"processes: {len(student.survivors)} process(es) the submission started were "
            "still running after it (a detached process?); the grader ended them: scored 0"
        )
        for q in questions:
            lost.setdefault(q, message)
    return lost


def reference_session(exercise: Exercise, timeout: float | None = None) -> Session:
    """The reference solution, running in a child process of its own (trusted code): no
    limit on its life, each call limited as the submission's call it serves; one that ends
    is started again before the next submission (`Session.refresh`). Refuses
    (`jail.IsolationUnavailable`, the reason) where submissions cannot be isolated, before
    any is graded."""
    jail.require()
    want_meta(exercise.tests)
    for without in set(exercise.reach.values()):  # servers' start-up: no submission's
        server_for(without)
    # every question without PyTorch (ex02): the reference too, the usual server unstarted
    every = frozenset.intersection(*exercise.reach.values()) if exercise.reach else None
    without = reach.heavy(every or frozenset())
    return Session(exercise.reference, {}, timeout, isolate=False, without=without)


def read_exercise(folder: Path) -> Exercise:
    """An autograder folder (the zip unpacked): tests/qN.py and reference.ipynb."""
    tests = {p.stem: p.read_text() for p in sorted((folder / "tests").glob("*.py"))}
    return Exercise.load(tests, json.loads((folder / "reference.ipynb").read_text()))
