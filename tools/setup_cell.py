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
it does nothing. Where no place has the package, it fails naming each place with the reason
(git's first `fatal:` line, else pip's last `ERROR:` line, not pip's closing note) and saying
what the reader can do next. `ATTNBOOK_SOURCE` replaces the package's requirement: a git URL
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


def engine_requirement() -> str:
    """The grading engine of this release (grader/, never installed by a notebook): the
    autograder zips carry its wheel, `attnbook-grader==X.Y.Z` at the course's version."""
    return f"attnbook-grader=={version()}"


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


def _config() -> dict:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config if isinstance(config, dict) else {}


def repository_url() -> str:
    """The repository URL from `_config.yml` (PyYAML comes with Jupyter Book)."""
    url = (_config().get("repository") or {}).get("url")
    if not url:
        raise RuntimeError("_config.yml has no repository.url")
    return str(url).removesuffix("/").removesuffix(".git")


def book_url() -> str:
    """The published book's URL from `_config.yml` (html.baseurl), without the final /."""
    url = (_config().get("html") or {}).get("baseurl")
    if not url:
        raise RuntimeError("_config.yml has no html.baseurl")
    return str(url).removesuffix("/")


def wheel_name() -> str:
    """The file name of this release's wheel (pure Python, any platform)."""
    return f"attnbook-{version()}-py3-none-any.whl"


#: Where the published book serves the package's wheel (tools/site_wheel.py puts it there).
SITE_WHEEL_FOLDER = "dist"


def _setup_cell(
    comment: str, condition: str, install: str, book: str, repo: str, ref: str
) -> str:
    """The cell's text, kept within 88 columns so the page shows it without scrolling."""
    where = "its main branch" if ref == "main" else "at the book's commit"
    return f'''\
{comment}
import importlib.util, os, subprocess, sys
if {condition}:
    book = "{book}"
    repo = "{repo}"
    sources = os.environ.get("ATTNBOOK_SOURCE", "").split() or [
        "{release_requirement()}",  # the package registry (PyPI)
        f"{{book}}/{SITE_WHEEL_FOLDER}/{wheel_name()}",  # the wheel the book carries
        f"git+{{repo}}@{ref}",  # the repository, {where}
    ]
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    failed = []
    for source in sources:
        done = subprocess.run([*pip, source{install}], capture_output=True, text=True)
        if done.returncode == 0:
            print("installed attnbook from", source)
            break
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
        fatal = [ln for ln in lines if ln.startswith("fatal:")]  # git's own words
        error = [ln for ln in lines if ln.startswith("ERROR:")]  # pip's
        why = (fatal[:1] or error[-1:] or lines[-1:] or ["?"])[0]
        failed.append(f"{{source}}: {{why[:200]}}")
    else:
        advice = (
            "Check that this runtime can reach the internet, or set ATTNBOOK_SOURCE to"
            " a wheel or a git URL of the course package, then run this cell again."
        )
        raise RuntimeError(
            "could not install attnbook; tried\\n" + "\\n".join([*failed, advice])
        )
{{after}}    importlib.invalidate_caches()'''


def chapter_setup_cell(
    book: str | None = None, repo: str | None = None, ref: str = "main"
) -> str:
    """The chapters' setup cell; `book`, `repo` (default: _config.yml's) and `ref` (the
    commit or branch the git source installs) are the places it tries after the registry."""
    cell = _setup_cell(
        "# Setup: where the course package `attnbook` is missing (Colab, a fresh Binder),\n"
        f"# install version {version()} from the first place below that has it.",
        'importlib.util.find_spec("attnbook") is None',
        "",
        book or book_url(),
        repo or repository_url(),
        ref,
    )
    return cell.replace("{after}", "")


def exercise_setup_cell(
    book: str | None = None, repo: str | None = None, ref: str = "main"
) -> str:
    """The exercises' setup cell: as the chapters', and the grader (otter-grader) without
    its dependencies, which would replace Colab's ipywidgets 7 by 8, with what its checks
    need (`grader_needs`)."""
    cell = _setup_cell(
        "# Setup: where the course package `attnbook` or the grader is missing (Colab, a\n"
        f"# fresh Binder), install attnbook {version()} from the first place below that has\n"
        "# it, and the grader without the dependencies that would replace Colab's\n"
        "# ipywidgets 7 (with what its checks need instead).",
        'None in (importlib.util.find_spec("attnbook"), importlib.util.find_spec("otter"))',
        ", *needs",
        book or book_url(),
        repo or repository_url(),
        ref,
    )
    needs = _wrapped_list("needs", grader_needs(), "    ") + "\n"
    cell = cell.replace(
        "    pip = [sys.executable", needs + "    pip = [sys.executable", 1
    )
    alone = (
        '    alone = [*pip, "--no-deps", "--no-warn-conflicts"]\n'
        f'    subprocess.run([*alone, "{grader_requirement()}"], check=True)\n'
    )
    return cell.replace("{after}", alone)


if __name__ == "__main__":
    print(chapter_setup_cell())
