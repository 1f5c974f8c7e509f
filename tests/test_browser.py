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
