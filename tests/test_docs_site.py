"""The documentation site (``make docs``), read as a person would: offline, in Debian's Chromium.

The site is built once for the session into ``build/`` as ``make docs`` builds it, by a job started when the
session begins (tests/head_start.py) (``docs/_ext/build_site.py``:
the notebooks executed with static panels, only those changed since the last build; Sphinx incremental), then
every page is opened from ``file://`` (four tabs at a time) in an offline context, every other request
recorded.  The test fails on a console error or an uncaught script error on any page, on a notebook without
its tutorial page, on a tutorial image that did not load, on a panel snapshot that shows nothing or fails the live panels' checks
(tests/browser_checks.py), on a search for "timestamp" that finds nothing, and on any request off the machine.
Screenshots go to ``build/screenshots/docs-*.png``.  Skipped locally (failing under ``CI=true``) without the
``docs`` extra, Chromium or Playwright.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import head_start
from browser_checks import check
from browser_session import OFFLINE, record_errors, record_others
from ci_mode import skip_or_fail

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
SITE = BUILD / "docs"
SHOTS = BUILD / "screenshots"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
VIEWPORT = {"width": 1280, "height": 900}
#: a fresh clone executes the ten notebooks and builds every page first (minutes on two loaded cores)
pytestmark = pytest.mark.timeout(1800)


#: ``make docs``'s build (minutes: the notebooks executed, every page written), started when the session begins
head_start.job("docs-site", module=__name__, fixture="site", lane="cpu", cwd=ROOT, timeout=1500,
               commands=lambda tmp: [[sys.executable, str(ROOT / "docs" / "_ext" / "build_site.py"), str(BUILD)]])


@pytest.fixture(scope="session")
def site() -> Path:
    for module in ("sphinx", "myst_nb", "pydata_sphinx_theme", "sphinx_design", "sphinxarg"):
        if importlib.util.find_spec(module) is None:
            skip_or_fail(f"{module} is missing: `make docs` (or `make test`) installs the docs extra")
    p = head_start.result("docs-site").last
    assert p.returncode == 0, f"the site's build failed:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    assert p.stdout.strip().splitlines()[-1] == f"docs: {SITE / 'index.html'}", p.stdout[-2000:]
    assert (SITE / "index.html").is_file()
    return SITE


@pytest.fixture()
def offline(chromium):
    """An offline browser context (Chromium refuses every request off the machine) whose every request that is not
    ``file://`` or ``data:`` is recorded; yields ``(context, refused, errors)``: those URLs, and the console errors
    and uncaught script errors of its pages."""
    context = chromium.new_context(viewport=VIEWPORT, offline=True)
    refused = record_others(context, OFFLINE)
    errors: list[str] = []
    context.on("page", lambda page: record_errors(page, errors))
    try:
        yield context, refused, errors
    finally:
        context.close()


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


#: pages loading at once, each in a tab of the same context: Chromium renders them side by side
TABS = 4


def test_every_page_renders_offline_without_errors(site, offline):
    context, refused, errors = offline
    pages = _pages(site)
    assert len(pages) > 30, f"only {len(pages)} pages"

    def rendered(tab, html: Path) -> None:
        tab.wait_for_load_state("load")
        title = tab.title()
        assert title and "404" not in title, f"{html}: no title"
        assert tab.locator("main, article, div.bd-content").count(), f"{html}: no content"

    todo, loading = iter(pages), []

    def load_next(tab) -> None:  # each tab takes the next page as soon as its page has loaded and passed
        html = next(todo, None)
        if html is not None:
            tab.goto(html.as_uri(), wait_until="commit")
            loading.append((tab, html))

    for _ in range(TABS):
        load_next(context.new_page())
    while loading:
        tab, html = loading.pop(0)
        rendered(tab, html)
        load_next(tab)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = context.pages[0]
    for name, rel in (("index", "index.html"), ("how-to-dump", "how-to/dump.html"),
                      ("reference-kafka-lines", "reference/kafka-lines.html"), ("benchmarks", "benchmarks/index.html")):
        page.goto((site / rel).as_uri(), wait_until="load")
        page.screenshot(path=str(SHOTS / f"docs-{name}.png"))
    assert errors == [], f"console errors: {errors[:5]}"
    assert refused == [], f"the site asked the network for {refused[:5]}"


#: per panel snapshot on a tutorial page: visible, its images loaded and never drawn larger than they are, or a
#: table, or an inline SVG figure, or the byte view
_SNAPSHOTS = """() => Array.from(document.querySelectorAll('.kf-panel-snapshot')).map((el) => {
    const r = el.getBoundingClientRect();
    const imgs = Array.from(el.querySelectorAll('img')).map((i) => ({
        ok: i.complete && i.naturalWidth > 0, up: i.clientWidth > i.naturalWidth + 1}));
    const tables = Array.from(el.querySelectorAll('table')).filter((t) => t.querySelectorAll('td').length > 0).length;
    const svgs = el.querySelectorAll('svg').length, bytes = el.querySelectorAll('.kf-bytes').length;
    return {visible: r.width > 0 && r.height > 0, imgs, tables, svgs, bytes,
            title: (el.querySelector('b') || {}).textContent || ''};
})"""


def test_every_notebook_is_a_tutorial_with_its_figures(site, offline):
    context, refused, errors = offline
    page = context.new_page()
    page.goto((site / "tutorials" / "index.html").as_uri(), wait_until="load")
    listed = page.locator("article a.reference.internal").evaluate_all("(as) => as.map((a) => a.href)")
    for nb in NOTEBOOKS:
        html = site / "tutorials" / f"{nb.stem}.html"
        assert html.is_file(), f"{nb.name}: no tutorial page"
        assert any(href.split("#")[0].endswith(f"tutorials/{nb.stem}.html") for href in listed), \
            f"{nb.stem}: not listed on the tutorials' index"
        page.goto(html.as_uri(), wait_until="load")
        images = page.evaluate("() => Array.from(document.querySelectorAll('article img')).map((i) => "
                               "({src: i.src.slice(0, 60), ok: i.complete && i.naturalWidth > 0}))")
        assert all(i["ok"] for i in images), f"{nb.stem}: images not loaded: {[i for i in images if not i['ok']]}"
        shown = page.evaluate(_SNAPSHOTS)
        assert shown, f"{nb.stem}: no panel drawn on its tutorial page"
        for s in shown:
            assert s["visible"], f"{nb.stem}: panel {s['title']!r} is not visible"
            assert s["imgs"] or s["tables"] or s["svgs"] or s["bytes"], f"{nb.stem}: panel {s['title']!r} shows nothing"
            assert not any(i["up"] for i in s["imgs"]), f"{nb.stem}: an image of {s['title']!r} is upscaled"
        for snap in page.locator(".kf-panel-snapshot").all():  # the checks the live panels pass
            check(snap, f"tutorial {nb.stem}")
        assert "application/vnd.jupyter.widget-view+json" not in page.content(), f"{nb.stem}: a blank widget view"
        page.locator(".kf-panel-snapshot").first.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(SHOTS / f"docs-tutorial-{nb.stem}.png"))
    assert errors == [], f"console errors: {errors[:5]}"
    assert refused == [], f"the tutorials asked the network for {refused[:5]}"


def test_search_finds_timestamp_offline(site, offline):
    context, refused, errors = offline
    page = context.new_page()
    page.goto((site / "search.html").as_uri() + "?q=timestamp", wait_until="load")
    # Sphinx's search adds results as it finds them, then writes its summary ("Search finished, found N pages")
    page.wait_for_function("() => /finished/i.test((document.querySelector('#search-results .search-summary')"
                           " || {}).textContent || '')", timeout=60_000)
    results = page.locator("#search-results ul.search li")
    assert results.count() >= 5
    hrefs = results.locator("a").evaluate_all("(as) => as.map((a) => a.href)")
    assert any("tutorials/02-timestamps.html" in h for h in hrefs), hrefs[:10]
    page.screenshot(path=str(SHOTS / "docs-search.png"))
    assert errors == [], f"console errors: {errors[:5]}"
    assert refused == [], f"the search asked the network for {refused[:5]}"
