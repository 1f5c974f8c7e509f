"""A segment's ``.log`` file (``FileRecords``) and its shallow batch iteration (``FileLogInputStream``).

``FileRecords`` keeps its own ``size``: for a NEW preallocated file the file is ``init_file_size``
bytes long but ``size`` starts at 0 and grows with appends; ``trim()`` (roll, close) then cuts the
file to ``size``.  Opening an EXISTING file takes its whole length as ``size``.

Batch iteration is the one batch walker (:class:`~kafkafmt.records.walker.BatchWalker`) under its
:data:`~kafkafmt.records.walker.FILE` rules (``FileLogInputStream.nextBatch``, kafka-rules §0), fed
by a :class:`~kafkafmt.records.walker.PreadSource` that reads each entry's header bytes:

* stop when ``position >= end - HEADER_SIZE_UP_TO_MAGIC``;
* a size field below ``RECORD_OVERHEAD_V0`` raises CorruptRecordError ("Found record size %d smaller
  than minimum record overhead (14) in file %s.");
* a batch running past ``end`` stops iteration (a partial batch is not an error);
* magic < 2 (including negative bytes) is a legacy entry, anything else is read as v2 -- there is
  no upper bound on the magic byte, so a v2 batch whose magic byte was changed to 3 still passes
  ``ensure_valid`` (the v2 CRC does not cover the magic).

Batches are read lazily: the log header up to the magic byte first; the rest only when a field
beyond it is asked for, as ``FileChannelRecordBatch`` does.
"""
from __future__ import annotations

import contextlib
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..constants import INT32_MAX, MAGIC_VALUE_V0, NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from ..errors import CorruptRecordError, IllegalArgumentError, KafkaStorageError
from ..records.memory import batch_view
from ..records.walker import FILE, BatchSpan, BatchWalker, PreadSource
from .clock import Clock, mtime_ms, set_mtime_ms
from .files import create_file_atomically


@dataclass(frozen=True, slots=True)
class LogOffsetPosition:
    """``FileRecords.LogOffsetPosition``: a batch's last offset, start position and size."""

    offset: int
    position: int
    size: int


@dataclass(frozen=True, slots=True)
class TimestampAndOffset:
    """``FileRecords.TimestampAndOffset`` (also what ListOffsets answers): ``leader_epoch`` None = empty."""

    timestamp: int
    offset: int
    leader_epoch: int | None = None


def _leader_epoch(ple: int) -> int | None:
    return None if ple == NO_PARTITION_LEADER_EPOCH else ple


class FileBatch:
    """A batch in a ``.log`` file, read lazily (``FileChannelRecordBatch``).

    ``batch`` is the full :class:`~kafkafmt.records.batch.RecordBatch` view (loaded on first use);
    :meth:`ensure_valid` raises :class:`~kafkafmt.errors.CorruptRecordError` as Kafka's does.
    """

    __slots__ = ("_file", "position", "size_in_bytes", "offset", "magic", "_batch")

    def __init__(self, file: "FileRecords", span: BatchSpan):
        self._file = file
        self.position = span.position
        self.size_in_bytes = span.size
        self.offset = span.offset
        self.magic = span.magic
        self._batch = None

    @property
    def is_legacy(self) -> bool:
        return self.magic < 2

    @property
    def raw(self) -> bytes:
        return self._file.read(self.position, self.size_in_bytes)

    @property
    def batch(self):
        if self._batch is None:
            data = self.raw
            self._batch = batch_view(data, 0, len(data), self.magic)
        return self._batch

    @property
    def end(self) -> int:
        return self.position + self.size_in_bytes

    @property
    def last_offset(self) -> int:
        # legacy: the log header offset is the (wrapper's) last offset; v2 needs the batch header
        return self.offset if self.is_legacy else self.batch.last_offset

    @property
    def base_offset(self) -> int:
        return self.offset if not self.is_legacy else self.batch.base_offset

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def max_timestamp(self) -> int:
        if self.magic == MAGIC_VALUE_V0:
            return NO_TIMESTAMP
        return self.batch.max_timestamp

    @property
    def partition_leader_epoch(self) -> int:
        return NO_PARTITION_LEADER_EPOCH if self.is_legacy else self.batch.partition_leader_epoch

    def ensure_valid(self) -> None:
        self.batch.ensure_valid()

    def is_valid(self) -> bool:
        try:
            return self.batch.is_valid()
        except CorruptRecordError:
            return False

    def records(self):
        return self.batch.records()

    def offset_of_max_timestamp(self) -> int | None:
        """``RecordBatch.offsetOfMaxTimestamp``: the first record whose timestamp equals maxTimestamp (v0: None)."""
        if self.magic == MAGIC_VALUE_V0:
            return None
        max_ts = self.max_timestamp
        for rec in self.records():
            if rec.timestamp == max_ts:
                return rec.offset
        return None

    def __repr__(self) -> str:
        return f"<FileBatch magic={self.magic} position={self.position} size={self.size_in_bytes}>"


class FileRecords:
    """The ``.log`` file of a segment (``FileRecords``)."""

    def __init__(self, path: str | os.PathLike, *, file_already_exists: bool = False, init_file_size: int = 0,
                 preallocate: bool = False, clock: Clock | None = None, mutable: bool = True, durable: bool = True):
        self._path = Path(path)
        self.durable = durable  # False: flush() does not fsync (a simulation that never loses power)
        self.clock = clock
        self.mutable = mutable
        if mutable and not file_already_exists and preallocate:
            create_file_atomically(self._path, init_file_size)
            end = 0
        else:
            end = INT32_MAX
        flags = os.O_RDWR | os.O_CREAT if mutable else os.O_RDONLY
        self._fd = os.open(self._path, flags, 0o644)
        length = os.fstat(self._fd).st_size
        if length > INT32_MAX:
            raise KafkaStorageError(f"The size of segment {self._path} ({length}) is larger than the maximum "
                                    f"allowed segment size of {INT32_MAX}")
        self._size = min(length, end)
        if mutable and not file_already_exists and self.clock is not None:
            self._touch()

    # --- basics ---------------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self._path

    file = path

    @property
    def size(self) -> int:
        """``sizeInBytes``: bytes of records (not the preallocated file length)."""
        return self._size

    size_in_bytes = size

    def channel_size(self) -> int:
        """The real file length (``channel.size()``)."""
        return os.fstat(self._fd).st_size

    def _touch(self) -> None:
        if self.clock is not None:
            set_mtime_ms(self._path, self.clock.now())

    def last_modified(self) -> int:
        return mtime_ms(self._path)

    @contextlib.contextmanager
    def mapped(self, position: int = 0):
        """The bytes from ``position`` to :attr:`size`, mapped read-only instead of copied (a pass over a
        whole segment, as the cleaner makes three): a buffer valid inside the ``with`` only.  Views made of
        it should be gone by its end; one still alive (an exception's traceback) keeps the mapping until it
        is collected."""
        if position < 0:
            raise IllegalArgumentError("Negative position", position=position)
        if position >= self._size:
            yield b""
            return
        mm = mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ)  # pages are read as they are touched
        view = memoryview(mm)[position:self._size]
        try:
            yield view
        finally:
            try:
                view.release()
                mm.close()
            except BufferError:  # a view outlives the pass: the mapping goes with the last of them
                pass

    def read(self, position: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``position`` (never past ``size``)."""
        if position < 0:
            raise IllegalArgumentError("Negative position", position=position)
        size = max(0, min(size, self._size - position))
        if size == 0:
            return b""
        return os.pread(self._fd, size, position)

    def read_all(self) -> bytes:
        return self.read(0, self._size)

    def slice(self, position: int, size: int) -> tuple[int, int]:
        """``FileRecords.slice`` bounds: ``(start, length)`` clipped to the file, with Kafka's argument checks."""
        current = self._size
        if position < 0:
            raise IllegalArgumentError(f"Invalid position: {position} in read from {self}")
        if position > current:
            raise IllegalArgumentError(f"Slice from position {position} exceeds end position of {self}")
        if size < 0:
            raise IllegalArgumentError(f"Invalid size: {size} in read from {self}")
        end = position + size
        if end > current:
            end = current
        return position, end - position

    # --- writes ---------------------------------------------------------------------------------
    def append(self, data: bytes) -> int:
        if len(data) > INT32_MAX - self._size:
            raise IllegalArgumentError(f"Append of size {len(data)} bytes is too large for segment with current "
                                       f"file position at {self._size}")
        written = os.pwrite(self._fd, data, self._size)
        self._size += written
        self._touch()
        return written

    def truncate_to(self, target_size: int) -> int:
        """``FileRecords.truncateTo``: only shortens the file when ``target_size`` < the file length."""
        original = self._size
        if target_size > original or target_size < 0:
            raise KafkaStorageError(f"Attempt to truncate log segment {self._path} to {target_size} bytes failed, "
                                    f" size of this log segment is {original} bytes.")
        if target_size < self.channel_size():
            os.ftruncate(self._fd, target_size)
            self._size = target_size
            self._touch()
        return original - target_size

    def trim(self) -> None:
        """Cut a preallocated file to the bytes written (roll, close)."""
        self.truncate_to(self._size)

    def flush(self) -> None:
        if self.durable and self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        """Flush, cut a preallocated tail and close (``FileRecords.close``); a read-only view
        (``mutable=False``) only closes its descriptor: reading never changes a file."""
        if self._fd is None:
            return
        if self.mutable:
            self.flush()
            self.trim()
        os.close(self._fd)
        self._fd = None

    def close_handlers(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def closed(self) -> bool:
        return self._fd is None

    def rename_to(self, new_path: str | os.PathLike) -> None:
        new_path = Path(new_path)
        try:
            os.replace(self._path, new_path)
        finally:
            self._path = new_path

    def delete_if_exists(self) -> bool:
        self.close_handlers()
        try:
            os.unlink(self._path)
            return True
        except FileNotFoundError:
            return False

    # --- shallow iteration ----------------------------------------------------------------------
    def batches_from(self, start: int = 0, end: int | None = None) -> Iterator[FileBatch]:
        """``FileLogInputStream``: whole batches from ``start`` (which must be a batch boundary), found by
        the one batch walker under its FILE rules, reading this file through a
        :class:`~kafkafmt.records.walker.PreadSource`."""
        end = self._size if end is None else end
        if start < 0:  # e.g. from a corrupt index; FileChannel.read's check
            raise IllegalArgumentError("Negative position", position=start)
        for span in BatchWalker(PreadSource(self._fd), start, end, rules=FILE, file=str(self._path)):
            yield FileBatch(self, span)

    def batches(self) -> Iterator[FileBatch]:
        return self.batches_from(0)

    def search_for_offset_with_size(self, target_offset: int, starting_position: int) -> LogOffsetPosition | None:
        """The first batch (from ``starting_position``) whose last offset >= ``target_offset``."""
        for b in self.batches_from(starting_position):
            last = b.last_offset
            if last >= target_offset:
                return LogOffsetPosition(last, b.position, b.size_in_bytes)
        return None

    def search_for_timestamp(self, target_timestamp: int, starting_position: int,
                             starting_offset: int) -> TimestampAndOffset | None:
        """``FileRecords.searchForTimestamp``: the first record with ts >= target and offset >= starting_offset.

        Batches whose maxTimestamp < target are skipped without decoding their records.
        """
        for b in self.batches_from(starting_position):
            if b.max_timestamp >= target_timestamp:
                for rec in b.records():
                    if rec.timestamp >= target_timestamp and rec.offset >= starting_offset:
                        return TimestampAndOffset(rec.timestamp, rec.offset, _leader_epoch(b.partition_leader_epoch))
        return None

    def largest_timestamp_after(self, starting_position: int) -> TimestampAndOffset:
        """``FileRecords.largestTimestampAfter``: (max batch ts, last offset of that batch, its epoch)."""
        max_ts, shallow, epoch = NO_TIMESTAMP, -1, NO_PARTITION_LEADER_EPOCH
        for b in self.batches_from(starting_position):
            ts = b.max_timestamp
            if ts > max_ts:
                max_ts, shallow, epoch = ts, b.last_offset, b.partition_leader_epoch
        return TimestampAndOffset(max_ts, shallow, _leader_epoch(epoch))

    def __repr__(self) -> str:
        return f"FileRecords(size={self._size}, file={self._path}, start=0, end={self._size})"
