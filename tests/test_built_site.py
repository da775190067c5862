"""The built site (`_build/html`, made by `make book`) shows students nothing of the hidden
exercise tests. Runs in `make test` after the strict book build (marker `site`); this test
never builds. Without a built site it is skipped, unless CI is set (then it fails).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from test_exercises import NAMES, ex, hidden_tests, public_lines, spotting_line

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"


def built_pages() -> dict[Path, str]:
    if not (SITE / "index.html").is_file():
        message = f"no built site at {SITE.relative_to(ROOT)} (run `make book` first)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
            pytest.fail(message + "; CI is set, so the site tests are mandatory")
        pytest.skip(message)
    pages = [
        p for p in SITE.rglob("*") if p.suffix in {".html", ".ipynb", ".txt", ".js"}
    ]
    return {p: p.read_text(errors="replace") for p in pages}


@pytest.fixture(scope="module")
def pages() -> dict[Path, str]:
    return built_pages()


@pytest.fixture(scope="module")
def hidden(tmp_path_factory) -> dict[str, tuple[dict[str, str], set[str]]]:
    """Hidden tests of every exercise and the lines its public tests hold, from autograder
    zips built afresh here (`make test` runs this beside `make exercises-prove`, which may
    be rewriting the zips in _build)."""
    found = {}
    for name in NAMES:
        zip_path = ex.build(name, tmp_path_factory.mktemp(name)).autograder_zip
        found[name] = (hidden_tests(zip_path), public_lines(zip_path))
    return found


def test_the_site_has_the_exercise_pages(pages) -> None:
    for name in NAMES:
        assert SITE / "exercises" / "student" / f"{name}.html" in pages, name


@pytest.fixture(scope="module")
def defined(pages) -> dict[Path, set[str]]:
    """The names of the functions each page defines (one scan per page, not one per test)."""
    return {path: set(DEF.findall(text)) for path, text in pages.items()}


DEF = re.compile(r"\bdef (\w+)\(")


@pytest.mark.parametrize("name", NAMES)
def test_hidden_tests_appear_in_no_built_page(pages, defined, hidden, name) -> None:
    tests, shared = hidden[name]
    assert tests, f"{name} has no hidden tests"
    for fname, source in tests.items():
        longest = spotting_line(source, shared)
        for path, text in pages.items():
            assert fname not in defined[path], f"hidden test {fname} leaked into {path}"
            assert longest not in text, (
                f"a line of hidden test {fname} leaked into {path}"
            )


# A figure reference renders as Sphinx's numref text, "Fig. 2.1". Prose that writes the word
# itself before it ("Figure {numref}`...`") shows "Figure Fig. 2.1" on the page.
NUMREF = re.compile(r'<span class="std std-numref">')
DOUBLED_NUMREF = re.compile(
    r'\b(?:Figures?|Fig\.)\s*(?:<a\b[^>]*>\s*)?<span class="std std-numref">',
    re.IGNORECASE,
)


def doubled_figure_references(html: str) -> list[str]:
    """The figure references of a page that name the figure twice, with some context."""
    return [
        html[max(m.start() - 40, 0) : m.end() + 20]
        for m in DOUBLED_NUMREF.finditer(html)
    ]


def test_the_doubled_form_is_recognised() -> None:
    bad = (
        'see Figure <a class="reference internal" href="#fig-a">'
        '<span class="std std-numref">Fig. 1.1</span></a>'
    )
    good = (
        'see <a class="reference internal" href="#fig-a">'
        '<span class="std std-numref">Fig. 1.1</span></a>, the Figure below'
    )
    assert doubled_figure_references(bad) and not doubled_figure_references(good)


def test_figure_references_name_the_figure_once(pages) -> None:
    html = {path: text for path, text in pages.items() if path.suffix == ".html"}
    assert sum(len(NUMREF.findall(text)) for text in html.values()) >= 10, (
        "expected the chapters' figure references on the site"
    )
    doubled = {
        str(path.relative_to(SITE)): found
        for path, text in html.items()
        if (found := doubled_figure_references(text))
    }
    assert not doubled, (
        f"figure references rendered twice ('Figure Fig. x.y'): {doubled}"
    )


def test_the_site_serves_the_wheel_the_setup_cells_name(pages) -> None:
    """The second place the setup cells try: `<book>/dist/<wheel>`, this version's wheel."""
    import zipfile

    from tools import setup_cell

    wheel = SITE / setup_cell.SITE_WHEEL_FOLDER / setup_cell.wheel_name()
    assert wheel.is_file(), f"{wheel.relative_to(ROOT)} is missing: run make book"
    with zipfile.ZipFile(wheel) as z:
        metadata = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(metadata).decode()
        assert f"Version: {setup_cell.version()}\n" in text
        assert "attnbook/explore.py" in z.namelist()
