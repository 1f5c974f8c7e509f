"""Floor 7: plot, table, byte-view and widget-wiring helpers for the notebooks in ``notebooks/``.

Each notebook calls one module here (``anatomy``, ``timestamps``, ``timeindex``, ``retention``,
``costs``, ``upgrade``, ``idempotence``, ``negative``) for its data, :mod:`.plots` and
:mod:`.byteview` to show it, and :class:`.widgets.Panel` to wire controls to both.  Needs the
``notebooks`` extra (pandas, matplotlib, ipywidgets).
"""
from .widgets import Panel, one_line

__all__ = ["Panel", "one_line"]
