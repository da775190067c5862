"""The process that runs a submission (exercises 1-9): the only place student code runs.

`serve` runs the notebook's code cells in a fresh namespace (``grader.check`` does nothing
here), then answers the grader's requests over a pipe, in the format of `wire`: "describe"
a name (a function, data, or missing) and "call" a function with the inputs the grader sends.
A call reports the result, the inputs and the global random states after the call, or the
exception it raised. The house rules a hidden test asks for (``guarded``) run here, around the
call; the grader recomputes what it can (inputs changed, random state changed) from the data.

While a function of one question runs, the functions of the other questions are the
reference solution's (`swaps`), so that one wrong answer costs points only once.
"""

from __future__ import annotations

import builtins
import os
import random
import sys
from typing import Any

import numpy as np
import torch

from attnbook.exercise_checks import wire

__all__ = ["serve", "run_cells", "rng_states", "set_rng_states", "report_exception"]

_NOBODY = 65534


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


def run_cells(sources: list[str], namespace: dict) -> list[list]:
    """Run code cells in `namespace`; returns [cell index, "Type: message"] per failing cell."""
    import matplotlib.pyplot as plt
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    errors: list[list] = []
    for index, source in enumerate(sources):
        try:
            code = compile(transform(source), f"<cell {index}>", "exec")
        except SyntaxError as err:
            errors.append([index, f"SyntaxError: {err.msg} (line {err.lineno})"])
            continue
        try:
            exec(code, namespace)  # noqa: S102 - running the submission is the point
        except BaseException as err:  # noqa: BLE001 - a failing cell does not stop the others
            first = str(err).splitlines()[0] if str(err) else ""
            errors.append([index, f"{type(err).__name__}: {first}"])
        plt.close("all")
    return errors


def rng_states() -> dict[str, Any]:
    """The global random states of PyTorch, NumPy and Python's random module."""
    version, internal, gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        # Python's 625 numbers as one array: one field on the wire, not 625
        "random": (version, np.array(internal, dtype=np.uint32), gauss),
    }


def set_rng_states(states: dict[str, Any]) -> None:
    torch.set_rng_state(states["torch"])
    np.random.set_state(states["numpy"])
    version, internal, gauss = states["random"]
    random.setstate((version, tuple(int(n) for n in internal), gauss))


def _isolate(workdir: str) -> None:
    """Silence the submission's output and, where the grader runs as root (Gradescope),
    give up root so that it cannot touch the grader's process or files."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.chdir(workdir)  # files it writes land here
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(workdir, _NOBODY, _NOBODY)
        os.setgroups([])
        os.setgid(_NOBODY)
        os.setuid(_NOBODY)
    import matplotlib

    matplotlib.use("Agg")
    torch.set_num_threads(1)


def _describe(namespace: dict, name: str) -> dict:
    if name not in namespace:
        return {"kind": "missing"}
    value = namespace[name]
    if callable(value) and not isinstance(value, (torch.Tensor, np.ndarray, type)):
        import inspect

        try:
            params = list(inspect.signature(value).parameters)
        except (TypeError, ValueError):
            params = []
        return {"kind": "function", "params": params}
    return {"kind": "data", "value": wire.encode(value)}


def _reference_stub(conn: Any, name: str) -> Any:
    """A function that asks the grader to run the reference solution's `name` (in another
    process) on these inputs: the reference's code never enters this process."""

    def call_reference(*args: Any, **kwargs: Any) -> Any:
        watcher = sys.getprofile()  # the house rules watch the student's code, not this
        sys.setprofile(None)
        try:
            return _ask(conn, name, args, kwargs)
        finally:
            sys.setprofile(watcher)

    call_reference.__name__ = name
    return call_reference


def _ask(conn: Any, name: str, args: tuple, kwargs: dict) -> Any:
    conn.send_bytes(
        wire.dumps(
            {
                "callback": name,
                "args": wire.encode(list(args)),
                "kwargs": wire.encode(kwargs),
                "rng": wire.encode(rng_states()),
            }
        )
    )
    reply = wire.loads(conn.recv_bytes())
    for old, new in zip(args, wire.decode(reply["args_after"])):
        wire.update_in_place(old, new)
    set_rng_states(wire.decode(reply["rng"]))
    if "raised" in reply:
        raise _exception(reply["raised"])
    return wire.decode(reply["result"])


def _exception(raised: dict) -> BaseException:
    kind = getattr(builtins, str(raised.get("type")), None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RuntimeError
    return kind(str(raised.get("message", "")))


def report_exception(err: BaseException) -> dict:
    """An exception as data: its type where it is a builtin one, else "Exception"."""
    kind = type(err)
    known = (
        kind.__name__ if getattr(builtins, kind.__name__, None) is kind else "Exception"
    )
    return {"type": known, "name": kind.__name__, "message": str(err)[:2000]}


def _call(
    conn: Any, namespace: dict, swaps: dict[str, list[str]], request: dict
) -> dict:
    from attnbook.exercise_checks.grading import gradient_call, guarded

    name = request["name"]
    fn = namespace.get(name)
    args, kwargs = wire.decode(request["args"]), wire.decode(request["kwargs"])
    set_rng_states(wire.decode(request["rng"]))
    swapped = swaps.get(name, []) + [request["record"]] * bool(request.get("record"))
    replaced = {str(n): namespace.get(str(n)) for n in swapped}
    namespace.update({n: _reference_stub(conn, n) for n in replaced})
    reply: dict[str, Any] = {}
    try:
        if not callable(fn):
            raise AssertionError(
                f"{name} is not a function here ({type(fn).__name__}): did its cell run?"
            )
        if request.get("rules") is not None:
            fn = guarded(fn, **request["rules"])
        grad = request.get("grad")
        if grad is not None:
            result = gradient_call(
                fn,
                args,
                kwargs,
                grad["wrt"],
                grad["output"],
                wire.decode(grad["upstream"]),
            )
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
    reply["args_after"] = wire.encode(args)
    reply["kwargs_after"] = wire.encode(kwargs)
    reply["rng"] = wire.encode(rng_states())
    return reply


def serve(
    conn: Any, sources: list[str], swaps: dict[str, list[str]], workdir: str
) -> None:
    """Child entry point: run the cells in `workdir`, then answer requests until the pipe
    closes. swaps: function name -> the names that are the reference's while it runs."""
    _isolate(workdir)
    import otter

    otter.Notebook = _SilentNotebook
    namespace: dict = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "get_ipython": _NoShell,
    }
    try:
        errors = run_cells(sources, namespace)
        conn.send_bytes(wire.dumps({"ready": True, "cell_errors": errors}))
    except BaseException as err:  # noqa: BLE001
        conn.send_bytes(wire.dumps({"crash": f"{type(err).__name__}: {err}"}))
        return
    while True:
        try:
            request = wire.loads(conn.recv_bytes())
        except EOFError:
            return
        try:
            if request.get("op") == "describe":
                reply = _describe(namespace, str(request["name"]))
            elif request.get("op") == "call":
                reply = _call(conn, namespace, swaps, request)
            else:
                reply = {"crash": f"unknown request {request.get('op')!r}"}
        except BaseException as err:  # noqa: BLE001 - e.g. a result that cannot be encoded
            reply = {"crash": f"{type(err).__name__}: {err}"}
        conn.send_bytes(wire.dumps(reply))
