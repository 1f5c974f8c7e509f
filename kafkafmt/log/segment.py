"""``LogSegment``: one ``.log`` file with its ``.index`` and ``.timeindex``.

Mirrors ``storage/.../log/LogSegment.java`` (Kafka 3.9); kafka-rules §6.5-§7.7.  The rules that
surprise most:

* ``append`` indexes only if MORE than ``index.interval.bytes`` had accumulated BEFORE; the entry
  maps a LAST offset to a START position, so the first append to a segment is never indexed (§6.5).
  Kafka 3.9.1+ (KAFKA-806, the jars the oracle runs; ``index_granularity="batch"``, the default)
  applies this per batch of the append; Kafka <= 3.9.0 (``"append"``) once per append;
* the time index gets ``(max timestamp so far, shallow offset of it)`` at the same moments, plus a
  final entry on roll (``on_become_inactive``) and close -- written even when the index is "full";
* ``rolling_based_timestamp`` is the first batch's maxTimestamp (Kafka <= 3.9.0: the largest
  timestamp of the first append; after a reload always the first batch's); time-based rolling
  compares message time with it, and falls back to the wall clock only when it is negative (§7.3,
  seed 000 §6.3);
* ``largest_timestamp`` (retention, timestamp lookup) is the max timestamp so far, or the ``.log``
  mtime when there is none (§7.4);
* ``recover`` rebuilds the indexes per BATCH, so rebuilt indexes can differ from the appended ones
  (with per-append indexing, or after a reopen/truncation reset the byte counter).

Index files are created lazily on first use, as ``LazyIndex`` does.  The seed-001 variant of the
time index is a subclass (:class:`kafkafmt.log.kip33.Kip33LogSegment`) that overrides the
``_time_index_*`` hooks and the time-based decisions.
"""
from __future__ import annotations

import contextlib
import os
import random
from dataclasses import dataclass
from pathlib import Path

from .. import kafka_lines
from ..constants import LOG_OVERHEAD, NO_TIMESTAMP
from ..errors import (
    CorruptRecordError,
    IllegalArgumentError,
    InvalidRecordError,
    LogSegmentOffsetOverflowError,
    NoSuchFileError,
)
from ..records import MemoryRecords
from .clock import Clock, set_mtime_ms
from .file_records import FileRecords
from .files import (
    DELETED_FILE_SUFFIX,
    filename_prefix_from_offset,
    log_file,
    move_if_exists,
    offset_index_file,
    replace_suffix,
    time_index_file,
    transaction_index_file,
)
from .index import OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset
from .view import SegmentReads

UNKNOWN_OFFSET = -1
UNKNOWN_FILE_POSITION = -1


@dataclass(frozen=True)
class RollParams:
    """``RollParams``: what ``should_roll`` looks at."""

    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


@dataclass(frozen=True)
class LogOffsetMetadata:
    """``LogOffsetMetadata``: an offset and, when known, its segment and byte position."""

    message_offset: int
    segment_base_offset: int = UNKNOWN_OFFSET
    relative_position_in_segment: int = UNKNOWN_FILE_POSITION

    def message_offset_only(self) -> bool:
        return (self.segment_base_offset == UNKNOWN_OFFSET
                and self.relative_position_in_segment == UNKNOWN_FILE_POSITION)


@dataclass
class FetchDataInfo:
    """``FetchDataInfo``: where a read started and the bytes read (whole batches)."""

    fetch_offset_metadata: LogOffsetMetadata
    records: bytes
    first_entry_incomplete: bool = False

    @property
    def memory_records(self) -> MemoryRecords:
        return MemoryRecords(self.records)


#: "batch": Kafka 3.9.1+ (KAFKA-806, the jars of the oracle) -- ``append`` walks the batches of the
#: records and applies the index.interval.bytes rule to each batch (key = the batch's last offset,
#: value = its start position; max timestamp from ``batch.maxTimestamp``/``lastOffset``), and the
#: rolling timestamp is the first batch's maxTimestamp.  "append": Kafka <= 3.9.0 (kafka-rules §6.5)
#: -- one decision per append (key = the append's last offset, value = its start position; max
#: timestamp and shallow offset as given by the caller), and the rolling timestamp is the first
#: append's largest timestamp.  They agree whenever every append is a single batch.
INDEX_GRANULARITIES = ("batch", "append")

_SIZE = object()  # read(): "maxPosition = segment size", the default of LogSegment.read(start, maxSize)


def _as_bytes(records) -> bytes | memoryview:
    """The bytes to write: a memoryview as it is (the cleaner's output buffer, not copied again)."""
    if isinstance(records, memoryview):
        return records.cast("B") if records.format != "B" or records.ndim != 1 else records
    return bytes(records)


class LogSegment(SegmentReads):
    """A segment of the log (``LogSegment``).  Build one with :meth:`open`.

    Its read-only lookups (max timestamp, ``translate_offset``, ``find_offset_by_timestamp``,
    ``read_next_offset``, ...) are :class:`~kafkafmt.log.view.SegmentReads`', shared with the read-only
    view of segment files."""

    def __init__(self, log: FileRecords, dir: str | os.PathLike, base_offset: int, *, max_index_size: int,
                 index_interval_bytes: int, roll_jitter_ms: int, clock: Clock, suffix: str = "",
                 index_granularity: str = "batch", time_indexed: bool = True,
                 index_key: str = "last offset", time_index_on_load: str = "empty",
                 roll_time: str = "first record timestamp"):
        """``time_indexed=False``: a segment of a line before KIP-33 (row ``log.time_index``): no ``.timeindex``
        file; the time index kept in memory only, for the segment's max timestamp.  ``index_key``: which offset
        of an append (or recovered batch) an offset index entry maps, ``"first offset"`` before Kafka 2.0 (row
        ``log.offset_index_key``); ``time_index_on_load``: what loading does to a ``.timeindex`` it had to
        create, ``"preallocated"`` on 0.10.1 (row ``log.time_index_on_load``); ``roll_time``: what segment.ms
        counts from, ``"segment create time"`` before 0.10.1 (row ``log.roll_time``)."""
        if index_granularity not in INDEX_GRANULARITIES:
            raise ValueError(f"index_granularity must be one of {INDEX_GRANULARITIES} (got {index_granularity!r})")
        self.index_granularity = index_granularity
        self.time_indexed = time_indexed
        self.index_key = index_key
        self.time_index_on_load = time_index_on_load
        self.roll_time = roll_time
        self.log = log
        self.dir = Path(dir)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self.clock = clock
        self._offset_index: OffsetIndex | None = None
        self._time_index: TimeIndex | None = None
        self._offset_index_path = offset_index_file(dir, base_offset, suffix)
        self._time_index_path = time_index_file(dir, base_offset, suffix)
        self._txn_index_path = transaction_index_file(dir, base_offset, suffix)
        #: largestTimestamp of the first append (None until known; see _load_first_batch_timestamp)
        self.rolling_based_timestamp: int | None = None
        self._max_ts_and_offset: TimestampOffset | None = None  # None = TimestampOffset.UNKNOWN
        self.created = clock.now()
        self.bytes_since_last_index_entry = 0

    @classmethod
    def open(cls, dir: str | os.PathLike, base_offset: int, config, clock: Clock, *,
             file_already_exists: bool = False, init_file_size: int = 0, preallocate: bool = False,
             suffix: str = "", rng: random.Random | None = None, roll_jitter_ms: int | None = None,
             durable: bool = True, **kwargs) -> "LogSegment":
        """``LogSegment.open``; the roll jitter is drawn once here from ``rng`` (``randomSegmentJitter``)."""
        if roll_jitter_ms is None:
            roll_jitter_ms = config.random_segment_jitter(rng if rng is not None else random.Random(0))
        log = FileRecords(log_file(dir, base_offset, suffix), file_already_exists=file_already_exists,
                          init_file_size=init_file_size, preallocate=preallocate, clock=clock, durable=durable)
        line = config.broker.kafka_line
        kwargs.setdefault("time_indexed", kafka_lines.value("log.time_index", line))
        kwargs.setdefault("index_key", kafka_lines.value("log.offset_index_key", line))
        kwargs.setdefault("time_index_on_load", kafka_lines.value("log.time_index_on_load", line))
        kwargs.setdefault("roll_time", kafka_lines.value("log.roll_time", line))
        return cls(log, dir, base_offset, max_index_size=config.max_index_size,
                   index_interval_bytes=config.index_interval_bytes, roll_jitter_ms=roll_jitter_ms,
                   clock=clock, suffix=suffix, **kwargs)

    # --- files ----------------------------------------------------------------------------------
    @property
    def offset_index(self) -> OffsetIndex:
        """The offset index, opened (or created, preallocated) on first use (``LazyIndex.get``)."""
        if self._offset_index is None:
            self._offset_index = OffsetIndex(self._offset_index_path, self.base_offset, self.max_index_size)
        return self._offset_index

    @property
    def time_index(self) -> TimeIndex:
        if self._time_index is None:
            path = self._time_index_path if self.time_indexed else None
            self._time_index = TimeIndex(path, self.base_offset, self.max_index_size)
        return self._time_index

    @property
    def offset_index_file(self) -> Path:
        return self._offset_index.path if self._offset_index is not None else self._offset_index_path

    @property
    def time_index_file(self) -> Path:
        if self._time_index is not None and self.time_indexed:
            return self._time_index.path
        return self._time_index_path

    @property
    def log_file(self) -> Path:
        return self.log.path

    @property
    def name(self) -> str:
        return filename_prefix_from_offset(self.base_offset)

    @property
    def size(self) -> int:
        return self.log.size

    def __len__(self) -> int:
        return self.log.size

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return self.offset_index.can_append_offset(offset)

    def _ensure_offset_in_range(self, offset: int) -> None:
        if not self.can_convert_to_relative_offset(offset):
            err = LogSegmentOffsetOverflowError(f"Detected offset overflow at offset {offset} in segment {self}",
                                                offset=offset)
            err.segment = self
            raise err

    # --- max timestamp --------------------------------------------------------------------------
    def read_max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        """The max timestamp and its shallow offset; after a reload: the time index's last entry."""
        if self._max_ts_and_offset is None:
            self._max_ts_and_offset = self.time_index.last_entry
        return self._max_ts_and_offset

    def last_modified(self) -> int:
        return self.log.last_modified()

    def reading(self) -> contextlib.AbstractContextManager[FileRecords]:
        """The ``.log`` for a lookup of :class:`~kafkafmt.log.view.SegmentReads` (this segment's own, kept open)."""
        return contextlib.nullcontext(self.log)

    def set_last_modified(self, ms: int) -> None:
        for p in (self.log.path, self.offset_index_file, self.time_index_file):
            if p.exists():
                set_mtime_ms(p, ms)

    # --- append ---------------------------------------------------------------------------------
    def append(self, largest_offset: int, largest_timestamp_ms: int, shallow_offset_of_max_timestamp: int,
               records, *, batches: list | None = None, first_offset: int | None = None) -> None:
        """``LogSegment.append``: write the records; maybe index them (kafka-rules §6.5).

        With ``index_granularity="batch"`` (the default, Kafka 3.9.1+) ``largest_timestamp_ms`` and
        ``shallow_offset_of_max_timestamp`` are not used: Kafka takes them from each batch, or from
        ``batches`` when the caller already knows them: each batch's [size, last offset, max timestamp].
        With ``index_granularity="append"`` the entry maps the append's last offset, or its first (``first_offset``,
        else the first batch's base offset) on a line before Kafka 2.0 (row ``log.offset_index_key``).
        """
        data = _as_bytes(records)
        if not data:
            return
        physical_position = self.log.size
        if self.index_granularity == "batch":
            self._ensure_offset_in_range(largest_offset)
            self.log.append(data)
            if batches is None:
                batches = [(b.size_in_bytes, b.last_offset, b.max_timestamp) for b in MemoryRecords(data).batches()]
            opened = False
            with contextlib.ExitStack() as indexes:  # both indexes opened once, at the first entry
                for size, last, max_ts in batches:
                    if max_ts > self.max_timestamp_so_far:
                        self._max_ts_and_offset = TimestampOffset(max_ts, last)
                    if self.bytes_since_last_index_entry > self.index_interval_bytes:
                        if not opened:
                            indexes.enter_context(self.offset_index.writing())
                            indexes.enter_context(self.time_index.writing())
                            opened = True
                        self.offset_index.append(last, physical_position)
                        self._time_index_on_offset_entry()
                        self.bytes_since_last_index_entry = 0
                    physical_position += size
                    self.bytes_since_last_index_entry += size
            return
        if physical_position == 0:
            self.rolling_based_timestamp = largest_timestamp_ms
        self._ensure_offset_in_range(largest_offset)
        self.log.append(data)
        if largest_timestamp_ms > self.max_timestamp_so_far:
            self._max_ts_and_offset = TimestampOffset(largest_timestamp_ms, shallow_offset_of_max_timestamp)
        # tested BEFORE counting this append: the first append to a segment is never indexed
        if self.bytes_since_last_index_entry > self.index_interval_bytes:
            if self.index_key == "first offset":
                key = first_offset if first_offset is not None else next(MemoryRecords(data).batches()).base_offset
            else:
                key = largest_offset
            self.offset_index.append(key, physical_position)
            self._time_index_on_offset_entry()
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += len(data)

    # hooks for the time index policy (Kafka's own behaviour here) --------------------------------
    def _time_index_on_offset_entry(self) -> None:
        self.time_index.maybe_append(self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far)

    def _time_index_final_entry(self) -> None:
        self.time_index.maybe_append(self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far, True)

    def _time_index_recover_begin(self) -> None:
        self.time_index.reset()

    def _time_index_recover_end(self) -> None:
        # A normally closed segment always appends the biggest timestamp ever seen; recovery does too
        self._time_index_final_entry()
        self.time_index.trim_to_valid_size()

    def _time_index_truncate_to(self, offset: int) -> None:
        self.time_index.truncate_to(offset)

    # --- rolling --------------------------------------------------------------------------------
    def _load_first_batch_timestamp(self) -> None:
        if self.rolling_based_timestamp is None:
            for b in self.log.batches():
                self.rolling_based_timestamp = b.max_timestamp
                break

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        """Message time since the first batch's timestamp; wall clock since creation if it has none, or
        always before KIP-33 (row ``log.roll_time``)."""
        if self.roll_time == "segment create time":
            return now - self.created
        self._load_first_batch_timestamp()
        ts = self.rolling_based_timestamp if self.rolling_based_timestamp is not None else -1
        if ts >= 0:
            return message_timestamp - ts
        return now - self.created

    def get_first_batch_timestamp(self) -> int:
        """``getFirstBatchTimestamp``: the first batch's timestamp, or Long.MAX_VALUE without one."""
        self._load_first_batch_timestamp()
        ts = self.rolling_based_timestamp
        if ts is not None and ts >= 0:
            return ts
        return 2**63 - 1

    def roll_reasons(self, params: RollParams) -> list[str]:
        """Every reason ``should_roll`` is true (empty = no roll); names are the Kafka settings involved."""
        reached_roll_ms = self.time_waited_for_roll(params.now, params.max_timestamp_in_messages) > \
            params.max_segment_ms - self.roll_jitter_ms
        size = self.size
        reasons = []
        if size > params.max_segment_bytes - params.messages_size:
            reasons.append("segment.bytes")
        if size > 0 and reached_roll_ms:
            reasons.append("segment.ms")
        if self.offset_index.is_full():
            reasons.append("offset index full")
        if self.time_index.is_full():
            reasons.append("time index full")
        if not self.can_convert_to_relative_offset(params.max_offset_in_messages):
            reasons.append("offset overflow")
        return reasons

    def should_roll(self, params: RollParams) -> bool:
        """``LogSegment.shouldRoll`` (kafka-rules §7.3)."""
        return bool(self.roll_reasons(params))

    def resize_indexes(self, size: int) -> None:
        self.offset_index.resize(size)
        self.time_index.resize(size)

    def sanity_check(self, time_index_file_newly_created: bool) -> None:
        """``LogSegment.sanityCheck``: only checks that ``.index`` exists (KAFKA-7283).  A ``.timeindex`` that
        loading creates is resized to 0 bytes, or on 0.10.1 created preallocated and left so (row
        ``log.time_index_on_load``: ``Log.loadSegments`` of 0.10.1.1 builds every segment's indexes eagerly)."""
        if self.offset_index_file.exists():
            if time_index_file_newly_created:
                if self.time_index_on_load == "empty":
                    self.time_index.resize(0)
                else:
                    self.time_index  # noqa: B018 - opening it creates the preallocated file
        else:
            raise NoSuchFileError(f"Offset index file {self.offset_index_file.absolute()} does not exist")

    def on_become_inactive(self) -> None:
        """On roll: the final time index entry (even if full), then trim the indexes and the ``.log``."""
        self._time_index_final_entry()
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        self.log.trim()

    # --- reads ----------------------------------------------------------------------------------
    def read(self, start_offset: int, max_size: int, max_position=_SIZE,
             min_one_message: bool = False) -> FetchDataInfo | None:
        """``LogSegment.read``: whole batches from the one holding ``start_offset`` (kafka-rules §7.7).

        ``max_position`` defaults to the segment size; ``None`` means "unavailable" (empty records).
        Returns None when no batch has an offset >= ``start_offset``.
        """
        if max_size < 0:
            raise IllegalArgumentError(f"Invalid max size {max_size} for log read from segment {self.log}")
        m = self.translate_offset(start_offset)
        if m is None:
            return None
        start_position = m.position
        meta = LogOffsetMetadata(start_offset, self.base_offset, start_position)
        adjusted = max(max_size, m.size) if min_one_message else max_size
        if max_position is _SIZE:
            max_position = self.size
        if adjusted == 0 or max_position is None:
            return FetchDataInfo(meta, b"")
        fetch_size = min(max_position - start_position, adjusted)
        start, length = self.log.slice(start_position, fetch_size)
        return FetchDataInfo(meta, self.log.read(start, length), adjusted < m.size)

    def append_from_file(self, records: FileRecords, start: int) -> int:
        """``appendFromFile``: copy whole batches from ``records`` while their offsets fit this segment.

        Returns the bytes copied (less than the rest of ``records`` when an offset would overflow).
        Chunks are at most 1 MiB (Kafka's read buffer), except that one batch always goes.
        """
        position = start
        end = start + records.size
        while position < end:
            chunk, max_ts, shallow, max_offset = 0, -(2**63), -(2**63), -(2**63)
            for b in records.batches_from(position):
                if not self.can_convert_to_relative_offset(b.last_offset):
                    break
                if chunk != 0 and chunk + b.size_in_bytes >= 1024 * 1024:
                    break
                if b.max_timestamp > max_ts:
                    max_ts, shallow = b.max_timestamp, b.last_offset
                max_offset = b.last_offset
                chunk += b.size_in_bytes
            if chunk == 0:
                return position - start
            self.append(max_offset, max_ts, shallow, records.read(position, chunk))
            position += chunk
        return position - start

    def fetch_upper_bound_offset(self, start_offset_position: OffsetPosition, fetch_size: int) -> int | None:
        e = self.offset_index.fetch_upper_bound_offset(start_offset_position, fetch_size)
        return None if e is None else e.offset

    def has_overflow(self) -> bool:
        nxt = self.read_next_offset()
        return nxt > self.base_offset and not self.can_convert_to_relative_offset(nxt - 1)

    # --- recovery and truncation ----------------------------------------------------------------
    def recover(self, max_message_size: int | None = None, epoch_cache=None) -> int:
        """``LogSegment.recover``: revalidate every batch, cut the ``.log`` at the first bad or partial one,
        and rebuild the indexes per batch.  Returns the number of bytes truncated.

        ``max_message_size`` (optional) also treats a batch larger than it as corrupt, as Kafka 0.10's
        ``recover(maxMessageSize)`` did; Kafka 3.9 has no such limit (None).  ``epoch_cache`` gets
        ``assign(epoch, base_offset)`` for v2 batches, as the leader epoch cache does.
        """
        self.offset_index.reset()
        self._time_index_recover_begin()
        valid_bytes = 0
        last_index_entry = 0
        self._max_ts_and_offset = None
        try:
            for batch in self.log.batches():
                if max_message_size is not None and batch.size_in_bytes - LOG_OVERHEAD > max_message_size:
                    raise CorruptRecordError(f"Record size {batch.size_in_bytes - LOG_OVERHEAD} exceeds the largest allowable "
                                             f"message size ({max_message_size}).", position=batch.position)
                batch.ensure_valid()
                last_offset = batch.last_offset
                self._ensure_offset_in_range(last_offset)
                max_ts = batch.max_timestamp
                if max_ts > self.max_timestamp_so_far:
                    self._max_ts_and_offset = TimestampOffset(max_ts, last_offset)
                if valid_bytes - last_index_entry > self.index_interval_bytes:
                    self.offset_index.append(batch.base_offset if self.index_key == "first offset" else last_offset,
                                             valid_bytes)
                    self._time_index_on_offset_entry()
                    last_index_entry = valid_bytes
                valid_bytes += batch.size_in_bytes
                if batch.magic >= 2 and epoch_cache is not None:
                    ple = batch.partition_leader_epoch
                    latest = epoch_cache.latest_epoch
                    if ple >= 0 and (latest is None or ple > latest):
                        epoch_cache.assign(ple, batch.base_offset)
        except (CorruptRecordError, InvalidRecordError):
            pass
        truncated = self.log.size - valid_bytes
        self.log.truncate_to(valid_bytes)
        self.offset_index.trim_to_valid_size()
        self._time_index_recover_end()
        return truncated

    def _read_largest_timestamp(self) -> TimestampOffset:
        last = self.time_index.last_entry
        position = self.offset_index.lookup(last.offset).position
        after = self.log.largest_timestamp_after(position)
        if after.timestamp > last.timestamp:
            return TimestampOffset(after.timestamp, after.offset)
        return last

    def truncate_to(self, offset: int) -> int:
        """Drop everything at offsets >= ``offset``: whole batches, and index entries (kafka-rules §7.6)."""
        mapping = self.translate_offset(offset)
        oi, ti = self.offset_index, self.time_index
        oi.truncate_to(offset)
        self._time_index_truncate_to(offset)
        oi.resize(oi.max_index_size)
        ti.resize(ti.max_index_size)
        bytes_truncated = 0 if mapping is None else self.log.truncate_to(mapping.position)
        if self.log.size == 0:
            self.created = self.clock.now()
            self.rolling_based_timestamp = None
        self.bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far >= 0:
            self._max_ts_and_offset = self._read_largest_timestamp()
        return bytes_truncated

    # --- lifecycle ------------------------------------------------------------------------------
    def flush(self) -> None:
        self.log.flush()
        if self.log.durable:
            self.offset_index.flush()
            self.time_index.flush()

    def close(self) -> None:
        """``LogSegment.close``: final time index entry if the max timestamp is known, trim, close."""
        if self._max_ts_and_offset is not None:
            try:
                self._time_index_final_entry()
            except Exception:  # Utils.swallow
                pass
        if self._offset_index is not None:
            self._offset_index.close()
        if self._time_index is not None:
            self._time_index.close()
        self.log.close()

    def close_handlers(self) -> None:
        """Release files without writing anything (a crash, or a failed disk)."""
        if self._offset_index is not None:
            self._offset_index.close_handler()
        if self._time_index is not None:
            self._time_index.close_handler()
        self.log.close_handlers()

    def _index_paths(self):
        return [self.offset_index_file, self.time_index_file, self._txn_index_path]

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        """Rename the ``.log`` and the index files (``changeFileSuffixes``); each rename is atomic."""
        self.log.rename_to(replace_suffix(self.log.path, old_suffix, new_suffix))
        if self._offset_index is not None:
            self._offset_index.rename_to(replace_suffix(self._offset_index.path, old_suffix, new_suffix))
        else:
            new = replace_suffix(self._offset_index_path, old_suffix, new_suffix)
            move_if_exists(self._offset_index_path, new)
            self._offset_index_path = new
        if self._time_index is not None and self.time_indexed:
            self._time_index.rename_to(replace_suffix(self._time_index.path, old_suffix, new_suffix))
        else:
            new = replace_suffix(self._time_index_path, old_suffix, new_suffix)
            move_if_exists(self._time_index_path, new)
            self._time_index_path = new
        new = replace_suffix(self._txn_index_path, old_suffix, new_suffix)
        move_if_exists(self._txn_index_path, new)
        self._txn_index_path = new

    def has_suffix(self, suffix: str) -> bool:
        return all(p.name.endswith(suffix) for p in [self.log.path] + self._index_paths())

    def delete_if_exists(self) -> None:
        self.log.delete_if_exists()
        if self._offset_index is not None:
            self._offset_index.delete_if_exists()
        elif self._offset_index_path.exists():
            os.unlink(self._offset_index_path)
        if self._time_index is not None:
            self._time_index.delete_if_exists()
        elif self._time_index_path.exists():
            os.unlink(self._time_index_path)
        if self._txn_index_path.exists():
            os.unlink(self._txn_index_path)

    def mark_deleted_and_delete(self) -> None:
        """``LocalLog.deleteSegmentFiles`` without the delay: rename to ``.deleted``, then unlink."""
        if not self.has_suffix(DELETED_FILE_SUFFIX):
            self.change_file_suffixes("", DELETED_FILE_SUFFIX)
        self.delete_if_exists()

    def deleted(self) -> bool:
        return not any(p.exists() for p in [self.log.path] + self._index_paths())

    def __repr__(self) -> str:
        ts = self._max_ts_and_offset.timestamp if self._max_ts_and_offset is not None else NO_TIMESTAMP
        try:
            lm = self.last_modified()
        except OSError:
            lm = -1
        return (f"LogSegment(baseOffset={self.base_offset}, size={self.size}, lastModifiedTime={lm}, "
                f"largestRecordTimestamp={ts})")
