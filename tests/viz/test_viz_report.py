"""The static report and the presentation's landing page: panels as static figures and tables, nothing from
the network, each notebook's question and finding taken from the notebook itself."""
import base64
import json
import re

import ipywidgets as w
import pandas as pd
import pytest

from kafkafmt.viz import Panel, plots, present, report, snapshot

#: a script, stylesheet or image loaded from another host: an independent check of report.external_urls
_REMOTE = re.compile(r"<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*[\"']?\s*(https?:)?//", re.IGNORECASE)
_PNG = "data:image/png;base64,"


def _square(n):
    if n < 0:
        raise ValueError("n must be at least 0")
    return pd.DataFrame({"x": list(range(n + 1)), "y": [i * i for i in range(n + 1)]})


def _panel(title="Squares"):
    return Panel({"n": w.IntSlider(value=3, min=-2, max=9, description="n")}, _square,
                 lambda df: (plots.line_plot(df, x="x", y="y", xlabel="n", ylabel="n squared"), df), title=title)


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(src, *outputs):
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "source": src, "outputs": list(outputs)}


def _text(html):
    """The text of some HTML, tags removed, spaces collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _cell(html, value):
    return re.search(rf"<td[^>]*>\s*{value}\s*</td>", html)


def test_the_snapshot_is_offered_only_when_asked(monkeypatch):
    monkeypatch.delenv(snapshot.SNAPSHOT_ENV, raising=False)
    assert "text/html" not in _panel()._repr_mimebundle_()  # nbval compares text/html: stored outputs unchanged
    monkeypatch.setenv(snapshot.SNAPSHOT_ENV, "1")
    bundle = _panel()._repr_mimebundle_()
    assert report.WIDGET_VIEW in bundle  # the live view is still there for JupyterLab and Voilà
    html = bundle["text/html"]
    assert f"class='{snapshot.PANEL_CLASS}'" in html and "Squares" in _text(html)
    assert re.search(r"\bn\s*[:=]\s*3\b", _text(html))  # the control's setting, in words
    png = base64.b64decode(html.split(_PNG, 1)[1].split("'", 1)[0].split('"', 1)[0])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"  # the figure, inside the page
    assert "<table" in html and _cell(html, 9)


def test_the_snapshot_follows_the_view_and_its_error_line(monkeypatch):
    monkeypatch.setenv(snapshot.SNAPSHOT_ENV, "1")
    p = _panel()
    p.set(n=5)
    assert _cell(p._repr_mimebundle_()["text/html"], 25)
    p.set(n=-1)
    assert "n must be at least 0" in snapshot.panel_html(p)


def test_the_widget_walk_shows_figures_tables_and_settings():
    p = _panel()
    html = snapshot.widget_html(p.widget)
    assert "Squares" in _text(html) and re.search(r"\bn\s*[:=]\s*3\b", _text(html))
    assert _PNG in html and _cell(html, 9)


def test_an_output_widget_shows_what_it_captured():
    out = w.Output()
    out.outputs = ({"output_type": "display_data", "data": {"text/html": "<table><tr><td>7</td></tr></table>",
                                                            "text/plain": "t"}, "metadata": {}},
                   {"output_type": "stream", "name": "stdout", "text": "a < b\n"})
    assert snapshot.widget_html(w.VBox([out])) == \
        "<div class='kf-snap-col'><table><tr><td>7</td></tr></table><pre>a &lt; b\n</pre></div>"


def test_a_stored_progress_bar_shows_its_final_text():
    states = {
        "box": {"state": {"_model_name": "HBoxModel", "children": ["IPY_MODEL_d", "IPY_MODEL_bar", "IPY_MODEL_t"],
                          "layout": "IPY_MODEL_lay"}},
        "lay": {"state": {"_model_name": "LayoutModel", "display": None}},
        "d": {"state": {"_model_name": "HTMLModel", "value": "derived tables (default): 100%"}},
        "bar": {"state": {"_model_name": "FloatProgressModel", "value": 3.0, "max": 3.0}},
        "t": {"state": {"_model_name": "HTMLModel", "value": " 3/3 [00:01&lt;00:00]"}},
        "gone": {"state": {"_model_name": "HBoxModel", "children": ["IPY_MODEL_d"], "layout": "IPY_MODEL_hid"}},
        "hid": {"state": {"_model_name": "LayoutModel", "display": "none"}},
    }
    html = snapshot.state_html("box", states)
    assert "derived tables (default): 100%" in html and "3/3" in html
    assert "<progress value='3.0' max='3.0'>" in html
    assert snapshot.state_html("gone", states) == ""  # tqdm(leave=False) ends hidden: nothing to show


def test_external_urls_finds_what_an_offline_reader_cannot_load():
    page = ("<script src='https://cdn.example/require.js'></script><link rel=stylesheet href=//cdn.example/a.css>"
            "<img src=\"data:image/png;base64,AA\"><a href='https://kafka.apache.org/'>a link is fine</a>"
            "<script type=module>await import('https://cdn.example/mermaid.mjs')</script>")
    assert report.external_urls(page) == ["https://cdn.example/require.js", "//cdn.example/a.css",
                                          "https://cdn.example/mermaid.mjs"]


def _notebook(tmp_path):
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "cells": [
              _md("# 09 · Squares\n\n**Question.** How do `squares` grow?\n\n**Seed sections.** none."),
              _code("import ipywidgets as w, pandas as pd\nfrom kafkafmt.viz import Panel, plots\n"
                    "from tqdm.auto import tqdm\n"
                    "def square(n):\n    return pd.DataFrame({'x': range(n + 1), 'y': [i * i for i in range(n + 1)]})"),
              _md("## Finding: they grow fast"),
              _code("print('9 squared is 81.')\nprint('Faster than linear.')"),
              _code("bar = tqdm(total=3, desc='steps')\nfor _ in range(3):\n    bar.update(1)\nbar.close()"),
              _code("fig_panel = Panel({'n': w.IntSlider(value=4, description='n')}, square,\n"
                    "    lambda df: plots.line_plot(df, x='x', y='y', xlabel='n', ylabel='n squared'),\n"
                    "    title='Squares plotted')\nfig_panel"),
              _code("table_panel = Panel({'n': w.IntSlider(value=2, description='n')}, square, lambda df: df,\n"
                    "    title='Squares listed')\ntable_panel"),
              _code("fig_panel.set(n=9)  # a later cell moves a panel: the report shows it as it was first shown"),
              dict(_code("print('HIDDEN-CHECK ran')\nassert fig_panel.values == {'n': 9}"),
                   metadata={"tags": ["remove-cell"]}),
          ]}
    path = tmp_path / "09-squares.ipynb"
    path.write_text(json.dumps(nb))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    nb = _notebook(tmp)
    index = report.build_report(tmp / "out", [str(nb)], timeout=120, log=lambda _: None)
    return index, (tmp / "out" / "09-squares.html").read_text(encoding="utf-8")


def test_the_report_page_needs_no_network(built):
    _, page = built
    assert not _REMOTE.search(page) and report.external_urls(page) == []
    assert "require.js" not in page and "@jupyter-widgets/html-manager" not in page


def test_the_report_shows_each_panel_in_its_default_state(built):
    _, page = built
    panels = [chunk.split("jp-Cell ", 1)[0] for chunk in page.split(f'<div class="{snapshot.PANEL_CLASS}">')[1:]]
    assert len(panels) == 2
    plotted, listed = panels
    assert "Squares plotted" in plotted and _PNG in plotted
    assert re.search(r"\bn\s*[:=]\s*4\b", _text(plotted))  # as first shown (n=4), not as a later cell left it (n=9)
    assert "Squares listed" in listed and "<table" in listed and _cell(listed, 4)
    assert report.WIDGET_VIEW not in page and "IntSlider(" not in page  # no widget placeholder or repr left


def test_the_report_shows_findings_and_progress_but_no_code(built):
    index, page = built
    progress = page.split(f'<div class="{snapshot.WIDGET_CLASS}">', 1)[1].split("</div></div>", 1)[0]
    progress = progress.replace("\u2007", " ")  # tqdm pads with figure spaces
    assert "9 squared is 81." in page
    assert "steps: 100%" in progress and "3/3" in progress and "<progress" in progress, progress
    assert "def square" not in page and "tqdm(total=3" not in page
    assert "HIDDEN-CHECK" not in page  # a cell tagged remove-cell runs (the build would fail otherwise), unseen
    listing = index.read_text(encoding="utf-8")
    assert "<a href='09-squares.html'>09 · Squares</a>" in listing
    assert "How do <code>squares</code> grow?" in listing
    assert "Finding: they grow fast.</b><br>9 squared is 81.<br>Faster than linear." in listing


def test_notebook_finding_reads_the_finding_section(tmp_path):
    path = _notebook(tmp_path)
    nb = json.loads(path.read_text())
    nb["cells"][3]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["9 squared is 81.\n"]},
                                 {"output_type": "stream", "name": "stderr", "text": ["noise\n"]}]
    assert report.notebook_finding(nb) == ("they grow fast", "9 squared is 81.")
    nb["cells"].insert(4, {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": "check()",
                           "outputs": [{"output_type": "stream", "name": "stdout", "text": "checked\n"}]})
    assert report.notebook_finding(nb) == ("they grow fast", "9 squared is 81.")
    assert report.notebook_summary(path) == ("09 · Squares", "How do `squares` grow?")


def test_the_landing_page_links_each_notebook_with_its_question_and_finding(tmp_path):
    import jinja2
    path = _notebook(tmp_path)
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"] = nb["cells"][0]["source"].replace("grow?", "grow? Even {{ braces }} and {% tags %}?")
    nb["cells"][3]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["81.\n"]}]
    path.write_text(json.dumps(nb))
    root = present.write_template(tmp_path / "share", [path])
    assert json.loads((root / "conf.json").read_text()) == {"base_template": "lab"}
    page = jinja2.Template((root / "tree.html").read_text()).render(base_url="/base/")
    assert "<a href='/base/voila/render/09-squares.ipynb'>09 · Squares</a>" in page
    assert "{{ braces }} and {% tags %}" in page.replace("&#123;", "{").replace("&#125;", "}")
    assert "Finding: they grow fast.</b><br>81." in page and "li>a{font-size" in page
    assert not _REMOTE.search(page)


def test_the_voila_command_is_loopback_only_and_hides_code():
    cmd = present.voila_command("notebooks", 9999, python="py")
    assert cmd[:3] == ["py", "-m", "voila"] and "--Voila.ip=127.0.0.1" in cmd and "--port=9999" in cmd
    assert "--strip_sources=True" in cmd and "--show_tracebacks=False" in cmd
    assert f"--template={present.TEMPLATE}" in cmd


def test_the_presentation_server_serves_pages_that_load_nothing_from_the_network(tmp_path):
    """`python -m kafkafmt.viz.present` on a folder with one notebook: the landing page and the notebook's page
    reference no external script or stylesheet and show no code; SIGINT (Ctrl-C) stops the server."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    (tmp_path / "nbs").mkdir()
    nb = _notebook(tmp_path / "nbs")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    proc = subprocess.Popen([sys.executable, "-m", "kafkafmt.viz.present", "--port", str(port), "--no-prepare",
                             "--notebooks", str(nb.parent), "--build", str(tmp_path / "build")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                landing = urllib.request.urlopen(f"{base}/", timeout=5).read().decode()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read().decode()[-2000:]
                time.sleep(0.3)
        page = urllib.request.urlopen(f"{base}/voila/render/{nb.name}", timeout=120).read().decode()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
            pytest.fail("the presentation server did not stop on SIGINT (Ctrl-C)")
    out = proc.stdout.read().decode()
    assert f"kafkafmt presentation: open {base}/" in out
    assert "<a href='/voila/render/09-squares.ipynb'>09 · Squares</a>" in landing
    assert report.external_urls(landing) == [] and report.external_urls(page) == []
    assert "fontawesome" not in page.lower() and "cdn." not in page
    assert "9 squared is 81." in page  # the page ran the notebook: its printed finding is there
    assert "def square" not in page and "fig_panel.set" not in page  # code hidden
    assert "HIDDEN-CHECK" not in page  # a cell tagged remove-cell is not shown


def test_a_busy_port_is_one_line(capsys):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert present.main(["--port", str(port), "--no-prepare"]) == 1
    assert capsys.readouterr().err == (f"present: port {port} on 127.0.0.1 is in use; choose another: "
                                       "PRESENT_PORT=9000 make present\n")
