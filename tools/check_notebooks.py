#!/usr/bin/env python3
"""Fail the book build on notebooks whose stored outputs it should not publish.

The book shows the outputs committed with each chapter (strict nbval re-runs them in
`make test`). So before building, every chapter and master notebook must
  - be executed: every non-empty code cell has an execution count;
  - carry no error output, except in a cell tagged `raises-exception` (meant to raise);
  - start with the standard setup cell (tools/setup_cell.py), which every chapter folds on
    its page (tag `hide-cell`: a reader online needs none of it; it stays first);
  - store no raw progress-bar redraws (run python -m tools.tidy_outputs after executing).
With execution on, `raise_on_error: true` in _config.yml does the same for raising cells.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from tools.setup_cell import chapter_setup_cell, exercise_setup_cell

ROOT = Path(__file__).resolve().parents[1]


def problems_in(
    path: Path, setup: str, executed: bool = True, folded: bool = False
) -> list[str]:
    """What the notebook at `path` must not publish; `folded`: its setup cell must be
    tagged `hide-cell` (every chapter's is)."""
    nb = nbformat.read(path, as_version=4)
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    found = []
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    if not code or code[0].source.strip() != setup.strip():
        found.append(
            f"{rel}: the first code cell is not the standard setup cell (tools/setup_cell.py)"
        )
    elif folded and "hide-cell" not in code[0].metadata.get("tags", []):
        found.append(
            f"{rel}: the setup cell is not folded on the page (tag it hide-cell)"
        )
    for i, cell in enumerate(code):
        tags = cell.metadata.get("tags", [])
        if executed and cell.execution_count is None:
            found.append(
                f"{rel}: code cell {i + 1} was never executed (commit notebooks executed)"
            )
        if any(
            o.output_type == "stream" and "\r" in o.text
            for o in cell.get("outputs", [])
        ):
            found.append(
                f"{rel}: code cell {i + 1} stores progress-bar redraws; run python -m tools.tidy_outputs"
            )
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if errors and "raises-exception" not in tags:
            found.append(
                f"{rel}: code cell {i + 1} stored an error ({errors[0].ename}) "
                "and is not tagged raises-exception"
            )
    return found


def main() -> int:
    found = []
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        found += problems_in(path, chapter_setup_cell(), folded=True)
    for path in sorted((ROOT / "exercises" / "masters").glob("*.ipynb")):
        found += problems_in(path, exercise_setup_cell())
    for path in sorted((ROOT / "exercises" / "student").glob("*.ipynb")):
        found += problems_in(path, exercise_setup_cell(), executed=False)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
