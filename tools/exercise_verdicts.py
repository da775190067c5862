"""What the proofs of `make exercises-prove` (`tools/exercise_proof.py`) expect of each graded
notebook, and the table they print: `check_proof` reads one exercise's grades (the reference,
the untouched notebook, every wrong answer, tampering and correct variant, the attacks) and
says whether every rule holds, with the message each mistake gets from the public checks and
from the hidden tests; `_held_to_the_rules` adds the message and scoring rules
(`tools.exercise_messages`, `tools.exercise_public_rule`).
"""

from __future__ import annotations

import re

from tools.exercise_attacks import check_attacks
from tools.exercise_build import MASTERS
from tools.exercise_grading import Grade
from tools.exercise_messages import HELD, SCORING_HELD, message_problems
from tools.exercise_public_rule import question_verdicts, scoring_problems
from tools.exercise_tables import table_problems

REFERENCE, UNTOUCHED = "reference solution", "untouched student notebook"
# correct answers written differently: they must score 100 %
CORRECT_PREFIX = "correct:"
NO_ANSWER = "No answer yet"  # what every test of an untouched question says (`case`)
TAMPER_PREFIX = "tampering"  # labels "tampering: ..." or "tampering (q1, q2): ..."
# code the allowlist would refuse: under isolation it runs in the answer's child, the
# allowlist only notes it, and it must gain nothing there (each question at most what the
# same answers score without it: its twin, graded too)
REFUSED_PREFIX = "refused:"


def untampered(edits: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A refused row's twin: its edits less those that only put code before a line."""
    return [(old, new) for old, new in edits if not (new != old and new.endswith(old))]


def tampered_questions(label: str, questions: list[str]) -> list[str]:
    """The questions a tampering submission must score 0 on: those its label names in
    parentheses, "tampering (q1, q3): ...", or all of them."""
    named = re.match(r"tampering \(([^)]*)\)", label)
    return [q.strip() for q in named.group(1).split(",")] if named else list(questions)


def _expectation(
    label: str, g: Grade, questions: list[str], twin: Grade | None = None
) -> tuple[bool, str]:
    pub, n_pub = g.passed(hidden=False)
    hid, n_hid = g.passed(hidden=True)
    if label == REFERENCE:
        return (
            g.status == "ok"
            and g.score == g.possible > 0
            and hid == n_hid
            and pub == n_pub,
            "100 %",
        )
    if label == UNTOUCHED:
        told = all(
            NO_ANSWER in t["message"]
            for t in g.tests
            if not t["passed"] and not t["name"].endswith("house rules")
        )
        return (
            g.status == "ok" and g.score == 0 and n_hid > 0 and told,
            f'0 points, every failed test saying "{NO_ANSWER}"',
        )
    if label.startswith(CORRECT_PREFIX):
        return (
            g.status == "ok" and g.score == g.possible > 0 and hid == n_hid,
            "100 % (a correct answer)",
        )
    if label.startswith(REFUSED_PREFIX):
        noted = any(str(why).startswith("dynamic code") for _, why in g.cell_errors)
        return (
            g.status == "ok"
            and noted
            and twin is not None
            and all(v <= twin.questions.get(q, 0.0) for q, v in g.questions.items()),
            "noted, not counted; no question above its twin without the refused code",
        )
    if label.startswith(TAMPER_PREFIX):
        tampered = tampered_questions(label, questions)
        return (
            g.status in ("ok", "error")
            and all(g.questions.get(q, 0.0) == 0 for q in tampered),
            f"0 points on {', '.join(tampered)} (tampering)",
        )
    return g.status == "ok" and g.score < g.possible and hid < n_hid, "below 100 %"


def check_proof(name: str, data: dict) -> bool:
    """Print one exercise's table and the message each mistake gets; True if every rule holds."""
    problems = list(data["problems"])
    grades = {label: Grade(**g) for label, g in data["grades"].items()}
    seconds = data.get("seconds")
    took = f", {seconds:.0f} s" if seconds is not None else ""
    print(f"\n{name} ({len(grades)} notebooks graded{took})")
    print(f"  {'submission':70s} {'score':>6s} {'public':>7s} {'hidden':>7s}  verdict")
    flagged = set()  # questions with a mistake that a public check flags
    for label, g in grades.items():
        pub, n_pub = g.passed(hidden=False)
        hid, n_hid = g.passed(hidden=True)
        twin = data.get("twins", {}).get(label)
        twin = Grade(**twin) if twin else None
        good, expect = _expectation(label, g, data["questions"], twin)
        if label not in (REFERENCE, UNTOUCHED) and not label.startswith(
            (TAMPER_PREFIX, CORRECT_PREFIX, REFUSED_PREFIX)
        ):
            flagged |= {
                t["question"] for t in g.tests if not t["hidden"] and not t["passed"]
            }
        verdict = ("OK: " if good else "FAILED: expected ") + expect
        if g.status != "ok":
            verdict += f" [{g.status}: {g.message}]"
        print(
            f"  {label[:70]:70s} {g.percent:5.1f}% {pub:>3d}/{n_pub:<3d} {hid:>3d}/{n_hid:<3d}  {verdict}"
        )
        if label not in (REFERENCE, UNTOUCHED) and g.status == "ok":
            public_msg, hidden_msg = (
                g.first_failure(hidden=False),
                g.first_failure(hidden=True),
            )
            print(
                f"      public check says: {public_msg[:150] or '(all public checks pass)'}"
            )
            print(
                f"      hidden tests say:  {hidden_msg[:150] or '(all hidden tests pass)'}"
            )
            wrong = not label.startswith(
                (TAMPER_PREFIX, CORRECT_PREFIX, REFUSED_PREFIX)
            )
            for _, line, silent in question_verdicts(label, g) if wrong else []:
                print(f"      {line[:150]}")
                if silent:
                    problems.append(f"{name}: {silent}")
        if not good:
            problems.append(f"{label}: expected {expect}")
    problems += check_attacks(data.get("attacks", {}))
    problems += _held_to_the_rules(name, grades)
    kept = {label: g.questions for label, g in grades.items()}
    problems += table_problems(name, kept, REFERENCE)
    for question in data["questions"]:
        if question not in flagged:
            problems.append(
                f"question {question}: no listed mistake is flagged by a public check"
            )
    if len(grades) < 4:
        problems.append("needs wrong answers in exercises/wrong_answers/")
    for p in problems:
        print(f"  FAILED: {p}")
    return not problems


def _held_to_the_rules(name: str, grades: dict[str, Grade]) -> list[str]:
    """The message and scoring rules (`tools.exercise_messages`,
    `tools.exercise_public_rule.scoring_problems`): the problems of the rules an exercise is
    held to (`HELD`, `SCORING_HELD`); the others' problems are printed as warnings (their
    masters are not converted yet)."""
    messages = message_problems(name, MASTERS / f"{name}.ipynb")
    scoring = scoring_problems(grades[REFERENCE]) if REFERENCE in grades else []
    held = (messages if name in HELD else []) + (
        scoring if name in SCORING_HELD else []
    )
    warned = (messages if name not in HELD else []) + (
        scoring if name not in SCORING_HELD else []
    )
    for problem in warned[:5]:
        print(f"  warning (not yet held to it): {problem}")
    if len(warned) > 5:
        print(f"  warning: ... and {len(warned) - 5} more of the same kinds")
    return held
