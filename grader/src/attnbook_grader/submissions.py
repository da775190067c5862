"""Reading submissions, one way for both grading paths: Gradescope's entry
point (`autograder.main`) and ``make grade`` (`tools.exercises grade`).

`read_notebook` turns a file into the code cells of an nbformat-4 notebook, whatever nbformat
the student's Jupyter wrote (3 or 4.x, converted by ``nbformat``), or a one-line reason it
cannot be graded (not text, not JSON, JSON nested too deep to read, not a notebook, a
notebook of another exercise).
`find_submission` picks the one notebook of a Gradescope upload (searched recursively; none or
several is refused, by name); `walk_folder` lists every notebook under a class folder, in
subfolders too (LMS exports put each student in a folder of their own), and what it skipped,
with why. `cell_sources` gives a notebook's code cells as the grader runs them: a cell tagged
``otter_ignore`` (otter-grader's tag for cells its grading skips: here the closing "look at
your result" cells, which draw or train and define nothing a question needs) is run as an
empty cell, so that every other cell keeps its index. Imports nothing else of the grading
package.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = [
    "read_notebook",
    "find_submission",
    "walk_folder",
    "exercise_of",
    "cell_sources",
    "IGNORE_TAG",
]

#: otter-grader's tag for a cell that grading does not run (`otter.execute`'s IGNORE_CELL_TAG)
IGNORE_TAG = "otter_ignore"

_SKIPPED_DIRS = (".ipynb_checkpoints", "__MACOSX", "__pycache__")
_EXERCISE = re.compile(r"tests_dir\(\s*[\"'](\w+)[\"']")


def exercise_of(sources: list[str]) -> str | None:
    """The exercise a notebook's code names (``tests_dir("exNN_...")``), or None."""
    named = sorted({m for s in sources for m in _EXERCISE.findall(s)})
    return named[0] if named else None


def cell_sources(nb: Any) -> list[str]:
    """The sources of a notebook's code cells (a dict or nbformat node), in order; a cell
    tagged `IGNORE_TAG` as "" (not run, its index kept)."""
    sources = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        metadata = cell.get("metadata")
        tags = metadata.get("tags") if isinstance(metadata, dict) else None
        ignored = isinstance(tags, list) and IGNORE_TAG in tags
        sources.append("" if ignored else source)
    return sources


def read_notebook(path: Path, name: str | None = None) -> tuple[Any, str]:
    """(the notebook as nbformat 4, "") or (None, why it cannot be graded as exercise
    `name`); `name` None: any exercise."""
    import nbformat

    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None, "not a notebook: the file is not text (UTF-8)"
    except OSError as err:
        return None, f"not a notebook: the file cannot be read ({type(err).__name__})"
    try:
        json.loads(text)
    except ValueError as err:
        why = str(err).split(":")[0]
        return None, f"not a notebook: the file is not valid JSON ({why})"
    except (RecursionError, MemoryError) as err:
        kind = type(err).__name__
        return None, f"not a notebook: JSON nested too deep to read ({kind})"
    try:
        nb = nbformat.reads(text, as_version=4)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("no cells")
    except Exception as err:  # noqa: BLE001 - any unreadable notebook
        kind = type(err).__name__
        return None, f"not a notebook: valid JSON but not a Jupyter notebook ({kind})"
    sources = cell_sources(nb)
    if not sources:
        return None, "the notebook has no code cells"
    other = exercise_of(sources)
    if name is not None and other is not None and other != name:
        return None, f"wrong exercise: this is a notebook of {other}, not of {name}"
    return nb, ""


def code_cells(nb: Any) -> list[str]:
    """The sources of a notebook's code cells (nbformat 4, as `read_notebook` gives it),
    as the grader runs them (`cell_sources`)."""
    return cell_sources(nb)


def _hidden(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return any(p.startswith(".") or p in _SKIPPED_DIRS for p in parts)


def find_submission(folder: Path) -> tuple[Path | None, str]:
    """The one notebook of an upload (subfolders searched), or None and why not."""
    found = sorted(
        p
        for p in Path(folder).rglob("*.ipynb")
        if p.is_file() and not _hidden(p, Path(folder))
    )
    if not found:
        return None, "no .ipynb file was submitted"
    if len(found) > 1:
        names = ", ".join(str(p.relative_to(folder)) for p in found)
        return None, (
            f"{len(found)} notebooks were submitted ({names}): upload only the exercise's "
            "notebook"
        )
    return found[0], ""


def walk_folder(folder: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """(every notebook under `folder`, subfolders included, sorted by relative path;
    [(relative path, why it was skipped)] for everything else)."""
    root = Path(folder)
    notebooks, skipped = [], []
    for path in sorted(root.rglob("*")):
        if path.is_dir():
            continue
        relative = str(path.relative_to(root))
        if _hidden(path, root):
            skipped.append((relative, "a hidden or checkpoint file"))
        elif path.suffix != ".ipynb":
            skipped.append((relative, f"not a notebook ({path.suffix or 'no suffix'})"))
        else:
            notebooks.append(path)
    return notebooks, skipped
