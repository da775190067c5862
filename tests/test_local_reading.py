"""Local reading works as the README and the intro say: `make setup` installs JupyterLab
(the lock pins it), and `.venv/bin/jupyter lab` serves the chapters. The server is started
here on 127.0.0.1 with a token, asked for a chapter's page and its notebook, and stopped."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ".venv/bin/jupyter lab"
CHAPTER = "book/01_attention.ipynb"


def test_the_docs_name_the_command_and_the_lock_pins_jupyterlab() -> None:
    for doc in ("README.md", "book/intro.md"):
        assert COMMAND in (ROOT / doc).read_text(), doc
    lock = (ROOT / "requirements" / "lock.txt").read_text()
    assert re.search(r"(?m)^jupyterlab==\d", lock), "the lock pins no jupyterlab"


def test_jupyter_lab_serves_a_chapter(tmp_path: Path) -> None:
    lab = Path(sys.executable).parent / "jupyter-lab"
    assert lab.is_file(), f"{lab} is missing: JupyterLab is not in this environment"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "local-reading-test"
    server = subprocess.Popen(
        [str(lab), "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],  # CI's container is root
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={"JUPYTER_RUNTIME_DIR": str(tmp_path), "HOME": str(tmp_path),
             "PATH": str(lab.parent)},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}") as r:
                    assert r.status == 200
                    break
            except OSError:
                assert server.poll() is None, (
                    server.stderr.read() if server.stderr else ""
                )
                assert time.monotonic() < deadline, "JupyterLab did not start in 60 s"
                time.sleep(0.5)
        with urllib.request.urlopen(f"{base}/lab/tree/{CHAPTER}?token={token}") as r:
            assert r.status == 200 and "JupyterLab" in r.read().decode()
        url = f"{base}/api/contents/{CHAPTER}?token={token}"
        with urllib.request.urlopen(url) as r:
            model = json.loads(r.read())
        assert model["type"] == "notebook" and model["content"]["cells"]
    finally:
        server.terminate()
        server.wait(timeout=30)
