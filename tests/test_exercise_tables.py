"""The worked-solution pages' mistake tables against the proof's grades (tools/exercise_tables).

The proof itself (`make exercises-prove`) measures the points; these tests check, without
grading anything, that every row of a held page is tied to wrong answers that exist, and that
the check names a row whose points drift from what was measured.
"""

from __future__ import annotations

import pytest

from tools.exercise_tables import EXPLANATIONS, page_rows, table_problems, table_rows

HELD = ["ex08_gqa", "ex10_induction", "ex11_linear_attention"]
REFERENCE = "reference solution"


def measured_as_on_the_page(name: str) -> dict[str, dict[str, float]]:
    """The grades a proof would report if every row of the page were right."""
    ties = page_rows(name)
    assert ties is not None
    kept: dict[str, dict[str, float]] = {REFERENCE: {}}
    for question, mistake, points, possible in table_rows(EXPLANATIONS / f"{name}.md"):
        kept[REFERENCE][question] = possible
        labels = ties.get(mistake, ())
        for label in (labels,) if isinstance(labels, str) else labels:
            kept.setdefault(label, {})[question] = points
    return kept


@pytest.mark.parametrize("name", HELD)
def test_every_row_is_tied_to_wrong_answers(name):
    rows = table_rows(EXPLANATIONS / f"{name}.md")
    assert len(rows) > 20
    assert table_problems(name, measured_as_on_the_page(name), REFERENCE) == []


def test_a_row_whose_points_drift_is_named():
    name = "ex10_induction"
    kept = measured_as_on_the_page(name)
    label = "find_heads: returns 0-d tensors, not ints"
    kept[label]["q6"] += 0.3
    problems = table_problems(name, kept, REFERENCE)
    assert len(problems) == 1 and "0-d tensors" in problems[0], problems
    assert "the proof measured" in problems[0]


def test_a_missing_wrong_answer_and_a_wrong_total_are_named():
    name = "ex11_linear_attention"
    kept = measured_as_on_the_page(name)
    del kept["delta_update: S changed in place"]
    kept[REFERENCE]["q1"] = 5.0
    problems = table_problems(name, kept, REFERENCE)
    assert any("S changed in place" in p and "no wrong answer" in p for p in problems)
    assert any("the question is worth 5" in p for p in problems)


def test_rounding_to_the_tenth_is_allowed_and_no_more():
    name = "ex08_gqa"
    kept = measured_as_on_the_page(name)
    label = "scores not divided by sqrt(d_k)"
    kept[label]["q2"] += 0.04
    assert table_problems(name, kept, REFERENCE) == []
    kept[label]["q2"] += 0.02
    assert len(table_problems(name, kept, REFERENCE)) == 1
