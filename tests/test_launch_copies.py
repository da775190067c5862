"""The notebooks a reader launches (`tools/launch_copies.py`, written by `make book` into
`_build/launch/` and the site's `_sources/`) read like the pages: no MyST role, directive or
target left; every glued value is the stored one, formatted as the role asks (computed here
independently of myst-nb); every link into the book names a page and an anchor that the built
site has; every figure has its number, caption and alt text under it, and "Fig. N.M" of a
figure of the same notebook points at it there; cells folded on the page are folded; an
attention view rendered by an escaping sanitiser shows its picture, not its markup; the pages'
launch buttons open these copies; and a copy runs top to bottom with `tools.run_chapters` in a
kernel where myst-nb cannot be imported. Reads the built book (marker
`site`); without one it is skipped, unless CI is set (then it fails).
"""

from __future__ import annotations

import ast
import html
import os
import re
from pathlib import Path

import nbformat
import pytest

from tools import setup_cell
from tools.launch_copies import ADDED, FOLDS, OUT, SITE, glued, is_view, notebooks
from tools.run_chapters import run_notebook

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p.relative_to(ROOT) for p in notebooks()]
MYST = [
    re.compile(r"\{[a-z]+(?::[a-z]+)?\}`"),  # a role
    re.compile(r"^\s*(:{3,}|`{3,})\{", re.M),  # a directive
    re.compile(r"^\([\w\-:.]+\)=\s*$", re.M),  # a target
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
GLUE = re.compile(r"\{glue(?::text)?\}`([^`]*)`")


def copy_of(rel: Path) -> nbformat.NotebookNode:
    path = OUT / rel
    if not path.is_file():
        message = f"{path.relative_to(ROOT)} is missing (run `make book` first)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
            pytest.fail(message + "; CI is set, so the site tests are mandatory")
        pytest.skip(message)
    return nbformat.read(path, as_version=4)


def markdown(nb: nbformat.NotebookNode, added: bool = True) -> list[str]:
    """The Markdown cells' text; without the cells the copy adds where `added` is false."""
    return [
        c.source
        for c in nb.cells
        if c.cell_type == "markdown" and (added or ADDED not in c.metadata)
    ]


def without_views(outputs: list) -> list:
    """Outputs with an attention view's HTML left out (the copy keeps its picture only)."""
    kept = []
    for output in outputs:
        output = nbformat.from_dict(output)
        if is_view(output):
            output.data = {k: v for k, v in output.data.items() if k != "text/html"}
            output.metadata.pop("image/png", None)
        elif "metadata" in output:
            output.metadata.get("image/png", {}).pop("alt", None)
            if output.metadata.get("image/png") == {}:
                del output.metadata["image/png"]
        kept.append(output)
    return kept


def formatted(text: str, spec: str) -> str:
    """A glued text/plain value as `{glue:text}`key:spec`` shows it: the Python literal it
    spells, converted for the format's type letter, then formatted."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text
    if not spec:
        return str(value)
    kind = spec[-1]
    if kind in "eEfFgGn%":
        value = float(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind == "s":
        value = str(value)
    return format(value, spec)


@pytest.mark.parametrize("rel", SOURCES, ids=str)
def test_copy_has_no_myst_and_the_stored_values(rel: Path) -> None:
    copy = copy_of(rel)
    source = nbformat.read(ROOT / rel, as_version=4)
    for text in markdown(copy):
        for pattern in MYST:
            found = pattern.search(text)
            assert not found, (
                f"{rel}: MyST left: {text[found.start() : found.start() + 80]!r}"
            )
    values = glued(source)
    for before, after in zip(markdown(source), markdown(copy, False), strict=True):
        for body in GLUE.findall(before):
            key, _, spec = body.rpartition(":") if ":" in body else (body, "", "")
            expected = formatted(values[key], spec)
            assert expected in after, f"{rel}: {body!r} should read {expected!r}"
    # the code and its outputs are the source's; the setup cell installs at a commit
    code = [c for c in copy.cells if c.cell_type == "code"]
    assert [without_views(c.outputs) for c in code] == [
        without_views(c.outputs) for c in source.cells if c.cell_type == "code"
    ]
    assert "@main" not in code[0].source and re.search(
        r"@[0-9a-f]{40}\"", code[0].source
    )


def test_every_link_into_the_book_resolves() -> None:
    book = setup_cell.book_url() + "/"
    ids: dict[Path, set[str]] = {}
    checked = 0
    for rel in SOURCES:
        for text in markdown(copy_of(rel)):
            for url in LINK.findall(text):
                if not url.startswith(book):
                    assert re.match(r"https?://|mailto:|#", url), (
                        f"{rel}: relative {url}"
                    )
                    continue
                path, _, anchor = url.removeprefix(book).partition("#")
                page = SITE / path
                assert page.is_file(), f"{rel}: {url} names no file of the site"
                if anchor:
                    if page not in ids:
                        ids[page] = set(re.findall(r'id="([^"]+)"', page.read_text()))
                    assert anchor in ids[page], f"{rel}: {url}: no such anchor"
                checked += 1
    assert checked > 100, checked  # chapters link to figures, references and each other


FIGURE_REF = re.compile(r"\[Fig\. (\d+\.\d+)\]\(#([\w\-]+)\)")
CAPTION = re.compile(r'^<a id="([\w\-]+)" name="\1"></a>\*\*Fig\. (\d+\.\d+)\.\*\* ')


@pytest.mark.parametrize("rel", SOURCES, ids=str)
def test_figures_keep_number_caption_and_alt_text(rel: Path) -> None:
    copy = copy_of(rel)
    source = nbformat.read(ROOT / rel, as_version=4)
    figures = [c for c in source.cells if "figure" in c.metadata.get("mystnb", {})]
    numbers: dict[str, str] = {}  # anchor -> "3.2"
    for i, cell in enumerate(copy.cells):
        if "figure" not in cell.metadata.get("mystnb", {}):
            continue
        under = copy.cells[i + 1]
        assert under.metadata.get(ADDED) == "caption", (
            f"{rel}: figure {i} has no caption"
        )
        found = CAPTION.match(under.source)
        assert found, f"{rel}: {under.source[:120]!r}"
        anchor, number = found.groups()
        assert anchor == cell.metadata.mystnb.figure.name
        numbers[anchor] = number
        words = cell.metadata.mystnb.figure.caption.split()[:4]
        assert " ".join(words).split("{")[0] in " ".join(under.source.split()), rel
        alt = cell.metadata.mystnb.get("image", {}).get("alt")
        if alt:
            assert alt in under.source
            pictures = [o for o in cell.outputs if "image/png" in o.get("data", {})]
            assert pictures and all(
                o.metadata["image/png"]["alt"] == alt for o in pictures
            )
    assert len(numbers) == len(figures), rel
    assert len(set(numbers.values())) == len(numbers), f"{rel}: a number twice"
    for text in markdown(copy, False):  # "Fig. N.M" of this notebook: its own anchor
        for number, anchor in FIGURE_REF.findall(text):
            assert numbers.get(anchor) == number, f"{rel}: Fig. {number} -> #{anchor}"


@pytest.mark.parametrize("rel", SOURCES, ids=str)
def test_cells_folded_on_the_page_are_folded(rel: Path) -> None:
    copy = copy_of(rel)
    folded = 0
    for cell in copy.cells:
        for tag in cell.metadata.get("tags", []):
            for key, value in FOLDS.get(tag, {}).items():
                if isinstance(value, dict):
                    assert value.items() <= cell.metadata[key].items(), (rel, tag)
                else:
                    assert cell.metadata[key] == value, (rel, tag)
                folded += 1
    if rel.parts[0] == "book":  # every chapter folds its setup cell, at least
        first = next(c for c in copy.cells if c.cell_type == "code")
        assert first.metadata["jupyter"]["source_hidden"] and folded


def test_an_escaping_sanitiser_shows_a_view_s_picture() -> None:
    """nbconvert's --sanitize-html (what nbviewer-like tools do) escapes the tags it does
    not keep: a view's HTML would show as 100,000 characters of text. The copy's view cells
    show their picture there."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(sanitize_html=True)
    views = 0
    for rel in SOURCES:
        source = nbformat.read(ROOT / rel, as_version=4)
        with_view = {
            c.get("id")
            for c in source.cells
            if c.cell_type == "code" and any(is_view(o) for o in c.outputs)
        }
        if not with_view:
            continue
        cells = [c for c in copy_of(rel).cells if c.get("id") in with_view]
        assert len(cells) == len(with_view), rel
        body, _ = exporter.from_notebook_node(nbformat.v4.new_notebook(cells=cells))
        assert "--attnx-rgb" not in body and "attnx-data" not in body, rel
        assert body.count("data:image/png;base64,") >= len(cells), rel
        views += len(cells)
    assert views >= 5, views


def test_launch_buttons_and_download_name_the_copies() -> None:
    slug = setup_cell.repository_url().removeprefix("https://github.com/")
    for rel in SOURCES:
        page = SITE / rel.with_suffix(".html")
        text = html.unescape(page.read_text())
        colab = f"https://colab.research.google.com/github/{slug}/blob/launch/{rel}"
        binder = f"https://mybinder.org/v2/gh/{slug}/launch?urlpath=lab/tree/{rel}"
        assert colab in text and binder in text, f"{page}: launch buttons"
        assert "/blob/main/" not in text and f"{slug}/main?" not in text
        download = SITE / "_sources" / rel
        assert f"_sources/{rel}" in text
        assert download.read_bytes() == (OUT / rel).read_bytes(), f"{download}"


def test_a_copy_runs_without_myst_nb(tmp_path: Path, monkeypatch) -> None:
    """Chapter 5's copy (it glues values in its code) runs top to bottom where myst-nb is
    not importable, as on Colab: `attnbook.notebook.glue` stores nothing there."""
    rel = Path("book/05_positional_encoding.ipynb")
    copy = copy_of(rel)
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "myst_nb.py").write_text("raise ImportError('no myst-nb here')\n")
    monkeypatch.setenv("PYTHONPATH", str(blocker))
    assert glued(copy), "the stored copy glues values"
    check = "try:\n    import myst_nb\nexcept ImportError:\n    pass\nelse:\n"
    check += "    raise AssertionError('myst-nb is importable in the kernel')"
    copy.cells.append(nbformat.v4.new_code_cell(check))
    path = tmp_path / rel.name
    nbformat.write(copy, path)
    verdict = run_notebook(path, timeout=300)
    assert verdict.passed, verdict.problems
