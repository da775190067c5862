#!/usr/bin/env python3
"""How long `make grade` takes for a class: N notebooks of one exercise, half of them the
reference solution and half the exercise's listed wrong answers (cycled), graded with
`JOBS` workers, as `make grade EXERCISE=... SUBMISSIONS=... JOBS=2` does.

    python benchmarks/class_run.py [--exercise ex01_attention] [--n 100] [--jobs 2]

Prints the wall time of the whole run (the workers' start included), the median seconds
per notebook per worker and how many rows each status got. Not a test: run it on an otherwise
idle machine (the README quotes it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.exercise_build import build  # noqa: E402
from tools.exercise_gradebook import ClassRun, grade_folder  # noqa: E402
from tools.exercise_proof import load_wrong_answers, make_submission  # noqa: E402
from tools.exercises import DEFAULT_TIMEOUT  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", default="ex01_attention")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnbook-class-run-") as tmp:
        work = Path(tmp)
        built = build(args.exercise, work / "build")
        wrong = [
            e
            for label, e in load_wrong_answers(args.exercise).items()
            if not label.startswith(("tampering", "correct:"))
        ]
        folder = work / "class"
        folder.mkdir()
        for i in range(args.n):
            edits = [] if i % 2 == 0 else wrong[(i // 2) % len(wrong)]
            nb = make_submission(built, edits)
            nbformat.write(nb, folder / f"student{i:03d}.ipynb")
        start = time.perf_counter()
        grades = grade_folder(
            args.exercise, folder, work / "grades.csv", DEFAULT_TIMEOUT,
            ClassRun(jobs=args.jobs),
        )  # fmt: skip
        wall = time.perf_counter() - start
    statuses: dict[str, int] = {}
    for g in grades:
        statuses[g.status] = statuses.get(g.status, 0) + 1
    seconds = [g.seconds for g in grades if g.seconds]
    print(f"{args.n} notebooks of {args.exercise}, {args.jobs} workers: {wall:.0f} s")
    print(f"statuses: {statuses}")
    if seconds:
        print(f"median {statistics.median(seconds):.1f} s per notebook per worker")


if __name__ == "__main__":
    main()
