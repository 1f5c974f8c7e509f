"""Floor 7: the notebooks' panels, plots, tables and byte views (``notebooks/``).

Each notebook calls one module here (``anatomy``, ``timestamps``, ``timeindex``, ``retention``,
``costs``, ``upgrade``, ``idempotence``, ``negative``; ``derived`` for the Spark pipeline's tables)
for its data and its panels (``*_panel()``: controls wired to a computation, a rendered view and a
caption by :class:`.widgets.Panel`); :mod:`.plots`, :mod:`.tables` and :mod:`.byteview` draw
figures, tables and bytes for people.  The checks of every finding drive the same panels in
``tests/viz/``.  Needs the ``notebooks`` extra (pandas, matplotlib, ipywidgets).
"""
from .widgets import Panel, one_line

__all__ = ["Panel", "one_line"]
