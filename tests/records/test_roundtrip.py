"""Round trips for every magic x codec Kafka allows, and dump --json -> build reproducibility."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.errors import IllegalArgumentError
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from kafkafmt.spec import batch_to_json, build_record_set, load_spec

ALLOWED = [(m, c) for m in (0, 1, 2) for c in CompressionType if not (c == CompressionType.ZSTD and m < 2)]

_bytes = st.one_of(st.none(), st.binary(max_size=64))
_ts = st.one_of(st.just(-1), st.just(0), st.integers(0, 2**63 - 1))
_header = st.tuples(st.text(max_size=8), _bytes)
_record = st.fixed_dictionaries({"timestamp": _ts, "key": _bytes, "value": _bytes,
                                 "headers": st.lists(_header, max_size=3)})


def _tt(magic, lat):
    if magic == 0:
        return TimestampType.NO_TIMESTAMP_TYPE
    return TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME


def _build(magic, codec, records, lat, base_offset=0, **kw):
    b = MemoryRecordsBuilder(magic, codec, _tt(magic, lat), base_offset, log_append_time=1234, **kw)
    for r in records:
        b.append(r["timestamp"], r["key"], r["value"], r["headers"] if magic >= 2 else [])
    return b.build()


def _expected_ts(magic, codec, lat, ts):
    if magic == 0:
        return -1
    return 1234 if lat else ts


@pytest.mark.parametrize("magic,codec", ALLOWED, ids=lambda v: str(v))
@settings(max_examples=25, deadline=None)
@given(records=st.lists(_record, min_size=1, max_size=8), lat=st.booleans(),
       base=st.integers(0, 2**40))
def test_round_trip(magic, codec, records, lat, base):
    data = _build(magic, codec, records, lat, base)
    got = list(MemoryRecords(data).records())
    assert [r.offset for r in got] == list(range(base, base + len(records)))
    assert [(r.key, r.value) for r in got] == [(r["key"], r["value"]) for r in records]
    assert [r.timestamp for r in got] == [_expected_ts(magic, codec, lat, r["timestamp"]) for r in records]
    if magic >= 2:
        assert [[(h.key, h.value) for h in r.headers] for r in got] == [r["headers"] for r in records]
    for batch in MemoryRecords(data).batches():
        assert batch.is_valid()


@pytest.mark.parametrize("magic,codec", ALLOWED, ids=lambda v: str(v))
@settings(max_examples=15, deadline=None)
@given(records=st.lists(_record, min_size=1, max_size=6), lat=st.booleans())
def test_dump_json_then_build_reproduces(magic, codec, records, lat):
    data = _build(magic, codec, records, lat, 5) + _build(magic, codec, records[:1], lat, 5 + len(records))
    lines = [json.dumps(batch_to_json(b)) for b in MemoryRecords(data).batches()]
    rebuilt = build_record_set(load_spec("\n".join(lines)))
    if codec == CompressionType.NONE:
        assert rebuilt == data
    # same record view either way (compressed: frame for frame, the codec may choose other matches)
    def view(d):
        return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in MemoryRecords(d).records()]
    assert view(rebuilt) == view(data)
    assert [batch_to_json(b, deep=True)["attributes"] for b in MemoryRecords(rebuilt).batches()] == \
        [json.loads(line)["attributes"] for line in lines]


def test_build_from_short_hand_written_spec_matches_builder():
    spec = [{"magic": 2, "baseOffset": 0, "compresscodec": "none",
             "records": [{"timestamp": 10, "key": "k", "value": {"hex": "00ff"}, "headers": [{"key": "h", "value": None}]},
                         {"timestamp": 5, "value": "x"}]}]
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    b.append(10, b"k", b"\x00\xff", [("h", None)])
    b.append(5, None, b"x")
    assert build_record_set(spec) == b.build()


def test_corrupt_input_round_trips_through_the_spec():
    data = bytearray(_build(2, CompressionType.NONE, [{"timestamp": 1, "key": b"a", "value": b"b", "headers": []}], False))
    data[-1] ^= 0xFF  # corrupt the last byte: CRC no longer matches
    (batch,) = MemoryRecords(bytes(data)).batches()
    assert not batch.is_valid()
    spec = batch_to_json(batch)
    assert spec["isvalid"] is False
    assert build_record_set([spec]) == bytes(data)


def test_inconsistent_count_is_kept_verbatim():
    good = _build(2, CompressionType.NONE, [{"timestamp": 1, "key": None, "value": b"v", "headers": []}] * 2, False)
    spec = batch_to_json(next(MemoryRecords(good).batches()))
    spec["count"] = 3  # a batch claiming one more record than it has
    bad = build_record_set([spec])
    (batch,) = MemoryRecords(bad).batches()
    assert batch.count == 3 and batch.is_valid()  # the CRC is right, the count is not
    from kafkafmt.errors import InvalidRecordError
    with pytest.raises(InvalidRecordError, match="premature EOF"):
        list(batch.records())


@pytest.mark.parametrize("bad", [
    dict(magic=1, compression="zstd", msg="ZStandard compression is not supported for magic 1"),
    dict(magic=0, compression="zstd", msg="ZStandard compression is not supported for magic 0"),
])
def test_zstd_refused_below_v2(bad):
    with pytest.raises(IllegalArgumentError, match=bad["msg"]):
        MemoryRecordsBuilder(bad["magic"], bad["compression"], TimestampType.CREATE_TIME, 0)


@pytest.mark.parametrize("kwargs,msg", [
    (dict(magic=1, is_transactional=True), "Transactional records are not supported for magic 1"),
    (dict(magic=1, is_control_batch=True), "Control records are not supported for magic 1"),
    (dict(magic=2, ts=TimestampType.NO_TIMESTAMP_TYPE), "TimestampType must be set"),
])
def test_builder_constructor_rules(kwargs, msg):
    ts = kwargs.pop("ts", TimestampType.CREATE_TIME)
    magic = kwargs.pop("magic")
    with pytest.raises(IllegalArgumentError, match=msg):
        MemoryRecordsBuilder(magic, CompressionType.NONE, ts, 0, **kwargs)


def test_builder_append_rules():
    b = MemoryRecordsBuilder(1, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    with pytest.raises(IllegalArgumentError, match="does not support record headers"):
        b.append(1, None, b"v", [("h", b"x")])
    with pytest.raises(IllegalArgumentError, match="Invalid negative timestamp -5"):
        b.append(-5, None, b"v")
    b.append_with_offset(3, 1, None, b"v")
    with pytest.raises(IllegalArgumentError, match="Offsets must increase monotonically"):
        b.append_with_offset(3, 1, None, b"v")
    idem = MemoryRecordsBuilder(1, CompressionType.NONE, TimestampType.CREATE_TIME, 0, producer_id=5, producer_epoch=0,
                                base_sequence=0)
    idem.append(1, None, b"v")
    with pytest.raises(IllegalArgumentError, match="Idempotent messages are not supported for magic 1"):
        idem.build()
    assert MemoryRecordsBuilder(2, "gzip", TimestampType.CREATE_TIME, 0).build() == b""  # no records → empty


def test_v1_wrapper_offset_zero_means_raw_inner_offsets():
    """KAFKA-5365: a v1 wrapper with offset 0 (librdkafka) keeps the inner offsets as they are."""
    data = bytearray(_build(1, CompressionType.GZIP, [{"timestamp": 5, "key": None, "value": b"%d" % i, "headers": []}
                                                      for i in range(3)], False, base_offset=40))
    assert [r.offset for r in MemoryRecords(bytes(data)).records()] == [40, 41, 42]
    from kafkafmt.records.legacy import encode_legacy_entry
    (batch,) = MemoryRecords(bytes(data)).batches()
    m = batch.message
    zero = encode_legacy_entry(0, 1, m.attributes, m.timestamp, None, bytes(m.value))
    assert [r.offset for r in MemoryRecords(zero).records()] == [0, 1, 2]
    low = encode_legacy_entry(1, 1, m.attributes, m.timestamp, None, bytes(m.value))
    from kafkafmt.errors import InvalidRecordError
    with pytest.raises(InvalidRecordError, match="wrapper offset '1' is less than the last inner message offset '2'"):
        list(MemoryRecords(low).records())


def test_lat_v2_records_read_the_batch_max_timestamp():
    data = _build(2, CompressionType.NONE, [{"timestamp": t, "key": None, "value": b"v", "headers": []}
                                            for t in (5, 9)], True)
    (batch,) = MemoryRecords(data).batches()
    assert batch.base_timestamp == 5 and batch.max_timestamp == 1234
    assert [r.timestamp for r in batch.records()] == [1234, 1234]
    assert [r.timestamp_delta for r in batch.records()] == [0, 4]  # deltas stay as the producer wrote them
