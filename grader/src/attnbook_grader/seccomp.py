"""The system calls a submission's process may not make: ``no_new_privs`` and
a seccomp filter, installed in the child before any student code runs, as root and as a
normal user alike (`harden`).

The filter is a classic BPF program built here (no library): it checks the architecture the
call is made for (x86-64 or aarch64; any other, such as x86-64's 32-bit x32 numbers, is
refused) and answers EPERM to what a notebook never needs: new namespaces (``unshare``,
``setns``, ``clone`` with a namespace flag; ``clone3`` gets ENOSYS so the C library falls
back to ``clone``), mounts and the new mount API, ``pivot_root``, ``chroot``, ``ptrace``
and other processes' memory, ``bpf``, the key store, ``userfaultfd``, ``perf_event_open``,
``io_uring``, kernel modules and ``kexec``, file handles, clocks, host names, swap,
``reboot`` and every socket (the wire is already open: no network at any level). At the
chroot level, where the submission's folder lies on the host's disk, it also refuses to
create files (``open`` with ``O_CREAT``/``O_TMPFILE``, ``mkdir``, ``mknod``, links and
renames): nothing is writable there, a bounded area of zero bytes.

On an architecture this module does not know, `harden` sets ``no_new_privs`` only and
`describe` (what every results file records) says that the filter was skipped and why.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

__all__ = ["ARCHES", "describe", "harden", "program", "refused"]

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _MODE_FILTER = 38, 22, 2
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JSET_K, _JGE_K, _RET_K = 0x20, 0x15, 0x45, 0x35, 0x06
_NEW_NAMESPACES = (
    0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
)
_CREATE = 0o100 | 0o20000000  # O_CREAT, __O_TMPFILE

# audit architecture -> (machine names, refused calls, clone, open flags' (call, argument))
ARCHES: dict[str, dict] = {
    "x86_64": {
        "audit": 0xC000003E,
        "refused": {
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "ptrace": 101,
            "bpf": 321,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "userfaultfd": 323,
            "perf_event_open": 298,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "open_by_handle_at": 304,
            "name_to_handle_at": 303,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "reboot": 169,
            "swapon": 167,
            "swapoff": 168,
            "acct": 163,
            "settimeofday": 164,
            "clock_settime": 227,
            "adjtimex": 159,
            "sethostname": 170,
            "setdomainname": 171,
            "iopl": 172,
            "ioperm": 173,
            "quotactl": 179,
            "syslog": 103,
            "personality": 135,
            "vhangup": 153,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "socket": 41,
            "socketpair": 53,
            "connect": 42,
            "bind": 49,
            "listen": 50,
            "accept": 43,
            "accept4": 288,
        },  # fmt: skip
        "clone": 56,
        "clone3": 435,
        "create": {
            "creat": 85,
            "mkdir": 83,
            "mkdirat": 258,
            "mknod": 133,
            "mknodat": 259,
            "link": 86,
            "linkat": 265,
            "symlink": 88,
            "symlinkat": 266,
            "rename": 82,
            "renameat": 264,
            "renameat2": 316,
            "openat2": 437,
        },  # fmt: skip
        "open_flags": [(2, 1), (257, 2)],  # open: argument 1, openat: argument 2
        "x32": True,  # numbers from 0x40000000 on are the x32 ABI: refused
    },
    "aarch64": {
        "audit": 0xC00000B7,
        "refused": {
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "ptrace": 117,
            "bpf": 280,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "userfaultfd": 282,
            "perf_event_open": 241,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "open_by_handle_at": 265,
            "name_to_handle_at": 264,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "reboot": 142,
            "swapon": 224,
            "swapoff": 225,
            "acct": 89,
            "settimeofday": 170,
            "clock_settime": 112,
            "adjtimex": 171,
            "sethostname": 161,
            "setdomainname": 162,
            "quotactl": 60,
            "syslog": 116,
            "personality": 92,
            "vhangup": 58,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "socket": 198,
            "socketpair": 199,
            "connect": 203,
            "bind": 200,
            "listen": 201,
            "accept": 202,
            "accept4": 242,
        },  # fmt: skip
        "clone": 220,
        "clone3": 435,
        "create": {
            "mkdirat": 34,
            "mknodat": 33,
            "linkat": 37,
            "symlinkat": 36,
            "renameat": 38,
            "renameat2": 276,
            "openat2": 437,
        },  # fmt: skip
        "open_flags": [(56, 2)],  # openat: argument 2
        "x32": False,
    },
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of argument `index` in struct seccomp_data (little-endian)."""
    return 16 + 8 * index


def program(machine: str, no_files: bool) -> bytes:
    """The filter for `machine` ("x86_64", "aarch64"), as struct sock_filter entries;
    no_files: also refuse to create files (the chroot level). KeyError: unknown machine."""
    arch = ARCHES[machine]
    deny = _insn(_RET_K, _ERRNO | errno.EPERM)
    out = [_insn(_LD_W_ABS, 4), _insn(_JEQ_K, arch["audit"], 1, 0), deny]
    out.append(_insn(_LD_W_ABS, 0))  # the call's number
    if arch["x32"]:
        out += [_insn(_JGE_K, 0x40000000, 0, 1), deny]
    numbers = list(arch["refused"].values())
    numbers += list(arch["create"].values()) if no_files else []
    for number in numbers:
        out += [_insn(_JEQ_K, number, 0, 1), deny]
    out += [_insn(_JEQ_K, arch["clone3"], 0, 1), _insn(_RET_K, _ERRNO | errno.ENOSYS)]
    checks = [(arch["clone"], 0, _NEW_NAMESPACES)]
    checks += [(n, a, _CREATE) for n, a in arch["open_flags"]] if no_files else []
    for number, argument, bits in checks:  # the flags of one argument
        out += [
            _insn(_JEQ_K, number, 0, 3),
            _insn(_LD_W_ABS, _arg_low(argument)),
            _insn(_JSET_K, bits, 0, 1),
            deny,
            _insn(_LD_W_ABS, 0),  # the number again, for the next check
        ]
    out.append(_insn(_RET_K, _ALLOW))
    return b"".join(out)


def refused(machine: str, no_files: bool = False) -> list[str]:
    """The names of the calls the filter refuses outright on `machine`."""
    arch = ARCHES[machine]
    names = list(arch["refused"]) + (list(arch["create"]) if no_files else [])
    return sorted(names + ["clone3"])


def describe(how: str | None) -> str:
    """What `harden` sets up on this machine at isolation level `how` (for the results)."""
    if how is None:
        return "none (no isolation)"
    machine = platform.machine()
    if machine not in ARCHES:
        return (
            f"no_new_privs only: the seccomp filter was skipped (unknown architecture "
            f"{machine!r}; it knows {', '.join(sorted(ARCHES))})"
        )
    files = "; no file created" if how == "chroot" else ""
    return f"no_new_privs and a seccomp filter ({machine}: no namespaces, mounts, ptrace, sockets{files})"


def harden(how: str | None) -> dict[str, str]:
    """In the child, after its limits and before student code: ``no_new_privs``, then the
    filter (OSError if the kernel refuses either; the child then runs nothing)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) refused")
    machine = platform.machine()
    if machine not in ARCHES:
        return {"seccomp": describe(how)}
    code = program(machine, no_files=how == "chroot")
    buffer = ctypes.create_string_buffer(code, len(code))

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_SECCOMP, _MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) refused")
    return {"seccomp": describe(how)}
