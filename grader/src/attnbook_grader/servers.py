"""The process servers the children are forked from, and how a child is
started through one.

The usual server (multiprocessing's forkserver, `child._processes`) imported PyTorch and
NumPy once (not otter: the child's ``import otter`` finds a stand-in, `sandbox`). A child
whose question rules PyTorch out is forked from a second server started with
``ATTNBOOK_GRADER_WITHOUT`` (`torchless`) and a preload list without it (`server_for`):
PyTorch was never imported there, so it is in none of that child's memory. Either way a
submission's child is prepared without the grader's main module (`_through`), which it
would otherwise import again with everything that module imports. The usual server starts
when a child first needs it (an exercise whose every question rules PyTorch out never
starts it), with PyTorch's meta-device modules only where the exercise's tests use that
device (`want_meta`). Every server's last preload (`server_ready`) freezes what it holds,
so that the children's garbage collections do not copy the pages they share with it.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from attnbook_grader import processes, reach
from attnbook_grader.torchless import WITHOUT_ENV
from attnbook.exercise_checks.answer_allowlist import ALLOWED_MODULES

__all__ = ["server_for", "server_pids", "want_meta"]

# what a child needs before its first cell (``inspect``: what the child imports late) and
# the modules its answers may import, loaded once (at the chroot level a child can import
# nothing else); not otter (the child's `import otter` finds a stand-in, `sandbox`) nor the
# course's plotting helpers (seaborn and pandas), which only the closing cells that grading
# skips (``otter_ignore``) import: each would hold tens of MiB in every server
_PRELOAD = [
    "numpy",
    "torch",
    "attnbook_grader.first_use",  # what PyTorch does on first use, done once for all children
    "matplotlib.pyplot",
    "matplotlib.backends.backend_agg",  # MPLBACKEND=Agg: else each child's first plot imports it
    "IPython.core.inputtransformer2",
    "inspect",
    "attnbook_grader.sandbox",
    "attnbook.exercise_checks.grading",
    "attnbook.exercise_checks.probes",
    *sorted(ALLOWED_MODULES),
]
# PyTorch's lazy imports for the meta device (~70 MiB): preloaded only where an exercise's
# tests use that device (exercises 8 and 11, `want_meta`)
_META = "attnbook_grader.meta_kernels"
# always the last preload: every object a server holds by then is left out of the children's
# garbage collections (their pages stay shared)
_READY = "attnbook_grader.server_ready"
_meta: dict[str, bool] = {"wanted": True, "usual": False}
_context: Any = None


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


def _start_server(start: Callable[[], None], extra: dict | None = None) -> None:
    """Start a process server (`start`) with an environment stripped of everything but the
    settings of Python and its numerical libraries (and `extra`): no masters path, no
    grader variables in any child's memory."""
    saved = dict(os.environ)
    try:
        for name in saved:
            if not name.startswith(_KEPT_ENV) or name.startswith("PYTHONSTARTUP"):
                del os.environ[name]
        os.environ.update(extra or {})
        start()
    finally:
        os.environ.clear()
        os.environ.update(saved)


_NEED_TORCH = (
    "torch",
    "attnbook_grader.first_use",
    "attnbook.exercise_checks.grading",
    "attnbook.exercise_checks.probes",
    "attnbook_grader.meta_kernels",
)
# ruled-out packages -> a server without them (the empty set: the usual one has started)
_servers: dict[frozenset[str], Any] = {}


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
        _context.set_forkserver_preload(_PRELOAD + [_READY])
    return _context


def _ensure_running() -> None:
    from multiprocessing import forkserver

    forkserver.ensure_running()


def server_for(without: frozenset[str]) -> Any:
    """The process server a child that may not reach `without` is forked from: None (the
    usual one) unless it rules out a package that server imported (`reach.heavy`); then
    one started once, with ``ATTNBOOK_GRADER_WITHOUT`` set (`torchless`), that never
    imports them. Returns once the server has loaded its modules (a first, empty child):
    its start-up is never a submission's time."""
    context = _processes()
    heavy = reach.heavy(without)
    # the usual server: started when first needed (never by a NumPy-only exercise), with
    # the meta device's modules if the exercise wants them; a later exercise that wants
    # them where the usual server lacks them gets a server of its own
    if not heavy:
        if frozenset() not in _servers:
            preload = _PRELOAD + [_META] * _meta["wanted"]
            context.set_forkserver_preload(preload + [_READY])
            _start_server(_ensure_running)
            _servers[frozenset()], _meta["usual"] = None, _meta["wanted"]
        if _meta["usual"] or not _meta["wanted"]:
            return None
        heavy = frozenset({"+meta"})  # a key, not a package
    if heavy not in _servers:
        from multiprocessing import forkserver

        server = forkserver.ForkServer()
        preload = [
            m for m in _PRELOAD if m not in _NEED_TORCH and m.split(".")[0] != "torch"
        ]
        preload, env = (
            (_PRELOAD + [_META], {})
            if heavy == {"+meta"}
            else (preload, {WITHOUT_ENV: ",".join(sorted(heavy))})
        )
        server.set_forkserver_preload(preload + [_READY])
        _start_server(server.ensure_running, env)
        _servers[heavy] = server
        first = context.Process(target=os.getpid, daemon=True)
        with _through(server):
            first.start()  # returns when the server forks it: after its imports
        first.join()
    return _servers[heavy]


def want_meta(tests: dict[str, str]) -> None:
    """Whether the children started from now on need the meta device's modules: yes where
    a test of the exercise (question -> its text) names that device."""
    _meta["wanted"] = any(re.search(r"[\"']meta[\"']", t) for t in tests.values())


def server_pids() -> set[int]:
    """The process servers' ids (never a submission's process)."""
    from multiprocessing import forkserver, resource_tracker

    found = {
        getattr(forkserver._forkserver, "_forkserver_pid", None),
        getattr(resource_tracker._resource_tracker, "_pid", None),
    }
    found |= {getattr(s, "_forkserver_pid", None) for s in _servers.values()}
    return {p for p in found if p}


def _without_main(name: str) -> dict:
    """What a child is prepared with, less the grader's main module (which the child would
    otherwise import again, with everything it imports)."""
    from multiprocessing import spawn

    data = spawn.get_preparation_data(name)
    for key in ("init_main_from_name", "init_main_from_path"):
        data.pop(key, None)
    return data


@contextmanager
def _through(server: Any) -> Iterator[None]:
    """Processes started meanwhile are forked by `server` (None: the usual one) and do not
    import the grader's main module."""
    from multiprocessing import forkserver, popen_forkserver

    saved = dict(vars(popen_forkserver))
    if server is not None:
        vars(popen_forkserver)["forkserver"] = types.SimpleNamespace(
            connect_to_new_process=server.connect_to_new_process,
            read_signed=forkserver.read_signed,
            get_inherited_fds=forkserver.get_inherited_fds,
        )
    vars(popen_forkserver)["spawn"] = types.SimpleNamespace(
        get_preparation_data=_without_main
    )
    try:
        yield
    finally:
        for key in ("forkserver", "spawn"):
            vars(popen_forkserver)[key] = saved[key]
