"""tools.launch_copies' rewriting of MyST Markdown, on a small made-up book (no build needed):
each role, directive and link becomes the plain Markdown the page shows."""

from __future__ import annotations

import pytest

from tools import ToolError
from tools.launch_copies import Book, Rewriter

URL = "https://example.org/book"
BOOK = Book(
    url=URL,
    labels={
        "fig-maps": ("book/03_heads", "fig-maps", "Two maps"),
        "training": ("book/06_gpt", "training", "Why warm-up"),
    },
    fignumbers={"book/03_heads": {"figure": {"fig-maps": (3, 2)}}},
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
    assert (
        rewrite("see {numref}`fig-maps`")
        == f"see [Fig. 3.2]({URL}/book/03_heads.html#fig-maps)"
    )
    assert rewrite("{numref}`Figure %s <fig-maps>`").startswith("[Figure 3.2](")
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
