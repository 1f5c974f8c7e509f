"""``python -m kafkafmt.viz.present``: the notebooks as a dashboard app for people who do not code (Voilà).

Voilà runs each notebook in its own kernel when its page is opened and shows the outputs and live
widgets without the code.  This module writes a Voilà template, ``kafkafmt``, under
``build/present/share/voila/templates/`` and starts Voilà on ``notebooks/`` with it, on 127.0.0.1:

- ``/`` is a landing page generated from the notebooks themselves: a plain link to each one with its
  question and its finding (the ``**Question.**`` paragraph, the ``## Finding`` section's stored text,
  :mod:`kafkafmt.viz.report`), rendered by the server, no script needed;
- a notebook page is Voilà's JupyterLab template without its CDN stylesheets (Font Awesome), so the
  page loads nothing from the network: Voilà's own scripts and the widget manager come from the
  installed packages (``voila``, ``jupyterlab_widgets``).

Ctrl-C (SIGINT) or SIGTERM stops the server and its kernels.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
from pathlib import Path

from .report import INDEX_CSS, REMOVE_CELL_TAGS, notebook_finding, notebook_summary, summary_item

TEMPLATE = "kafkafmt"
DEFAULT_PORT = 8866
#: Voilà's JupyterLab page, its stylesheet block kept but for the <link>s to another host (Font Awesome), no Mermaid
#: loader (it imports from a CDN; the notebooks draw no diagram); figures never drawn larger than they are, wide
#: tables scrolled rather than cut; cells tagged ``remove-cell`` run but are not shown (as in the report)
_INDEX = """{%- extends 'voila/templates/lab/index.html.j2' -%}
{%- block notebook_css -%}
{%- set css -%}{{ super() }}{%- endset -%}
{%- for line in css.split('\\n') if not (line.lstrip().startswith('<link') and '://' in line) -%}
{{ line }}
{% endfor -%}
<style>#rendered_cells{max-width:1200px;margin:auto}
.jp-OutputArea-output img{max-width:100%;height:auto}
.jp-OutputArea-output .widget-image{align-self:flex-start;flex:none;object-fit:contain}
.jp-OutputArea-output .widget-html-content{max-width:100%;overflow-x:auto}</style>
{%- endblock notebook_css -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block any_cell scoped -%}
{%- if not cell.metadata.get('tags', []) | select('in', REMOVE_TAGS) | list -%}{{ super() }}{%- endif -%}
{%- endblock any_cell -%}
"""


def landing_page(notebooks: list[str | Path]) -> str:
    """The Jinja template of ``/``: a link to each notebook's Voilà page, its question and finding."""
    items = [summary_item(f"@@BASE@@voila/render/{Path(nb).name}", *notebook_summary(nb), notebook_finding(nb))
             for nb in notebooks]
    # the page is a Jinja template: neutralise Jinja's delimiters in the text, then put the base URL in
    listing = "".join(items).replace("{", "&#123;").replace("}", "&#125;").replace("@@BASE@@", "{{ base_url }}")
    return ("<!doctype html><html lang='en'><meta charset='utf-8'><title>kafkafmt workbench</title>"
            "<link rel='icon' href='data:;base64,='>"
            f"{{% raw %}}<style>{INDEX_CSS}</style>{{% endraw %}}<h1>kafkafmt workbench</h1>"
            "<p>Apache Kafka's message formats and log, explained with live figures. Open a notebook: "
            "its page runs it (a few seconds), then move its controls. No code is shown.</p>"
            f"<ul class='kf-notebooks'>{listing}</ul></html>\n")


def write_template(share: str | Path, notebooks: list[str | Path]) -> Path:
    """Write the ``kafkafmt`` Voilà template under ``share/voila/templates/`` (``share`` goes on JUPYTER_PATH)."""
    root = Path(share) / "voila" / "templates" / TEMPLATE
    root.mkdir(parents=True, exist_ok=True)
    index = _INDEX.replace("REMOVE_TAGS", json.dumps(list(REMOVE_CELL_TAGS)))
    files = {"conf.json": json.dumps({"base_template": "lab"}) + "\n", "index.html.j2": index,
             "tree.html": landing_page(notebooks)}
    for name, text in files.items():
        tmp = root / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(root / name)
    return root


def voila_command(notebook_dir: str | Path, port: int, python: str = sys.executable) -> list[str]:
    """The Voilà command line: loopback only, code hidden, no tracebacks, our template, classic (server) tree."""
    return [python, "-m", "voila", str(notebook_dir), "--no-browser", "--Voila.ip=127.0.0.1", f"--port={port}",
            "--Voila.port_retries=0", f"--template={TEMPLATE}", "--strip_sources=True", "--show_tracebacks=False",
            "--classic-tree", "--theme=light", "--Voila.log_level=WARN"]


def prepare() -> None:
    """Build the sample logs' derived tables once (notebooks 04 and 05 read them), so that their pages open in
    seconds rather than a minute; a failure (no Java) is one line, and those pages then build them themselves."""
    from .derived import load_derived
    from .widgets import one_line
    print("present: preparing the sample logs' tables for 04 and 05 (about a minute the first time) ...", flush=True)
    try:
        load_derived("default", progress=False)
    except Exception as e:  # noqa: BLE001 - any failure leaves the notebooks to try again themselves
        print(f"present: not prepared ({one_line(e)}); notebooks 04 and 05 will try when opened", flush=True)


def port_free(port: int) -> bool:
    """True when nothing listens on ``127.0.0.1:port`` (checked before the URL is printed)."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m kafkafmt.viz.present", description=__doc__.split("\n\n")[0])
    p.add_argument("--notebooks", default="notebooks", help="the notebooks' folder (default notebooks/)")
    p.add_argument("--build", default="build/present", help="where the Voilà template is written")
    p.add_argument("--port", type=int, default=int(os.environ.get("PRESENT_PORT") or DEFAULT_PORT),
                   help=f"port on 127.0.0.1 (default $PRESENT_PORT or {DEFAULT_PORT})")
    p.add_argument("--no-prepare", action="store_true", help="do not build the sample logs' tables first")
    a = p.parse_args(argv)
    notebooks = sorted(Path(a.notebooks).glob("*.ipynb"))
    if not notebooks:
        print(f"present: no notebooks in {a.notebooks}", file=sys.stderr)
        return 1
    if not port_free(a.port):
        print(f"present: port {a.port} on 127.0.0.1 is in use; choose another: PRESENT_PORT=9000 make present",
              file=sys.stderr)
        return 1
    if not a.no_prepare:
        try:
            prepare()
        except KeyboardInterrupt:  # Ctrl-C while preparing: stop, one line (the cache is built atomically)
            print("present: stopped", file=sys.stderr)
            return 130
    share = Path(a.build).resolve() / "share"
    write_template(share, notebooks)
    env = dict(os.environ, JUPYTER_PATH=os.pathsep.join(filter(None, [str(share), os.environ.get("JUPYTER_PATH")])))
    print(f"\nkafkafmt presentation: open http://127.0.0.1:{a.port}/\n"
          "(Voilà on 127.0.0.1 only, code hidden; each notebook runs when its page opens; Ctrl-C stops the server)\n",
          flush=True)
    cmd = voila_command(a.notebooks, a.port)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell may start us with SIGINT ignored: Voilà must see Ctrl-C
    os.execve(cmd[0], cmd, env)  # Voilà takes the terminal: Ctrl-C reaches it directly
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
