"""One notebook running in a child process, and the calls into it (exercises 1-9): the half
of the grading engine (`engine`) that talks to the process where student code runs.

`Session` starts the child (`sandbox.serve`, forked from a server that imported PyTorch, NumPy
and otter but never ran student code) and calls its functions: the inputs go as data
(`wire`); the result, the inputs after the call, the global random states and where inputs
and results live in memory come back as data. The house rules are decided here, in the
grader: the shortcut rules from the submitted source (`judge`, given by `engine`, from
`source_rules`), the rest from the data (`verdicts`); the child's profiler watcher only adds
a second opinion. `RemoteFunction` is what a hidden test holds in place of a student's
function. A child that runs past its time is killed (`SubmissionTimeout`); one that ends
early or sends garbage is `SubmissionGone`. `close` ends the child and everything it
started (`processes.end_submission`).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import Any

from attnbook.exercise_checks import jail, processes, verdicts, wire
from attnbook.exercise_checks.probes import Remote, shape_of
from attnbook.exercise_checks.sandbox import rng_states, serve, set_rng_states

__all__ = ["Session", "RemoteFunction", "SubmissionTimeout", "SubmissionGone"]

_PRELOAD = [
    "numpy",
    "torch",
    "matplotlib.pyplot",
    "otter",
    "IPython.core.inputtransformer2",
    "attnbook.exercise_checks.sandbox",
    "attnbook.exercise_checks.grading",
    "attnbook.exercise_checks.meta_kernels",  # PyTorch's lazy imports for the meta device
    "attnbook.plot",
]
_context: Any = None


class SubmissionTimeout(BaseException):
    """The submission's process ran past its time limit (not an Exception: ends the grading)."""


class SubmissionGone(AssertionError):
    """The submission's process ended (it exited or crashed) before it answered."""


def _processes() -> Any:
    """The process context: children forked from a server process that imported the heavy
    libraries once (multiprocessing's forkserver); nothing is pickled back from a child."""
    global _context
    if _context is None:
        os.environ.setdefault("MPLBACKEND", "Agg")
        for name, value in processes.ONE_THREAD.items():  # read by the process server
            os.environ.setdefault(name, value)
        processes.become_subreaper()
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(_PRELOAD)
        _start_server()
    return _context


# what the process server (and so every child) inherits of the grader's environment
_KEPT_ENV: tuple[str, ...] = ("PATH", "LANG", "LC_", "PYTHON", "VIRTUAL_ENV", "MPL")
_KEPT_ENV += (
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "NUMEXPR_",
    "VECLIB_",
    "ATEN_",
    "NPY_",
    "KMP_",
)
_KEPT_ENV += ("TORCH_",)


def _start_server() -> None:
    """Start the process server with an environment stripped of everything but the
    settings of Python and its numerical libraries: no masters path, no grader variables
    in any child's memory."""
    from multiprocessing import forkserver

    saved = dict(os.environ)
    try:
        for name in saved:
            if not name.startswith(_KEPT_ENV) or name.startswith("PYTHONSTARTUP"):
                del os.environ[name]
        forkserver.ensure_running()
    finally:
        os.environ.clear()
        os.environ.update(saved)


# ----------------------------------------------------------------------------- a child process
class Session:
    """One notebook running in a child process, and the conversation with it."""

    def __init__(
        self,
        sources: list[str],
        swaps: dict[str, list[str]],
        timeout: float,
        reference: Session | None = None,
        judge: Callable[[str, dict], str | None] | None = None,
        isolate: bool = True,
    ):
        """judge: (function name, rules) -> the message of a shortcut rule the submitted
        source breaks, or None (the grader's verdict, `source_rules`); isolate: run it in
        the view `jail` builds (the reference solution, trusted code, needs none)."""
        self.deadline = time.monotonic() + timeout
        self.judge = judge
        # what the child reported: function -> process events / refused memory
        self.events: dict[str, list[str]] = {}
        self.memory: set[str] = set()
        self.survivors: list[int] = []
        self.timeout, self.swaps, self.reference = timeout, swaps, reference
        self.known: dict[str, dict] = {}
        self.recorded: list[
            list
        ] = []  # the calls `record` logged, during the last call
        self.gone = ""
        context = _processes()
        self.conn, child_end = context.Pipe()
        self.workdir = tempfile.mkdtemp(prefix="attnbook-submission-")
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        self.uid = processes.sandbox_uid() if root else None
        self.how = jail.require() if isolate else None
        self.children_before = processes.grader_children()
        self.process = context.Process(
            target=serve,
            args=(child_end, sources, swaps, self.workdir, self.uid, self.how),
            daemon=True,
        )
        self.process.start()
        child_end.close()
        self.ready = self._receive()
        if "crash" in self.ready:
            self.close()
            raise SubmissionGone(f"the notebook could not run: {self.ready['crash']}")

    def close(self) -> None:
        """End the child and everything it started; `survivors` lists what was still running
        besides the child (a detached process, ...)."""
        from multiprocessing import forkserver, resource_tracker

        if self.process.pid is None or getattr(self, "closed", False):
            return
        self.closed = True
        self.conn.close()
        keep = {
            getattr(forkserver._forkserver, "_forkserver_pid", None),
            getattr(resource_tracker._resource_tracker, "_pid", None),
        }
        self.survivors += processes.end_submission(
            self.process.pid,
            {p for p in keep if p},
            self.children_before,
            self.uid,
            nested=self.how == "namespaces",
        )
        self.process.join(5)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _receive(self) -> dict:
        if self.gone:
            raise SubmissionGone(self.gone)
        left = self.deadline - time.monotonic()
        try:
            ready = left > 0 and self.conn.poll(left)
            if not ready:
                self.close()
                raise SubmissionTimeout(
                    f"timeout: grading took longer than {self.timeout:.0f} s "
                    "(an endless loop?): scored 0"
                )
            return wire.loads(self.conn.recv_bytes(wire.MAX_MESSAGE_BYTES))
        except (EOFError, OSError, wire.WireError) as err:
            self.gone = (
                f"the process running your notebook ended or sent garbage "
                f"({type(err).__name__}): os._exit, sys.exit or a crash in your code?"
            )
            self.close()
            raise SubmissionGone(self.gone) from None

    def _send(self, message: dict) -> None:
        if self.gone:
            raise SubmissionGone(self.gone)
        try:
            self.conn.send_bytes(wire.dumps(message))
        except OSError as err:
            self.gone = (
                f"the process running your notebook ended ({type(err).__name__})"
            )
            raise SubmissionGone(self.gone) from None

    def describe(self, name: str) -> dict:
        if name not in self.known:
            self._send({"op": "describe", "name": name})
            self.known[name] = self._receive()
        return self.known[name]

    def call_raw(
        self,
        name: str,
        args: Any,
        kwargs: Any,
        rng: Any,
        rules: dict | None = None,
        grad: dict | None = None,
        record: str | None = None,
    ) -> dict:
        """One call, all in wire form; answers the child's calls of the reference meanwhile.
        record: a function of the submission that is the reference's during this call, each
        of its calls logged in `self.recorded` (the shapes of its inputs)."""
        self._send(
            {
                "op": "call",
                "name": name,
                "args": args,
                "kwargs": kwargs,
                "rng": rng,
                "rules": rules,
                "grad": grad,
                "record": record,
            }
        )
        allowed = set(self.swaps.get(name, [])) | ({record} if record else set())
        while True:
            reply = self._receive()
            if "callback" not in reply:
                return reply
            wanted = str(reply["callback"])
            if wanted == record:
                self.recorded.append(self._shapes(record, reply))
            if self.reference is not None and wanted in allowed:
                answer = self.reference.call_raw(
                    wanted, reply["args"], reply["kwargs"], reply["rng"]
                )
            else:
                answer = {
                    "raised": {
                        "type": "AssertionError",
                        "message": f"{wanted} is not available while {name} runs",
                    },
                    "args_after": reply["args"],
                    "rng": reply["rng"],
                }
            self._send(answer)

    def _shapes(self, name: str, reply: dict) -> list:
        """The shapes of the inputs of a call of `name`, in the order of its parameters."""
        args, kwargs = wire.decode(reply["args"]), wire.decode(reply["kwargs"])
        described = self.reference.describe(name) if self.reference else {}
        params = described.get("params", [])
        ordered = list(args) + [kwargs.get(p) for p in params[len(args) :]]
        return [shape_of(a) for a in ordered]

    def call(
        self,
        name: str,
        args: tuple,
        kwargs: dict,
        rules: dict | None = None,
        grad: dict | None = None,
        record: str | None = None,
    ) -> Any:
        """Call the child's `name` with these inputs as a local call would behave: the result,
        the inputs changed in place and the global random states moved as the child's did.
        With `rules`, the house rules are decided here (AssertionError)."""
        if rules is not None and self.judge is not None:
            found = self.judge(name, rules)
            if found:
                raise AssertionError(found)
        sent_args, sent_kwargs = wire.encode(list(args)), wire.encode(kwargs)
        sent_rng = wire.encode(rng_states())
        self.recorded = []
        reply = self.call_raw(
            name, sent_args, sent_kwargs, sent_rng, rules, grad, record
        )
        if "crash" in reply:
            raise AssertionError(
                f"the grader could not use what {name} returned: {reply['crash']}"
            )
        after_args, after_kwargs = (
            wire.decode(reply["args_after"]),
            wire.decode(reply["kwargs_after"]),
        )
        changed = [
            label
            for label, before, after, now in self._inputs(
                name, args, kwargs, sent_args, sent_kwargs, reply
            )
            if json.dumps(before) != json.dumps(after) and not _is_generator(now)
        ]
        for old, new in zip(args, after_args):
            wire.update_in_place(old, new)
        for key, old in kwargs.items():
            wire.update_in_place(old, after_kwargs.get(key))
        moved = [
            what
            for what in ("torch", "numpy", "random")
            if json.dumps(sent_rng["$d"][_RNG_ORDER[what]])
            != json.dumps(reply["rng"]["$d"][_RNG_ORDER[what]])
        ]
        set_rng_states(wire.decode(reply["rng"]))
        self._note(name, reply)
        if rules is not None:
            verdicts.house_rules(changed, moved, rules)
            _second_opinion(reply)
            memory = reply.get("memory") or {}
            aliased = verdicts.returned_inputs(memory, rules)
            aliased = aliased or verdicts.shared_results(memory, rules)
            if aliased:
                raise AssertionError(aliased)
        if "raised" in reply:
            raise _exception(reply["raised"])
        return wire.decode(reply["result"])

    def _note(self, name: str, reply: dict) -> None:
        """Keep what the child reported that costs the whole question."""
        events = [str(e) for e in reply.get("events") or []]
        if events:
            self.events.setdefault(name, []).extend(events)
            raise AssertionError(verdicts.process_events(events))
        if verdicts.is_memory_error(reply.get("raised")):
            self.memory.add(name)
            raise AssertionError(verdicts.MEMORY_MESSAGE)

    def _inputs(
        self,
        name: str,
        args: tuple,
        kwargs: dict,
        sent_args: list,
        sent_kwargs: Any,
        reply: dict,
    ) -> list[tuple[str, Any, Any, Any]]:
        params = self.describe(name).get("params", [])
        rows = [
            (params[i] if i < len(params) else f"argument {i + 1}", before, after, now)
            for i, (before, after, now) in enumerate(
                zip(sent_args, reply["args_after"], args)
            )
        ]
        after_kwargs = dict((k, v) for k, v in reply["kwargs_after"]["$d"])
        rows += [
            (key, before, after_kwargs.get(key), kwargs.get(key))
            for key, before in sent_kwargs["$d"]
        ]
        return rows


_RNG_ORDER = {"torch": 0, "numpy": 1, "random": 2}  # the order of rng_states()


def _is_generator(value: Any) -> bool:
    import random

    import numpy as np
    import torch

    return isinstance(value, (torch.Generator, np.random.Generator, random.Random))


def _second_opinion(reply: dict) -> None:
    """The child's profiler watcher: it can only take points away."""
    found = reply.get("watcher")
    if found:
        raise AssertionError(
            f"shortcut: your function calls {found}; "
            "the question asks you to write this step yourself"
        )


def _exception(raised: dict) -> BaseException:
    import builtins

    kind = getattr(builtins, str(raised.get("type")), None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RuntimeError
    name = str(raised.get("name", ""))
    message = str(raised.get("message", ""))
    return kind(message if name == kind.__name__ else f"{name}: {message}")


class RemoteFunction(Remote):
    """A function of the submission (or of the reference), called in its own process."""

    def __init__(self, session: Session, name: str, rules: dict | None = None):
        self.session, self.name, self.rules = session, name, rules
        self.__name__ = name

    def with_rules(self, rules: dict) -> RemoteFunction:
        return RemoteFunction(self.session, self.name, rules)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.session.call(self.name, args, kwargs, self.rules)

    def gradient(
        self, args: list, wrt: list[int], output: int | None, upstream: Any
    ) -> Any:
        grad = {"wrt": wrt, "output": output, "upstream": wire.encode(upstream)}
        return self.session.call(self.name, tuple(args), {}, self.rules, grad)

    def recording(self, inner: str, args: list) -> tuple[Any, list[list]]:
        """Call with the submission's function `inner` replaced by the reference's: (the
        result, the shapes of the inputs of each call of `inner`)."""
        result = self.session.call(self.name, tuple(args), {}, self.rules, record=inner)
        return result, list(self.session.recorded)

    def __repr__(self) -> str:
        return f"<function {self.name} of the submission>"
