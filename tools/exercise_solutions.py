"""The worked-solutions page of an exercise, made from its master notebook.

The masters are public (exercises/masters/), so the book shows self-learners what is in them
anyway, in a readable form: for each question its text and the reference solution, folded
(the `hide-input` tag: the code opens on a click). No test is shown, public or hidden, and
no other code cell (setup, checks, plots). `python -m tools.exercises publish` writes the
pages to exercises/solutions/NAME.ipynb, a page of the book, only from the public masters:
solutions of a private copy (`MASTERS=path`) are never written into the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MARKERS = ("# BEGIN SOLUTION", "# END SOLUTION")


def _raw_marker(cell: nbformat.NotebookNode) -> str:
    """`# BEGIN QUESTION`, `# END TESTS`, ... for otter's raw marker cells, else ''."""
    if cell.cell_type != "raw" or not cell.source.strip():
        return ""
    return cell.source.strip().splitlines()[0].strip()


def _solution_code(source: str) -> str:
    """A solution cell without otter's `# BEGIN/END SOLUTION` lines."""
    lines = [line for line in source.splitlines() if line.strip() not in MARKERS]
    return "\n".join(lines).strip("\n")


def title(master: nbformat.NotebookNode, name: str) -> str:
    for cell in master.cells:
        if cell.cell_type == "markdown":
            found = re.search(r"(?m)^# (.+)$", cell.source)
            if found:
                return found[1].strip()
    return name


def solutions_notebook(
    name: str, master_path: Path, link_to_book
) -> nbformat.NotebookNode:
    """The solutions page of exercise `name` from its master (`link_to_book` resolves the
    masters' `{{ book_url }}` links, as for the student notebook)."""
    master = nbformat.read(master_path, as_version=4)
    heading = title(master, name)
    cells = [
        new_markdown_cell(
            f"# Solutions to {heading[:1].lower()}{heading[1:]}\n\n"
            f"Worked solutions of [{heading}](../student/{name}.ipynb), made from its master "
            f"notebook `exercises/masters/{name}.ipynb`. The masters are public, hidden tests "
            "included: the hidden tests catch mistakes, not copying. Try each question "
            "first; each solution is folded, and opens on a click."
        )
    ]
    section = ""  # the part of the master we are in: question, solution or tests
    for cell in master.cells:
        marker = _raw_marker(cell)
        if marker:
            section = {
                "# BEGIN QUESTION": "question",
                "# BEGIN SOLUTION": "solution",
                "# END SOLUTION": "question",
                "# BEGIN TESTS": "tests",
                "# END TESTS": "question",
                "# END QUESTION": "",
            }.get(marker, section)
            continue
        if section == "question" and cell.cell_type == "markdown":
            cells.append(new_markdown_cell(cell.source))
        elif section == "solution" and cell.cell_type == "code":
            code = new_code_cell(_solution_code(cell.source))
            code.metadata["tags"] = ["hide-input"]
            cells.append(code)
    nb = new_notebook(
        cells=cells, metadata={"kernelspec": master.metadata.get("kernelspec", {})}
    )
    if not nb.metadata["kernelspec"]:
        del nb.metadata["kernelspec"]
    return link_to_book(nb)
