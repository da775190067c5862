"""The standard first code cell of every chapter and every student exercise notebook.

It makes `attnbook` importable anywhere: on Colab or a fresh Binder it installs the package
from the course repository (the URL comes from `_config.yml`, the single place it lives);
where the package is already installed it does nothing. `ATTNBOOK_SOURCE` overrides the
install source (the tests point it at the local checkout).
"""
from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def repository_url() -> str:
    """The repository URL from `_config.yml` (PyYAML comes with Jupyter Book)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = (config.get("repository") or {}).get("url") if isinstance(config, dict) else None
    if not url:
        raise RuntimeError("_config.yml has no repository.url")
    return str(url)


def chapter_setup_cell(url: str | None = None) -> str:
    url = url or repository_url()
    return f'''\
# Setup: on Colab or a fresh Binder this installs the course package `attnbook` from the
# course repository; where it is already installed (locally, in CI) it does nothing.
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("attnbook") is None:
    source = os.environ.get("ATTNBOOK_SOURCE", "git+{url}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", f"attnbook @ {{source}}"], check=True)
    importlib.invalidate_caches()'''


def exercise_setup_cell(url: str | None = None) -> str:
    url = url or repository_url()
    return f'''\
# Setup: on Colab or a fresh Binder this installs the course package `attnbook` (with the
# grader, otter-grader) from the course repository; where both are installed it does nothing.
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("attnbook") is None or importlib.util.find_spec("otter") is None:
    source = os.environ.get("ATTNBOOK_SOURCE", "git+{url}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", f"attnbook[exercises] @ {{source}}"], check=True)
    importlib.invalidate_caches()'''


if __name__ == "__main__":
    print(chapter_setup_cell())
