"""The annotated byte view as coloured HTML: every byte carries a hover title with its field, value,
meaning and the KIP or Kafka class that defines it.

Driven only by :func:`kafkafmt.annotate.annotate`, which walks :mod:`kafkafmt.layout` (the one
definition of each wire header), so the view labels exactly what the decoder reads.
"""
from __future__ import annotations

import html

from ..annotate import Span, annotate

#: field name → colour group (the last path component of a span, without an index)
GROUPS = {
    "framing": ("baseOffset", "offset", "length", "batchLength", "partitionLeaderEpoch", "magic", "crc",
                "attributes", "lastOffsetDelta", "size"),
    "time": ("timestamp", "baseTimestamp", "maxTimestamp", "timestampDelta"),
    "producer": ("producerId", "producerEpoch", "baseSequence"),
    "counts": ("recordsCount", "keyLength", "valueLength", "headersCount", "headerKeyLength", "headerValueLength",
               "offsetDelta"),
    "key": ("key", "headerKey"),
    "value": ("value", "headerValue", "records"),
}
COLOURS = {"framing": "#dbe9f6", "time": "#fde2c4", "producer": "#e3d7f0", "counts": "#e6e6e6",
           "key": "#d4edda", "value": "#fff3b0", "other": "#f8d7da"}


def field_name(path: str) -> str:
    """``batch[0].record[2].headers[0].headerKey`` → ``headerKey``."""
    last = path.rsplit(".", 1)[-1]
    return last.split("[", 1)[0]


def group_of(path: str) -> str:
    name = field_name(path)
    for group, names in GROUPS.items():
        if name in names:
            return group
    return "other"


def _value_text(v) -> str:
    if isinstance(v, bytes):
        shown = v[:32].decode("utf-8", "replace")
        return repr(shown) + ("…" if len(v) > 32 else "")
    return str(v)


def span_title(s: Span) -> str:
    """The hover text of a span: ``field = value`` / meaning / ``[source]``."""
    return f"{s.path} = {_value_text(s.value)}\n{s.doc}\n[{s.source}]"


def spans(buf, *, decompressed: bool = False) -> list[Span]:
    return list(annotate(buf, decompressed=decompressed))


def byte_view_html(buf, *, max_bytes: int = 512, per_line: int = 16) -> str:
    """Coloured hex of ``buf`` (up to ``max_bytes``), one ``<span title=…>`` per field, and a legend."""
    data = bytes(buf)
    owner: list[Span | None] = [None] * min(len(data), max_bytes)
    for s in spans(data):
        for i in range(s.start, min(s.end, len(owner))):
            owner[i] = s
    cells = []
    prev = None
    for i, s in enumerate(owner):
        if i and i % per_line == 0:
            cells.append("</span><br>" if prev is not None else "<br>")
            prev = None
        if s is not prev:
            if prev is not None:
                cells.append("</span>")
            if s is not None:
                colour = COLOURS[group_of(s.path)]
                cells.append(f"<span class='kf-field' data-path='{html.escape(s.path, quote=True)}' "
                             f"title='{html.escape(span_title(s), quote=True)}' style='background:{colour}'>")
            prev = s
        cells.append(f"{data[i]:02x} ")
    if prev is not None:
        cells.append("</span>")
    more = (f"<br><i>… {len(data) - max_bytes} more bytes not shown</i>" if len(data) > max_bytes else "")
    legend = " ".join(f"<span style='background:{c};padding:0 4px'>{g}</span>" for g, c in COLOURS.items())
    return (f"<div class='kf-bytes' style='font-family:monospace;line-height:1.6'>{''.join(cells)}{more}</div>"
            f"<div style='font-size:smaller;margin-top:4px'>{legend} — hover a byte for its field, value and source "
            f"({len(data)} bytes)</div>")


def field_rows(buf, *, decompressed: bool = False) -> list[dict]:
    """One row per field: position, size, path, value, meaning and source (for a table)."""
    return [{"start": s.start, "size": s.size, "field": s.path, "value": _value_text(s.value), "meaning": s.doc,
             "source": s.source} for s in spans(buf, decompressed=decompressed)]


__all__ = ["byte_view_html", "field_rows", "span_title", "group_of", "field_name", "COLOURS"]
