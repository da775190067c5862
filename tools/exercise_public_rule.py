"""The proof's warn-before-losing rule (issue 28, item 3), used by `tools/exercise_proof.py`:
a wrong answer in the proofs that loses half or more of a question's points must fail at
least one public check of that question, with a message that names the mistake; otherwise the
student sees green public checks and loses the question at grading (a silent loss), and the
proof fails.

Two kinds of label make the rule stricter for the wrong answers they name (issue 36, item 7):
"warned (q1, q2): ..." is a mistake that must fail a public check of each named question it
loses points on, however few (the review's small silent losses, now warned); "non-solving
(q1): ...", an answer that does not solve the question (a constant, only the right shapes,
a catch-all `except` that returns zeros), must score 0 on each named question.
"""

from __future__ import annotations

import re

from tools.exercise_grading import Grade

# A question whose only public check is this one is multiple choice: a public check can say
# whether the answer is one of the letters, never whether it is the right one, so a wrong
# letter loses the question silently by design. Such questions are exempt from the
# warn-before-losing rule below.
MULTIPLE_CHOICE_CHECK = "test_one_letter"


def is_multiple_choice(g: Grade, question: str) -> bool:
    public = {
        t["name"] for t in g.tests if t["question"] == question and not t["hidden"]
    }
    return public == {MULTIPLE_CHOICE_CHECK}


WARNED, NON_SOLVING = "warned", "non-solving"


def scoring_problems(g: Grade) -> list[str]:
    """The scoring policy (issue 45, item 3), read from a grade's tests and their points:
    every public check is worth something (a failed one costs the student), and each
    question has a core test worth at least half of it (one realistic bug in the property
    the question is about costs at least half)."""
    problems = []
    for question, possible in question_points(g).items():
        rows = [t for t in g.tests if t["question"] == question]
        free = [t["name"] for t in rows if not t["hidden"] and t["points"] <= 0]
        if free:
            problems.append(
                f"{question}: public checks worth 0 points ({', '.join(free)}): give each "
                "a share of the question, so that failing it costs something"
            )
        core = max((t["points"] for t in rows), default=0.0)
        if possible > 0 and core < possible / 2 - 1e-9:
            problems.append(
                f"{question}: its largest test is worth {core:g} of {possible:g} points: "
                "give the test of the property the question is about at least half"
            )
    return problems


def named_questions(label: str) -> tuple[str, set[str]]:
    """("warned" or "non-solving", the questions named in its parentheses), or ("", set())."""
    found = re.match(rf"({WARNED}|{NON_SOLVING}) \(([^)]*)\)", label)
    if not found:
        return "", set()
    return found.group(1), {q.strip() for q in found.group(2).split(",")}


def question_points(g: Grade) -> dict[str, float]:
    """question -> the points it is worth (the sum of its tests' points)."""
    total: dict[str, float] = {}
    for t in g.tests:
        total[t["question"]] = total.get(t["question"], 0.0) + t["points"]
    return total


def question_verdicts(label: str, g: Grade) -> list[tuple[str, str, str]]:
    """Per question that the wrong answer `g` loses points on: (question, the line that puts
    its public verdict beside its hidden score, the problem if the loss is silent, else "").

    The warn-before-losing rule (issue 28, item 3): a wrong answer that loses half or more of
    a question's points must fail at least one public check of that question, whose message
    names the mistake; a smaller loss may stay silent (the hidden tests catch finer points),
    except for a "warned (...)" label's questions; a "non-solving (...)" label's questions
    must score 0 (see the module docstring). Multiple-choice questions are exempt (see `MULTIPLE_CHOICE_CHECK`). The caller passes
    only wrong answers: not the reference, the untouched notebook, tampering or correct
    answers."""
    if g.status != "ok":
        return []
    kind, named = named_questions(label)
    found = []
    for question, possible in question_points(g).items():
        score = g.questions.get(question, 0.0)
        lost = possible - score
        if kind == NON_SOLVING and question in named and score > 1e-9:
            found.append(
                (
                    question,
                    f"{question}: hidden {score:g}/{possible:g}  <- A NON-SOLVING ANSWER SCORES",
                    f"{question}: the non-solving answer {label!r} scores {score:g}/"
                    f"{possible:g} (an answer that does not solve the question must score 0)",
                )
            )
            continue
        if possible <= 0 or lost <= 1e-9:
            continue
        failed_public = [
            t
            for t in g.tests
            if t["question"] == question and not t["hidden"] and not t["passed"]
        ]
        if failed_public:
            first = failed_public[0]
            public = f"fails, {first['name']}: {first['message']}"
        else:
            public = "all public checks pass"
        half = lost >= possible / 2 - 1e-9 or (kind == WARNED and question in named)
        silent = half and not failed_public and not is_multiple_choice(g, question)
        line = f"{question}: hidden {score:g}/{possible:g}, public {public}"
        if silent:
            line += "  <- SILENT LOSS"
        elif half and not failed_public:
            line += "  (multiple choice: exempt)"
        problem = (
            f"{question} lost silently by wrong answer {label!r}: {score:g}/{possible:g} "
            f"points and every public check of {question} passes (add a public check that "
            "fails with a hint naming this mistake)"
            if silent
            else ""
        )
        found.append((question, line, problem))
    return found
