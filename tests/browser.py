"""Headless Chromium for the browser tests (tests/test_browser.py), driven by the `playwright` package.

The browser is Debian's `chromium` (`make browser` installs it), never one that playwright downloads. The
flags keep it from going online on its own (updates, safe browsing, field trials): the tests' machines have no
network, and a Chromium that keeps trying is slow. conftest.py's `chromium` fixture launches it once per
pytest worker.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Full-page screenshots of what the tests saw, for a person to look at (git-ignored).
SCREENSHOTS = REPO / "screenshots"

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run"]
MISSING = ("the browser tests need Debian's Chromium, which is not installed: run `make browser` "
           "(as root it installs it) or `sudo apt-get install chromium`")


def chromium_path() -> str | None:
    """The chromium executable on PATH, or Debian's, or None."""
    found = shutil.which("chromium")
    if found:
        return found
    debian = Path("/usr/bin/chromium")
    return str(debian) if debian.is_file() else None


@contextmanager
def launched() -> Iterator:
    """A headless playwright Browser on Debian's Chromium; AssertionError saying how to install it if absent."""
    executable = chromium_path()
    assert executable, MISSING
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page, name: str) -> Path:
    """Save a full-page screenshot as screenshots/<name>.png and return its path."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def only_from(page, origin: str) -> list[str]:
    """Refuse every request of `page` whose URL does not start with `origin` (`file://` for a page read from
    disk); return the (growing) list of refused URLs.

    Playwright runs the handler only while the test waits in one of its calls: wait with page.wait_for_timeout,
    never time.sleep, or the page's requests hang."""
    refused: list[str] = []

    def route(route):
        if route.request.url.startswith(origin):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    return refused
