"""Tables for people: every notebook table goes through :func:`table_html` (or :func:`show`).

- times readable: epoch-millisecond columns (``times=``) as UTC ISO time with the time relative to
  a reference, the raw milliseconds in the cell's tooltip; durations and sizes with their units
  (``units=``);
- nothing truncated: long cells wrap and carry their full text as a tooltip; the table scrolls
  horizontally inside its own box instead of widening the page;
- no ``NaN``, ``<NA>``, ``None`` or ``1.7e+12``: missing values are a dash, numbers are grouped
  by thousands, floats rounded;
- headers aligned with their column (numbers right, text left), in words (``labels=``);
- a cell that is an outcome (``✓``, ``✗``, ``↓``, ``⚠``, ``ok``, ``rejected``, …) is coloured, and
  Confluence markup from the seeds (``(tick)``, ``(error)``, ``(warning)``) is shown as its symbol.
"""
from __future__ import annotations

import datetime as _dt
import html
import math
import numbers
import re
from typing import Mapping, Sequence

#: Confluence emoticons used in the seeds' tables → the symbol they stand for
CONFLUENCE = {"(tick)": "✓", "(/)": "✓", "(error)": "✗", "(x)": "✗", "(warning)": "⚠", "(!)": "⚠",
              "(minus)": "−", "(plus)": "+", "(i)": "ℹ", "(on)": "●", "(off)": "○"}
_CONFLUENCE_RE = re.compile("|".join(re.escape(k) for k in CONFLUENCE))
#: outcome colours (background, text) by kind
OUTCOME_STYLE = {"good": ("#e3f4e4", "#1b5e20"), "bad": ("#fde3e3", "#b71c1c"), "warn": ("#fff1d6", "#8a5300")}
_GOOD = ("✓", "ok", "appended", "kept", "yes", "agrees", "zero-copy")
_BAD = ("✗", "rejected", "error", "no", "fails")
_WARN = ("↓", "⚠", "rewritten", "converted", "partly")
#: column and metric names in words (tables' headers, plots' axes)
WORDS = {
    "bytes_read": "bytes read from the log", "bytes_out": "bytes sent to the client",
    "records_touched": "records re-encoded", "batches_rebuilt": "batches rebuilt",
    "batches_copied": "batches copied unchanged", "decompressions": "decompressions", "compressions": "recompressions",
    "bytes_decompressed": "bytes decompressed", "bytes_compressed": "bytes compressed",
    "cpu_ms": "CPU time (measured, ms)", "zero_copy": "zero-copy", "to_magic": "converted to",
    "fetch_version": "fetch version", "client_reads_up_to": "client reads up to",
    "zero_copy_segments": "segments served zero-copy", "error_segments": "segments answered with an error",
    "out_per_read": "bytes sent per byte read", "size_bytes": "size", "base_offset": "base offset",
}
#: the unit a metric is counted in (for an axis name)
METRIC_UNITS = {"bytes_read": "bytes", "bytes_out": "bytes", "bytes_decompressed": "bytes", "bytes_compressed": "bytes",
                "out_per_read": "ratio", "cpu_ms": "ms"}


def metric_axis(name: str) -> str:
    """``bytes_out`` → ``bytes sent to the client (bytes)``: a metric's name in words with its unit."""
    return f"{WORDS.get(name, name.replace('_', ' '))} ({METRIC_UNITS.get(name, 'count')})"


#: cells longer than this carry their full text as a tooltip too
TOOLTIP_AT = 40
MISSING = "—"


def confluence(text: str) -> str:
    """``(tick) stored`` → ``✓ stored``: the seeds' Confluence markup as symbols."""
    return _CONFLUENCE_RE.sub(lambda m: CONFLUENCE[m.group(0)], text)


def is_missing(v) -> bool:
    if v is None:
        return True
    try:
        import pandas as pd
        return bool(pd.isna(v)) if not isinstance(v, (list, tuple, bytes, str, dict)) else False
    except (TypeError, ValueError):
        return False


def iso_time(ms: int) -> str:
    """Epoch milliseconds as UTC ISO time (``2023-11-14 22:13:20.000``); -1 is Kafka's NO_TIMESTAMP."""
    if ms == -1:
        return "no timestamp (-1)"
    try:
        t = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=int(ms))
    except OverflowError:
        return f"{int(ms):,} ms"
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def duration(ms: float, *, signed: bool = False) -> str:
    """Milliseconds in the largest readable unit: ``850 ms``, ``1.8 s``, ``2.0 min``, ``2.0 h``, ``3.0 d``."""
    sign = ("+" if ms > 0 else "−" if ms < 0 else "±") if signed else ("−" if ms < 0 else "")
    a = abs(float(ms))
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if a >= size:
            return f"{sign}{a / size:,.1f} {unit}"
    return f"{sign}{a:,.0f} ms"


def size(n: float) -> str:
    """Bytes with a unit: ``812 B``, ``30.2 kB``, ``1.4 MB`` (decimal, as Kafka's metrics report)."""
    a = abs(float(n))
    for unit, s in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if a >= s:
            return f"{n / s:,.1f} {unit}"
    return f"{n:,.0f} B"


def number(v) -> str:
    """An int grouped by thousands; a float rounded (no exponent notation)."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    f = float(v)
    if math.isinf(f):
        return "∞" if f > 0 else "−∞"
    if f == int(f) and abs(f) < 1e15:
        return f"{int(f):,}"
    if abs(f) >= 100:
        return f"{f:,.0f}"
    return f"{f:,.3g}" if abs(f) >= 1 else f"{f:.3g}"


def outcome_kind(text: str) -> str | None:
    """``good``, ``bad`` or ``warn`` for a cell that reads as an outcome, else None."""
    t = text.strip().lower()
    for kind, words in (("bad", _BAD), ("warn", _WARN), ("good", _GOOD)):
        if any(t == w or t.startswith(w + " ") or (not w.isalpha() and t.startswith(w)) for w in words):
            return kind
    return None


def _format(v, col: str, *, times: Mapping[str, int | None], units: Mapping[str, str]) -> tuple[str, str]:
    """``(text, tooltip)`` of one cell (plain text; escaped by the caller)."""
    if isinstance(v, (list, tuple)):
        parts = [_format(x, col, times=times, units=units)[0].replace("\n", " ") for x in v]
        return ("\n" if col in times else ", ").join(parts) if parts else "(none)", ""
    if is_missing(v) or (isinstance(v, str) and not v.strip()):
        return MISSING, "none"
    if isinstance(v, bytes):
        return v.hex(" "), f"{len(v)} bytes"
    if col in times and isinstance(v, numbers.Number) and not isinstance(v, bool):
        ref = times[col]
        rel = "" if ref is None or v == -1 else f"\n({duration(int(v) - ref, signed=True)})"
        return iso_time(int(v)) + rel, f"{int(v)} ms since 1970-01-01 UTC"
    unit = units.get(col)
    if unit and isinstance(v, numbers.Number) and not isinstance(v, bool):
        if unit == "ms":
            return duration(v), f"{number(v)} ms"
        if unit == "±ms":
            return duration(v, signed=True), f"{number(v)} ms"
        if unit == "bytes":
            return size(v), f"{number(v)} bytes"
        return f"{number(v)} {unit}", ""
    if isinstance(v, (numbers.Number, bool)):
        return number(v), ""
    return confluence(str(v)), ""


def _header(col: str, labels: Mapping[str, str]) -> str:
    return labels.get(col, WORDS.get(col, str(col).replace("_", " ")))


#: a table wider than this is shown in parts (:func:`column_parts`): a notebook page of 1200 pixels holds about
#: nine columns before the browser scrolls the table and a reader sees the last ones cut at its edge
MAX_COLUMNS = 9


def column_parts(frame, max_columns: int = MAX_COLUMNS) -> list:
    """``frame`` in parts no wider than ``max_columns``, each led by its key columns (the leading text columns,
    such as release, conversion and codec; at least the first column), the other columns in order."""
    cols = list(frame.columns)
    if len(cols) <= max_columns:
        return [frame]
    keys = 0
    while keys < len(cols) and all(isinstance(v, str) or is_missing(v) for v in frame[cols[keys]]):
        keys += 1
    keys = keys if 1 <= keys <= max_columns // 2 else 1
    rest, step = cols[keys:], max_columns - keys
    return [frame[cols[:keys] + rest[i:i + step]] for i in range(0, len(rest), step)]


def table_html(df, *, labels: Mapping[str, str] | None = None, times: Mapping[str, int | None] | Sequence[str] = (),
               units: Mapping[str, str] | None = None, outcomes: Sequence[str] | None = None,
               title: str | None = None, max_cell_em: int = 26, max_columns: int = MAX_COLUMNS) -> str:
    """A styled HTML table of ``df`` (a DataFrame, or a list of dicts); a non-default index becomes the first columns.

    ``times``: epoch-ms columns (a mapping gives each a reference time for the relative part);
    ``units``: column → ``ms``, ``±ms``, ``bytes`` or a unit suffix; ``outcomes``: columns whose cells
    are coloured by :func:`outcome_kind` (default: every text cell starting with an outcome symbol).
    A table of more than ``max_columns`` columns is shown as tables of its :func:`column_parts`, one above the other.
    """
    import pandas as pd
    frame = df if isinstance(df, pd.DataFrame) else pd.DataFrame(list(df))
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.name is not None:
        frame = frame.reset_index()
    parts = column_parts(frame, max_columns)
    if len(parts) > 1:
        return "".join(table_html(part, labels=labels, times=times, units=units, outcomes=outcomes,
                                  title=title if n == 0 else None, max_cell_em=max_cell_em, max_columns=len(frame.columns))
                       for n, part in enumerate(parts))
    return _one_table(frame, labels=labels, times=times, units=units, outcomes=outcomes, title=title,
                      max_cell_em=max_cell_em)


def _one_table(frame, *, labels, times, units, outcomes, title, max_cell_em) -> str:
    from numpy import bool_ as np_bool
    labels, units = dict(labels or {}), dict(units or {})
    times = dict(times) if isinstance(times, Mapping) else {c: None for c in times}
    cols = [str(c) for c in frame.columns]
    rows = frame.astype(object).values.tolist()
    numeric = {c: c not in times and any(not is_missing(r[i]) for r in rows)
               and all((isinstance(r[i], numbers.Number) and not isinstance(r[i], (bool, np_bool))) or is_missing(r[i])
                       for r in rows) for i, c in enumerate(cols)}
    th = "".join(f"<th style='text-align:{'right' if numeric[c] else 'left'};vertical-align:bottom;padding:4px 8px;"
                 "border-bottom:2px solid #555;background:#f3f3f3;white-space:normal;"
                 f"min-width:{min(9.0, max(2.5, len(_header(c, labels)) / 2.4)):.1f}em'>"
                 f"{html.escape(_header(c, labels))}</th>" for c in cols)
    body = []
    for n, r in enumerate(rows):
        cells = []
        for i, c in enumerate(cols):
            text, tip = _format(r[i], c, times=times, units=units)
            if len(text) > TOOLTIP_AT and not tip and c not in times:
                tip = text
            kind = outcome_kind(text) if (outcomes is None and not numeric[c]
                                          and text[:1] in "✓✗↓⚠") or (outcomes and c in outcomes) else None
            bg, fg = OUTCOME_STYLE[kind] if kind else ("#fafafa" if n % 2 else "#ffffff", "inherit")
            style = (f"text-align:{'right' if numeric[c] else 'left'};vertical-align:top;padding:3px 8px;"
                     f"border-bottom:1px solid #ddd;background:{bg};color:{fg};"
                     f"white-space:{'nowrap' if numeric[c] or c in units or c in times else 'normal'};"
                     f"overflow-wrap:break-word;max-width:{max_cell_em}em;min-width:3em")
            title_attr = f" title='{html.escape(tip, quote=True)}'" if tip else ""
            cells.append(f"<td style='{style}'{title_attr}>{html.escape(text).replace(chr(10), '<br>')}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    caption = (f"<caption style='caption-side:top;text-align:left;font-weight:bold;padding:2px 0'>"
               f"{html.escape(title)}</caption>") if title else ""
    return ("<div class='kf-table-box' style='overflow-x:auto;max-width:100%'>"
            "<table class='kf-table' style='border-collapse:collapse;font-size:13px;line-height:1.35;"
            f"font-variant-numeric:tabular-nums;margin:2px 0'>{caption}<thead><tr>{th}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def show(df, **kwargs):
    """:func:`table_html` as a cell's output."""
    from IPython.display import HTML
    return HTML(table_html(df, **kwargs))


__all__ = ["table_html", "column_parts", "MAX_COLUMNS", "show",
           "WORDS", "metric_axis", "confluence", "iso_time", "duration", "size", "number",
           "outcome_kind", "CONFLUENCE", "MISSING"]
