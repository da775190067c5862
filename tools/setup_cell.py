"""The standard first code cell of every chapter and every student exercise notebook.

It makes `attnbook` importable anywhere: on Colab or a fresh Binder it installs the package's
wheel from PyPI at the release the notebook belongs to, `attnbook=={version}` with the version
from `pyproject.toml`, so a notebook saved from this term's book keeps getting this term's
package. The exercise cell also installs the grader, `otter-grader` at the version the lock
pins (the one the exercises are proved with). Where the packages are installed already it does
nothing. `ATTNBOOK_SOURCE` replaces the package's requirement: a git URL
(`git+https://github.com/ORG/REPO@BRANCH`), a local wheel or a checkout; the tests point it at a
wheel built from this checkout.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"


def version() -> str:
    """The package version, from `pyproject.toml` (the single place it lives)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def release_requirement() -> str:
    """The pip requirement for the package at this book's release: `attnbook==X.Y.Z`."""
    return f"attnbook=={version()}"


def locked(name: str) -> str:
    """`name==X` as requirements/lock.txt pins it (the version the project is tested with)."""
    found = re.search(rf"(?m)^{re.escape(name)}==([^\s;\\]+)", LOCK.read_text())
    if found is None:
        raise RuntimeError(f"requirements/lock.txt pins no {name}")
    return f"{name}=={found[1]}"


def grader_requirement() -> str:
    """The grader the exercise notebooks install: otter-grader at the locked version."""
    return locked("otter-grader")


def repository_url() -> str:
    """The repository URL from `_config.yml` (PyYAML comes with Jupyter Book)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = (
        (config.get("repository") or {}).get("url")
        if isinstance(config, dict)
        else None
    )
    if not url:
        raise RuntimeError("_config.yml has no repository.url")
    return str(url)


def _setup_cell(comment: str, condition: str, extra: str) -> str:
    """The cell's text, kept within 88 columns so the page shows it without scrolling."""
    return f'''\
{comment}
import importlib.util, os, subprocess, sys
if {condition}:
    source = os.environ.get("ATTNBOOK_SOURCE", "{release_requirement()}")
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, source{extra}], check=True)
    importlib.invalidate_caches()'''


def chapter_setup_cell() -> str:
    return _setup_cell(
        "# Setup: on Colab or a fresh Binder this installs the course package `attnbook` at\n"
        "# the release this book belongs to; where it is installed already it does nothing.",
        'importlib.util.find_spec("attnbook") is None',
        "",
    )


def exercise_setup_cell() -> str:
    return _setup_cell(
        "# Setup: on Colab or a fresh Binder this installs the course package `attnbook` and\n"
        "# the grader (otter-grader) at the release this book belongs to; where both are\n"
        "# installed already it does nothing.",
        'None in (importlib.util.find_spec("attnbook"), importlib.util.find_spec("otter"))',
        f', "{grader_requirement()}"',
    )


if __name__ == "__main__":
    print(chapter_setup_cell())
