#!/usr/bin/env python3
"""Peak memory and time of grading one submission of each exercise through Gradescope's
entry point (`attnbook_grader.autograder.main`): the numbers behind the README's
Gradescope settings.

    python benchmarks/grading_footprint.py [--by-process] [NAME ...]

For each exercise: its autograder zip is built and unpacked as Gradescope does
(``root/source``), the reference solution is the submission (every test runs), and `main`
runs in a fresh Python, as ``run_autograder`` starts it. The whole process tree (grader,
process server, reference, submission) is sampled every 0.1 s: its summed proportional set
size (PSS: shared pages counted once in all) at the peak held over two samples in a row,
and the wall time from the start of Python to results.json. ``--by-process``: also what each
process held at that peak (PSS, and the part no other process shares) and at its own largest,
named by its role (the grader, a process server and what it leaves out, a child it forked,
a child's own child in its namespace). Not a test: run it on an otherwise idle machine.
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


def _parents() -> dict[int, int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(stat[1])
            except (OSError, IndexError):
                continue
    return parents


def _tree(pid: int, parents: dict[int, int] | None = None) -> set[int]:
    parents = _parents() if parents is None else parents
    found, frontier = {pid}, {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _rollup(pid: int) -> tuple[int, int]:
    """(PSS, private bytes) of one process; (0, 0) once it has ended."""
    pss = private = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1]) * 1024
            elif line.startswith(("Private_Clean:", "Private_Dirty:")):
                private += int(line.split()[1]) * 1024
    except OSError:
        pass
    return pss, private


def _pss(pids: set[int]) -> int:
    return sum(_rollup(pid)[0] for pid in pids)


def _role(pid: int, root: int, parents: dict[int, int], roles: dict[int, str]) -> str:
    """What process `pid` is in the grading tree rooted at `root` (read once per process)."""
    if pid in roles:
        return roles[pid]
    try:
        line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        line, env = "", []
    parent = parents.get(pid, 0)
    without = [
        e.split(b"=", 1)[1].decode()
        for e in env
        if e.startswith(b"ATTNBOOK_GRADER_WITHOUT=")
    ]
    if pid == root:
        role = "grader"
    elif "resource_tracker" in line:
        role = "resource tracker"
    elif "forkserver" in line and parent == root:
        role = f"server without {without[0]}" if without else "server (usual)"
    elif parent in roles and roles[parent].startswith("server"):
        role = f"child of {roles[parent]}"
    elif parent in roles and roles[parent].startswith("child"):
        role = "  its inner process"
    else:
        role = f"other ({line[:40]})"
    roles[pid] = role
    return role


def measure(
    name: str, work: Path, by_process: bool = False
) -> tuple[float, int, float]:
    """(seconds, peak bytes, score %) of grading the reference solution of `name`;
    by_process: print what each process held (`_role`)."""
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
    roles: dict[int, str] = {}
    held: dict[int, tuple[int, int]] = {}  # at the peak: pid -> (PSS, private)
    previous: dict[int, tuple[int, int]] = {}
    largest: dict[int, tuple[int, int]] = {}  # each process's own largest PSS
    while process.poll() is None:
        parents = _parents()
        sample = {pid: _rollup(pid) for pid in sorted(_tree(process.pid, parents))}
        now = sum(p for p, _ in sample.values())
        if min(now, last) > peak:
            held = sample if now <= last else previous
        peak, last, previous = max(peak, min(now, last)), now, sample
        if by_process:
            for pid, value in sample.items():
                _role(pid, process.pid, parents, roles)
                largest[pid] = max(largest.get(pid, (0, 0)), value)
        time.sleep(0.1)
    seconds = time.perf_counter() - start
    results = json.loads((root / "results" / "results.json").read_text())
    possible = sum(t["max_score"] for t in results["tests"]) or 1
    if by_process:
        mib = 2**20
        print(
            f"  {'process':34s} {'pid':>7s} {'PSS at peak':>11s} {'private':>8s} {'own max':>8s}"
        )
        for pid, (pss, _) in sorted(largest.items()):
            at = held.get(pid, (0, 0))
            print(
                f"  {roles.get(pid, '?'):34s} {pid:7d} {at[0] / mib:11.0f} "
                f"{at[1] / mib:8.0f} {pss / mib:8.0f}"
            )
    return seconds, peak, 100 * results["score"] / possible


def main() -> None:
    by_process = "--by-process" in sys.argv[1:]
    names = [a for a in sys.argv[1:] if a != "--by-process"] or exercise_names()
    print(f"{'exercise':20s} {'seconds':>8s} {'peak MiB':>9s} {'score':>6s}")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="attnbook-footprint-") as tmp:
            seconds, peak, score = measure(name, Path(tmp), by_process)
        print(
            f"{name:20s} {seconds:8.1f} {peak / 2**20:9.0f} {score:5.0f}%", flush=True
        )


if __name__ == "__main__":
    main()
