"""The process that runs one notebook, and the wire to it: the half of
`session` that starts, restarts and ends the child and keeps every exchange within its time.

`Child` forks the child (`sandbox.serve`) from a server that imported PyTorch and NumPy
but never ran student code, started with an environment stripped of the grader's
variables. Every frame is checked (`wire.checked_*`) and numbered; a frame out of turn, one
that is not a valid message, an ended process or a call past its time limit costs that
function's question (`CallLost`, `Child.lost`) and the child is started again for the
others; a cell past its limit is skipped. Past the whole submission's limit, the child is
killed (`SubmissionTimeout`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any

from attnbook_grader import jail, processes, reach, wire
from attnbook_grader.sandbox import serve
from attnbook_grader.servers import _processes, _through, server_for, server_pids

__all__ = [
    "Child",
    "CallLost",
    "SubmissionGone",
    "SubmissionTimeout",
    "CALL_SECONDS",
    "CELL_SECONDS",
    "QUESTION_SECONDS",
]


class SubmissionTimeout(BaseException):
    """The submission's process ran past its time limit (not an Exception: ends the grading)."""


class SubmissionGone(AssertionError):
    """The submission's process could not run its notebook (it exited, crashed, or sent
    what is not a message)."""


class CallLost(AssertionError):
    """A call that ran past its time, ended the process or broke the wire: it costs its
    function's question (`Session.lost`), never the grader."""


# ----------------------------------------------------------------------------- a child process
CALL_SECONDS = float(os.environ.get("ATTNBOOK_GRADER_CALL_SECONDS", "30"))
CELL_SECONDS = float(os.environ.get("ATTNBOOK_GRADER_CELL_SECONDS", "60"))
QUESTION_SECONDS = float(os.environ.get("ATTNBOOK_GRADER_QUESTION_SECONDS", "120"))
RESTARTS = 8  # starts of a submission's process after a lost call or a skipped cell


class _Late(Exception):
    """No frame came before the deadline."""


class _Broken(Exception):
    """The child ended, or sent a frame that is not a valid message of the conversation."""


class Child:
    """One notebook running in a child process, and the conversation with it. A call that
    runs past its limit (`CALL_SECONDS`, the question's `QUESTION_SECONDS`, callbacks to
    the reference included), ends the process or breaks the wire costs that function's
    question (`lost`, `CallLost`); the process is started again for the other questions.
    A cell that runs past `CELL_SECONDS` is skipped (the process started again without it)."""

    def __init__(
        self,
        sources: list[str],
        swaps: dict[str, list[str]],
        timeout: float | None,
        reference: Any = None,
        judge: Any = None,
        isolate: bool = True,
        without: frozenset[str] = frozenset(),
        trusted: list[int] | None = None,
        deadline: float | None = None,
    ):
        """timeout: the whole submission's seconds (None: no limit, the reference);
        judge: (function name, rules) -> the message of a shortcut rule the submitted
        source breaks, or None (the grader's verdict, `source_rules`); isolate: run it in
        the view `jail` builds (the reference solution, trusted code, needs none);
        without: the packages the process may not reach (`reach`); trusted: the cells
        that are the reference's own (their lent module names are removed); deadline:
        the submission's, shared by its processes (default: now + timeout)."""
        self.without, self.trusted = frozenset(without), list(trusted or [])
        self.server = server_for(
            self.without
        )  # started once, not the submission's time
        self.hide = reach.hidden(self.without) if isolate else []
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout if timeout else float("inf")
        self.deadline = deadline if deadline is not None else self.deadline
        self.question_deadline = float("inf")
        self.judge, self.swaps, self.reference = judge, swaps, reference
        self.sources, self.isolate = list(sources), isolate
        # what the child reported: function -> process events / refused memory
        self.events: dict[str, list[str]] = {}
        self.memory: set[str] = set()
        self.survivors: list[int] = []
        self.lost: dict[str, str] = {}  # function -> why its question is lost
        self.skipped: dict[int, str] = {}  # cell -> why it was skipped
        self.known: dict[str, dict] = {}
        # the global random states the child holds, as it last reported them (None: not
        # known, sent whole), the child's own (`rng`): forgotten when the process ends
        self.rng_kept: dict[str, Any] | None = None
        self.recorded: list[list] = []  # the calls `record` logged, in the last call
        self._record: list[str] = []
        self.starts, self.seq, self.closed = 0, 0, True
        self.how = jail.require() if isolate else None
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        self.uid = processes.sandbox_uid() if root else None
        self.workdir = ""
        self.ready = self._start()

    # ------------------------------------------------------------------ the process
    def _spawn(self) -> None:
        context = _processes()
        self.conn, child_end = context.Pipe()
        self.workdir = tempfile.mkdtemp(prefix="attnbook-submission-")
        self.children_before = processes.grader_children()
        sources = ["" if i in self.skipped else s for i, s in enumerate(self.sources)]
        self.process = context.Process(
            target=serve,
            args=(child_end, sources, self.swaps, self.workdir, self.uid, self.how),
            kwargs={
                "hide": self.hide,
                "without": self.without,
                "trusted": self.trusted,
            },
            daemon=True,
        )
        if self.isolate or self.server is not None:
            with _through(self.server):
                self.process.start()
        else:
            self.process.start()
        child_end.close()
        self.closed, self.seq = False, 0
        self.starts += 1

    def _start(self) -> dict:
        """Start the child; run the cells, each within `CELL_SECONDS` (one that is not is
        skipped and the child started again): the child's "ready" message."""
        while True:
            if self.starts > RESTARTS:
                raise SubmissionGone("the notebook was started too often: scored 0")
            self._spawn()
            cell = -1
            try:
                while True:
                    frame = self._receive(time.monotonic() + CELL_SECONDS)
                    if "cell" not in frame:
                        break
                    cell = wire.checked_index(frame["cell"], len(self.sources))
                ready = wire.checked_ready(frame, len(self.sources))
            except (_Late, _Broken, wire.WireError) as err:
                self.close()
                if cell < 0 or cell in self.skipped:
                    raise SubmissionGone(
                        f"the notebook could not run ({err or 'no answer'}): a crash, or "
                        "a message forged on the grader's pipe?"
                    ) from None
                self.skipped[cell] = (
                    f"TimeoutError: the cell ran longer than {CELL_SECONDS:.0f} s "
                    "(an endless loop?); graded without it"
                    if isinstance(err, _Late)
                    else f"the cell ended the process or wrote on the grader's pipe "
                    f"({err}); graded without it"
                )
                continue
            ready["cell_errors"] += [[i, why] for i, why in self.skipped.items()]
            return ready

    def _ensure(self) -> None:
        """The child running again after a lost call (its cells run once more)."""
        if self.closed:
            self.known.clear()
            self.ready = self._start()

    def alive(self) -> bool:
        return not self.closed and self.process.is_alive()

    def refresh(self) -> None:
        """Start the child again if it ended (the reference, between submissions)."""
        if not self.alive():
            self.close()
            self.starts = 0
            self._ensure()

    def close(self) -> None:
        """End the child and everything it started; `survivors` lists what was still running
        besides the child (a detached process, ...)."""
        if self.closed:
            return
        self.closed, self.rng_kept = True, None
        self.conn.close()
        self.survivors += processes.end_submission(
            self.process.pid,
            server_pids(),
            self.children_before,
            self.uid,
            nested=self.how == "namespaces",
        )
        self.process.join(5)
        shutil.rmtree(self.workdir, ignore_errors=True)

    # ------------------------------------------------------------------ the wire
    def _receive(self, deadline: float) -> dict:
        """The next frame, by `deadline` (and the submission's): _Late, _Broken."""
        left = min(deadline, self.deadline) - time.monotonic()
        try:
            if left <= 0 or not self.conn.poll(left):
                if time.monotonic() >= self.deadline:
                    self.close()
                    raise SubmissionTimeout(
                        f"timeout: grading took longer than {self.timeout:.0f} s "
                        "(endless loops?): the questions not graded yet scored 0"
                    )
                raise _Late()
            return wire.loads(wire.receive(self.conn))  # the whole frame in time
        except (EOFError, OSError, wire.WireError) as err:
            raise _Broken(f"{type(err).__name__}: {str(err)[:200]}") from None

    def _send(self, message: dict) -> None:
        try:
            wire.send(self.conn, wire.dumps(message))  # taken in time, or _Broken
        except (OSError, ValueError) as err:
            raise _Broken(f"{type(err).__name__}: {str(err)[:200]}") from None

    def _lose(self, name: str, why: str) -> CallLost:
        """End the child (it is started again for the next call); `name`'s question is
        lost (the reference's functions are never refused for good)."""
        self.close()
        if self.isolate:
            self.lost.setdefault(name, why)
        return CallLost(why)

    def _callback(self, name: str, reply: dict, deadline: float) -> dict:
        raise NotImplementedError  # `session.Session`

    def _ask(self, name: str, message: dict, deadline: float, limit: float) -> dict:
        """Send a request about `name`, answer the child's callbacks to the reference until
        its reply comes, by `deadline`."""
        if name in self.lost:
            raise CallLost(self.lost[name])
        self._ensure()
        self.seq += 1
        try:
            self._send({**message, "seq": self.seq})
            while True:
                reply = wire.checked_reply(self._receive(deadline), self.seq)
                if "callback" not in reply:
                    return reply
                self._send(self._callback(name, reply, deadline))
        except _Late:
            raise self._lose(
                name,
                f"timed out: {name} did not return within {limit:.0f} s "
                "(an endless loop?): its question scored 0",
            ) from None
        except (_Broken, wire.WireError) as err:
            raise self._lose(
                name,
                f"crashed: the process running {name} ended or broke the grader's "
                f"protocol ({err}): its question scored 0",
            ) from None

    def begin_question(self) -> None:
        """A question's tests start: its calls share `QUESTION_SECONDS`."""
        self.question_deadline = time.monotonic() + QUESTION_SECONDS

    def _deadline(self, seconds: float | None = None) -> tuple[float, float]:
        """(the deadline of a call starting now, its seconds): `CALL_SECONDS`, or `seconds`
        where a test asks for less, within the question's time."""
        now = time.monotonic()
        limit = CALL_SECONDS if seconds is None else min(CALL_SECONDS, seconds)
        deadline = min(now + limit, self.question_deadline)
        return deadline, max(0.0, deadline - now)
