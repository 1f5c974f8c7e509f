"""``python -m kafkafmt.viz.report OUT_DIR NOTEBOOK...``: the workbench as static HTML for readers.

Each notebook is executed in a fresh kernel and written to ``OUT_DIR/<name>.html`` with its code
hidden; ``OUT_DIR/index.html`` links them with each one's title, question and finding.  The pages
need no network: every panel shows its default view as a static figure or table (the snapshot a
:class:`~kafkafmt.viz.widgets.Panel` offers when :data:`~kafkafmt.viz.snapshot.SNAPSHOT_ENV` is set,
see :mod:`kafkafmt.viz.snapshot`), any other widget (a progress bar) its final state from the stored
widget state, figures are ``data:`` URIs, and the page template loads nothing from a CDN (no
require.js, widget manager, MathJax or Mermaid).  A page that would still reference an external
script or stylesheet is refused (:func:`external_urls`).

With ``--notebooks`` it writes executed notebooks instead (:func:`build_notebooks`: the same static panels,
the code kept): the tutorials of the documentation site (``make docs``, ``docs/_ext/build_site.py``).
"""
from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import re
import sys
from pathlib import Path

from .snapshot import PANEL_CLASS, SNAPSHOT_ENV, state_html, wrap

#: cells a reader's view leaves out (they still run): the tags nbconvert's and Jupyter Book's conventions use
REMOVE_CELL_TAGS = ("remove-cell", "remove_cell")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: nbconvert's JupyterLab template without the blocks that load scripts from a CDN
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}<style>.jp-Notebook{max-width:1200px;margin:auto}</style>{%- endblock extra_css -%}
"""
_TEMPLATE_NAME = "kafkafmt_report.html.j2"
#: a script, stylesheet, image or frame fetched from another host (what an offline reader cannot load)
_EXTERNAL = re.compile(r"<(?:script|link|img|iframe|embed|source|audio|video)\b[^>]*?\b(?:src|href)\s*=\s*"
                       r"[\"']?\s*((?:https?:)?//[^\"'\s>]+)|\bimport\(\s*[\"']((?:https?:)?//[^\"']+)",
                       re.IGNORECASE)


def _paragraphs(nb: dict):
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            for para in "".join(cell.get("source", [])).split("\n\n"):
                yield para.strip()


def _load(path_or_nb) -> dict:
    if isinstance(path_or_nb, dict):
        return path_or_nb
    return json.loads(Path(path_or_nb).read_text(encoding="utf-8"))


def notebook_summary(path: str | Path) -> tuple[str, str]:
    """``(title, question)``: the first heading and the paragraph starting with **Question.** of a notebook."""
    title, question = Path(path).stem, ""
    for para in _paragraphs(_load(path)):
        if para.startswith("# ") and title == Path(path).stem:
            title = para[2:].splitlines()[0].strip()
        elif para.startswith("**Question.**") and not question:
            question = " ".join(para.replace("**Question.**", "").split())
            break
    return title, question


def notebook_finding(path_or_nb) -> tuple[str, str]:
    """``(heading, text)`` of a notebook's finding: the section headed ``## Finding: …`` and the text its code
    cells print (their stored stdout, line by line; cells tagged ``remove-cell`` excepted), up to the next markdown
    cell; ``("", "")`` when there is none."""
    cells = _load(path_or_nb).get("cells", [])
    for i, cell in enumerate(cells):
        source = "".join(cell.get("source", [])).strip()
        if cell.get("cell_type") != "markdown" or not source.startswith("## Finding"):
            continue
        heading = source.splitlines()[0][2:].strip().removeprefix("Finding:").strip()
        printed = []
        for code in cells[i + 1:]:
            if code.get("cell_type") == "markdown":
                break
            if set(code.get("metadata", {}).get("tags", [])) & set(REMOVE_CELL_TAGS):
                continue  # a check, not the finding
            printed += ["".join(o.get("text", [])) for o in code.get("outputs", []) if o.get("name") == "stdout"]
        return heading, "\n".join(line.rstrip() for line in "".join(printed).strip().splitlines())
    return "", ""


def external_urls(page: str) -> list[str]:
    """Every script, stylesheet, image or frame a page would fetch from another host."""
    return [a or b for a, b in _EXTERNAL.findall(page)]


def reader_cells(nb: dict) -> dict:
    """``nb`` without the cells tagged with one of :data:`REMOVE_CELL_TAGS` (checks kept out of the story).
    Modifies ``nb``."""
    nb["cells"] = [c for c in nb.get("cells", [])
                   if not set(c.get("metadata", {}).get("tags", [])) & set(REMOVE_CELL_TAGS)]
    return nb


def static_widgets(nb: dict) -> dict:
    """``nb`` with every widget view replaced by static HTML: a panel's snapshot (already in its output) or,
    for other widgets, their stored final state (an output whose widget ended hidden is dropped); the stored
    widget state is dropped too.  Modifies ``nb``."""
    states = nb.get("metadata", {}).pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in nb.get("cells", []):
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            view = data.pop(WIDGET_VIEW, None)
            if view is not None and "text/html" not in data:
                body = state_html(view.get("model_id", ""), states)
                if not body:  # a widget that ended hidden (tqdm's leave=False): nothing to show
                    continue
                data["text/html"] = wrap(body, panel=False)
                data.pop("text/plain", None)  # a widget's repr is no view for a reader
            kept.append(out)
        if "outputs" in cell:
            cell["outputs"] = kept
    return nb


@contextlib.contextmanager
def _env(**values: str):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def execute(path: str | Path, *, timeout: int = 600):
    """The notebook at ``path`` executed in a fresh kernel (in its folder) whose panels carry static snapshots."""
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor

    nb = nbformat.read(str(path), as_version=4)
    with _env(**{SNAPSHOT_ENV: "1"}):
        ExecutePreprocessor(timeout=timeout, store_widget_state=True).preprocess(
            nb, {"metadata": {"path": str(Path(path).resolve().parent)}})
    return nb


def to_html(nb, name: str) -> str:
    """``nb`` (executed) as one self-contained HTML page: code hidden, cells tagged ``remove-cell`` left out,
    widgets static."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", extra_loaders=[DictLoader({_TEMPLATE_NAME: _TEMPLATE})],
                            template_file=_TEMPLATE_NAME, exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    page, _ = exporter.from_notebook_node(static_widgets(reader_cells(nb)), resources={"metadata": {"name": name}})
    found = external_urls(page)
    if found:
        raise RuntimeError(f"report page {name} would load {found[0]} from the network")
    return page


def _write(path: Path, text: str) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


_INLINE = [(re.compile(r"`([^`]+)`"), r"<code>\1</code>"), (re.compile(r"\*\*([^*]+)\*\*"), r"<b>\1</b>"),
           (re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])"), r"<em>\1</em>")]


def inline_markdown(text: str) -> str:
    """``text`` escaped for HTML, with Markdown's inline code, bold and emphasis (what the questions use)."""
    out = html.escape(text, quote=False)
    for pattern, repl in _INLINE:
        out = pattern.sub(repl, out)
    return out


def summary_item(href: str, title: str, question: str, finding: tuple[str, str]) -> str:
    """One notebook in a list of links: its title as the link, its question, its finding (line breaks kept)."""
    heading, text = finding
    text_html = "<br>".join(html.escape(line) for line in text.splitlines())
    found = (f"<p class='finding'><b>Finding: {inline_markdown(heading)}.</b><br>{text_html}</p>"
             if heading or text else "")
    return (f"<li><a href='{html.escape(href)}'>{html.escape(title)}</a>"
            f"<p class='question'>{inline_markdown(question)}</p>{found}</li>")


INDEX_CSS = ("body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;line-height:1.4}"
             "li{margin:0 0 1.4em}li>a{font-size:1.2em;font-weight:600}p{margin:.3em 0}"
             ".finding{color:#123;background:#f3f6fa;border-left:3px solid #4a7ab0;padding:.3em .6em}"
             "code{background:#eee;padding:0 .2em;border-radius:2px}ul{padding-left:1.2em}")


def write_index(out_dir: str | Path, notebooks: list[str], executed: dict | None = None) -> Path:
    """``out_dir/index.html``: a link to each notebook's page with its title, question and finding (from
    ``executed[path]`` when given, otherwise from the notebook's stored outputs)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    items = [summary_item(Path(nb).with_suffix(".html").name, *notebook_summary(nb),
                   notebook_finding((executed or {}).get(nb) or nb)) for nb in notebooks]
    return _write(out / "index.html",
                  "<!doctype html><meta charset='utf-8'><title>kafkafmt workbench report</title>"
                  f"<style>{INDEX_CSS}</style><h1>kafkafmt workbench report</h1>"
                  "<p>Every notebook executed in a fresh kernel; each page shows the panels at their default "
                  f"settings.</p><ul>{''.join(items)}</ul>\n")


def build_report(out_dir: str | Path, notebooks: list[str], *, timeout: int = 600, log=print) -> Path:
    """Execute each notebook, write its page and then the index; returns the index's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    executed = {}
    for nb_path in notebooks:
        name = Path(nb_path).stem
        nb = execute(nb_path, timeout=timeout)
        executed[nb_path] = nb
        page = _write(out / f"{name}.html", to_html(nb, name))
        panels = page.read_text(encoding="utf-8").count(f'"{PANEL_CLASS}"')
        log(f"report: {page} ({panels} panels)")
    return write_index(out, notebooks, executed)


#: notebooks executed at once by :func:`build_notebooks`, each in its own kernel (a kernel mostly runs on one core)
NOTEBOOKS_AT_ONCE = 2


def build_notebooks(out_dir: str | Path, notebooks: list[str], *, timeout: int = 600, log=print,
                    at_once: int = NOTEBOOKS_AT_ONCE) -> list[Path]:
    """Each notebook executed in a fresh kernel (:func:`execute`) and written as a notebook ``out_dir/<name>.ipynb``
    for the documentation site: its code kept, its panels as their static snapshots and other widgets as their
    final state (:func:`static_widgets`), the cells tagged ``remove-cell`` left out.  A copy newer than its notebook
    is kept as it is (delete it, or touch the notebook, to execute it again).  ``at_once`` notebooks run side by
    side.  Returns the copies' paths, in the order of ``notebooks``."""
    from concurrent.futures import ThreadPoolExecutor

    import nbformat

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    targets = [out / f"{Path(nb_path).stem}.ipynb" for nb_path in notebooks]
    stale = [(nb_path, target) for nb_path, target in zip(notebooks, targets)
             if not (target.exists() and target.stat().st_mtime >= Path(nb_path).stat().st_mtime)]

    def one(nb_path: str, target: Path) -> None:
        nb = static_widgets(reader_cells(execute(nb_path, timeout=timeout)))
        _write(target, nbformat.writes(nb))
        log(f"report: {target}")

    # the snapshot mode set once for every kernel the pool starts (execute sets it too, for itself alone)
    with _env(**{SNAPSHOT_ENV: "1"}), ThreadPoolExecutor(max(1, at_once)) as pool:
        for f in [pool.submit(one, nb_path, target) for nb_path, target in stale]:
            f.result()  # the first notebook that failed, in order, raises here
    return targets


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m kafkafmt.viz.report", description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir", help="where the pages and index.html are written")
    p.add_argument("notebooks", nargs="+", help="the notebooks, in order")
    p.add_argument("--index-only", action="store_true", help="only write index.html (from the stored outputs)")
    p.add_argument("--notebooks", action="store_true",
                   help="write executed notebooks (OUT_DIR/<name>.ipynb, panels static) for the documentation site "
                        "instead of HTML pages; a copy newer than its notebook is kept")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    a = p.parse_args(argv)
    try:
        if a.notebooks:
            build_notebooks(a.out_dir, a.notebooks, timeout=a.timeout)
            print(f"report: {len(a.notebooks)} notebooks in {a.out_dir}")
            return 0
        index = (write_index(a.out_dir, a.notebooks) if a.index_only
                 else build_report(a.out_dir, a.notebooks, timeout=a.timeout))
    except Exception as e:  # one line, no traceback (a failing cell names itself in e)
        print(f"report: {e.__class__.__name__}: {' '.join(str(e).split())[:500]}", file=sys.stderr)
        return 1
    print(f"report: {index}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
