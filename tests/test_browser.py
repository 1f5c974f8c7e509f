"""A real browser on the workbench, as a person would see it: every notebook opened in JupyterLab (one server on
127.0.0.1 with a token) as saved, its panels drawn from the stored widget state before any cell runs, then, in the
same page, its outputs cleared and run, and in the presentation mode (one Voilà server, ``make present``), in Debian's
Chromium driven by Playwright (the offline rendering, the documentation site's tutorials, is
tests/test_docs_site.py's).  In JupyterLab every panel of every notebook is driven through an invalid
combination and back, or its adaptive control is shown refusing the invalid value (tests/browser_drive.py), and
the test fails on an error line beside a stale result, a cut table cell or an upscaled image
(tests/browser_checks.py, proven able to fail by tests/test_browser_checks.py).

In the presentation mode the kernel runs the same panel code as in JupyterLab (driven there, panel by panel):
what differs is the page, so there every panel is checked as first shown (its view, no error line, the checks of
tests/browser_checks.py), no code, no traceback, nothing from the network, the widget manager served by the local
Voilà, and one panel per notebook (the first) is driven through its scenario or moved and moved back, proving
a widget's round trip (browser → kernel → browser) through Voilà's manager.  Driving every panel there again
cost 10-25 s a notebook and proved the kernel side a second time.

Screenshots go to build/screenshots/ (the README's, copied to docs/screenshots/): ``saved-<nb>.png`` (opened as
saved), ``<nb>.png`` (run and driven), ``present-<nb>.png`` and ``present-index.png``.  Every process it starts is
stopped by PID.
Skipped locally (failing under CI=true) without chromium or playwright; ``make setup`` installs Debian's chromium
when it is missing (scripts/ensure-chromium.sh).
"""
from __future__ import annotations

import json
import os
import re
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

from browser_drive import exercise, panels, wait_for_panels
from browser_session import chromium_or_skip, refuse_others

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "build" / "screenshots"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
VIEWPORT = {"width": 1280, "height": 900}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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
    chromium_or_skip()
    home = tmp_path_factory.mktemp("lab")
    work = home / "notebooks"
    shutil.copytree(ROOT / "notebooks", work)  # the browser may autosave: never let it touch the stored notebooks
    # the copy's derived tables (kafkafmt.viz.derived: <root>/build/derived) are the checkout's, which the other
    # runs of the notebooks (the docs build, Voilà, nbval) build or read: one Spark pipeline, not one more per copy
    (ROOT / "build" / "derived").mkdir(parents=True, exist_ok=True)
    (work / "build").mkdir()
    (work / "build" / "derived").symlink_to(ROOT / "build" / "derived", target_is_directory=True)
    (work / "docs" / "_data").mkdir(parents=True)  # notebook 05's measured tables (kafkafmt.viz.broker_price)
    (work / "docs" / "_data" / "bench").symlink_to(ROOT / "docs" / "_data" / "bench", target_is_directory=True)
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    tracker = home / "settings" / "@jupyterlab" / "notebook-extension"  # every cell in the DOM, as a reader scrolls
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    token, port = secrets.token_hex(16), _free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(home / "settings"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), MPLBACKEND="module://matplotlib_inline.backend_inline",
               JUPYTER_DATA_DIR=str(home / "data"))
    # the notebooks trusted, as scripts/run-jupyter.sh (make run) trusts them: JupyterLab draws a stored widget view
    # (ipywidgets' renderer is not "safe") only in a notebook signed in this user's trust database
    subprocess.run([sys.executable, "-m", "jupyter", "trust", *map(str, sorted(work.rglob("*.ipynb")))], env=env,
                   check=True, capture_output=True)
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


#: the notebook at ``path`` is shown, its kernel idle and every non-empty code cell has run (outputs were cleared first)
_ALL_RAN = """(path) => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    if (!w || !w.context || w.context.path !== path || !w.sessionContext.session) return false;
    const k = w.sessionContext.session.kernel;
    const code = w.content.widgets.filter((c) => c.model.type === 'code' && c.model.sharedModel.getSource().trim());
    return !!k && k.status === 'idle' && code.length > 0 && code.every((c) => c.model.executionCount !== null);
}"""
_KERNEL_IDLE = """(path) => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.context && w.context.path === path && w.sessionContext.session
              && w.sessionContext.session.kernel;
    return k && k.status === 'idle';
}"""
_STARTED = """(path) => { const w = window.jupyterapp.shell.currentWidget;
    return w.content.widgets.some((c) => c.model.type === 'code' && c.model.executionCount !== null)
        || w.sessionContext.session.kernel.status !== 'idle'; }"""


def _run_all(page, path: str) -> None:
    """Clear the stored outputs, Run All once the kernel is idle and wait until every cell has run (right after
    load the first Run All can be ignored: then it is sent again)."""
    page.wait_for_function(_KERNEL_IDLE, arg=path, timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    for attempt in range(2):
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        try:
            page.wait_for_function(_STARTED, arg=path, timeout=15_000)
            break
        except Exception:
            if attempt:
                raise
    page.wait_for_function(_ALL_RAN, arg=path, timeout=240_000, polling=500)


def _first_panel_on_top(page) -> None:
    found = panels(page)
    if found:
        found[0][1].evaluate("(el) => { el.scrollIntoView({block: 'start'}); document.activeElement.blur(); }")
        page.wait_for_timeout(300)


#: what an output area shows when a widget view is not drawn: its repr (untrusted notebook, or no saved model) or
#: ipywidgets' placeholders (jupyterlab_widgets' WidgetRenderer)
_NOT_DRAWN = re.compile(r"\b[A-Z]\w*\((children|value|description)=|Error displaying widget|Loading widget")
#: the notebook's output areas: the number of drawn widget views (an output holding a .jupyter-widgets element),
#: the text of the others, and the execution counts of its code cells
_OUTPUTS = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const outs = Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output'));
    return {views: outs.filter((o) => o.querySelector('.jupyter-widgets')).length,
            texts: outs.filter((o) => !o.querySelector('.jupyter-widgets')).map((o) => o.innerText),
            counts: w.content.widgets.filter((c) => c.model.type === 'code').map((c) => c.model.executionCount)};
}"""


def _stored_views(path: Path) -> tuple[int, int, list]:
    """The widget outputs stored in ``path``: how many, how many show a panel (a ``*_panel(`` cell), and the
    code cells' execution counts."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    views = [(c, o) for c in cells for o in c["outputs"] if WIDGET_VIEW in o.get("data", {})]
    in_panels = sum(1 for c, _ in views if re.search(r"\w+_panel\(", "".join(c["source"])))
    return len(views), in_panels, [c["execution_count"] for c in cells]


def _check_as_saved(page, nb: Path) -> None:
    """Opened and not run, every widget output is drawn from the widget state saved with the notebook
    (``make notebooks``), each panel with its view, never a ``VBox(children=...`` repr; screenshot ``saved-<nb>``."""
    views, in_panels, counts = _stored_views(nb)
    where = f"JupyterLab, {nb.stem} as saved"
    shown = wait_for_panels(page, where)
    # a loaded 2-core machine may take a minute to draw them; the wait only ends early
    try:
        page.wait_for_function(f"() => ({_OUTPUTS})().views >= {views}", timeout=90_000)
    except Exception:
        pass  # the assertions below say what is missing
    seen = page.evaluate(_OUTPUTS)
    assert seen["counts"] == counts, f"{where}: a cell ran"
    assert seen["views"] == views, f"{where}: {seen['views']} widget outputs drawn, {views} stored; " \
        f"the other outputs show {[t[:80] for t in seen['texts']]}"
    assert len(shown) == in_panels, f"{where}: {len(shown)} panels drawn, {in_panels} stored"
    bad = [t[:80] for t in seen["texts"] if _NOT_DRAWN.search(t)]
    assert not bad, f"{where}: a widget shown as text: {bad}"
    _first_panel_on_top(page)
    page.screenshot(path=str(SHOTS / f"saved-{nb.stem}.png"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_every_notebook_in_jupyterlab(lab, chromium, nb):
    """Opened in JupyterLab, first as saved (every stored widget view drawn before any cell runs: the page load
    and kernel start are shared), then outputs cleared, Run All, and every panel into an invalid combination and
    back (tests/browser_drive.py)."""
    base, token = lab
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport=VIEWPORT)
    try:
        # a workspace of its own, reset: only this notebook is open
        page.goto(f"{base}/lab/workspaces/{nb.stem}/tree/{nb.name}?reset&token={token}")
        page.wait_for_function(_KERNEL_IDLE, arg=nb.name, timeout=90_000)
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # the notebook, not the file browser
        _check_as_saved(page, nb)
        _run_all(page, nb.name)
        assert not page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']").count(), \
            f"{nb.stem}: a traceback or stderr output in the browser"
        exercise(page, f"JupyterLab {nb.stem}")
        _first_panel_on_top(page)
        page.screenshot(path=str(SHOTS / f"{nb.stem}.png"))
        assert (SHOTS / f"{nb.stem}.png").stat().st_size > 10_000
    finally:
        page.close(run_before_unload=False)
        _stop_kernels(base, token)  # one kernel at a time on a 2-core machine


# ================================================================================================
# the presentation mode (Voilà)
@pytest.fixture(scope="module")
def presentation(tmp_path_factory):
    """``python -m kafkafmt.viz.present`` (what ``make present`` runs) on a free port; stopped with SIGINT (Ctrl-C)."""
    chromium_or_skip()
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


def test_the_presentation_landing_page(presentation, chromium):
    base, landing = presentation
    for nb in NOTEBOOKS:  # the landing page: a plain link to each notebook, with its question and finding
        assert f"href='/voila/render/{nb.name}'" in landing
    assert landing.count("class='question'") == len(NOTEBOOKS) and "Finding:" in landing
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport=VIEWPORT)
    try:
        blocked = refuse_others(page, ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
        page.goto(f"{base}/")
        page.screenshot(path=str(SHOTS / "present-index.png"))
        assert blocked == [], f"the landing page asked the network for {blocked[:3]}"
    finally:
        page.close()


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_every_notebook_in_the_presentation_mode(presentation, chromium, nb):
    """Voilà: code hidden, no traceback, nothing from the network, the widget manager from the local server, every
    panel checked as first shown and the first one driven into an invalid combination and back (the module's
    docstring says why one)."""
    base, _ = presentation
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport=VIEWPORT)
    loaded: list[str] = []
    try:
        blocked = refuse_others(page, ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
        page.on("request", lambda r: loaded.append(r.url))
        # Voilà streams the page while it runs the notebook: "load" comes only at the end
        page.goto(f"{base}/voila/render/{nb.name}", wait_until="commit", timeout=60_000)
        page.wait_for_function(_VOILA_DONE, timeout=240_000)
        assert not page.locator(".jp-CodeCell .jp-InputArea-editor, .cm-editor").count() and \
            "import ipywidgets" not in page.inner_text("body"), f"{nb.stem}: code shown"
        assert not page.locator("[data-mime-type='application/vnd.jupyter.stderr'], "
                                "[data-mime-type='application/vnd.jupyter.error']").count(), \
            f"{nb.stem}: a traceback or stderr output"
        exercise(page, f"presentation {nb.stem}", drive=1)
        _first_panel_on_top(page)
        page.screenshot(path=str(SHOTS / f"present-{nb.stem}.png"))
        assert (SHOTS / f"present-{nb.stem}.png").stat().st_size > 10_000, f"{nb.stem}: blank"
        assert blocked == [], f"the presentation asked the network for {blocked[:3]}"
        # the widget manager came from the installed jupyterlab_widgets package, served by Voilà
        assert any(u.startswith(f"{base}/voila/labextensions/@jupyter-widgets/jupyterlab-manager/")
                   for u in loaded), "the widget manager was not loaded from the local server"
    finally:
        page.close(run_before_unload=True)  # Voilà shuts the page's kernel down
