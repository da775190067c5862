"""tools.check_notebooks: the book build refuses a chapter whose setup cell is not folded on
its page (tag `hide-cell`), or that does not start with the setup cell at all."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools.check_notebooks import ROOT, problems_in
from tools.setup_cell import chapter_setup_cell

SETUP = chapter_setup_cell()


def chapter(tmp_path: Path, *, tags: list[str], setup: str = SETUP) -> Path:
    """A small executed chapter whose setup cell carries `tags`."""
    cells = [
        new_markdown_cell("# A chapter"),
        new_code_cell(setup, metadata={"tags": tags}, execution_count=1),
        new_code_cell("x = 1", execution_count=2),
    ]
    path = tmp_path / "chapter.ipynb"
    nbformat.write(new_notebook(cells=cells), path)
    return path


def test_a_chapter_s_setup_cell_must_be_folded(tmp_path: Path) -> None:
    bare = problems_in(chapter(tmp_path, tags=[]), SETUP, folded=True)
    assert len(bare) == 1 and "not folded on the page (tag it hide-cell)" in bare[0]
    # folding only the input leaves the cell's outputs open: not enough either
    half = problems_in(chapter(tmp_path, tags=["hide-input"]), SETUP, folded=True)
    assert len(half) == 1 and "hide-cell" in half[0]
    assert not problems_in(chapter(tmp_path, tags=["hide-cell"]), SETUP, folded=True)
    # exercises are not asked to fold it
    assert not problems_in(chapter(tmp_path, tags=[]), SETUP)


def test_another_first_cell_is_refused_before_its_folding(tmp_path: Path) -> None:
    path = chapter(tmp_path, tags=["hide-cell"], setup="print('hello')")
    found = problems_in(path, SETUP, folded=True)
    assert len(found) == 1 and "not the standard setup cell" in found[0]


def test_every_chapter_folds_its_setup_cell() -> None:
    for path in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
        assert not problems_in(path, SETUP, folded=True), path.name
