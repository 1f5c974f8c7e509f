"""``python -m kafkafmt.viz.report OUT_DIR NOTEBOOK...``: write ``OUT_DIR/index.html`` linking the
executed notebooks' HTML pages (``make report`` converts them first), each with its title and question."""
from __future__ import annotations

import argparse
import html
import json
from pathlib import Path


def notebook_summary(path: str | Path) -> tuple[str, str]:
    """``(title, question)``: the first heading and the paragraph starting with **Question.** of a notebook."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    title, question = Path(path).stem, ""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        text = "".join(cell.get("source", []))
        for para in text.split("\n\n"):
            para = para.strip()
            if para.startswith("# ") and title == Path(path).stem:
                title = para[2:].splitlines()[0].strip()
            elif para.startswith("**Question.**") and not question:
                question = " ".join(para.replace("**Question.**", "").split())
        if question:
            break
    return title, question


def write_index(out_dir: str | Path, notebooks: list[str]) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    items = []
    for nb in notebooks:
        title, question = notebook_summary(nb)
        page = Path(nb).with_suffix(".html").name
        items.append(f"<li><a href='{html.escape(page)}'>{html.escape(title)}</a><br><small>{html.escape(question)}"
                     "</small></li>")
    index = out / "index.html"
    tmp = index.with_suffix(".html.tmp")
    tmp.write_text("<!doctype html><meta charset='utf-8'><title>kafkafmt workbench report</title>"
                   "<h1>kafkafmt workbench report</h1><p>Every notebook executed in a fresh kernel.</p>"
                   f"<ul>{''.join(items)}</ul>\n", encoding="utf-8")
    tmp.replace(index)
    return index


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m kafkafmt.viz.report", description=__doc__)
    p.add_argument("out_dir", help="where the notebooks' HTML pages are (index.html is written there)")
    p.add_argument("notebooks", nargs="+", help="the notebooks, in order")
    a = p.parse_args(argv)
    print(f"report: {write_index(a.out_dir, a.notebooks)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
