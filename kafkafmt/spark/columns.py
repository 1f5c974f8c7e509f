"""The data source's columns: Spark's Kafka source schema plus batch metadata, built from Arrow.

The one place that maps kafkafmt's columnar tables (:data:`kafkafmt.records.columnar.RECORD_SCHEMA`
and :data:`~kafkafmt.records.columnar.BATCH_SCHEMA`) onto the names and types Spark users know
from ``spark.read.format("kafka")`` (``KafkaRecordToRowConverter``): ``key``, ``value``,
``topic``, ``partition``, ``offset``, ``timestamp``, ``timestampType``, ``headers``.
Everything after those is kafkafmt's batch metadata.  Timestamps are Spark ``timestamp`` values
(microseconds, UTC) made from Kafka's milliseconds, as Spark's Kafka source does.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..constants import CompressionType

TIMESTAMP = pa.timestamp("us", tz="UTC")
HEADERS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))

#: Spark's Kafka source columns, in its order
KAFKA_COLUMNS = [
    ("key", pa.binary()), ("value", pa.binary()), ("topic", pa.string()), ("partition", pa.int32()),
    ("offset", pa.int64()), ("timestamp", TIMESTAMP), ("timestampType", pa.int32()), ("headers", HEADERS),
]

#: where a row comes from, and what went wrong (PERMISSIVE mode only)
LOCATION_COLUMNS = [("segment", pa.string()), ("position", pa.int64()), ("crcValid", pa.bool_()),
                    ("error", pa.string())]

#: level=record: one row per record
RECORD_COLUMNS = KAFKA_COLUMNS + [
    ("magic", pa.int8()), ("codec", pa.string()), ("batchBaseOffset", pa.int64()), ("batchLastOffset", pa.int64()),
    ("batchMaxTimestamp", TIMESTAMP), ("producerId", pa.int64()), ("producerEpoch", pa.int16()),
    ("partitionLeaderEpoch", pa.int32()), ("isTransactional", pa.bool_()), ("isControl", pa.bool_()),
] + LOCATION_COLUMNS

#: level=batch: one row per batch, nothing decompressed
BATCH_COLUMNS = [
    ("topic", pa.string()), ("partition", pa.int32()), ("magic", pa.int8()), ("codec", pa.string()),
    ("baseOffset", pa.int64()), ("lastOffset", pa.int64()), ("count", pa.int32()), ("sizeInBytes", pa.int32()),
    ("timestampType", pa.int32()), ("maxTimestamp", TIMESTAMP), ("baseTimestamp", TIMESTAMP),
    ("producerId", pa.int64()), ("producerEpoch", pa.int16()), ("baseSequence", pa.int32()),
    ("partitionLeaderEpoch", pa.int32()), ("isTransactional", pa.bool_()), ("isControl", pa.bool_()),
    ("crc", pa.int64()),
] + LOCATION_COLUMNS

RECORD_SCHEMA = pa.schema(RECORD_COLUMNS)
BATCH_SCHEMA = pa.schema(BATCH_COLUMNS)

_CODEC_NAMES = pa.array([c.kafka_name for c in CompressionType] + ["unknown"] * 3, pa.string())

_SPARK_TYPES = {pa.binary(): "binary", pa.string(): "string", pa.int8(): "byte", pa.int16(): "short",
                pa.int32(): "int", pa.int64(): "long", pa.bool_(): "boolean", TIMESTAMP: "timestamp",
                HEADERS: "array<struct<key: string, value: binary>>"}


def schema_for(level: str) -> pa.Schema:
    """The Arrow schema of ``level`` (``record`` or ``batch``)."""
    return BATCH_SCHEMA if level == "batch" else RECORD_SCHEMA


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL string of an Arrow schema built here (``key binary, value binary, ...``)."""
    return ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in schema)


def timestamps(ms) -> pa.Array:
    """Kafka milliseconds as Spark timestamps (microseconds, UTC)."""
    return pc.multiply(pc.cast(ms, pa.int64()), 1000).cast(TIMESTAMP)


def codec_names(ids) -> pa.Array:
    """CompressionType ids (0..7) as Kafka's names."""
    return pc.take(_CODEC_NAMES, pc.cast(ids, pa.int32()))


def _constant(value, type_: pa.DataType, n: int) -> pa.Array:
    return pa.array([value] * n, type_) if n < 64 else pa.repeat(pa.scalar(value, type_), n)


def record_rows(records: pa.Table, batches: pa.Table, *, topic: str, partition: int, segment: str,
                batch_index_base: int = 0) -> pa.RecordBatch:
    """Rows of :data:`RECORD_SCHEMA` from a ``records_table`` and the ``batches_table`` of the same bytes.

    ``records.batch_index`` (+ ``batch_index_base``) selects each record's batch in ``batches``.
    """
    n = records.num_rows
    idx = pc.cast(records.column("batch_index"), pa.int64())
    if batch_index_base:
        idx = pc.add(idx, batch_index_base)

    def batch_col(name):
        return pc.take(batches.column(name), idx)

    # the raw milliseconds: ``timestamp_ms`` where records_table also gives a timestamp column
    names = records.column_names
    ms = records.column("timestamp_ms" if "timestamp_ms" in names else "timestamp")

    cols = {
        "key": records.column("key"), "value": records.column("value"),
        "topic": _constant(topic, pa.string(), n), "partition": _constant(partition, pa.int32(), n),
        "offset": records.column("offset"), "timestamp": timestamps(ms),
        "timestampType": pc.cast(records.column("timestamp_type"), pa.int32()),
        "headers": records.column("headers"),
        "magic": records.column("magic"), "codec": codec_names(records.column("compression")),
        "batchBaseOffset": batch_col("base_offset"), "batchLastOffset": batch_col("last_offset"),
        "batchMaxTimestamp": timestamps(records.column("batch_max_timestamp")),
        "producerId": records.column("producer_id"), "producerEpoch": records.column("producer_epoch"),
        "partitionLeaderEpoch": records.column("partition_leader_epoch"),
        "isTransactional": records.column("is_transactional"), "isControl": records.column("is_control"),
        "segment": _constant(segment, pa.string(), n), "position": records.column("batch_position"),
        "crcValid": batch_col("is_valid"), "error": pa.nulls(n, pa.string()),
    }
    return _assemble(cols, RECORD_SCHEMA)


def batch_rows(batches: pa.Table, *, topic: str, partition: int, segment: str) -> pa.RecordBatch:
    """Rows of :data:`BATCH_SCHEMA` from a ``batches_table``."""
    n = batches.num_rows
    c = batches.column
    cols = {
        "topic": _constant(topic, pa.string(), n), "partition": _constant(partition, pa.int32(), n),
        "magic": c("magic"), "codec": codec_names(c("compression")), "baseOffset": c("base_offset"),
        "lastOffset": c("last_offset"), "count": c("count"), "sizeInBytes": c("size"),
        "timestampType": pc.cast(c("timestamp_type"), pa.int32()), "maxTimestamp": timestamps(c("max_timestamp")),
        "baseTimestamp": timestamps(c("base_timestamp")), "producerId": c("producer_id"),
        "producerEpoch": c("producer_epoch"), "baseSequence": c("base_sequence"),
        "partitionLeaderEpoch": c("partition_leader_epoch"), "isTransactional": c("is_transactional"),
        "isControl": c("is_control"), "crc": pc.cast(c("crc"), pa.int64()),
        "segment": _constant(segment, pa.string(), n), "position": c("position"), "crcValid": c("is_valid"),
        "error": pa.nulls(n, pa.string()),
    }
    return _assemble(cols, BATCH_SCHEMA)


def error_row(schema: pa.Schema, *, topic: str, partition: int, segment: str, position: int,
              reason: str) -> pa.RecordBatch:
    """One PERMISSIVE-mode row reporting what could not be read from ``position`` on."""
    values = {"topic": topic, "partition": partition, "segment": segment, "position": position,
              "crcValid": False, "error": reason}
    return pa.RecordBatch.from_arrays([pa.array([values.get(f.name)], f.type) for f in schema], schema=schema)


def _assemble(cols: dict, schema: pa.Schema) -> pa.RecordBatch:
    arrays = []
    for f in schema:
        a = cols[f.name]
        if isinstance(a, pa.ChunkedArray):
            a = a.combine_chunks()
        if a.type != f.type:
            a = a.cast(f.type)
        arrays.append(a)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
