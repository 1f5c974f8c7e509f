"""Read-only views of a broker's log directories: segments, their indexes, offsets and timestamps.

Nothing here writes: ``.log`` files are opened ``O_RDONLY`` through
:class:`~kafkafmt.log.file_records.FileRecords` (``mutable=False``), and ``.index`` /
``.timeindex`` files are read once into in-memory :class:`~kafkafmt.log.index.OffsetIndex` /
:class:`~kafkafmt.log.index.TimeIndex` objects (``path=None``), so the lookups are Kafka's own
(``OffsetIndex.lookup``, ``TimeIndex.lookup``, ``LogSegment.findOffsetByTimestamp``,
``UnifiedLog.fetchOffsetByTimestamp``) without :class:`~kafkafmt.log.log.Log`'s loading and
recovery, which may rewrite files.

A live broker's active segment keeps zero-filled, preallocated index files; trailing all-zero
entries are not entries (Kafka rebuilds such an index on recovery), so they are dropped here.
"""
from __future__ import annotations

import contextlib
import glob
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..constants import NO_TIMESTAMP
from ..errors import CheckpointError, NoSuchFileError
from ..log.clock import mtime_ms
from ..log.file_records import FileRecords, TimestampAndOffset
from ..log.files import (INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, LOG_START_OFFSET_CHECKPOINT, TIME_INDEX_FILE_SUFFIX,
                         checkpoint_offset, offset_from_file_name, parse_topic_partition_name)
from ..log.index import OffsetIndex, TimeIndex


class OpenCounter:
    """Records the files opened by planning and reading while :meth:`recording` (tests check pruning)."""

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
    """A ``.log`` file opened read-only (the only way this package opens segments)."""
    OPENED.note(path)
    return FileRecords(path, file_already_exists=True, mutable=False)


@dataclass
class SegmentView:
    """One segment of a partition: its ``.log`` and, loaded on demand, its indexes (read-only)."""

    dir: Path
    base_offset: int
    log_path: Path
    _offset_index: OffsetIndex | None = field(default=None, repr=False)
    _time_index: TimeIndex | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        """The ``.log`` file length (a stat, no open)."""
        return self.log_path.stat().st_size

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

    def largest_timestamp(self) -> int:
        """``LogSegment.largestTimestamp``: the time index's last entry, else the ``.log`` mtime."""
        ts = self.time_index.last_entry.timestamp
        return ts if ts >= 0 else mtime_ms(self.log_path)

    def start_position(self, offset: int) -> int:
        """A batch boundary at or before the batch holding ``offset`` (``OffsetIndex.lookup``)."""
        return self.offset_index.lookup(offset).position

    def end_position(self, offset: int) -> int:
        """A batch boundary after every batch holding an offset below ``offset``.

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

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> TimestampAndOffset | None:
        """``LogSegment.findOffsetByTimestamp``: time index → offset index → scan of the ``.log`` (read-only)."""
        ts_offset = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(ts_offset.offset, starting_offset)).position
        records = open_records(self.log_path)
        try:
            return records.search_for_timestamp(timestamp, position, starting_offset)
        finally:
            records.close_handlers()

    def next_offset(self) -> int:
        """The offset after the segment's last batch (walks the ``.log`` from the last index entry)."""
        idx = self.offset_index
        position = idx.entry(idx.entries - 1).position if idx.entries else 0
        records = open_records(self.log_path)
        try:
            last = None
            for last in records.batches_from(position):
                pass
            return self.base_offset if last is None else last.next_offset
        finally:
            records.close_handlers()


@dataclass
class PartitionDir:
    """A topic-partition directory (``topic-partition``) or a chosen set of its segment files."""

    path: Path
    topic: str
    partition: int
    segments: list[SegmentView]
    #: this partition's entry in a ``log-start-offset-checkpoint`` (None: no file or no entry)
    checkpointed_log_start: int | None = None

    @property
    def log_start_offset(self) -> int:
        """``LogLoader.load``: the larger of the log-start checkpoint and the first segment's base offset
        (records below it, e.g. after ``DeleteRecords``, are no longer served by the broker)."""
        first = self.segments[0].base_offset if self.segments else 0
        return first if self.checkpointed_log_start is None else max(first, self.checkpointed_log_start)

    def log_end_offset(self) -> int:
        return self.segments[-1].next_offset() if self.segments else 0

    def segment_for(self, offset: int) -> int:
        """Index of the last segment whose base offset is <= ``offset`` (0 if none)."""
        i = 0
        for j, s in enumerate(self.segments):
            if s.base_offset <= offset:
                i = j
        return i

    def fetch_offset_by_timestamp(self, timestamp: int) -> int | None:
        """``UnifiedLog.fetchOffsetByTimestamp`` for a real timestamp: the first segment whose largest
        timestamp is >= ``timestamp`` answers; None when no record has such a timestamp."""
        for s in self.segments:
            if s.largest_timestamp() >= timestamp:
                found = s.find_offset_by_timestamp(timestamp, self.log_start_offset)
                return None if found is None else found.offset
        return None


def _segment(path: Path) -> SegmentView:
    return SegmentView(path.parent, offset_from_file_name(path.name), path)


def _partition_of(dirpath: Path) -> tuple[str, int]:
    try:
        return parse_topic_partition_name(str(dirpath))
    except ValueError as e:
        raise NoSuchFileError(f"{dirpath}: not a topic-partition directory ({e})") from None


def discover(paths: Iterable[str | os.PathLike]) -> list[PartitionDir]:
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
    out = []
    for d, chosen in dirs.items():
        topic, partition = _partition_of(d)
        files = sorted(chosen) if chosen is not None else [c for c in d.iterdir() if c.name.endswith(LOG_FILE_SUFFIX)
                                                            and c.name[:-len(LOG_FILE_SUFFIX)].isdigit()]
        segs = sorted((_segment(f) for f in files), key=lambda s: s.base_offset)
        out.append(PartitionDir(d, topic, partition, segs, _checkpointed_log_start(d, topic, partition)))
    return sorted(out, key=lambda p: (p.topic, p.partition, str(p.path)))


def _checkpointed_log_start(d: Path, topic: str, partition: int) -> int | None:
    """The partition's log start offset from ``log-start-offset-checkpoint``: the broker keeps it in the
    ``log.dirs`` directory (the partition directory's parent); :class:`~kafkafmt.log.log.Log` keeps its own
    in the partition directory.  A malformed file is ignored with a warning, as ``LogManager.loadLogs``
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


__all__ = ["OPENED", "OpenCounter", "PartitionDir", "SegmentView", "discover", "open_records", "NO_TIMESTAMP"]
