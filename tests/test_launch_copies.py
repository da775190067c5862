"""The notebooks a reader launches (`tools/launch_copies.py`, written by `make book` into
`_build/launch/` and the site's `_sources/`) read like the pages: no MyST role, directive or
target left; every glued value is the stored one, formatted as the role asks (computed here
independently of myst-nb); every link into the book names a page and an anchor that the built
site has; the pages' launch buttons open these copies; and a copy runs top to bottom with
`tools.run_chapters` in a kernel where myst-nb cannot be imported. Reads the built book (marker
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
from tools.launch_copies import OUT, SITE, glued, notebooks
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


def markdown(nb: nbformat.NotebookNode) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


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
    for before, after in zip(markdown(source), markdown(copy), strict=True):
        for body in GLUE.findall(before):
            key, _, spec = body.rpartition(":") if ":" in body else (body, "", "")
            expected = formatted(values[key], spec)
            assert expected in after, f"{rel}: {body!r} should read {expected!r}"
    # the code and its outputs are the source's; the setup cell installs at a commit
    code = [c for c in copy.cells if c.cell_type == "code"]
    assert [c.outputs for c in code] == [
        c.outputs for c in source.cells if c.cell_type == "code"
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
