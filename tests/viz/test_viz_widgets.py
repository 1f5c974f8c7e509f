"""The widget panel: controls recompute the data, controls adapt to each other, an invalid combination
clears the view and says why in one line, and the static rendering is the live view."""
import re

import ipywidgets as w
import pandas as pd
import pytest
from traitlets import TraitError

from kafkafmt.errors import CorruptRecordError
from kafkafmt.viz import Panel, one_line, plots
from kafkafmt.viz.report import notebook_summary, write_index


def _square(n, kind="plain"):
    if n < 0:
        raise CorruptRecordError("negative\nsize", position=7)
    return pd.DataFrame({"x": list(range(n + 1)), "y": [i * i for i in range(n + 1)], "kind": kind})


def _plot(df):
    return plots.line_plot(df, x="x", y="y", xlabel="x (count)", ylabel="y (count)"), df


def test_panel_recomputes_and_redraws_on_a_control_change():
    p = Panel({"n": w.IntSlider(value=2, min=-3, max=9)}, _square, _plot,
              caption=lambda df, v: f"{len(df)} rows for n = {v['n']}")
    first = p.view.value
    assert "<img class='kf-figure'" in first and "<table class='kf-table'" in first and "3 rows for n = 2" in first
    p.set(n=5)
    assert len(p.data) == 6 and p.view.value != first and "6 rows for n = 5" in p.view.value


def test_an_invalid_combination_clears_the_view_and_says_why_in_one_line():
    p = Panel({"n": w.IntSlider(value=2, min=-3, max=9)}, _square, _plot, caption=lambda df, v: "caption")
    p.set(n=-1)
    assert p.error == "CorruptRecordError: negative size" and p.data is None and p.items == ()
    assert "negative size" in p.view.value and "\n" not in p.view.value
    assert "<img" not in p.view.value and "<table" not in p.view.value and "caption" not in p.view.value
    p.set(n=1)
    assert p.error is None and "kf-error" not in p.view.value and "<img" in p.view.value


def test_adapt_offers_only_valid_options_and_replaces_an_invalid_value():
    def rule(v):
        return {"options": ["plain", "fancy"] if v["n"] >= 3 else ["plain"]}
    p = Panel({"n": w.IntSlider(value=4, min=0, max=9), "kind": w.Dropdown(options=["plain", "fancy"], value="fancy")},
              _square, lambda df: df, adapt={"kind": rule})
    assert p.values == {"n": 4, "kind": "fancy"}
    p.set(n=1)
    assert p.controls["kind"].options == ("plain",) and p.values["kind"] == "plain"
    assert set(p.data["kind"]) == {"plain"}  # the data follows the adapted control, never a stale value
    with pytest.raises(TraitError):
        p.set(kind="fancy")
    p.set(n=5)
    assert p.controls["kind"].options == ("plain", "fancy")


def test_adapt_narrows_a_range_and_clamps_the_value():
    p = Panel({"limit": w.IntSlider(value=9, min=1, max=9), "n": w.IntSlider(value=8, min=0, max=9)}, _square_n,
              lambda d: str(d), adapt={"n": lambda v: {"max": v["limit"], "disabled": v["limit"] < 2}})
    p.set(limit=3)
    assert p.controls["n"].max == 3 and p.values["n"] == 3 and p.data == 3 and not p.controls["n"].disabled
    p.set(limit=1)
    assert p.values["n"] == 1 and p.controls["n"].disabled
    with pytest.raises(ValueError, match="adapt names no control"):
        Panel({"n": w.IntSlider()}, _square_n, adapt={"m": lambda v: {}})


def _square_n(limit=None, n=0):
    return n


def test_render_static_is_the_live_view_with_title_and_settings():
    p = Panel({"n": w.IntSlider(value=2, min=-3, max=9, description="size"),
               "kind": w.Dropdown(options=[("Plain text", "plain")], description="kind")},
              _square, _plot, title="Squares", caption=lambda df, v: "the caption")
    page = p.render_static()
    assert p.view_html() in page and "Squares" in page and "size = 2 · kind = Plain text" in page
    p.set(n=-2)
    assert "negative size" in p.render_static() and "<img" not in p.render_static()


def test_figures_are_embedded_at_twice_their_display_size():
    fig = plots.bar_plot(["a", "b"], [0, 3], xlabel="label", ylabel="count (records)")
    html = plots.figure_html(fig)
    width, height = (int(x) for x in re.search(r"width='(\d+)' height='(\d+)'", html).groups())
    import base64
    import struct
    png = base64.b64decode(re.search(r"base64,([^']+)'", html).group(1))
    pw, ph = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (pw, ph) == (2 * width, 2 * height) and "max-width:100%" in html


def test_zero_bars_are_labelled_and_axes_must_be_named():
    fig = plots.bar_plot(["a", "b"], [0, 3], xlabel="label", ylabel="count (records)")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["0", "3"]
    with pytest.raises(ValueError, match="axis"):
        plots.bar_plot(["a"], [1], xlabel="", ylabel="count")


def test_points_plot_draws_no_lines():
    df = pd.DataFrame({"x": [1, 2, 3], "y": [3, 1, 2], "g": ["a", "a", "b"]})
    fig = plots.points_plot(df, x="x", y="y", hue="g", xlabel="x (s)", ylabel="y (count)")
    assert not fig.axes[0].lines and len(fig.axes[0].collections) == 2


def test_one_line_flattens_any_message():
    assert one_line(ValueError("a\n  b")) == "ValueError: a b"


def test_same_figure_same_png():
    df = _square(3)
    assert plots.figure_png(_plot(df)[0]) == plots.figure_png(_plot(df)[0])


def test_report_index_lists_titles_and_questions(tmp_path):
    nb = tmp_path / "09-x.ipynb"
    nb.write_text('{"cells": [{"cell_type": "markdown", "source": ["# 09 · X\\n", "\\n", "**Question.** Why?\\n"]}]}')
    assert notebook_summary(nb) == ("09 · X", "Why?")
    index = write_index(tmp_path / "out", [str(nb)]).read_text()
    assert "<a href='09-x.html'>09 · X</a>" in index and "Why?" in index
