"""Bulk columnar decode agrees with per-record decoding, for every sample (mixed magics included)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from kafkafmt.records import RECORD_SCHEMA, MemoryRecords, batches_table, records_table
from kafkafmt.samples import sample_record_sets

SAMPLES = sample_record_sets()


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_records_table_matches_record_objects(name):
    data = SAMPLES[name][1]
    t = records_table(data)
    assert t.schema == RECORD_SCHEMA
    recs = list(MemoryRecords(data).records())
    assert t.num_rows == len(recs)
    assert t.column("offset").to_pylist() == [r.offset for r in recs]
    assert t.column("timestamp_ms").to_pylist() == [r.timestamp for r in recs]
    assert t.column("timestamp").cast(pa.int64()).to_pylist() == [r.timestamp for r in recs]
    assert t.column("key").to_pylist() == [r.key for r in recs]
    assert t.column("value").to_pylist() == [r.value for r in recs]
    assert t.column("headers").to_pylist() == [[{"key": h.key, "value": h.value} for h in r.headers] for r in recs]


def test_mixed_magics_columns():
    t = records_table(SAMPLES["mixed-magics.bin"][1])
    assert t.column("magic").to_pylist() == [0, 1, 1, 2]
    assert t.column("timestamp_type").to_pylist() == [-1, 0, 0, 0]
    assert t.column("compression").to_pylist() == [0, 1, 1, 0]
    b = batches_table(SAMPLES["mixed-magics.bin"][1])
    assert b.column("magic").to_pylist() == [0, 1, 2]
    assert b.column("count").to_pylist() == [None, None, 1]
    assert b.column("base_offset").to_pylist() == [0, 2, 3]  # v1 wrapper: shallow = its (last) offset
    assert all(b.column("is_valid").to_pylist())


def test_include_data_false_keeps_sizes_only():
    t = records_table(SAMPLES["v2-headers.bin"][1], include_data=False)
    assert t.column("value").null_count == t.num_rows
    assert min(t.column("value_size").to_pylist()) > 0
