"""The limits of the process that runs a submission, and the clean-up after it (exercises 1-9).

In the child, before any student code runs (`limit_child`):

* its own session and process group (``os.setsid``);
* as root (Gradescope): a sandbox user of its own, a user id no other process has
  (`sandbox_uid`), so that "every process of the sandbox user" is this submission's;
* ``RLIMIT_AS``: the address space it has now plus `MEMORY_BYTES` (4 GiB unless
  ``ATTNBOOK_GRADER_MEMORY_GB`` says otherwise), so a 20 GB allocation fails with
  MemoryError instead of taking the machine;
* ``RLIMIT_NPROC``: the number of processes and threads its user has now (as root, 1: the
  child alone), so ``fork``, ``subprocess`` and new threads fail; and every library asked
  for one thread.

In the grader, after the submission (`end_submission`): its process group is killed, every
process descended from the child, every orphan the grader adopted meanwhile (the grader is
a "child subreaper", so a detached process, in a session of its own, comes back to it
instead of to init), and, as root, every process of the sandbox user. The limits on threads
and the subreaper are Linux's; elsewhere (macOS) the limits the platform accepts are set,
the process group is killed, and a detached process may escape.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
import time
from pathlib import Path

__all__ = [
    "MEMORY_BYTES",
    "ONE_THREAD",
    "become_subreaper",
    "end_submission",
    "grader_children",
    "limit_child",
    "sandbox_uid",
]

MEMORY_BYTES = int(float(os.environ.get("ATTNBOOK_GRADER_MEMORY_GB", "4")) * 2**30)
# every numerical library single-threaded (set before the process server imports them)
ONE_THREAD = {
    name: "1"
    for name in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
    )
}
_FIRST_UID = 1_000_000_000  # far above any user a system creates


def sandbox_uid() -> int:
    """A user id of its own for one submission (as root): no file and no process has it."""
    return _FIRST_UID + secrets.randbelow(100_000_000)


def _address_space() -> int:
    """Bytes of address space this process maps now (0 where /proc is absent)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tasks_of(uid: int) -> int:
    """Processes and threads of user `uid` now (what RLIMIT_NPROC counts)."""
    count = 0
    if not Path("/proc").is_dir():
        return 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1").strip())
    return count


def limit_child(workdir: str, uid: int | None) -> None:
    """In the child, before student code: own session, sandbox user (as root), memory and
    process limits. uid: the sandbox user (None: stay who we are)."""
    import resource

    os.setsid()
    if uid is not None:
        os.chown(workdir, uid, uid)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        os.environ["HOME"] = workdir
    room = _address_space() + MEMORY_BYTES
    tasks = 1 if uid is not None else _tasks_of(os.getuid())
    for limit, value in ((resource.RLIMIT_AS, room), (resource.RLIMIT_NPROC, tasks)):
        if value > 0:  # 0: unknown here (no /proc: macOS); that limit is not set
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):
                pass  # a platform that refuses this limit (RLIMIT_AS on macOS)


def become_subreaper() -> bool:
    """Make this process (the grader) adopt the orphans of its descendants (Linux
    PR_SET_CHILD_SUBREAPER); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """pid -> parent pid of every living process (empty where /proc is absent)."""
    found: dict[int, int] = {}
    if not Path("/proc").is_dir():
        return found
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if stat[0] not in ("Z", "X"):  # a zombie has ended already
                found[int(entry.name)] = int(stat[1])
    return found


def grader_children() -> set[int]:
    """The processes whose parent is this one."""
    me = os.getpid()
    return {pid for pid, parent in _parents().items() if parent == me}


def _descendants(roots: set[int], parents: dict[int, int]) -> set[int]:
    found, frontier = set(), set(roots)
    while frontier:
        found |= frontier
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
    return found


def _kill_user(uid: int) -> None:
    """As root: SIGKILL every process of `uid`, from a helper that becomes that user (kill -1
    reaches exactly the processes a user may signal: its own)."""
    helper = os.fork()
    if helper == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for _ in range(3):
                os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(helper, 0)


def end_submission(
    pid: int, keep: set[int], before: set[int], uid: int | None
) -> list[int]:
    """After a submission: kill its process group, its descendants, the orphans this grader
    adopted since (children not in `before` nor in `keep`) and, as root, every process of
    the sandbox user. Returns the processes other than the child that were still running."""
    survivors: set[int] = set()
    for _ in range(3):
        parents = _parents()
        roots = {pid} | (grader_children() - before - keep - {pid})
        tree = _descendants(roots, parents) & set(parents)
        for target in tree:
            try:
                os.kill(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if uid is not None and os.geteuid() == 0:
            _kill_user(uid)
        survivors |= tree - {pid}
        for target in tree - {pid}:  # reap the adopted ones
            try:
                os.waitpid(target, os.WNOHANG)
            except ChildProcessError:
                pass
        if not tree - {pid}:
            break
        time.sleep(0.05)
    return sorted(survivors)
