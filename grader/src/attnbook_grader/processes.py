"""The limits of the process that runs a submission, and the clean-up after it.

In the child, before any student code runs (`limit_child`):

* its own session and process group (``os.setsid``);
* as root (Gradescope): a sandbox user of its own, a user id no other process has
  (`sandbox_uid`), so that "every process of the sandbox user" is this submission's;
* ``RLIMIT_AS``: the address space it has now plus `MEMORY_BYTES` (4 GiB unless
  ``ATTNBOOK_GRADER_MEMORY_GB`` says otherwise), so a 20 GB allocation fails with
  MemoryError instead of taking the machine;
* ``RLIMIT_NPROC`` 1, so ``fork``, ``subprocess`` and new threads fail; and every library
  asked for one thread;
* ``RLIMIT_FSIZE``: no file over `FILE_BYTES` (64 MiB; a larger write fails with EFBIG),
  ``RLIMIT_CORE`` 0;
* it dies with its parent (Linux ``PR_SET_PDEATHSIG``, `die_with_parent`, from `limits_now`
  on, before the view is built, and again in `limit_child` once it is the sandbox user), so
  a grader killed in the middle leaves nothing running: the process server is killed when
  the grader ends (it imports this module, which sets the same for it: an orderly exit of a
  process that loaded PyTorch can take a minute on a loaded machine), the child with it, and
  with the child the PID 1 of its namespace.

In the grader, after the submission (`end_submission`): its process group is killed, every
process descended from the child, every orphan the grader adopted meanwhile (the grader is
a "child subreaper", so a detached process, in a session of its own, comes back to it
instead of to init), and, as root, every process of the sandbox user. The limits on threads
and the subreaper are Linux's; elsewhere (macOS) the limits the platform accepts are set,
the process group is killed, and a detached process may escape.
"""

from __future__ import annotations

import os
import resource  # (imported here: the child may see no Python files when it runs)
import secrets
import signal
import sys
import time
from pathlib import Path

__all__ = [
    "MEMORY_BYTES",
    "ONE_THREAD",
    "become_subreaper",
    "die_with_parent",
    "end_submission",
    "grader_children",
    "kill_tree",
    "limit_child",
    "limits_now",
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
FILE_BYTES = 64 * 2**20  # the largest file a submission may write
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


def die_with_parent() -> bool:
    """From now on this process is killed when its parent ends (Linux PR_SET_PDEATHSIG;
    cleared by a change of user, so set again after one); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False
    if ok and os.getppid() == 1:  # the parent ended before the setting: end now
        os._exit(1)
    return ok


def limits_now() -> int:
    """The address space the child may have: what it maps now plus `MEMORY_BYTES` (0:
    unknown here). Measured before the child leaves the machine's /proc; from here on the
    child dies with its parent (`die_with_parent`)."""
    die_with_parent()
    now = _address_space()
    return now + MEMORY_BYTES if now else 0


def limit_child(workdir: str, uid: int | None, room: int) -> None:
    """In the child, before student code: own session, sandbox user (as root), memory,
    process and file-size limits. uid: the sandbox user (None: stay who we are); room: the
    address space allowed (`limits_now`)."""
    os.setsid()
    if uid is not None:
        os.chown(workdir, uid, uid)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    limits = (
        (resource.RLIMIT_AS, room),
        (resource.RLIMIT_NPROC, 1),  # the child alone: no fork, no thread
        (resource.RLIMIT_FSIZE, FILE_BYTES),
        (resource.RLIMIT_CORE, 0),
    )
    for limit, value in limits:
        if value >= 0 and (value or limit != resource.RLIMIT_AS):
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):
                pass  # a platform that refuses this limit (RLIMIT_AS on macOS)
    die_with_parent()  # the change of user above cleared it


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
    for name in os.listdir("/proc"):  # (bytes read with os.read: a quarter of the time)
        if name.isdigit():
            try:
                fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
                try:
                    stat = os.read(fd, 4096).rsplit(b")", 1)[1].split()
                finally:
                    os.close(fd)
            except (OSError, IndexError):
                continue
            if stat[0] not in (b"Z", b"X"):  # a zombie has ended already
                found[int(name)] = int(stat[1])
    return found


def grader_children(parents: dict[int, int] | None = None) -> set[int]:
    """The processes whose parent is this one (in `parents`, a scan of `_parents`, or now)."""
    me = os.getpid()
    found = _parents() if parents is None else parents
    return {pid for pid, parent in found.items() if parent == me}


def _descendants(roots: set[int], parents: dict[int, int]) -> set[int]:
    found, frontier = set(), set(roots)
    while frontier:
        found |= frontier
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
    return found


def kill_tree(pid: int) -> list[int]:
    """SIGKILL `pid` and every process descended from it (from one scan of /proc, taken
    before the first kill, then again until none is left); the pids killed. Orphans that
    were re-parented away before the scan come back to a subreaper (`become_subreaper`)."""
    killed: set[int] = set()
    for _ in range(5):
        parents = _parents()
        tree = _descendants({pid}, parents) & (set(parents) | {pid})
        tree -= {os.getpid()}
        if not tree - killed or not tree:
            break
        for target in sorted(tree, key=lambda p: p != pid):  # the root first
            try:
                os.kill(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed |= tree
        time.sleep(0.05)
    return sorted(killed)


# The helper that kills a sandbox user's processes (`_kill_user`): a small Python of its
# own, started once per grader, that forks itself once per kill. A fork of the grader
# (PyTorch loaded) copied its page tables and tore them down again: 20-35 ms of CPU a kill.
_KILLER = """
import os, signal, sys
if sys.platform.startswith("linux"):  # it dies with the grader (PR_SET_PDEATHSIG)
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
    if os.getppid() == 1:
        os._exit(1)
for line in sys.stdin:
    uid = int(line)
    helper = os.fork() if uid > 0 else -1
    if helper == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for _ in range(3):
                os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    if helper > 0:
        os.waitpid(helper, 0)
    sys.stdout.write("done %d\\n" % uid)
    sys.stdout.flush()
"""
_killer: list = []  # the helper's subprocess.Popen, once started


def _killer_pids() -> set[int]:
    """The helper of `_kill_user`, where it runs: a child of the grader that is no
    submission's."""
    return {k.pid for k in _killer if k.poll() is None}


def _kill_user(uid: int) -> None:
    """As root: SIGKILL every process of `uid`, from a child that becomes that user (kill -1
    reaches exactly the processes a user may signal: its own): the helper's child, or where
    the helper does not answer, the child of a helper started for this kill alone."""
    import subprocess

    command = [sys.executable, "-I", "-S", "-c", _KILLER]
    line = f"{int(uid)}\n"
    try:
        if not _killer or _killer[0].poll() is not None:
            if _killer:
                _killer.pop().wait()
            _killer.append(
                subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
                )
            )
        killer = _killer[0]
        assert killer.stdin is not None and killer.stdout is not None
        killer.stdin.write(line)
        killer.stdin.flush()
        if killer.stdout.readline() == f"done {line}":
            return
        killer.kill()  # it answered wrong: a fresh one next time
    except OSError:
        pass
    subprocess.run(command, input=line, capture_output=True, text=True, check=False)


def end_submission(
    pid: int, keep: set[int], before: set[int], uid: int | None, nested: bool = False
) -> list[int]:
    """After a submission: kill its process group, its descendants, the orphans this grader
    adopted since (children not in `before` nor in `keep`, nor `_kill_user`'s helper)
    and, as root, every process of the sandbox user. nested: the child's own child is the
    submission (PID 1 of its namespace, `jail`). Returns the processes other than those
    that were still running."""
    survivors: set[int] = set()
    parents = _parents()  # one scan of /proc per round, the first one's shared
    inner = {p for p, parent in parents.items() if parent == pid} if nested else set()
    for round in range(3):
        parents = _parents() if round else parents
        others = before | keep | _killer_pids() | {pid}
        roots = {pid} | (grader_children(parents) - others)
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
        survivors |= tree - {pid} - inner
        for target in tree - {pid}:  # reap the adopted ones
            try:
                os.waitpid(target, os.WNOHANG)
            except ChildProcessError:
                pass
        if not tree - {pid} - inner:
            break
        time.sleep(0.05)
    return sorted(survivors)


def _process_server() -> bool:
    """Whether this Python is multiprocessing's process server (`child._processes`): it
    imports this module while it preloads the sandbox."""
    return any("multiprocessing.forkserver" in a for a in getattr(sys, "orig_argv", []))


if _process_server():  # it dies with the grader that started it, its children with it
    die_with_parent()
