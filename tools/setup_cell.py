"""The standard first code cell of every chapter and every student exercise notebook.

It makes `attnbook` importable anywhere: on Colab or a fresh Binder it installs the package's
wheel from PyPI at the release the notebook belongs to, `attnbook=={version}` with the version
from `pyproject.toml`, so a notebook saved from this term's book keeps getting this term's
package. The exercise cell also installs the grader, `otter-grader` at the version the lock
pins (the one the exercises are proved with), without its declared dependencies: otter 7 asks
for ipywidgets 8, and pip would replace Colab's ipywidgets 7.7.1, which Colab's widget front
end needs, by 8. Instead the cell installs what `import otter` and `grader.check` import
(`grader_needs()`, read from otter's own metadata) with ipywidgets relaxed to the range ipylab
accepts, so an ipywidgets 7 or 8 already there stays. Where the packages are installed already
it does nothing. `ATTNBOOK_SOURCE` replaces the package's requirement: a git URL
(`git+https://github.com/ORG/REPO@BRANCH`), a local wheel or a checkout; the tests point it at a
wheel built from this checkout.
"""

from __future__ import annotations

import importlib.metadata
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


# otter-grader's requirements that `import otter`, `otter.Notebook` and `grader.check` never
# import (tests/test_setup_cell.py runs the check without them), and why they exist
NOT_NEEDED_TO_CHECK = {
    "click": "otter's command line",
    "jupytext": "otter assign on .py notebooks",
    "python-on-whales": "grading in Docker",
    "requests": "otter's token service for Gradescope uploads",
}
# otter's `ipywidgets>=8.1.5` replaced: the widgets it uses (Button, HTML, Output, VBox, for an
# export prompt) exist in ipywidgets 7, and ipylab, the other user, accepts this range
WIDGETS = "ipywidgets>=7.6,<9"


def grader_needs() -> list[str]:
    """What the exercise notebooks install beside `otter-grader --no-deps`: otter's declared
    requirements (of the installed otter, which the lock pins) without extras and environment
    markers, less NOT_NEEDED_TO_CHECK, with ipywidgets relaxed to WIDGETS."""
    from packaging.requirements import Requirement

    installed = f"otter-grader=={importlib.metadata.version('otter-grader')}"
    if installed != grader_requirement():
        raise RuntimeError(
            f"{installed} is installed, the lock pins {grader_requirement()}: make setup"
        )
    needs = []
    for line in importlib.metadata.requires("otter-grader") or []:
        req = Requirement(line)
        if req.marker is not None and "extra" in str(req.marker):
            continue
        if req.name in NOT_NEEDED_TO_CHECK:
            continue
        needs.append(
            WIDGETS if req.name == "ipywidgets" else f"{req.name}{req.specifier}"
        )
    return needs


def _wrapped_list(name: str, items: list[str], indent: str) -> str:
    """`name = ["a", "b", ...]` broken into lines of at most 88 columns."""
    lines, line = [], f"{indent}{name} = ["
    for i, item in enumerate(items):
        piece = f'"{item}"' + ("," if i < len(items) - 1 else "]")
        if len(line) + 1 + len(piece) > 88:
            lines.append(line)
            line = indent + " " * (len(name) + 4) + piece
        else:
            line += ("" if line.endswith("[") else " ") + piece
    return "\n".join([*lines, line])


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


def _setup_cell(comment: str, condition: str, installs: str) -> str:
    """The cell's text, kept within 88 columns so the page shows it without scrolling."""
    return f'''\
{comment}
import importlib.util, os, subprocess, sys
if {condition}:
    source = os.environ.get("ATTNBOOK_SOURCE", "{release_requirement()}")
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
{installs}
    importlib.invalidate_caches()'''


def chapter_setup_cell() -> str:
    return _setup_cell(
        "# Setup: on Colab or a fresh Binder this installs the course package `attnbook` at\n"
        "# the release this book belongs to; where it is installed already it does nothing.",
        'importlib.util.find_spec("attnbook") is None',
        "    subprocess.run([*pip, source], check=True)",
    )


def exercise_setup_cell() -> str:
    return _setup_cell(
        "# Setup: on Colab or a fresh Binder this installs the course package `attnbook` and\n"
        "# the grader (otter-grader) at the release this book belongs to; where both are\n"
        "# installed already it does nothing. The grader comes without its dependencies,\n"
        "# which would replace Colab's ipywidgets 7 by 8, and with what its checks need.",
        'None in (importlib.util.find_spec("attnbook"), importlib.util.find_spec("otter"))',
        _wrapped_list("needs", grader_needs(), "    ")
        + "\n    subprocess.run([*pip, source, *needs], check=True)\n"
        + '    alone = [*pip, "--no-deps", "--no-warn-conflicts"]\n'
        + f'    subprocess.run([*alone, "{grader_requirement()}"], check=True)',
    )


if __name__ == "__main__":
    print(chapter_setup_cell())
