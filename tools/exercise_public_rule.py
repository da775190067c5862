"""The proof's warn-before-losing rule (issue 28, item 3), used by `tools/exercise_proof.py`:
a wrong answer in the proofs that loses half or more of a question's points must fail at
least one public check of that question, with a message that names the mistake; otherwise the
student sees green public checks and loses the question at grading (a silent loss), and the
proof fails.
"""

from __future__ import annotations

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


def question_points(g: Grade) -> dict[str, float]:
    """question -> the points it is worth (the sum of its tests' points)."""
    total: dict[str, float] = {}
    for t in g.tests:
        total[t["question"]] = total.get(t["question"], 0.0) + t["points"]
    return total


def silent_losses(label: str, g: Grade) -> list[tuple[str, str, str]]:
    """The warn-before-losing rule (issue 28, item 3): a wrong answer that loses half or more
    of a question's points must fail at least one public check of that question, whose
    message names the mistake. Returns (question, problem, "") for each question this wrong
    answer loses silently, and (question, "", the failing public check's message) for each
    question it loses loudly, so that the caller can print the public verdict beside the
    hidden one. Multiple-choice questions (see
    `MULTIPLE_CHOICE_CHECK`) are exempt. `g` is the grade of a wrong answer (the caller leaves
    out the reference, the untouched notebook, tampering and correct answers)."""
    if g.status != "ok":
        return []
    found = []
    for question, possible in question_points(g).items():
        lost = possible - g.questions.get(question, 0.0)
        if (
            possible <= 0
            or lost < possible / 2 - 1e-9
            or is_multiple_choice(g, question)
        ):
            continue
        failed_public = [
            t
            for t in g.tests
            if t["question"] == question and not t["hidden"] and not t["passed"]
        ]
        score = g.questions.get(question, 0.0)
        if failed_public:
            first = failed_public[0]
            found.append((question, "", f"{first['name']}: {first['message']}"))
        else:
            found.append(
                (
                    question,
                    f"{question} lost silently by wrong answer {label!r}: "
                    f"{score:g}/{possible:g} points and every public check of {question} passes "
                    "(add a public check that fails with a hint naming this mistake)",
                    "",
                )
            )
    return found
