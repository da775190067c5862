"""Warm kernels for strict nbval: a pytest plugin (`pytest -p tools.warm_kernels --nbval ...`).

nbval gives every notebook a fresh kernel, and a fresh IPython kernel spends about 3-4 s of
CPU before a notebook's own work begins: starting Python and ipykernel, then loading PyTorch
and NumPy in the notebook's first cells. `make test` checks some 30 notebooks.

With this plugin, one pytest run starts one *zygote* (`tools/jupyter/kernels/attnbook-warm/
launch.py --zygote`): a process that loads ipykernel, NumPy and PyTorch once, with the
run's environment (the numerical configuration of `make nbval-portable` included), and waits.
Each notebook's kernel is forked from it: its own process, with the notebook's folder and
environment, a fresh IPython shell and namespace, and those modules already in memory (the
notebook still runs every `import` line; only the loading from disk is saved). matplotlib and
pandas are not preloaded: both decide at import how to display (matplotlib its inline backend,
pandas its table width) by whether they run inside a Jupyter kernel, which the zygote is not.

A kernel ends with its launcher (the process Jupyter started and kills) or with the zygote,
so a stopped run leaves no kernel behind; where the zygote cannot answer, the launcher starts
an ordinary kernel: the plugin can make a run faster, never make it fail. Set
ATTNBOOK_COLD_KERNELS=1 to compare with ordinary kernels.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

KERNEL_NAME = "attnbook-warm"
JUPYTER_DIR = (
    Path(__file__).resolve().parent / "jupyter"
)  # kernels/attnbook-warm/ inside
LAUNCH = JUPYTER_DIR / "kernels" / KERNEL_NAME / "launch.py"


def pytest_configure(config: pytest.Config) -> None:
    if not getattr(config.option, "nbval", False) or os.environ.get(
        "ATTNBOOK_COLD_KERNELS"
    ):
        return
    if not hasattr(os, "pidfd_open") or not hasattr(socket, "send_fds"):
        return  # before Linux 5.3 or off Linux: ordinary kernels
    folder = tempfile.mkdtemp(prefix="attnbook-warm-")
    zygote = subprocess.Popen(
        [sys.executable, str(LAUNCH), "--zygote", os.path.join(folder, "zygote")]
        + [str(os.getpid())],
        cwd=folder,
        stdin=subprocess.DEVNULL,
    )
    config.stash[_ZYGOTE] = (zygote, folder)
    os.environ["ATTNBOOK_WARM_KERNEL_SOCKET"] = os.path.join(folder, "zygote")
    os.environ["ATTNBOOK_WARM_KERNEL_ZYGOTE"] = str(zygote.pid)
    paths = [str(JUPYTER_DIR), os.environ.get("JUPYTER_PATH", "")]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in paths if p)
    config.option.nbval_kernel_name = KERNEL_NAME


def pytest_unconfigure(config: pytest.Config) -> None:
    found = config.stash.get(_ZYGOTE, None)
    if found is None:
        return
    zygote, folder = found
    zygote.kill()  # its kernels end with it
    zygote.wait()
    shutil.rmtree(folder, ignore_errors=True)


_ZYGOTE = pytest.StashKey[tuple[subprocess.Popen, str]]()
