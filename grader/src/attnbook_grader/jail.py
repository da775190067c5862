"""Where a submission's process may look: a view of the machine the kernel
enforces, with none of the grader's files in it.

Before any student code runs, the child (`sandbox.serve`) calls `enter`, which builds one of
two views, the first that the machine allows (`level`):

* ``"namespaces"`` (Linux, as root, or as a normal user where unprivileged user namespaces
  are allowed): new mount, PID, network, IPC and UTS namespaces (plus a user namespace when
  not root). A fresh root file system in memory holds only, read-only, the system's
  libraries, Python's standard library, the site-packages folders, the `attnbook` package
  and this engine's, a few device files, and a private ``/tmp`` (a small in-memory file
  system that dies with the submission); ``/proc`` shows the submission's own processes only. The
  grader's working folder, its command line, the zips, the masters, the hidden tests and the
  other submissions are not in it. Nothing is writable but ``/tmp``: the virtual
  environment and the grading code cannot be patched. The submission runs as PID 1 of its
  namespace, so everything it starts ends with it.
* ``"chroot"`` (root where namespaces are refused, e.g. a container without
  ``CAP_SYS_ADMIN``): the child is locked in its own empty working folder (``os.chroot``)
  before it becomes the sandbox user; only the modules the process server loaded are there.
  It gets a network namespace of its own where the kernel allows that; either way the
  seccomp filter (`seccomp`) refuses every socket and, at this level, the creation of any
  file, so nothing it writes reaches the host's disk.

Both views also lack the files of the packages the question rules out (`reach`).

Where neither is possible (a normal user with user namespaces switched off, macOS), `level`
is ``None`` and `require` refuses to grade for credit, saying why; practice grading without
isolation needs ``ATTNBOOK_GRADE_UNSAFE=1`` (`unsafe`), and every result says so.
"""

from __future__ import annotations

import ctypes
import os
import platform
import site
import sys
import sysconfig
from pathlib import Path

__all__ = ["IsolationUnavailable", "level", "require", "unsafe", "enter", "view"]

_NEWNS, _NEWUTS, _NEWIPC = 0x00020000, 0x04000000, 0x08000000
_NEWUSER, _NEWPID, _NEWNET = 0x10000000, 0x20000000, 0x40000000
_RDONLY, _NOSUID, _NODEV, _NOEXEC = 1, 2, 4, 8
_REMOUNT, _BIND, _REC, _PRIVATE = 32, 4096, 16384, 1 << 18
_NOATIME, _NODIRATIME, _RELATIME = 1024, 2048, 1 << 21
_DETACH = 2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203}
_DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/ld.so.cache")
TMP_BYTES = 512 * 2**20  # the private /tmp
_level: list[str | None] = []


class IsolationUnavailable(RuntimeError):
    """No kernel-enforced isolation here: grading for credit is refused."""


def unsafe() -> bool:
    """Practice grading without isolation (``ATTNBOOK_GRADE_UNSAFE=1``): never for credit."""
    return os.environ.get("ATTNBOOK_GRADE_UNSAFE") == "1"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _ok(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _unshare(libc: ctypes.CDLL) -> None:
    """New namespaces for this process (and, for the PID namespace, its next child)."""
    uid, gid = os.getuid(), os.getgid()
    flags = _NEWNS | _NEWPID | _NEWNET | _NEWIPC | _NEWUTS
    _ok(libc.unshare(flags | (0 if _root() else _NEWUSER)), "unshare")
    if not _root():  # the same user id inside; its powers there are dropped in `_drop`
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")


def _probe() -> str | None:
    """Which view this machine allows, tried in a throwaway child."""
    if not sys.platform.startswith("linux"):
        return None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        found = b""
        try:
            _unshare(_libc())
            found = b"namespaces"
        except OSError:
            try:
                if _root():
                    os.chroot("/")
                    found = b"chroot"
            except OSError:
                pass
        os.write(write, found)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    return answer or None


def level() -> str | None:
    """ "namespaces", "chroot" or None (no isolation); measured once per grader."""
    if not _level:
        forced = os.environ.get("ATTNBOOK_GRADE_ISOLATION")  # tests: force a fallback
        if forced == "none":
            _level.append(None)
        else:
            _level.append(forced if forced in ("namespaces", "chroot") else _probe())
    return _level[0]


def require() -> str | None:
    """The isolation level, or IsolationUnavailable (the reason) unless practice mode."""
    found = level()
    if found is None and not unsafe():
        raise IsolationUnavailable(
            "grading for credit needs a process the kernel isolates from the grader's "
            "files: run as root (Gradescope), or as a user allowed unprivileged user "
            "namespaces (Linux: sysctl kernel.unprivileged_userns_clone=1 or "
            "user.max_user_namespaces > 0). For practice only, ATTNBOOK_GRADE_UNSAFE=1 "
            "grades without isolation (the submission can read and change your files)."
        )
    return found


# ----------------------------------------------------------------------------- the view
def _hidden() -> list[str]:
    """Folders no view may contain: the grader's working folder, the paths on its command
    line, the private masters."""
    found = {os.getcwd(), os.environ.get("ATTNBOOK_MASTERS", "")}
    found |= {a for a in sys.argv if a.startswith("/") or os.path.exists(a)}
    return sorted({os.path.realpath(p) for p in found if p and os.path.exists(p)})


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _split(path: str, hidden: list[str]) -> list[str]:
    """`path`, or where it holds a hidden folder, its other entries (recursively)."""
    if path in hidden:
        return []
    if not any(_within(h, path) for h in hidden):
        return [path]
    return [
        part
        for entry in sorted(os.listdir(path))
        for part in _split(os.path.join(path, entry), hidden)
    ]


def _links(path: str, seen: set[str] | None = None) -> list[str]:
    """The symbolic links met on the way from `path` to its real place, and on the way to
    their targets: a site folder behind a link (a virtual environment linked into a clone)
    keeps its linked name in the child's `sys.path` and in its packages' `__path__`, so the
    view makes those links again."""
    seen = set() if seen is None else seen
    found: list[str] = []
    current = os.sep
    for part in Path(os.path.abspath(path)).parts[1:]:
        current = os.path.join(current, part)
        if os.path.islink(current) and current not in seen:
            seen.add(current)
            target = os.path.join(os.path.dirname(current), os.readlink(current))
            found += [current, *_links(target, seen)]
            current = os.path.realpath(current)
    return found


def view(hidden: list[str] | None = None) -> list[str]:
    """The paths the submission sees (read-only): the system's libraries, Python's standard
    library and site-packages, the `attnbook` package and this engine's (the child runs
    `sandbox`); none holding a `hidden` folder. Links on the way to a Python folder are in
    it as links (`_links`), made again in the view."""
    import attnbook

    paths = sysconfig.get_paths()
    python = [
        os.path.dirname(os.__file__),
        paths["platstdlib"],
        paths["purelib"],
        paths["platlib"],
        os.path.dirname(attnbook.__file__),
        os.path.dirname(os.path.abspath(__file__)),  # attnbook_grader
        *site.getsitepackages(),
    ]
    ends = ("lib-dynload", "site-packages", "dist-packages")
    python += [p for p in sys.path if p.rstrip("/").endswith(ends)]
    hidden = _hidden() if hidden is None else hidden
    chosen: list[str] = []
    for path in [*_SYSTEM, *python]:
        if os.path.islink(path) and path in _SYSTEM:
            chosen.append(path)  # a link (/lib -> usr/lib): made again in the view
            continue
        real = os.path.realpath(path)
        if os.path.exists(real) and not any(_within(real, c) for c in chosen):
            chosen = [c for c in chosen if not _within(c, real)]
            chosen += _split(real, hidden)
    links = [link for path in python for link in _links(path)]
    chosen += [
        link
        for link in dict.fromkeys(links)
        if not any(_within(link, c) for c in chosen)
    ]
    return chosen


def _mount(libc: ctypes.CDLL, source: str, target: str, fs: str, flags: int) -> None:
    _ok(
        libc.mount(source.encode(), target.encode(), fs.encode(), flags, None),
        f"mount {target}",
    )


def _kept_flags(path: str) -> int:
    """The flags of the mount `path` lives on that a bind of it must keep."""
    flag = os.statvfs(path).f_flag
    kept = _NOSUID | _NODEV
    for st, ms in ((8, _NOEXEC), (1024, _NOATIME), (2048, _NODIRATIME)):
        kept |= ms if flag & st else 0
    return kept | (_RELATIME if flag & 4096 else 0)


def _bind(libc: ctypes.CDLL, path: str, new_root: str, writable: bool = False) -> None:
    target = new_root + path
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(libc, path, target, "", _BIND | _REC)
    if not writable:
        flags = _REMOUNT | _BIND | _RDONLY | _kept_flags(path)
        _mount(libc, "", target, "", flags)


def _build(libc: ctypes.CDLL, new_root: str, hidden: list[str] | None) -> None:
    """Mount the view on `new_root` (an empty folder) and make it this process's root."""
    _mount(libc, "", "/", "", _REC | _PRIVATE)
    _mount(libc, "attnbook", new_root, "tmpfs", _NOSUID | _NODEV)
    for folder in ("tmp", "proc", ".old"):
        os.makedirs(os.path.join(new_root, folder))
    size = f"size={TMP_BYTES},mode=1777".encode()
    _ok(  # first: a part of the view under /tmp is bound inside it
        libc.mount(
            b"tmp", f"{new_root}/tmp".encode(), b"tmpfs", _NOSUID | _NODEV, size
        ),
        "mount /tmp",
    )
    for path in view(hidden):
        if os.path.islink(path):
            os.makedirs(os.path.dirname(new_root + path), exist_ok=True)
            os.symlink(os.readlink(path), new_root + path)
        else:
            _bind(libc, path, new_root)
    for device in _DEVICES:
        if os.path.exists(device):
            _bind(libc, device, new_root, writable=True)
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"pivot_root: unknown machine {platform.machine()}")
    _ok(libc.syscall(number, new_root.encode(), f"{new_root}/.old".encode()), "pivot")
    os.chdir("/")
    _ok(libc.umount2(b"/.old", _DETACH), "umount the old root")
    os.rmdir("/.old")
    try:  # this PID namespace's processes only (refused where /proc is masked)
        _mount(libc, "proc", "/proc", "proc", _NOSUID | _NODEV | _NOEXEC)
    except OSError:
        pass
    _mount(libc, "", "/", "", _REMOUNT | _RDONLY | _NOSUID | _NODEV)


def _drop(libc: ctypes.CDLL) -> None:
    """No powers left in the user namespace, and none to gain by exec."""
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, self
    data = (ctypes.c_uint32 * 6)()
    _ok(libc.capset(header, data), "capset")


def enter(
    keep: int,
    workdir: str,
    uid: int | None,
    how: str | None,
    hide: list[str] | None = None,
) -> str:
    """In the child, before student code: build the view `how` ("namespaces", "chroot" or
    None) and return the folder to work in. With namespaces this process forks: the parent
    waits for its child (PID 1 of the new namespace) and exits with it; only the child
    returns. keep: the wire's file descriptor (the parent closes its copy); hide: more
    paths the view lacks (the files of the packages a question rules out, `reach`)."""
    if how is None:
        return workdir
    libc = _libc()
    if how == "chroot":
        libc.unshare(_NEWNET)  # a network of its own where the kernel allows it
        os.chown(workdir, uid or 0, uid or 0)
        os.chroot(workdir)
        os.chdir("/")
        os.mkdir("/tmp", 0o700)
        os.chown("/tmp", uid or 0, uid or 0)
        return "/tmp"
    hidden = sorted(set(_hidden()) | {os.path.realpath(p) for p in hide or []})
    _unshare(libc)
    pid = os.fork()
    if pid:
        os.close(keep)
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    _build(libc, workdir, hidden)
    if not _root():
        _drop(libc)
    return "/tmp"
