"""The warm kernels of strict nbval (`tools.warm_kernels`, `make nbval`): each notebook gets its
own kernel, forked from a process that loaded PyTorch once, in the notebook's folder and with
the run's environment; a cell that runs too long is interrupted as in an ordinary kernel; and
no process outlives the run, even a run killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = "kernels/attnbook-warm/launch.py"

pytestmark = pytest.mark.skipif(
    not hasattr(os, "pidfd_open"), reason="warm kernels need Linux (pidfd_open)"
)

PROBE = """import os, sys
print("torch loaded before any import:", "torch" in sys.modules)
print("folder:", os.path.basename(os.getcwd()))
print("run's variable:", os.environ.get("ATTNBOOK_PROBE"))
print("pandas loaded:", "pandas" in sys.modules, "pyplot loaded:", "matplotlib.pyplot" in sys.modules)
"""


def _notebook(folder: Path, cells: list[tuple[str, str]]) -> Path:
    """A notebook of (source, stored stdout) cells, stored as executed."""
    nb = nbformat.v4.new_notebook()
    for n, (source, stdout) in enumerate(cells, start=1):
        cell = nbformat.v4.new_code_cell(source, execution_count=n)
        if stdout:
            cell.outputs = [
                nbformat.v4.new_output("stream", name="stdout", text=stdout)
            ]
        nb.cells.append(cell)
    path = folder / "probe.ipynb"
    nbformat.write(nb, path)
    return path


def _nbval(path: Path, *extra: str, **env: str) -> tuple[subprocess.Popen, Path]:
    """pytest --nbval on `path` with the plugin, tagged with TAG; its output goes to a file
    (a pipe would stay open as long as any process of the run lives)."""
    out = path.with_suffix(".out")
    with out.open("w") as sink:
        run = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "tools.warm_kernels", "--nbval"]
            + ["-p", "no:cacheprovider", "-q", f"--rootdir={ROOT}", *extra, str(path)],
            cwd=ROOT,
            env={
                **os.environ,
                "ATTNBOOK_PROBE": "seen",
                "ATTNBOOK_TEST_TAG": TAG,
                **env,
            },
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    return run, out


TAG = f"warm-kernel-test-{os.getpid()}"  # in the environment of this file's runs only


def _ours() -> list[int]:
    """The zygotes, launchers and kernels of this file's runs still running (other nbval
    runs of the same checkout may be running beside them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            environ = (entry / "environ").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if LAUNCH in cmdline and f"ATTNBOOK_TEST_TAG={TAG}\0" in environ:
            found.append(int(entry.name))
    return found


def _expected(warm: bool) -> str:
    return (
        f"torch loaded before any import: {warm}\nfolder: nb\nrun's variable: seen\n"
        "pandas loaded: False pyplot loaded: False\n"
    )


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_each_notebook_gets_a_kernel_in_its_folder_with_the_runs_environment(
    tmp_path: Path, warm: bool
) -> None:
    folder = tmp_path / "nb"
    folder.mkdir()
    path = _notebook(folder, [(PROBE, _expected(warm)), ("x = 1\nprint(x + 1)", "2\n")])
    cold = {} if warm else {"ATTNBOOK_COLD_KERNELS": "1"}
    run, log = _nbval(path, **cold)
    run.wait(timeout=300)
    out = log.read_text()
    assert run.returncode == 0, out[-3000:]
    assert "2 passed" in out, out[-3000:]
    assert not _ours(), "a launcher or zygote outlived the run"


def test_a_cell_over_its_limit_is_interrupted(tmp_path: Path) -> None:
    folder = tmp_path / "nb"
    folder.mkdir()
    slow = "import time\ntime.sleep(120)"
    path = _notebook(
        folder, [(PROBE, _expected(True)), (slow, ""), ("print(3)", "3\n")]
    )
    run, log = _nbval(path, "--nbval-cell-timeout=5")
    run.wait(timeout=300)
    out = log.read_text()
    assert "Timeout of 5 seconds exceeded" in out, out[-3000:]
    assert "KeyboardInterrupt" in out, "the kernel was not interrupted: " + out[-3000:]
    assert not _ours(), "a launcher or zygote outlived the run"


def test_a_run_killed_outright_leaves_nothing_running(tmp_path: Path) -> None:
    folder = tmp_path / "nb"
    folder.mkdir()
    flag = tmp_path / "running"
    wait = f"open({str(flag)!r}, 'w').close()\nimport time\ntime.sleep(300)"
    path = _notebook(folder, [(PROBE, _expected(True)), (wait, "")])
    run, log = _nbval(path)
    try:
        deadline = time.monotonic() + 120
        while not flag.exists():  # the kernel is running the second cell
            assert run.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, (
                "the notebook never reached its second cell"
            )
            time.sleep(0.1)
        assert len(_ours()) == 3, "expected the zygote, a launcher and its kernel"
        run.send_signal(signal.SIGKILL)
        run.wait()
    finally:
        run.kill()
        run.wait()
    deadline = time.monotonic() + 30
    while _ours() and time.monotonic() < deadline:  # they end within moments
        time.sleep(0.1)
    left = _ours()
    for pid in left:  # not to leave them to the rest of the suite
        os.kill(pid, signal.SIGKILL)
    assert not left, "processes of the killed run were still running"
