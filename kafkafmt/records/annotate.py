"""The annotated byte view: every byte of a record set labelled with the field it belongs to.

Built only from the wire definitions in :mod:`kafkafmt.layout` (fixed headers as
:class:`~kafkafmt.layout.Layout`, the v2 record as a :class:`~kafkafmt.layout.VarField` walk), so
what the view says about a field is exactly what the decoder reads.  Compressed payloads are one
span (their bytes are a codec stream); :func:`annotate` can descend into the decompressed bytes
with ``decompressed=True`` (positions then refer to the decompressed buffer).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

from .. import compression as _compression
from ..constants import LOG_OVERHEAD, RECORD_BATCH_OVERHEAD
from ..errors import KafkaFmtError
from ..layout import DEFAULT_BATCH, DEFAULT_RECORD, LEGACY_V0, LEGACY_V1, LEGACY_VALUE_LENGTH, Layout, VarField
from ..varint import decode_varint, decode_varlong
from . import MemoryRecords


@dataclass(frozen=True)
class Span:
    """Bytes ``[start, end)`` of the buffer hold ``path`` = ``value``."""

    start: int
    end: int
    path: str
    value: object
    doc: str
    source: str
    #: the buffer ``start``/``end`` refer to when it is not the input (a decompressed payload)
    data: bytes | None = None

    @property
    def size(self) -> int:
        return self.end - self.start


def layout_spans(layout: Layout, buf, pos: int, prefix: str) -> list[Span]:
    values = layout.unpack_from(buf, pos)
    return [Span(pos + f.offset, pos + f.offset + f.size, f"{prefix}.{f.name}", v, f.doc, f.source)
            for f, v in zip(layout.fields, values)]


def walk_var_fields(fields: tuple[VarField, ...], buf, pos: int, end: int, prefix: str) -> tuple[list[Span], int, dict]:
    """Interpret a VarField sequence at ``pos``; return spans, the end position, and the values read."""
    spans: list[Span] = []
    values: dict = {}
    for f in fields:
        start = pos
        if f.type == "varint":
            v, pos = decode_varint(buf, pos, end)
        elif f.type == "varlong":
            v, pos = decode_varlong(buf, pos, end)
        elif f.type == "int8":
            if pos >= end:
                raise KafkaFmtError(f"{prefix}.{f.name} runs past the end", position=pos)
            v, pos = buf[pos], pos + 1
        elif f.type.startswith(("bytes(", "string(")):
            n = values[f.type[f.type.index("(") + 1:-1]]
            if n < 0:
                v = None
            else:
                if pos + n > end:
                    raise KafkaFmtError(f"{prefix}.{f.name} runs past the end", position=pos)
                raw = bytes(buf[pos:pos + n])
                v = raw.decode("utf-8", "surrogateescape") if f.type.startswith("string") else raw
                pos += n
        elif f.type.startswith("repeat("):
            n = values[f.type[7:-1]]
            items = []
            for i in range(max(n, 0)):
                sub, pos, vals = walk_var_fields(f.children, buf, pos, end, f"{prefix}.{f.name}[{i}]")
                spans.extend(sub)
                items.append(vals)
            values[f.name] = items
            continue
        else:  # pragma: no cover - layout definitions are fixed
            raise AssertionError(f.type)
        values[f.name] = v
        spans.append(Span(start, pos, f"{prefix}.{f.name}", v, f.doc, f.source))
    return spans, pos, values


def annotate(buf, *, decompressed: bool = False) -> Iterator[Span]:
    """Yield a :class:`Span` for every field of every batch in ``buf``."""
    for i, batch in enumerate(MemoryRecords(buf).batches()):
        p = batch.position
        name = f"batch[{i}]"
        if batch.magic >= 2:
            yield from layout_spans(DEFAULT_BATCH, buf, p, name)
            start, end = p + RECORD_BATCH_OVERHEAD, batch.end
            if batch.is_compressed:
                yield Span(start, end, f"{name}.records", f"<{batch.compression.kafka_name} stream, {end - start} bytes>",
                           "the records, compressed as one stream", "DefaultRecordBatch")
                if not decompressed:
                    continue
                data = _compression.decompress(batch.compression, batch.raw[RECORD_BATCH_OVERHEAD:], magic=2)
                start, end, buf_r = 0, len(data), data
            else:
                buf_r = buf
            pos = start
            for j in range(max(batch.count, 0)):
                if pos >= end:
                    break
                spans, pos, _ = walk_var_fields(DEFAULT_RECORD, buf_r, pos, end, f"{name}.record[{j}]")
                yield from (spans if buf_r is buf else (replace(x, data=buf_r) for x in spans))
        else:
            layout = LEGACY_V1 if batch.magic == 1 else LEGACY_V0
            yield from layout_spans(layout, buf, p, name)
            m = batch.message
            pos = p + layout.size
            if m.key is not None:
                yield Span(pos, pos + len(m.key), f"{name}.key", bytes(m.key), "key bytes", layout.source)
                pos += len(m.key)
            yield from layout_spans(LEGACY_VALUE_LENGTH, buf, pos, name)
            pos += LEGACY_VALUE_LENGTH.size
            if m.value is not None:
                what = (f"<{batch.compression.kafka_name} stream of inner messages>" if batch.is_compressed
                        else bytes(m.value))
                yield Span(pos, pos + len(m.value), f"{name}.value", what,
                           "compressed inner message set" if batch.is_compressed else "value bytes", layout.source)
                if batch.is_compressed and decompressed:
                    yield from _inner_spans(batch, name)


def _inner_spans(batch, name: str) -> Iterator[Span]:
    """A wrapper's inner messages in its decompressed bytes.  Each stored offset is shown with the
    absolute offset a consumer computes from it (v1: relative to the wrapper, KIP-31), and a gap
    between consecutive absolute offsets is named: the holes the log cleaner leaves when it rebuilds a
    wrapper keeping its retained records' offsets (``MemoryRecords.filterTo``)."""
    data = _compression.decompress(batch.compression, bytes(batch.message.value), magic=batch.magic)
    previous = None
    for k, (entry, record) in enumerate(zip(MemoryRecords(data).batches(), batch.records())):
        layout = LEGACY_V1 if entry.magic == 1 else LEGACY_V0
        spans = layout_spans(layout, data, entry.position, f"{name}.inner[{k}]")
        note = f"{spans[0].value} (absolute offset {record.offset}"
        if previous is not None and record.offset - previous > 1:
            note += f"; hole: {previous + 1}..{record.offset - 1} absent"
        spans[0] = replace(spans[0], value=note + ")")
        previous = record.offset
        pos = entry.position + layout.size
        m = entry.message
        if m.key is not None:
            spans.append(Span(pos, pos + len(m.key), f"{name}.inner[{k}].key", bytes(m.key), "key bytes",
                              layout.source))
            pos += len(m.key)
        spans.extend(layout_spans(LEGACY_VALUE_LENGTH, data, pos, f"{name}.inner[{k}]"))
        pos += LEGACY_VALUE_LENGTH.size
        if m.value is not None:
            spans.append(Span(pos, pos + len(m.value), f"{name}.inner[{k}].value", bytes(m.value), "value bytes",
                              layout.source))
        yield from (replace(x, data=data) for x in spans)


def render(buf, *, width: int = 16, decompressed: bool = False) -> str:
    """A text view: offset, hex bytes, field path and value, one line per field (long fields cut).

    ``decompressed``: also the fields inside compressed payloads; their positions (marked ``+``) are
    in the decompressed bytes."""
    lines = []
    for s in annotate(buf, decompressed=decompressed):
        raw = bytes((buf if s.data is None else s.data)[s.start:s.end])
        hx = raw[:width].hex(" ") + (" …" if len(raw) > width else "")
        val = s.value
        if isinstance(val, bytes):
            val = val[:24].decode("utf-8", "replace") + ("…" if len(val) > 24 else "")
        where = f"{s.start:08x}" if s.data is None else f"+{s.start:07x}"
        lines.append(f"{where}  {hx:<{width * 3 + 2}} {s.path} = {val}")
    return "\n".join(lines)


__all__ = ["Span", "annotate", "render", "layout_spans", "walk_var_fields", "LOG_OVERHEAD"]
