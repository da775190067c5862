"""Issue 50's "done when" on exercises 1-11 (each with a pool): a roster of 30 gets 30 notebooks of 30 different
variants (`make exercises ROSTER=`), each student's correct answer scores 100 % on both
grading paths (`make grade` with the roster, Gradescope's entry point with its
submission_metadata.json), and the book's worked solution handed in by a roster student
scores like a wrong answer.

Grading costs a reference run per variant, so by default each grading path grades one
student of each task, the two paths different students (`graded`): every task is graded on
both paths, at two seeds; ATTNBOOK_VARIANT_CLASS=all grades all 30 on both."""

from __future__ import annotations

import csv
import json
import os
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest

import tools.exercises as ex
from attnbook_grader import variants
from tools.exercise_build import ANSWER_TAG
from tools.exercise_variants import pool, render_notebook, render_roster

EX01 = "ex01_attention"
POOLED = [
    EX01,
    "ex02_scaling",
    "ex03_multihead",
    "ex04_masks",
    "ex05_positional",
    "ex06_sampling",
    "ex07_cars",
    "ex08_gqa",
    "ex09_kv_quant",
    "ex10_induction",
    "ex11_linear_attention",
]  # the exercises with a pool of variants
SECRET = "the secret of a course of 30"
POINTS = {
    "ex02_scaling": 13,
    "ex07_cars": 15,
    "ex08_gqa": 10,
    "ex11_linear_attention": 10,
}  # an exercise's points where they are not 14


@pytest.fixture(scope="module", params=POOLED)
def klass(request, tmp_path_factory):
    """The zip built with the course secret, the roster, and its 30 rendered notebooks."""
    name = request.param
    tmp = tmp_path_factory.mktemp("klass")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(variants.SECRET_ENV, SECRET)
        built = ex.build(name, tmp / "build")
        roster = tmp / "class.csv"
        with open(roster, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["Student", "ID", "SIS User ID", "Section"])
            for i in range(30):
                writer.writerow(
                    [f"Student {i:02d}", str(5000 + 7 * i), f"S{i:03d}", "A"]
                )
        rows = render_roster(name, built.student_nb, roster, tmp / "roster")
    found = pool(name)
    return {"built": built, "roster": roster, "rows": rows, "tmp": tmp, "name": name,
            "pool": found, "points": POINTS.get(name, 14)}  # fmt: skip


def graded(rows: list, path: int) -> list:
    """The roster rows grading path `path` (0: make grade, 1: Gradescope) grades: all with
    ATTNBOOK_VARIANT_CLASS=all, else the task's first student on path 0 and its second on
    path 1 (its only one where a task has one), so every task is graded on both paths and,
    over the two, at two seeds."""
    if os.environ.get("ATTNBOOK_VARIANT_CLASS") == "all":
        return rows
    per_task: dict[str, list] = {}
    for row in rows:
        per_task.setdefault(row[2].split(",")[0], []).append(row)
    return [
        per_task[task][min(path, len(per_task[task]) - 1)] for task in sorted(per_task)
    ]


def _answered(built, variant: dict) -> nbformat.NotebookNode:
    """The student's notebook at `variant`, answered correctly."""
    return render_notebook(
        ex.make_submission(built, []), variant, pool(variant["exercise"])
    )


def test_30_students_get_30_notebooks_of_30_variants(klass):
    rows = klass["rows"]
    assert len(rows) == 30 and all(path.is_file() for *_, path in rows)
    assert len({path for *_, path in rows}) == 30
    assert len({text for _, _, text, _ in rows}) == 30  # no two share task and seed
    assert {text.split(",")[0] for _, _, text, _ in rows} == set(
        klass["pool"]["roster"]
    )
    listed = list(csv.DictReader(open(rows[0][3].parent / "variants.csv")))
    assert [r["variant"] for r in listed] == [text for _, _, text, _ in rows]
    for student_id, _, text, path in rows:
        nb = nbformat.read(path, as_version=4)
        expected = variants.choose(
            SECRET.encode(), klass["name"], [student_id], klass["pool"]
        )
        assert variants.stated([c.source for c in nb.cells]) == expected
        assert text == variants.label(expected)
        answered = _answered(klass["built"], expected)  # the same notebook, answered
        for mine, handed in zip(answered.cells, nb.cells):
            if ANSWER_TAG not in mine.metadata.get("tags", []):
                assert mine.source == handed.source


def test_a_roster_without_a_secret_is_refused(klass, monkeypatch):
    monkeypatch.delenv(variants.SECRET_ENV, raising=False)
    monkeypatch.delenv(variants.SECRET_FILE_ENV, raising=False)
    with pytest.raises(ValueError, match="no course secret"):
        render_roster(
            klass["name"], klass["built"].student_nb, klass["roster"], klass["tmp"]
        )


def test_every_correct_answer_scores_100_with_make_grade(klass, monkeypatch, tmp_path):
    monkeypatch.setenv(variants.SECRET_ENV, SECRET)
    monkeypatch.setattr(
        "tools.exercise_gradebook.graded_zip",
        lambda name, tmp: klass["built"].autograder_zip,
    )
    folder = tmp_path / "canvas"
    folder.mkdir()
    rows = graded(klass["rows"], 0)
    name = klass["name"]
    for i, (student_id, _, _, handed) in enumerate(rows):
        variant = variants.choose(SECRET.encode(), name, [student_id], klass["pool"])
        path = folder / f"student{i:02d}_{student_id}_{900 + i}_{name}.ipynb"
        if i % 2:  # handed back under the name it was built with (ID-Name.ipynb)
            path = folder / handed.name
        nbformat.write(_answered(klass["built"], variant), path)
    out = tmp_path / "grades.csv"
    run = ex.ClassRun(jobs=1, roster=klass["roster"])
    grades = ex.grade_folder(name, folder, out, 120, run)
    assert len(grades) == len(rows)
    assert {text.split(",")[0] for _, _, text, _ in rows} == set(
        klass["pool"]["roster"]
    )
    listed = {r["student_id"]: r["variant"] for r in csv.DictReader(open(out))}
    assert listed == {i: text for i, _, text, _ in rows}  # the CSV's variant column
    for g in grades:
        full = klass["points"]  # exactly: tenths of points summed are rounded
        assert g.status == "ok" and g.score == g.possible == full, (
            g.submission,
            g.message,
        )
        assert g.message.startswith("variant ") and g.variant in g.message
        feedback = tmp_path / "grades-feedback" / f"{g.submission}.md"
        assert f"variant {g.variant}" in feedback.read_text()  # the student's feedback


def _gradescope(klass, tmp_path: Path, nb, student_id: str) -> dict:
    from attnbook_grader.autograder import main

    root = Path(tempfile.mkdtemp(prefix=f"gs-{student_id}-", dir=tmp_path))
    zipfile.ZipFile(klass["built"].autograder_zip).extractall(root / "source")
    (root / "submission").mkdir(parents=True)
    nbformat.write(nb, root / "submission" / f"{klass['name']}.ipynb")
    meta = {"users": [{"email": f"{student_id}@x.edu", "id": 1, "sid": student_id}]}
    (root / "submission_metadata.json").write_text(json.dumps(meta))
    main(str(root), timeout=120)
    return json.loads((root / "results" / "results.json").read_text())


def test_every_correct_answer_scores_100_on_gradescope(klass, tmp_path, monkeypatch):
    """The zip carries the secret (built with it); nothing in the environment here."""
    monkeypatch.delenv(variants.SECRET_ENV, raising=False)
    for student_id, _, text, _ in graded(klass["rows"], 1):
        variant = variants.choose(
            SECRET.encode(), klass["name"], [student_id], klass["pool"]
        )
        results = _gradescope(
            klass, tmp_path, _answered(klass["built"], variant), student_id
        )
        assert results["score"] == klass["points"], (
            student_id,
            results["output"],
        )
        assert text in results["output"] and results["extra_data"]["variant"] == text


def test_the_book_solution_handed_in_by_a_roster_student_scores_like_a_wrong_answer(
    klass, tmp_path, monkeypatch
):
    monkeypatch.delenv(variants.SECRET_ENV, raising=False)
    student_id, _, text, _ = klass["rows"][0]
    book = ex.make_submission(klass["built"], [])  # the worked solution (book variant)
    results = _gradescope(klass, tmp_path, book, student_id)
    assert results["score"] == 0
    book_variant = variants.label(variants.reserved(klass["pool"]))  # "allow, seed 0"
    assert book_variant in results["output"] and text in results["output"]
    variant = variants.choose(
        SECRET.encode(), klass["name"], [student_id], klass["pool"]
    )
    pasted = _answered(klass["built"], variant)  # the student's own notebook ...
    for cell, from_book in zip(pasted.cells, book.cells):
        if ANSWER_TAG in cell.metadata.get("tags", []):
            cell.source = from_book.source  # ... with the book's answers pasted in
    results = _gradescope(klass, tmp_path, pasted, student_id)
    for question in klass[
        "pool"
    ][
        "questions"
    ]:  # q2 in ex. 1, q5 in 2, q1, q2 in 3, q1 in 4, 5, 8, 9, q4 in 6, 10, q3 in 7, q1-q3 in 11
        q = next(t for t in results["tests"] if t["name"] == question)
        assert results["score"] < klass["points"] and q["score"] < q["max_score"] / 2, (
            results
        )
