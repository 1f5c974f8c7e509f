"""What ``UnifiedLog`` checks and learns of records before it appends them (Kafka 3.9.2): ``AppendOrigin``,
``LogAppendInfo`` and ``UnifiedLog.analyzeAndValidateRecords``, written once for the broker's produce path
(:mod:`kafkafmt.broker.validator`) and the log (:meth:`kafkafmt.log.Log.append_as_leader`,
:meth:`~kafkafmt.log.Log.append_as_follower`).

Per batch, in Kafka's order:

1. a ``RAFT_LEADER`` append's batches carry the leader's epoch (``InvalidRecordException``);
2. a ``CLIENT`` v2 batch has baseOffset 0 (``InvalidRecordException``);
3. a ``REPLICATION`` batch whose partition leader epoch is above the replica's own, and every batch
   after it, is skipped (``UnifiedLog.hasHigherPartitionLeaderEpoch``, Kafka 3.9.1+, KAFKA-18723: a
   leader that lost leadership may still answer a fetch with batches of its next epoch);
4. the first offset (v2: the batch's base offset; v0/v1: unknown, the last offset of the first batch
   kept instead), whether the offsets increase, the last leader epoch;
5. ``max.message.bytes`` unless ``ignoreRecordSize`` (``RecordTooLargeException``);
6. ``batch.isValid()`` (v2 size + CRC-32C, v0/v1 the **outer** CRC-32) else ``CorruptRecordException``;
7. the max timestamp and the last offset of the first batch holding it; the valid bytes; the source
   codec, the last non-none one.

Then, when offsets are not assigned by the broker (``requireOffsetsMonotonic``), offsets that do not
increase raise ``OffsetsOutOfOrderException`` listing every record's offset.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable

from ..constants import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP, CompressionType
from ..errors import (
    CorruptRecordError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaFmtError,
    OffsetsOutOfOrderError,
    RecordTooLargeError,
)
from ..records import MemoryRecords
from .trace import Trace

__all__ = ["AppendOrigin", "ORIGINS", "LogAppendInfo", "analyze_and_validate_records", "UNKNOWN_OFFSET",
           "scala_list"]

#: ``UnifiedLog.UnknownOffset``: the first offset of v0/v1 records, not known without decompressing
UNKNOWN_OFFSET = -1

_UL = "UnifiedLog.analyzeAndValidateRecords"


class AppendOrigin(str, Enum):
    """``org.apache.kafka.storage.internals.log.AppendOrigin``: where an append comes from, which decides
    the checks it gets (a ``str`` enum: ``AppendOrigin.CLIENT == "CLIENT"``)."""

    #: from the leader, by replication: offsets and timestamps as the leader wrote them, no LogValidator
    REPLICATION = "REPLICATION"
    #: from the group or transaction coordinator: validated, control batches allowed
    COORDINATOR = "COORDINATOR"
    #: from a producer: fully validated
    CLIENT = "CLIENT"
    #: from the KRaft leader: offsets already assigned, the leader's epoch on every batch
    RAFT_LEADER = "RAFT_LEADER"

    @classmethod
    def of(cls, origin: "str | AppendOrigin") -> "AppendOrigin":
        """The origin named ``origin`` (Java's ``AppendOrigin.valueOf``), else :class:`IllegalArgumentError`."""
        try:
            return cls(origin)
        except ValueError:
            raise IllegalArgumentError(f"No enum constant AppendOrigin.{origin}") from None


#: every origin's name, in Kafka's order
ORIGINS = tuple(o.value for o in AppendOrigin)


@dataclass
class LogAppendInfo:
    """``LogAppendInfo``: what an append contained and where it went."""

    first_offset: int
    last_offset: int
    last_leader_epoch: int | None
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    log_append_time: int
    log_start_offset: int
    source_compression: CompressionType
    valid_bytes: int
    last_offset_of_first_batch: int
    #: whether every batch's last offset is above the one before (``monotonic`` in Kafka's loop)
    offsets_monotonic: bool = True
    #: batches skipped because of a newer partition leader epoch (``hasHigherPartitionLeaderEpoch``)
    skipped_batches: int = 0
    #: filled in by the log: the segment that received the records and whether/why it rolled
    segment_base_offset: int | None = None
    roll_reasons: list[str] = field(default_factory=list)
    append_time: int | None = None

    @property
    def first_or_last_offset_of_first_batch(self) -> int:
        return self.first_offset if self.first_offset >= 0 else self.last_offset_of_first_batch

    @property
    def rolled(self) -> bool:
        return bool(self.roll_reasons)


def scala_list(items) -> str:
    """How Scala prints a collection of numbers: ``List(1, 2)``."""
    return "List(" + ", ".join(str(i) for i in items) + ")"


def _reject(err: KafkaFmtError, trace: Trace | None, rule: str, **values):
    if trace is not None:
        trace.add(rule, f"rejected: {err.kafka_exception}: {err.reason}", _UL, **values)
    raise err


def analyze_and_validate_records(records, *, origin: str | AppendOrigin, leader_epoch: int, max_message_bytes: int,
                                 topic_partition: str, ignore_record_size: bool, require_offsets_monotonic: bool,
                                 log_start_offset: int = 0, batches: Iterable | None = None,
                                 trace: Trace | None = None) -> LogAppendInfo:
    """``UnifiedLog.analyzeAndValidateRecords`` over ``records`` (bytes-like or
    :class:`~kafkafmt.records.MemoryRecords`; ``batches``: its batches when the caller has read them).

    ``leader_epoch``: the epoch of a ``RAFT_LEADER`` append, or a replica's own leader epoch
    (``REPLICATION``: batches from a newer epoch on are skipped).  ``trace``: where the checks are told.
    Raises the kafkafmt error mirroring Kafka's exception, with Kafka's message.
    """
    origin = AppendOrigin.of(origin)
    tp = topic_partition
    if batches is None:
        batches = MemoryRecords(records).batches()
    valid_bytes, first_offset, last_offset = 0, UNKNOWN_OFFSET, -1
    last_leader_epoch = NO_PARTITION_LEADER_EPOCH
    source_compression = CompressionType.NONE
    monotonic, max_timestamp, shallow = True, NO_TIMESTAMP, -1
    read_first, last_offset_of_first_batch = False, -1
    skip_remaining, skipped, seen = False, 0, 0
    for i, batch in enumerate(batches):
        seen += 1
        if origin is AppendOrigin.RAFT_LEADER and batch.partition_leader_epoch != leader_epoch:
            _reject(InvalidRecordError(f"Append from Raft leader did not set the batch epoch correctly, expected "
                                       f"{leader_epoch} but the batch has {batch.partition_leader_epoch}"), trace,
                    "Raft leader epoch", batch=i)
        # only v2 is checked, for compatibility with older clients
        if batch.magic >= 2 and origin is AppendOrigin.CLIENT and batch.base_offset != 0:
            _reject(InvalidRecordError(f"The baseOffset of the record batch in the append to {tp} should be 0, "
                                       f"but it is {batch.base_offset}"), trace, "CLIENT v2 baseOffset must be 0",
                    batch=i, baseOffset=batch.base_offset)
        if not skip_remaining and (origin is AppendOrigin.REPLICATION and batch.partition_leader_epoch != -1
                                   and batch.partition_leader_epoch > leader_epoch):
            skip_remaining = True
            if trace is not None:
                trace.add("newer leader epoch", f"batch {i} and every batch after it skipped: its partition leader "
                          f"epoch {batch.partition_leader_epoch} is above the replica's {leader_epoch}",
                          "UnifiedLog.hasHigherPartitionLeaderEpoch (KAFKA-18723)", batch=i)
        if skip_remaining:
            skipped += 1
            continue
        if not read_first:
            if batch.magic >= 2:
                first_offset = batch.base_offset
            last_offset_of_first_batch = batch.last_offset
            read_first = True
        if last_offset >= batch.last_offset:
            monotonic = False
        last_offset = batch.last_offset
        last_leader_epoch = batch.partition_leader_epoch
        size = batch.size_in_bytes
        if not ignore_record_size and size > max_message_bytes:
            _reject(RecordTooLargeError(f"The record batch size in the append to {tp} is {size} bytes which exceeds "
                                        f"the maximum configured value of {max_message_bytes}."), trace,
                    "max.message.bytes", batch=i, size=size)
        if not batch.is_valid():
            _reject(CorruptRecordError(f"Record is corrupt (stored crc = {batch.checksum}) in topic partition {tp}.",
                                       position=batch.position), trace, "batch CRC (isValid)", batch=i,
                    stored_crc=batch.checksum, computed_crc=batch.compute_checksum())
        if batch.max_timestamp > max_timestamp:
            max_timestamp, shallow = batch.max_timestamp, last_offset
        valid_bytes += size
        if batch.compression != CompressionType.NONE:
            source_compression = batch.compression
    if trace is not None and seen:
        trace.add("per-batch pre-checks", f"{seen - skipped} batch(es): baseOffset, size and CRC ok", _UL,
                  max_message_bytes=max_message_bytes, monotonic=monotonic, ignore_record_size=ignore_record_size,
                  note="legacy batches: only the OUTER (wrapper) CRC is checked here; inner CRCs are checked by "
                       "LogValidator.validateRecord")
    if require_offsets_monotonic and not monotonic:
        offsets = [r.offset for r in MemoryRecords(records).records()]
        _reject(OffsetsOutOfOrderError(f"Out of order offsets found in append to {tp}: {scala_list(offsets)}"),
                trace, "offsets must increase (requireOffsetsMonotonic)")
    return LogAppendInfo(
        first_offset=first_offset, last_offset=last_offset,
        last_leader_epoch=None if last_leader_epoch == NO_PARTITION_LEADER_EPOCH else last_leader_epoch,
        max_timestamp=max_timestamp, shallow_offset_of_max_timestamp=shallow, log_append_time=NO_TIMESTAMP,
        log_start_offset=log_start_offset, source_compression=source_compression, valid_bytes=valid_bytes,
        last_offset_of_first_batch=last_offset_of_first_batch, offsets_monotonic=monotonic, skipped_batches=skipped)
