"""The offset index and the time index (``AbstractIndex``, ``OffsetIndex``, ``TimeIndex``).

Kafka maps an index file into memory and reads and writes entries in the mapping.  Here the
entry logic works on a ``bytearray`` that holds the whole index "file" (sans I/O); when the index
is backed by a file, every write is also written in place to the file at the same position, and
every length change is applied to the file (the I/O edge).  An index created with ``path=None``
lives only in memory (``data=`` gives it existing content, as if it were an existing file).

Rules (kafka-rules §6.1-§6.4; ``storage/.../log/AbstractIndex.java``, ``OffsetIndex.java``,
``TimeIndex.java``):

* entries: ``.index`` = int32 relativeOffset + int32 position (:data:`~kafkafmt.layout.OFFSET_INDEX_ENTRY`),
  ``.timeindex`` = int64 timestamp + int32 relativeOffset (:data:`~kafkafmt.layout.TIME_INDEX_ENTRY`);
* a NEW index is preallocated to ``max_index_size`` rounded down to whole entries (zero-filled) and
  has 0 entries; an EXISTING index has ``len // entry_size`` entries -- zero-filled slots count;
* ``trim_to_valid_size`` shrinks the file to its entries (close, roll, recovery); ``resize`` grows
  or shrinks it (truncation, the active segment after load); ``reset`` = 0 entries + resize to max;
* lookups find the largest entry whose key is <= the target (the "warm section" of the last
  8192 bytes is searched first, exactly as Kafka does, which matters only for unsorted content);
* the offset index is full at ``max_entries`` entries, the time index at ``max_entries - 1``
  (its last slot is kept for the entry written on roll/close);
* Kafka writes index entries in place and never checksums them; so does this module.  A torn
  index is repaired by segment recovery, not by the index.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..constants import INT32_MAX, NO_TIMESTAMP
from ..errors import (
    CorruptIndexError,
    IllegalArgumentError,
    IllegalStateError,
    IndexFullError,
    IndexOffsetOverflowError,
    InvalidOffsetError,
    NoSuchFileError,
)
from ..layout import OFFSET_INDEX_ENTRY, TIME_INDEX_ENTRY
from .files import create_file_atomically

_LARGEST_LOWER_BOUND = 0
_SMALLEST_UPPER_BOUND = 1


@dataclass(frozen=True, slots=True)
class OffsetPosition:
    """An offset index entry (``OffsetPosition``): key = offset, value = position."""

    offset: int
    position: int

    @property
    def key(self) -> int:
        return self.offset

    @property
    def value(self) -> int:
        return self.position


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    """A time index entry (``TimestampOffset``): key = timestamp, value = offset."""

    timestamp: int
    offset: int

    @property
    def key(self) -> int:
        return self.timestamp

    @property
    def value(self) -> int:
        return self.offset


def _round_down(number: int, factor: int) -> int:
    """``AbstractIndex.roundDownToExactMultiple`` (Java int division truncates toward zero)."""
    q = abs(number) // factor
    return factor * (q if number >= 0 else -q)


class AbstractIndex:
    """Entry-format-agnostic index over a ``bytearray`` (``AbstractIndex``)."""

    ENTRY_SIZE: int = 0
    KIND = "index"

    def __init__(self, path: str | os.PathLike | None, base_offset: int, max_index_size: int = -1, *,
                 writable: bool = True, data: bytes | bytearray | None = None):
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self.writable = writable
        self._path: Path | None = None if path is None else Path(path)
        self._closed = False
        self._writing_fd: int | None = None
        if self._path is not None and data is not None:
            raise TypeError("give an index either a path or in-memory data, not both")
        newly_created = False
        if self._path is not None:
            if self._path.exists():
                buf = bytearray(self._path.read_bytes())
            else:
                if max_index_size < self.ENTRY_SIZE:
                    raise IllegalArgumentError(f"Invalid max index size: {max_index_size}")
                if not writable:
                    raise NoSuchFileError(f"{self._path} does not exist")
                length = _round_down(max_index_size, self.ENTRY_SIZE)
                create_file_atomically(self._path, length)
                buf = None
                newly_created = True
        elif data is not None:
            buf = bytearray(data)
        else:
            if max_index_size < self.ENTRY_SIZE:
                raise IllegalArgumentError(f"Invalid max index size: {max_index_size}")
            length = _round_down(max_index_size, self.ENTRY_SIZE)
            buf = None
            newly_created = True
        # a new index's zeros are not made until entries reach them (Kafka maps a sparse file):
        # ``_buf`` holds the first bytes, the rest up to ``_length`` is zeros
        self._buf = bytearray() if buf is None else buf
        self._length = length if buf is None else len(buf)
        self._max_entries = self._length // self.ENTRY_SIZE
        # createMappedBuffer: a new index starts at position 0; an existing one is assumed full
        self._entries = 0 if newly_created else _round_down(len(buf), self.ENTRY_SIZE) // self.ENTRY_SIZE
        self.newly_created = newly_created

    # --- the I/O edge ---------------------------------------------------------------------------
    def _persist(self, pos: int, data: bytes) -> None:
        if self._path is None:
            return
        if self._writing_fd is not None:
            os.pwrite(self._writing_fd, data, pos)
            return
        fd = os.open(self._path, os.O_WRONLY)
        try:
            os.pwrite(fd, data, pos)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def writing(self):
        """Entries appended inside this block reach the file through one open descriptor (one ``open``
        for a run of appends, not one per entry); each is still written when appended."""
        if self._path is None or self._writing_fd is not None:
            yield self
            return
        self._writing_fd = os.open(self._path, os.O_WRONLY)
        try:
            yield self
        finally:
            fd, self._writing_fd = self._writing_fd, None
            os.close(fd)

    def _persist_length(self, length: int) -> None:
        if self._path is not None:
            os.truncate(self._path, length)

    # --- properties -----------------------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        return self._path

    file = path

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def max_entries(self) -> int:
        return self._max_entries

    @property
    def length(self) -> int:
        """The length of the index "file" in bytes (``AbstractIndex.length``)."""
        return self._length

    @property
    def size_in_bytes(self) -> int:
        """Bytes used by entries (``sizeInBytes``)."""
        return self.ENTRY_SIZE * self._entries

    @property
    def warm_entries(self) -> int:
        return 8192 // self.ENTRY_SIZE

    def is_full(self) -> bool:
        return self._entries >= self._max_entries

    def to_bytes(self) -> bytes:
        """The whole index content (what the file holds)."""
        return bytes(self._buf) + bytes(self._length - len(self._buf))

    def _room_for(self, at: int) -> None:
        """Make the zeros of ``_buf`` reach the entry at byte ``at`` (growing by doubling, up to ``_length``)."""
        need = at + self.ENTRY_SIZE
        if need > len(self._buf):
            self._buf.extend(bytes(min(self._length, max(need, 2 * len(self._buf), 4096)) - len(self._buf)))

    def _where(self) -> str:
        return str(self._path.absolute()) if self._path is not None else "<in-memory index>"

    # --- entry access ---------------------------------------------------------------------------
    def parse_entry(self, n: int):
        raise NotImplementedError

    def entry(self, n: int):
        if n >= self._entries:
            raise IllegalArgumentError(f"Attempt to fetch the {n}th entry from {self.KIND} {self._where()}, "
                                       f"which has size {self._entries}")
        return self.parse_entry(n)

    def __iter__(self) -> Iterator:
        for n in range(self._entries):
            yield self.parse_entry(n)

    def all_entries(self) -> list:
        return list(self)

    def __len__(self) -> int:
        return self._entries

    # --- offsets --------------------------------------------------------------------------------
    def _to_relative(self, offset: int) -> int | None:
        rel = offset - self.base_offset
        if rel < 0 or rel > INT32_MAX:
            return None
        return rel

    def relative_offset(self, offset: int) -> int:
        rel = self._to_relative(offset)
        if rel is None:
            raise IndexOffsetOverflowError(f"Integer overflow for offset: {offset} ({self._where()})")
        return rel

    def can_append_offset(self, offset: int) -> bool:
        return self._to_relative(offset) is not None

    # --- size changes ---------------------------------------------------------------------------
    def resize(self, new_size: int) -> bool:
        """``AbstractIndex.resize``: set the length to ``new_size`` rounded down to whole entries."""
        rounded = _round_down(new_size, self.ENTRY_SIZE)
        if self._length == rounded:
            return False
        if rounded < self._entries * self.ENTRY_SIZE:
            # MappedByteBuffer.position(p) with p > limit throws in Kafka
            raise IllegalArgumentError(f"cannot resize {self._where()} to {rounded} bytes: it holds "
                                       f"{self._entries} entries")
        if rounded < len(self._buf):
            del self._buf[rounded:]
        self._persist_length(rounded)
        self._length = rounded
        self._max_entries = rounded // self.ENTRY_SIZE
        return True

    def trim_to_valid_size(self) -> None:
        self.resize(self.ENTRY_SIZE * self._entries)

    def reset(self) -> None:
        """Remove all entries and resize to the max index size (``AbstractIndex.reset``)."""
        self.truncate()
        self.resize(self.max_index_size)

    def truncate(self) -> None:
        self.truncate_to_entries(0)

    def truncate_to_entries(self, entries: int) -> None:
        """Keep the first ``entries`` entries (``AbstractIndex.truncateToEntries``); a recovery that finds
        a crashed index's valid prefix (:mod:`kafkafmt.log.kip33`) cuts it here."""
        self._entries = entries

    def flush(self) -> None:
        if self._path is not None and self._path.exists():
            fd = os.open(self._path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def close(self) -> None:
        """``AbstractIndex.close``: trim to the valid entries, then release the file."""
        if self._closed:
            return
        self.trim_to_valid_size()
        self._closed = True

    def close_handler(self) -> None:
        self._closed = True

    def rename_to(self, new_path: str | os.PathLike) -> None:
        new_path = Path(new_path)
        try:
            if self._path is not None and self._path.exists():
                os.replace(self._path, new_path)
        finally:
            self._path = new_path

    def delete_if_exists(self) -> bool:
        self._closed = True
        if self._path is None:
            return False
        try:
            os.unlink(self._path)
            return True
        except FileNotFoundError:
            return False

    def sanity_check(self) -> None:
        raise NotImplementedError

    def truncate_to(self, offset: int) -> None:
        raise NotImplementedError

    # --- search ---------------------------------------------------------------------------------
    def _compare(self, n: int, target: int, by_value: bool) -> int:
        e = self.parse_entry(n)
        v = e.value if by_value else e.key
        return (v > target) - (v < target)

    def _slot_for(self, target: int, by_value: bool, result_type: int) -> int:
        """``AbstractIndex.indexSlotRangeFor``, including the warm-section split."""
        entries = self._entries
        if entries == 0:
            return -1
        first_hot = max(0, entries - 1 - self.warm_entries)
        if self._compare(first_hot, target, by_value) < 0:
            return self._binary_search(target, by_value, result_type, first_hot, entries - 1)
        if self._compare(0, target, by_value) > 0:
            return -1 if result_type == _LARGEST_LOWER_BOUND else 0
        return self._binary_search(target, by_value, result_type, 0, first_hot)

    def _binary_search(self, target: int, by_value: bool, result_type: int, begin: int, end: int) -> int:
        lo, hi = begin, end
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            c = self._compare(mid, target, by_value)
            if c > 0:
                hi = mid - 1
            elif c < 0:
                lo = mid
            else:
                return mid
        if result_type == _LARGEST_LOWER_BOUND:
            return lo
        return -1 if lo == self._entries - 1 else lo + 1

    def largest_lower_bound_slot_for(self, target: int, *, by_value: bool = False) -> int:
        return self._slot_for(target, by_value, _LARGEST_LOWER_BOUND)

    def smallest_upper_bound_slot_for(self, target: int, *, by_value: bool = False) -> int:
        return self._slot_for(target, by_value, _SMALLEST_UPPER_BOUND)

    def __repr__(self) -> str:
        where = self._path.name if self._path is not None else "memory"
        return (f"<{type(self).__name__} {where} base={self.base_offset} entries={self._entries}/"
                f"{self._max_entries} length={self._length}>")


class OffsetIndex(AbstractIndex):
    """Offset → position in the ``.log`` (``OffsetIndex``); 8-byte entries."""

    ENTRY_SIZE = OFFSET_INDEX_ENTRY.size
    KIND = "index"

    def __init__(self, path: str | os.PathLike | None, base_offset: int, max_index_size: int = -1, *,
                 writable: bool = True, data: bytes | bytearray | None = None):
        super().__init__(path, base_offset, max_index_size, writable=writable, data=data)
        self._last_offset = self._last_entry().offset

    def parse_entry(self, n: int) -> OffsetPosition:
        rel, pos = OFFSET_INDEX_ENTRY.unpack_from(self._buf, n * self.ENTRY_SIZE)
        return OffsetPosition(self.base_offset + rel, pos)

    def _last_entry(self) -> OffsetPosition:
        if self._entries == 0:
            return OffsetPosition(self.base_offset, 0)
        return self.parse_entry(self._entries - 1)

    @property
    def last_offset(self) -> int:
        return self._last_offset

    def sanity_check(self) -> None:
        """``OffsetIndex.sanityCheck`` (raises :class:`~kafkafmt.errors.CorruptIndexError`)."""
        if self._entries != 0 and self._last_offset < self.base_offset:
            raise CorruptIndexError(f"Corrupt index found, index file {self._where()} has non-zero size but the "
                                    f"last offset is {self._last_offset} which is less than the base offset "
                                    f"{self.base_offset}")
        if self._length % self.ENTRY_SIZE != 0:
            raise CorruptIndexError(f"Index file {self._where()} is corrupt, found {self._length} bytes which is "
                                    f"neither positive nor a multiple of {self.ENTRY_SIZE}")

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The largest entry with offset <= ``target_offset``, else ``(base_offset, 0)``."""
        slot = self.largest_lower_bound_slot_for(target_offset)
        if slot == -1:
            return OffsetPosition(self.base_offset, 0)
        return self.parse_entry(slot)

    def fetch_upper_bound_offset(self, fetch_offset: OffsetPosition, fetch_size: int) -> OffsetPosition | None:
        """The smallest entry whose position is >= ``fetch_offset.position + fetch_size`` (or None)."""
        slot = self.smallest_upper_bound_slot_for(fetch_offset.position + fetch_size, by_value=True)
        return None if slot == -1 else self.parse_entry(slot)

    def append(self, offset: int, position: int) -> None:
        """``OffsetIndex.append``: the offset must exceed the last one; the position is not checked."""
        if self.is_full():
            raise IndexFullError(f"Attempt to append to a full index (size = {self._entries}).")
        if self._entries == 0 or offset > self._last_offset:
            data = OFFSET_INDEX_ENTRY.pack(self.relative_offset(offset), position)
            at = self._entries * self.ENTRY_SIZE
            self._room_for(at)
            self._buf[at:at + self.ENTRY_SIZE] = data
            self._persist(at, data)
            self._entries += 1
            self._last_offset = offset
        else:
            raise InvalidOffsetError(f"Attempt to append an offset {offset} to position {self._entries} no larger "
                                     f"than the last offset appended ({self._last_offset}) to {self._where()}")

    def truncate_to(self, offset: int) -> None:
        """Drop entries with offset >= ``offset`` (an exact hit is dropped too)."""
        slot = self.largest_lower_bound_slot_for(offset)
        if slot < 0:
            new_entries = 0
        elif OFFSET_INDEX_ENTRY.unpack_from(self._buf, slot * self.ENTRY_SIZE)[0] == offset - self.base_offset:
            new_entries = slot
        else:
            new_entries = slot + 1
        self.truncate_to_entries(new_entries)

    def truncate_to_entries(self, entries: int) -> None:
        self._entries = entries
        self._last_offset = self._last_entry().offset


class TimeIndex(AbstractIndex):
    """Timestamp → offset (``TimeIndex``); 12-byte entries.

    Entry ``(T, O)``: T is the largest timestamp seen in the segment up to and including the batch
    ending at O, so no message at an offset <= O has a timestamp > T (kafka-rules §6.4).
    """

    ENTRY_SIZE = TIME_INDEX_ENTRY.size
    KIND = "time index"

    def __init__(self, path: str | os.PathLike | None, base_offset: int, max_index_size: int = -1, *,
                 writable: bool = True, data: bytes | bytearray | None = None):
        super().__init__(path, base_offset, max_index_size, writable=writable, data=data)
        self._last_entry = self._last_entry_from_index()

    def parse_entry(self, n: int) -> TimestampOffset:
        ts, rel = TIME_INDEX_ENTRY.unpack_from(self._buf, n * self.ENTRY_SIZE)
        return TimestampOffset(ts, self.base_offset + rel)

    def _last_entry_from_index(self) -> TimestampOffset:
        if self._entries == 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.parse_entry(self._entries - 1)

    @property
    def last_entry(self) -> TimestampOffset:
        return self._last_entry

    def is_full(self) -> bool:
        """Full one slot early: the last slot is kept for the roll/close entry."""
        return self._entries >= self._max_entries - 1

    def sanity_check(self) -> None:
        """``TimeIndex.sanityCheck`` (raises :class:`~kafkafmt.errors.CorruptIndexError`)."""
        last = self._last_entry
        if self._entries != 0:
            first_ts = TIME_INDEX_ENTRY.unpack_from(self._buf, 0)[0]
            if last.timestamp < first_ts:
                raise CorruptIndexError(f"Corrupt time index found, time index file ({self._where()}) has non-zero "
                                        f"size but the last timestamp is {last.timestamp} which is less than the "
                                        f"first timestamp {first_ts}")
            if last.offset < self.base_offset:
                raise CorruptIndexError(f"Corrupt time index found, time index file ({self._where()}) has non-zero "
                                        f"size but the last offset is {last.offset} which is less than the first "
                                        f"offset {self.base_offset}")
        if self._length % self.ENTRY_SIZE != 0:
            raise CorruptIndexError(f"Time index file {self._where()} is corrupt, found {self._length} bytes which "
                                    f"is neither positive nor a multiple of {self.ENTRY_SIZE}")

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The largest entry with timestamp <= target, else ``(-1, base_offset)``."""
        slot = self.largest_lower_bound_slot_for(target_timestamp)
        if slot == -1:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.parse_entry(slot)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> bool:
        """``TimeIndex.maybeAppend``; returns whether an entry was written.

        Written only if ``timestamp`` is strictly greater than the last entry's (an empty index's
        last entry is ``(-1, base_offset)``, so -1 is never indexed).
        """
        if not skip_full_check and self.is_full():
            raise IndexFullError(f"Attempt to append to a full time index (size = {self._entries}).")
        last = self._last_entry
        if self._entries != 0 and offset < last.offset:
            raise InvalidOffsetError(f"Attempt to append an offset ({offset}) to slot {self._entries} no larger than "
                                     f"the last offset appended ({last.offset}) to {self._where()}")
        if self._entries != 0 and timestamp < last.timestamp:
            raise IllegalStateError(f"Attempt to append a timestamp ({timestamp}) to slot {self._entries} no larger "
                                    f"than the last timestamp appended ({last.timestamp}) to {self._where()}")
        if timestamp > last.timestamp:
            self._write_entry(timestamp, offset)
            return True
        return False

    def _write_entry(self, timestamp: int, offset: int) -> None:
        at = self._entries * self.ENTRY_SIZE
        if at + self.ENTRY_SIZE > self._length:
            # a java.nio.BufferOverflowException in Kafka (only reachable with skip_full_check)
            raise IndexFullError(f"Attempt to append to a full time index (size = {self._entries}).")
        self._room_for(at)
        data = TIME_INDEX_ENTRY.pack(timestamp, self.relative_offset(offset))
        self._buf[at:at + self.ENTRY_SIZE] = data
        self._persist(at, data)
        self._entries += 1
        self._last_entry = TimestampOffset(timestamp, offset)

    def resize(self, new_size: int) -> bool:
        if super().resize(new_size):
            self._last_entry = self._last_entry_from_index()
            return True
        return False

    def truncate_to(self, offset: int) -> None:
        """Drop entries with offset >= ``offset`` (searched on the offset field)."""
        slot = self.largest_lower_bound_slot_for(offset, by_value=True)
        if slot < 0:
            new_entries = 0
        elif TIME_INDEX_ENTRY.unpack_from(self._buf, slot * self.ENTRY_SIZE)[1] == offset - self.base_offset:
            new_entries = slot
        else:
            new_entries = slot + 1
        self.truncate_to_entries(new_entries)

    def truncate_to_entries(self, entries: int) -> None:
        self._entries = entries
        self._last_entry = self._last_entry_from_index()
