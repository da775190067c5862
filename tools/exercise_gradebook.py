"""Grading a class folder for the exercises tool (`python -m tools.exercises grade`, `make
grade`): the gradebook CSV, a feedback file per student, the class report
(every test's pass rate, files skipped), and the zip graded with (refused when stale).
"""

from __future__ import annotations

import csv
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from attnbook_grader.feedback import feedback_text, one_line
from attnbook_grader.submissions import walk_folder
from tools.exercise_build import BUILD, MASTERS, ROOT, ExerciseError, build, built_zip
from tools.exercise_pool import Pool, WorkerFailed
from tools.exercise_roster import (
    Identity,
    Person,
    gradescope_metadata,
    identify,
    read_roster,
    resolve,
    roster_files,
    write_canvas,
)
from tools.exercise_grading import (
    Grade,
    exercise_total,
    masters_hash,
    question_points,
    zip_test_files,
)

__all__ = [
    "ClassRun",
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


@dataclass
class ClassRun:
    """What a class run reads besides the folder: who is who (`tools.exercise_roster`)."""

    jobs: int = 1
    watchdog: float | None = None  # seconds per submission (None: timeout + 120)
    roster: Path | None = None
    title: str = ""  # the LMS gradebook's assignment column, "Title (assignment id)"


def grade_folder(
    name: str,
    folder: Path,
    out_csv: Path,
    timeout: float,
    run: ClassRun | None = None,
) -> list[Grade]:
    """Instructor: grade every notebook under `folder` (subfolders too: an LMS export puts
    each student in a folder of their own) against exercise `name`. Writes, row by row as
    each notebook is graded, the gradebook (`out_csv`: one row per notebook, named by its path
    under `folder`, the student it is from where the path says, one column per question, the
    total, the variant graded at ("book" for the reserved one) and a one-line message naming
    each lost question's first failed test and its hint) and a feedback file per student
    (`OUT-feedback/PATH.md`), printing a line per notebook;
    then the report (the hidden tests, the files skipped, the resubmissions superseded) and,
    where students were identified, the LMS gradebook (`OUT-canvas.csv`). Each notebook is
    graded in a worker process (`run.jobs` at once, `tools.exercise_pool`) within `timeout`
    seconds (else "timeout"), watched for `run.watchdog` seconds of wall clock: whatever one
    notebook does costs its own row only. Writes nothing into the repository."""
    run = run or ClassRun()
    folder = Path(folder).resolve()
    written = {  # the files the run writes: the roster must be none of them
        out_csv.with_name(out_csv.stem + tail).resolve()
        for tail in (out_csv.suffix, "-report.txt", "-canvas.csv")
    }
    if run.roster and Path(run.roster).resolve() in written:
        raise ExerciseError(
            f"the roster {run.roster} is a file this run would write (OUT={out_csv} "
            "and the files beside it): choose another OUT; the roster was left as it is"
        )
    submissions, skipped = walk_folder(folder)
    if not submissions:
        why = "; ".join(f"{p}: {w}" for p, w in skipped[:5])
        raise ExerciseError(
            f"no notebooks under {folder}" + (f" ({why})" if why else "")
        )
    roster = read_roster(run.roster) if run.roster else {}
    metadata = gradescope_metadata(folder)
    labels = {str(p.relative_to(folder)): p for p in submissions}
    skipped = [
        s for s in skipped if not (metadata and s[0] == "submission_metadata.yml")
    ]
    who = {label: identify(label, folder, metadata) for label in labels}
    by_file = roster_files(
        roster
    )  # the roster's own notebooks, handed back as they were
    who = {
        label: found or by_file.get(Path(label).name) for label, found in who.items()
    }
    kept, superseded = resolve(who)
    crowded = _crowded_folders(folder, [labels[k] for k in kept])
    crowded = {} if any(who.values()) else crowded  # an LMS export: `resolve` decided
    with tempfile.TemporaryDirectory(prefix="attnbook-grading-") as tmp:
        zip_path = graded_zip(name, Path(tmp))
        test_files = zip_test_files(zip_path, Path(tmp) / "tests")
        total, points = exercise_total(test_files), question_points(test_files)
        rows = _Rows(out_csv, points, total, who, len(kept))
        jobs = []
        for label in kept:
            if label.split("/")[0] in crowded:
                rows.add(Grade(label, "error", message=crowded[label.split("/")[0]]))
            else:
                ids = [_canonical(i, roster) for i in (who[label] or _NOBODY).ids]
                jobs.append({"path": str(labels[label]), "label": label, "ids": ids})
        watchdog = run.watchdog or timeout + 120.0
        try:
            with Pool(zip_path, name, timeout, run.jobs, watchdog) as pool:
                for result in pool.run(jobs, _failed):
                    rows.add(Grade(**result))
        except WorkerFailed as err:  # the exercise itself, not a notebook
            raise ExerciseError(f"{err} ({len(rows.grades)} rows written)") from None
    grades = rows.finish()
    report = out_csv.with_name(out_csv.stem + "-report.txt")
    text = class_report(name, grades) + superseded_report(superseded)
    graded = [(who[g.submission], g.score) for g in grades if who.get(g.submission)]
    if graded:
        lms = out_csv.with_name(out_csv.stem + "-canvas.csv")
        title = run.title or f"{name}"
        unknown = write_canvas(lms, title, graded, roster, total)
        text += _identity_report(grades, who, roster, unknown)
        print(f"wrote {lms} (Canvas's gradebook import: {len(graded)} submissions)")
    report.write_text(text + skipped_report(skipped))
    print(f"{len(grades)} notebooks graded, {len(skipped)} files skipped")
    for relative, why in skipped:
        print(f"  skipped {relative}: {why}")
    for old, new in superseded:
        print(f"  superseded {old}: a later submission of the same student ({new})")
    print(f"wrote {out_csv}, {report} and {rows.feedback}/")
    return grades


_NOBODY = Identity("", [])


def _canonical(student: str, roster: dict[str, Person]) -> str:
    """The id a student's variant is chosen from: the roster's id column for any id the
    roster knows them by (as `make exercises ROSTER=` chose it), else the id as it is."""
    return roster[student].id if student in roster else student


def _failed(job: dict, status: str, why: str) -> dict:
    return Grade(job["label"], status, message=why).__dict__


class _Rows:
    """The gradebook and the feedback files, written as each row comes (a run stopped
    midway keeps every row graded so far), and a line on the terminal per row; `finish`
    writes the CSV again, sorted by path."""

    def __init__(self, out_csv: Path, points: dict, total: float, who: dict, n: int):
        self.out_csv, self.points, self.total, self.who, self.n = (
            out_csv,
            points,
            total,
            who,
            n,
        )
        self.grades: list[Grade] = []
        self.feedback = out_csv.with_name(out_csv.stem + "-feedback")
        self.start = time.monotonic()
        out_csv.parent.mkdir(parents=True, exist_ok=True)  # OUT=new/folder/grades.csv
        self.file = open(out_csv, "w", newline="")
        self.writer = csv.writer(self.file)
        self.writer.writerow(_header(points))
        self.file.flush()

    def add(self, g: Grade) -> None:
        g.possible = self.total  # always the exercise's total, whatever happened
        self.grades.append(g)
        self.writer.writerow(_row(g, self.points, self.who.get(g.submission)))
        self.file.flush()
        target = self.feedback / f"{g.submission}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(feedback_text(g.submission, g.__dict__, self.points))
        elapsed = time.monotonic() - self.start
        print(
            f"[{len(self.grades)}/{self.n} {elapsed:6.0f} s] {g.submission:40s} "
            f"{g.status:8s} {g.score:5.1f}/{g.possible:<5.1f} ({g.seconds:.1f} s) "
            f"{one_line(g.message, 70)}",
            flush=True,
        )

    def finish(self) -> list[Grade]:
        self.file.close()
        grades = sorted(self.grades, key=lambda g: g.submission)
        write_gradebook(self.out_csv, grades, self.points, self.who)
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


def _header(points: dict[str, float]) -> list[str]:
    questions = list(points)
    head = ["submission", "status", *questions, "score", "possible", "percent"]
    return [*head, "student_id", "student", "late", "isolation", "variant", "message"]


def _row(g: Grade, points: dict[str, float], who: Identity | None) -> list:
    return [
        g.submission,
        g.status,
        *[round(g.questions.get(q, 0.0), 6) for q in points],
        round(g.score, 6),
        g.possible,
        f"{g.percent:.1f}",
        " ".join(who.ids) if who else "",
        "; ".join(who.names) if who else "",
        "late" if who and who.late else "",
        g.isolation,
        g.variant,  # "task, param N" (`attnbook_grader.variants.label`), "book", or ""
        one_line(g.message, 600),
    ]


def write_gradebook(
    out_csv: Path,
    grades: list[Grade],
    points: dict[str, float],
    who: dict[str, Identity | None] | None = None,
) -> None:
    """The class's CSV: one row per notebook (its student where the path names one), one
    column per question, total, the variant graded at (empty for an exercise without a pool
    or a notebook graded at none), message."""
    out_csv.parent.mkdir(parents=True, exist_ok=True)  # OUT=new/folder/grades.csv
    fresh = out_csv.with_name(f".{out_csv.name}.new")
    with open(fresh, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(_header(points))
        for g in grades:
            writer.writerow(_row(g, points, (who or {}).get(g.submission)))
    os.replace(fresh, out_csv)


def superseded_report(superseded: list[tuple[str, str]]) -> str:
    lines = [
        "",
        f"Resubmissions superseded (the latest of each student graded): {len(superseded)}",
    ]
    return (
        "\n".join(lines + [f"  {p}: superseded by {new}" for p, new in superseded])
        + "\n"
    )


def _identity_report(
    grades: list[Grade],
    who: dict[str, Identity | None],
    roster: dict[str, Person],
    unknown: list[str],
) -> str:
    """Who is in the LMS gradebook and who is not: notebooks whose path names no student,
    ids the roster does not know, roster students with no submission."""
    nobody = [g.submission for g in grades if not who.get(g.submission)]
    lines = [
        "",
        f"Notebooks whose path names no student (not in the LMS gradebook): {len(nobody)}",
    ]
    lines += [f"  {p}" for p in nobody]
    if roster:
        lines += [
            "",
            f"Ids not in the roster (in the LMS gradebook by id only): {len(unknown)}",
        ]
        lines += [f"  {i}" for i in unknown]
        seen = {i for w in who.values() if w for i in w.ids}
        people = {p.id: p for p in roster.values()}.values()  # one per student
        absent = [p for p in people if not any(roster.get(k) is p for k in seen)]
        absent.sort(key=lambda p: (p.name, p.id))
        lines += ["", f"Roster students with no submission: {len(absent)}"]
        lines += [f"  {p.name} ({p.id})" for p in absent]
    return "\n".join(lines) + "\n"


def skipped_report(skipped: list[tuple[str, str]]) -> str:
    lines = ["", f"Files skipped: {len(skipped)}"]
    return "\n".join(lines + [f"  {p}: {why}" for p, why in skipped]) + "\n"


def class_report(name: str, grades: list[Grade]) -> str:
    """Per question, every test's pass rate and its most frequent failure message: the
    public checks (marked "(public)": they carry points too) and the hidden tests."""
    graded = [g for g in grades if g.status == "ok"]
    lines = [
        f"What the class got wrong in {name}: {len(graded)} of {len(grades)} submissions graded",
        "",
    ]
    by_test: dict[tuple[str, str], list[dict]] = {}
    for g in graded:
        for t in g.tests:
            label = t["name"] if t["hidden"] else f"{t['name']} (public)"
            by_test.setdefault((t["question"], label), []).append(t)
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
