"""Sphinx configuration of kafkafmt's documentation site (``make docs`` → ``build/docs/``).

The sources Sphinx reads are staged by ``docs/_ext/build_site.py`` into ``build/docs-src/``: this folder's pages
plus the tutorials, the notebooks executed once with their panels as static figures and tables
(``python -m kafkafmt.viz.report --notebooks``).  This file stays here (``sphinx -c docs``), so every path
below is relative to it.  Nothing of the site reaches off the machine: see the settings marked *offline*.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE / "_ext")]

import kafkafmt  # noqa: E402  (after the path above: the checkout's package, not another install)

project = "kafkafmt"
author = "the kafkafmt authors"
copyright = "the kafkafmt authors, Apache License 2.0"
release = version = kafkafmt.__version__

extensions = [
    "myst_nb",  # Markdown pages (MyST) and the tutorials' notebooks
    "sphinx_design",  # the front page's cards, as pandas' and PySpark's sites use
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",  # each CLI verb's options from its argparse parser
    "kafkafmt_tables",  # reference tables from kafkafmt's own data (docs/_ext/kafkafmt_tables.py)
]
html_static_path = [str(HERE / "_static")]
html_css_files = ["kafkafmt.css"]
exclude_patterns = ["_build", "_ext", "_data", "_templates", "**.ipynb_checkpoints"]
# .rst first: autosummary writes its generated API pages (reStructuredText) with the first suffix
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type", "misc.highlighting_failure"]

# --- MyST ---------------------------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3

# --- notebooks: rendered from their outputs, never executed here ----------------------------------------------
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # offline: no require.js / widget manager from a CDN (panels are static snapshots)
nb_merge_streams = True
nb_output_stderr = "remove"  # a kernel's stray warnings are no part of a tutorial

# --- API reference from the docstrings ----------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
# members defined in each module only (a package re-exporting its modules' names through __all__ would
# describe them twice)
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True,
                           "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports = ["pyspark"]  # the Spark modules document themselves without a JVM
napoleon_google_docstring = False
nitpicky = False

# --- HTML: pydata-sphinx-theme, offline ----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"kafkafmt {release}"
html_show_search_summary = False  # offline: the summary fetches each result page, which file:// cannot
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 7,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    # the tutorials' figures and tables take the page's width (no in-page contents beside them)
    "secondary_sidebar_items": {"how-to/*": ["page-toc"], "explanation/*": ["page-toc"], "about": ["page-toc"],
                                "index": [], "tutorials/*": [], "reference/*": [], "benchmarks/*": []},
}
# offline: without a colour mode the theme logs a console error on the first page (a template variable)
html_context = {"default_mode": "light"}
# single pages, and the widest tables: no section navigation beside them
html_sidebars = {"index": [], "about": [], "benchmarks/index": [], "reference/kafka-lines": [],
                 "reference/topic-keys": []}
html_last_updated_fmt = None
html_copy_source = False


class _EmptyGlobIsFine(logging.Filter):
    """A section's last toctree entry, ``*``, takes the pages other people add to its folder; when there are
    none yet it matches nothing, which is no problem (Sphinx's warning has no type to suppress it by)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "didn't match any documents" not in record.getMessage()


def setup(app):
    logging.getLogger("sphinx.sphinx.directives.other").addFilter(_EmptyGlobIsFine())
