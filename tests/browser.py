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


def files_only(page) -> list[str]:
    """Abort every request of `page` that is not for a local file; return the (growing) list of those aborted."""
    aborted: list[str] = []

    def route(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            aborted.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    return aborted
