"""Grading workers for a class run (`make grade`, `python -m tools.exercises grade`): each
submission is graded in a worker process of its own choosing, watched from outside, so that
nothing one notebook does costs more than its own row.

A worker (``python -m tools.exercise_pool ZIP NAME TIMEOUT``) holds the exercise and its
reference process (`tools.exercise_grading.Grader`) and grades the notebooks it is sent, one
at a time: it reads each file itself (the parent never parses a submission), and anything
that goes wrong while grading one (an unreadable notebook, a cell `ast` cannot parse, a
frame that breaks the wire, a RecursionError or MemoryError in the grader) is that
notebook's "error" row, with the reason. The parent (`Pool`) gives each submission a
wall-clock limit (`watchdog`): past it, or if the worker dies (a crash of the grader
itself), the worker and every process descended from it are killed, the submission gets a
"timeout" or "error" row, and a fresh worker takes the next one. `jobs` workers grade at
once. The parent is a subreaper (orphans of a killed worker come back to it and are killed
too), and every worker dies with the parent (``PR_SET_PDEATHSIG``), its process server and
children with it (`attnbook_grader.processes`): no process outlives the run, however it ends.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from attnbook_grader import processes

if TYPE_CHECKING:  # the grading modules load in a worker only (torch, otter, ...)
    from tools.exercise_grading import Grade

__all__ = ["Pool", "WorkerFailed", "grade_one", "worker_main"]

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = float(os.environ.get("ATTNBOOK_GRADER_START_SECONDS", "600"))
RESTARTS = 20  # fresh workers after kills or crashes, per run


class WorkerFailed(RuntimeError):
    """A worker could not start (the exercise or the reference does not load): nothing can be
    graded, and the reason is the worker's own output."""


class _Worker:
    """One worker process and the line protocol to it (JSON, one object per line)."""

    def __init__(self, command: list[str]):
        self.log: IO[bytes] = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            preexec_fn=processes.die_with_parent,
        )
        self.buffer = b""
        self.job: dict | None = None
        self.started = time.monotonic()
        self.ready = False

    def send(self, job: dict) -> None:
        assert self.process.stdin is not None
        self.job, self.started = job, time.monotonic()
        self.process.stdin.write(json.dumps(job).encode() + b"\n")
        self.process.stdin.flush()

    def lines(self) -> Iterator[dict]:
        """The whole lines read so far (call after the pipe is readable); [] at EOF too."""
        assert self.process.stdout is not None
        chunk = os.read(self.process.stdout.fileno(), 1 << 20)
        if not chunk:
            raise EOFError
        self.buffer += chunk
        *whole, self.buffer = self.buffer.split(b"\n")
        for line in whole:
            yield json.loads(line)

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-1500:]

    def kill(self) -> None:
        """The worker and every process descended from it, killed and reaped."""
        processes.kill_tree(self.process.pid)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self.log.close()


class Pool:
    """`jobs` workers grading the submissions of one exercise; `run` yields each result as
    it comes."""

    def __init__(
        self,
        zip_path: Path,
        name: str,
        timeout: float,
        jobs: int,
        watchdog: float,
        command: list[str] | None = None,
    ):
        """command: what starts a worker (tests: a stand-in), by default
        ``python -m tools.exercise_pool ZIP NAME TIMEOUT``."""
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        args = [str(Path(zip_path).resolve()), name, repr(float(timeout))]
        self.command = command or [sys.executable, "-m", "tools.exercise_pool", *args]
        self.jobs, self.watchdog = jobs, watchdog
        self.workers: list[_Worker] = []
        self.restarts, self.todo = 0, 0
        processes.become_subreaper()
        self.before = processes.grader_children()  # never touched: not the run's

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        for worker in self.workers:
            worker.kill()
        self.workers.clear()
        self._kill_orphans()

    def _kill_orphans(self) -> None:
        """Processes that came back to this subreaper from a killed worker's tree."""
        mine = {w.process.pid for w in self.workers}
        for pid in processes.grader_children() - mine - self.before:
            processes.kill_tree(pid)
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        self.workers.remove(worker)
        self._kill_orphans()
        if not self.todo:
            return  # nothing left for a fresh one
        self.restarts += 1
        if self.restarts > RESTARTS:
            raise WorkerFailed(f"workers were restarted {RESTARTS} times: stopping")
        self.workers.append(_Worker(self.command))

    def run(
        self, jobs: list[dict], failed: Callable[[dict, str, str], dict]
    ) -> Iterator[dict]:
        """Grade `jobs` ({"path", "label"}); yields each worker's result (a `Grade` as a
        dict), or `failed(job, status, why)` for a submission whose worker was killed
        (status "timeout") or died (status "error")."""
        todo = list(jobs)
        self.todo = len(todo)
        count = min(self.jobs, len(todo))
        self.workers = [_Worker(self.command) for _ in range(count)]
        while todo or any(w.job for w in self.workers):
            for worker in list(self.workers):
                if worker.ready and worker.job is None and todo:
                    try:
                        worker.send(todo.pop(0))
                    except OSError:  # it died between two jobs: this one is its
                        yield from self._lost(worker, failed, "error")
            self.todo = len(todo)
            yield from self._wait(failed)

    def _deadline(self, worker: _Worker) -> float:
        limit = self.watchdog if worker.ready else START_SECONDS
        return worker.started + limit

    def _wait(self, failed: Callable[[dict, str, str], dict]) -> Iterator[dict]:
        selector = selectors.DefaultSelector()
        for worker in self.workers:
            assert worker.process.stdout is not None
            selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        try:
            soonest = min(
                self._deadline(w) for w in self.workers if w.job or not w.ready
            )
            wait = min(60.0, max(0.0, soonest - time.monotonic()))  # then look again
            events = selector.select(wait)
        finally:
            selector.close()
        for key, _ in events:
            worker = key.data
            try:
                messages = list(worker.lines())
            except (EOFError, ValueError):
                yield from self._lost(worker, failed, "error")
                continue
            for message in messages:
                if message.get("ready"):
                    worker.ready = True
                elif worker.job is not None:
                    worker.job = None
                    yield message
        for worker in list(self.workers):
            if (worker.job or not worker.ready) and time.monotonic() > self._deadline(
                worker
            ):
                yield from self._lost(worker, failed, "timeout")

    def _lost(
        self, worker: _Worker, failed: Callable[[dict, str, str], dict], status: str
    ) -> Iterator[dict]:
        job = worker.job
        if not worker.ready:
            why = worker.tail()
            worker.kill()
            raise WorkerFailed(f"a grading worker could not start:\n{why}")
        if status == "timeout":
            why = (
                f"timeout: grading this notebook took longer than {self.watchdog:.0f} s "
                "(the whole-submission limit of the run); it and every process it "
                "started were ended: scored 0"
            )
        else:
            try:
                code: int | None = worker.process.wait(5)
            except subprocess.TimeoutExpired:
                code = None
            why = (
                f"grading error: the grading process ended while grading this notebook "
                f"(exit code {code}); every process it started was ended: scored 0"
            )
        self._replace(worker)
        if job is not None:
            yield failed(job, status, why)


# ----------------------------------------------------------------------------- the worker
def grade_one(
    grader: Any,
    path: Path,
    label: str,
    name: str,
    timeout: float,
    names: dict[str, str],
    ids: list[str] | None = None,
) -> Grade:
    """One notebook's row (in a worker, `tools.exercise_pool`): read, graded within
    `timeout` seconds (at the variant of the students `ids`, where the exercise has a
    pool), its tests named as in the test files (`names`, `function_names`), its one-line
    message."""
    from tools.exercise_grading import Grade, diagnosis, lost_summary, read_submission
    from tools.exercise_grading import rename_tests

    start = time.monotonic()
    nb, problem = read_submission(path, name)
    if nb is None:
        g = Grade(label, "error", message=problem)
    else:
        g = rename_tests(grader.grade(nb, label, timeout, ids), names)
        if g.status == "ok":
            at = f"variant {g.variant}" if g.variant and grader.secret else ""
            notes = (at, diagnosis(nb, g), lost_summary(g))
            g.message = "; ".join(m for m in notes if m)
    g.seconds = time.monotonic() - start
    return g


def worker_main(argv: list[str]) -> int:
    """A worker: grade each job line of stdin, answer one result line each (the protocol is
    the original stdout; anything else printed goes to stderr)."""
    from tools.exercise_grading import Grade, Grader, function_names, zip_test_files
    from tools.gc_policy import freeze_now

    zip_path, name, timeout = Path(argv[0]), argv[1], float(argv[2])
    with tempfile.TemporaryDirectory(prefix="attnbook-worker-") as tmp:
        names = function_names(zip_test_files(zip_path, Path(tmp)))
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # stray prints of a library never reach the protocol
    sys.stdout = sys.stderr

    def answer(message: dict[str, Any]) -> None:
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    with Grader(zip_path) as grader:
        freeze_now()  # the imports and the exercise: out of every later collection
        answer({"ready": True})
        for line in sys.stdin:
            job = json.loads(line)
            start = time.monotonic()
            try:
                path, label = Path(job["path"]), job["label"]
                ids = job.get("ids")
                g = grade_one(grader, path, label, name, timeout, names, ids)
            except Exception as err:  # noqa: BLE001 - the submission's row, not the run's
                g = Grade(job["label"], "error", message=_grading_error(err))
                g.seconds = time.monotonic() - start
            answer(g.__dict__)
    return 0


def _grading_error(err: BaseException) -> str:
    text = str(err).replace("\n", " ")[:300]
    return f"grading error ({type(err).__name__}): {text}: scored 0"


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
