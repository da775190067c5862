"""The interactive attention views (`attnbook.explore`) on the built book, used as a reader
would, and the clickable notation of `theme/notation.js`.

One headless Chromium, one load per page that holds a view, at phone width (390 px) with touch:
hover and tap tokens, switch layers and heads from the controls and from the grid, move the
query with the keyboard, and check after each step that every key's shading (its computed
background alpha) equals the weight in the view's own inline JSON for that layer, head and
query. Also: no request leaves the local server, nothing in a view is wider than the screen,
the numbers table shows the same weights, dark mode changes the colours; with JavaScript off,
each view shows its picture and none of its dead controls. Skipped without a
Chromium (failed under CI), like tests/test_site.py; the browser and the local server are
the session's (tests/conftest.py), shared with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from test_site import ROOT, SITE, TIMEOUT_MS, wait_for_math

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
NOTATION_PAGE = (
    "book/03_multihead"  # formulas full of d_k, W_Q, W_O, and code naming them
)
# every page of the built book that holds a view (chapters 1, 3, 6, 7, 9 and 10)
VIEW_PAGES = sorted(
    str(p.relative_to(SITE).with_suffix(""))
    for p in (SITE / "book").glob("*.html")
    if 'class="attnx"' in p.read_text(encoding="utf-8")
)
ALPHA = 1 / 255 + 1e-3  # a colour's alpha is stored in 8 bits

# The state of view `i` on the page, and each key's shading against the inline JSON.
SHADING = """([i]) => {
    const root = document.querySelectorAll(".attnx")[i];
    const data = JSON.parse(root.querySelector(".attnx-data").textContent);
    const [l, h, q] = root.getAttribute("data-state").split(",").map(Number);
    const alpha = (el) => {
        const m = getComputedStyle(el).backgroundColor.match(/rgba?\\(([^)]*)\\)/);
        const parts = m[1].split(/[ ,\\/]+/).filter(Boolean);
        return parts.length > 3 ? Number(parts[3]) : 1;
    };
    const keys = [...root.querySelectorAll("[data-k]")];
    return {l, h, q, n: keys.length, focus: document.activeElement.getAttribute("data-q"),
            worst: Math.max(...keys.map((el, k) =>
                Math.abs(alpha(el) - data.w[l][h][q][k] / data.scale)))};
}"""


@pytest.fixture(scope="module", params=VIEW_PAGES or ["(none built)"])
def loaded(
    request, browser, site_url: str
) -> Iterator[tuple[object, list[str], list[str]]]:
    """A page with views at 390 px with touch, recording requests off 127.0.0.1 and errors."""
    stem = request.param
    if not VIEW_PAGES or stem not in VIEW_PAGES:
        pytest.fail(f"no page of {SITE.relative_to(ROOT)} holds a view: run make book")
    context = browser.new_context(viewport=PHONE, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    external: list[str] = []
    errors: list[str] = []

    def route(route) -> None:
        url = urlsplit(route.request.url)
        if (
            url.hostname == "127.0.0.1"
            and stem != NOTATION_PAGE
            and "/mathjax/" in url.path
        ):
            # the views need no typeset math: skip MathJax's work on all but one page
            route.fulfill(status=200, content_type="text/javascript", body="")
        elif url.hostname == "127.0.0.1":
            route.continue_()
        else:
            external.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{site_url}/{stem}.html", wait_until="load")
    yield page, external, errors
    context.close()


def reveal(view) -> None:
    """Open the folded cell output a view sits in (a `hide-output` cell), as a reader taps
    "Show code cell output": a <summary> opens its <details> with or without scripts."""
    closed = view.locator("xpath=ancestor::details[not(@open)]")
    while closed.count():
        closed.first.locator("xpath=./summary").click()


def check(page, i: int, state: tuple[int, int, int] | None = None) -> dict:
    seen = page.evaluate(SHADING, [i])
    if state is not None:
        assert (seen["l"], seen["h"], seen["q"]) == state, seen
    assert seen["worst"] <= ALPHA, (
        f"shading differs from the weights by {seen['worst']}"
    )
    return seen


def test_views_follow_hover_tap_controls_and_keys(loaded) -> None:
    page, external, errors = loaded
    views = page.locator(".attnx")
    assert views.count() >= 1
    for i in range(views.count()):
        view = views.nth(i)
        reveal(view)
        view.scroll_into_view_if_needed()
        data = page.evaluate(
            "i => JSON.parse(document.querySelectorAll('.attnx')[i]"
            ".querySelector('.attnx-data').textContent)",
            i,
        )
        size = page.evaluate(
            "i => document.querySelectorAll('.attnx')[i].outerHTML.length", i
        )
        assert size < 200_000, f"view {i} takes {size} characters of the page"
        # scripts run: the live view shows, and its picture (for where they don't) is gone
        assert view.locator(".attnx-picture").count() == 0
        assert view.locator(".attnx-live").is_visible()
        n_layer, n_head = len(data["w"]), len(data["w"][0])
        n_q = len(data["w"][0][0])
        layer, head, _ = data["start"]
        check(page, i, tuple(data["start"]))  # the opening state
        tokens = view.locator("[data-q]")
        tokens.nth(1).hover()
        check(page, i, (layer, head, 1))
        tokens.nth(n_q // 2).tap()
        check(page, i, (layer, head, n_q // 2))
        if n_head > 1:
            view.locator(".attnx-head").select_option(str(n_head - 1))
            check(page, i, (layer, n_head - 1, n_q // 2))
        if n_layer > 1:
            other = (layer + 1) % n_layer
            view.locator(".attnx-layer").select_option(str(other))
            check(page, i, (other, n_head - 1, n_q // 2))
            if "shown" in data:  # a sequence per layer: the letters follow the choice
                letters = view.locator("[data-q]").all_text_contents()
                assert letters == data["shown"][other], (letters, data["shown"])
                status = view.locator(".attnx-status").text_content() or ""
                assert data["texts"][other][n_q // 2] in status, status
        cells = view.locator(".attnx-cell")
        if cells.count():
            assert cells.count() == n_layer * n_head
            cells.nth(0).click()
            check(page, i, (0, 0, n_q // 2))
            assert cells.nth(0).get_attribute("aria-pressed") == "true"
        # keyboard: tab from the last control to the chosen token, then move with the arrows
        # (the pointer parked off the view first: a key that scrolls the page could slide a
        # token under a resting pointer, and hovering it would choose that token)
        page.mouse.move(0, 0)
        controls = view.locator("select")
        if controls.count():
            controls.last.focus()
            page.keyboard.press("Tab")
        else:
            tokens.nth(n_q // 2).focus()
        assert check(page, i)["focus"] == str(n_q // 2)
        page.keyboard.press("ArrowRight")
        assert check(page, i, (0, 0, n_q // 2 + 1))["focus"] == str(n_q // 2 + 1)
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        assert check(page, i, (0, 0, n_q // 2 - 1))["focus"] == str(n_q // 2 - 1)
        page.keyboard.press("End")
        check(page, i, (0, 0, n_q - 1))
        # the numbers on demand: one row per key, the weights of the inline JSON
        view.locator("details summary").last.click()
        rows = view.locator(".attnx-numbers tbody tr td.attnx-num").all_text_contents()
        expected = [f"{w / data['scale']:.3f}" for w in data["w"][0][0][n_q - 1]]
        assert rows == expected
        # at 390 px nothing in the view reaches past the screen
        wide = page.evaluate(
            """i => [...document.querySelectorAll('.attnx')[i].querySelectorAll('*')]
               .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
               .map(el => el.tagName + '.' + el.className).slice(0, 5)""",
            i,
        )
        assert not wide, f"wider than 390 px: {wide}"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert not external, f"requests that left the site (blocked): {external}"
    assert not errors, f"console errors: {errors}"


def test_views_follow_dark_mode(loaded) -> None:
    page, _, _ = loaded
    colour = "() => getComputedStyle(document.querySelector('.attnx')).color"
    page.evaluate("() => document.documentElement.setAttribute('data-theme', 'light')")
    light = page.evaluate(colour)
    page.evaluate("() => document.documentElement.setAttribute('data-theme', 'dark')")
    dark = page.evaluate(colour)
    levels = [int(x) for x in re.findall(r"\d+", dark)[:3]]
    assert light != dark and min(levels) > 180, (light, dark)  # light text on dark
    check(page, 0)  # the shading still equals the weights


# The big map of view `i`: its labels per axis (index, text, box, on?) and the canvas's box.
MAP_LABELS = """([i]) => {
    const root = document.querySelectorAll(".attnx")[i];
    const box = (el) => { const r = el.getBoundingClientRect();
                          return [r.left, r.top, r.right, r.bottom]; };
    const axis = (name) => [...root.querySelectorAll(`[data-l${name}]`)].map(el =>
        [Number(el.getAttribute(`data-l${name}`)), el.textContent, box(el),
         el.classList.contains("attnx-on")]);
    return {q: axis("q"), k: axis("k"), canvas: box(root.querySelector(".attnx-big canvas")),
            tokens: !!root.querySelector(".attnx-tokens"),
            axes: root.querySelector(".attnx-axes").textContent};
}"""


def map_labels(page, i: int, data: dict, layer: int) -> dict:
    """The big map's labels of view `i`, checked: each centred on its row or column, apart
    from its neighbours (legible at this width), tokens of `layer` or every k-th index."""
    seen = page.evaluate(MAP_LABELS, [i])
    n_q, n_k = len(data["w"][0][0]), len(data["w"][0][0][0])
    left, top, right, bottom = seen["canvas"]
    if "shown" in data:
        names = {"q": data["shown"][layer], "k": data["shown"][layer]}
    else:
        names = {"q": data["tokens"], "k": data["keys"] or data["tokens"]}
    for axis, n in (("q", n_q), ("k", n_k)):
        labels = seen[axis]
        index = [j for j, *_ in labels]
        step = index[1] - index[0] if len(index) > 1 else 1
        assert index == list(range(0, n, step)), (axis, index)
        assert seen["tokens"] == (step == 1), seen["axes"]
        for j, text, (x0, y0, x1, y1), _ in labels:
            if step == 1:
                token = names[axis][j]
                want = {" ": "\u2423", "\n": "\u21b5", "\t": "\u21e5", "": "\u2205"}
                assert text == want.get(token, token), (axis, j, text, token)
            else:
                assert text == str(j), (axis, j, text)
            if axis == "q":  # beside its row, centred on it
                centre = top + (j + 0.5) * (bottom - top) / n
                assert x1 <= left + 0.5 and abs((y0 + y1) / 2 - centre) < 1.5, (j, text)
            else:  # above its column, centred on it
                centre = left + (j + 0.5) * (right - left) / n
                assert y1 <= top + 0.5 and abs((x0 + x1) / 2 - centre) < 1.5, (j, text)
        for (_, a, box, _), (_, b, nxt, _) in zip(labels, labels[1:]):
            gap = nxt[1] - box[3] if axis == "q" else nxt[0] - box[2]
            assert gap >= -0.5, f"labels {a!r} and {b!r} overlap by {-gap:.1f} px"
    return seen


def test_big_map_labels_its_rows_and_columns(loaded) -> None:
    """The chosen head's big map labels its rows (queries) and columns (keys), legibly at
    390 px; the chosen query's label is marked, and the labels follow a layer switch
    where each layer is its own sequence (chapter 3)."""
    page, _, errors = loaded
    views = page.locator(".attnx")
    for i in range(views.count()):
        view = views.nth(i)
        reveal(view)
        view.scroll_into_view_if_needed()
        data = page.evaluate(
            "i => JSON.parse(document.querySelectorAll('.attnx')[i]"
            ".querySelector('.attnx-data').textContent)",
            i,
        )
        n_layer, n_q = len(data["w"]), len(data["w"][0][0])
        layer = int(view.get_attribute("data-state").split(",")[0])
        map_labels(page, i, data, layer)
        view.locator("[data-q]").nth(n_q - 1).tap()
        chosen = map_labels(page, i, data, layer)["q"]
        if chosen[-1][0] == n_q - 1:
            assert [on for *_, on in chosen] == [False] * (len(chosen) - 1) + [True]
        view.locator("[data-q]").nth(0).tap()
        assert [on for *_, on in map_labels(page, i, data, layer)["q"]][0]
        if n_layer > 1:
            other = (layer + 1) % n_layer
            view.locator(".attnx-layer").select_option(str(other))
            seen = map_labels(page, i, data, other)  # the other layer's tokens
            if "shown" in data:  # chapter 3: the sequences differ, so the labels moved
                assert seen["tokens"] and data["shown"][other] != data["shown"][layer]
    assert not errors, f"console errors: {errors}"


@pytest.mark.parametrize("stem", VIEW_PAGES or ["(none built)"])
def test_views_show_their_picture_without_javascript(browser, site_url, stem) -> None:
    """With JavaScript off every view shows its picture (decoded, at its own size or the
    column's) and none of the live view: no dead controls, no empty grid."""
    if stem not in VIEW_PAGES:
        pytest.fail(f"no page of {SITE.relative_to(ROOT)} holds a view: run make book")
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{site_url}/{stem}.html", wait_until="load")
        views = page.locator(".attnx")
        assert views.count() >= 1
        for i in range(views.count()):
            view = views.nth(i)
            reveal(view)
            picture = view.locator("img.attnx-picture")
            assert picture.count() == 1 and picture.is_visible(), f"view {i}"
            box = picture.bounding_box()
            assert box and 100 < box["width"] <= PHONE["width"], (i, box)
            assert picture.get_attribute("alt", timeout=TIMEOUT_MS), f"view {i}: no alt"
            assert not view.locator(".attnx-live").is_visible(), f"view {i}"
        # the browser decoded every picture (a broken image would lay out 0 x 0 or an icon)
        shot = page.locator("img.attnx-picture").first.screenshot()
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 2000
    finally:
        context.close()


NOTATION_PAGE = (
    "book/03_multihead"  # formulas full of d_k, W_Q, W_O, and code that names them
)


@pytest.mark.parametrize("loaded", [NOTATION_PAGE], indirect=True)
def test_clicking_a_symbol_highlights_it_in_the_code(loaded) -> None:
    """Clicking each subscripted symbol of chapter 3's formulas lights up exactly the code's
    names that spell it (W_Q: W_q, W_Q), and says so; the page names d_k in its code."""
    page, _, _ = loaded
    assert wait_for_math(page) is None
    clicks = page.evaluate("""() => {
        const names = (name) => [...document.querySelectorAll(".cell_input pre span")]
            .filter(s => ["n", "nn", "nv", "nf", "nc", "nb", "bp", "vm"]
                                .some(c => s.classList.contains(c))
                         && s.textContent.toLowerCase() === name.toLowerCase()).length;
        const seen = {};
        for (const sub of document.querySelectorAll("article mjx-container mjx-msub")) {
            sub.dispatchEvent(new MouseEvent("click", {bubbles: true}));
            const name = document.documentElement.getAttribute("data-notation");
            if (!name || name in seen) continue;
            const hits = [...document.querySelectorAll(".notation-hit")];
            seen[name] = {hits: hits.length, names: names(name),
                          texts: [...new Set(hits.map(s => s.textContent.toLowerCase()))],
                          status: document.querySelector(".notation-status").textContent,
                          lit: hits.length ? getComputedStyle(hits[0]).backgroundColor : null};
        }
        return seen;
    }""")
    assert clicks, "clicking a formula's subscripted symbols named none of them"
    for name, seen in clicks.items():
        assert re.fullmatch(r"\w+_\w+", name), name
        assert seen["hits"] == seen["names"], (name, seen)
        if seen["hits"]:
            assert seen["texts"] == [name.lower()], (name, seen)
            assert seen["lit"] not in ("rgba(0, 0, 0, 0)", "transparent"), (name, seen)
            assert seen["status"].startswith(f"{name}: {seen['hits']} place"), seen
        else:
            assert seen["status"] == f"{name}: not named in this page's code", seen
    assert clicks.get("d_k", {}).get("hits", 0) >= 5, clicks.get("d_k")
