"""Bulk decoding into Arrow columns, for Spark, pandas and plots.

:func:`records_table` decodes every record of a record set into one ``pyarrow.Table``
(:data:`RECORD_SCHEMA`); :func:`batches_table` reads only batch headers (shallow, nothing is
decompressed) into :data:`BATCH_SCHEMA`.  Per-record Python objects are avoided on the hot
path: values are appended straight into column lists and converted once.
"""
from __future__ import annotations

from typing import Iterable

import pyarrow as pa

from ..constants import DEFAULT_MAX_DECOMPRESSED_BYTES
from .batch import RecordBatch
from .memory import MemoryRecords

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))

#: one row per record
RECORD_SCHEMA = pa.schema([
    ("offset", pa.int64()),
    ("timestamp", pa.int64()),
    ("timestamp_type", pa.int8()),  # TimestampType id: -1 none, 0 CreateTime, 1 LogAppendTime
    ("key", pa.binary()),
    ("value", pa.binary()),
    ("headers", HEADER_TYPE),
    ("key_size", pa.int32()),
    ("value_size", pa.int32()),
    ("sequence", pa.int32()),
    ("batch_index", pa.int32()),
    ("batch_position", pa.int64()),
    ("magic", pa.int8()),
    ("compression", pa.int8()),  # CompressionType id
    ("producer_id", pa.int64()),
    ("producer_epoch", pa.int16()),
    ("partition_leader_epoch", pa.int32()),
    ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()),
    ("batch_max_timestamp", pa.int64()),
])

#: one row per batch (headers only)
BATCH_SCHEMA = pa.schema([
    ("batch_index", pa.int32()),
    ("position", pa.int64()),
    ("size", pa.int32()),
    ("magic", pa.int8()),
    ("base_offset", pa.int64()),
    ("last_offset", pa.int64()),
    ("count", pa.int32()),  # null for v0/v1
    ("compression", pa.int8()),
    ("timestamp_type", pa.int8()),
    ("max_timestamp", pa.int64()),
    ("base_timestamp", pa.int64()),  # null for v0/v1
    ("producer_id", pa.int64()),
    ("producer_epoch", pa.int16()),
    ("base_sequence", pa.int32()),
    ("partition_leader_epoch", pa.int32()),
    ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()),
    ("crc", pa.uint32()),
    ("is_valid", pa.bool_()),
])


def _batches(source) -> Iterable[RecordBatch]:
    if isinstance(source, MemoryRecords):
        return source.batches()
    return MemoryRecords(source).batches()


def batches_table(source, *, check_crc: bool = True) -> pa.Table:
    """Batch headers of ``source`` (bytes-like or MemoryRecords) as an Arrow table (shallow)."""
    cols = {f.name: [] for f in BATCH_SCHEMA}
    for i, b in enumerate(_batches(source)):
        legacy = b.magic < 2
        row = (i, b.position, b.size_in_bytes, b.magic, b.last_offset if legacy else b.base_offset, b.last_offset,
               b.count, int(b.attributes & 7), int(b.timestamp_type), b.max_timestamp,
               None if legacy else b.base_timestamp, b.producer_id, b.producer_epoch, b.base_sequence,
               b.partition_leader_epoch, b.is_transactional, b.is_control, b.checksum,
               b.is_valid() if check_crc else None)
        for name, v in zip(cols, row):
            cols[name].append(v)
    return pa.table(cols, schema=BATCH_SCHEMA)


def records_table(source, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                  include_data: bool = True) -> pa.Table:
    """Every record of ``source`` as an Arrow table (deep).  ``include_data=False`` leaves keys,
    values and headers null (sizes stay), for timestamp/offset analysis of large logs."""
    c = {f.name: [] for f in RECORD_SCHEMA}
    ap = {k: v.append for k, v in c.items()}
    for i, b in enumerate(_batches(source)):
        magic, codec, pid, epoch, ple = b.magic, int(b.attributes & 7), b.producer_id, b.producer_epoch, \
            b.partition_leader_epoch
        txn, ctl, pos, bmax = b.is_transactional, b.is_control, b.position, b.max_timestamp
        for r in b.records(max_decompressed_bytes=max_decompressed_bytes):
            ap["offset"](r.offset)
            ap["timestamp"](r.timestamp)
            ap["timestamp_type"](int(r.timestamp_type))
            if include_data:
                ap["key"](r.key)
                ap["value"](r.value)
                ap["headers"]([{"key": h.key, "value": h.value} for h in r.headers])
            else:
                ap["key"](None)
                ap["value"](None)
                ap["headers"](None)
            ap["key_size"](r.key_size)
            ap["value_size"](r.value_size)
            ap["sequence"](r.sequence)
            ap["batch_index"](i)
            ap["batch_position"](pos)
            ap["magic"](magic)
            ap["compression"](codec)
            ap["producer_id"](pid)
            ap["producer_epoch"](epoch)
            ap["partition_leader_epoch"](ple)
            ap["is_transactional"](txn)
            ap["is_control"](ctl)
            ap["batch_max_timestamp"](bmax)
    return pa.table(c, schema=RECORD_SCHEMA)


def concat_tables(tables: Iterable[pa.Table]) -> pa.Table:
    tables = list(tables)
    return pa.concat_tables(tables) if tables else RECORD_SCHEMA.empty_table()
