"""What a student reads about a grade, the same on both grading paths: the
hint of a failed test (`hint`: the exception line and the test's own message, e.g. the
``err_msg`` of ``np.testing.assert_allclose``, without the arrays numpy prints after it) and
the feedback of one submission (`feedback_text`: each question that lost points, each failed
test with its public/hidden verdict and its hint). `make grade` writes it to a file per
student; Gradescope's results show the same lines per question. A question the student has
not answered yet (every failed test says `NO_ANSWER`, from `attnbook.exercise_checks.case`)
gets that one line, not one per test; a hint longer than its limit is cut at a word,
with "…" (a hidden test's shows no data the submission returned: `case` keeps only the test's
own words).
Imports nothing else of the grading package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from attnbook.exercise_checks.rules import cut

__all__ = ["cut", "hint", "feedback_text", "one_line", "failed_lines", "NO_ANSWER"]

NO_ANSWER = "No answer yet"  # how `attnbook.exercise_checks.case` begins that message
HIDDEN_LIMIT = 600  # characters of a hidden test's hint (the test's own words, no echo)

_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b:?")
_NOISE = re.compile(
    r"^(Mismatched elements|Max absolute difference|Max relative difference|"
    r"Greatest absolute difference|Greatest relative difference|x:|y:|ACTUAL:|DESIRED:|"
    r"\(shapes|File \"|Traceback|\^|~)"
)


def hint(message: str, limit: int = 600) -> str:
    """The exception line of a failed test and the lines of its own message after it (no
    traceback, no code, no arrays), joined by spaces, at most `limit` characters."""
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    start = next(
        (i for i in range(len(lines) - 1, -1, -1) if _EXCEPTION.match(lines[i])), None
    )
    if start is None:
        return cut(lines[-1] if lines else "", limit)
    kept = [lines[start]]
    for line in lines[start + 1 :]:
        if _NOISE.match(line) or line.startswith(("[", "array(", "tensor(")):
            break
        kept.append(line)
    return cut(" ".join(kept), limit)


def failed_lines(failed: list[Mapping]) -> list[str]:
    """One line per failed test of a question, "name (hidden test|public check): hint"; one
    line in all where every one of them says the question has no answer yet. A house rule's
    verdict comes first: it says why the tests after it failed."""
    failed = sorted(failed, key=lambda t: not str(t["name"]).endswith("house rules"))
    hints = [
        hint(t["message"], HIDDEN_LIMIT if t["hidden"] else 600) or "failed"
        for t in failed
    ]
    if hints and all(NO_ANSWER in h for h in hints):
        text = hints[0][hints[0].index(NO_ANSWER) :]
        return [f"{text} ({len(hints)} tests of this question failed for it)"]
    return [
        f"{t['name']} ({'hidden test' if t['hidden'] else 'public check'}): {h}"
        for t, h in zip(failed, hints)
    ]


def one_line(text: str, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit]


def feedback_text(
    label: str,
    result: Mapping,
    possible: Mapping[str, float],
) -> str:
    """The feedback of one graded submission (Markdown): its score, then each question that
    lost points with each failed test, public or hidden, and its hint. `result`: the
    grade's status, score, questions, tests (``name, question, hidden, passed, message``)
    and message; `possible`: each question's points."""
    total = float(sum(possible.values()))
    lines = [
        f"# Feedback: {label}",
        "",
        f"Score: {float(result.get('score', 0.0)):g} / {total:g} "
        f"(status: {result.get('status', 'ok')})",
    ]
    if result.get("message"):
        lines += ["", f"Note: {one_line(result['message'], 2000)}"]
    for _, why in result.get("cell_errors", []):  # the allowlist's notes
        if str(why).startswith("dynamic code"):
            lines += ["", f"Note: {one_line(why, 600)}"]
    for question, points in possible.items():
        got = float(result.get("questions", {}).get(question, 0.0))
        if got >= points:
            continue
        lines += ["", f"## {question}: {got:g} / {points:g}"]
        failed = [
            t
            for t in result.get("tests", [])
            if t["question"] == question and not t["passed"]
        ]
        lines += [f"- {line}" for line in failed_lines(failed)]
        if not failed:
            lines.append("- no test of this question ran (see the note above)")
    if all(
        float(result.get("questions", {}).get(q, 0.0)) >= p for q, p in possible.items()
    ):
        lines += ["", "Every question has full marks."]
    return "\n".join(lines) + "\n"
