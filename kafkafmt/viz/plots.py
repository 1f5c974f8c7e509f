"""Plot helpers for slides: one matplotlib figure per call, nothing computed here.

Every axis is named with its unit (the helpers require the labels), independent samples are drawn
as points (:func:`points_plot`), bars carry their values so a zero bar is labelled rather than
invisible (:func:`bar_plot`), and thresholds are shaded (``band=``).  Figures are shown at their real
size and sharp: :func:`figure_html` embeds a PNG rendered at twice the display size with the
display size set, :func:`show` does the same as a cell's output.

Figures are created through pyplot and closed at once, so a cell shows a figure only when it is
displayed (by a :class:`~kafkafmt.viz.widgets.Panel`, :func:`figure_html` or :func:`show`).
"""
from __future__ import annotations

import base64
import html
import io
from typing import Sequence

#: display size of a figure in CSS pixels per inch (matplotlib's default dpi); PNGs are rendered at 2x
DISPLAY_DPI = 100
SCALE = 2
GREEN, RED, AMBER, GREY = "#2e7d32", "#c62828", "#ef8f00", "#9e9e9e"


def new_figure(size=(7.2, 3.8)):
    """A figure and its axes in the workbench's size and resolution (closed to pyplot: shown only when returned)."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=size, layout="constrained", dpi=DISPLAY_DPI)
    plt.close(fig)
    return fig, ax


def label_axes(ax, *, title: str, xlabel: str, ylabel: str, integer_y: bool = False) -> None:
    """Title and name both axes (a plot without an axis name and unit is refused); ``integer_y``: whole-number
    ticks with thousands separators."""
    if not xlabel or not ylabel:
        raise ValueError("every axis needs a name and a unit")
    if integer_y:
        from matplotlib.ticker import FuncFormatter, MaxNLocator
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if ax.get_yscale() == "linear":
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))  # 16,000 rather than 16000
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)


def figure_png(fig, *, scale: int = SCALE) -> bytes:
    """A figure as PNG bytes at ``scale`` × its display size (no timestamp or version metadata,
    so equal figures give equal bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DISPLAY_DPI * scale, metadata={"Software": None})
    return buf.getvalue()


def display_size(fig) -> tuple[int, int]:
    """The figure's size on the page in CSS pixels."""
    w, h = fig.get_size_inches()
    return round(w * DISPLAY_DPI), round(h * DISPLAY_DPI)


def figure_html(fig) -> str:
    """An ``<img>`` of the figure: a 2x PNG shown at its display size (scaled down, never up)."""
    w, h = display_size(fig)
    title = fig.axes[0].get_title() if fig.axes else ""
    data = base64.b64encode(figure_png(fig)).decode("ascii")
    return (f"<img class='kf-figure' src='data:image/png;base64,{data}' width='{w}' height='{h}' "
            f"alt='{html.escape(title, quote=True)}' style='max-width:100%;height:auto'>")


def show(fig):
    """A figure as a cell's output: the 2x PNG with its display width (Jupyter shows it at that size)."""
    from IPython.display import Image
    w, h = display_size(fig)
    return Image(data=figure_png(fig), format="png", width=w, height=h)


def line_plot(df, *, x: str, y: str, xlabel: str, ylabel: str, hue: str | None = None, hue_label: str | None = None,
              title: str = "", logx: bool = False, marker: str = "o", hline: float | None = None):
    """One connected line per ``hue`` value (for a quantity that evolves along ``x``); returns the figure."""
    fig, ax = new_figure()
    groups = [(None, df)] if hue is None else list(df.groupby(hue, sort=False))
    for name, part in groups:
        ax.plot(part[x], part[y], marker=marker, label=None if name is None else str(name))
    if hline is not None:
        ax.axhline(hline, color="grey", linestyle="--", linewidth=1)
    if logx:
        from matplotlib.ticker import FormatStrFormatter
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    label_axes(ax, title=title, xlabel=xlabel, ylabel=ylabel)
    if hue is not None:
        ax.legend(title=hue_label or hue, fontsize="small")
    return fig


def points_plot(df, *, x: str, y: str, xlabel: str, ylabel: str, hue: str | None = None, hue_label: str | None = None,
                title: str = "", hline: float | None = None, hline_label: str = "", size: float = 24):
    """One point per row (independent samples: records, lookups), never joined by lines."""
    fig, ax = new_figure()
    groups = [(None, df)] if hue is None else list(df.groupby(hue, sort=False))
    markers = "os^Dv"
    for i, (name, part) in enumerate(groups):
        ax.scatter(part[x], part[y], s=size, alpha=0.7, marker=markers[i % len(markers)],
                   label=None if name is None else str(name))
    if hline is not None:
        ax.axhline(hline, color="grey", linestyle="--", linewidth=1, label=hline_label or None)
    label_axes(ax, title=title, xlabel=xlabel, ylabel=ylabel, integer_y=_integral(df[y]))
    if hue is not None or hline_label:  # below the axes: a cloud of points leaves no empty corner for it
        fig.legend(title=hue_label or hue, fontsize="small", loc="outside lower center", ncols=5)
    return fig


def _integral(values) -> bool:
    vals = [float(v) for v in values if v == v]
    return bool(vals) and all(v == int(v) for v in vals)


def _bar_label(v: float, fmt: str) -> str:
    return "0" if v == 0 else format(v, fmt)


def bar_plot(labels: Sequence[str], values: Sequence[float], *, xlabel: str, ylabel: str, title: str = "",
             colors: Sequence[str] | None = None, value_fmt: str = ",.0f", bar_text: Sequence[str] | None = None,
             band: tuple[float, float, str] | None = None, legend: Sequence[tuple[str, str]] = ()):
    """Vertical bars, one per label, each labelled with its value (or ``bar_text``) so zero bars show.

    ``band=(low, high, label)`` shades an accepted range of the value axis; ``legend`` is
    ``(colour, meaning)`` pairs for the bar colours.
    """
    from matplotlib.patches import Patch
    fig, ax = new_figure()
    values = [float(v) for v in values]
    bars = ax.bar([str(v) for v in labels], values, color=colors, edgecolor="#333", linewidth=0.6)
    texts = list(bar_text) if bar_text is not None else [_bar_label(v, value_fmt) for v in values]
    ax.bar_label(bars, labels=texts, padding=2, fontsize="small")
    handles = [Patch(color=c, label=m) for c, m in legend]
    if band is not None:
        low, high, label = band
        ax.axhspan(low, high, color=GREEN, alpha=0.12, zorder=0)
        handles.append(Patch(color=GREEN, alpha=0.12, label=label))
    if values and max(values) == min(values) == 0:
        ax.set_ylim(0, 1)
    else:
        ax.margins(y=0.15)
    ax.axhline(0, color="#333", linewidth=0.8)
    label_axes(ax, title=title, xlabel=xlabel, ylabel=ylabel, integer_y=_integral(values))
    ax.grid(False, axis="x")
    if len(labels) > 5 or max((len(str(v)) for v in labels), default=0) > 12:
        ax.tick_params(axis="x", labelrotation=20)
    if handles:
        ax.legend(handles=handles, fontsize="small", loc="best")
    return fig


def histogram(values: Sequence[float], *, xlabel: str, ylabel: str = "records", bins: int = 20, title: str = "",
              vline: float | None = None, vline_label: str = ""):
    """A histogram of ``values`` with an optional reference line."""
    fig, ax = new_figure()
    ax.hist(list(values), bins=bins, color="C0", edgecolor="white")
    if vline is not None:
        ax.axvline(vline, color="C3", linestyle="--", label=vline_label or None)
        if vline_label:
            ax.legend(fontsize="small")
    label_axes(ax, title=title, xlabel=xlabel, ylabel=ylabel)
    return fig


__all__ = ["new_figure", "label_axes", "line_plot", "points_plot", "bar_plot", "histogram", "figure_png", "figure_html", "show",
           "display_size", "GREEN", "RED", "AMBER", "GREY"]
