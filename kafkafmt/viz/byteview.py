"""The annotated byte view as HTML readable without a mouse: one aligned row per field (offset, the
field's bytes in hex, its name and value), as seed 002 draws a batch header, the format named in
words; each row's hover title adds the field's meaning and the KIP or Kafka class that defines it.

Driven only by :func:`kafkafmt.annotate.annotate`, which walks :mod:`kafkafmt.layout` (the one
definition of each wire header), so the view labels exactly what the decoder reads.
"""
from __future__ import annotations

import html
import re

from ..constants import (
    LEGACY_COMPRESSION_CODEC_MASK,
    LEGACY_TIMESTAMP_TYPE_MASK,
    V2_COMPRESSION_CODEC_MASK,
    V2_CONTROL_FLAG_MASK,
    V2_DELETE_HORIZON_FLAG_MASK,
    V2_TIMESTAMP_EXTENDED_FLAG_MASK,
    V2_TIMESTAMP_TYPE_MASK,
    V2_TRANSACTIONAL_FLAG_MASK,
    CompressionType,
)
from ..records.annotate import Span, annotate

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


#: the message formats in words (magic byte → what it is, which Kafka wrote it, which KIP made it)
FORMAT_WORDS = {
    0: "message format v0: a message set of single messages (Kafka 0.8-0.9, no timestamps)",
    1: "message format v1: messages with a timestamp (Kafka 0.10, KIP-32; relative offsets in compressed "
       "wrappers, KIP-31)",
    2: "message format v2: a record batch of varint-framed records with headers (Kafka 0.11+, KIP-98)",
}
#: short names for dropdowns
FORMAT_NAMES = {0: "v0 (0.8-0.9 messages)", 1: "v1 (0.10 messages + timestamp)", 2: "v2 (0.11+ record batch)"}


def format_words(magic: int) -> str:
    return FORMAT_WORDS.get(magic, f"message format v{magic}")


def field_label(path: str, *, single_batch: bool = True, unit: str = "batch") -> str:
    """``batch[0].record[2].headers[0].headerKey`` → ``record 2 › header 0 › headerKey`` (the batch
    prefix kept only when the buffer holds several, then named ``unit``: ``message`` for v0/v1)."""
    parts = path.split(".")
    if single_batch and parts[0] == "batch[0]":
        parts = parts[1:]
    elif parts[0].startswith("batch["):
        parts[0] = unit + parts[0][5:]
    out = []
    for p in parts:
        m = re.fullmatch(r"(\w+)\[(\d+)\]", p)
        out.append(f"{m.group(1).rstrip('s')} {m.group(2)}" if m else p)
    return " › ".join(out)


def attributes_words(value: int, magic: int) -> str:
    """A batch's or message's attributes in words, bit by bit (``DefaultRecordBatch`` / ``LegacyRecord``;
    bit 7 of v2 is KIP-228's experimental ``isTimestampExtended``)."""
    codec = value & (V2_COMPRESSION_CODEC_MASK if magic >= 2 else LEGACY_COMPRESSION_CODEC_MASK)
    words = [f"compression {CompressionType(codec).kafka_name if codec < 5 else f'unknown ({codec})'}"]
    if magic >= 1:
        mask = V2_TIMESTAMP_TYPE_MASK if magic >= 2 else LEGACY_TIMESTAMP_TYPE_MASK
        words.append("LogAppendTime" if value & mask else "CreateTime")
    if magic >= 2:
        flags = ((V2_TRANSACTIONAL_FLAG_MASK, "transactional"), (V2_CONTROL_FLAG_MASK, "control batch"),
                 (V2_DELETE_HORIZON_FLAG_MASK, "delete horizon set"),
                 (V2_TIMESTAMP_EXTENDED_FLAG_MASK, "isTimestampExtended (KIP-228)"))
        words += [w for mask, w in flags if value & mask]
    return ", ".join(words)


def _value_html(s: Span, magic: int | None) -> str:
    """The value, and in words below it: a timestamp's UTC time, a batch's attribute bits."""
    text = html.escape(_value_text(s.value))
    name = field_name(s.path)
    words = ""
    if name in ("timestamp", "baseTimestamp", "maxTimestamp") and isinstance(s.value, int):
        from .tables import iso_time
        words = "no timestamp" if s.value == -1 else f"{iso_time(s.value)} UTC"
    elif name == "attributes" and s.path.count(".") == 1 and isinstance(s.value, int) and magic is not None:
        words = attributes_words(s.value, magic)
    return text + (f"<br><span style='color:#555'>{html.escape(words)}</span>" if words else "")


def _group_row(prefix: str, single: bool, unit: str) -> str:
    """A heading row naming the structure the following fields belong to (``record 1``, ``header 0``)."""
    label = field_label(prefix + ".x", single_batch=single, unit=unit).rsplit(" › ", 1)[0]
    depth = prefix.count(".")
    return (f"<tr class='kf-group'><td></td><td colspan='3' style='padding:6px 8px 1px {8 + 14 * (depth - 1)}px;"
            f"font-weight:bold;color:#333;font-family:sans-serif'>{html.escape(label)}</td></tr>")


def _field_row(s: Span, data: bytes, max_bytes: int, per_line: int, magic: int | None) -> str:
    raw = data[s.start:min(s.end, max_bytes)]
    hexes = "<br>".join(raw[i:i + per_line].hex(" ") + " " for i in range(0, len(raw), per_line)) or "(empty) "
    depth = s.path.count(".")
    return (f"<tr class='kf-field' data-path='{html.escape(s.path, quote=True)}' "
            f"title='{html.escape(span_title(s), quote=True)}'>"
            f"<td style='text-align:right;color:#666;padding:1px 8px;vertical-align:top'>{s.start}</td>"
            f"<td class='kf-hex' style='background:{COLOURS[group_of(s.path)]};padding:1px 6px;vertical-align:top;"
            f"white-space:nowrap'>{hexes}</td>"
            f"<td class='kf-name' style='padding:1px 8px 1px {8 + 14 * (depth - 1)}px;vertical-align:top;"
            f"font-weight:600;white-space:nowrap'>{html.escape(field_name(s.path))}</td>"
            f"<td style='padding:1px 8px;vertical-align:top;overflow-wrap:break-word;min-width:12em;max-width:30em'>"
            f"{_value_html(s, magic)}</td></tr>")


def byte_view_html(buf, *, max_bytes: int = 512, per_line: int = 8) -> str:
    """The bytes as aligned rows, one per field, as seed 002 draws a batch header: offset, the field's
    bytes in hex (coloured by kind, ``per_line`` to a line), the field's name and value, under a heading
    row per record, header or message; the meaning and the KIP or Kafka class are the row's tooltip.
    At most ``max_bytes`` bytes are shown (and it says so)."""
    data = bytes(buf)
    spans_ = spans(data)
    magic_of = {s.path.split(".", 1)[0]: s.value for s in spans_ if field_name(s.path) == "magic"}
    magics = sorted(set(magic_of.values()))
    single = not any(s.path.startswith("batch[1].") for s in spans_)
    unit = "message" if magics and max(magics) < 2 else "batch"
    rows, shown, group = [], 0, "batch[0]" if single else None
    for s in spans_:
        if s.start >= max_bytes:
            break
        prefix = s.path.rsplit(".", 1)[0]
        if prefix != group:
            rows.append(_group_row(prefix, single, unit))
            group = prefix
        rows.append(_field_row(s, data, max_bytes, per_line, magic_of.get(s.path.split(".", 1)[0])))
        shown = min(s.end, max_bytes)
    more = (f"<div><i>… {len(data) - shown} more bytes not shown</i></div>" if shown < len(data) else "")
    heading = "; ".join(format_words(m) for m in magics) or "no batches"
    legend = " ".join(f"<span style='background:{c};padding:0 4px'>{g}</span>" for g, c in COLOURS.items())
    th = "padding:1px 8px;font-family:sans-serif"
    return (f"<div class='kf-bytes-title' style='margin:2px 0 4px'><b>{html.escape(heading)}</b> · "
            f"{len(data)} bytes</div>"
            f"<div class='kf-table-box' style='overflow-x:auto;max-width:100%'><table class='kf-bytes' "
            f"style='border-collapse:collapse;font-family:monospace;font-size:14px;line-height:1.45'>"
            f"<thead><tr><th style='text-align:right;{th}'>offset</th><th style='text-align:left;{th}'>bytes (hex)</th>"
            f"<th style='text-align:left;{th}'>field</th><th style='text-align:left;{th}'>value</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>{more}"
            f"<div style='font-size:smaller;margin-top:4px'>{legend} · hover a row for the field's meaning and the "
            f"Kafka class or KIP that defines it</div>")


def field_rows(buf, *, decompressed: bool = False) -> list[dict]:
    """One row per field: position, size, path, value, meaning and source (for a table)."""
    return [{"start": s.start, "size": s.size, "field": s.path, "value": _value_text(s.value), "meaning": s.doc,
             "source": s.source} for s in spans(buf, decompressed=decompressed)]


__all__ = ["attributes_words", "byte_view_html", "format_words", "field_label", "FORMAT_WORDS", "FORMAT_NAMES", "field_rows",
           "span_title", "group_of", "field_name", "COLOURS"]
