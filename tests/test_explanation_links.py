"""The worked-solution pages link to the chapter section they draw on, and the section exists.

A link `../../book/NAME.ipynb#slug` in exercises/explanations/*.md lands on the heading of the
chapter whose MyST anchor is `slug` (`myst_heading_anchors` in _config.yml's sphinx config gives headings of
levels 1 to 3 one). A chapter heading renamed, or a slug mistyped, fails here rather than
sending the reader to the top of the chapter; the built site resolves the same anchors
(`make book-strict` warns, and fails, on an anchor it cannot find).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "exercises" / "explanations").glob("*.md"))
LINK = re.compile(r"\]\((\.\./\.\./book/[^)#\s]+\.ipynb)(?:#([^)\s]+))?\)")


def slug(title: str) -> str:
    """MyST's default anchor of a heading: its text without the maths (`$d_k$` adds nothing,
    the spaces around it stay), lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"\$[^$]*\$", "", title.strip())
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", text.lower()).replace(" ", "-")


def anchors(chapter: Path, levels: int) -> set[str]:
    found = set()
    for cell in json.loads(chapter.read_text())["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            heading = re.match(r"(#{1,6})\s+(.*)", line)
            if heading and len(heading[1]) <= levels:
                found.add(slug(heading[2]))
    return found


def depth() -> int:
    """The deepest heading level that gets an anchor (sphinx.config in _config.yml)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return int(config["sphinx"]["config"]["myst_heading_anchors"])


def links() -> list[tuple[str, str, str]]:
    return [
        (page.name, target, anchor)
        for page in PAGES
        for target, anchor in LINK.findall(page.read_text())
    ]


def test_headings_get_anchors():
    assert depth() >= 3


@pytest.mark.parametrize("page,target,anchor", links())
def test_a_section_link_lands_on_a_heading(page, target, anchor):
    chapter = (ROOT / "exercises" / "solutions" / target).resolve()
    assert chapter.is_file(), f"{page}: {target} is no chapter"
    if not anchor:
        return  # a link to the chapter itself
    assert anchor in anchors(chapter, depth()), (
        f"{page}: {target}#{anchor} names no heading of that chapter"
    )


# a link whose text names a section, "[chapter 10, breaking them](...)", or a link followed by
# the section's name, '[chapter 2](../../book/02_scaling.ipynb), section "..."'
NAMED = (
    re.compile(r"\[(chapter \d+, [^\]]+)\]\(\.\./\.\./book/[^)#]+\.ipynb\)"),
    re.compile(r"\]\(\.\./\.\./book/[^)#\s]+\.ipynb\),?\s+(section\s+\"[^\"]+\")"),
)


def test_every_page_that_names_a_section_links_to_it():
    """A link that names a section carries the section's #anchor."""
    bare = [
        f"{page.name}: {' '.join(name.split())}"
        for page in PAGES
        for pattern in NAMED
        for name in pattern.findall(page.read_text())
    ]
    assert not bare, (
        "links that name a section but land on the chapter's top:\n" + "\n".join(bare)
    )
