"""The worked-solutions page of an exercise, made from its master notebook.

The masters are public (exercises/masters/), so the book shows self-learners what is in them
anyway, in a readable form: for each question its text and the reference solution, folded
(the `hide-input` tag: the code opens on a click). No test is shown, public or hidden, and
no other code cell (setup, checks, plots). After each question's folded solution comes its
explanation, the section `## qN` of `exercises/explanations/NAME.md` (the reasoning: why this
axis, this scale, what the classic mistake costs; each multiple-choice option weighed), where
the file has one. `python -m tools.exercises publish` writes the
pages to exercises/solutions/NAME.ipynb, a page of the book, only from the public masters:
solutions of a private copy (`MASTERS=path`) are never written into the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MARKERS = ("# BEGIN SOLUTION", "# END SOLUTION")
EXPLAINED = "### Why it works"  # the heading of an explanation on the page


class ExplanationError(ValueError):
    """An explanations file that does not fit its master (a section for no question, ...)."""


def explanations(path: Path, questions: list[str]) -> dict[str, str]:
    """question -> its explanation, from the `## qN` sections of the Markdown file `path`
    (none if the file is missing). A section for a question the master does not have, a
    question explained twice, an empty section or text before the first section is an
    error, naming the file."""
    if not path.is_file():
        return {}
    found: dict[str, list[str]] = {}
    current = ""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        heading = re.fullmatch(r"##\s+(\S+)\s*", line)
        if heading:
            current = heading[1]
            if current not in questions:
                raise ExplanationError(
                    f"{path.name}, line {number}: a section for {current}, which the "
                    f"master does not have (its questions: {', '.join(questions)})"
                )
            if current in found:
                raise ExplanationError(
                    f"{path.name}, line {number}: {current} is explained twice"
                )
            found[current] = []
        elif current:
            found[current].append(line)
        elif line.strip():
            raise ExplanationError(
                f"{path.name}, line {number}: text before the first `## qN` section"
            )
    texts = {q: "\n".join(lines).strip() for q, lines in found.items()}
    for question, text in texts.items():
        if not text:
            raise ExplanationError(f"{path.name}: the section {question} is empty")
    return texts


def _question_name(cell: nbformat.NotebookNode) -> str:
    found = re.search(r"(?m)^name:\s*(\S+)", cell.source)
    return found[1] if found else ""


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
    questions = [
        _question_name(c) for c in master.cells if _raw_marker(c) == "# BEGIN QUESTION"
    ]
    explained = explanations(
        master_path.parent.parent / "explanations" / f"{name}.md", questions
    )
    cells = [
        new_markdown_cell(
            f"# Solutions to {heading[:1].lower()}{heading[1:]}\n\n"
            f"Worked solutions of [{heading}](../student/{name}.ipynb), made from its master "
            f"notebook `exercises/masters/{name}.ipynb`. The masters are public, hidden tests "
            "included: the hidden tests catch mistakes, not copying. Try each question "
            "first: each solution's code is folded and opens on a click, but the reasoning "
            "under it (why it works) names the answer in plain text."
        )
    ]
    section = ""  # the part of the master we are in: question, solution or tests
    question = ""
    for cell in master.cells:
        marker = _raw_marker(cell)
        if marker == "# BEGIN QUESTION":
            question = _question_name(cell)
        if marker == "# END QUESTION" and question in explained:
            cells.append(new_markdown_cell(f"{EXPLAINED}\n\n{explained[question]}"))
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
