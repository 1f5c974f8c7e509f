"""Record sets in memory: lazy, shallow iteration over the batches in a buffer.

``MemoryRecords`` mirrors ``org.apache.kafka.common.record.MemoryRecords`` and its
``ByteBufferLogInputStream.nextBatch`` rules (kafka-rules §0): stop when fewer than 12 bytes
remain; a size below 14 is corrupt; a magic outside 0..2 is corrupt; a partial trailing batch
stops iteration.  Kafka silently ignores that trailing partial batch; kafkafmt never does so
silently: it is reported as :attr:`MemoryRecords.trailing_bytes` (and raises
:class:`~kafkafmt.errors.TruncatedRecordError` with ``strict=True``).

Works on any buffer: ``bytes``, ``bytearray``, ``memoryview`` or an ``mmap``; nothing is copied
until records are decoded.  Mixed magics in one buffer are allowed, as on a real log.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..constants import (DEFAULT_MAX_DECOMPRESSED_BYTES, HEADER_SIZE_UP_TO_MAGIC, LEGACY_RECORD_OVERHEAD_V0,
                         LOG_OVERHEAD, MAGIC_OFFSET)
from ..errors import CorruptRecordError, TruncatedRecordError
from ..layout import LOG_ENTRY
from .batch import RecordBatch
from .default import DefaultRecordBatch
from .legacy import LegacyRecordBatch
from .record import Record


@dataclass(frozen=True)
class Trailing:
    """Bytes after the last whole batch: where they start, how many, and why they are not a batch."""

    position: int
    length: int
    reason: str


def read_batch(buf, position: int, end: int | None = None, *, file_rules: bool = False) -> RecordBatch:
    """The batch at ``position`` (magic 0/1 → LegacyRecordBatch, 2 → DefaultRecordBatch).

    With ``file_rules`` (``FileLogInputStream``), any magic above 2 is read as a v2 batch, as
    Kafka's file reader does; otherwise it is corrupt (``ByteBufferLogInputStream``).
    """
    end = len(buf) if end is None else end
    if end - position < HEADER_SIZE_UP_TO_MAGIC:
        raise TruncatedRecordError(f"only {end - position} bytes remain, a batch needs at least "
                                   f"{HEADER_SIZE_UP_TO_MAGIC} to reach its magic byte", position=position)
    magic = buf[position + MAGIC_OFFSET]
    if magic > 127:
        magic -= 256
    if magic in (0, 1):
        return LegacyRecordBatch(buf, position, end)
    if magic == 2 or (file_rules and magic > 2):
        return DefaultRecordBatch(buf, position, end)
    raise CorruptRecordError(f"Invalid magic found in record: {magic}", position=position + MAGIC_OFFSET)


class MemoryRecords:
    """The batches in a buffer, read lazily.

    >>> recs = MemoryRecords(data)
    >>> for batch in recs.batches(): ...      # shallow: headers only
    >>> for record in recs.records(): ...     # deep: every record, decompressing as needed
    >>> recs.trailing_bytes                    # bytes after the last whole batch (after a full scan)
    """

    def __init__(self, buf, *, start: int = 0, end: int | None = None, strict: bool = False,
                 max_message_size: int | None = None):
        self.buf = buf
        self.start = start
        self.end = len(buf) if end is None else end
        self.strict = strict
        self.max_message_size = max_message_size
        self._trailing: Trailing | None = None
        self._scanned = False

    @classmethod
    def from_batches(cls, parts) -> "MemoryRecords":
        return cls(b"".join(bytes(p) for p in parts))

    def __len__(self) -> int:
        return self.end - self.start

    def __bytes__(self) -> bytes:
        return bytes(self.buf[self.start:self.end])

    @property
    def trailing(self) -> Trailing | None:
        """What follows the last whole batch (None if nothing); scans the buffer if not yet done."""
        if not self._scanned:
            for _ in self.batches():
                pass
        return self._trailing

    @property
    def trailing_bytes(self) -> int:
        """Bytes after the last whole batch; scans the buffer if not yet done."""
        return 0 if self.trailing is None else self.trailing.length

    @property
    def valid_bytes(self) -> int:
        return len(self) - self.trailing_bytes

    def batches(self) -> Iterator[RecordBatch]:
        """Yield each whole batch (``ByteBufferLogInputStream`` rules)."""
        buf, pos, end = self.buf, self.start, self.end
        self._trailing = None
        while True:
            remaining = end - pos
            if remaining == 0:
                break
            if remaining < LOG_OVERHEAD:
                self._trail(pos, remaining, f"{remaining} bytes, fewer than the {LOG_OVERHEAD}-byte offset/size header")
                break
            _, size = LOG_ENTRY.unpack_from(buf, pos)
            if size < LEGACY_RECORD_OVERHEAD_V0:
                raise CorruptRecordError(
                    f"Record size {size} is less than the minimum record overhead ({LEGACY_RECORD_OVERHEAD_V0})",
                    position=pos)
            if self.max_message_size is not None and size > self.max_message_size:
                raise CorruptRecordError(f"Record size {size} exceeds the largest allowable message size "
                                         f"({self.max_message_size}).", position=pos)
            if remaining < HEADER_SIZE_UP_TO_MAGIC:
                self._trail(pos, remaining, "the batch is cut before its magic byte")
                break
            magic = buf[pos + MAGIC_OFFSET]
            if magic > 2:
                raise CorruptRecordError(f"Invalid magic found in record: {magic - 256 if magic > 127 else magic}",
                                         position=pos + MAGIC_OFFSET)
            if remaining < size + LOG_OVERHEAD:
                self._trail(pos, remaining, f"a batch declares {size + LOG_OVERHEAD} bytes but only {remaining} remain")
                break
            batch = read_batch(buf, pos, pos + size + LOG_OVERHEAD)
            yield batch
            pos = batch.end
        self._scanned = True

    def _trail(self, pos: int, length: int, reason: str) -> None:
        self._trailing = Trailing(pos, length, reason)
        self._scanned = True
        if self.strict:
            raise TruncatedRecordError(f"truncated input: {reason}", position=pos)

    def records(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[Record]:
        """Yield every record of every batch (deep iteration)."""
        for batch in self.batches():
            yield from batch.records(max_decompressed_bytes=max_decompressed_bytes)
