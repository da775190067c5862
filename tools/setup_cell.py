"""The standard first code cell of every chapter and every student exercise notebook.

It makes `attnbook` importable anywhere: on Colab or a fresh Binder it installs the package
from the course repository (the URL comes from `_config.yml`, the single place it lives) at
the release the notebook belongs to: the tag `v{version}`, with the version from
`pyproject.toml`. A notebook saved from this term's book keeps getting this term's package,
not whatever `main` holds later. Where the package is already installed it does nothing.
`ATTNBOOK_SOURCE` overrides the install source (the tests point it at the local checkout).
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def version() -> str:
    """The package version, from `pyproject.toml` (the single place it lives)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def release_requirement(extras: str = "") -> str:
    """The pip requirement for the package at this book's release: `attnbook @ git+URL@vX.Y.Z`."""
    return f"attnbook{extras} @ git+{repository_url()}@v{version()}"


def repository_url() -> str:
    """The repository URL from `_config.yml` (PyYAML comes with Jupyter Book)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = (config.get("repository") or {}).get("url") if isinstance(config, dict) else None
    if not url:
        raise RuntimeError("_config.yml has no repository.url")
    return str(url)


def _setup_cell(comment: str, condition: str, requirement: str, url: str | None) -> str:
    """The cell's text, kept within 88 columns so the page shows it without scrolling."""
    url = url or repository_url()
    return f'''\
{comment}
import importlib.util, os, subprocess, sys
if {condition}:
    repo = "{url}"
    source = os.environ.get("ATTNBOOK_SOURCE", f"git+{{repo}}@v{version()}")
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"{requirement} @ {{source}}"], check=True)
    importlib.invalidate_caches()'''


def chapter_setup_cell(url: str | None = None) -> str:
    return _setup_cell(
        "# Setup: on Colab or a fresh Binder this installs the course package `attnbook` at\n"
        "# the release this book belongs to; where it is installed already it does nothing.",
        'importlib.util.find_spec("attnbook") is None', "attnbook", url)


def exercise_setup_cell(url: str | None = None) -> str:
    return _setup_cell(
        "# Setup: on Colab or a fresh Binder this installs the course package `attnbook` and\n"
        "# the grader (otter-grader) at the release this book belongs to; where both are\n"
        "# installed already it does nothing.",
        'None in (importlib.util.find_spec("attnbook"), importlib.util.find_spec("otter"))',
        "attnbook[exercises]", url)


if __name__ == "__main__":
    print(chapter_setup_cell())
