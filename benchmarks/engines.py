"""What each engine does for each benchmark task, on the same bytes.

Engines: ``kafkafmt``, ``kafka-python``, ``aiokafka-c`` (aiokafka with its C extension) and
``aiokafka-py`` (aiokafka with ``AIOKAFKA_NO_EXTENSIONS=1``, which aiokafka reads when it is first
imported; so each engine runs in its own process).  Every function returns the number of records
it handled, so the harness can check that all engines did the same work.
"""
from __future__ import annotations

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


# --- deep decode: every record's offset, timestamp, key, value and headers -----------------------
def deep_kafkafmt(data: bytes) -> int:
    """Record objects from the compiled kernels (``decode_records``)."""
    from kafkafmt.records import decode_records
    n = 0
    for r in decode_records(data):
        r.offset, r.timestamp, r.key, r.value, r.headers
        n += 1
    return n


def deep_reference_kafkafmt(data: bytes) -> int:
    """Record objects from the pure-Python reference decoder (``MemoryRecords.records``)."""
    from kafkafmt.records import MemoryRecords
    n = 0
    for r in MemoryRecords(data).records():
        r.offset, r.timestamp, r.key, r.value, r.headers
        n += 1
    return n


def _peer_batches(records_cls, data: bytes):
    """The batches of a peer's ``MemoryRecords`` (both peers share this API)."""
    mr = records_cls(data)
    while True:
        batch = mr.next_batch()
        if batch is None:
            return
        yield batch


def _deep_peer(records_cls, data: bytes) -> int:
    n = 0
    for batch in _peer_batches(records_cls, data):
        for r in batch:
            r.offset, r.timestamp, r.key, r.value, getattr(r, "headers", ())
            n += 1
    return n


def deep_kafka_python(data: bytes) -> int:
    from kafka.record.memory_records import MemoryRecords
    return _deep_peer(MemoryRecords, data)


def deep_aiokafka(data: bytes) -> int:
    from aiokafka.record.memory_records import MemoryRecords
    return _deep_peer(MemoryRecords, data)


# --- columnar decode: an Arrow table with every record (kafkafmt only; peers are timed deep) -----
def columnar_kafkafmt(data: bytes) -> int:
    from kafkafmt.records import records_table
    return records_table(data).num_rows


# --- build: batches of ``per_batch`` records ----------------------------------------------------
def build_kafkafmt(records, magic: int, codec: str, per_batch: int) -> int:
    from kafkafmt.constants import TimestampType
    from kafkafmt.records import MemoryRecordsBuilder
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    out = []
    for s in range(0, len(records), per_batch):
        b = MemoryRecordsBuilder(magic, CODEC_IDS[codec], ts_type, s)
        for ts, k, v in records[s:s + per_batch]:
            b.append(ts, k, v)
        out.append(b.build())
    return len(records)



def build_columns_kafkafmt(columns, magic: int, codec: str, per_batch: int) -> int:
    """The compiled column builder (v2, uncompressed only) on ``(timestamps, keys, values)`` lists:
    the rows every other engine gets, turned into columns once, outside the timing."""
    from kafkafmt.records.column_builder import build_v2_batches
    assert magic == 2 and codec == "none", "build-columns writes uncompressed v2 only"
    timestamps, keys, values = columns
    build_v2_batches(timestamps, keys, values, records_per_batch=per_batch)
    return len(timestamps)

def build_kafka_python(records, magic: int, codec: str, per_batch: int) -> int:
    from kafka.record.memory_records import MemoryRecordsBuilder
    for s in range(0, len(records), per_batch):
        b = MemoryRecordsBuilder(magic, CODEC_IDS[codec], 1 << 30, offset=s)
        for ts, k, v in records[s:s + per_batch]:
            b.append(ts, k, v, [])
        b.close()
        b.buffer()
    return len(records)


def build_aiokafka(records, magic: int, codec: str, per_batch: int) -> int:
    from aiokafka.record.default_records import DefaultRecordBatchBuilder
    from aiokafka.record.legacy_records import LegacyRecordBatchBuilder
    cid = CODEC_IDS[codec]
    for s in range(0, len(records), per_batch):
        if magic == 2:
            b = DefaultRecordBatchBuilder(2, cid, 0, -1, -1, -1, 1 << 30)
            for i, (ts, k, v) in enumerate(records[s:s + per_batch]):
                b.append(i, ts, k, v, [])
        else:
            b = LegacyRecordBatchBuilder(magic, cid, 1 << 30)
            for i, (ts, k, v) in enumerate(records[s:s + per_batch]):
                b.append(i, ts if magic else None, k, v)
        b.build()
    return len(records)


# --- down-conversion v2 -> v1/v0 -----------------------------------------------------------------
def down_kafkafmt(data: bytes, to_magic: int) -> None:
    from kafkafmt.broker.fetch import down_convert
    down_convert(data, to_magic)
    return None  # the converted set is not re-read: that would time a decode too


def _down_peer(records_cls, builder_cls, data: bytes, to_magic: int) -> int:
    """What a Python user of the peer would write: decode each batch, re-encode it as v0/v1."""
    n = 0
    for batch in _peer_batches(records_cls, data):
        b = builder_cls(to_magic, 0, 1 << 30)
        for r in batch:
            b.append(r.offset, r.timestamp if to_magic else None, r.key, r.value)
            n += 1
        b.build()
    return n


def down_kafka_python(data: bytes, to_magic: int) -> int:
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords
    return _down_peer(MemoryRecords, LegacyRecordBatchBuilder, data, to_magic)


def down_aiokafka(data: bytes, to_magic: int) -> int:
    from aiokafka.record.legacy_records import LegacyRecordBatchBuilder
    from aiokafka.record.memory_records import MemoryRecords
    return _down_peer(MemoryRecords, LegacyRecordBatchBuilder, data, to_magic)


DEEP = {"kafkafmt": deep_kafkafmt, "kafka-python": deep_kafka_python, "aiokafka-c": deep_aiokafka,
        "aiokafka-py": deep_aiokafka}
BUILD = {"kafkafmt": build_kafkafmt, "kafka-python": build_kafka_python, "aiokafka-c": build_aiokafka,
         "aiokafka-py": build_aiokafka}
DOWN = {"kafkafmt": down_kafkafmt, "kafka-python": down_kafka_python, "aiokafka-c": down_aiokafka,
        "aiokafka-py": down_aiokafka}
