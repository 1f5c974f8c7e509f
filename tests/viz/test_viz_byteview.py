"""The annotated byte view: every byte labelled from kafkafmt.layout, hover titles, escaping."""
import re

from kafkafmt.layout import DEFAULT_BATCH, LEGACY_V1
from kafkafmt.records import MemoryRecordsBuilder
from kafkafmt.viz import byteview
from kafkafmt.viz.anatomy import record_set


def _titled_bytes(html):
    """(title, hex bytes) per coloured span of the view."""
    return re.findall(r"title='([^']*)' style='background:#[0-9a-f]{6}'>((?:[0-9a-f]{2} |<br>)+)</span>", html)


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
    assert len(re.findall(r"[0-9a-f]{2} ", re.sub(r"<[^>]*>", "", html.split("<i>")[0]))) == 64
