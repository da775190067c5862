"""Grading a class folder for the exercises tool (`python -m tools.exercises grade`, `make
grade`; exercises 1-9): the gradebook CSV, a feedback file per student, the class report
(hidden tests' pass rates, files skipped), and the zip graded with (refused when stale).
"""

from __future__ import annotations

import csv
import tempfile
from collections import Counter
from pathlib import Path

from attnbook_grader.feedback import feedback_text, one_line
from attnbook_grader.submissions import walk_folder
from tools.exercise_build import BUILD, MASTERS, ROOT, ExerciseError, build, built_zip
from tools.exercise_grading import (
    Grade,
    Grader,
    diagnosis,
    exercise_total,
    function_names,
    lost_summary,
    masters_hash,
    question_points,
    read_submission,
    rename_tests,
    zip_test_files,
)

__all__ = [
    "class_report",
    "grade_folder",
    "graded_zip",
    "skipped_report",
    "write_gradebook",
]


# ----------------------------------------------------------------------------- grading a folder
def graded_zip(name: str, tmp: Path) -> Path:
    """The zip `make exercises` built from the masters in use, refused if they changed
    since (its stamp records their hash), else one built now into `tmp`."""
    zip_path = built_zip(name, BUILD)
    if zip_path is None:
        return build(name, tmp / name).autograder_zip
    stamp = zip_path.with_suffix(".sha256")
    recorded = stamp.read_text().strip() if stamp.is_file() else "none recorded"
    if recorded != masters_hash(name, MASTERS):
        raise ExerciseError(
            f"{zip_path.relative_to(ROOT) if zip_path.is_relative_to(ROOT) else zip_path}"
            f" is stale: it was built from other masters than {MASTERS.name}/{name}.ipynb "
            f"as it is now (hash {recorded[:12]}); run `make exercises` (with the same "
            "MASTERS) and grade again"
        )
    return zip_path


def grade_folder(name: str, folder: Path, out_csv: Path, timeout: float) -> list[Grade]:
    """Instructor: grade every notebook under `folder` (subfolders too: an LMS export puts
    each student in a folder of their own) against exercise `name`. Writes the gradebook
    (`out_csv`: one row per notebook, named by its path under `folder`, one column per
    question, the total and a one-line message naming each lost question's first failed test
    and its hint), beside it a report of the hidden tests and the files skipped, and a
    feedback file per student (`OUT-feedback/PATH.md`). Writes nothing into the repository.
    Each notebook runs in a child process within `timeout` seconds (else "timeout")."""
    submissions, skipped = walk_folder(Path(folder))
    if not submissions:
        why = "; ".join(f"{p}: {w}" for p, w in skipped[:5])
        raise ExerciseError(
            f"no notebooks under {folder}" + (f" ({why})" if why else "")
        )
    with tempfile.TemporaryDirectory(prefix="attnbook-grading-") as tmp:
        zip_path = graded_zip(name, Path(tmp))
        test_files = zip_test_files(zip_path, Path(tmp) / "tests")
        total = exercise_total(test_files)
        points = question_points(test_files)
        names = function_names(test_files)
        grades = []
        with Grader(zip_path) as grader:
            crowded = _crowded_folders(folder, submissions)
            for path in submissions:
                label = str(path.relative_to(folder))
                nb, problem = read_submission(path, name)
                if label.split("/")[0] in crowded:
                    nb, problem = None, crowded[label.split("/")[0]]
                if nb is None:
                    g = Grade(label, "error", message=problem)
                else:
                    g = rename_tests(grader.grade(nb, label, timeout), names)
                    if g.status == "ok":
                        g.message = "; ".join(
                            m for m in (diagnosis(nb, g), lost_summary(g)) if m
                        )
                g.possible = total  # always the exercise's total, whatever happened
                grades.append(g)
    write_gradebook(out_csv, grades, points)
    feedback = out_csv.with_name(out_csv.stem + "-feedback")
    for g in grades:
        target = feedback / f"{g.submission}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(feedback_text(g.submission, g.__dict__, points))
    report = out_csv.with_name(out_csv.stem + "-report.txt")
    report.write_text(class_report(name, grades) + skipped_report(skipped))
    for g in grades:
        print(
            f"{g.submission:40s} {g.status:8s} {g.score:5.1f}/{g.possible:<5.1f} "
            f"({g.seconds:.1f} s) {g.message[:80]}"
        )
    print(f"{len(grades)} notebooks graded, {len(skipped)} files skipped")
    for relative, why in skipped:
        print(f"  skipped {relative}: {why}")
    print(f"wrote {out_csv}, {report} and {feedback}/")
    return grades


def _crowded_folders(folder: Path, submissions: list[Path]) -> dict[str, str]:
    """Student folders (the first level under `folder`) holding several notebooks -> why
    none of them is graded: which one counts is the teacher's call, not the grader's."""
    by_folder: dict[str, list[str]] = {}
    for path in submissions:
        parts = path.relative_to(folder).parts
        if len(parts) > 1:
            by_folder.setdefault(parts[0], []).append("/".join(parts[1:]))
    return {
        top: f"{len(found)} notebooks in this student's folder ({', '.join(found)}): "
        "keep the one to grade and grade again"
        for top, found in by_folder.items()
        if len(found) > 1
    }


def write_gradebook(
    out_csv: Path, grades: list[Grade], points: dict[str, float]
) -> None:
    """The class's CSV: one row per notebook, one column per question, total, message."""
    questions = list(points)
    out_csv.parent.mkdir(parents=True, exist_ok=True)  # OUT=new/folder/grades.csv
    with open(out_csv, "w", newline="") as f:
        writer = csv.writer(f)
        header = ["submission", "status", *questions, "score", "possible", "percent"]
        writer.writerow([*header, "message"])
        for g in grades:
            writer.writerow(
                [
                    g.submission,
                    g.status,
                    *[round(g.questions.get(q, 0.0), 6) for q in questions],
                    round(g.score, 6),
                    g.possible,
                    f"{g.percent:.1f}",
                    one_line(g.message, 600),
                ]
            )


def skipped_report(skipped: list[tuple[str, str]]) -> str:
    lines = ["", f"Files skipped: {len(skipped)}"]
    return "\n".join(lines + [f"  {p}: {why}" for p, why in skipped]) + "\n"


def class_report(name: str, grades: list[Grade]) -> str:
    """Per question, every hidden test's pass rate and its most frequent failure message."""
    graded = [g for g in grades if g.status == "ok"]
    lines = [
        f"What the class got wrong in {name}: {len(graded)} of {len(grades)} submissions graded",
        "",
    ]
    by_test: dict[tuple[str, str], list[dict]] = {}
    for g in graded:
        for t in g.tests:
            if t["hidden"]:
                by_test.setdefault((t["question"], t["name"]), []).append(t)
    for question in sorted({q for q, _ in by_test}):
        lines.append(f"{question}")
        for (q, test), runs in by_test.items():
            if q != question:
                continue
            passed = sum(t["passed"] for t in runs)
            failures = Counter(t["message"] for t in runs if not t["passed"])
            common = (
                f" most frequent failure ({failures.most_common(1)[0][1]}x): "
                f"{failures.most_common(1)[0][0]}"
                if failures
                else ""
            )
            lines.append(f"  {test:55s} {100 * passed / len(runs):5.1f} % pass{common}")
    return "\n".join(lines) + "\n"
