"""A class run no notebook can stop (issue 44, item 2): frames on the wire read and written
whole within a deadline (`attnbook_grader.frames`, through `child.Child`), nesting bounded,
and the worker pool of `make grade` (`tools.exercise_pool`): a submission that hangs its
worker or crashes it costs its own row, and nothing it started outlives the run. No grading
child starts here: the pool runs a stand-in worker; a few seconds in all.

Every check that could hang if its deadline were gone runs in a subprocess under `timeout`,
so a missing deadline fails the test (exit 124) instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from attnbook_grader import frames, wire

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str, limit: int = 60, **env: str) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter at the repository root, killed after `limit` s."""
    return subprocess.run(
        ["timeout", "-s", "KILL", str(limit), sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )


def test_deep_nesting_is_a_wire_error_never_a_recursion_error():
    for depth in (100_000, frames.MAX_DEPTH + 1):
        text = '{"v": ' + "[" * depth + "]" * depth + "}"
        with pytest.raises(wire.WireError):
            wire.loads(text.encode())
    shallow = '{"v": ' + "[" * 50 + "]" * 50 + "}"
    assert frames._depth(wire.loads(shallow.encode()), 1000) == 51
    with pytest.raises(wire.WireError):
        wire.loads(b"[1, 2]")  # a frame is an object


_HALF_FRAME = """
import multiprocessing, struct, time
from attnbook_grader import frames
grader, child = multiprocessing.Pipe()
import os
os.write(child.fileno(), struct.pack("!i", 4096) + b"{")   # announces 4096, sends 1
start = time.monotonic()
try:
    frames.receive(grader, 2.0)
except TimeoutError as err:
    print("timeout", round(time.monotonic() - start, 1), err)
"""


def test_a_header_announcing_more_than_comes_times_out_whole():
    done = _run(_HALF_FRAME, 30)
    assert done.returncode == 0, (done.returncode, done.stderr[-800:])
    word, seconds, *_ = done.stdout.split()
    assert word == "timeout" and 1.5 <= float(seconds) < 10, done.stdout


_UNREAD_SEND = """
import multiprocessing, time
from attnbook_grader import frames
grader, child = multiprocessing.Pipe()   # the child end never reads
start = time.monotonic()
try:
    frames.send(grader, b"x" * (8 << 20), 2.0)
except TimeoutError as err:
    print("timeout", round(time.monotonic() - start, 1))
"""


def test_a_send_the_other_end_never_reads_times_out():
    done = _run(_UNREAD_SEND, 30)
    assert done.returncode == 0, (done.returncode, done.stderr[-800:])
    word, seconds = done.stdout.split()
    assert word == "timeout" and 1.5 <= float(seconds) < 10, done.stdout


_CHILD_RECEIVE = """
import multiprocessing, struct, time, os
from attnbook_grader import child as child_module
from attnbook_grader.child import Child, _Broken
grader, peer = multiprocessing.Pipe()
c = Child.__new__(Child)          # the wire half of a Child, no process started
c.conn, c.deadline, c.timeout, c.closed = grader, float("inf"), None, False
os.write(peer.fileno(), struct.pack("!i", 4096) + b"{")
start = time.monotonic()
try:
    c._receive(time.monotonic() + 30)
except _Broken as err:
    print("broken", round(time.monotonic() - start, 1), str(err)[:60])
"""


def test_the_child_reads_each_frame_whole_within_the_frame_limit():
    """`child.Child._receive`, the grader's only reader: the first byte came in time, the
    rest never does: the call is lost (`_Broken`) after the frame limit, not a hang."""
    done = _run(_CHILD_RECEIVE, 40, ATTNBOOK_GRADER_FRAME_SECONDS="2")
    assert done.returncode == 0, (done.returncode, done.stderr[-800:])
    word, seconds, *why = done.stdout.split()
    assert word == "broken" and float(seconds) < 15, done.stdout
    assert "TimeoutError" in " ".join(why), done.stdout


# ----------------------------------------------------------------------------- the pool
_STAND_IN = """
import json, os, sys, time
from pathlib import Path
marks = Path(sys.argv[1])
(marks / f"worker-{os.getpid()}").write_text("")
out = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
def say(message):
    out.write(json.dumps(message) + "\\n")
    out.flush()
say({"ready": True})
for line in sys.stdin:
    label = json.loads(line)["label"]
    if label == "hang":             # a sleeper that leaves the tree, then hang
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                (marks / f"sleeper-{os.getpid()}").write_text("")
                time.sleep(3600)
            os._exit(0)
        time.sleep(3600)
    if label == "crash":
        os._exit(3)
    say({"submission": label, "status": "ok", "score": 1.0})
"""

_DRIVER = """
import json, sys
from pathlib import Path
from tools.exercise_pool import Pool
marks = sys.argv[1]
command = [sys.executable, str(Path(marks) / "stand_in.py"), marks]
labels = ["hang", "crash", "a", "b", "c"]
def failed(job, status, why):
    return {"submission": job["label"], "status": status, "message": why}
with Pool(Path("unused.zip"), "ex00", 1.0, 2, 4.0, command=command) as pool:
    rows = list(pool.run([{"label": x, "path": ""} for x in labels], failed))
print(json.dumps(rows))
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_hanging_or_crashing_worker_costs_its_own_row_and_leaves_nothing(tmp_path):
    """Two workers, five submissions: the first hangs its worker (after a double-forked
    sleeper left its process tree), the second crashes its worker. The watchdog (4 s) kills
    the first worker's whole tree, the crash is noticed, fresh workers grade the rest."""
    (tmp_path / "stand_in.py").write_text(textwrap.dedent(_STAND_IN))
    driver = _DRIVER.replace("marks = sys.argv[1]", f"marks = {str(tmp_path)!r}")
    start = time.monotonic()
    done = _run(driver, 90)
    assert done.returncode == 0, (done.returncode, done.stderr[-1500:])
    rows = {r["submission"]: r for r in json.loads(done.stdout.splitlines()[-1])}
    assert set(rows) == {"hang", "crash", "a", "b", "c"}, rows
    assert all(rows[x]["status"] == "ok" for x in "abc"), rows
    assert rows["hang"]["status"] == "timeout", rows["hang"]
    assert "longer than 4 s" in rows["hang"]["message"]
    assert rows["crash"]["status"] == "error", rows["crash"]
    assert "exit code 3" in rows["crash"]["message"]
    time.sleep(0.5)
    started = [int(p.name.split("-")[1]) for p in tmp_path.glob("*-*")]
    assert any(p.name.startswith("sleeper-") for p in tmp_path.glob("*-*"))
    assert len(started) >= 4, "two workers, two replacements and the sleeper"
    assert not [pid for pid in started if _alive(pid)], "a process outlived the run"
    assert time.monotonic() - start < 80


def test_jobs_below_one_are_refused():
    from tools.exercise_pool import Pool

    with pytest.raises(ValueError, match="at least 1"):
        Pool(Path("x.zip"), "ex01_attention", 10.0, 0, 60.0)
