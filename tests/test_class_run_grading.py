"""A class run with real grading children (issue 44, item 2; issue 45, item 6): a folder
whose first notebooks attack the run and whose last is a correct answer grades that answer
as if it were alone (the parse bomb too: its cell is skipped), the malformed file as its own "error" row, and leaves nothing running;
a grader killed with SIGKILL in the middle of a notebook leaves nothing running either.

Each run is a subprocess under `timeout` (a hang fails the test instead of stopping the
suite) grading with the zip built once for the module. About 3 grading children in all.
"""

from __future__ import annotations

import copy
import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
    # the zip's build and two workers' start-up: minutes on a 2-core machine under load
    pytest.mark.timeout(1500),
]
ROOT = Path(__file__).resolve().parents[1]
NAME = "ex01_attention"

_DRIVER = """
import sys
from pathlib import Path
import tools.exercise_gradebook as gradebook
gradebook.BUILD = Path(sys.argv[1])
gradebook.grade_folder(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), 120.0,
                       gradebook.ClassRun(jobs=int(sys.argv[5])))
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    """The exercise's zip where `make grade` looks for it, and a correct notebook."""
    from tools.exercise_build import MASTERS, build
    from tools.exercise_grading import masters_hash
    from tools.exercise_proof import make_submission

    tmp = tmp_path_factory.mktemp("class_run")
    built = build(NAME, tmp / "built")
    zips = tmp / "build" / "autograder"
    zips.mkdir(parents=True)
    shutil.copy(built.autograder_zip, zips / f"{NAME}.zip")
    (zips / f"{NAME}.masters").write_text(f"{MASTERS}\n")
    (zips / f"{NAME}.sha256").write_text(masters_hash(NAME, MASTERS) + "\n")
    return {"build": tmp / "build", "correct": make_submission(built, [])}


def _tree(root: int) -> dict[int, str]:
    """pid -> start time of `root` and every process descended from it, now."""
    parents, starts = {}, {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)], starts[int(entry.name)] = (
                int(fields[1]),
                fields[19],
            )
    found, frontier = set(), {root}
    while frontier:
        found |= frontier
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
    return {p: starts[p] for p in found if p in starts}


def _alive(seen: dict[int, str]) -> list[int]:
    """Those of `seen` still running (the same process: the same start time)."""
    left = []
    for pid, start in seen.items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] == start and fields[0] not in ("Z", "X"):
            left.append(pid)
    return left


def _start(setup: dict, folder: Path, out: Path, jobs: int, **env: str):
    return subprocess.Popen(
        ["timeout", "-s", "KILL", "1200", sys.executable, "-c", _DRIVER]
        + [str(setup["build"]), NAME, str(folder), str(out), str(jobs)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **env},
    )


def test_attackers_first_then_a_correct_answer_graded_as_alone(setup, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    bomb = copy.deepcopy(
        setup["correct"]
    )  # a correct answer, and a cell `ast` cannot build
    bomb.cells.append(nbformat.v4.new_code_cell("_x = " + "+".join(["1"] * 100_000)))
    nbformat.write(bomb, folder / "aa_parse_bomb.ipynb")
    (folder / "ab_deep_json.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    latest = "doejane_4411_90002_ex01_attention.ipynb"  # Canvas's names: a resubmission
    nbformat.write(setup["correct"], folder / latest)
    (folder / latest.replace("90002", "90001")).write_text(
        "an earlier try, never graded"
    )
    out = tmp_path / "out" / "grades.csv"
    run = _start(setup, folder, out, 2)
    seen: dict[int, str] = {}
    while run.poll() is None:
        seen.update(_tree(run.pid))
        time.sleep(0.2)
    printed = run.stdout.read() if run.stdout else ""
    assert run.returncode == 0, printed[-3000:]
    rows = {r["submission"]: r for r in csv.DictReader(open(out))}
    assert set(rows) == {"aa_parse_bomb.ipynb", "ab_deep_json.ipynb", latest}
    assert rows[latest]["status"] == "ok", rows[latest]
    assert float(rows[latest]["percent"]) == 100.0
    assert rows[latest]["student_id"] == "4411"
    # the cell Python cannot parse is skipped in the child; the answers are graded
    assert rows["aa_parse_bomb.ipynb"]["status"] == "ok", rows["aa_parse_bomb.ipynb"]
    assert float(rows["aa_parse_bomb.ipynb"]["percent"]) == 100.0
    assert rows["ab_deep_json.ipynb"]["status"] == "error"
    assert "nested too deep" in rows["ab_deep_json.ipynb"]["message"]
    assert "[3/3" in printed, "a progress line per notebook"
    assert (out.parent / "grades-feedback" / f"{latest}.md").is_file()
    report = (out.parent / "grades-report.txt").read_text()
    assert f"{latest.replace('90002', '90001')}: superseded by {latest}" in report
    canvas = list(csv.reader(open(out.parent / "grades-canvas.csv")))
    assert canvas[2] == ["doejane", "4411", "", "", "", "14"], canvas
    assert len(seen) >= 4, "the driver, a worker, its process server, the reference"
    time.sleep(1.0)
    assert not _alive(seen), "processes of the run outlived it"


def _namespaced(pids) -> bool:
    """Whether one of `pids` is PID 1 of a namespace of its own (a submission's view)."""
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        line = next((x for x in status.splitlines() if x.startswith("NSpid:")), "")
        if len(line.split()) > 2:
            return True
    return False


def test_a_grader_killed_midway_leaves_nothing_running(setup, tmp_path):
    """A notebook loops in a cell (the cell limit raised to 10 minutes); once its child runs,
    the grading process is killed with SIGKILL: no clean-up code of it runs, and still
    every process of the run (worker, process server, reference, the submission's two)
    ends within seconds."""
    folder = tmp_path / "class"
    folder.mkdir()
    looping = copy.deepcopy(setup["correct"])
    looping.cells.insert(2, nbformat.v4.new_code_cell("while True:\n    pass"))
    nbformat.write(looping, folder / "loop.ipynb")
    run = _start(
        setup, folder, tmp_path / "g.csv", 1, ATTNBOOK_GRADER_CELL_SECONDS="600"
    )
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and run.poll() is None:
        tree = _tree(run.pid)
        seen.update(tree)
        if _namespaced(tree) or len(tree) >= 7:  # the submission's child is running
            break
        time.sleep(0.2)
    assert run.poll() is None, (run.stdout.read() if run.stdout else "")[-2000:]
    time.sleep(2.0)
    seen.update(_tree(run.pid))
    children = Path(f"/proc/{run.pid}/task/{run.pid}/children").read_text().split()
    for pid in [int(c) for c in children] + [run.pid]:  # the grader, then `timeout`
        os.kill(pid, signal.SIGKILL)
    run.wait()
    left = seen
    for _ in range(100):
        left = {p: s for p, s in seen.items() if p in _alive(seen)}
        if not left:
            break
        time.sleep(0.2)
    assert not left, f"still running 20 s after the grader was killed: {sorted(left)}"
