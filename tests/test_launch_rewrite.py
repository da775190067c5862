"""tools.launch_copies' rewriting of MyST Markdown, on a small made-up book (no build needed):
each role, directive and link becomes the plain Markdown the page shows; and the cells of a
made-up notebook: figures get their number, caption and alt text, folded cells stay folded,
attention views keep their picture only."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_output

from tools import ToolError
from tools.launch_copies import (
    ADDED,
    Book,
    Rewriter,
    caption_cell,
    fold,
    is_view,
    picture_only,
)

URL = "https://example.org/book"
BOOK = Book(
    url=URL,
    labels={
        "fig-maps": ("book/03_heads", "fig-maps", "Two maps"),
        "training": ("book/06_gpt", "training", "Why warm-up"),
        "fig-loss": ("book/06_gpt", "fig-loss", ""),
    },
    fignumbers={
        "book/03_heads": {"figure": {"fig-maps": (3, 2)}},
        "book/06_gpt": {"figure": {"fig-loss": (6, 1)}},
    },
    formats={"figure": "Fig. %s", "table": "Table %s"},
    titles={"book/06_gpt": "A tiny GPT"},
    citations={
        "v17": ("Vaswani et al.", "2017", "id2"),
        "ba16": ("Ba et al.", "2016", "id9"),
    },
)
VALUES = {"loss": "1.23456", "n": "np.int64(7)", "word": "'dog'", "count": "12"}


def rewrite(text: str) -> str:
    return Rewriter(BOOK, "book/03_heads", VALUES).markdown(text)


def test_glue_takes_the_stored_value_in_the_role_s_format() -> None:
    assert rewrite("loss {glue:text}`loss:.2f`, {glue:text}`count`") == "loss 1.23, 12"
    assert rewrite("{glue:text}`word` and {glue}`count`") == "dog and 12"
    assert rewrite("{glue:text}`count:,d` of {glue:text}`loss:.1%`") == "12 of 123.5%"
    with pytest.raises(ToolError, match="no glued value 'gone'"):
        rewrite("{glue:text}`gone:.2f`")


def test_numbers_citations_and_references_become_links() -> None:
    ref = f"{URL}/book/references.html"
    # a figure of this notebook: its anchor in the copy; of another: the book's page
    assert rewrite("see {numref}`fig-maps`") == "see [Fig. 3.2](#fig-maps)"
    assert (
        rewrite("see {numref}`fig-loss`")
        == f"see [Fig. 6.1]({URL}/book/06_gpt.html#fig-loss)"
    )
    assert rewrite("{numref}`Figure %s <fig-maps>`") == "[Figure 3.2](#fig-maps)"
    assert rewrite("as shown {cite}`v17,ba16`") == (
        f"as shown ([Vaswani et al., 2017]({ref}#id2); [Ba et al., 2016]({ref}#id9))"
    )
    assert rewrite("Vaswani et al. {cite}`v17` found") == (
        f"Vaswani et al. ([2017]({ref}#id2)) found"
    )
    assert rewrite("{cite:t}`ba16` showed") == f"[Ba et al.]({ref}#id9) (2016) showed"
    assert rewrite("{ref}`the section on\ntraining <training>`") == (
        f"[the section on training]({URL}/book/06_gpt.html#training)"
    )
    assert (
        rewrite("{ref}`training`") == f"[Why warm-up]({URL}/book/06_gpt.html#training)"
    )
    assert rewrite("{doc}`06_gpt`") == f"[A tiny GPT]({URL}/book/06_gpt.html)"
    with pytest.raises(ToolError, match="no label 'nowhere'"):
        rewrite("{ref}`nowhere`")
    with pytest.raises(ToolError, match="no launch-copy rule"):
        rewrite("{math}`x^2`")


def test_links_directives_and_targets() -> None:
    assert rewrite("[ex](../exercises/student/ex01.ipynb) [c](01_a.ipynb#top)") == (
        f"[ex]({URL}/exercises/student/ex01.html) [c]({URL}/book/01_a.html#top)"
    )
    kept = "[w](https://x.org/a) [here](#sec) ![i](https://x.org/i.png)"
    assert rewrite(kept) == kept
    text = ":::{admonition} Heads are not born\n:class: warning\nWe *chose* them.\n\nSee.\n:::\n"
    assert (
        rewrite(text) == "> **Heads are not born**\n>\n> We *chose* them.\n>\n> See.\n"
    )
    assert rewrite(":::{note}\nMind it.\n:::") == "> **Note**\n>\n> Mind it."
    assert rewrite("(heads)=\n# Heads\n") == "# Heads\n"
    with pytest.raises(ToolError, match="no launch-copy rule for {figure}"):
        rewrite("```{figure} x.png\n```")


PNG = "iVBORw0KGgo="  # stands for a picture: only where it goes matters here


def figure_cell(**metadata) -> nbformat.NotebookNode:
    cell = new_code_cell("plot()", metadata=metadata, execution_count=3)
    cell.outputs = [
        new_output("display_data", {"image/png": PNG, "text/plain": "<Fig>"})
    ]
    return cell


def test_a_figure_gets_its_anchor_number_caption_and_alt_text() -> None:
    mystnb = {
        "figure": {
            "name": "fig-maps",
            "caption": "Two maps,\n{glue:text}`loss:.2f` nats.",
        },
        "image": {"alt": "Two heatmaps side by side."},
    }
    cell = figure_cell(mystnb=mystnb)
    rewriter = Rewriter(BOOK, "book/03_heads", VALUES)
    added = caption_cell(cell, rewriter, with_id=True)
    assert added.cell_type == "markdown" and added.metadata[ADDED] == "caption"
    first, *rest = added.source.split("\n\n")
    assert (
        first
        == '<a id="fig-maps" name="fig-maps"></a>**Fig. 3.2.** Two maps, 1.23 nats.'
    )
    assert "<summary>Description</summary>" in rest[0]
    assert rest[1] == "Two heatmaps side by side."
    assert cell.outputs[0].metadata["image/png"]["alt"] == "Two heatmaps side by side."
    assert added.id.endswith("-caption")
    assert "id" not in caption_cell(cell, rewriter, with_id=False)  # nbformat 4.4
    nameless = figure_cell(mystnb={"figure": {"caption": "x"}})
    with pytest.raises(ToolError, match="figure without a name"):
        caption_cell(nameless, rewriter, with_id=True)


def test_folded_cells_stay_folded() -> None:
    cells = {
        t: new_code_cell("x", metadata={"tags": [t]})
        for t in ("hide-input", "hide-output", "hide-cell", "nbval-ignore-output")
    }
    for cell in cells.values():
        fold(cell)
    hidden_input = cells["hide-input"].metadata
    assert hidden_input["jupyter"] == {"source_hidden": True}
    assert hidden_input["cellView"] == "form" and "collapsed" not in hidden_input
    hidden_output = cells["hide-output"].metadata
    assert (
        hidden_output["jupyter"] == {"outputs_hidden": True}
        and hidden_output["collapsed"]
    )
    whole = cells["hide-cell"].metadata
    assert whole["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert whole["cellView"] == "form" and whole["collapsed"] is True
    assert set(cells["nbval-ignore-output"].metadata) == {"tags"}  # nothing to fold


def test_an_attention_view_keeps_its_picture_only() -> None:
    view = new_output(
        "execute_result",
        {
            "image/png": PNG,
            "text/html": '<div class="attnx" id="attnx-1"><style>.attnx{}</style>'
            '<img class="attnx-picture" src="data:," alt="Head 0 &amp; head 1"></div>',
            "text/plain": "AttentionView(1 layers x 2 heads)",
        },
        execution_count=4,
    )
    table = new_output(
        "display_data", {"text/html": "<table></table>", "text/plain": "t"}
    )
    cell = new_code_cell("explore(...)", execution_count=4)
    cell.outputs = [view, table]
    assert is_view(view) and not is_view(table)
    picture_only(cell)
    assert set(view.data) == {"image/png", "text/plain"}
    assert view.metadata["image/png"]["alt"] == "Head 0 & head 1"
    assert set(table.data) == {"text/html", "text/plain"}  # other HTML is kept
    blind = new_output("display_data", {"text/html": '<div class="attnx">'})
    cell.outputs = [blind]
    with pytest.raises(ToolError, match="without its picture"):
        picture_only(cell)


def test_two_keys_after_a_named_author_keep_both_citations() -> None:
    # only a single citation may shrink to its year after the prose named its authors
    ref = f"{URL}/book/references.html"
    assert rewrite("Vaswani et al. {cite}`v17,ba16` found") == (
        f"Vaswani et al. ([Vaswani et al., 2017]({ref}#id2); "
        f"[Ba et al., 2016]({ref}#id9)) found"
    )


@pytest.mark.parametrize(
    "authors, names",
    [
        (["Vaswani, Ashish"], "Vaswani"),
        (["Ba, Jimmy Lei", "Kiros, Jamie Ryan"], "Ba and Kiros"),
        (["Ba, Jimmy Lei", "Kiros, Jamie Ryan", "Hinton, Geoffrey"], "Ba et al."),
    ],
)
def test_one_or_two_authors_are_named_and_three_are_et_al(
    authors: list[str], names: str
) -> None:
    from pybtex.database import Entry, Person

    from tools.launch_copies import _authors_year

    entry = Entry(
        "article",
        fields={"year": "2016"},
        persons={"author": [Person(a) for a in authors]},
    )
    assert _authors_year(entry) == (names, "2016")


def test_the_copy_s_first_code_cell_must_be_the_setup_cell(
    tmp_path, monkeypatch
) -> None:
    import tools.launch_copies as launch_copies
    from tools import setup_cell

    monkeypatch.setattr(launch_copies, "ROOT", tmp_path)
    (tmp_path / "book").mkdir()
    path = tmp_path / "book" / "99_x.ipynb"
    good = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# X"),
            new_code_cell(setup_cell.chapter_setup_cell()),
            new_code_cell("x = 1"),
        ]
    )
    nbformat.write(good, path)
    copy = launch_copies.launch_copy(path, BOOK, "abc123")
    assert copy.cells[1].source == setup_cell.chapter_setup_cell(ref="abc123")
    assert copy.cells[2].source == "x = 1"
    good.cells[1].source = "import os"  # a notebook without its setup cell
    nbformat.write(good, path)
    with pytest.raises(ToolError, match="first code cell is not the setup cell"):
        launch_copies.launch_copy(path, BOOK, "abc123")
