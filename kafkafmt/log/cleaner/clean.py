"""One pass of Kafka 3.9's log cleaner over a partition (``LogCleaner.CleanerThread.cleanFilthiestLog``,
``LogCleanerManager.cleanableOffsets``, ``Cleaner.doClean``); with ``--kafka-line 4.4`` (the
log's ``config.broker.kafka_line``) that of Kafka 4.4.0, whose differences are the rows ``cleaner.*`` of
:mod:`kafkafmt.kafka_lines` (:func:`_line_rules`).

1. The cleanable range: from the ``cleaner-offset-checkpoint`` entry (in the log directory holding the
   partition; the log start offset when absent or invalid) up to the first uncleanable offset: the
   last stable offset (the first open transaction, else the high watermark), the active segment, the
   first dirty segment whose largest timestamp is within ``min.compaction.lag.ms``; then rounded down
   to a segment base (``calculateCleanableBytes``).  The log is cleaned when its dirty ratio exceeds
   ``min.cleanable.dirty.ratio`` or ``max.compaction.lag.ms`` has passed for a dirty segment.
2. The offset map (:mod:`~kafkafmt.log.cleaner.offset_map`, a table of the dedupe buffer's size) over the
   dirty range; a map that fills stops at the batch before, and only the prefix up to the map's latest
   offset is cleaned.  Plain v2 batches are mapped and filtered a run per compiled call
   (:mod:`~kafkafmt.log.cleaner.kernels`), the others one by one.
3. The segments up to there, grouped by size (``segment.bytes``, ``segment.index.bytes``), each group
   filtered (:mod:`~kafkafmt.log.cleaner.filter`) into ``<base>.log.cleaned`` with indexes rebuilt
   by appending, given the last segment's modification time, renamed ``.swap``, the old segments
   deleted (:func:`_replace_segments`), and renamed into place (``LocalLog.replaceSegments``); a crash
   in between recovers as ``LogLoader`` does (:mod:`kafkafmt.log.loader`).
4. The checkpoint advanced to the end of the cleaned prefix; then ``deleteOldSegments`` runs on the
   compacted log: segments below the log start offset go, and with ``cleanup.policy=compact,delete``
   the retention rules too.

The replaced segments' files (and producer snapshots) are deleted as ``LocalLog.deleteSegmentFiles``
with ``asyncDelete = true`` leaves them: renamed ``<name>.deleted`` at once; with ``file.delete.delay.ms``
0 unlinked at once too, otherwise left for Kafka's scheduler, which unlinks them after the delay
(kafkafmt does not run that later step: the next :class:`~kafkafmt.log.Log` open removes ``*.deleted``,
as ``LogLoader`` does; :attr:`CleanResult.deleted_files` lists them).  The segments retention then
deletes (``deleteOldSegments``) still go at once.  Legacy
(v0/v1) tombstones live by file times, so a cleaned segment takes its last source segment's
modification time, as Kafka sets it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ... import kafka_lines
from ...compression import kafka_line_codecs
from ...constants import DEFAULT_MAX_DECOMPRESSED_BYTES, INT32_MAX, INT64_MAX, LOG_OVERHEAD
from ...errors import CorruptRecordError, IllegalArgumentError
from ...layout import TXN_INDEX_ENTRY
from ...records import MemoryRecords
from ..files import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    delete_if_exists,
    log_file,
    move_if_exists,
    offset_index_file,
    read_checkpoint,
    time_index_file,
    transaction_index_file,
    write_checkpoint,
)
from .filter import AbortedTxn, CleanedTransactionMetadata, CleanerStats, LastRecord, SegmentFilter
from .kernels import (
    N_PRODUCER_COLUMNS,
    NO_OFFSET,
    PR_PID,
    FilterRun,
    Spans,
    map_segment_runs,
    producer_rows,
    replay_producers,
)
from .offset_map import CleanerConfig, OffsetMap
from .scan import as_array, digests, filter_legacy, filter_v2, scan_legacy, scan_v2

__all__ = ["CleanerConfig", "CleanResult", "clean_log", "PassProgress", "cleanable_offsets",
           "CLEANER_OFFSET_CHECKPOINT", "read_cleaner_checkpoint"]

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
#: a ``.txnindex`` entry: version, producer id, first offset, last offset, last stable offset (``AbortedTxn``)
_TXN_ENTRY = TXN_INDEX_ENTRY.struct


@dataclass
class CleanResult:
    """What one pass did: the range, whether it cleaned, and the statistics."""

    cleaned: bool = False
    compact: bool = True  #: whether cleanup.policy includes compact
    first_dirty_offset: int | None = None
    first_uncleanable_offset: int | None = None
    end_offset: int | None = None
    cleanable_ratio: float = 0.0
    groups: list = field(default_factory=list)  #: [[base offsets replaced], ...]
    stats: CleanerStats = field(default_factory=CleanerStats)
    deleted_segments: int = 0
    checkpoint: int | None = None
    #: the replaced segments' files left renamed ``.deleted`` for Kafka's scheduler (``file.delete.delay.ms`` > 0)
    deleted_files: list = field(default_factory=list)


# --------------------------------------------------------------------------------------------- helpers
def _values(log, frm: int, to: int) -> list:
    """``LogSegments.values(from, to)``: the segments from the one holding ``from`` below ``to``."""
    if frm == to:
        return []
    segs = log.segments
    start = 0
    for i, s in enumerate(segs):
        if s.base_offset <= frm:
            start = i
    return [s for s in segs[start:] if s.base_offset < to]


def _non_active_from(log, frm: int) -> list:
    active = log.active_segment.base_offset
    return [] if frm > active else _values(log, frm, active)


def read_cleaner_checkpoint(path: str | os.PathLike) -> dict[tuple[str, int], int]:
    """``cleaner-offset-checkpoint``: (topic, partition) -> first dirty offset."""
    out = {}
    for row in read_checkpoint(path) or []:
        if len(row) == 3:
            out[(row[0], int(row[1]))] = int(row[2])
    return out


def _write_cleaner_checkpoint(log, offset: int, durable: bool) -> None:
    path = Path(log.dir).parent / CLEANER_OFFSET_CHECKPOINT
    entries = read_cleaner_checkpoint(path)
    entries[(log.topic, log.partition)] = offset
    write_checkpoint(path, [(t, p, o) for (t, p), o in entries.items()], fsync=durable)


# --------------------------------------------------------------------------------------------- producer state
def producer_state(log, now: int, expiration_ms: int) -> tuple[dict[int, LastRecord], int | None]:
    """The active producers' last records and the first unstable offset, from the log's batches.

    kafkafmt keeps no producer snapshots; this replays the batches as ``ProducerStateManager`` would
    (:func:`~kafkafmt.log.cleaner.kernels.replay_producers`: a marker of another epoch forgets the last
    data offset; a transactional batch opens a transaction a marker closes), dropping producers idle
    for ``producer.id.expiration.ms`` (``isProducerExpired``).
    """
    parts = []
    for seg in log.segments:
        with seg.log.mapped() as data:
            parts.append(producer_rows(data))
    rows = np.concatenate(parts) if parts else np.empty((0, N_PRODUCER_COLUMNS), np.int64)
    states = np.empty((len(rows), 5), np.int64)
    n = replay_producers(rows, np.argsort(rows[:, PR_PID], kind="stable"), states)
    last, unstable = {}, None
    for pid, epoch, data_offset, ts, txn_first in states[:n].tolist():
        if txn_first == NO_OFFSET and now - ts >= expiration_ms:
            continue
        last[pid] = LastRecord(data_offset if data_offset >= 0 else None, epoch)
        if txn_first != NO_OFFSET:
            unstable = txn_first if unstable is None else min(unstable, txn_first)
    return last, unstable


def _read_txn_index(path: Path) -> list[AbortedTxn]:
    if not path.exists():
        return []
    data = path.read_bytes()
    out = []
    for pos in range(0, len(data) - _TXN_ENTRY.size + 1, _TXN_ENTRY.size):
        _, pid, first, last, lso = _TXN_ENTRY.unpack_from(data, pos)
        out.append(AbortedTxn(first, pid, last, lso))
    return out


def collect_aborted_transactions(log, start: int, upper: int) -> list[AbortedTxn]:
    """``UnifiedLog.collectAbortedTransactions``: ``.txnindex`` entries overlapping [start, upper)."""
    out = []
    segs = log.segments
    floor = [i for i, s in enumerate(segs) if s.base_offset <= start]
    for seg in (segs[floor[-1]:] if floor else []):  # from the floor segment on, until an entry is complete
        for t in _read_txn_index(transaction_index_file(log.dir, seg.base_offset)):
            if t.last_offset >= start and t.first_offset < upper:
                out.append(t)
            if t.last_stable_offset >= upper:
                return out
    return out


# --------------------------------------------------------------------------------------------- the range
def cleanable_offsets(log, last_clean: int | None, now: int, last_stable: int) -> tuple[int, int, bool]:
    """``LogCleanerManager.cleanableOffsets``: (first dirty, first uncleanable, force checkpoint update)."""
    start, leo = log.log_start_offset, log.log_end_offset
    dirty = start if last_clean is None else last_clean
    force = False
    if dirty < start or dirty > leo:
        dirty, force = start, True
    candidates = [last_stable, log.active_segment.base_offset]
    lag = max(log.config.min_compaction_lag_ms, 0)
    if lag > 0:
        for s in _non_active_from(log, dirty):
            if s.largest_timestamp() > now - lag:
                candidates.append(s.base_offset)
                break
    return dirty, max(dirty, min(candidates)), force


def _max_compaction_delay(log, first_dirty: int, now: int) -> int:
    stamps = [s.get_first_batch_timestamp() for s in _non_active_from(log, first_dirty)]
    stamps = [t for t in stamps if t > 0]
    earliest = min(stamps) if stamps else INT64_MAX
    until = now - max(log.config.max_compaction_lag_ms, 0)
    return until - earliest if earliest < until else 0


def _calculate_cleanable_bytes(log, first_dirty: int, uncleanable: int) -> tuple[int, int]:
    non_active = _non_active_from(log, uncleanable)
    first = non_active[0].base_offset if non_active else log.active_segment.base_offset
    return first, sum(s.size for s in _values(log, min(first_dirty, first), first))


class PassProgress:
    """How far a cleaning pass has read, for a progress bar: ``callback(phase, done, total)`` with the
    phase (``"offset map"``, then ``"filter"``) and bytes of segment data read and to read in it."""

    def __init__(self, callback=None):
        self.callback, self.phase, self.done, self.total = callback, "", 0, 0

    def start(self, phase: str, total: int) -> None:
        self.phase, self.done, self.total = phase, 0, total
        self._tell()

    def advance(self, n: int) -> None:
        self.done += n
        self._tell()

    def _tell(self) -> None:
        if self.callback is not None:
            self.callback(self.phase, self.done, self.total)


# --------------------------------------------------------------------------------------------- the offset map
def build_offset_map(log, start: int, end: int, omap: OffsetMap, load_factor: float, stats: CleanerStats,
                     progress: PassProgress | None = None) -> int:
    """``Cleaner.buildOffsetMap``: each key's latest offset in [start, end), until the map is full; returns
    where the pass ends, as the line's row ``cleaner.map_reach`` says: the map's latest offset + 1 (the record
    that filled it, KAFKA-3894), after the last segment mapped in full (0.10.0), or after the last of the
    segments mapped whole while their offsets fit (0.9)."""
    omap.clear()
    dirty = _values(log, start, end)
    nexts = [s.base_offset for s in dirty[1:]] + [end]
    txn = CleanedTransactionMetadata()
    txn.add_aborted_transactions(collect_aborted_transactions(log, start, end))
    max_size = int(omap.slots * load_factor)
    progress = progress or PassProgress()
    progress.start("offset map", sum(seg.size for seg in dirty))
    reach = kafka_lines.value("cleaner.map_reach", log.config.broker.kafka_line)
    reached = start  # 0.9: the next offset after the segments mapped; 0.10.0: the last offset of those
    for seg, nxt in zip(dirty, nexts):
        if reach == "whole segments":  # 0.9: counted in offsets, before reading the segment
            count = seg.read_next_offset() - seg.base_offset
            if count > max_size:
                raise IllegalArgumentError(f"requirement failed: {count} messages in segment {Path(log.dir).name}/"
                                           f"{Path(seg.log.path).name} but offset map can fit only {max_size}. You "
                                           "can increase log.cleaner.dedupe.buffer.size or decrease "
                                           "log.cleaner.threads")
            if omap.size + count > max_size:
                return reached
        filled = _map_segment(seg, omap, start, nxt, max_size, txn, stats)
        progress.advance(seg.size)
        if filled:
            if reach == "fully mapped segments" and reached <= start:
                raise IllegalArgumentError(f"requirement failed: Unable to build the offset map for segment "
                                           f"{Path(log.dir).name}/{Path(seg.log.path).name}. You can increase "
                                           "log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads")
            break
        # 0.9: the offset after the segment's last message; 0.10.0: its last message's (its base when empty)
        nxt_offset = seg.read_next_offset()
        reached = nxt_offset if reach == "whole segments" else max(nxt_offset - 1, seg.base_offset)
    if reach == "record that fills the map":
        return omap.latest_offset + 1
    return reached if reach == "whole segments" else reached + 1


def _map_segment(seg, omap: OffsetMap, start: int, nxt: int, max_size: int, txn, stats) -> bool:
    position = seg.offset_index.lookup(start).position
    with seg.log.mapped(position) as data:
        filled = _map_mapped(seg, data, position, omap, start, max_size, txn, stats)
    if filled:
        return True
    omap.update_latest_offset(nxt - 1)
    return False


def _map_mapped(seg, data, position: int, omap: OffsetMap, start: int, max_size: int, txn, stats) -> bool:
    arr = as_array(data)

    def map_batch(b) -> bool:
        return _map_batch(b, arr, omap, start, max_size, txn, stats)

    return map_segment_runs(data, arr, Spans(data), omap, start, max_size, stats, map_batch,
                            (seg.base_offset, position))


def _map_batch(b, arr, omap: OffsetMap, start: int, max_size: int, txn, stats) -> bool:
    """One batch the compiled run hands back (control, transactional, compressed, v0/v1, unusual)."""
    if b.is_control:
        txn.on_control_batch_read(b)
        stats.map_messages_read += 1
    elif txn.on_batch_read(b):
        stats.map_messages_read += b.count or 0
    else:
        scan = _scan(b, arr)
        if scan is not None:
            if _map_scanned(scan, omap, start, max_size, stats):
                return True
        else:
            for r in b.records():
                if r.key is not None and r.offset >= start:
                    if omap.size < max_size:
                        omap.put(r.key, r.offset)
                    else:
                        return True
                stats.map_messages_read += 1
    if b.last_offset >= start:
        omap.update_latest_offset(b.last_offset)
    stats.map_bytes_read += b.size_in_bytes
    return False


def _scan(b, arr):
    """A data batch read in bulk (:mod:`~kafkafmt.log.cleaner.scan`), or None for the record-by-record path."""
    if b.magic >= 2:
        return scan_v2(b, arr, DEFAULT_MAX_DECOMPRESSED_BYTES)
    return scan_legacy(b, DEFAULT_MAX_DECOMPRESSED_BYTES) if b.is_compressed else None


def _map_scanned(scan, omap: OffsetMap, start: int, max_size: int, stats) -> bool:
    """The records of a scanned v2 batch into the map, all at once when they fit; True when it filled."""
    every, offsets = digests(scan), scan.offsets
    keys = every
    if None in keys or (offsets and min(offsets) < start):
        pairs = [(k, o) for k, o in zip(every, offsets) if k is not None and o >= start]
        keys, wanted = [k for k, _ in pairs], [o for _, o in pairs]
    else:
        wanted = offsets
    if omap.size + len(keys) <= max_size:
        omap.put_digests(keys, wanted)
        stats.map_messages_read += len(offsets)
        return False
    for k, o in zip(every, offsets):
        if k is not None and o >= start:
            if omap.size < max_size:
                omap.put_digests([k], [o])
            else:
                return True
        stats.map_messages_read += 1
    return False


# --------------------------------------------------------------------------------------------- grouping
def group_segments_by_size(segments: list, max_size: int, max_index_size: int, first_uncleanable: int) -> list:
    """``Cleaner.groupSegmentsBySize``: consecutive segments whose data, offset index and time index each
    stay within the limits, and whose offsets fit 32 bits relative to the group's base."""
    groups, segs = [], list(segments)
    while segs:
        group = [segs.pop(0)]
        log_size, idx, tidx = group[0].size, group[0].offset_index.size_in_bytes, group[0].time_index.size_in_bytes
        while segs:
            h = segs[0]
            last = segs[1].base_offset - 1 if len(segs) > 1 else first_uncleanable - 1
            if not (log_size + h.size <= max_size and idx + h.offset_index.size_in_bytes <= max_index_size
                    and tidx + h.time_index.size_in_bytes <= max_index_size
                    and (h.size == 0 or last - group[-1].base_offset <= INT32_MAX)):
                break
            group.append(segs.pop(0))
            log_size += h.size
            idx += h.offset_index.size_in_bytes
            tidx += h.time_index.size_in_bytes
        groups.append(group)
    return groups


# --------------------------------------------------------------------------------------------- one group
def _clean_into(seg, dest, flt: SegmentFilter, io_buffer: int, topic_max: int, broker_max: int,
                progress: PassProgress) -> None:
    """``Cleaner.cleanInto``: read-buffer-sized chunks of whole batches, filtered, appended to ``dest``.

    A batch larger than the read buffer grows it (``growBuffersOrFail``): doubling up to the larger of
    ``max.message.bytes`` and ``message.max.bytes``, then to the batch's own size.  The chunks are
    those of the walk's batches (plain runs compiled, :mod:`~kafkafmt.log.cleaner.kernels`); where the
    walk stopped early (bytes that are no whole batch), :func:`_clean_windows` goes on as Kafka reads."""
    with seg.log.mapped() as data:
        _clean_mapped(seg, data, dest, flt, io_buffer, topic_max, broker_max, progress)


def _clean_mapped(seg, data, dest, flt: SegmentFilter, io_buffer: int, topic_max: int, broker_max: int,
                  progress: PassProgress) -> None:
    arr = as_array(data)
    spans = Spans(data)
    run = FilterRun(flt, data, arr, lambda b: _filter_one(flt, b, arr), (seg.base_offset, 0))
    position, cap, i = 0, io_buffer, 0
    while position < len(data) and i < len(spans):
        j = spans.fitting(i, min(len(data), position + cap))
        if j == i:
            cap = _grown(cap, data, position, topic_max, broker_max, seg)
            continue
        out, max_offset, meta = run.chunk(spans, i, j)
        if out:
            _append_cleaned(dest, max_offset, out[0] if len(out) == 1 else b"".join(out), meta, flt.time_index_by_record)
        progress.advance(int(spans.ends[j - 1]) - position)
        position, i = int(spans.ends[j - 1]), j
    _clean_windows(seg, data, arr, dest, flt, position, cap, topic_max, broker_max)
    progress.advance(len(data) - position)


def _filter_one(flt: SegmentFilter, b, arr) -> tuple[bytes, int]:
    """One batch by the per-batch path: the bulk scan where it applies, else the reference filter."""
    # the bulk scan keeps each magic as it is and follows KIP-534 for v2; a line that rewrites v0/v1 as v2
    # (row cleaner.legacy_to_v2), or one before KIP-534 (row cleaner.delete_horizon), takes the filter's path
    # (and one rebuilding v0/v1 wrappers in the topic's format, row cleaner.legacy_rebuild_magic, or every
    # compressed one, row cleaner.keep_whole_wrapper)
    legacy_path = flt.legacy_to_v2 or flt.rebuild_magic is not None or flt.recompress_kept
    scan = None if (b.magic < 2 and legacy_path) or (b.magic >= 2 and not flt.delete_horizon) else _scan(b, arr)
    if scan is None:
        return flt.filter_batch(b)
    return filter_v2(flt, b, scan) if b.magic >= 2 else filter_legacy(flt, b, scan)


def _clean_windows(seg, data, arr, dest, flt: SegmentFilter, position: int, cap: int, topic_max: int,
                   broker_max: int) -> None:
    """``cleanInto``'s loop from ``position``, a window of ``cap`` bytes at a time."""
    while position < len(data):
        out, max_offset, read = [], -1, 0
        for b in MemoryRecords(data, start=position, end=min(len(data), position + cap)).batches():
            kept, m = _filter_one(flt, b, arr)
            read += b.size_in_bytes
            if kept:
                out.append(kept)
                max_offset = max(max_offset, m)
        if out:
            _append_cleaned(dest, max_offset, b"".join(out), None, flt.time_index_by_record)
        position += read
        if read == 0:
            cap = _grown(cap, data, position, topic_max, broker_max, seg)


def _append_cleaned(dest, max_offset: int, data: bytes, meta: list | None, by_record: bool = False) -> None:
    """``dest.append`` of one chunk the filter kept (``cleanInto``).  Indexed per batch (Kafka 3.9.1+) the
    segment reads each batch's largest timestamp itself (``meta``: each batch's [size, last offset, max
    timestamp], or None to read them from ``data``); indexed per append (before, row
    ``log.index_granularity``), Kafka passed ``filterTo``'s result: the largest timestamp kept and the last
    offset of the first batch holding it (``maxTimestamp``, ``shallowOffsetOfMaxTimestamp``; -1 when no
    timestamp is kept), which the time index takes on each indexed append and on closing the cleaned
    segment (``LogSegment.onBecomeInactiveSegment``, 0.10.1 to 3.9.0)."""
    if dest.index_granularity == "batch":
        dest.append(max_offset, -1, -1, data, batches=meta)
        return
    largest, shallow = -1, -1
    if by_record:  # 0.10.1: the first record holding it (row cleaner.time_index_offset, KAFKA-4390)
        for r in MemoryRecords(data).records():
            if r.timestamp > largest:
                largest, shallow = r.timestamp, r.offset
        dest.append(max_offset, largest, shallow, data)
        return
    for _, last, max_ts in (meta if meta is not None else
                            [(0, b.last_offset, b.max_timestamp) for b in MemoryRecords(data).batches()]):
        if max_ts > largest:
            largest, shallow = max_ts, last
    dest.append(max_offset, largest, shallow, data)


def _grown(cap: int, data: bytes, position: int, topic_max: int, broker_max: int, seg) -> int:
    if cap >= topic_max:
        if len(data) - position < LOG_OVERHEAD:
            raise CorruptRecordError(f"Could not determine next batch size for log segment {seg.log.path} at "
                                     f"position {position}", position=position)
        next_size = LOG_OVERHEAD + int.from_bytes(data[position + 8:position + LOG_OVERHEAD], "big", signed=True)
        if next_size > len(data) - position:
            raise CorruptRecordError(f"Log segment may be corrupt, batch size {next_size} > "
                                     f"{len(data) - position} bytes left in segment for log segment "
                                     f"{seg.log.path} at position {position}", position=position)
        if next_size <= cap:
            raise CorruptRecordError(f"Invalid batch size {next_size} for log segment {seg.log.path} at position "
                                     f"{position}", position=position)
        wanted = next_size
    else:
        wanted = topic_max
    limit = max(wanted, broker_max)
    if cap >= limit:
        raise CorruptRecordError(f"This log contains a message larger than maximum allowable size of {limit}.",
                                 position=position)
    return min(cap * 2, limit)


def clean_segments(log, group: list, flt: SegmentFilter, legacy_horizon: int, cfg: CleanerConfig, hook,
                   progress: PassProgress | None = None) -> list:
    """``Cleaner.cleanSegments``: one group into one ``.cleaned`` segment, swapped in; returns the files
    left renamed ``.deleted`` (:func:`_replace_segments`)."""
    cleaned = log.create_cleaned_segment(group[0].base_offset)
    index = flt.txn.cleaned_index = []
    try:
        for i, seg in enumerate(group):
            if flt.txn_per_segment:  # before KAFKA-8335: a CleanedTransactionMetadata per segment
                flt.txn = CleanedTransactionMetadata()
                flt.txn.cleaned_index = index
            upper = group[i + 1].base_offset if i + 1 < len(group) else seg.read_next_offset()
            flt.txn.add_aborted_transactions(collect_aborted_transactions(log, seg.base_offset, upper))
            flt.retain_legacy_deletes = seg.last_modified() > legacy_horizon
            with kafka_line_codecs(log.config.broker.kafka_line):  # rebuilt batches: the line's codecs (codec.*)
                _clean_into(seg, cleaned, flt, cfg.io_buffer_per_thread, log.config.max_message_bytes,
                            cfg.max_message_size, progress or PassProgress())
        cleaned.on_become_inactive()
        if index:
            path = transaction_index_file(log.dir, cleaned.base_offset, CLEANED_FILE_SUFFIX)
            path.write_bytes(b"".join(_TXN_ENTRY.pack(0, t.producer_id, t.first_offset, t.last_offset,
                                                      t.last_stable_offset) for t in index))
        cleaned.flush()
        cleaned.set_last_modified(group[-1].last_modified())
    except BaseException:
        cleaned.close_handlers()
        cleaned.delete_if_exists()
        raise
    hook("cleaned")
    return _replace_segments(log, cleaned, group, hook)


def _replace_segments(log, cleaned, old: list, hook) -> list:
    """``LocalLog.replaceSegments``: ``.cleaned`` -> ``.swap``, the old segments deleted, ``.swap`` -> final.

    Each old segment goes through ``deleteSegmentFiles(asyncDelete = true)``: its files renamed
    ``.deleted`` at once, unlinked by the scheduler ``file.delete.delay.ms`` later (here: at once when
    0, else left); the producer snapshots of the segments not replaced in place likewise
    (``UnifiedLog.deleteProducerSnapshots``, ``ProducerStateManager.removeAndMarkSnapshotForDeletion``).
    Returns the files left ``.deleted``.
    """
    wait = log.config.file_delete_delay_ms > 0
    left = []
    cleaned.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
    hook("swap")
    log.add_segment(cleaned)
    for seg in old:
        if seg.base_offset != cleaned.base_offset:
            log.remove_segment(seg.base_offset)
        seg.close_handlers()
        if not seg.has_suffix(DELETED_FILE_SUFFIX):
            seg.change_file_suffixes("", DELETED_FILE_SUFFIX)
        names = [f(log.dir, seg.base_offset, DELETED_FILE_SUFFIX)
                 for f in (log_file, offset_index_file, time_index_file, transaction_index_file)]
        if seg.base_offset != cleaned.base_offset:  # UnifiedLog.deleteProducerSnapshots(deletedSegments)
            snapshot = Path(log.dir) / f"{seg.base_offset:020d}{PRODUCER_SNAPSHOT_FILE_SUFFIX}"
            names.append(snapshot.with_name(snapshot.name + DELETED_FILE_SUFFIX))
            move_if_exists(snapshot, names[-1])
        if wait:
            left += [str(f) for f in names if f.exists()]
        else:
            seg.delete_if_exists()
            for f in names:
                delete_if_exists(f)
        hook("deleted")
    cleaned.change_file_suffixes(SWAP_FILE_SUFFIX, "")
    hook("renamed")
    return left


# --------------------------------------------------------------------------------------------- the pass
def _line_rules(log, first_uncleanable: int) -> dict:
    """The filter's rules that follow the Kafka line (rows ``cleaner.*`` of :mod:`kafkafmt.kafka_lines`)."""
    line = log.config.broker.kafka_line
    keep_at = {None: None, "first uncleanable offset": first_uncleanable,
               "high watermark": log.high_watermark}[kafka_lines.value("cleaner.retain_last_batch", line)]
    return {"legacy_to_v2": kafka_lines.value("cleaner.legacy_to_v2", line), "retain_batch_ending_at": keep_at,
            "delete_horizon": kafka_lines.value("cleaner.delete_horizon", line),
            "txn_per_segment": kafka_lines.value("cleaner.txn_metadata_scope", line) == "segment",
            "time_index_by_record": kafka_lines.value("cleaner.time_index_offset", line) == "record",
            "recompress_kept": not kafka_lines.value("cleaner.keep_whole_wrapper", line),
            "rebuild_magic": (log.config.to_magic if kafka_lines.value("cleaner.legacy_rebuild_magic", line)
                              == "message format" else None)}


def do_clean(log, first_dirty: int, first_uncleanable: int, now: int, cfg: CleanerConfig,
             result: CleanResult, hook, last_records: dict[int, LastRecord],
             progress: PassProgress | None = None) -> int:
    """``Cleaner.doClean``: returns the first offset not cleaned."""
    progress = progress or PassProgress()
    clean_part = _values(log, 0, first_dirty)
    retention = log.config.delete_retention_ms
    legacy_horizon = clean_part[-1].last_modified() - retention if clean_part else 0
    omap = cfg.offset_map()
    stats = result.stats
    end = build_offset_map(log, first_dirty, first_uncleanable, omap, cfg.load_factor, stats, progress)
    flt = SegmentFilter(omap, now=now, delete_retention_ms=retention, txn=CleanedTransactionMetadata(),
                        last_records=last_records, stats=stats, **_line_rules(log, first_uncleanable))
    groups = group_segments_by_size(_values(log, 0, end), log.config.segment_bytes, log.config.max_index_size,
                                    first_uncleanable)
    progress.start("filter", sum(seg.size for group in groups for seg in group))
    try:
        for group in groups:
            result.groups.append([s.base_offset for s in group])
            result.deleted_files += clean_segments(log, group, flt, legacy_horizon, cfg, hook, progress)
    finally:
        omap.inflated.clear()  # values of wrappers the filter did not reach (the thread keeps its map)
    stats.buffer_utilization = omap.utilization
    return end


def _choose(log, now: int, result: CleanResult, durable: bool, unstable: int | None):
    """``grabFilthiestCompactedLog`` for one log: the range to clean, or None."""
    ckpt = read_cleaner_checkpoint(Path(log.dir).parent / CLEANER_OFFSET_CHECKPOINT)
    hw = log.high_watermark
    last_stable = unstable if unstable is not None and unstable < hw else hw
    dirty, uncleanable, force = cleanable_offsets(log, ckpt.get((log.topic, log.partition)), now, last_stable)
    if force:
        _write_cleaner_checkpoint(log, dirty, durable)
        result.checkpoint = dirty
    delay = _max_compaction_delay(log, dirty, now)
    first_uncleanable, cleanable_bytes = _calculate_cleanable_bytes(log, dirty, uncleanable)
    total = sum(s.size for s in _values(log, -1, dirty)) + cleanable_bytes
    if total <= 0:
        return None
    result.cleanable_ratio = cleanable_bytes / total
    result.first_dirty_offset, result.first_uncleanable_offset = dirty, first_uncleanable
    min_ratio = log.config.min_cleanable_dirty_ratio
    if (delay > 0 and cleanable_bytes > 0) or result.cleanable_ratio > min_ratio:
        return dirty, first_uncleanable
    return None


def _no_hook(step: str) -> None:
    pass


def clean_log(log, *, now: int | None = None, cleaner: CleanerConfig | None = None, hook=None,
              progress=None) -> CleanResult:
    """One cleaner-thread iteration over ``log`` at time ``now`` (``CleanerThread.cleanFilthiestLog``).

    ``hook(step)`` is called after each crash-relevant step (``cleaned``, ``swap``, ``deleted``,
    ``renamed``, ``checkpoint``): the crash tests kill the process there.  ``progress(phase, done,
    total)`` hears how many bytes of segment data each phase (``"offset map"``, ``"filter"``) has read
    (:class:`PassProgress`; ``kafkafmt clean`` draws it as a bar).
    """
    cfg = cleaner or CleanerConfig()
    if not cfg.offset_map().slots * cfg.load_factor > 1:  # new Cleaner(...) requires it
        raise IllegalArgumentError("requirement failed: offset map is too small to fit in even a single message, so "
                                   "log cleaning will never make progress. You can increase "
                                   "log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads")
    now = log.clock.now() if now is None else int(now)
    hook = hook or _no_hook
    result = CleanResult(compact=log.config.compact)
    durable = getattr(log, "durable", False)
    ckpt = Path(log.dir).parent / CLEANER_OFFSET_CHECKPOINT
    if not ckpt.exists():  # new LogCleaner(...) creates its checkpoint files, empty (CheckpointFile)
        ckpt.touch()
    if log.config.compact:
        last_records, unstable = producer_state(log, now, cfg.producer_id_expiration_ms)
        chosen = _choose(log, now, result, durable, unstable)
        if chosen is not None:
            try:
                end = do_clean(log, chosen[0], chosen[1], now, cfg, result, hook, last_records, PassProgress(progress))
            except Exception:  # the cleaner thread's finally: doneCleaning(tp, dir, endOffset = firstDirtyOffset)
                _write_cleaner_checkpoint(log, chosen[0], durable)
                raise
            _write_cleaner_checkpoint(log, end, durable)
            result.cleaned, result.end_offset, result.checkpoint = True, end, end
            hook("checkpoint")
    if log.config.compact:  # LogCleanerManager.deletableLogs: every compacted log (below the log start
        result.deleted_segments = _delete_at(log, now)  # offset; with compact,delete retention too)
    return result


class _FixedClock:
    def __init__(self, ms: int):
        self.ms = ms

    def now(self) -> int:
        return self.ms

    milliseconds = now


def _delete_at(log, now: int) -> int:
    """``UnifiedLog.deleteOldSegments`` at the cleaner's time (``compact,delete``)."""
    clock = log.clock
    log.clock = _FixedClock(now)
    try:
        return log.delete_old_segments()
    finally:
        log.clock = clock
