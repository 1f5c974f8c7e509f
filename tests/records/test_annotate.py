"""The annotated byte view covers every byte and agrees with the fast decoders."""
from __future__ import annotations

import pytest

from kafkafmt.annotate import annotate, render
from kafkafmt.records import MemoryRecords
from kafkafmt.samples import sample_record_sets

SAMPLES = sample_record_sets()


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_spans_tile_the_buffer(name):
    data = SAMPLES[name][1]
    spans = list(annotate(data))
    pos = 0
    for s in spans:
        assert s.start == pos, (s, pos)
        pos = s.end
    assert pos == len(data)


@pytest.mark.parametrize("name", [n for n in SAMPLES if n.startswith(("v2", "mixed", "kip228"))])
def test_var_field_walk_agrees_with_fast_record_decoder(name):
    data = SAMPLES[name][1]
    spans = {s.path: s.value for s in annotate(data, decompressed=True)}
    for i, batch in enumerate(MemoryRecords(data).batches()):
        if batch.magic < 2:
            continue
        for j, r in enumerate(batch.records()):
            p = f"batch[{i}].record[{j}]"
            assert spans[f"{p}.offsetDelta"] == r.offset_delta
            assert spans[f"{p}.timestampDelta"] == r.timestamp_delta
            assert spans[f"{p}.key"] == r.key and spans[f"{p}.value"] == r.value
            assert [spans[f"{p}.headers[{k}].headerKey"] for k in range(len(r.headers))] == [h.key for h in r.headers]


def test_render_mentions_fields():
    text = render(SAMPLES["v2-headers.bin"][1])
    assert "batch[0].baseOffset = 0" in text and "batch[0].record[0].headers[0].headerKey = trace" in text
