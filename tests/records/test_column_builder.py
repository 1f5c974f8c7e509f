"""The compiled column builder (``build_v2_batches``) against ``MemoryRecordsBuilder`` (hypothesis)
and against Apache Kafka 3.9's own ``MemoryRecordsBuilder`` through the Java oracle."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkafmt.constants import TimestampType
from kafkafmt.errors import IllegalArgumentError, KafkaFmtError
from kafkafmt.records import MemoryRecordsBuilder
from kafkafmt.records.column_builder import build_v2_batches
from kafkafmt.records.default import increment_sequence

_blob = st.one_of(st.none(), st.binary(max_size=200))
_header = st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=20)))
_row = st.tuples(st.one_of(st.just(-1), st.integers(0, 2**63 - 1), st.integers(1_700_000_000_000, 1_700_000_100_000)),
                 _blob, _blob, st.lists(_header, max_size=3))


def per_record(rows, offsets, per_batch, ts_type=TimestampType.CREATE_TIME, **kw):
    """The reference: one MemoryRecordsBuilder per batch, appending row by row."""
    out, seq = [], kw.pop("base_sequence", -1)
    for lo in range(0, len(rows), per_batch):
        b = MemoryRecordsBuilder(2, "none", ts_type, offsets[lo],
                                 base_sequence=seq if seq < 0 else increment_sequence(seq, lo), **kw)
        for off, (ts, k, v, h) in zip(offsets[lo:lo + per_batch], rows[lo:lo + per_batch]):
            b.append_with_offset(off, ts, k, v, h)
        out.append(b.build())
    return b"".join(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(_row, min_size=1, max_size=40), per_batch=st.integers(1, 12),
       gaps=st.lists(st.integers(1, 5), min_size=40, max_size=40), base=st.integers(0, 2**40),
       log_append=st.booleans(), arrow=st.booleans(), with_headers=st.booleans())
def test_same_bytes_as_memory_records_builder(rows, per_batch, gaps, base, log_append, arrow, with_headers):
    if not with_headers:
        rows = [(ts, k, v, []) for ts, k, v, _ in rows]
    offsets = [base]
    for g in gaps[:len(rows) - 1]:
        offsets.append(offsets[-1] + g)
    ts_type = TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME
    kw = dict(log_append_time=1_700_000_000_123 if log_append else -1, producer_id=7, producer_epoch=3,
              base_sequence=2**31 - 5, partition_leader_epoch=9)
    keys, values = [r[1] for r in rows], [r[2] for r in rows]
    if arrow:
        keys, values = pa.array(keys, pa.binary()), pa.array(values, pa.large_binary())
    got = build_v2_batches([r[0] for r in rows], keys, values, [r[3] for r in rows] if with_headers else None,
                           offsets=offsets, records_per_batch=per_batch, timestamp_type=ts_type, **kw)
    assert got == per_record(rows, offsets, per_batch, ts_type, **kw)


def test_sliced_arrow_columns_and_empty_input():
    keys = pa.array([b"a", None, b"", b"bb", b"ccc"], pa.binary()).slice(1, 3)
    values = pa.array([b"x", b"y", None, b"zz", b"w"], pa.binary()).slice(2, 3)
    rows = [(10, None, None, []), (-1, b"", b"zz", []), (5, b"bb", b"w", [])]
    assert build_v2_batches([10, -1, 5], keys, values, records_per_batch=2) == per_record(rows, [0, 1, 2], 2)
    assert build_v2_batches([], [], []) == b""


@pytest.mark.parametrize("kw, match", [
    (dict(timestamps=[-2]), "Invalid negative timestamp -2"),
    (dict(timestamps=[2**63]), "timestamps must be 64-bit integers"),
    (dict(offsets=[0, 2**63]), "offsets must be 64-bit integers"),
    (dict(base_offset=2**63 - 1), "offsets must be 64-bit integers"),
    (dict(keys=[1, 2]), "keys: expected bytes or None values"),
    (dict(offsets=[3, 3]), "Illegal offset 3 following previous offset 3"),
    (dict(records_per_batch=0), "records_per_batch"),
    (dict(producer_id=5), "Invalid negative producer epoch"),
])
def test_bad_input_is_kafkas_error(kw, match):
    args = dict(timestamps=[1, 2], keys=[b"k", None], values=[b"v", b"w"])
    args.update(kw)
    n = len(args["timestamps"])
    args["keys"], args["values"] = args["keys"][:n], args["values"][:n]
    with pytest.raises(IllegalArgumentError, match=match) as e:
        build_v2_batches(args.pop("timestamps"), args.pop("keys"), args.pop("values"), **args)
    assert isinstance(e.value, KafkaFmtError)


@pytest.mark.java
def test_same_bytes_as_kafkas_builder(kafka_oracle):
    records = [{"offset": 100 + 2 * i, "timestamp": 1_700_000_000_000 + (i * 37) % 11 - (i == 3) * 1_700_000_000_001,
                "key": None if i % 4 == 0 else b"key-%d" % i, "value": b"" if i % 5 == 0 else b"v" * i,
                "headers": [("h", b"x" * (i % 3)), ("n", None)] if i % 2 else []} for i in range(7)]
    theirs = kafka_oracle.build(
        magic=2, compression="none", timestampType="CreateTime", baseOffset=100, logAppendTime=-1, producerId=42,
        producerEpoch=1, baseSequence=10, isTransactional=True, partitionLeaderEpoch=4,
        records=[{"offset": r["offset"], "timestamp": r["timestamp"], "key": None if r["key"] is None else r["key"].hex(),
                  "value": r["value"].hex(), "headers": [{"key": k, "value": None if v is None else v.hex()}
                                                          for k, v in r["headers"]]} for r in records])
    ours = build_v2_batches([r["timestamp"] for r in records], [r["key"] for r in records],
                            [r["value"] for r in records], [r["headers"] for r in records],
                            offsets=[r["offset"] for r in records], records_per_batch=len(records), producer_id=42,
                            producer_epoch=1, base_sequence=10, is_transactional=True, partition_leader_epoch=4)
    assert ours == bytes.fromhex(theirs["bytes"])


_ROWS = [(1_700_000_000_000 + i, None if i % 3 == 0 else b"k%d" % i, b"v" * (i % 7), [("h", b"x")] if i % 2 else [])
         for i in range(9)]


def _build(rows, **kw):
    return build_v2_batches([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
                            records_per_batch=4, **kw)


def test_returns_a_bytearray_of_exactly_the_records():
    got = _build(_ROWS)
    assert type(got) is bytearray and got == per_record(_ROWS, list(range(9)), 4)
    assert type(build_v2_batches([], [], [])) is bytearray


def test_out_bytearray_is_resized_in_place_and_reused():
    out = bytearray(b"\xee" * 5000)
    for rows in (_ROWS, _ROWS[:2], _ROWS + _ROWS[:1] * 3, []):  # shrinks, grows past its length, empties
        expected = per_record(rows, list(range(len(rows))), 4)
        assert _build(rows, out=out) is out
        assert out == expected


def test_out_writable_buffer_gets_the_records_from_its_first_byte():
    expected = per_record(_ROWS, list(range(9)), 4)
    arr = np.full(len(expected) + 50, 0xEE, np.uint8)
    got = _build(_ROWS, out=arr)
    assert type(got) is memoryview and got == expected
    assert bytes(arr[:len(expected)]) == expected and bytes(arr[len(expected):]) == b"\xee" * 50
    backing = bytearray(len(expected) + 10)
    assert _build(_ROWS, out=memoryview(backing)[10:]) == expected and backing[10:] == expected


def test_out_that_cannot_take_the_records_is_an_error_and_stays_untouched():
    size = len(per_record(_ROWS, list(range(9)), 4))
    small = np.full(size - 1, 0xEE, np.uint8)
    with pytest.raises(IllegalArgumentError, match=f"out: {size} bytes needed, the buffer holds {size - 1}"):
        _build(_ROWS, out=small)
    assert bool(np.all(small == 0xEE))
    with pytest.raises(IllegalArgumentError, match="writable"):
        _build(_ROWS, out=bytes(size))
    with pytest.raises(IllegalArgumentError, match="expected a bytearray or a writable buffer, got int"):
        _build(_ROWS, out=7)
    held = bytearray(10)
    view = memoryview(held)
    with pytest.raises(IllegalArgumentError, match="cannot resize the bytearray"):
        _build(_ROWS, out=held)
    view.release()
    assert _build(_ROWS, out=held) is held


def test_timestamp_delta_wraps_as_javas_long():
    rows = [(-1, b"k", b"v", []), (2**63 - 1, None, b"", []), (0, b"", None, [])]  # 2**63 - 1 - (-1) wraps
    assert build_v2_batches([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]) \
        == per_record(rows, [0, 1, 2], 1000)
