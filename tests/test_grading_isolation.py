"""The grading engine's isolation and limits (issue 36): the submission sees nothing of the
grader's, changes nothing that outlives it, and harms no other question or submission.

* the view (`jail`): as root with namespaces, as root locked in its folder (``chroot``, the
  fallback where namespaces are refused) and as a normal user (``nobody``, a user
  namespace), the child cannot read a secret beside the grader, the grader's folder or
  command line, cannot write the package or the site-packages, holds only the wire's file
  descriptor, has an environment of its own, a /tmp of its own and a file-size limit;
  with no isolation, grading is refused unless practice mode is asked for;
* the limits (`child`): an endless loop in one question's function costs that question
  only, an endless cell and a cell that writes a forged frame on the wire are skipped, a
  reply over the wire's limit costs its call, the next submission grades normally;
* the wire: frames out of turn or of the wrong shape are refused; tensor and array
  subclasses cross as opaque values, and their memory facts name them.

Cost: about 40 s on the shared 2-core machine (one fresh Python for nobody's view, one
small exercise graded six times).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from attnbook_grader import child, jail, source_rules, wire
from attnbook_grader.engine import Exercise, grade_notebook, reference_session
from attnbook_grader.facts import memory_facts

ROOT = Path(__file__).resolve().parents[1]

# ----------------------------------------------------------------------------- the view
# run in the child as a notebook cell: what it can see and do, as data
LOOK = """
import os, json, errno
def _try(fn):
    try:
        return ["ok", repr(fn())[:200]]
    except BaseException as err:
        return ["refused", type(err).__name__]
def _write(path):
    with open(path, "w") as f:
        f.write("x")
    return path
def _fds():
    return [fd for fd in range(0, 1024) if _try(lambda: os.fstat(fd))[0] == "ok"]
def _big():
    with open("/tmp/big", "wb") as f:
        f.write(b"x" * (100 * 2**20))
import attnbook, sys, sysconfig
_sites = {sysconfig.get_paths()["purelib"]}
_sites |= {p for p in sys.path if p.endswith("site-packages")}
SEEN = json.dumps({
    "secret": _try(lambda: open(SECRET).read()),
    "folder": _try(lambda: os.listdir(FOLDER)),
    "cmdline": _try(lambda: open(f"/proc/{GRADER}/cmdline").read()),
    "package": _try(lambda: _write(os.path.join(os.path.dirname(attnbook.__file__), "x.py"))),
    "site": [_try(lambda: _write(os.path.join(p, "zz.pth"))) for p in sorted(_sites)],
    "tmp_before": _try(lambda: sorted(os.listdir("/tmp"))),
    "tmp_write": _try(lambda: _write("/tmp/" + MARK)),
    "big": _try(_big),
    "fds": _fds(),
    "env": sorted(os.environ),
    "uid": os.getuid(),
})
"""

SCRIPT = """
import json, os, sys
from attnbook_grader.session import Session
sources = [sys.argv[1]]
if __name__ == "__main__":
    seen = []
    for _ in range(2):
        s = Session(sources, {}, 300)
        seen.append(json.loads(s.describe("SEEN")["value"]))
        s.close()
    print(json.dumps(seen))
"""

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _python_for_nobody() -> tuple[str, dict] | None:
    """The system's Python of this version with this checkout's packages on PYTHONPATH
    (a virtual environment under /root is out of nobody's reach), if nobody can run it."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    system = shutil.which(f"python{version}", path="/usr/bin")
    site = Path(sys.prefix) / "lib" / f"python{version}" / "site-packages"
    engine = ROOT / "grader" / "src"
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(engine), str(site)])}
    if system is None:
        return None
    done = subprocess.run(
        [*NOBODY, system, "-c", "import attnbook_grader.engine"],
        env={**os.environ, **env},
        cwd="/",
        capture_output=True,
    )
    return (system, env) if done.returncode == 0 else None


def _look(tmp_path: Path, how: str, monkeypatch) -> list[dict]:
    """What two submissions in a row saw: graded here (as root, with namespaces or
    chroot), or by a fresh Python run as nobody."""
    secret = tmp_path / "masters" / "secret.txt"
    secret.parent.mkdir(parents=True)
    secret.write_text("the answers")
    folder = ROOT / "exercises"
    cell = LOOK.replace("SECRET", repr(str(secret))).replace(
        "FOLDER", repr(str(folder))
    )
    cell = cell.replace("GRADER", str(os.getpid())).replace("MARK", repr("mark"))
    if how != "nobody":
        from attnbook_grader.session import Session

        monkeypatch.setattr(jail, "_level", [how])
        seen = []
        for _ in range(2):
            session = Session([cell], {}, 300)
            seen.append(json.loads(session.describe("SEEN")["value"]))
            session.close()
        return seen
    found = _python_for_nobody()
    if found is None:
        pytest.skip("needs root (to become nobody), setpriv and a system Python")
    python, env = found
    own = (
        secret.parent.parent / "own" / "site-packages"
    )  # nobody's: read-only all the same
    own.mkdir(parents=True)
    os.chown(own, 65534, 65534)
    env["PYTHONPATH"] += f"{os.pathsep}{own}"
    for folder in (secret.parent, own.parent, secret.parent.parent):  # nobody looks in
        folder.chmod(0o755)
    env["ATTNBOOK_MASTERS"] = str(secret.parent)
    done = subprocess.run(
        [*NOBODY, python, "-c", SCRIPT, cell],
        env={**os.environ, **env, "HOME": str(tmp_path)},
        cwd=secret.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("how", ["namespaces", "chroot", "nobody"])
def test_the_submission_sees_and_keeps_nothing_of_the_graders(how, monkeypatch):
    if os.geteuid() != 0 and how != "namespaces":
        pytest.skip("the chroot and nobody views need root")
    if jail.level() is None:
        pytest.skip("no isolation on this machine (the refusal is tested below)")
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="attnbook-isolation-"))  # (its own: nobody
    try:  # must look in it, and pytest's folders are 700)
        first, second = _look(tmp_path, how, monkeypatch)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
    for seen in (first, second):
        assert seen["secret"][0] == "refused", seen
        assert seen["folder"][0] == "refused", seen
        assert seen["cmdline"][0] == "refused", seen
        assert seen["package"][0] == "refused", seen
        assert all(tried[0] == "refused" for tried in seen["site"]), seen
        if how == "chroot":  # no file can be created: nothing reaches the host's disk
            assert seen["tmp_write"] == ["refused", "PermissionError"], seen
            assert seen["big"] == ["refused", "PermissionError"], seen
        else:
            assert seen["tmp_write"][0] == "ok", seen
            assert seen["big"] == ["refused", "OSError"], seen  # RLIMIT_FSIZE
        assert len(seen["fds"]) == 4, seen  # stdin, stdout, stderr, the wire
        assert not any(v.startswith("ATTNBOOK") for v in seen["env"]), seen
        if how != "nobody":
            assert seen["uid"] != 0, seen
    assert second["tmp_before"] == first["tmp_before"], "a file outlived a submission"
    assert "mark" not in second["tmp_before"][1]
    assert not (Path("/tmp") / "mark").exists()


def test_without_isolation_grading_for_credit_is_refused(monkeypatch):
    monkeypatch.setattr(jail, "_level", [None])
    monkeypatch.delenv("ATTNBOOK_GRADE_UNSAFE", raising=False)
    with pytest.raises(jail.IsolationUnavailable, match="ATTNBOOK_GRADE_UNSAFE=1"):
        jail.require()
    with pytest.raises(jail.IsolationUnavailable):  # before any submission is graded
        reference_session(Exercise({}, []))
    monkeypatch.setenv("ATTNBOOK_GRADE_UNSAFE", "1")
    assert jail.require() is None


def test_no_view_holds_a_hidden_folder(tmp_path):
    (tmp_path / "keep" / "a").mkdir(parents=True)
    (tmp_path / "keep" / "secret").mkdir()
    (tmp_path / "other").mkdir()
    hidden = [str(tmp_path / "keep" / "secret")]
    parts = jail._split(str(tmp_path), hidden)
    assert sorted(parts) == [str(tmp_path / "keep" / "a"), str(tmp_path / "other")]
    assert jail._split(hidden[0], hidden) == []
    assert all(not p.startswith(str(ROOT / "_build")) for p in jail.view())
    assert str(ROOT) not in jail.view()


# ----------------------------------------------------------------------------- the limits
TEST = """from otter.test_files import test_case

OK_FORMAT = False

name = "{q}"
points = 2

@test_case(points=1, hidden=False)
def test_small({fn}):
    assert {fn}(2) == {want2}

@test_case(points=1, hidden=True)
def test_more({fn}):
    assert {fn}(5) == {want5}
"""


def _nb(cells: list[str]) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    for cell in nb.cells:
        cell.metadata["tags"] = ["otter_assign_solution_cell"]
    return nb


@pytest.fixture(scope="module")
def tiny():
    """Two questions: q1's `double`, q2's `square` (which calls the reference `double`)."""
    tests = {
        "q1": TEST.format(q="q1", fn="double", want2=4, want5=10),
        "q2": TEST.format(q="q2", fn="square", want2=4, want5=25),
        "q3": TEST.format(q="q3", fn="triple", want2=6, want5=15),
    }
    reference = [
        "def double(x):\n    return 2 * x",
        'grader.check("q1")',
        "def square(x):\n    return double(x) * x // 2",
        'grader.check("q2")',
        "def triple(x):\n    return 3 * x",
        'grader.check("q3")',
    ]
    exercise = Exercise.load(tests, _nb(reference))
    session = reference_session(exercise)
    yield exercise, reference, session
    session.close()


def _grade(tiny, monkeypatch, **cells: str) -> dict:
    exercise, reference, session = tiny
    monkeypatch.setattr(child, "CALL_SECONDS", 3.0)
    monkeypatch.setattr(child, "CELL_SECONDS", 3.0)
    sources = list(reference)
    for index, text in cells.items():
        sources[int(index.removeprefix("cell"))] = text
    return grade_notebook(exercise, sources, session, timeout=60)


def test_an_endless_loop_costs_its_question_only(tiny, monkeypatch):
    looping = "def double(x):\n    while True:\n        pass"
    result = _grade(tiny, monkeypatch, cell0=looping)
    assert result["questions"] == {"q1": 0.0, "q2": 2.0, "q3": 2.0}, result
    assert "timed out" in result["reasons"]["q1"]
    assert result["maxima"] == {"q1": 2.0, "q2": 2.0, "q3": 2.0}
    again = _grade(tiny, monkeypatch)
    assert again["score"] == again["possible"] == 6.0, again


def test_a_looping_or_forging_cell_is_skipped(tiny, monkeypatch):
    forge = textwrap.dedent(
        """
        import os, stat, struct, json
        for fd in range(3, 64):
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    body = json.dumps({"ready": True, "cell_events": [[99, "x"]]})
                    os.write(fd, struct.pack("!i", len(body)) + body.encode())
            except OSError:
                pass
        def triple(x):
            return 3 * x
        """
    )
    # the allowlist refuses the forging cell's imports before anything runs (and that
    # costs every question); switched off here, so that the wire itself is what is tested
    monkeypatch.setenv(source_rules.NO_ALLOWLIST, "1")
    result = _grade(
        tiny, monkeypatch, cell2="while True:\n    pass", cell4=forge + "\nos._exit(3)"
    )
    assert result["status"] == "ok", result
    # q2's `square` never got defined (its cell looped), q3's cell is skipped (forged
    # frame, then exit): `triple` is missing too; q1 keeps its points
    assert result["questions"] == {"q1": 2.0, "q2": 0.0, "q3": 0.0}, result
    skipped = {i for i, message in result["cell_errors"] if "without it" in message}
    assert skipped == {2, 4}, result["cell_errors"]


def test_a_callback_that_hangs_the_reference_costs_the_call(tiny, monkeypatch):
    slow = "def square(x):\n    return double(10**10**8) * 0 + x * x"
    result = _grade(tiny, monkeypatch, cell2=slow)
    assert result["questions"]["q2"] == 0.0 and result["questions"]["q1"] == 2.0
    assert "timed out" in result["reasons"]["q2"], result
    again = _grade(tiny, monkeypatch)
    assert again["score"] == 6.0, again


def test_a_reference_that_died_is_started_again(tiny, monkeypatch):
    import signal

    _, _, session = tiny
    os.kill(session.process.pid, signal.SIGKILL)
    session.process.join(5)
    result = _grade(tiny, monkeypatch)
    assert result["score"] == 6.0, result


# ----------------------------------------------------------------------------- the wire
def test_frames_out_of_turn_or_malformed_are_refused():
    good = {"seq": 3, "result": 1, "args_after": [], "kwargs_after": {"$d": []}}
    good["rng"] = {"$d": [[0, 0], [1, 1], [2, 2]]}
    assert wire.checked_reply(good, 3) is good
    for bad in (
        {**good, "seq": 2},
        {**good, "seq": True},
        {**good, "args_after": "x"},
        {**good, "rng": {"$d": []}},
        {**good, "raised": {"type": "E", "message": "m"}},
        {**good, "events": [1]},
        {**good, "extra": 1},
        {"seq": 3, "callback": 1, "args": [], "kwargs": {"$d": []}, "rng": {"$d": []}},
    ):
        with pytest.raises(wire.WireError):
            wire.checked_reply(bad, 3)
    with pytest.raises(wire.WireError):
        wire.checked_ready({"ready": True, "cell_errors": [[5, "x"]]}, 5)
    with pytest.raises(wire.WireError):
        wire.checked_ready({"ready": True, "cell_events": [["0", "x"]]}, 5)
    ready = wire.checked_ready({"ready": True, "cell_errors": [[4, "x"]]}, 5)
    assert ready == {"ready": True, "cell_errors": [[4, "x"]], "cell_events": []}
    with pytest.raises(wire.WireError):
        wire.checked_description({"kind": "function", "params": [1]})


def test_subclasses_cross_opaque_and_their_facts_name_them():
    class Liar(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if "data_ptr" in str(func) or "storage" in str(func):
                return 1234
            return super().__torch_function__(func, types, args, kwargs or {})

    class Sub(np.ndarray):
        pass

    x = torch.randn(3, 4)
    lying = x.as_subclass(Liar)
    assert isinstance(wire.decode(wire.encode(lying)), wire.Opaque)
    assert isinstance(wire.decode(wire.encode(np.ones(2).view(Sub))), wire.Opaque)
    assert isinstance(wire.decode(wire.encode(torch.nn.Parameter(x))), torch.Tensor)
    facts = memory_facts({"x": x}, lying)
    assert facts["results"][0]["storage"] == facts["inputs"]["x"]["storage"]
    assert facts["results"][0]["subclass"] == "Liar"
    from attnbook_grader import verdicts

    assert "subclass" in verdicts.returned_inputs(facts, {"new_object": False})


def test_a_frame_over_the_limit_is_replaced_by_a_crash_report(monkeypatch):
    from attnbook_grader import sandbox

    sent: list[bytes] = []

    class Pipe:
        def send_bytes(self, data: bytes) -> None:
            sent.append(data)

    monkeypatch.setattr(wire, "MAX_MESSAGE_BYTES", 1000)
    sandbox._send(Pipe(), {"result": "x" * 5000})
    assert len(sent[0]) < 1000 and "crash" in wire.loads(sent[0])


def test_a_call_that_must_return_at_once_is_stopped_at_its_own_limit():
    """`RemoteFunction.within` (ex02's refused block sizes): such a call gets its own limit,
    not `CALL_SECONDS`, and says so when it is lost; a right answer's refusal comes back."""
    from attnbook_grader.session import CallLost, RemoteFunction, Session

    cell = (
        "def refuse(n):\n    raise ValueError(f'block_size {n}')\n"
        "def spin(n):\n    while n < 1:\n        pass\n    return n"
    )
    session = Session([cell], {}, 120)
    try:
        with pytest.raises(ValueError, match="block_size 0"):
            RemoteFunction(session, "refuse").within(1)(0)
        with pytest.raises(CallLost, match="spin did not return within 1 s"):
            RemoteFunction(session, "spin").within(1)(0)
        assert "within 1 s" in session.lost["spin"]  # its question scores 0
        assert session._deadline(10**6)[1] <= child.CALL_SECONDS  # never longer
    finally:
        session.close()
