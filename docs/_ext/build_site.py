"""``python docs/_ext/build_site.py [BUILD_DIR]``: the documentation site, built into ``BUILD_DIR/docs/``.

``make docs`` runs it (``BUILD_DIR`` is ``build``).

Three steps, each redoing only what changed:

1. :func:`execute_notebooks`: each ``notebooks/*.ipynb`` executed once in a fresh kernel with the panels'
   snapshot mode on, into ``BUILD_DIR/docs-notebooks/`` (:func:`kafkafmt.viz.report.build_notebooks`: widget
   views replaced by the panels' static figures and tables; a copy newer than its notebook is kept);
2. :func:`stage`: Sphinx reads one folder, so ``docs/`` and those notebooks are staged into
   ``BUILD_DIR/docs-src/``;
3. :func:`sphinx_build`: Sphinx (configuration ``docs/conf.py``) writes ``BUILD_DIR/docs/``; the notebooks are
   rendered from their outputs, never executed there.

:func:`stage` copies ``docs/`` (but its configuration, extensions and templates, which Sphinx reads from ``docs/``
itself) and the executed notebooks (as ``tutorials/<name>.ipynb``) into ``SRC_DIR``, touching only files whose
content changed, so Sphinx rebuilds only what changed; a staged file whose source is gone is removed (the API
pages that autosummary generates, under ``generated/`` folders, are Sphinx's own: only those of a module that no
longer exists are removed).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's kafkafmt
#: what Sphinx takes from docs/ itself (``sphinx -c docs``), never staged
NOT_STAGED = {"conf.py", "_ext", "_templates", "_static", "_data"}


def sources(notebooks: Path) -> dict[Path, Path]:
    """``{relative path in the staged folder: file to copy}``."""
    found = {}
    for path in sorted(DOCS.rglob("*")):
        rel = path.relative_to(DOCS)
        if path.is_file() and rel.parts[0] not in NOT_STAGED and "__pycache__" not in rel.parts:
            found[rel] = path
    for nb in sorted(notebooks.glob("*.ipynb")):
        found[Path("tutorials") / nb.name] = nb
    return found


def stage(notebooks: Path, out: Path) -> int:
    """Copy :func:`sources` into ``out``; returns how many files were written or removed."""
    wanted = sources(notebooks)
    changed = 0
    for rel, src in wanted.items():
        dest = out / rel
        if dest.is_file() and dest.read_bytes() == src.read_bytes():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.copyfile(src, tmp)
        tmp.replace(dest)
        changed += 1
    for path in sorted(out.rglob("*")) if out.exists() else ():
        rel = path.relative_to(out)
        if not path.is_file() or rel in wanted:
            continue
        if "generated" not in rel.parts or not _module_exists(path.stem):
            path.unlink()  # a page whose source is gone, or autosummary's page of a module that is gone
            changed += 1
    return changed


def _module_exists(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def execute_notebooks(out: Path, *, log=print) -> list[Path]:
    """Every notebook of ``notebooks/`` executed with static panels into ``out`` (kept when up to date)."""
    from kafkafmt.viz.report import build_notebooks

    notebooks = sorted(str(p) for p in (ROOT / "notebooks").glob("*.ipynb"))
    return build_notebooks(out, notebooks, log=log)


def sphinx_build(src: Path, out: Path, *, quiet: bool = True) -> int:
    """Sphinx's HTML builder over the staged ``src`` into ``out``; returns its exit status, which is not 0 when
    Sphinx warned (``-W``: a docstring's broken markup, a link to a page that is not there, an ambiguous
    reference), after reporting every warning of the build (``--keep-going``)."""
    from sphinx.cmd.build import build_main

    args = ["-b", "html", "-c", str(DOCS), "-j", "auto", "-W", "--keep-going", str(src), str(out)]
    return build_main((["-q"] if quiet else []) + args)


def build(build_dir: Path, *, log=print) -> Path:
    """The whole site under ``build_dir``: returns ``build_dir/docs/index.html``."""
    notebooks, src, out = build_dir / "docs-notebooks", build_dir / "docs-src", build_dir / "docs"
    execute_notebooks(notebooks, log=log)
    log(f"docs: {stage(notebooks, src)} files staged in {src}")
    if sphinx_build(src, out) != 0:
        raise RuntimeError("sphinx-build failed or warned (its warnings are above)")
    return out / "index.html"


def main(argv: list[str]) -> int:
    build_dir = Path(argv[0]) if argv else ROOT / "build"
    try:
        index = build(build_dir)
    except Exception as e:  # one line, no traceback (a failing notebook cell names itself in e)
        print(f"docs: {e.__class__.__name__}: {' '.join(str(e).split())[:500]}", file=sys.stderr)
        return 1
    print(f"docs: {index}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
