"""The read-only view of a partition: its segments, their offset and time indexes, and the lookups
Kafka answers from them (``LogSegment``'s and ``UnifiedLog``'s reads, Kafka 3.9), written once.

Every reader of a partition goes through this module: :class:`~kafkafmt.log.segment.LogSegment`
(and so :class:`~kafkafmt.log.log.Log`, read-only or not) takes its segment lookups from
:class:`SegmentReads`; ``Log.view()`` is a :class:`PartitionView` over the log's live segments;
the Spark data source plans its reads over :func:`discover`'s views of a broker's log directories,
opened straight from the files.  Nothing here writes.

API::

    discover(paths) -> list[PartitionView]      # directories, .log files, globs, log.dirs directories
    PartitionView.open(dir) -> PartitionView    # one topic-partition directory, straight from its files
    PartitionView.of_files(dir, chosen=None)    # the same, without discovery (a read-only Log's source_view)
    log.view() -> PartitionView                 # a kafkafmt.log.Log's live segments

    PartitionView(path, topic, partition, segments, checkpointed_log_start=None, known_log_start=None)
        .segments                               # SegmentReads (SegmentView or LogSegment), by base offset
        .log_start_offset                       # LogLoader: max(first base offset, log-start checkpoint)
        .log_end_offset()                       # the last segment's read_next_offset()
        .segment_for(offset) -> int             # index of the last segment whose base offset <= offset
        .search_offset_by_timestamp(ts, start_offset=None) -> TimestampAndOffset | None
                                                # UnifiedLog.searchOffsetInLocalLog (ListOffsets, ts >= 0)
        .max_timestamp_offset() -> TimestampAndOffset | None   # ListOffsets MAX_TIMESTAMP (-3)

    SegmentReads (one segment; LogSegment and SegmentView both are one)
        .base_offset, .size, .offset_index, .time_index, .last_modified(), .reading()
        .read_max_timestamp_and_offset_so_far() -> TimestampOffset
        .max_timestamp_so_far, .shallow_offset_of_max_timestamp_so_far
        .largest_record_timestamp() -> int | None   # LogSegment.largestRecordTimestamp
        .largest_timestamp() -> int                 # LogSegment.largestTimestamp: max ts, else .log mtime
        .translate_offset(offset, starting_file_position=0) -> LogOffsetPosition | None
        .find_offset_by_timestamp(ts, starting_offset=0) -> TimestampAndOffset | None
        .read_next_offset() -> int                  # LogSegment.readNextOffset
        .batches(start=0, end=None) -> Iterator[FileBatch]   # whole batches, through the one batch walker
        .max_timestamp_offset() -> TimestampAndOffset | None   # the first record holding the max timestamp
        .start_position(offset), .end_position(offset), .batch_boundaries(start, end)   # index only

    SegmentView(log_path)                       # a segment's files on disk, opened read-only on use

A :class:`SegmentView` opens its ``.log`` with ``O_RDONLY`` only for the lookup that needs it and
closes it after (:data:`OPENED` records which, for tests of pruning); its ``.index`` and
``.timeindex`` are read once into in-memory indexes (``path=None``), so no file is ever written.  A
live broker's active segment keeps zero-filled, preallocated index files; trailing all-zero entries
are not entries (Kafka rebuilds such an index on recovery), so they are dropped.  A view of files
does not recover: a torn tail is what the batch walker reports, not a truncation.
"""
from __future__ import annotations

import contextlib
import glob
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import ContextManager, Iterable, Iterator

from ..errors import CheckpointError, NoSuchFileError
from .clock import mtime_ms
from .file_records import FileBatch, FileRecords, LogOffsetPosition, TimestampAndOffset
from .files import (
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT,
    TIME_INDEX_FILE_SUFFIX,
    checkpoint_offset,
    offset_from_file_name,
    parse_topic_partition_name,
)
from .index import OffsetIndex, TimeIndex, TimestampOffset


class OpenCounter:
    """Records the ``.log`` and index files views open while :meth:`recording` (tests check pruning)."""

    def __init__(self):
        self.opened: list[str] = []
        self.active = False

    @contextlib.contextmanager
    def recording(self) -> Iterator["OpenCounter"]:
        self.opened, self.active = [], True
        try:
            yield self
        finally:
            self.active = False

    def note(self, path: Path) -> None:
        if self.active:
            self.opened.append(os.fspath(path))

    def logs(self) -> list[str]:
        return [p for p in self.opened if p.endswith(LOG_FILE_SUFFIX)]


#: the process-wide counter (reset it in a test; Spark's Python workers each have their own)
OPENED = OpenCounter()


class SegmentReads:
    """The read-only lookups of one segment (``LogSegment``'s reads), over what a subclass provides:
    ``base_offset``, ``size``, ``offset_index``, ``time_index``, :meth:`last_modified` and
    :meth:`reading` (the ``.log`` as a :class:`~kafkafmt.log.file_records.FileRecords`)."""

    base_offset: int
    offset_index: OffsetIndex
    time_index: TimeIndex

    def reading(self) -> ContextManager[FileRecords]:
        """The ``.log`` for the duration of one lookup."""
        raise NotImplementedError

    def last_modified(self) -> int:
        """The ``.log`` file's mtime (ms)."""
        raise NotImplementedError

    # --- max timestamp --------------------------------------------------------------------------
    def read_max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        """The max timestamp and its shallow offset: as a reloaded segment knows them, the time index's
        last entry (``LogSegment.readMaxTimestampAndOffsetSoFar``)."""
        return self.time_index.last_entry

    @property
    def max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().timestamp

    @property
    def shallow_offset_of_max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().offset

    def largest_record_timestamp(self) -> int | None:
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else None

    def largest_timestamp(self) -> int:
        """Max record timestamp, or the ``.log`` mtime if the segment has none (retention, lookups)."""
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else self.last_modified()

    # --- lookups by offset ----------------------------------------------------------------------
    def translate_offset(self, offset: int, starting_file_position: int = 0) -> LogOffsetPosition | None:
        """The first batch with last offset >= ``offset``, searched from the offset index position."""
        mapping = self.offset_index.lookup(offset)
        with self.reading() as records:
            return records.search_for_offset_with_size(offset, max(mapping.position, starting_file_position))

    def read_next_offset(self) -> int:
        """``LogSegment.readNextOffset``: the offset after the last batch, walked from the batch holding the
        offset index's last offset to the end of the ``.log``; the base offset if there is none."""
        last_indexed = self.offset_index.last_offset
        with self.reading() as records:
            found = records.search_for_offset_with_size(last_indexed, max(self.offset_index.lookup(last_indexed).position, 0))
            if found is None:
                return self.base_offset
            last = None
            for last in records.batches_from(found.position):
                pass
            return self.base_offset if last is None else last.next_offset

    def batches(self, start: int = 0, end: int | None = None) -> Iterator[FileBatch]:
        """The whole batches of ``[start, end)`` (``FileRecords.batches_from``: the one batch walker); the
        ``.log`` stays open while the iteration goes on, so read each batch before the next step."""
        with self.reading() as records:
            yield from records.batches_from(start, end)

    def start_position(self, offset: int) -> int:
        """A batch boundary at or before the batch holding ``offset`` (``OffsetIndex.lookup``; no ``.log`` read)."""
        return self.offset_index.lookup(offset).position

    def end_position(self, offset: int) -> int:
        """A batch boundary after every batch holding an offset below ``offset`` (no ``.log`` read).

        The entry after the first index entry at or above ``offset`` starts a batch whose base
        offset is above ``offset``; without one, the end of the file.
        """
        idx = self.offset_index
        slot = idx.smallest_upper_bound_slot_for(offset)
        if slot != -1 and slot + 1 < idx.entries:
            return idx.entry(slot + 1).position
        return self.size

    def batch_boundaries(self, start: int, end: int) -> list[int]:
        """Positions in ``(start, end)`` where the offset index says a batch starts (no ``.log`` read)."""
        return [e.position for e in self.offset_index if start < e.position < end]

    # --- lookups by timestamp -------------------------------------------------------------------
    def find_offset_by_timestamp(self, timestamp_ms: int, starting_offset: int = 0) -> TimestampAndOffset | None:
        """``LogSegment.findOffsetByTimestamp``: time index → offset index → scan (kafka-rules §6.6)."""
        ts_offset = self.time_index.lookup(timestamp_ms)
        position = self.offset_index.lookup(max(ts_offset.offset, starting_offset)).position
        with self.reading() as records:
            return records.search_for_timestamp(timestamp_ms, position, starting_offset)

    def max_timestamp_offset(self) -> TimestampAndOffset | None:
        """The first record holding the segment's max timestamp, found from the batch the offset index gives
        for its shallow offset (ListOffsets ``MAX_TIMESTAMP``, KIP-734); None when no batch holds it."""
        mto = self.read_max_timestamp_and_offset_so_far()
        position = self.offset_index.lookup(mto.offset).position
        with self.reading() as records:
            for b in records.batches_from(position):
                if b.max_timestamp == mto.timestamp:
                    off = b.offset_of_max_timestamp()
                    if off is None:
                        return None
                    ple = b.partition_leader_epoch
                    return TimestampAndOffset(b.max_timestamp, off, ple if ple >= 0 else None)
        return None


def _read_index_bytes(path: Path, entry_size: int) -> bytes:
    """An index file's entries without the zero-filled preallocated tail."""
    if not path.exists():
        return b""
    OPENED.note(path)
    data = path.read_bytes()
    n = len(data) - len(data) % entry_size
    zero = bytes(entry_size)
    while n >= entry_size and data[n - entry_size:n] == zero:
        n -= entry_size
    return data[:n]


def open_records(path: Path) -> FileRecords:
    """A ``.log`` file opened read-only (the only way a view opens segments); close with ``close_handlers``."""
    OPENED.note(path)
    return FileRecords(path, file_already_exists=True, mutable=False)


@dataclass
class SegmentView(SegmentReads):
    """One segment on disk: its ``.log`` (opened read-only for each lookup) and, loaded on first use,
    its indexes (in memory)."""

    log_path: Path
    base_offset: int = -1
    _offset_index: OffsetIndex | None = field(default=None, repr=False)
    _time_index: TimeIndex | None = field(default=None, repr=False)

    def __post_init__(self):
        self.log_path = Path(self.log_path)
        if self.base_offset < 0:
            self.base_offset = offset_from_file_name(self.log_path.name)

    @property
    def dir(self) -> Path:
        return self.log_path.parent

    @property
    def size(self) -> int:
        """The ``.log`` file length (a stat, no open)."""
        return self.log_path.stat().st_size

    def last_modified(self) -> int:
        return mtime_ms(self.log_path)

    @contextlib.contextmanager
    def reading(self) -> Iterator[FileRecords]:
        records = open_records(self.log_path)
        try:
            yield records
        finally:
            records.close_handlers()

    def _sibling(self, suffix: str) -> Path:
        return self.log_path.with_name(self.log_path.name[:-len(LOG_FILE_SUFFIX)] + suffix)

    @property
    def offset_index(self) -> OffsetIndex:
        if self._offset_index is None:
            data = _read_index_bytes(self._sibling(INDEX_FILE_SUFFIX), OffsetIndex.ENTRY_SIZE)
            self._offset_index = OffsetIndex(None, self.base_offset, data=data)
        return self._offset_index

    @property
    def time_index(self) -> TimeIndex:
        if self._time_index is None:
            data = _read_index_bytes(self._sibling(TIME_INDEX_FILE_SUFFIX), TimeIndex.ENTRY_SIZE)
            self._time_index = TimeIndex(None, self.base_offset, data=data)
        return self._time_index


@dataclass
class PartitionView:
    """A topic-partition's segments (all of them, or a chosen set of segment files) and the lookups
    ``UnifiedLog`` answers over them (see the module docstring)."""

    path: Path
    topic: str
    partition: int
    segments: list[SegmentReads]
    #: this partition's entry in a ``log-start-offset-checkpoint`` (None: no file or no entry)
    checkpointed_log_start: int | None = None
    #: the log start offset a live :class:`~kafkafmt.log.log.Log` holds (then used as it is)
    known_log_start: int | None = None

    @classmethod
    def open(cls, directory: str | os.PathLike) -> "PartitionView":
        """The view of one topic-partition directory, straight from its files."""
        found = discover([directory])
        if len(found) != 1:
            raise NoSuchFileError(f"{directory}: not one topic-partition directory ({len(found)} found)")
        return found[0]

    @classmethod
    def of_files(cls, directory: str | os.PathLike, chosen: Iterable[Path] | None = None) -> "PartitionView":
        """The view of topic-partition ``directory``: its ``<base offset>.log`` segments (or the ``chosen``
        ones), each with its indexes, and its log-start checkpoint.  Only lists the directory."""
        d = Path(directory)
        topic, partition = _partition_of(d)
        files = sorted(chosen) if chosen is not None else [c for c in d.iterdir() if c.name.endswith(LOG_FILE_SUFFIX)
                                                            and c.name[:-len(LOG_FILE_SUFFIX)].isdigit()]
        segs = sorted((SegmentView(f) for f in files), key=lambda s: s.base_offset)
        return cls(d, topic, partition, segs, _checkpointed_log_start(d, topic, partition))

    @property
    def log_start_offset(self) -> int:
        """``LogLoader.load``: the larger of the log-start checkpoint and the first segment's base offset
        (records below it, e.g. after ``DeleteRecords``, are no longer served by the broker)."""
        if self.known_log_start is not None:
            return self.known_log_start
        first = self.segments[0].base_offset if self.segments else 0
        return first if self.checkpointed_log_start is None else max(first, self.checkpointed_log_start)

    def log_end_offset(self) -> int:
        """The offset after the last batch of the last segment (walks that segment from its last index entry)."""
        return self.segments[-1].read_next_offset() if self.segments else 0

    def segment_for(self, offset: int) -> int:
        """Index of the last segment whose base offset is <= ``offset`` (0 if none)."""
        i = 0
        for j, s in enumerate(self.segments):
            if s.base_offset <= offset:
                i = j
        return i

    def search_offset_by_timestamp(self, timestamp: int, start_offset: int | None = None) -> TimestampAndOffset | None:
        """``UnifiedLog.searchOffsetInLocalLog`` for a real timestamp: the first segment whose largest
        timestamp is >= ``timestamp`` answers (records from ``start_offset``, default the log start
        offset); None when no record has such a timestamp."""
        start = self.log_start_offset if start_offset is None else start_offset
        for s in self.segments:
            if s.largest_timestamp() >= timestamp:
                return s.find_offset_by_timestamp(timestamp, start)
        return None

    def max_timestamp_offset(self) -> TimestampAndOffset | None:
        """ListOffsets ``MAX_TIMESTAMP`` (KIP-734): the first record holding the largest timestamp, in the
        first segment with the largest max timestamp; None when none is found."""
        best = self.segments[0]
        for s in self.segments[1:]:
            if s.max_timestamp_so_far > best.max_timestamp_so_far:
                best = s
        return best.max_timestamp_offset()


def discover(paths: Iterable[str | os.PathLike]) -> list[PartitionView]:
    """The partitions named by ``paths``: directories, ``.log`` files, or globs of either.

    A directory that is not itself ``topic-partition`` but holds such directories (a broker's
    ``log.dirs`` entry) stands for all of them.  Segment files group under their directory.
    """
    dirs: dict[Path, set[Path] | None] = {}
    for p in paths:
        text = os.fspath(p)
        matches = sorted(glob.glob(text)) if glob.has_magic(text) else [text]
        if not matches:
            raise NoSuchFileError(f"{text}: no such file or directory")
        for m in map(Path, matches):
            _add_match(dirs, m)
    out = [PartitionView.of_files(d, chosen) for d, chosen in dirs.items()]
    return sorted(out, key=lambda p: (p.topic, p.partition, str(p.path)))


def _add_match(dirs: dict[Path, set[Path] | None], m: Path) -> None:
    """Note what one path names: a segment file (chosen), a partition directory (all of it), or a
    ``log.dirs`` directory (every partition directory in it)."""
    if m.is_file() and m.name.endswith(LOG_FILE_SUFFIX):
        chosen = dirs.setdefault(m.parent.resolve(), set())
        if chosen is not None:
            chosen.add(m.resolve())
    elif m.is_dir() and any(c.name.endswith(LOG_FILE_SUFFIX) for c in m.iterdir()):
        dirs[m.resolve()] = None
    elif m.is_dir():
        subs = [c for c in sorted(m.iterdir()) if c.is_dir() and _is_partition_name(c.name)]
        if not subs:
            raise NoSuchFileError(f"{m}: neither a topic-partition directory nor a log.dirs directory")
        for c in subs:
            dirs[c.resolve()] = None
    else:
        raise NoSuchFileError(f"{m}: not a segment (.log) file or a log directory")


def _partition_of(dirpath: Path) -> tuple[str, int]:
    try:
        return parse_topic_partition_name(str(dirpath))
    except ValueError as e:
        raise NoSuchFileError(f"{dirpath}: not a topic-partition directory ({e})") from None


def _checkpointed_log_start(d: Path, topic: str, partition: int) -> int | None:
    """The partition's log start offset from ``log-start-offset-checkpoint``: the broker keeps it in the
    ``log.dirs`` directory (the partition directory's parent), and so does :class:`~kafkafmt.log.log.Log`; one
    in the partition directory (where kafkafmt's logs kept it before they took Kafka's layout) is read after.
    A malformed file is ignored with a warning, as ``LogManager.loadLogs``
    resets it."""
    for where in (d.parent, d):
        path = where / LOG_START_OFFSET_CHECKPOINT
        try:
            found = checkpoint_offset(path, topic, partition)
        except CheckpointError as e:
            warnings.warn(f"{e.reason}; ignored, as Kafka's LogManager.loadLogs does", RuntimeWarning, stacklevel=2)
            continue
        if found is not None:
            return found
    return None


def _is_partition_name(name: str) -> bool:
    """``topic-partition``, not a directory being deleted, moved or left stray (``-delete``, ``-future``, ``-stray``)."""
    if name.endswith(("-delete", "-future", "-stray")):
        return False
    try:
        parse_topic_partition_name(name)
        return True
    except ValueError:
        return False


__all__ = ["OPENED", "OpenCounter", "SegmentReads", "SegmentView", "PartitionView", "discover", "open_records"]
