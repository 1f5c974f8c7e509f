"""Differential tests: kafkafmt's broker rules against Apache Kafka 3.9's own LogValidator and
RecordsUtil.downConvert, run in the oracle JVM (conformance/kafkarig/oracle.py).

Every produce case is validated by both with the same inputs (toMagic, source/target codec, timestamp
type and bounds, origin, IBP, ``now``, offset) and compared on: the validated bytes, maxTimestamp, the
next offset, messageSizeMaybeChanged, RecordValidationStats (temporary memory, records converted), the
validator metrics, or, on failure, the exception class, its message and the per-record error list.
The oracle's clock is fixed, so LogAppendTime needs no masking.  snappy output is compared record by
record (snappy-java and the Python encoder choose different matches; both decode to the same bytes).
Kafka 3.9.2's ValidationResult no longer carries shallowOffsetOfMaxTimestamp (dropped by KAFKA-806),
so that field is checked in test_validator_paths.py against the rules instead.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import CT, LAT, NOW, R, build, legacy_msg, legacy_wrapper, read, source_compression, v2  # noqa: E402
from kafkafmt.broker import BrokerConfig, LogConfig  # noqa: E402
from kafkafmt.broker import validate_messages_and_assign_offsets as validate
from kafkafmt.broker.fetch import down_convert  # noqa: E402
from kafkafmt.constants import CompressionType, ControlRecordType  # noqa: E402
from kafkafmt.crc import crc32  # noqa: E402
from kafkafmt.errors import KafkaFmtError  # noqa: E402
from kafkafmt.records import MemoryRecords, end_txn_marker  # noqa: E402
from kafkafmt.records.default import batch_attributes, encode_default_batch, encode_default_record  # noqa: E402
from kafkafmt.records.record import Header  # noqa: E402
from kafkafmt.varint import encode_varint, encode_varlong  # noqa: E402

pytestmark = pytest.mark.java

V2 = LogConfig()
V1 = LogConfig(message_format_version="0.10.0")
V0 = LogConfig(message_format_version="0.9.0")
RS = [R(NOW - 3, b"a", b"1"), R(NOW - 1, b"b", b"2"), R(NOW - 2, None, b"3")]
HR = [R(NOW - 1, b"k", b"v", (Header("h", b"x"),)), R(NOW, b"k2", b"v2")]
TS = [R(NOW - 10_000), R(NOW + 10_000), R(NOW), R(-1), R(NOW - 500_000)]
MARKER = end_txn_marker(base_offset=0, timestamp=NOW, partition_leader_epoch=0, producer_id=7, producer_epoch=1,
                        control_type=ControlRecordType.COMMIT, coordinator_epoch=3)
W3 = [legacy_msg(i, NOW - i) for i in range(3)]


def _with_magic(entry: bytes, magic: int) -> bytes:
    """A legacy entry with another magic byte (CRC32 recomputed, so only the magic is 'wrong')."""
    b = bytearray(entry)
    b[16] = magic
    b[12:16] = crc32(bytes(b[16:])).to_bytes(4, "big")
    return bytes(b)


def _cases():
    cases = []
    # the format × codec × topic grid
    for magic in (0, 1, 2):
        for codec in ("none", "gzip", "lz4", "snappy") + (("zstd",) if magic == 2 else ()):
            for mfv, cfg in (("0.9.0", V0), ("0.10.0", V1), ("2.8", V2)):
                for tt in ("CreateTime", "LogAppendTime"):
                    for ct in ("producer", "uncompressed", "gzip"):
                        cases.append((f"m{magic}-{codec}->fmt{mfv}-{tt}-{ct}", build(RS, magic=magic, compression_=codec),
                                      cfg.replace(timestamp_type=tt, compression_type=ct), {}))
    cases += [
        ("inconsistent lastOffsetDelta", v2(RS, last_offset_delta=5), V2, {}),
        ("inconsistent count", v2(RS, count=2), V2, {}),
        ("empty v2 batch", v2([], count=0), V2, {}),
        ("negative offset range", v2(RS, last_offset_delta=-1), V2, {}),
        ("two compressed v2 batches", build(RS, compression_="gzip") * 2, V2, {}),
        ("two uncompressed v2 batches", build(RS) * 2, V2, {}),
        ("two compressed v1 batches", build(RS, magic=1, compression_="gzip") * 2, V1, {}),
        ("several uncompressed v1", build(RS, magic=1) * 2, V1, {}),
        ("several uncompressed v1 -> gzip", build(RS, magic=1) * 2, V1.replace(compression_type="gzip"), {}),
        ("mixed magic", build(RS, magic=0) + build(RS, magic=1), V1, {}),
        ("corrupt inner crc", legacy_wrapper([legacy_msg(0, NOW, key=None), legacy_msg(1, NOW, crc=12345)]),
         V1.replace(cleanup_policy="compact"), {}),
        ("control from client", MARKER, V2, {}),
        ("control from coordinator", MARKER, V2, dict(origin="COORDINATOR")),
        ("control from coordinator, gzip topic", MARKER, V2.replace(compression_type="gzip"),
         dict(origin="COORDINATOR")),
        ("control from coordinator, v1 topic", MARKER, V1, dict(origin="COORDINATOR")),
        ("pid with negative sequence", v2(RS, pid=7, epoch=1, seq=-1), V2, {}),
        ("idempotent to v1", v2(RS, pid=7, epoch=1, seq=0), V1, {}),
        ("idempotent gzip to v1", v2(RS, pid=7, epoch=1, seq=0, compression_="gzip"), V1, {}),
        ("transactional to v1", v2(RS, pid=7, epoch=1, seq=0, txn=True), V1, {}),
        ("transactional gzip to v1", v2(RS, pid=7, epoch=1, seq=0, txn=True, compression_="gzip"), V1, {}),
        ("transactional to v2", v2(RS, pid=7, epoch=1, seq=0, txn=True), V2, {}),
        ("zstd to v1", build(RS, compression_="zstd"), V1, {}),
        ("zstd with IBP 2.0", build(RS, compression_="zstd"),
         V2.replace(broker=BrokerConfig(inter_broker_protocol_version="2.0")), {}),
        ("headers to v1", build(HR), V1, {}),
        ("headers gzip to v1", build(HR, compression_="gzip"), V1, {}),
        ("headers gzip to v0", build(HR, compression_="gzip"), V0, {}),
        ("quirk a compressed", build([R(-1), R(-1)], compression_="gzip"), V2, {}),
        ("quirk a uncompressed", build([R(-1), R(-1)]), V2, {}),
        ("quirk b uncompressed", v2(RS, ts_type=LAT, max_ts=NOW - 50), V2, {}),
        ("quirk b gzip", v2(RS, ts_type=LAT, max_ts=NOW - 50, compression_="gzip"), V2, {}),
        ("quirk b -> v1", v2(RS, ts_type=LAT, max_ts=NOW - 50), V1, {}),
        ("producer LAT on LAT topic", v2(RS, ts_type=LAT, max_ts=NOW), V2.replace(timestamp_type="LogAppendTime"), {}),
        ("producer LAT max -1", v2(RS, ts_type=LAT, max_ts=-1), V2, {}),
        ("quirk c 0,2,2 gzip", v2(RS, deltas=[0, 2, 2], last_offset_delta=2, compression_="gzip"), V2, {}),
        ("quirk c base 100", v2(RS, base_offset=100, compression_="gzip"), V2, dict(origin="COORDINATOR")),
        ("0,2,2 gzip -> lz4", v2(RS, deltas=[0, 2, 2], last_offset_delta=2, compression_="gzip"),
         V2.replace(compression_type="lz4"), {}),
        ("quirk d 0,2,2 uncompressed", v2(RS, deltas=[0, 2, 2], last_offset_delta=2), V2, {}),
        ("KAFKA-9669 holes", build(RS, magic=1, compression_="gzip", offsets=[0, 2, 5]), V1, {}),
        ("KAFKA-9669 holes LAT", build(RS, magic=1, compression_="gzip", offsets=[0, 2, 5]),
         V1.replace(timestamp_type="LogAppendTime"), {}),
        ("wrapper offset 0", legacy_wrapper(W3, wrapper_offset=0), V1, {}),
        ("wrapper offset < last inner", legacy_wrapper(W3, wrapper_offset=1), V1, {}),
        ("wrapper offset 50", legacy_wrapper(W3, wrapper_offset=50), V1, {}),
        ("producer LAT wrapper on CT", legacy_wrapper(W3, ts_type=LAT, ts=NOW - 100), V1, {}),
        ("producer LAT wrapper on LAT", legacy_wrapper(W3, ts_type=LAT, ts=NOW - 100),
         V1.replace(timestamp_type="LogAppendTime"), {}),
        ("wrapper with wrong ts", legacy_wrapper(W3, ts=NOW + 999), V1, {}),
        ("v0 inner in v1 wrapper", legacy_wrapper([legacy_msg(i, NOW, magic=0) for i in range(3)], magic=1), V1, {}),
        ("v1 inner in v0 wrapper", legacy_wrapper(W3, magic=0), V0, {}),
        ("nested compression", legacy_wrapper([legacy_msg(0, NOW), legacy_wrapper([legacy_msg(0, NOW)])]), V1, {}),
        ("inner magic 2 in a v1 wrapper", legacy_wrapper([legacy_msg(0, NOW), _with_magic(legacy_msg(1, NOW), 2)]),
         V1, {}),
        ("inner entry smaller than 14 bytes", legacy_wrapper(
            [legacy_msg(0, NOW), (1).to_bytes(8, "big") + (10).to_bytes(4, "big") + bytes(10)], wrapper_offset=1),
         V1, {}),
        ("v1 LAT message on CT", build([R(NOW - 1)], magic=1, ts_type=LAT, log_append_time=NOW - 7), V1, {}),
        ("v1 LAT message on LAT", build([R(NOW - 1)], magic=1, ts_type=LAT, log_append_time=NOW - 7),
         V1.replace(timestamp_type="LogAppendTime"), {}),
        ("gzip level differs", build(RS, compression_="gzip"), V2.replace(compression_type="gzip", gzip_level=1), {}),
        ("no batches", b"", V2, {}),
        ("partial batch only", build(RS)[:-3], V2, {}),
        ("trailing partial kept by LogValidator", build(RS) + build(RS)[:20], V2, {}),
        ("non-zero base from coordinator, uncompressed", build(RS, base_offset=40), V2, dict(origin="COORDINATOR")),
        ("leader epoch -1", build(RS), V2, dict(ple=-1)),
    ]
    for codec in ("none", "gzip"):
        for magic, cfg in ((1, V1), (2, V2)):
            cases += [
                (f"out of range m{magic} {codec}", build(TS, magic=magic, compression_=codec),
                 cfg.replace(timestamp_difference_max_ms=5000), {}),
                (f"KIP-937 m{magic} {codec}", build(TS, magic=magic, compression_=codec),
                 cfg.replace(timestamp_before_max_ms=20_000, timestamp_after_max_ms=0), {}),
                (f"threshold 0 m{magic} {codec}", build(TS, magic=magic, compression_=codec),
                 cfg.replace(timestamp_difference_max_ms=0), {}),
                (f"long overflow in message m{magic} {codec}", build(TS, magic=magic, compression_=codec),
                 cfg.replace(timestamp_before_max_ms=1000), {}),
                (f"null keys compacted m{magic} {codec}", build([R(NOW, None)] * 4, magic=magic, compression_=codec),
                 cfg.replace(cleanup_policy="compact"), {}),
                (f"keys + timestamps m{magic} {codec}",
                 build([R(NOW, None), R(NOW - 2_000_000, None)], magic=magic, compression_=codec),
                 cfg.replace(cleanup_policy="compact", timestamp_difference_max_ms=1000), {}),
            ]
    return cases + _skip_key_value_cases()


def _skip_key_value_cases():
    """In-place compressed v2 (LogValidator reads it with ``skipKeyValueIterator``): records whose fields
    disagree with their length, or run past the stream, as ``DefaultRecord.readPartiallyFrom`` sees them."""
    head = b"\x00" + encode_varlong(0) + encode_varint(0)  # attributes, timestampDelta, offsetDelta

    def sized(body: bytes, length: int | None = None) -> bytes:
        return encode_varint(len(body) if length is None else length) + body

    def kv(key=b"k", value=b"v") -> bytes:
        return encode_varint(len(key)) + key + encode_varint(len(value)) + value

    second = encode_default_record(1, 0, b"k2", b"v2")
    bodies = {
        "length larger than the fields": (sized(head + kv() + encode_varint(0), 20) + second, 2),
        "length smaller than the fields": (sized(head + kv() + encode_varint(0), 3) + second, 2),
        "key runs past the stream": (sized(head + encode_varint(50) + b"k"), 1),
        "value runs past the stream": (sized(head + encode_varint(1) + b"k" + encode_varint(60) + b"v"), 1),
        "header count past the stream": (sized(head + kv() + encode_varint(40)), 1),
        "header key runs past the stream": (sized(head + kv() + encode_varint(1) + encode_varint(9) + b"h"), 1),
        "negative header count": (sized(head + kv() + encode_varint(-3)), 1),
        "negative header key size": (sized(head + kv() + encode_varint(1) + encode_varint(-2)), 1),
        "length varint cut": (second + b"\x80", 2),
        "attributes missing": (second + encode_varint(4), 2),
        "negative key length -5": (sized(head + encode_varint(-5) + kv(b"", b"v")[1:] + encode_varint(0)), 1),
    }
    cases = []
    for name, (body, count) in bodies.items():
        for c in ("gzip", "lz4"):
            data = encode_default_batch(
                base_offset=0, partition_leader_epoch=-1, attributes=batch_attributes(CompressionType.from_name(c), CT),
                last_offset_delta=count - 1, base_timestamp=NOW, max_timestamp=NOW, producer_id=-1, producer_epoch=-1,
                base_sequence=-1, records_count=count, records=body)
            cases.append((f"skipKeyValueIterator {name} {c}", data, V2, {}))
    return cases


CASES = _cases()


def _records_only(data: bytes) -> bool:
    return any(b.compression == CompressionType.SNAPPY for b in MemoryRecords(data).batches())


@pytest.mark.parametrize("name, data, cfg, kw", CASES, ids=[c[0] for c in CASES])
def test_log_validator_matches_kafka(kafka_oracle, name, data, cfg, kw):
    origin = kw.get("origin", "CLIENT")
    ple = kw.get("ple", 5)
    src = source_compression(data)
    tgt = cfg.target_compression(src)
    resp = kafka_oracle.request(
        "validate", bytes=data, toMagic=cfg.to_magic, sourceCompression=src.kafka_name,
        targetCompression=tgt.kafka_name, targetLevel=cfg.target_level(src),
        timestampType=cfg.timestamp_type.kafka_name, timestampBeforeMaxMs=cfg.effective_before_max_ms,
        timestampAfterMaxMs=cfg.effective_after_max_ms, partitionLeaderEpoch=ple, origin=origin,
        interBrokerProtocolVersion=cfg.inter_broker_protocol_version, now=NOW, offset=100,
        compactedTopic=cfg.compacted)
    try:
        res = validate(data, cfg, offset=100, now=NOW, origin=origin, partition_leader_epoch=ple, pre_checks=False)
    except KafkaFmtError as e:
        assert not resp["ok"], f"kafkafmt raised {e.kafka_exception}: {e.reason}; Kafka accepted"
        kafka_error = resp.get("invalidException") or resp["error"]
        kafka_message = resp.get("invalidExceptionMessage") or resp["message"]
        assert (e.kafka_exception, e.reason) == (kafka_error, kafka_message)
        mine = [(i, m) for _, i, m in getattr(e, "record_errors", [])]
        assert mine == [(r["batchIndex"], r["message"]) for r in resp.get("recordErrors", [])]
        assert resp["metrics"] == _metrics_of(e)
        return
    assert resp["ok"], f"Kafka raised {resp.get('error')}: {resp.get('message')}; kafkafmt accepted via {res.path}"
    theirs = bytes.fromhex(resp["validatedBytes"])
    if _records_only(theirs):
        assert read(res.records) == read(theirs)
        assert [(b.magic, b.base_offset, b.last_offset, b.max_timestamp, b.timestamp_type, b.compression)
                for b in MemoryRecords(res.records).batches()] == \
               [(b.magic, b.base_offset, b.last_offset, b.max_timestamp, b.timestamp_type, b.compression)
                for b in MemoryRecords(theirs).batches()]
    else:
        assert res.records.hex() == theirs.hex()
    assert res.max_timestamp == resp["maxTimestampMs"]
    assert res.next_offset == resp["nextOffset"]
    assert res.log_append_time_ms == resp["logAppendTimeMs"]
    assert res.message_size_maybe_changed == resp["messageSizeMaybeChanged"]
    stats = resp["recordValidationStats"]
    assert (res.stats.temporary_memory_bytes, res.stats.num_converted_records) == \
           (stats["temporaryMemoryBytes"], stats["numRecordsConverted"])
    assert res.metrics == resp["metrics"]


def _metrics_of(err) -> dict:
    """The LogValidator.MetricsRecorder counters kafkafmt attaches to the error."""
    return err.metrics


DOWN = [
    (f"v{m} {c} {tt.kafka_name} -> v{to} from {first}", build(RS if m == 2 else RS[:2], magic=m, compression_=c,
                                                               ts_type=tt, log_append_time=NOW + 5), to, first)
    for m in (1, 2) for c in ("none", "gzip", "lz4", "snappy") for tt in (CT, LAT)
    for to in (0, 1) if to < m for first in (0, 1, 5)
] + [
    ("txn + marker -> v1", v2(HR, pid=9, epoch=1, seq=0, txn=True) + end_txn_marker(
        base_offset=2, timestamp=NOW, partition_leader_epoch=0, producer_id=9, producer_epoch=1,
        control_type=ControlRecordType.ABORT, coordinator_epoch=0), 1, 0),
    ("headers dropped gzip -> v0", build(HR, compression_="gzip"), 0, 0),
    ("zstd -> v1", build(RS, compression_="zstd"), 1, 0),
    ("v0 + v1 + v2 -> v1", build(RS[:2], magic=0) + build(RS[:2], magic=1, base_offset=2) + build(RS, base_offset=4), 1, 0),
    ("v0 + v1 + v2 -> v0 from 5", build(RS[:2], magic=0) + build(RS[:2], magic=1, base_offset=2) + build(RS, base_offset=4),
     0, 5),
    ("holes gzip -> v1", build(RS, compression_="gzip", base_offset=10, offsets=[10, 12, 15]), 1, 12),
    ("holes none -> v1", build(RS, base_offset=10, offsets=[10, 12, 15]), 1, 12),
    ("empty v2 batch -> v1", v2([], count=0, base_offset=4), 1, 0),
]


@pytest.mark.parametrize("name, data, to_magic, first", DOWN, ids=[d[0] for d in DOWN])
def test_down_convert_matches_kafka(kafka_oracle, name, data, to_magic, first):
    resp = kafka_oracle.request("downConvert", bytes=data, toMagic=to_magic, firstOffset=first)
    try:
        dc = down_convert(data, to_magic, first)
    except KafkaFmtError as e:
        assert not resp["ok"] and (e.kafka_exception, e.reason) == (resp["error"], resp["message"])
        return
    assert resp["ok"], resp
    theirs = bytes.fromhex(resp["bytes"])
    if _records_only(theirs):
        assert read(dc.records) == read(theirs)
    else:
        assert dc.records.hex() == theirs.hex()
    stats = resp["recordConversionStats"]
    assert (dc.stats.temporary_memory_bytes, dc.stats.num_converted_records) == \
           (stats["temporaryMemoryBytes"], stats["numRecordsConverted"])
