"""kafkafmt.viz.tables: tables for people (times, units, no machine values, nothing cut, outcomes coloured)."""
import html as _html
import re

import numpy as np
import pandas as pd

from kafkafmt.viz import tables

NOW = 1_700_000_000_000


def _cells(page):
    """The text of every ``<td>``, unescaped."""
    return [_html.unescape(c.replace("<br>", " / ")) for c in re.findall(r"<td[^>]*>(.*?)</td>", page)]


def test_no_machine_values_are_shown():
    df = pd.DataFrame({"a": [1.0, np.nan], "b": pd.array([None, 3], dtype="Int64"), "c": [None, "x"],
                       "big": [1.7e12, 2.5], "n": [1234567, 2]})
    page = tables.table_html(df)
    text = " ".join(_cells(page))
    for bad in ("NaN", "nan", "<NA>", "None", "e+"):
        assert bad not in text
    assert _cells(page) == ["1", "—", "—", "1,700,000,000,000", "1,234,567", "—", "3", "x", "2.5", "2"]


def test_times_are_iso_and_relative_with_the_raw_value_as_tooltip():
    page = tables.table_html([{"t": NOW - 5000, "ts": [NOW, -1]}], times={"t": NOW, "ts": None})
    cells = _cells(page)
    assert cells[0] == "2023-11-14 22:13:15.000 / (−5.0 s)"
    assert cells[1] == "2023-11-14 22:13:20.000 / no timestamp (-1)"
    assert f"title='{NOW - 5000} ms since 1970-01-01 UTC'" in page
    assert tables.iso_time(-86_400_000) == "1969-12-31 00:00:00.000"


def test_units_and_words():
    page = tables.table_html([{"size_bytes": 30198, "wait": 7_200_000, "skew": 1.5, "bytes_out": 12}],
                             units={"size_bytes": "bytes", "wait": "ms", "skew": "h"})
    assert _cells(page)[:3] == ["30.2 kB", "2.0 h", "1.5 h"]
    assert ">size<" in page and ">bytes sent to the client<" in page  # headers in words


def test_long_cells_wrap_and_keep_their_full_text():
    long = "validateMessagesAndAssignOffsetsCompressed(rebuilt: absolute inner offsets, recompressed)"
    page = tables.table_html([{"path": long, "k": 1}])
    assert long in _cells(page)  # never cut
    assert f"title='{long}'" in page and "overflow-wrap:break-word" in page
    assert "overflow-x:auto" in page  # the table scrolls in its box, not the page


def test_outcomes_are_coloured_and_confluence_markup_is_a_symbol():
    page = tables.table_html([{"seed": "(tick) Records this", "kafka": "(error) Error", "grid": "↓ v1, lost",
                               "outcome": "rejected"}], outcomes=None)
    cells = _cells(page)
    assert cells[:3] == ["✓ Records this", "✗ Error", "↓ v1, lost"]
    assert page.count(tables.OUTCOME_STYLE["good"][0]) == 1 and page.count(tables.OUTCOME_STYLE["bad"][0]) == 1
    assert page.count(tables.OUTCOME_STYLE["warn"][0]) == 1
    coloured = tables.table_html([{"outcome": "rejected"}, {"outcome": "appended"}], outcomes=("outcome",))
    assert tables.OUTCOME_STYLE["bad"][0] in coloured and tables.OUTCOME_STYLE["good"][0] in coloured


def test_headers_align_with_their_columns_and_an_index_becomes_a_column():
    df = pd.DataFrame({"n": [1, 22]}, index=pd.Index(["v0", "v1"], name="topic format"))
    page = tables.table_html(df)
    ths = re.findall(r"<th style='text-align:(\w+)[^>]*>([^<]*)</th>", page)
    assert ths == [("left", "topic format"), ("right", "n")]
    assert _cells(page) == ["v0", "1", "v1", "22"]


def test_hostile_text_is_escaped():
    page = tables.table_html([{"x": "<script>alert(1)</script>"}])
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_a_table_wider_than_a_page_comes_in_parts_led_by_its_keys():
    """Fifteen columns (notebook 05's pipeline table) cut at a page's edge: shown as parts of at most nine, each led
    by the key columns (the leading text columns, else the first), every cell once, the title once."""
    wide = pd.DataFrame([{"path": "fetch", "actor": "broker", **{f"n{i}": i for i in range(13)}}])
    page = tables.table_html(wide, title="wide")
    assert page.count("<table") == 2 and page.count("<caption") == 1
    assert _cells(page) == ["fetch", "broker", *map(str, range(7)), "fetch", "broker", *map(str, range(7, 13))]
    numeric_first = pd.DataFrame([{f"c{i}": i for i in range(12)}])
    assert [list(p.columns) for p in tables.column_parts(numeric_first)] == \
        [[f"c{i}" for i in range(9)], ["c0", *[f"c{i}" for i in range(9, 12)]]]
    assert tables.table_html(numeric_first.iloc[:, :9]).count("<table") == 1
