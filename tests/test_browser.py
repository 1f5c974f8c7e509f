"""A real browser on the workbench: JupyterLab on 127.0.0.1 with a token, Debian's Chromium driven by
Playwright.  Opens three notebooks, runs them, moves a slider (by keyboard, as a user would) and
checks that the rendered view changed; screenshots go to build/screenshots/.  Every process it
starts is stopped by PID.  Skipped locally (failing under CI=true) without chromium or playwright;
``make setup`` installs Debian's chromium when it is missing (scripts/ensure-chromium.sh).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from ci_mode import skip_or_fail

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("KAFKAFMT_CHROMIUM", "/usr/bin/chromium")
SHOTS = ROOT / "build" / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: notebook → (title of the panel to drive, description of its slider, CSS of the view that must change)
DRIVE = {
    "01-format-anatomy": ("Record set bytes", "records", ".kf-bytes"),
    "02-timestamps": ("Which producers get through", "max skew h", "img"),
    "03-time-index": ("offsetsForTimes under skew", "skew s", "img"),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _api(base: str, token: str, path: str, method: str = "GET"):
    req = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=5) as r:
        body = r.read()
    return json.loads(body) if body else None


def _stop_kernels(base: str, token: str) -> None:
    """Shut down every kernel of our server (through its API, so it reaps them)."""
    try:
        for k in _api(base, token, "/api/kernels") or []:
            _api(base, token, f"/api/kernels/{k['id']}", method="DELETE")
    except OSError:
        pass


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not os.access(CHROMIUM, os.X_OK):
        skip_or_fail(f"{CHROMIUM} not found: `make setup` installs Debian's chromium (apt-get) when it can")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        skip_or_fail("the playwright Python package is missing: `make setup` installs the notebooks extra")
    home = tmp_path_factory.mktemp("lab")
    work = home / "notebooks"
    shutil.copytree(ROOT / "notebooks", work)  # the browser may autosave: never let it touch the stored notebooks
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    token, port = secrets.token_hex(16), _free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(home / "settings"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), MPLBACKEND="module://matplotlib_inline.backend_inline")
    log = open(home / "jupyter.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
                             f"--ServerApp.root_dir={work}", "--LabApp.expose_app_in_browser=True",
                             "--LabApp.news_url=None", "--allow-root"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _api(base, token, "/api/status")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(home / 'jupyter.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield base, token
    finally:
        _stop_kernels(base, token)
        proc.send_signal(signal.SIGTERM)  # the server we started, by PID
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


_KERNEL_IDLE = """(path) => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.context && w.context.path === path && w.sessionContext.session
              && w.sessionContext.session.kernel;
    return k && k.status === 'idle';
}"""


def _run_all(page, path: str, title: str) -> None:
    """Run All once the notebook's kernel is idle (right after load the first Run All can be ignored: retry once)."""
    page.wait_for_function(_KERNEL_IDLE, arg=path, timeout=60_000)
    for attempt in range(2):
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        try:
            _panel(page, title).wait_for(timeout=40_000)
            return
        except Exception:
            if attempt:
                raise


def _panel(page, title):
    return page.locator(".widget-vbox", has=page.locator(f".widget-html-content b:text-is('{title}')")).last


def _view_state(panel, css):
    return panel.evaluate(f"""(el) => Array.from(el.querySelectorAll('{css}')).map(
        (n) => n.tagName === 'IMG' ? n.src + ':' + n.naturalWidth : n.innerHTML).join('|')""")


def test_three_notebooks_in_a_real_browser(lab):
    from playwright.sync_api import sync_playwright
    base, token = lab
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for name, (title, slider, css) in DRIVE.items():
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                # a workspace of its own, reset: only this notebook is open
                page.goto(f"{base}/lab/workspaces/{name}/tree/{name}.ipynb?reset&token={token}")
                _run_all(page, f"{name}.ipynb", title)
                panel = _panel(page, title)
                panel.locator(css).first.wait_for(timeout=60_000)
                before = _view_state(panel, css)
                assert before, f"{name}: the panel {title!r} rendered nothing"
                handle = panel.locator(".widget-slider", has=page.locator(f"label:text-is('{slider}')")) \
                    .locator(".noUi-handle").first
                handle.scroll_into_view_if_needed()
                handle.focus()
                handle.press("ArrowRight")
                handle.press("ArrowRight")
                page.wait_for_function(
                    "([el, css, before]) => Array.from(el.querySelectorAll(css)).map((n) => n.tagName === 'IMG' ? "
                    "n.src + ':' + n.naturalWidth : n.innerHTML).join('|') !== before",
                    arg=[panel.element_handle(), css, before], timeout=30_000)
                assert not page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']") \
                    .count(), f"{name}: a traceback or stderr output in the browser"
                panel.scroll_into_view_if_needed()
                page.screenshot(path=str(SHOTS / f"{name}.png"))
                assert (SHOTS / f"{name}.png").stat().st_size > 10_000
                page.close(run_before_unload=False)
                _stop_kernels(base, token)  # one kernel at a time on a 2-core machine
        finally:
            browser.close()


# ================================================================================================
# the static report, read offline, and the presentation mode (Voilà)
def _browser(p):
    if not os.access(CHROMIUM, os.X_OK):
        skip_or_fail(f"{CHROMIUM} not found: `make setup` installs Debian's chromium (apt-get) when it can")
    return p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def _playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("the playwright Python package is missing: `make setup` installs the notebooks extra")
    return sync_playwright()


def _only(page, allowed: tuple[str, ...]) -> list[str]:
    """Abort every request whose URL does not start with one of ``allowed``; returns the list of those aborted."""
    blocked: list[str] = []

    def route(r):
        if r.request.url.startswith(allowed):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    return blocked


#: each panel snapshot of a report page: visible, with a loaded image shown no larger than it is, a table, an inline
#: SVG figure or the byte view
_SNAPSHOTS = """(cls) => Array.from(document.querySelectorAll('.' + cls)).map((el) => {
    const r = el.getBoundingClientRect();
    const imgs = Array.from(el.querySelectorAll('img')).map((i) => ({
        ok: i.complete && i.naturalWidth > 0, up: i.clientWidth > i.naturalWidth + 1, w: i.clientWidth}));
    const tables = Array.from(el.querySelectorAll('table')).filter((t) => t.getBoundingClientRect().height > 0
        && t.querySelectorAll('td').length > 0).length;
    const bytes = el.querySelectorAll('.kf-bytes').length;
    const svgs = Array.from(el.querySelectorAll('svg')).filter((g) => g.getBoundingClientRect().height > 0).length;
    return {visible: r.width > 0 && r.height > 0, imgs, tables, bytes, svgs,
            title: (el.querySelector('b') || {}).textContent || ''};
})"""


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    from kafkafmt.viz.report import build_report
    out = tmp_path_factory.mktemp("report")
    build_report(out, [str(nb) for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))], log=lambda _: None)
    return out


def test_the_report_offline_shows_every_panel(report_dir):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _playwright() as p:
        browser = _browser(p)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
            page = context.new_page()
            blocked = _only(page, ("file://", "data:"))
            page.goto((report_dir / "index.html").as_uri())
            links = page.locator("li > a")
            notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
            assert links.count() == len(notebooks)
            page.screenshot(path=str(SHOTS / "report-index.png"), full_page=True)
            for i, nb in enumerate(notebooks):
                page.goto((report_dir / "index.html").as_uri())
                page.locator("li > a").nth(i).click()
                page.wait_for_load_state("load")
                assert page.url.endswith(f"{nb.stem}.html")
                shown = page.evaluate(_SNAPSHOTS, "kf-panel-snapshot")
                assert shown, f"{nb.stem}: no panel in the report"
                for s in shown:
                    assert s["visible"], f"{nb.stem}: panel {s['title']!r} is not visible"
                    assert s["imgs"] or s["tables"] or s["bytes"] or s["svgs"], \
                        f"{nb.stem}: panel {s['title']!r} shows nothing"
                    assert all(im["ok"] for im in s["imgs"]), f"{nb.stem}: an image of {s['title']!r} did not load"
                    assert not any(im["up"] for im in s["imgs"]), f"{nb.stem}: an image of {s['title']!r} is upscaled"
                for other in page.locator(".kf-widget-snapshot").all():  # widgets drawn from their stored state:
                    # only progress bars (a panel drawn so would have missed its snapshot of its default state)
                    assert other.locator("progress").count() == 1, f"{nb.stem}: a panel without its snapshot"
                    assert "100%" in other.inner_text(), f"{nb.stem}: a progress bar not at its final text"
                assert not page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']") \
                    .count(), f"{nb.stem}: stderr output in the report"
                page.locator(".kf-panel-snapshot").first.evaluate("(el) => el.scrollIntoView({block: 'start'})")
                page.screenshot(path=str(SHOTS / f"report-{nb.stem}.png"))
            assert blocked == [], f"the report asked the network for {blocked[:3]}"
        finally:
            browser.close()


@pytest.fixture(scope="module")
def presentation(tmp_path_factory):
    """``python -m kafkafmt.viz.present`` (what ``make present`` runs) on a free port; stopped with SIGINT (Ctrl-C)."""
    if not os.access(CHROMIUM, os.X_OK):
        skip_or_fail(f"{CHROMIUM} not found: `make setup` installs Debian's chromium (apt-get) when it can")
    home = tmp_path_factory.mktemp("present")
    port = _free_port()
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(home / "runtime"), PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    log = open(home / "voila.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "kafkafmt.viz.present", "--port", str(port), "--no-prepare",
                             "--notebooks", str(ROOT / "notebooks"), "--build", str(home / "build")],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(ROOT), start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/", timeout=5) as r:
                    landing = r.read().decode()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Voilà did not start: {(home / 'voila.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield base, landing
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C, by PID: Voilà stops and shuts its kernels down
        try:
            stopped = proc.wait(timeout=30) is not None
        except subprocess.TimeoutExpired:
            stopped = False
            proc.kill()
            proc.wait(timeout=10)
        log.close()
    assert stopped, "Voilà did not stop on SIGINT (Ctrl-C)"
    assert f"kafkafmt presentation: open {base}/" in (home / "voila.log").read_text()


#: Voilà has run every cell: its spinner is gone and the cells are shown (window.voila_finish)
_VOILA_DONE = """() => { const cells = document.querySelector('#rendered_cells');
    return !document.querySelector('#loading') && cells && getComputedStyle(cells).display !== 'none'; }"""
#: the top-level widget areas of a page that hold a control (the panels), as element handles
_TOP_PANELS = """() => Array.from(document.querySelectorAll('.widget-vbox')).filter((el) =>
    !el.parentElement.closest('.widget-vbox') && el.querySelector('.widget-slider, .widget-dropdown, .widget-text'))"""
#: what a panel shows (figures, HTML views, the message line), not its controls
_SHOWN = """(el) => Array.from(el.querySelectorAll('img, .widget-html-content')).map(
    (n) => n.tagName === 'IMG' ? n.src.length + ':' + n.src.slice(-64) : n.innerHTML).join('|')"""


def _move_first_control(page, panel) -> str:
    """Move the panel's first control as a user would (a key on a slider, the next option of a list, a new
    number typed); returns what was moved."""
    sliders = panel.locator(".widget-slider:visible")  # a slider first: it moves by one step, within its range
    others = panel.locator(".widget-dropdown:visible, .widget-text:visible")
    control = sliders.first if sliders.count() else others.first
    control.scroll_into_view_if_needed()
    label = control.locator("label").first.inner_text() if control.locator("label").count() else "?"
    classes = control.get_attribute("class") or ""
    if "widget-slider" in classes:
        handle = control.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        handle.press("ArrowRight")
    elif "widget-dropdown" in classes:
        select = control.locator("select")
        options = select.locator("option").all_inner_texts()
        current = select.evaluate("(s) => s.selectedIndex")
        select.select_option(index=(current + 1) % len(options))
    else:
        box = control.locator("input")
        value = box.input_value()
        box.fill(str(int(float(value)) + 1000) if value.lstrip("-").replace(".", "", 1).isdigit() else value + "x")
        box.press("Enter")
    return label


def _settle(panel, quiet_s: float = 1.0, timeout_s: float = 30.0) -> None:
    """Wait until what the panel shows has not changed for ``quiet_s`` (its views update one by one)."""
    last, since, deadline = panel.evaluate(_SHOWN), time.monotonic(), time.monotonic() + timeout_s
    while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.2)
        now = panel.evaluate(_SHOWN)
        if now != last:
            last, since = now, time.monotonic()


def test_every_notebook_in_the_presentation_mode(presentation):
    base, landing = presentation
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for nb in notebooks:  # the landing page: a plain link to each notebook, with its question and finding
        assert f"href='/voila/render/{nb.name}'" in landing
    assert landing.count("class='question'") == len(notebooks) and "Finding:" in landing
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            blocked = _only(page, ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
            page.goto(f"{base}/")
            page.screenshot(path=str(SHOTS / "present-index.png"))
            page.close()
            loaded: list[str] = []
            for nb in notebooks:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                blocked += _only(page, ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
                page.on("request", lambda r: loaded.append(r.url))
                # Voilà streams the page while it runs the notebook: "load" comes only at the end
                page.goto(f"{base}/voila/render/{nb.name}", wait_until="commit", timeout=60_000)
                page.wait_for_function(_VOILA_DONE, timeout=180_000)
                page.wait_for_function(f"() => ({_TOP_PANELS})().length > 0", timeout=60_000)
                assert not page.locator(".jp-CodeCell .jp-InputArea-editor, .cm-editor").count() and \
                    "import ipywidgets" not in page.inner_text("body"), f"{nb.stem}: code shown"
                assert not page.locator("[data-mime-type='application/vnd.jupyter.stderr']").count(), \
                    f"{nb.stem}: a traceback or stderr output"
                panel = page.locator(".widget-vbox").filter(has=page.locator(
                    ".widget-slider, .widget-dropdown, .widget-text")).first
                before = panel.evaluate(_SHOWN)
                assert before, f"{nb.stem}: the first panel shows nothing"
                moved = _move_first_control(page, panel)
                page.wait_for_function(f"([el, before]) => ({_SHOWN})(el) !== before",
                                       arg=[panel.element_handle(), before], timeout=60_000)
                _settle(panel)
                upscaled = panel.evaluate("(el) => Array.from(el.querySelectorAll('img')).filter("
                                          "(i) => i.clientWidth > i.naturalWidth + 1).length")
                assert not upscaled, f"{nb.stem}: a figure drawn larger than its pixels"
                panel.evaluate("(el) => el.scrollIntoView({block: 'start'})")
                page.screenshot(path=str(SHOTS / f"present-{nb.stem}.png"))
                assert (SHOTS / f"present-{nb.stem}.png").stat().st_size > 10_000, f"{nb.stem}: blank ({moved})"
                page.close(run_before_unload=True)  # Voilà shuts the page's kernel down
            assert blocked == [], f"the presentation asked the network for {blocked[:3]}"
            # the widget manager came from the installed jupyterlab_widgets package, served by Voilà
            assert any(u.startswith(f"{base}/voila/labextensions/@jupyter-widgets/jupyterlab-manager/")
                       for u in loaded), "the widget manager was not loaded from the local server"
        finally:
            browser.close()
