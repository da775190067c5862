#!/usr/bin/env python3
"""Rewrite everything that carries the package's release: the setup cell of every chapter and
exercise master notebook, `exercises/autograder-requirements.txt`, and the grading engine's
`grader/pyproject.toml` (its version and its pin of attnbook: the course's).

    python tools/release_files.py          (then `make exercises-publish` regenerates the student notebooks)

The version comes from `pyproject.toml`, the grader's pin from `requirements/lock.txt`
(tools/setup_cell.py reads both). Only the first code cell of a notebook changes.
`tests/test_config.py` checks that every copy agrees.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

from tools import setup_cell
from tools import ToolError

ROOT = setup_cell.ROOT
REQUIREMENTS = ROOT / "exercises" / "autograder-requirements.txt"
ENGINE = ROOT / "grader" / "pyproject.toml"


def autograder_requirements() -> str:
    """What the Gradescope autograder installs besides otter's own requirements."""
    return (
        "\n".join(
            [
                "numpy",
                "torch",
                setup_cell.release_requirement(),
                setup_cell.engine_requirement(),
                setup_cell.grader_requirement(),
            ]
        )
        + "\n"
    )


def engine_project(text: str, version: str) -> str:
    """grader/pyproject.toml's text with its version and its attnbook pin set to `version`."""
    text, versions = re.subn(
        r'(?m)^version = "[^"]*"$', f'version = "{version}"', text, count=1
    )
    text, pins = re.subn(r'"attnbook==[^"]*"', f'"attnbook=={version}"', text)
    if versions != 1 or pins != 1:
        raise ToolError(f"{ENGINE.relative_to(ROOT)}: no version line or attnbook pin")
    return text


def rewrite_setup_cell(path: Path, source: str) -> bool:
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    if not first.source.startswith("# Setup"):
        raise ToolError(
            f"{path.relative_to(ROOT)}: the first code cell is not the setup cell"
        )
    if first.source == source:
        return False
    first.source = source
    nbformat.write(nb, path)
    return True


def main() -> int:
    changed = [
        p
        for p in sorted((ROOT / "book").glob("*.ipynb"))
        if rewrite_setup_cell(p, setup_cell.chapter_setup_cell())
    ]
    changed += [
        p
        for p in sorted((ROOT / "exercises" / "masters").glob("*.ipynb"))
        if rewrite_setup_cell(p, setup_cell.exercise_setup_cell())
    ]
    new = autograder_requirements()
    if REQUIREMENTS.read_text() != new:
        REQUIREMENTS.write_text(new)
        changed.append(REQUIREMENTS)
    engine = engine_project(ENGINE.read_text(), setup_cell.version())
    if ENGINE.read_text() != engine:
        ENGINE.write_text(engine)
        changed.append(ENGINE)
    for p in changed:
        print(f"updated {p.relative_to(ROOT)}")
    print(f"release v{setup_cell.version()}: {len(changed)} files updated")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
