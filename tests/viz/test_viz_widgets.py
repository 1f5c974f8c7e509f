"""The widget panel: controls recompute the data, views redraw, bad combinations become one line."""
import ipywidgets as w
import pandas as pd

from kafkafmt.errors import CorruptRecordError
from kafkafmt.viz import Panel, one_line, plots
from kafkafmt.viz.report import notebook_summary, write_index


def _square(n):
    if n < 0:
        raise CorruptRecordError("negative\nsize", position=7)
    return pd.DataFrame({"x": list(range(n + 1)), "y": [i * i for i in range(n + 1)]})


def test_panel_recomputes_and_redraws_on_a_control_change():
    p = Panel({"n": w.IntSlider(value=2, min=-3, max=9)}, _square,
              lambda df: (plots.line_plot(df, x="x", y="y"), df))
    image, table = p.views.children
    first_png, first_html = image.value, table.value
    assert first_png[:8] == b"\x89PNG\r\n\x1a\n" and "<table" in first_html
    p.set(n=5)
    assert len(p.data) == 6 and p.views.children == (image, table)
    assert image.value != first_png and table.value != first_html


def test_bad_input_is_one_line_and_keeps_the_last_good_view():
    p = Panel({"n": w.IntSlider(value=2, min=-3, max=9)}, _square, lambda df: df)
    good = p.views.children[0].value
    p.set(n=-1)
    assert p.error == "CorruptRecordError: negative size"
    assert "\n" not in p.message.value and "negative size" in p.message.value
    assert p.views.children[0].value == good and len(p.data) == 3
    p.set(n=1)
    assert p.error is None and p.message.value == ""


def test_one_line_flattens_any_message():
    assert one_line(ValueError("a\n  b")) == "ValueError: a b"


def test_same_figure_same_png():
    df = _square(3)
    from kafkafmt.viz.widgets import figure_png
    assert figure_png(plots.line_plot(df, x="x", y="y")) == figure_png(plots.line_plot(df, x="x", y="y"))


def test_report_index_lists_titles_and_questions(tmp_path):
    nb = tmp_path / "09-x.ipynb"
    nb.write_text('{"cells": [{"cell_type": "markdown", "source": ["# 09 · X\\n", "\\n", "**Question.** Why?\\n"]}]}')
    assert notebook_summary(nb) == ("09 · X", "Why?")
    index = write_index(tmp_path / "out", [str(nb)]).read_text()
    assert "<a href='09-x.html'>09 · X</a>" in index and "Why?" in index
