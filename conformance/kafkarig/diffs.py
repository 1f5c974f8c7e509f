"""Say where two record sets first differ: byte position, batch, field (via :mod:`kafkafmt.layout`)."""
from __future__ import annotations

from kafkafmt.constants import LEGACY_COMPRESSION_CODEC_MASK, RECORD_BATCH_OVERHEAD, V2_COMPRESSION_CODEC_MASK
from kafkafmt.errors import KafkaFmtError
from kafkafmt.layout import DEFAULT_BATCH, OFFSET_INDEX_ENTRY, TIME_INDEX_ENTRY, Layout
from kafkafmt.records.walker import FILE, BatchWalker, header_layout


def first_difference(a: bytes, b: bytes) -> int | None:
    """Index of the first differing byte (the shorter length if one is a prefix), None if equal."""
    if a == b:
        return None
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _field_at(layout: Layout, rel: int):
    for f in layout.fields:
        if f.offset <= rel < f.offset + f.size:
            return f
    return None


def _batches(buf: bytes):
    """(position, size, magic) of every whole entry, by log framing only (``FileLogInputStream`` rules,
    which read any magic), and where they end; never raises: an impossible size ends the walk."""
    walk = BatchWalker(buf, rules=FILE)
    out = []
    try:
        out.extend((span.position, span.size, span.magic) for span in walk)
    except KafkaFmtError:
        pass
    return out, walk.position


def describe_position(buf: bytes, pos: int) -> str:
    """Which batch, and which field of it, holds byte ``pos`` of a record set."""
    batches, end = _batches(buf)
    for i, (start, size, magic) in enumerate(batches):
        if not start <= pos < start + size:
            continue
        rel = pos - start
        head = f"batch #{i} (magic {magic}, at byte {start}, {size} bytes)"
        if magic >= 2:
            if rel < RECORD_BATCH_OVERHEAD:
                f = _field_at(DEFAULT_BATCH, rel)
                return f"{head}, header field {f.name} (batch byte {rel})"
            codec = DEFAULT_BATCH.get(buf, start, "attributes") & V2_COMPRESSION_CODEC_MASK
            if codec:
                return f"{head}, compressed records area (byte {rel - RECORD_BATCH_OVERHEAD} of the payload)"
            return f"{head}, records area (byte {rel - RECORD_BATCH_OVERHEAD}){_v2_record_at(buf, start, size, pos)}"
        layout = header_layout(magic)
        if rel < layout.size:
            f = _field_at(layout, rel)
            return f"{head}, field {f.name} (entry byte {rel})"
        codec = layout.get(buf, start, "attributes") & LEGACY_COMPRESSION_CODEC_MASK
        what = "compressed wrapper value" if codec else "key/value bytes"
        return f"{head}, {what} (entry byte {rel})"
    if pos >= end:
        return f"after the last whole batch (byte {pos}; {len(buf) - end} trailing bytes)"
    return f"byte {pos}"


def _v2_record_at(buf: bytes, start: int, size: int, pos: int) -> str:
    try:
        from kafkafmt.records import read_batch
        batch = read_batch(buf, start, start + size)
        prev = None
        for j, r in enumerate(batch.records()):
            if r.position is not None and r.position > pos:
                break
            prev = (j, r)
        if prev is not None:
            j, r = prev
            return f", record #{j} (offset {r.offset}, byte {pos - r.position} of the record)"
    except (KafkaFmtError, Exception):  # explanation only: never fail here
        pass
    return ""


def _field_values(a: bytes, b: bytes, pos: int) -> str:
    """For a fixed header field at ``pos`` in both buffers, show the two decoded values."""
    batches, _ = _batches(a)
    for start, size, magic in batches:
        if start <= pos < start + size:
            rel = pos - start
            layout = header_layout(magic)
            if rel < layout.size:
                f = _field_at(layout, rel)
                try:
                    va = layout.get(a, start, f.name)
                    vb = layout.get(b, start, f.name)
                    return f": {f.name} {va} vs {vb}"
                except Exception:
                    return ""
    return ""


def explain_records_diff(a: bytes, b: bytes, label_a: str = "broker", label_b: str = "kafkafmt") -> str | None:
    """One sentence on the first difference between two record sets, or None if they are equal."""
    pos = first_difference(a, b)
    if pos is None:
        return None
    where = describe_position(a if pos < len(a) else b, pos)
    if pos >= len(a) or pos >= len(b):
        return (f"{label_a} has {len(a)} bytes, {label_b} {len(b)}; identical up to byte {pos} "
                f"(next: {where})")
    vals = _field_values(a, b, pos)
    return (f"first differing byte at {pos} ({label_a} {a[pos]:#04x} vs {label_b} {b[pos]:#04x}) in "
            f"{where}{vals}; sizes {len(a)} vs {len(b)}")


def explain_index_diff(a: bytes, b: bytes, *, time_index: bool, label_a: str = "broker",
                       label_b: str = "kafkafmt") -> str | None:
    pos = first_difference(a, b)
    if pos is None:
        return None
    layout = TIME_INDEX_ENTRY if time_index else OFFSET_INDEX_ENTRY
    n = pos // layout.size
    f = _field_at(layout, pos % layout.size)

    def entry(buf):
        if (n + 1) * layout.size <= len(buf):
            return tuple(layout.unpack_from(buf, n * layout.size))
        return None

    return (f"first differing byte at {pos}: entry #{n} field {f.name if f else '?'}: {label_a} {entry(a)} vs "
            f"{label_b} {entry(b)}; sizes {len(a)} vs {len(b)}")


def explain_lines_diff(a: list[str], b: list[str], label_a: str = "kafka-dump-log",
                       label_b: str = "kafkafmt dump") -> str | None:
    if a == b:
        return None
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            col = first_difference(a[i].encode(), b[i].encode())
            return (f"line {i + 1} differs at column {col}:\n      {label_a}: {a[i]}\n      {label_b}: {b[i]}")
    longer, name = (a, label_a) if len(a) > len(b) else (b, label_b)
    return f"{name} prints {abs(len(a) - len(b))} more line(s), first: {longer[min(len(a), len(b))]}"


__all__ = ["first_difference", "describe_position", "explain_records_diff", "explain_index_diff",
           "explain_lines_diff"]


def _payload(batch, buf: bytes) -> bytes:
    from kafkafmt import compression
    if batch.magic >= 2:
        raw = bytes(buf[batch.position + RECORD_BATCH_OVERHEAD:batch.end])
        return compression.decompress(batch.compression, raw, magic=2)
    return compression.decompress(batch.compression, bytes(batch.message.value), magic=batch.magic)


def codec_normalized_diff(a: bytes, b: bytes) -> str | None:
    """Compare two record sets whose compressed payloads may be encoded differently.

    Batches must match one to one; an unequal pair must have the same codec, the same header
    fields except ``length``/``size`` and ``crc``, and identical *decompressed* payloads.
    Returns None if so, else the first difference.
    """
    from kafkafmt.records import MemoryRecords
    ba, bb = list(MemoryRecords(a).batches()), list(MemoryRecords(b).batches())
    if len(ba) != len(bb):
        return f"{len(ba)} vs {len(bb)} batches"
    for i, (x, y) in enumerate(zip(ba, bb)):
        rx, ry = bytes(x.raw), bytes(y.raw)
        if rx == ry:
            continue
        if x.magic != y.magic or x.compression != y.compression or not x.is_compressed:
            return f"batch #{i}: {explain_records_diff(rx, ry)}"
        layout = header_layout(x.magic)
        skip = {"length", "size", "crc"}
        for f in layout.fields:
            if f.name in skip:
                continue
            if layout.get(rx, 0, f.name) != layout.get(ry, 0, f.name):
                return f"batch #{i} header field {f.name}: {layout.get(rx, 0, f.name)} vs {layout.get(ry, 0, f.name)}"
        px, py = _payload(x, a), _payload(y, b)
        if px != py:
            pos = first_difference(px, py)
            return f"batch #{i}: decompressed payloads differ at byte {pos} ({len(px)} vs {len(py)} bytes)"
        if not x.is_valid() or not y.is_valid():
            return f"batch #{i}: invalid CRC (valid: {x.is_valid()} vs {y.is_valid()})"
    return None
