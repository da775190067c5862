#!/usr/bin/env python3
"""Peak memory and time of grading one submission of each exercise through Gradescope's
entry point (`attnbook_grader.autograder.main`): the numbers behind the README's
Gradescope settings.

    python benchmarks/grading_footprint.py [NAME ...]

For each exercise: its autograder zip is built and unpacked as Gradescope does
(``root/source``), the reference solution is the submission (every test runs), and `main`
runs in a fresh Python, as ``run_autograder`` starts it. The whole process tree (grader,
process server, reference, submission) is sampled every 0.1 s: its summed proportional set
size (PSS: shared pages counted once in all) at the peak held over two samples in a row,
and the wall time from the start of Python to results.json. Not a test: run it on an otherwise idle machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.exercise_build import build, exercise_names  # noqa: E402


def _tree(pid: int) -> set[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(stat[1])
            except (OSError, IndexError):
                continue
    found, frontier = {pid}, {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _pss(pids: set[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def measure(name: str, work: Path) -> tuple[float, int, float]:
    """(seconds, peak bytes, score %) of grading the reference solution of `name`."""
    built = build(name, work / "build")
    root = work / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    zipfile.ZipFile(built.autograder_zip).extractall(root / "source")
    reference = nbformat.read(built.reference_nb, as_version=4)
    nbformat.write(reference, root / "submission" / "submission.ipynb")
    main = f"from attnbook_grader.autograder import main; main({str(root)!r})"
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", main], cwd=root / "source")
    # The processes are read one after another, so a fork between two reads counts the
    # shared pages twice (the parent read before it, with all of them, the child after,
    # with its half): single samples over-count by up to 200 MiB. The peak reported is
    # the largest value held over two samples in a row (0.1 s apart).
    peak, last = 0, 0
    while process.poll() is None:
        now = _pss(_tree(process.pid))
        peak, last = max(peak, min(now, last)), now
        time.sleep(0.1)
    seconds = time.perf_counter() - start
    results = json.loads((root / "results" / "results.json").read_text())
    possible = sum(t["max_score"] for t in results["tests"]) or 1
    return seconds, peak, 100 * results["score"] / possible


def main() -> None:
    names = sys.argv[1:] or exercise_names()
    print(f"{'exercise':20s} {'seconds':>8s} {'peak MiB':>9s} {'score':>6s}")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="attnbook-footprint-") as tmp:
            seconds, peak, score = measure(name, Path(tmp))
        print(
            f"{name:20s} {seconds:8.1f} {peak / 2**20:9.0f} {score:5.0f}%", flush=True
        )


if __name__ == "__main__":
    main()
