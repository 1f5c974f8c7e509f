"""``MemoryRecordsBuilder``: write a batch exactly as Kafka's Java builder does.

Byte for byte for uncompressed data, frame for frame for compressed data (the codec library
may choose different matches than Java's).  Rules (``MemoryRecordsBuilder``, kafka-rules §1.2,
§2.6, §2.7):

* v0/v1 compressed: one wrapper whose offset is the LAST inner offset; v1 inner offsets are
  relative (``toInnerOffset``); the wrapper timestamp is the max inner timestamp (CreateTime) or
  the log-append time (LogAppendTime, which is also written into every inner message).
* v2: ``baseTimestamp`` is the FIRST appended record's timestamp (or ``deleteHorizonMs``);
  ``maxTimestamp`` is the max (CreateTime) or the log-append time.
* :meth:`MemoryRecordsBuilder.info` reports ``(maxTimestamp, shallowOffsetOfMaxTimestamp)`` as
  ``MemoryRecordsBuilder.info()`` does (Kafka 3.8+).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .. import compression as _compression
from ..constants import (
    INT32_MAX,
    LOG_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    NO_TIMESTAMP_EXTENDED,
    RECORD_BATCH_OVERHEAD,
    CompressionType,
    ControlRecordType,
    TimestampType,
)
from ..errors import IllegalArgumentError
from ..layout import CONTROL_RECORD_KEY, END_TXN_MARKER_VALUE
from ..varint import wrap64
from .default import batch_attributes, encode_default_batch, encode_default_record
from .legacy import encode_legacy_entry, legacy_attributes, record_overhead
from .record import headers_of


@dataclass(frozen=True)
class RecordsInfo:
    """``MemoryRecordsBuilder.RecordsInfo``."""

    max_timestamp: int
    shallow_offset_of_max_timestamp: int


class MemoryRecordsBuilder:
    """Build one batch (v2) or one message set (v0/v1) the way Kafka's builder does.

    Parameters mirror the Java constructor.  ``timestamp_extended`` opts in to KIP-228 (seed 002,
    never adopted by Kafka): it sets the ``isTimestampExtended`` attribute bit, allows any negative
    timestamp, and makes Long.MIN_VALUE the "no timestamp" value.  It is never set by default.
    """

    def __init__(self, magic: int = 2, compression: CompressionType | str | int = CompressionType.NONE,
                 timestamp_type: TimestampType = TimestampType.CREATE_TIME, base_offset: int = 0, *,
                 log_append_time: int = NO_TIMESTAMP, producer_id: int = NO_PRODUCER_ID,
                 producer_epoch: int = NO_PRODUCER_EPOCH, base_sequence: int = NO_SEQUENCE,
                 is_transactional: bool = False, is_control_batch: bool = False,
                 partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH, delete_horizon_ms: int | None = None,
                 level: int | None = None, timestamp_extended: bool = False):
        if isinstance(compression, str):
            compression = CompressionType.from_name(compression)
        compression = CompressionType(compression)
        timestamp_type = TimestampType(timestamp_type)
        if magic not in (0, 1, 2):
            raise IllegalArgumentError(f"Invalid magic value {magic}")
        if magic > 0 and timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise IllegalArgumentError("TimestampType must be set for magic >= 0")
        if magic < 2:
            if is_transactional:
                raise IllegalArgumentError(f"Transactional records are not supported for magic {magic}")
            if is_control_batch:
                raise IllegalArgumentError(f"Control records are not supported for magic {magic}")
            if compression == CompressionType.ZSTD:
                raise IllegalArgumentError(f"ZStandard compression is not supported for magic {magic}")
            if delete_horizon_ms is not None:
                raise IllegalArgumentError(f"Delete horizon timestamp is not supported for magic {magic}")
            if timestamp_extended:
                raise IllegalArgumentError("KIP-228 extended timestamps need magic v2")
        self.magic = magic
        self.compression = compression
        self.level = level
        self.timestamp_type = timestamp_type
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional
        self.is_control_batch = is_control_batch
        self.partition_leader_epoch = partition_leader_epoch
        self.delete_horizon_ms = delete_horizon_ms
        self.timestamp_extended = timestamp_extended
        self.no_timestamp = NO_TIMESTAMP_EXTENDED if timestamp_extended else NO_TIMESTAMP
        self.base_timestamp: int | None = delete_horizon_ms
        self.max_timestamp = self.no_timestamp
        self.offset_of_max_timestamp = -1
        self.last_offset: int | None = None
        self.num_records = 0
        self.uncompressed_bytes = 0
        self._parts: list[bytes] = []
        self._built: bytes | None = None

    # --- appending -------------------------------------------------------------------------------
    def append_with_offset(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
                           headers: Iterable = (), *, is_control: bool = False,
                           own_timestamp_type: TimestampType | None = None) -> None:
        """``appendWithOffset``: offsets must increase; timestamps must be >= 0 or -1.

        ``own_timestamp_type`` (v0/v1 only): write the message with this timestamp type and its own
        ``timestamp`` whatever the builder's, as Kafka before 0.11 appended a message already converted by
        ``Record.convert`` (``MemoryRecordsBuilder.appendWithOffset(long, Record)``, 0.10.2.2)."""
        if self._built is not None:
            raise IllegalArgumentError("Tried to append a record, but MemoryRecordsBuilder is closed for record appends")
        if is_control != self.is_control_batch:
            raise IllegalArgumentError("Control records can only be appended to control batches" if is_control
                                       else "Cannot append non-control records to a control batch")
        if self.last_offset is not None and offset <= self.last_offset:
            raise IllegalArgumentError(f"Illegal offset {offset} following previous offset {self.last_offset} "
                                       "(Offsets must increase monotonically).")
        if not self.timestamp_extended and timestamp < 0 and timestamp != NO_TIMESTAMP:
            raise IllegalArgumentError(f"Invalid negative timestamp {timestamp}")
        headers = headers_of(headers)
        if self.magic < 2 and headers:
            raise IllegalArgumentError(f"Magic v{self.magic} does not support record headers")
        key = None if key is None else bytes(key)
        value = None if value is None else bytes(value)
        if self.base_timestamp is None:
            self.base_timestamp = timestamp
        if self.magic >= 2:
            delta = offset - self.base_offset
            if delta > INT32_MAX or delta < -2**31:
                raise IllegalArgumentError(f"Maximum offset delta exceeded, base offset: {self.base_offset}, "
                                           f"last offset: {offset}")
            # Java long arithmetic: the delta wraps (e.g. Long.MAX - (-1))
            rec = encode_default_record(delta, wrap64(timestamp - self.base_timestamp), key, value, headers)
        else:
            ts_type = self.timestamp_type if own_timestamp_type is None else TimestampType(own_timestamp_type)
            if ts_type == TimestampType.LOG_APPEND_TIME and own_timestamp_type is None:
                timestamp = self.log_append_time
            inner_offset = self._to_inner_offset(offset)
            attrs = legacy_attributes(self.magic, CompressionType.NONE, ts_type)
            rec = encode_legacy_entry(inner_offset, self.magic, attrs, timestamp, key, value)
        self._parts.append(rec)
        self._record_written(offset, timestamp, len(rec))

    def append(self, timestamp: int, key: bytes | None, value: bytes | None, headers: Iterable = ()) -> None:
        """``append``: the next offset after the last one (or the base offset)."""
        nxt = self.base_offset if self.last_offset is None else self.last_offset + 1
        self.append_with_offset(nxt, timestamp, key, value, headers)

    def append_control_record(self, timestamp: int, control_type: ControlRecordType, value: bytes | None,
                              offset: int | None = None) -> None:
        key = CONTROL_RECORD_KEY.pack(0, int(control_type))
        nxt = offset if offset is not None else (self.base_offset if self.last_offset is None else self.last_offset + 1)
        self.append_with_offset(nxt, timestamp, key, value, (), is_control=True)

    def append_end_txn_marker(self, timestamp: int, control_type: ControlRecordType, coordinator_epoch: int) -> None:
        """``appendEndTxnMarker``: needs a producer id and a transactional control batch."""
        if self.producer_id == NO_PRODUCER_ID:
            raise IllegalArgumentError("End transaction marker requires a valid producerId")
        if not self.is_transactional:
            raise IllegalArgumentError("End transaction marker depends on batch transactional flag being enabled")
        if control_type not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            raise IllegalArgumentError(f"Invalid end transaction marker type {control_type}")
        self.append_control_record(timestamp, control_type, END_TXN_MARKER_VALUE.pack(0, coordinator_epoch))

    def override_last_offset(self, last_offset: int) -> None:
        """``overrideLastOffset``: the v2 batch's last offset (the cleaner keeps the original's, so the
        producer's last sequence survives compaction)."""
        if self._built is not None:
            raise IllegalArgumentError("Cannot override the last offset after the records have been built")
        self.last_offset = last_offset

    def _to_inner_offset(self, offset: int) -> int:
        # MemoryRecordsBuilder.toInnerOffset: relative only for compressed magic >= 1 (KIP-31)
        if self.magic > 0 and self.compression != CompressionType.NONE:
            return offset - self.base_offset
        return offset

    def _record_written(self, offset: int, timestamp: int, size: int) -> None:
        if self.num_records == INT32_MAX:
            raise IllegalArgumentError("Maximum number of records per batch exceeded")
        self.num_records += 1
        self.uncompressed_bytes += size
        self.last_offset = offset
        if self.magic > 0 and timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
            self.offset_of_max_timestamp = offset

    # --- closing -----------------------------------------------------------------------------------
    def _validate_producer_state(self) -> None:
        if self.is_transactional and self.producer_id == NO_PRODUCER_ID:
            raise IllegalArgumentError("Cannot write transactional messages without a valid producer ID")
        if self.producer_id != NO_PRODUCER_ID:
            if self.producer_epoch == NO_PRODUCER_EPOCH:
                raise IllegalArgumentError("Invalid negative producer epoch")
            if self.base_sequence < 0 and not self.is_control_batch:
                raise IllegalArgumentError("Invalid negative sequence number used")
            if self.magic < 2:
                raise IllegalArgumentError(f"Idempotent messages are not supported for magic {self.magic}")

    def build(self) -> bytes:
        """Close the builder and return the record-set bytes (empty if nothing was appended)."""
        if self._built is not None:
            return self._built
        self._validate_producer_state()
        if self.num_records == 0:
            self._built = b""
        elif self.magic >= 2:
            self._built = self._build_v2()
        elif self.compression == CompressionType.NONE:
            self._built = b"".join(self._parts)
        else:
            self._built = self._build_legacy_wrapper()
        return self._built

    def _build_v2(self) -> bytes:
        max_ts = self.log_append_time if self.timestamp_type == TimestampType.LOG_APPEND_TIME else self.max_timestamp
        attrs = batch_attributes(self.compression, self.timestamp_type, transactional=self.is_transactional,
                                 control=self.is_control_batch, delete_horizon=self.delete_horizon_ms is not None,
                                 timestamp_extended=self.timestamp_extended)
        return encode_default_batch(
            base_offset=self.base_offset, partition_leader_epoch=self.partition_leader_epoch, attributes=attrs,
            last_offset_delta=self.last_offset - self.base_offset, base_timestamp=self.base_timestamp,
            max_timestamp=max_ts, producer_id=self.producer_id, producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence, records_count=self.num_records, records=b"".join(self._parts),
            level=self.level)

    def _build_legacy_wrapper(self) -> bytes:
        inner = b"".join(self._parts)
        compressed = _compression.compress(self.compression, inner, magic=self.magic, level=self.level)
        ts = self.log_append_time if self.timestamp_type == TimestampType.LOG_APPEND_TIME else self.max_timestamp
        attrs = legacy_attributes(self.magic, self.compression, self.timestamp_type)
        return encode_legacy_entry(self.last_offset, self.magic, attrs, ts, None, compressed)

    def info(self) -> RecordsInfo:
        """``MemoryRecordsBuilder.info()``: (maxTimestamp, shallowOffsetOfMaxTimestamp)."""
        compressed_or_v2 = self.compression != CompressionType.NONE or self.magic >= 2
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME:
            return RecordsInfo(self.log_append_time, self.last_offset if compressed_or_v2 else self.base_offset)
        if self.max_timestamp == self.no_timestamp:
            return RecordsInfo(self.no_timestamp, -1)
        return RecordsInfo(self.max_timestamp, self.last_offset if compressed_or_v2 else self.offset_of_max_timestamp)

    @property
    def estimated_size(self) -> int:
        overhead = RECORD_BATCH_OVERHEAD if self.magic >= 2 else (LOG_OVERHEAD + record_overhead(self.magic)
                                               if self.compression != CompressionType.NONE else 0)
        return overhead + self.uncompressed_bytes


def build_records(records: Sequence, *, magic: int = 2, compression=CompressionType.NONE,
                  timestamp_type: TimestampType = TimestampType.CREATE_TIME, base_offset: int = 0, **kw) -> bytes:
    """One batch (v2) or message set (v0/v1) from ``(timestamp, key, value[, headers])`` tuples or dicts
    (``offset`` in a dict: ``appendWithOffset``), with a :class:`MemoryRecordsBuilder` given ``kw``: the one
    way the views, samples and generators build records."""
    b = MemoryRecordsBuilder(magic, compression, timestamp_type, base_offset, **kw)
    for r in records:
        if isinstance(r, dict):
            if "offset" in r:
                b.append_with_offset(r["offset"], r.get("timestamp", NO_TIMESTAMP), r.get("key"), r.get("value"),
                                     r.get("headers", ()))
            else:
                b.append(r.get("timestamp", NO_TIMESTAMP), r.get("key"), r.get("value"), r.get("headers", ()))
        else:
            b.append(*r)
    return b.build()


def end_txn_marker(*, base_offset: int, timestamp: int, partition_leader_epoch: int, producer_id: int,
                   producer_epoch: int, control_type: ControlRecordType, coordinator_epoch: int) -> bytes:
    """``MemoryRecords.withEndTransactionMarker``: a transactional control batch with one marker."""
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, base_offset,
                             log_append_time=timestamp, producer_id=producer_id, producer_epoch=producer_epoch,
                             base_sequence=NO_SEQUENCE, is_transactional=True, is_control_batch=True,
                             partition_leader_epoch=partition_leader_epoch)
    b.append_end_txn_marker(timestamp, control_type, coordinator_epoch)
    return b.build()
