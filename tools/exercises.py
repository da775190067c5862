#!/usr/bin/env python3
"""Build, check, prove and grade the course's graded exercises (otter-grader 7, no Docker).

    python -m tools.exercises build [--roster class.csv]
                                               everything below, into _build/exercises/ only
                                               (with a roster: one notebook per student)
    python -m tools.exercises publish          build, then write the committed student files
    python -m tools.exercises check            the committed student files match the masters
    python -m tools.exercises prove [NAME ...] the proofs of `make exercises-prove` (below)
    python -m tools.exercises grade NAME DIR [--out grades.csv] [--timeout 300] [--jobs N]
                                    [--watchdog S] [--roster class.csv] [--title "T (id)"]
    python -m tools.exercises --masters PATH COMMAND ...   the same, from a private copy

`--masters PATH` (make: MASTERS=PATH) reads the master notebooks from PATH instead of
exercises/masters/, the public ones (PATH is the masters folder of a copy of exercises/: the
masters name ../autograder-requirements.txt, and the proofs take wrong answers from
PATH/../wrong_answers/ if that exists): an instructor grading for credit keeps the hidden
tests private that way.
From a private copy no solutions page is written and student notebooks get no link to one.

Each exercise is one master notebook `exercises/masters/NAME.ipynb` (solutions, public tests,
hidden tests). `build` runs `otter assign` on it into `_build/exercises/NAME/`, copies the
Gradescope-compatible autograder zip to `_build/exercises/autograder/NAME.zip`, writes
nothing outside `_build/`, and names the committed files a fresh build would change.
`publish` (`make exercises-publish`) builds, then writes the two generated artefacts that are
committed, because they are served from the repository and the package, not from a build:
  - the student notebook to `exercises/student/NAME.ipynb` (a page of the book, and what
    students open on Colab and Binder), its chapter links pointing at the published book
    (`html.baseurl` of _config.yml);
  - the public checks to `src/attnbook/exercise_checks/NAME/` (installed with the package so
    `grader.check` works wherever the notebook runs);
  - the worked solutions to `exercises/solutions/NAME.ipynb` (a page of the book, solutions
    folded, no test shown), from the public masters only.
`check` fails if a committed copy differs from a fresh build (the tests run it too).
`build --roster class.csv` (make: ROSTER=) also writes one student notebook per student of
the roster to `_build/exercises/roster/NAME/` with a `variants.csv`: each at the variant
the grader recomputes for that student (`tools.exercise_variants`; the course secret from
$ATTNBOOK_COURSE_SECRET or the file $ATTNBOOK_COURSE_SECRET_FILE names).

`prove` requires, for every exercise: the reference solution scores 100 %, the untouched
student notebook 0, every wrong answer of `exercises/wrong_answers/NAME.py` (text edits of the
reference) less than 100 %, a tampering one 0 on the questions it tampers with, a refused one
(code the allowlist refuses: run in the isolated child, noted) no question above its twin
without it, and a
correct-but-different one 100 %; each question has a listed mistake that one of its public
checks flags; a wrong answer that loses half or more of a question fails one of that
question's public checks (multiple-choice questions exempt), one labelled "warned (qN): ..."
fails a public check of qN whatever it loses there, and one labelled "non-solving (qN): ..."
scores 0 on qN (the labels: tools/exercise_proof.py); it prints the message each
mistake gets, and per question lost the public verdict beside the hidden score. Where the
wrong-answer file ties the rows of the worked-solutions page's mistake tables to its wrong
answers (`PAGE_ROWS`), every row must be tied and its "Points kept" must be what the proof
measured, to the tenth (`tools.exercise_tables`). Two worker
processes share the exercises, the longest proofs first; each builds and grades its
exercises in one Python process (one import of PyTorch and otter, one process server for all
of them).

One engine grades everything (`attnbook_grader.engine`, the package in grader/ that `make
setup` installs and `grade` checks is this checkout's release; the autograder zip carries its
wheel and runs it on Gradescope): the submission's notebook runs in a child process forked from a server
that never ran student code; the tests (otter's own test classes, reading the autograder's
test files) run in the grading process, sending inputs to the child and getting results back
as data; the reference solution, for the example data and for the other questions' functions,
runs in a child of its own.

`grade` (instructors) writes a CSV with one line per submission (`possible` is always the
exercise's total; the message says in one line what went wrong: not a notebook, the wrong
exercise, a syntax error in question N, a cell that raised, a timeout) and, beside it, a
report of the pass rate of every test (the public checks marked) and its most frequent
failure message. It never writes into the repository. Every grading runs under a time limit: a submission that loops
forever gets a grade (zero, status "timeout"), never a hang. Each notebook is graded in a
worker process watched from outside (`tools.exercise_pool`, `--jobs` at once): whatever one
does costs its own row; rows are written and printed as they come. Student ids are read
from LMS file names (`tools.exercise_roster`): the latest submission of each student is
graded, and an LMS gradebook (Canvas's import layout) is written beside the CSV.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from attnbook_grader import jail
from attnbook_grader.jail import IsolationUnavailable

# The tool's other modules (building, grading, proofs); their names are re-exported here,
# where the tests and instructors look for them.
from tools.exercise_build import (
    ANSWER_TAG,
    BUILD,
    CHECKS,
    MASTERS,
    ROOT,
    PRIVATE,
    PUBLIC_MASTERS,
    SOLUTIONS,
    STUDENT,
    WRONG_ANSWERS,
    Built,
    ExerciseError,
    book_url,
    build,
    built_zip,
    exercise_names,
    link_to_book,
    publish,
    publish_zip_only,
    stale_files,
)
from tools.exercise_wheels import installed_engine_problem
from tools.exercise_variants import render_roster
from attnbook_grader.variants import VariantError
from tools.exercise_grading import (
    DEFAULT_TIMEOUT,
    Grade,
    Grader,
    diagnosis,
    exercise_total,
    function_names,
    grade,
    load_exercise,
    lost_summary,
    masters_hash,
    question_points,
    read_submission,
    rename_tests,
    zip_test_files,
)
from tools.exercise_gradebook import (
    ClassRun,
    class_report,
    grade_folder,
    graded_zip,
    skipped_report,
    write_gradebook,
)
from tools.exercise_proof import (
    CORRECT_PREFIX,
    REFERENCE,
    TAMPER,
    TAMPERS,
    TAMPER_PREFIX,
    UNTOUCHED,
    answer_cells,
    check_proof,
    load_wrong_answers,
    make_submission,
    prove,
    prove_one,
    prove_worker,
    reference_answer,
    tampered_questions,
)

__all__ = [
    "ANSWER_TAG",
    "BUILD",
    "CHECKS",
    "MASTERS",
    "ROOT",
    "PRIVATE",
    "PUBLIC_MASTERS",
    "SOLUTIONS",
    "STUDENT",
    "WRONG_ANSWERS",
    "Built",
    "ExerciseError",
    "book_url",
    "build",
    "built_zip",
    "exercise_names",
    "link_to_book",
    "publish",
    "publish_zip_only",
    "stale_files",
    "DEFAULT_TIMEOUT",
    "Grade",
    "Grader",
    "class_report",
    "diagnosis",
    "exercise_total",
    "function_names",
    "grade",
    "load_exercise",
    "read_submission",
    "rename_tests",
    "zip_test_files",
    "CORRECT_PREFIX",
    "REFERENCE",
    "TAMPER",
    "TAMPERS",
    "TAMPER_PREFIX",
    "UNTOUCHED",
    "answer_cells",
    "check_proof",
    "load_wrong_answers",
    "make_submission",
    "prove",
    "prove_one",
    "prove_worker",
    "reference_answer",
    "tampered_questions",
    "grade_folder",
    "graded_zip",
    "lost_summary",
    "masters_hash",
    "question_points",
    "write_gradebook",
    "skipped_report",
    "main",
]


ROSTER_OUT = BUILD / "roster"  # `build --roster`: one notebook per student


# ----------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    """The command line: typed errors from the tool's modules become exit code 1."""
    try:
        return _run(sys.argv[1:] if argv is None else argv)
    except ExerciseError as err:
        print(f"exercises: {err}", file=sys.stderr)
        return 1


def _run(argv: list[str]) -> int:
    if argv[:1] == ["--masters"]:
        # the masters folder is read when the tool's modules are imported (and by the proof
        # workers, which inherit the environment): run the command again with it set
        if len(argv) < 3:
            raise ExerciseError("--masters needs a folder and a command")
        folder = Path(argv[1]).resolve()
        if not folder.is_dir() or not any(folder.glob("*.ipynb")):
            raise ExerciseError(f"--masters {argv[1]}: no folder of master notebooks")
        env = {**os.environ, "ATTNBOOK_MASTERS": str(folder)}
        command = [sys.executable, "-m", "tools.exercises", *argv[2:]]
        return subprocess.run(command, env=env, cwd=ROOT).returncode
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_build = sub.add_parser(
        "build", help="build every (or the named) exercise into _build/exercises/"
    )
    p_build.add_argument("names", nargs="*")
    p_build.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="a CSV of the class (as for grade): one student notebook per student, "
        "each at its variant, into _build/exercises/roster/",
    )
    p_publish = sub.add_parser(
        "publish", help="build, then write the committed student notebooks and checks"
    )
    p_publish.add_argument("names", nargs="*")
    p_check = sub.add_parser("check", help="fail if committed student files are stale")
    p_check.add_argument("names", nargs="*")
    p_prove = sub.add_parser("prove", help="CI proofs: reference, stub, wrong answers")
    p_prove.add_argument("names", nargs="*")
    p_prove.add_argument("--timeout", type=float, default=120.0)
    p_prove.add_argument("--jobs", type=int, default=2)
    p_grade = sub.add_parser(
        "grade", help="grade a folder of submissions to a CSV and a report"
    )
    p_grade.add_argument("name")
    p_grade.add_argument("folder", type=Path)
    p_grade.add_argument("--out", type=Path, default=None)
    p_grade.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    p_grade.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="notebooks graded at once (worker processes)",
    )
    p_grade.add_argument(
        "--watchdog",
        type=float,
        default=None,
        help="wall-clock seconds per notebook before its worker is killed "
        "(default: timeout + 120)",
    )
    p_grade.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="a CSV of the class (Canvas's gradebook export as it is, or id and name "
        "columns): names and SIS ids for the LMS gradebook",
    )
    p_grade.add_argument(
        "--title",
        default="",
        help='the LMS gradebook\'s assignment column, e.g. "Exercise 1 (123456)"',
    )
    p_grade.add_argument(
        "--unsafe",
        action="store_true",
        help="practice only, never for credit: grade where the kernel offers no isolation "
        "(the submissions can then read the hidden tests and the references)",
    )
    args = parser.parse_args(argv)

    if PRIVATE:
        print(f"exercises: masters from {MASTERS} (private: no solutions pages)")
    names = getattr(args, "names", None) or exercise_names()
    if args.command == "build":
        for name in names:
            built = build(name)
            publish_zip_only(built)
            print(
                f"{name}: _build/exercises/{name}/, _build/exercises/autograder/{name}.zip"
            )
            for p in stale_files(built):
                print(f"  {p}: `make exercises-publish` writes the fresh one")
            if args.roster:
                try:
                    rows = render_roster(
                        name, built.student_nb, args.roster, ROSTER_OUT
                    )
                except (ValueError, VariantError) as err:
                    raise ExerciseError(str(err)) from None
                kinds = len({v for _, _, v, _ in rows})
                print(
                    f"  {len(rows)} student notebooks in {ROSTER_OUT.relative_to(ROOT)}/"
                    f"{name}/ ({kinds} variant{'s' if kinds != 1 else ''}; variants.csv)"
                )
        return 0
    if args.command == "publish":
        for name in names:
            publish(build(name))
            print(
                f"{name}: exercises/student/{name}.ipynb, "
                + ("" if PRIVATE else f"exercises/solutions/{name}.ipynb, ")
                + f"src/attnbook/exercise_checks/{name}/, _build/exercises/autograder/{name}.zip"
            )
        return 0
    if args.command == "check":
        problems = [p for name in names for p in stale_files(build(name))]
        for p in problems:
            print(f"stale: {p} (run `make exercises-publish`)")
        return 1 if problems else 0
    if args.command == "prove":
        return 0 if prove(names, args.timeout, args.jobs) else 1
    if args.command == "grade":
        if args.name not in exercise_names():
            raise ExerciseError(
                f"unknown exercise {args.name!r}; known: {exercise_names()}"
            )
        engine = (
            installed_engine_problem()
        )  # grades with the installed engine: this one
        if engine:
            raise ExerciseError(engine)
        if args.unsafe:
            os.environ["ATTNBOOK_GRADE_UNSAFE"] = "1"  # the grader's; no child sees it
        try:
            jail.require()  # before anything runs: refused here, with the reason
            grade_folder(
                args.name,
                args.folder,
                args.out or Path(f"grades-{args.name}.csv"),
                args.timeout,
                ClassRun(args.jobs, args.watchdog, args.roster, args.title),
            )
        except IsolationUnavailable as err:
            print(f"exercises grade: not graded. {err}", file=sys.stderr)
            return 2
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
