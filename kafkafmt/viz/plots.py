"""Plot helpers: one matplotlib figure per call, from plain rows or a DataFrame, nothing computed here.

Figures are created through pyplot (so Jupyter's inline backend renders them) and closed at once,
so a cell shows a figure only when it is displayed (by a :class:`~kafkafmt.viz.widgets.Panel` or as
a cell's value).
"""
from __future__ import annotations

from typing import Sequence


def _figure(size=(6.4, 3.6)):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    plt.close(fig)
    return fig, ax


def line_plot(df, *, x: str, y: str, hue: str | None = None, title: str = "", xlabel: str | None = None,
              ylabel: str | None = None, logx: bool = False, marker: str = "o", hline: float | None = None):
    """One line per ``hue`` value of ``df`` (a pandas DataFrame); returns the figure."""
    fig, ax = _figure()
    groups = [(None, df)] if hue is None else list(df.groupby(hue, sort=False))
    for name, part in groups:
        ax.plot(part[x], part[y], marker=marker, label=None if name is None else str(name))
    if hline is not None:
        ax.axhline(hline, color="grey", linestyle="--", linewidth=1)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title)
    if hue is not None:
        ax.legend(title=hue, fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def bar_plot(labels: Sequence[str], values: Sequence[float], *, title: str = "", ylabel: str = "",
             colors: Sequence[str] | None = None):
    """Vertical bars, one per label."""
    fig, ax = _figure()
    ax.bar([str(v) for v in labels], list(values), color=colors)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.tick_params(axis="x", labelrotation=30)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def histogram(values: Sequence[float], *, bins: int = 20, title: str = "", xlabel: str = "", ylabel: str = "count",
              vline: float | None = None, vline_label: str = ""):
    """A histogram of ``values`` with an optional reference line."""
    fig, ax = _figure()
    ax.hist(list(values), bins=bins, color="C0", edgecolor="white")
    if vline is not None:
        ax.axvline(vline, color="C3", linestyle="--", label=vline_label or None)
        if vline_label:
            ax.legend(fontsize="small")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return fig


__all__ = ["line_plot", "bar_plot", "histogram"]
