"""What the log cleaner keeps of a batch: ``MemoryRecords.filterTo`` with the cleaner's ``RecordFilter``
(Kafka 3.9 ``Cleaner.cleanInto``, ``Cleaner.shouldRetainRecord``, ``CleanedTransactionMetadata``; on the
4.4 line, ``--kafka-line 4.4``, the rules of 4.4.0's ``org.apache.kafka.storage.internals.log
.Cleaner`` where they differ: the rows ``cleaner.*`` of :mod:`kafkafmt.kafka_lines`).

Per batch (every magic):

* the batch-level decision (``checkBatchRetention``): a batch of an aborted transaction is discarded; a
  transaction marker goes only once no batch of its transaction is left and its delete horizon has
  passed; the batch holding an active producer's last sequence (or, with no data left, its last marker)
  is kept even when empty (``RETAIN_EMPTY``: a v2 header with no records), and so is the batch whose
  next offset ends the round (KAFKA-17076: the first uncleanable offset in 3.9.2; the high watermark in
  4.4.0, KAFKA-20452 -- row ``cleaner.retain_last_batch`` of :mod:`kafkafmt.kafka_lines`);
* per record (``shouldRetainRecord``): a record past the offset map's latest offset stays; otherwise a
  record stays if its offset is its key's latest and it has a value, or it is a tombstone whose horizon
  has not passed (v2: ``deleteHorizonMs`` in the batch header, KIP-534; v0/v1: the segment's
  last-modified time against ``delete.retention.ms``); keyless records go;
* a batch with every record kept (and no delete horizon to set) is copied byte for byte; otherwise it
  is rebuilt with ``MemoryRecordsBuilder``: v0/v1 wrappers take the first retained offset as base, so
  the retained inner messages keep their offsets and leave holes (KIP-31); v2 batches keep their base
  and last offset (``overrideLastOffset``) and get ``deleteHorizonMs = now + delete.retention.ms`` the
  first time a tombstone or an empty transaction's marker is kept (attribute bit 6, ``baseTimestamp``);
  on the 4.4 line a retained v0/v1 entry is never copied: it becomes a v2 batch
  (:func:`kafkafmt.log.cleaner.legacy_to_v2.rewrite_as_v2`, KAFKA-13093, row ``cleaner.legacy_to_v2``).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ...constants import NO_TIMESTAMP, CompressionType, ControlRecordType, TimestampType
from ...errors import IllegalStateError
from ...records import MemoryRecordsBuilder
from ...records.default import batch_attributes, encode_default_batch
from .legacy_to_v2 import rewrite_as_v2
from .offset_map import OffsetMap
from .rules import (
    DELETE,
    DROP_NO_KEY,
    DROP_TOMBSTONE,
    RETAIN,
    RETAIN_EMPTY,
    batch_retention,
    needs_delete_horizon,
    record_retention,
    tombstones_retained,
)

__all__ = ["AbortedTxn", "LastRecord", "CleanedTransactionMetadata", "CleanerStats", "SegmentFilter",
           "rebuild_batch", "empty_batch_header"]


@dataclass(frozen=True, order=True)
class AbortedTxn:
    """A ``.txnindex`` entry (``AbortedTxn``): the aborted transaction's first offset and its marker's offset."""

    first_offset: int
    producer_id: int
    last_offset: int
    last_stable_offset: int


@dataclass(frozen=True)
class LastRecord:
    """``LastRecord``: an active producer's last data offset (None: only a marker left) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


@dataclass
class CleanerStats:
    """``CleanerStats`` plus what the cleaner removed and kept, for reports."""

    messages_read: int = 0
    bytes_read: int = 0
    messages_written: int = 0
    bytes_written: int = 0
    map_messages_read: int = 0
    map_bytes_read: int = 0
    invalid_messages: int = 0
    #: tombstones kept: (offset, horizon ms or None = the segment's mtime rule (v0/v1))
    tombstones_kept: list = field(default_factory=list)
    tombstones_removed: int = 0
    buffer_utilization: float = 0.0


class CleanedTransactionMetadata:
    """``CleanedTransactionMetadata``: aborted and committed transactions met while walking the log."""

    def __init__(self):
        self._committed: set[int] = set()
        self._aborted: dict[int, list] = {}  # pid -> [AbortedTxn, last observed batch offset or None]
        self._heap: list[AbortedTxn] = []
        #: the cleaned segment's ``.txnindex`` entries
        self.cleaned_index: list[AbortedTxn] | None = None

    def add_aborted_transactions(self, txns) -> None:
        for t in txns:
            heapq.heappush(self._heap, t)

    def _consume_up_to(self, offset: int) -> None:
        while self._heap and self._heap[0].first_offset <= offset:
            t = heapq.heappop(self._heap)
            self._aborted.setdefault(t.producer_id, [t, None])

    def on_control_batch_read(self, batch) -> bool:
        """True if the control batch can be discarded."""
        self._consume_up_to(batch.last_offset)
        first = next(iter(batch.records()), None)
        if first is None:
            return True  # an empty control batch was already cleaned
        ctype = first.control.type if first.control is not None else None
        pid = batch.producer_id
        if ctype == ControlRecordType.ABORT:
            meta = self._aborted.pop(pid, None)
            if meta is not None and meta[1] is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(meta[0])
                return False
            return True
        if ctype == ControlRecordType.COMMIT:
            if pid in self._committed:
                self._committed.discard(pid)
                return False
            return True
        return False

    def on_batch_read(self, batch) -> bool:
        """True if the data batch belongs to an aborted transaction."""
        self._consume_up_to(batch.last_offset)
        if not batch.is_transactional:
            return False
        meta = self._aborted.get(batch.producer_id)
        if meta is not None:
            meta[1] = batch.last_offset
            return True
        self._committed.add(batch.producer_id)
        return False


class SegmentFilter:
    """The cleaner's ``RecordFilter`` over one group: ``filter_batch`` returns the bytes to keep."""

    def __init__(self, offset_map: OffsetMap, *, now: int, delete_retention_ms: int,
                 txn: CleanedTransactionMetadata, last_records: dict[int, LastRecord], stats: CleanerStats,
                 legacy_to_v2: bool = False, retain_batch_ending_at: int | None = None, delete_horizon: bool = True,
                 rebuild_magic: int | None = None, txn_per_segment: bool = False, time_index_by_record: bool = False,
                 recompress_kept: bool = False):
        """``legacy_to_v2``: retained v0/v1 entries are rewritten as v2 batches (Kafka 4.x, KAFKA-13093);
        ``retain_batch_ending_at``: the batch whose next offset is this one is kept even when empty
        (KAFKA-17076, the offset Kafka 4.4 passes: the high watermark, KAFKA-20452); ``delete_horizon``:
        v2 tombstones and markers live by the batch's ``deleteHorizonMs`` (KIP-534, Kafka 3.1), else as
        v0/v1 ones by the segment's modification time, the batch never given a horizon; ``rebuild_magic``:
        the magic a rebuilt compressed v0/v1 wrapper takes (the topic's format, Kafka 0.10.0 before
        KAFKA-4298; None: the wrapper's own), one of another magic than its inner messages failing;
        ``txn_per_segment``: ``txn`` starts afresh with each segment of a group (before KAFKA-8335);
        ``time_index_by_record``: the cleaned segment's time index maps its largest timestamp to the first
        record holding it, not to its batch's last offset (0.10.1, before KAFKA-4390); ``recompress_kept``: a
        compressed v0/v1 wrapper is rebuilt even when every inner message is retained (0.9's ``cleanInto``,
        before the KIP-31/KIP-32 follow-up wrote such a set back as it was)."""
        self.map = offset_map
        self.legacy_to_v2 = legacy_to_v2
        self.delete_horizon = delete_horizon
        self.rebuild_magic = rebuild_magic
        self.txn_per_segment = txn_per_segment
        self.time_index_by_record = time_index_by_record
        self.recompress_kept = recompress_kept
        self.retain_batch_ending_at = retain_batch_ending_at
        self.now = now
        self.delete_retention_ms = delete_retention_ms
        self.txn = txn
        self.last_records = last_records
        self.stats = stats
        self.retain_legacy_deletes = True
        #: ``RecordFilter``'s ``discardBatchRecords``: the batch just checked goes whole
        self.discard_records = False

    # --- RecordFilter.checkBatchRetention -----------------------------------------------------------
    def _is_last_record_of_producer(self, batch) -> bool:
        last = self.last_records.get(batch.producer_id)
        if last is None:
            return False
        if last.last_data_offset is not None:
            return batch.last_offset == last.last_data_offset
        return batch.is_control and batch.producer_epoch == last.producer_epoch

    def check_batch_retention(self, batch) -> tuple[int, bool]:
        """``checkBatchRetention``: (the batch's :mod:`~.rules` retention, whether it is a marker of a
        transaction with no batch left); sets :attr:`discard_records`."""
        can_discard = self.txn.on_control_batch_read(batch) if batch.is_control else self.txn.on_batch_read(batch)
        if batch.is_control and not self.delete_horizon:  # shouldDiscardBatch(retainTxnMarkers = retainDeletes)
            self.discard_records = can_discard and not self.retain_legacy_deletes
        elif batch.is_control:
            h = batch.delete_horizon_ms
            self.discard_records = can_discard and h is not None and h <= self.now
        else:
            self.discard_records = can_discard
        retain_at = self.retain_batch_ending_at
        retention = batch_retention(self.discard_records, batch.has_producer_id,
                                    batch.has_producer_id and self._is_last_record_of_producer(batch),
                                    retain_at is not None and batch.last_offset + 1 == retain_at)
        return retention, can_discard and batch.is_control

    def keeps_tombstones(self, batch) -> bool:
        """Whether ``batch``'s tombstones are still inside their delete horizon (:func:`~.rules.tombstones_retained`
        for v2; v0/v1: the segment's modification time, :attr:`retain_legacy_deletes`)."""
        if batch.magic >= 2 and self.delete_horizon:
            h = batch.delete_horizon_ms
            return tombstones_retained(h is not None, -1 if h is None else h, self.now)
        return self.retain_legacy_deletes

    # --- RecordFilter.shouldRetainRecord -------------------------------------------------------------
    def should_retain_record(self, batch, record) -> bool:
        if self.discard_records:
            return False
        if batch.is_control:
            return True
        key = record.key
        latest = -1 if key is None or record.offset > self.map.latest_offset else self.map.get(key)
        tombstone = record.value is None
        decision = record_retention(record.offset, self.map.latest_offset, key is not None, latest, tombstone,
                                    tombstone and self.keeps_tombstones(batch))
        self.count(decision)
        return decision == RETAIN

    def count(self, decision: int, n: int = 1) -> None:
        """A record's :func:`~.rules.record_retention` ``decision`` into the statistics."""
        if decision == DROP_NO_KEY:
            self.stats.invalid_messages += n
        elif decision == DROP_TOMBSTONE:
            self.stats.tombstones_removed += n

    # --- MemoryRecords.filterTo, one batch ---------------------------------------------------------
    def filter_batch(self, batch) -> tuple[bytes, int]:
        """(bytes written for this batch, max retained offset or -1)."""
        retention, marker_for_empty_txn = self.check_batch_retention(batch)
        self.stats.bytes_read += batch.size_in_bytes
        if retention == DELETE:
            return b"", -1
        retained, tombstones, max_offset = [], False, -1
        # 0.9: every compressed set is recompressed (row cleaner.keep_whole_wrapper)
        write_original = not (self.recompress_kept and batch.is_compressed and batch.magic < 2)
        for r in batch.records():
            self.stats.messages_read += 1
            if self.should_retain_record(batch, r):
                if r.magic != batch.magic:  # KAFKA-4298: rewrite a wrapper whose inner magic differs
                    write_original = False
                max_offset = max(max_offset, r.offset)
                retained.append(r)
                tombstones = tombstones or r.value is None
            else:
                write_original = False
        if retained and not write_original and batch.is_compressed and batch.magic < 2 \
                and self.rebuild_magic is not None and self.rebuild_magic != batch.magic:
            # KAFKA-4298: the wrapper rebuilt in the topic's format, read back: ByteBufferMessageSet's deep iterator
            raise IllegalStateError(f"Compressed message has magic value {self.rebuild_magic} but inner message has "
                                    f"magic value {batch.magic}")
        if retained:
            need_horizon = self.delete_horizon and needs_delete_horizon(batch.magic >= 2, tombstones,
                                                                        marker_for_empty_txn,
                                                                        batch.delete_horizon_ms is not None)
            horizon = self.now + self.delete_retention_ms if need_horizon else batch.delete_horizon_ms
            if batch.magic < 2 and self.legacy_to_v2:
                horizon = self.now + self.delete_retention_ms
                out = rewrite_as_v2(batch, retained, delete_horizon_ms=horizon)
            elif write_original and not need_horizon:
                out = bytes(batch.raw)
            else:
                out = rebuild_batch(batch, retained, horizon)
            self._note_tombstones(batch, retained, horizon)
            self.stats.messages_written += len(retained)
        elif retention == RETAIN_EMPTY:
            out = empty_batch_header(batch)
            max_offset = batch.last_offset
        else:
            return b"", -1
        self.stats.bytes_written += len(out)
        return out, max_offset

    def _note_tombstones(self, batch, retained, horizon: int | None) -> None:
        if batch.is_control:
            return
        horizon = horizon if (batch.magic >= 2 and self.delete_horizon) or self.legacy_to_v2 else None
        for r in retained:
            if r.value is None:
                self.stats.tombstones_kept.append((r.offset, horizon))


def rebuild_batch(batch, retained, delete_horizon_ms: int | None) -> bytes:
    """``MemoryRecords.buildRetainedRecordsInto``: the retained records in a batch like the original."""
    magic = batch.magic
    ts_type = batch.timestamp_type
    if magic == 0:
        ts_type = TimestampType.NO_TIMESTAMP_TYPE
    lat = batch.max_timestamp if ts_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP
    base = batch.base_offset if magic >= 2 else retained[0].offset
    horizon = delete_horizon_ms if magic >= 2 and delete_horizon_ms is not None and delete_horizon_ms >= 0 else None
    b = MemoryRecordsBuilder(magic, batch.compression, ts_type, base, log_append_time=lat,
                             producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                             base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
                             is_control_batch=batch.is_control, partition_leader_epoch=batch.partition_leader_epoch,
                             delete_horizon_ms=horizon)
    for r in retained:
        b.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers, is_control=batch.is_control)
    if magic >= 2:
        b.override_last_offset(batch.last_offset)
    return b.build()


def empty_batch_header(batch) -> bytes:
    """``DefaultRecordBatch.writeEmptyHeader``: a v2 header with no records, keeping the producer state."""
    attrs = batch_attributes(CompressionType.NONE, batch.timestamp_type, transactional=batch.is_transactional,
                             control=batch.is_control, delete_horizon=False)
    return encode_default_batch(
        base_offset=batch.base_offset, partition_leader_epoch=batch.partition_leader_epoch, attributes=attrs,
        last_offset_delta=batch.last_offset - batch.base_offset, base_timestamp=NO_TIMESTAMP,
        max_timestamp=batch.max_timestamp, producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, records_count=0, records=b"")
