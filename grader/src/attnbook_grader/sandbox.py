"""The process that runs a submission: the only place student code runs.

`serve` runs the notebook's code cells in a fresh namespace (``otter`` is a stand-in whose
``grader.check`` does nothing here), then answers the grader's requests over a pipe, in the
format of `wire`: "describe" a name (a function, data, or missing) and "call" a function with
the inputs the grader sends.
A call reports the result, the inputs and the global random states after the call (or that
they are those the request named, `rng.reply_states`), or the exception it raised, where its
inputs and results live in memory (`memory_facts`), and the processes it tried to start (an
audit hook, which cannot be removed). No verdict is decided here: the grader decides every
house rule from the source and the data (`verdicts`, `source_rules`). The profiler watcher
(`watch.Watcher`), the only check run here, is a second opinion that can only take points away.

Before any student code runs (`_isolate`): every file descriptor but the wire is closed,
the process enters the view of the machine `jail` builds (none of the grader's files), its
environment is replaced by a few fixed variables, and `processes.limit_child` gives it a
session of its own, a sandbox user (as root), memory, process and file-size limits. Every
frame it sends is numbered with the request it answers (`_send`), and one over the wire's
limit becomes a crash report.

While a function of one question runs, the functions of the other questions are the
reference solution's (`swaps`), so that one wrong answer costs points only once.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import os
import sys
import types
from typing import Any

import numpy as np

from attnbook_grader import jail, reach, seccomp, wire
from attnbook_grader.facts import memory_facts, report_exception
from attnbook_grader.processes import ONE_THREAD, limit_child, limits_now
from attnbook_grader.rng import (
    SAME_STATES,
    reply_states,
    rng_states,
    set_rng_states,
    take_request_states,
    take_wire_states,
    wire_states,
)
from attnbook_grader.torchless import has_torch, torch
from attnbook.exercise_checks.rules import exception_from as _exception
from attnbook_grader.watched import (
    as_called,
    labelled as _labelled,
    watched as _watched,
)
from attnbook.exercise_checks.answer_allowlist import ALLOWED_MODULES

__all__ = [
    "serve",
    "run_cells",
    "rng_states",
    "set_rng_states",
    "report_exception",
    "memory_facts",
]

# audit events of code that starts a process
_PROCESS_EVENTS = (
    "os.fork",
    "os.forkpty",
    "os.system",
    "os.posix_spawn",
    "os.spawn",
    "os.exec",
    "subprocess.Popen",
    "pty.spawn",
)
_events: list[str] = []
_KEPT: dict[str, list] = {}  # name -> its last results, alive (separate_results)


def _audit(event: str, args: tuple) -> None:
    if event in _PROCESS_EVENTS and len(_events) < 10:
        _events.append(event)


def take_events() -> list[str]:
    """The process events seen since the last time (and forget them)."""
    found = list(_events)
    _events.clear()
    return found


class _NoShell:
    """Stands in for get_ipython(): magics and shell escapes do nothing."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class _SilentNotebook:
    """What `otter.Notebook` is while grading: checks do nothing (the grader runs them)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def run_cells(
    sources: list[str], namespace: dict, starting: Any = None, trusted: Any = ()
) -> tuple[list[list], list[list]]:
    """Run code cells in `namespace`: ([cell index, "Type: message"] per failing cell,
    [cell index, what] per cell that tried to start a process or was refused memory).
    starting: called with each cell's index before it runs (the grader times cells);
    trusted: the reference's own cells, whose names bound to modules the answers may not
    import are removed after them (`reach.scrub_lent`)."""
    import matplotlib.pyplot as plt
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    errors: list[list] = []
    events: list[list] = []
    for index, source in enumerate(sources):
        if starting is not None and source.strip():
            starting(index)
        try:
            code = _compiled(source, f"<cell {index}>", transform)
        except SyntaxError as err:
            errors.append([index, f"SyntaxError: {err.msg} (line {err.lineno})"])
            continue
        before = dict(namespace)
        try:
            exec(code, namespace)  # noqa: S102 - running the submission is the point
        except BaseException as err:  # noqa: BLE001 - a failing cell does not stop the others
            first = str(err).splitlines()[0] if str(err) else ""
            errors.append([index, f"{type(err).__name__}: {first}"])
            if isinstance(err, MemoryError) or "can't allocate memory" in first:
                events.append([index, "memory"])
        if index in trusted:
            reach.scrub_lent(namespace, before, ALLOWED_MODULES)
        events += [[index, event] for event in take_events()]
        plt.close("all")
    return errors, events


def _compiled(source: str, name: str, transform: Any) -> Any:
    """A cell's code object: Python as it is (what IPython's transformer leaves unchanged),
    anything else (magics, shell escapes) through `transform` first."""
    try:
        return compile(source, name, "exec")
    except SyntaxError:
        return compile(transform(source), name, "exec")


def _stand_in_otter() -> types.ModuleType:
    """What ``import otter`` finds in the child: a module whose `Notebook` does nothing
    (the grader runs the checks). otter itself (and pandas with it) is never loaded here.
    It has a spec, so that the setup cell's ``importlib.util.find_spec("otter")`` finds it
    (without one that call raises ValueError)."""
    module = types.ModuleType("otter", "otter while grading: checks do nothing here")
    module.__spec__ = importlib.machinery.ModuleSpec("otter", None)
    vars(module)["Notebook"] = _SilentNotebook
    return module


# what the submission's environment holds: nothing of the grader's
_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "MPLBACKEND": "Agg",
    "CUDA_VISIBLE_DEVICES": "",  # grading runs on the CPU
}


def _close_fds(keep: int) -> None:
    """Every file descriptor closed but stdin/stdout/stderr (on /dev/null) and `keep`."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 20)


def _isolate(
    conn: Any, workdir: str, uid: int | None, how: str | None, hide: list[str]
) -> None:
    """Before student code: every fd closed but the wire, output silenced, the view of the
    machine (`jail.enter`, without the ruled-out packages' files `hide`), an environment of
    its own, the limits (`processes.limit_child`: a session, the sandbox user as root,
    memory, processes, file size), the system calls it may make (`seccomp`), and watch for
    processes it starts."""
    _close_fds(conn.fileno())
    room = limits_now()
    workdir = jail.enter(conn.fileno(), workdir, uid, how, hide)
    os.environ.clear()
    os.environ.update(_ENV, **ONE_THREAD)
    if how is None:
        os.environ.update(HOME=workdir, TMPDIR=workdir)
    limit_child(workdir, uid, room)
    os.chdir(workdir)  # files it writes land here
    if how is not None:
        seccomp.harden(how)
    sys.addaudithook(_audit)
    import matplotlib

    matplotlib.use("Agg")
    if has_torch():
        torch.set_num_threads(1)


def _describe(namespace: dict, name: str) -> dict:
    if name not in namespace:
        return {"kind": "missing"}
    value = namespace[name]
    data = (np.ndarray, type, *([torch.Tensor] if has_torch() else []))
    if callable(value) and not isinstance(value, data):
        import inspect

        try:
            params = list(inspect.signature(value).parameters)
        except (TypeError, ValueError):
            params = []
        return {"kind": "function", "params": params}
    return {"kind": "data", "value": wire.encode(value)}


def _reference_stub(conn: Any, name: str, own: Any) -> Any:
    """A function that asks the grader to run the reference solution's `name` (in another
    process) on these inputs, called as the student's own `name` would be (`as_called`):
    the reference's code never enters this process."""

    def call_reference(*args: Any, **kwargs: Any) -> Any:
        watcher = sys.getprofile()  # the house rules watch the student's code, not this
        sys.setprofile(None)
        try:
            return _ask(conn, name, *as_called(own, args, kwargs))
        finally:
            sys.setprofile(watcher)

    call_reference.__name__ = name
    return call_reference


_SEQ = [0]  # the number of the request being answered (the grader checks replies by it)


def _send(conn: Any, message: dict) -> None:
    """A frame to the grader, numbered; one over the wire's limit is replaced by a crash
    report (so a huge result costs its call, not the conversation)."""
    data = wire.dumps({**message, "seq": _SEQ[0]})
    if len(data) > wire.MAX_MESSAGE_BYTES:
        crash = f"a message of {len(data)} bytes, over the limit of the grader's wire"
        data = wire.dumps({"crash": crash, "seq": _SEQ[0]})
    conn.send_bytes(data)


def _ask(conn: Any, name: str, args: tuple, kwargs: dict) -> Any:
    memo: dict = {}  # one frame: views of one storage cross as such
    _send(
        conn,
        {
            "callback": name,
            "args": wire.encode(list(args), memo),
            "kwargs": wire.encode(kwargs, memo),
            "rng": wire_states(),
        },
    )
    reply = wire.loads(conn.recv_bytes())
    if "crash" in reply:
        raise RuntimeError(f"the reference solution could not answer: {reply['crash']}")
    if reply["args_after"] != wire.SAME_INPUTS:  # else: as this process sent them
        for old, new in zip(args, wire.decode(reply["args_after"])):
            wire.update_in_place(old, new)
    if reply["rng"] != SAME_STATES:  # else: as this process sent them
        take_wire_states(reply["rng"])
    if "raised" in reply:
        raise _exception(reply["raised"])
    return wire.decode(reply["result"])


def _call(
    conn: Any, namespace: dict, swaps: dict[str, list[str]], request: dict
) -> dict:
    name = request["name"]
    fn = namespace.get(name)
    args, kwargs = wire.decode([request["args"], request["kwargs"]])  # one frame
    take_request_states(request["rng"])
    swapped = swaps.get(name, []) + [request["record"]] * bool(request.get("record"))
    replaced = {str(n): namespace.get(str(n)) for n in swapped}
    namespace.update({n: _reference_stub(conn, n, f) for n, f in replaced.items()})
    reply: dict[str, Any] = {}
    rules = request.get("rules")
    take_events()
    try:
        if not callable(fn):
            raise AssertionError(
                f"{name} is not a function here ({type(fn).__name__}): did its cell run?"
            )
        grad = request.get("grad")
        if grad is not None:
            from attnbook.exercise_checks.probes import gradient_call

            result = gradient_call(
                fn,
                args,
                kwargs,
                grad["wrt"],
                grad["output"],
                wire.decode(grad["upstream"]),
            )
        elif rules is not None:
            result, reply["watcher"] = _watched(fn, rules, args, kwargs)
            kept = _KEPT.setdefault(name, []) if rules.get("separate_results") else []
            reply["memory"] = memory_facts(_labelled(fn, args, kwargs), result, kept)
            kept[:] = [*kept, result][-4:]
        else:
            result = fn(*args, **kwargs)
        reply["result"] = wire.encode(result)
    except BaseException as err:  # noqa: BLE001 - reported to the grader as data
        reply["raised"] = report_exception(err)
    finally:
        for n, old in replaced.items():
            if old is None:
                namespace.pop(n, None)
            else:
                namespace[n] = old
    # the inputs after the call, or SAME_INPUTS for each part that is as the request sent it
    after = wire.encode([args, kwargs])
    sent = [request["args"], request["kwargs"]]
    reply["args_after"], reply["kwargs_after"] = (
        wire.SAME_INPUTS if now == then else now for now, then in zip(after, sent)
    )
    reply["rng"] = reply_states()
    reply["events"] = take_events()
    return reply


def serve(
    conn: Any,
    sources: list[str],
    swaps: dict[str, list[str]],
    workdir: str,
    uid: int | None = None,
    how: str | None = None,
    hide: Any = (),
    without: frozenset[str] = frozenset(),
    trusted: Any = (),
) -> None:
    """Child entry point: run the cells in `workdir`, then answer requests until the pipe
    closes. swaps: function name -> the names that are the reference's while it runs;
    uid: the sandbox user to become (as root); how: the isolation (`jail.enter`); hide:
    the files of the packages this process may not reach (`without`, `reach`); trusted:
    the reference's own cells."""
    try:
        reach.enforce(without)  # before anything runs: no ruled-out code is here
        _isolate(conn, workdir, uid, how, list(hide))
    except BaseException as err:  # noqa: BLE001 - reported, and no student code runs
        _send(conn, {"crash": f"the process could not be isolated: {err}"[:500]})
        return
    sys.modules["otter"] = _stand_in_otter()
    namespace: dict = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "get_ipython": _NoShell,
    }
    try:
        errors, events = run_cells(
            sources, namespace, lambda index: _send(conn, {"cell": index}), set(trusted)
        )
        _send(conn, {"ready": True, "cell_errors": errors, "cell_events": events})
    except BaseException as err:  # noqa: BLE001
        _send(conn, {"crash": f"{type(err).__name__}: {err}"})
        return
    while True:
        try:
            request = wire.loads(conn.recv_bytes())
        except EOFError:
            return
        _SEQ[0] = request.get("seq", 0)
        try:
            if request.get("op") == "describe":
                reply = _describe(namespace, str(request["name"]))
            elif request.get("op") == "call":
                reply = _call(conn, namespace, swaps, request)
            else:
                reply = {"crash": f"unknown request {request.get('op')!r}"}
        except BaseException as err:  # noqa: BLE001 - e.g. a result that cannot be encoded
            reply = {"crash": f"{type(err).__name__}: {err}"}
        _send(conn, reply)
