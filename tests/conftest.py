"""Shared pytest configuration: the Hypothesis profiles of the property tests, and the built
site with one headless Chromium for every test that reads it (marker `browser`).

`ci` (the default, used by `make test`): a bounded number of examples, derandomised (the same
examples on every run and machine, so a failure in CI reproduces locally), no per-example
deadline (a loaded 2-core machine is slow, and timing is not what these tests check), and no
example database written into the checkout. `dev`: more examples, random, with the database;
choose it with HYPOTHESIS_PROFILE=dev.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=300, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """torch on one thread for a module of tiny tensors: on a shared 2-core machine the
    synchronisation of a second thread costs ~100x the arithmetic of a (5, 8) attention."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# --- the built book over HTTP and one browser, started once per pytest run ------------------

SITE = Path(__file__).resolve().parents[1] / "_build" / "html"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ci_requires_browser() -> bool:
    """True when CI is set to anything but '', '0' or 'false'."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def find_chromium() -> str | None:
    """The system's Chromium (or Chrome) executable, if any."""
    for name in (
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ):
        if found := shutil.which(name):
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


@pytest.fixture(scope="session")
def site_url() -> Iterator[str]:
    """`_build/html` over HTTP on 127.0.0.1 (pytest-httpserver, a free port, one thread per
    request), shared by every browser test of the run; yields the base URL."""
    from pytest_httpserver import HTTPServer
    from werkzeug import Request, Response
    from werkzeug.utils import send_from_directory

    if not (SITE / "index.html").is_file():
        pytest.fail(f"{SITE} holds no built book: run make book first")

    def static(request: Request) -> Response:
        path = request.path.lstrip("/") or "index.html"
        # 404 outside SITE or missing
        return send_from_directory(SITE, path, request.environ)

    httpd = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    httpd.expect_request(re.compile("/.*")).respond_with_handler(static)
    httpd.start()
    try:
        yield httpd.url_for("").rstrip("/")
    finally:
        httpd.clear()
        httpd.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless Chromium for the run (each test opens contexts of its own); skipped (or,
    under CI, failed) when none is installed."""
    executable = find_chromium()
    if executable is None:
        message = "no Chromium found (install it: apt-get install chromium)"
        if ci_requires_browser():
            pytest.fail(message + "; CI is set, so the browser test is mandatory")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
