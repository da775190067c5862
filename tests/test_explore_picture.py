"""The attention view's own picture, for where scripts do not run: the view's HTML opens
with an inline PNG (a data URI: no file, no request) and the live view hidden, so that a
renderer that strips scripts shows the picture. A sanitiser with JupyterLab's rules (what an
untrusted notebook gets, e.g. every Binder launch) keeps the picture and drops the script.
Also the view's defaults that the chapters rely on: it opens on the last query, and it
breaks lines at newline tokens only in running text (characters), never between words."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import nh3
import torch
from test_explore import TOKENS, parse, weights

from attnbook.explore import explore

# JupyterLab's HTML sanitiser (@jupyterlab/apputils, Sanitizer): the tags and the attributes
# it allows, of those a view could use; <script> and <style> are dropped with their content;
# an <img>'s src is not checked against URL schemes, so data URIs stay; an attribute with an
# empty value is dropped, alt excepted (seen in JupyterLab 4.6: a bare `hidden` went, so the
# view writes hidden="hidden").
LAB_TAGS = {
    "a", "b", "br", "button", "canvas", "code", "details", "div", "em", "i", "img",
    "label", "li", "ol", "option", "p", "pre", "select", "span", "strong", "summary",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
LAB_ATTRIBUTES = {
    "*": {"class", "dir", "hidden", "id", "lang", "style", "title"},
    "img": {"alt", "height", "src", "width"},
    "details": {"open"},
    "option": {"disabled", "label", "selected", "value"},
    "button": {"disabled", "name", "type", "value"},
    "canvas": {"height", "width"},
}


def lab_sanitise(html: str) -> str:
    clean = nh3.clean(
        html,
        tags=LAB_TAGS,
        clean_content_tags={"script", "style"},
        attributes=LAB_ATTRIBUTES,
        url_schemes={"http", "https", "data"},
        link_rel=None,
    )
    return re.sub(r'\s(?!alt=)[\w-]+=""', "", clean)


class Shown(HTMLParser):
    """The images a browser would show, and the text it would show, ignoring all that lies
    inside an element with the `hidden` attribute."""

    VOID = {"br", "img", "input", "meta", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.text: list[str] = []
        self.stack: list[bool] = []  # per open element: hidden here or above

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        hidden = (bool(self.stack) and self.stack[-1]) or "hidden" in a
        if tag == "img" and not hidden:
            self.images.append(a)
        if tag not in self.VOID:
            self.stack.append(hidden or tag in ("script", "style"))

    def handle_endtag(self, tag):
        if tag not in self.VOID:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]) and data.strip():
            self.text.append(data.strip())


def shown(html: str) -> Shown:
    seen = Shown()
    seen.feed(html)
    seen.close()
    return seen


def picture_bytes(img: dict[str, str | None]) -> bytes:
    src = img["src"] or ""
    assert src.startswith("data:image/png;base64,"), src[:40]
    return base64.b64decode(src.removeprefix("data:image/png;base64,"))


def test_the_view_opens_as_its_picture() -> None:
    view = explore(TOKENS, weights(), title="two layers, three heads")
    bundle = view._repr_mimebundle_()
    html = bundle["text/html"]
    seen = shown(html)
    (img,) = seen.images
    assert img["class"] == "attnx-picture"
    # the picture is the bundle's PNG, and no request is needed to show it
    assert picture_bytes(img) == base64.b64decode(bundle["image/png"])
    assert "query 20" in (img["alt"] or "") and "two layers" in (img["alt"] or "")
    # without scripts nothing of the live view shows: no dead controls, no empty grid
    assert seen.text == [], seen.text
    page = parse(html)
    live = [a for t, a in page.tags if "attnx-live" in (a.get("class") or "")]
    assert len(live) == 1 and "hidden" in live[0]
    # the script, where it runs, removes the picture and shows the live view
    assert ".attnx-picture" in html and "picture.remove()" in html
    assert re.search(r'querySelector\("\.attnx-live"\)\.hidden = false', html)


def test_a_sanitised_render_keeps_the_picture() -> None:
    view = explore(TOKENS, weights(), title="two layers, three heads")
    html = view.to_html()
    clean = lab_sanitise(html)
    assert "<script" not in clean and "<style" not in clean
    seen = shown(clean)
    (img,) = seen.images
    assert picture_bytes(img) == view.to_png()
    assert seen.text == [], seen.text  # the live view stays hidden: no dead controls


def test_the_view_opens_on_the_last_query() -> None:
    view = explore(TOKENS, weights())
    last = len(TOKENS) - 1
    assert view.query == last and view.payload()["start"] == [0, 0, last]
    assert f"query {last} " in view.picture_alt()
    assert explore(TOKENS, weights(), query=3).payload()["start"] == [0, 0, 3]


def test_newlines_break_running_text_but_not_words() -> None:
    chars = explore(list("ab\ncd"), torch.eye(5)).to_html()
    assert chars.count("<br>") == 1
    assert re.search(r'data-q="2"[^>]*>\u21b5</span><br><span[^>]*data-q="3"', chars)
    words = explore(["one", "\n", "two"], torch.eye(3)).to_html()
    assert "<br>" not in words and "\u21b5</span>" in words
