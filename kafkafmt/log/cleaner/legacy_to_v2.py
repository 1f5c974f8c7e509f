"""The Kafka 4.x cleaner's rewrite of a v0/v1 entry as a v2 batch (KAFKA-13093), in one function.

Kafka 4.x's ``MemoryRecords.filterTo`` never copies a v0/v1 entry as it is (``filterBatch`` starts
with ``writeOriginalBatch = magic >= 2``); ``buildRetainedRecordsInto`` writes the retained records
with a ``MemoryRecordsBuilder`` of magic 2 (read from Kafka 4.4.0's ``kafka-clients`` classes):

* compression: the entry's codec (a gzip wrapper becomes one gzip v2 batch, even with nothing removed);
* timestamp type: the entry's, except ``NoTimestampType`` (v0) which becomes ``CreateTime``; a v0
  record keeps its timestamp ``-1``; under ``LogAppendTime`` the log-append time is the entry's
  (wrapper's) timestamp;
* base offset: the first retained record's offset; the last offset is the last retained record's
  (no ``overrideLastOffset``: that is for v2 batches only);
* producer id/epoch, base sequence and partition leader epoch: the legacy entry's, i.e. none (-1);
* a delete horizon when a retained record is a tombstone (null value): ``needToSetDeleteHorizon`` no
  longer asks for magic >= 2 in 4.x, and a legacy entry has none yet, so the batch gets
  ``deleteHorizonMs = currentTime + delete.retention.ms`` (attribute bit 6, written as its base
  timestamp), as v2 batches with tombstones do since KIP-534.

Each plain v0/v1 message is its own entry, so it becomes its own v2 batch.  This module is the one
place the rule lives: the audit counts its output, and a 4.4 cleaner calls it for every retained
legacy entry (row ``cleaner.legacy_to_v2`` of :mod:`kafkafmt.kafka_lines`).
"""
from __future__ import annotations

from typing import Iterable

from ...constants import NO_TIMESTAMP, TimestampType
from ...errors import IllegalArgumentError
from ...records.builder import MemoryRecordsBuilder
from ...records.record import Record

__all__ = ["rewrite_as_v2"]


def rewrite_as_v2(batch, retained: Iterable[Record] | None = None, *, delete_horizon_ms: int) -> bytes:
    """The v2 batch Kafka 4.x's cleaner writes for the v0/v1 entry ``batch`` (a
    :class:`~kafkafmt.records.legacy.LegacyRecordBatch`), keeping ``retained`` (default: every record
    of the entry, in order).  ``delete_horizon_ms``: the cleaner's ``currentTime + delete.retention.ms``,
    set on the batch when a retained record is a tombstone.  Returns ``b""`` when nothing is retained
    (the entry is dropped)."""
    if batch.magic >= 2:
        raise IllegalArgumentError(f"rewrite_as_v2 takes a v0/v1 entry, not a magic {batch.magic} batch")
    records = list(batch.records() if retained is None else retained)
    if not records:
        return b""
    ts_type = batch.timestamp_type
    if ts_type == TimestampType.NO_TIMESTAMP_TYPE:
        ts_type = TimestampType.CREATE_TIME
    lat = batch.max_timestamp if ts_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP
    tombstone = any(r.value is None for r in records)
    builder = MemoryRecordsBuilder(2, batch.compression, ts_type, records[0].offset, log_append_time=lat,
                                   partition_leader_epoch=batch.partition_leader_epoch,
                                   delete_horizon_ms=delete_horizon_ms if tombstone else None)
    for r in records:
        builder.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers)
    return builder.build()
