"""The proof's warn-before-losing rule (issue 28, item 3), on made-up grades: a wrong answer
that loses half or more of a question with every public check of it green is a silent loss;
a smaller loss, a loss a public check flags, and a multiple-choice question are not."""

from __future__ import annotations

from tools.exercise_grading import Grade
from tools.exercise_public_rule import question_verdicts


def grade(
    q1_hidden_passed: list[bool], q1_public_passed: bool, mcq_right: bool
) -> Grade:
    """Question q1: one public check (0 points) and hidden tests of 1 point each; question
    q2: a multiple-choice question (its one public check is `test_one_letter`)."""
    tests = [
        {
            "name": "test_example",
            "question": "q1",
            "hidden": False,
            "points": 0.0,
            "passed": q1_public_passed,
            "message": "" if q1_public_passed else "hint",
        },
    ]
    tests += [
        {
            "name": f"test_hidden_{i}",
            "question": "q1",
            "hidden": True,
            "points": 1.0,
            "passed": ok,
            "message": "",
        }
        for i, ok in enumerate(q1_hidden_passed)
    ]
    tests += [
        {
            "name": "test_one_letter",
            "question": "q2",
            "hidden": False,
            "points": 0.0,
            "passed": True,
            "message": "",
        },
        {
            "name": "test_the_answer",
            "question": "q2",
            "hidden": True,
            "points": 1.0,
            "passed": mcq_right,
            "message": "",
        },
    ]
    questions = {
        "q1": float(sum(q1_hidden_passed)),
        "q2": 1.0 if mcq_right else 0.0,
    }
    return Grade("sub", "ok", sum(questions.values()), 5.0, questions, tests)


def problems(g: Grade) -> list[str]:
    return [p for _, _, p in question_verdicts("a wrong answer", g) if p]


def test_half_a_question_lost_with_green_public_checks_is_silent():
    found = problems(grade([True, True, False, False], True, True))
    assert (
        len(found) == 1
        and "q1 lost silently by wrong answer 'a wrong answer'" in found[0]
    )


def test_a_flagged_loss_a_small_loss_and_a_wrong_letter_are_not():
    assert problems(grade([True, True, False, False], False, True)) == []
    assert problems(grade([True, True, True, False], True, True)) == []
    verdicts = question_verdicts("a wrong answer", grade([True] * 4, True, False))
    assert [(q, p) for q, _, p in verdicts] == [("q2", "")]
    assert "multiple choice: exempt" in verdicts[0][1]


def test_a_warned_mistake_must_fail_a_public_check_however_small_its_loss():
    # a quarter of q1 lost, its public check green
    small = grade([True, True, True, False], True, True)
    found = [p for _, _, p in question_verdicts("warned (q1): inf padding", small) if p]
    assert len(found) == 1 and "q1 lost silently" in found[0]
    flagged = grade([True, True, True, False], False, True)
    assert not [p for _, _, p in question_verdicts("warned (q1): x", flagged) if p]
    assert not [p for _, _, p in question_verdicts("warned (q2): x", small) if p]


def test_a_non_solving_answer_must_score_zero_on_its_question():
    some = grade([True, False, False, False], False, True)  # 1 of 4 on q1
    found = [p for _, _, p in question_verdicts("non-solving (q1): zeros", some) if p]
    assert len(found) == 1 and "scores 1/4" in found[0]
    full = grade([True] * 4, True, True)
    found = [p for _, _, p in question_verdicts("non-solving (q1): zeros", full) if p]
    assert len(found) == 1 and "scores 4/4" in found[0]
    nothing = grade([False] * 4, False, True)
    assert not [p for _, _, p in question_verdicts("non-solving (q1): x", nothing) if p]


def test_the_scoring_policy() -> None:
    """`scoring_problems`: a public check worth 0 points, or a question whose largest test is
    worth less than half of it, is a problem; a question with a core test of half its points
    and public checks that cost something is not."""
    from tools.exercise_public_rule import scoring_problems

    def row(name: str, hidden: bool, points: float) -> dict:
        return {
            "name": name,
            "question": "q1",
            "hidden": hidden,
            "points": points,
            "passed": True,
            "message": "",
        }

    good = Grade(
        "s",
        "ok",
        4,
        4,
        {"q1": 4.0},
        [row("a", False, 0.5), row("core", True, 2.0), row("b", True, 1.5)],
    )
    assert scoring_problems(good) == []
    free = Grade(
        "s",
        "ok",
        4,
        4,
        {"q1": 4.0},
        [row("a", False, 0.0), row("core", True, 2.0), row("b", True, 2.0)],
    )
    assert [p.split(":")[1].strip() for p in scoring_problems(free)] == [
        "public checks worth 0 points (a)"
    ]
    spread = Grade(
        "s",
        "ok",
        4,
        4,
        {"q1": 4.0},
        [row("a", False, 1.0), row("b", True, 1.5), row("c", True, 1.5)],
    )
    assert "largest test is worth 1.5 of 4" in " ".join(scoring_problems(spread))
