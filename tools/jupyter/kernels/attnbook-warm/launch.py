"""A kernel forked from a warm process: the kernel spec `attnbook-warm` of the test suite.

`python launch.py -f CONNECTION_FILE` (what Jupyter runs) asks the zygote named by
ATTNBOOK_WARM_KERNEL_SOCKET for an IPython kernel, hands it this process's standard streams,
forwards interrupts and terminations to it and exits when it exits. Without a zygote that
answers, it becomes an ordinary kernel (`python -m ipykernel_launcher`).

`python launch.py --zygote SOCKET` is the zygote (started by `tools.warm_kernels`): it imports
PRELOAD once, then forks one kernel per request; a kernel ends when its launcher or the
zygote ends. Standard library only, so the launcher starts in milliseconds.
"""

import json
import os
import select
import signal
import socket
import sys
import threading
import time

SOCKET_ENV = "ATTNBOOK_WARM_KERNEL_SOCKET"
ZYGOTE_PID_ENV = "ATTNBOOK_WARM_KERNEL_ZYGOTE"
# not pandas: its import decides its display width by whether IPython runs it (a kernel: no)
PRELOAD = ("numpy", "torch", "ipykernel.kernelapp", "ipykernel.ipkernel")
WAIT_SECONDS = 120  # for the zygote's preloading, which runs beside pytest's collection


def cold() -> None:
    """Become an ordinary kernel."""
    os.execv(
        sys.executable, [sys.executable, "-m", "ipykernel_launcher", *sys.argv[1:]]
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ask(path: str, zygote: int) -> int:
    """The pid of a kernel the zygote forked for this launcher (OSError/ValueError: none)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not os.path.exists(path):
        if time.monotonic() > deadline or not _alive(zygote):
            raise OSError("no zygote")
        time.sleep(0.05)
    request = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    request["launcher"] = os.getpid()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(path)
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := conn.recv(64):
            reply += chunk
    return int(reply)


def launch() -> None:
    path, zygote = os.environ.get(SOCKET_ENV), os.environ.get(ZYGOTE_PID_ENV, "")
    if not path or not zygote.isdigit():
        cold()
    try:
        pid = _ask(path, int(zygote))
        kernel = os.pidfd_open(pid)
    except (OSError, ValueError):
        cold()
        return
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, lambda signum, _frame: os.kill(pid, signum))
    select.select([kernel], [], [])  # readable once the kernel has ended
    sys.exit(0)


def _end_with(*pids: int) -> None:
    """End this process (a kernel) as soon as one of `pids` (its launcher, the zygote) ends."""
    try:
        select.select([os.pidfd_open(pid) for pid in pids], [], [])
    finally:
        os._exit(1)


def _become_kernel(request: dict, fds: list) -> None:
    """In the forked child: the notebook's kernel, in the launcher's place (never returns)."""
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    ends = (request["launcher"], os.getppid())
    threading.Thread(target=_end_with, args=ends, daemon=True).start()
    argv = list(request["argv"])
    if os.environ.get(
        "JPY_PARENT_PID", ""
    ).isdigit():  # read by ipykernel at its import
        argv.append(f"--IPKernelApp.parent_handle={os.environ['JPY_PARENT_PID']}")
    sys.argv = ["ipykernel_launcher", *argv]
    try:
        from ipykernel.kernelapp import IPKernelApp

        IPKernelApp.launch_instance(argv=argv)
    finally:
        os._exit(0)


def _read(conn: socket.socket) -> tuple:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while chunk := conn.recv(1 << 16):
        data += chunk
    if len(fds) != 3:
        raise ValueError("a request carries three descriptors")
    return json.loads(data), fds


def zygote(path: str, parent: int) -> None:
    import ctypes
    import gc
    import importlib

    # ends when the pytest run that started it ends, however it ends (its kernels follow)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        return

    for name in PRELOAD:
        importlib.import_module(name)
    # what the preloads built lives as long as each kernel: no kernel's collections walk it
    # (nor write to its pages, which the kernels share with this process)
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernels are reaped as they end
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    os.rename(path + ".tmp", path)  # the socket appears once it can answer
    listener.listen(8)
    while True:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(30)
            try:
                request, fds = _read(conn)
            except (OSError, ValueError):
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                conn.close()
                _become_kernel(request, fds)
            for fd in fds:
                os.close(fd)
            try:
                conn.sendall(str(pid).encode())
            except OSError:
                os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zygote"]:
        zygote(sys.argv[2], int(sys.argv[3]))
    else:
        launch()
