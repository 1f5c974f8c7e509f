"""In-place batch mutation, as the broker does it on the leader (kafka-rules §1.4, §2.3).

The functions rewrite fields of one batch inside a ``bytearray`` (the caller's copy; kafkafmt never
mutates its input) through :mod:`kafkafmt.layout`, recomputing the checksum exactly when Kafka does:

* v2 (``DefaultRecordBatch``): ``setLastOffset`` writes ``baseOffset = last - lastOffsetDelta`` and
  ``setPartitionLeaderEpoch`` writes the epoch, both **outside** the CRC32C (which starts at the
  attributes), so the CRC is left alone; ``setMaxTimestamp`` is a no-op when type and value are
  unchanged, else it rewrites the attributes (codec, transactional, control and delete-horizon bits
  kept, bit 3 set or cleared, the unused high byte zeroed since Kafka writes ``putShort(byte)``) and
  ``maxTimestamp`` and recomputes the CRC32C.
* v0/v1 (``ByteBufferLegacyRecordBatch``): ``setLastOffset`` rewrites only the 8-byte entry offset
  (inner v0 absolute offsets are NOT touched, which is why LogValidator never assigns v0 in place);
  ``setMaxTimestamp`` raises UnsupportedOperationException for v0, is a no-op when unchanged, else
  rewrites attributes (``LegacyRecord.computeAttributes``: codec | timestamp-type bit) and the
  timestamp, then recomputes the CRC32 over magic..end; ``setPartitionLeaderEpoch`` raises
  UnsupportedOperationException.

Each function returns a small dict describing what changed (for traces).
"""
from __future__ import annotations

from ..constants import (
    LEGACY_COMPRESSION_CODEC_MASK,
    LEGACY_TIMESTAMP_TYPE_MASK,
    V2_COMPRESSION_CODEC_MASK,
    V2_CONTROL_FLAG_MASK,
    V2_DELETE_HORIZON_FLAG_MASK,
    V2_TIMESTAMP_TYPE_MASK,
    V2_TRANSACTIONAL_FLAG_MASK,
    TimestampType,
)
from ..crc import crc32c
from ..errors import KafkaFmtError, UnsupportedOperationError  # noqa: F401 (re-exported)
from ..layout import DEFAULT_BATCH, DEFAULT_BATCH_CRC_START, LEGACY_V1, LOG_ENTRY
from ..records.legacy import message_checksum
from ..records.walker import span_at


def _batch_end(buf, pos: int) -> int:
    return span_at(buf, pos).end


def set_last_offset(buf: bytearray, pos: int, magic: int, last_offset: int) -> dict:
    """``RecordBatch.setLastOffset`` (v2: via baseOffset; legacy: the entry offset)."""
    if magic >= 2:
        delta = DEFAULT_BATCH.get(buf, pos, "lastOffsetDelta")
        old = DEFAULT_BATCH.get(buf, pos, "baseOffset")
        DEFAULT_BATCH.put(buf, pos, "baseOffset", last_offset - delta)
        return {"field": "baseOffset", "old": old, "new": last_offset - delta, "crc_recomputed": False}
    old = LOG_ENTRY.get(buf, pos, "offset")
    LOG_ENTRY.put(buf, pos, "offset", last_offset)
    return {"field": "offset", "old": old, "new": last_offset, "crc_recomputed": False}


def set_partition_leader_epoch(buf: bytearray, pos: int, magic: int, epoch: int) -> dict:
    """``DefaultRecordBatch.setPartitionLeaderEpoch`` (outside the CRC); legacy → UnsupportedOperation."""
    if magic < 2:
        raise UnsupportedOperationError("Magic versions prior to 2 do not support partition leader epoch")
    old = DEFAULT_BATCH.get(buf, pos, "partitionLeaderEpoch")
    DEFAULT_BATCH.put(buf, pos, "partitionLeaderEpoch", epoch)
    return {"field": "partitionLeaderEpoch", "old": old, "new": epoch, "crc_recomputed": False}


def set_max_timestamp(buf: bytearray, pos: int, magic: int, timestamp_type: TimestampType, timestamp: int) -> dict:
    """``RecordBatch.setMaxTimestamp(type, ts)`` with Kafka's no-op shortcut and CRC recomputation."""
    timestamp_type = TimestampType(timestamp_type)
    end = _batch_end(buf, pos)
    if magic >= 2:
        attrs = DEFAULT_BATCH.get(buf, pos, "attributes") & 0xFF  # only the low byte is read
        cur_type = TimestampType.LOG_APPEND_TIME if attrs & V2_TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME
        cur_ts = DEFAULT_BATCH.get(buf, pos, "maxTimestamp")
        if cur_type == timestamp_type and cur_ts == timestamp:
            return {"changed": False, "timestampType": cur_type, "maxTimestamp": cur_ts}
        if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            from ..errors import IllegalArgumentError
            raise IllegalArgumentError("Timestamp type must be provided to compute attributes for message "
                                       "format v2 and above")
        new_attrs = attrs & (V2_COMPRESSION_CODEC_MASK | V2_TRANSACTIONAL_FLAG_MASK | V2_CONTROL_FLAG_MASK
                             | V2_DELETE_HORIZON_FLAG_MASK)
        if timestamp_type == TimestampType.LOG_APPEND_TIME:
            new_attrs |= V2_TIMESTAMP_TYPE_MASK
        old_crc = DEFAULT_BATCH.get(buf, pos, "crc")
        DEFAULT_BATCH.put(buf, pos, "attributes", new_attrs)
        DEFAULT_BATCH.put(buf, pos, "maxTimestamp", timestamp)
        crc = crc32c(memoryview(buf)[pos + DEFAULT_BATCH_CRC_START:end])
        DEFAULT_BATCH.put(buf, pos, "crc", crc)
        return {"changed": True, "old_type": cur_type, "new_type": timestamp_type, "old_ts": cur_ts,
                "new_ts": timestamp, "old_attributes": attrs, "new_attributes": new_attrs, "old_crc": old_crc,
                "new_crc": crc, "crc_recomputed": True}
    if magic == 0:
        raise UnsupportedOperationError("Cannot set timestamp for a record with magic = 0")
    attrs = LEGACY_V1.get(buf, pos, "attributes") & 0xFF
    cur_type = TimestampType.LOG_APPEND_TIME if attrs & LEGACY_TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME
    cur_ts = LEGACY_V1.get(buf, pos, "timestamp")
    if cur_type == timestamp_type and cur_ts == timestamp:
        return {"changed": False, "timestampType": cur_type, "timestamp": cur_ts}
    new_attrs = attrs & LEGACY_COMPRESSION_CODEC_MASK  # LegacyRecord.computeAttributes(magic, codec, type)
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        new_attrs |= LEGACY_TIMESTAMP_TYPE_MASK
    old_crc = LEGACY_V1.get(buf, pos, "crc")
    LEGACY_V1.put(buf, pos, "attributes", new_attrs)
    LEGACY_V1.put(buf, pos, "timestamp", timestamp)
    crc = message_checksum(buf, pos, end)
    LEGACY_V1.put(buf, pos, "crc", crc)
    return {"changed": True, "old_type": cur_type, "new_type": timestamp_type, "old_ts": cur_ts, "new_ts": timestamp,
            "old_attributes": attrs, "new_attributes": new_attrs, "old_crc": old_crc, "new_crc": crc,
            "crc_recomputed": True}
