"""The annotated byte view: one aligned row per field (offset, bytes, name, value) from kafkafmt.layout,
the format in words, hover titles, escaping."""
import html as html_module
import re

from kafkafmt.layout import DEFAULT_BATCH, LEGACY_V1
from kafkafmt.records import MemoryRecordsBuilder
from kafkafmt.viz import byteview
from kafkafmt.viz.anatomy import record_set


def _titled_bytes(html):
    """(title, hex bytes) per field row of the view."""
    return re.findall(r"<tr class='kf-field' data-path='[^']*' title='([^']*)'>.*?<td class='kf-hex'[^>]*>"
                      r"((?:[0-9a-f]{2} |<br>)+)</td>", html)


def _rows(html):
    """(offset, heading above it, field name, value) per field row, tags stripped."""
    out, heading = [], ""
    for kind, row in re.findall(r"<tr class='kf-(field|group)'(.*?)</tr>", html, re.S):
        cells = [html_module.unescape(re.sub(r"<br>", " / ", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        cells = [re.sub(r"<[^>]+>", "", c) for c in cells]
        if kind == "group":
            heading = cells[1]
        else:
            out.append((int(cells[0]), heading, cells[2], cells[3]))
    return out


def test_every_byte_of_a_v2_batch_belongs_to_one_field():
    data = record_set(2, "none", 3, 1)
    html = byteview.byte_view_html(data, max_bytes=len(data))
    shown = "".join(b for _, b in _titled_bytes(html)).replace("<br>", "").split()
    assert bytes.fromhex("".join(shown)) == data  # nothing unlabelled, nothing twice, in order


def test_hover_title_names_field_value_meaning_and_source_from_the_layout():
    data = record_set(2, "none", 1, 0)
    titles = [t for t, _ in _titled_bytes(byteview.byte_view_html(data))]
    magic = next(t for t in titles if t.startswith("batch[0].magic"))
    field = next(f for f in DEFAULT_BATCH.fields if f.name == "magic")
    assert magic.splitlines() == ["batch[0].magic = 2", field.doc, f"[{field.source}]"]


def test_legacy_message_fields_and_groups():
    b = MemoryRecordsBuilder(1, "none")
    b.append(1_700_000_000_000, b"k", b"v")
    rows = byteview.field_rows(b.build())
    assert [r["field"] for r in rows][:len(LEGACY_V1.fields)] == [f"batch[0].{f.name}" for f in LEGACY_V1.fields]
    assert byteview.group_of("batch[0].timestamp") == "time"
    assert byteview.group_of("batch[0].record[3].headers[1].headerKey") == "key"
    assert byteview.field_name("batch[0].record[3].headers[1].headerKey") == "headerKey"


def test_hostile_values_are_escaped():
    b = MemoryRecordsBuilder(2, "none")
    b.append(1, b"'><script>alert(1)</script>", b"v", [("h'\"<", b"x")])
    html = byteview.byte_view_html(b.build())
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_long_input_is_cut_and_says_so():
    data = record_set(2, "none", 6, 3, value_size=100)
    html = byteview.byte_view_html(data, max_bytes=64)
    assert f"{len(data) - 64} more bytes not shown" in html
    shown = "".join(b for _, b in _titled_bytes(html)).replace("<br>", "").split()
    assert bytes.fromhex("".join(shown)) == data[:64]


def test_field_names_are_on_the_rows_aligned_with_their_offsets():
    data = record_set(2, "none", 1, 1)
    rows = _rows(byteview.byte_view_html(data))
    head = [(o, f) for o, _, f, _ in rows[:5]]
    assert head == [(0, "baseOffset"), (8, "length"), (12, "partitionLeaderEpoch"), (16, "magic"), (17, "crc")]
    assert (85, "record 0 › header 0", "headerKey", "h0") in rows
    assert next(v for _, _, f, v in rows if f == "baseTimestamp") == "1700000000000 / 2023-11-14 22:13:20.000 UTC"
    assert next(v for _, _, f, v in rows if f == "attributes") == "0 / compression none, CreateTime"


def test_attribute_bits_in_words():
    from kafkafmt.viz.negative import batch
    rows = _rows(byteview.byte_view_html(batch(-86_400_000, extended=True)))
    assert next(v for _, h, f, v in rows if f == "attributes" and not h) == \
        "128 / compression none, CreateTime, isTimestampExtended (KIP-228)"
    assert next(v for _, _, f, v in rows if f == "baseTimestamp") == "-86400000 / 1969-12-31 00:00:00.000 UTC"
    assert byteview.attributes_words(0x09, 1) == "compression gzip, LogAppendTime"
    assert byteview.attributes_words(0x02, 0) == "compression snappy"  # v0 has no timestamp type
    assert byteview.attributes_words(0x33, 2) == "compression lz4, CreateTime, transactional, control batch"


def test_the_format_is_named_in_words():
    assert "message format v2: a record batch" in byteview.byte_view_html(record_set(2, "none", 1, 0))
    v1 = byteview.byte_view_html(record_set(1, "none", 2, 0))
    assert "message format v1: messages with a timestamp (Kafka 0.10, KIP-32" in v1
    assert ("message 1", "timestamp") in [(h, f) for _, h, f, _ in _rows(v1)]
    assert "message format v0" in byteview.byte_view_html(record_set(0, "none", 1, 0))
