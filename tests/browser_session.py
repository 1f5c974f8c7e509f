"""Debian's Chromium driven by Playwright, as every browser test launches it, and pages that refuse the network.

- :func:`chromium_or_skip`: the Chromium binary, or a skip (a failure under ``CI=true``, tests/ci_mode.py) saying
  how to get it, and the same for the ``playwright`` package;
- :func:`launched_chromium`: one headless Chromium (stopped when the block ends), for a module's fixture;
- :func:`refuse_others`: every request of a page or context whose URL does not start with one of the allowed
  prefixes is aborted and recorded (the browser tests assert the record is empty: nothing asked the network);
- :func:`record_others`: the same record for an offline context, where Chromium refuses the network itself;
- :func:`record_errors`: the console errors and uncaught script errors of a page, recorded.

The browser tests (tests/test_browser.py, tests/test_browser_checks.py, tests/test_docs_site.py) share these,
so each says only what it checks.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

from ci_mode import skip_or_fail

CHROMIUM = os.environ.get("KAFKAFMT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: what a page of the documentation site may load: itself and its inline data
OFFLINE = ("file://", "data:")


def chromium_or_skip() -> str:
    """The Chromium binary and the playwright package, or a skip (a failure in CI) saying how to get them."""
    if not os.access(CHROMIUM, os.X_OK):
        skip_or_fail(f"{CHROMIUM} not found: `make setup` installs Debian's chromium (apt-get) when it can")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        skip_or_fail("the playwright Python package is missing: `make test` installs the tests extra")
    return CHROMIUM


@contextmanager
def launched_chromium():
    """One headless Chromium (Playwright's sync API) for the block; closed, with its driver, when it ends."""
    path = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def refuse_others(target, allowed: tuple[str, ...]) -> list[str]:
    """Abort every request of ``target`` (a page or a browser context) whose URL does not start with one of
    ``allowed``; returns the list the aborted URLs are appended to."""
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith(allowed):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    target.route("**/*", route)
    return refused


def record_others(context, allowed: tuple[str, ...]) -> list[str]:
    """Record every request of ``context`` whose URL does not start with one of ``allowed``; returns the list.
    For a context made with ``offline=True``, where Chromium itself refuses anything off the machine: a listener
    holds no request back, where :func:`refuse_others` makes each wait for Python (a fifth of the docs site's
    page pass)."""
    asked: list[str] = []
    context.on("request", lambda r: None if r.url.startswith(allowed) else asked.append(r.url))
    return asked


def record_errors(page, errors: list[str] | None = None) -> list[str]:
    """The list (``errors``, or a new one) ``page``'s console errors and uncaught script errors are appended to,
    each with the page's URL."""
    errors = [] if errors is None else errors
    page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    return errors
