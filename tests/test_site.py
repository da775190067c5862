"""Browser test of the built book (`_build/html`, made by `make book`; this test never builds).

A headless Chromium (Playwright driving the system's `chromium`) loads the pages from a local
HTTP server and checks what a reader sees: the math is typeset by the book's own MathJax, every
image has loaded, the launch buttons open this repository's notebook on Colab and Binder, and
nothing is fetched from any host but 127.0.0.1. A full-page screenshot of chapter 1 is saved to
`_build/screenshots/01_attention.png`.

Without a Chromium the tests are skipped, unless the environment variable CI is set (then they fail).
The browser and the local server (fixtures `browser`, `site_url`) are started once per pytest
run, in tests/conftest.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
CHAPTER = "book/01_attention"
SCREENSHOT = ROOT / "_build" / "screenshots" / "01_attention.png"
MIN_MATH = 20  # chapter 1 derives attention in formulas: it has over a hundred
RAW_TEX = ("$$", "\\[", "\\(", "\\begin{")
# Deadlines, not expectations: every wait is for the state a test asserts, and a deadline only
# turns a state never reached into a failure. They are generous because a loaded 2-core machine
# (nbval and the proofs beside the browser) can take tens of seconds for one page.
TIMEOUT_MS = 120_000  # each Playwright action and navigation
WAIT_MS = 120_000  # a page's own work: search results, snippets, a menu opening


def wait_for_state(page, predicate: str, arg: object = None) -> bool:
    """Wait until the page's JavaScript `predicate` is true; False if WAIT_MS passed first
    (the caller's assertions then say which part of the state is missing)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(predicate, arg=arg, timeout=WAIT_MS)
    except PlaywrightTimeout:
        return False
    return True


def repository_slug() -> str:
    """'ORG/REPO' from `_config.yml` repository.url, the single source of the URL."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = config["repository"]["url"].removesuffix("/").removesuffix(".git")
    assert url.startswith("https://github.com/"), url
    return url.removeprefix("https://github.com/")


def branch() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"].get(
        "branch", "main"
    )


def toc_pages() -> list[str]:
    """Every page of the book: the root, then `_toc.yml`'s files, as stems."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            files.extend([str(node["file"])] if "file" in node else [])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc.get("parts", []))
    return [
        str(Path(f).with_suffix("")) if f.endswith((".md", ".ipynb")) else f
        for f in files
    ]


def toc_notebooks() -> list[str]:
    """Every page of `_toc.yml` that is not a Markdown file (so: a notebook, or missing)."""
    return [stem for stem in toc_pages() if not (ROOT / f"{stem}.md").is_file()]


@dataclass
class Visit:
    """A loaded page and what happened on the network while loading it."""

    page: object
    url: str
    external: list[str] = field(default_factory=list)  # blocked: not 127.0.0.1
    # local responses >= 400, failed requests
    broken: list[str] = field(default_factory=list)
    local: dict[str, int] = field(default_factory=dict)  # local URL -> status
    math_error: str | None = None  # why MathJax did not typeset the page, if it did not


def page_file(stem: str) -> Path:
    path = SITE / f"{stem}.html"
    if not path.is_file():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run make book first")
    return path


def visit(
    browser, site_url: str, stem: str, wait_until: str = "load", skip: tuple = ()
) -> Visit:
    """Open a page in a fresh context that aborts and records every request off 127.0.0.1;
    `skip`: kinds of local requests (Playwright's resource types) aborted too, unrecorded."""
    page_file(stem)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    seen = Visit(page=page, url=f"{site_url}/{stem}.html")

    def route(route) -> None:
        if route.request.resource_type in skip:
            route.abort()
        elif urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            seen.external.append(route.request.url)
            route.abort()

    def on_response(response) -> None:
        if urlsplit(response.url).hostname == "127.0.0.1":
            seen.local[response.url] = response.status
            if response.status >= 400:
                seen.broken.append(f"{response.status} {response.url}")

    def on_failed(request) -> None:
        if (
            urlsplit(request.url).hostname == "127.0.0.1"
            and request.resource_type not in skip
        ):
            seen.broken.append(f"failed {request.url}: {request.failure}")

    context.route("**/*", route)
    page.on("response", on_response)
    page.on("requestfailed", on_failed)
    page.goto(seen.url, wait_until=wait_until)
    return seen


def wait_for_math(page) -> str | None:
    """Wait until MathJax has typeset the page and its fonts have loaded; else say why not."""
    # The page's scripts are deferred, so by the load event MathJax has started if it loaded.
    if not page.evaluate(
        "() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"
    ):
        return "MathJax was not loaded (see the requests blocked or broken)"
    return page.evaluate(
        """(ms) => Promise.race([
            MathJax.startup.promise.then(() => document.fonts.ready)
                .then(() => null, error => String(error)),
            new Promise(done => setTimeout(
                () => done(`MathJax had not typeset the page after ${ms / 1000} s`), ms))])""",
        WAIT_MS,
    )


@pytest.fixture(scope="module")
def chapter(browser, site_url: str) -> Iterator[Visit]:
    seen = visit(browser, site_url, CHAPTER)
    seen.math_error = wait_for_math(seen.page)
    # Images below the fold may be lazy: make them load, then wait for all of them.
    seen.page.evaluate("""() => Promise.all([...document.images].map(img => {
        img.loading = "eager";
        return img.complete ? null : new Promise(done => { img.onload = img.onerror = done; });
    }))""")
    yield seen
    seen.page.context.close()


def test_math_is_typeset(chapter: Visit) -> None:
    assert chapter.math_error is None, chapter.math_error
    page = chapter.page
    count = page.locator("article mjx-container").count()
    assert count >= MIN_MATH, (
        f"only {count} typeset formulas (mjx-container) in the article"
    )
    errors = page.locator("article mjx-merror").all_text_contents()
    assert not errors, f"MathJax reported TeX errors: {errors}"
    # The article's prose, without code cells and typeset math: no TeX may be left over.
    prose = page.evaluate("""() => {
        const article = document.querySelector("article").cloneNode(true);
        article.querySelectorAll("pre, code, script, style, mjx-container, .cell_input")
               .forEach(node => node.remove());
        return article.textContent;
    }""")
    leftovers = [tex for tex in RAW_TEX if tex in prose]
    assert not leftovers, f"raw TeX left in the page: {leftovers}"


def test_math_comes_from_the_book(chapter: Visit) -> None:
    mathjax = [u for u in chapter.local if "/_static/mathjax/" in u]
    assert any(u.split("?")[0].endswith("/tex-mml-chtml.js") for u in mathjax), (
        chapter.local
    )
    fonts = [u for u in mathjax if "/output/chtml/fonts/woff-v2/" in u]
    assert fonts, (
        f"no MathJax font was loaded from the book; local requests: {list(chapter.local)}"
    )
    assert all(chapter.local[u] == 200 for u in mathjax), {
        u: chapter.local[u] for u in mathjax
    }


def test_no_request_leaves_localhost(chapter: Visit) -> None:
    assert not chapter.external, (
        f"requests to other hosts (blocked): {chapter.external}"
    )
    assert not chapter.broken, f"broken local requests: {chapter.broken}"


def test_images_loaded(chapter: Visit) -> None:
    images = chapter.page.evaluate("""() => [...document.images].map(img => ({
        src: img.currentSrc || img.src, ok: img.complete && img.naturalWidth > 0,
        inArticle: !!img.closest("article")}))""")
    assert any(img["inArticle"] for img in images), (
        "no image in the article (expected heatmaps)"
    )
    broken = [img["src"] for img in images if not img["ok"]]
    assert not broken, f"images that did not load: {broken}"


def test_screenshot(chapter: Visit) -> None:
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    chapter.page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 50_000, "the screenshot is suspiciously small"


def check_launch_links(stem: str, links: list[str]) -> None:
    """A notebook's page offers exactly two launch links: Colab and Binder, on this
    repository's branch (read from the phone-width visit of `test_page_at_phone_width`,
    which loads every page once)."""
    slug, ref = repository_slug(), branch()
    assert (
        f"https://colab.research.google.com/github/{slug}/blob/{ref}/{stem}.ipynb"
        in links
    ), links
    assert (
        f"https://mybinder.org/v2/gh/{slug}/{ref}?urlpath=lab/tree/{stem}.ipynb"
        in links
    ), links
    assert len(links) == 2, f"unexpected launch links: {links}"


# --- what readers hit on every page, at phone width ----------------------------------------

PHONE = {"width": 390, "height": 844}
HASH_LIKE = re.compile(r"^[0-9a-f]{16,}(\.\w+)?$")


def phone_visit(
    browser, site_url: str, stem: str, math: bool = True
) -> tuple[Visit, list[str]]:
    """`visit` at phone width, collecting console errors and uncaught page errors; `math`
    False serves an empty script for MathJax (a test of the page's controls need not wait
    for, or share the cores with, the typesetting of every formula)."""
    page_file(stem)
    context = browser.new_context(
        viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True
    )
    context.set_default_timeout(TIMEOUT_MS)

    def route(route) -> None:
        url = urlsplit(route.request.url)
        if url.hostname != "127.0.0.1":
            route.abort()
        elif not math and "/_static/mathjax/" in url.path:
            route.fulfill(status=200, content_type="text/javascript", body="")
        else:
            route.continue_()

    context.route("**/*", route)
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda msg: errors.append(msg.text) if msg.type == "error" else None
    )
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(f"{site_url}/{stem}.html", wait_until="load")
    return Visit(page=page, url=f"{site_url}/{stem}.html"), errors


def test_phone_menu_opens_the_chapter_list(browser, site_url: str) -> None:
    """Tapping the menu button at 390 px shows the chapter list (sphinx-book-theme 1.3.0 with
    pydata-sphinx-theme 0.17.1 did nothing here)."""
    seen, _ = phone_visit(browser, site_url, CHAPTER, math=False)
    page = seen.page
    try:
        toggle = page.locator("button.primary-toggle:visible").first
        toggle.tap()
        chapter_two = page.locator(
            "a.reference.internal[href$='02_scaling.html']:visible"
        )
        chapter_two.first.wait_for(state="visible")  # the deadline: TIMEOUT_MS
        assert chapter_two.count() >= 1
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT.with_name("menu_390px.png")))
    finally:
        page.context.close()


@pytest.mark.parametrize("stem", toc_pages())
def test_page_at_phone_width(browser, site_url: str, stem: str) -> None:
    """No sideways scrolling at 390 px, every image loaded with descriptive alt text, no raw
    TeX in the prose, no console errors; a notebook's page has its two launch links."""
    seen, errors = phone_visit(browser, site_url, stem)
    page = seen.page
    try:
        has_math = page.evaluate("() => !!document.querySelector('article .math')")
        math_error = wait_for_math(page) if has_math else None
        page.evaluate("""() => Promise.all([...document.images].map(img => {
            img.loading = "eager";
            return img.complete ? null : new Promise(done => { img.onload = img.onerror = done; });
        }))""")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        wide = page.evaluate("""() => [...document.querySelectorAll("article *")]
            .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
            .filter(el => !el.closest("pre, .highlight, .cell_output, mjx-container, .math, table, .table-wrapper, .output"))
            .slice(0, 5).map(el => el.tagName + "." + el.className + ": " + (el.textContent || "").slice(0, 60))""")
        images = page.evaluate("""() => [...document.querySelectorAll("article img")].map(img => ({
            src: (img.currentSrc || img.src).split("/").pop(), alt: img.alt || "",
            ok: img.complete && img.naturalWidth > 0}))""")
        launch_links = page.eval_on_selector_all(
            ".dropdown-launch-buttons a", "links => links.map(a => a.href)"
        )
        prose = page.evaluate("""() => {
            const article = document.querySelector("article").cloneNode(true);
            article.querySelectorAll("pre, code, script, style, mjx-container, .cell_input, .cell_output")
                   .forEach(node => node.remove());
            return article.textContent;
        }""")
    finally:
        page.context.close()
    assert math_error is None, math_error
    assert width <= PHONE["width"] + 1, (
        f"{stem} is {width} px wide at 390 px; too wide: {wide}"
    )
    broken = [img["src"] for img in images if not img["ok"]]
    assert not broken, f"images that did not load: {broken}"
    bad_alt = [
        img
        for img in images
        if len(img["alt"].split()) < 3
        or HASH_LIKE.match(img["alt"])
        or img["alt"] == img["src"]
    ]
    assert not bad_alt, f"images without a descriptive alt text: {bad_alt[:5]}"
    leftovers = [tex for tex in RAW_TEX if tex in prose]
    assert not leftovers, f"raw TeX left in the prose: {leftovers}"
    assert not errors, f"console errors: {errors}"
    if stem in toc_notebooks():
        check_launch_links(stem, launch_links)


# The search page's state once every hit is shown with its snippet: Sphinx 7.4 writes
# "Search finished, found N page(s)" when it has appended the last hit, but each hit's
# snippet comes from a fetch of that page still under way then (on a busy machine, seconds
# later). A hit with a description (an object of a domain) never gets a snippet.
SEARCH_STATE = """() => {
    const status = document.querySelector("#search-results .search-summary")?.textContent || "";
    const found = status.match(/found (\\d+) page/);
    const hits = [...document.querySelectorAll("ul.search > li")];
    const want = hits.filter(li => !li.querySelector(":scope > span"));
    const shown = want.filter(li => li.querySelector(":scope > p.context"));
    return {found: found ? Number(found[1]) : null, hits: hits.length,
            want: want.length, shown: shown.length,
            missing: want.filter(li => !li.querySelector(":scope > p.context"))
                         .map(li => li.querySelector("a")?.getAttribute("href")).slice(0, 5)};
}"""


def test_search_snippets_show_no_raw_tex(browser, site_url: str) -> None:
    """The search page quotes each hit's text; formulas there are plain text (theme/
    search_snippets.js), not TeX source such as "\\(\\sqrt{d_k}\\)"."""
    seen, errors = phone_visit(browser, site_url, "search")
    page = seen.page
    try:
        page.goto(f"{site_url}/search.html?q=scaled+dot+product", wait_until="load")
        # every hit the status counts is listed, and each has its snippet
        wait_for_state(
            page,
            f"() => {{ const s = ({SEARCH_STATE})();"
            " return s.found !== null && s.hits === s.found && s.shown === s.want; }",
        )
        state = page.evaluate(SEARCH_STATE)
        snippets = page.eval_on_selector_all(
            "ul.search > li > p.context", "ps => ps.map(p => p.textContent)"
        )
    finally:
        page.context.close()
    assert state["found"] is not None, f"the search never finished: {state}"
    assert state["hits"] == state["found"], f"hits listed vs found: {state}"
    assert state["shown"] == state["want"], f"hits without their snippet: {state}"
    assert len(snippets) >= 3, snippets
    raw = [
        s
        for s in snippets
        if any(tex in s for tex in ("\\(", "\\[", "\\frac", "\\sqrt", "$$"))
    ]
    assert not raw, f"raw TeX in search snippets: {raw[:2]}"
    assert not errors, f"console errors: {errors}"
