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

from typing import Iterator

from ..constants import DEFAULT_MAX_DECOMPRESSED_BYTES
from .batch import RecordBatch
from .default import DefaultRecordBatch
from .legacy import LegacyRecordBatch
from .record import Record
from .walker import FILE, MEMORY, BatchSpan, BatchWalker, Trailing, magic_at  # noqa: F401 (Trailing re-exported)


def read_batch(buf, position: int, end: int | None = None, *, file_rules: bool = False) -> RecordBatch:
    """The batch at ``position`` (magic 0/1 → LegacyRecordBatch, 2 → DefaultRecordBatch).

    With ``file_rules`` (``FileLogInputStream``), any magic above 2 is read as a v2 batch, as
    Kafka's file reader does; otherwise it is corrupt (``ByteBufferLogInputStream``).
    """
    end = len(buf) if end is None else end
    return batch_view(buf, position, end, magic_at(buf, position, end, rules=FILE if file_rules else MEMORY))


def batch_view(buf, position: int, end: int, magic: int) -> RecordBatch:
    """The batch view for an entry whose magic is known (below 2: legacy; else v2)."""
    if magic < 2:
        return LegacyRecordBatch(buf, position, end)
    return DefaultRecordBatch(buf, position, end)


def span_batch(buf, span: BatchSpan, base: int = 0) -> RecordBatch:
    """The batch view of a :class:`~kafkafmt.records.walker.BatchSpan` found in ``buf``."""
    return batch_view(buf, span.position - base, span.end - base, span.magic)


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
        walk = BatchWalker(self.buf, self.start, self.end, rules=MEMORY, strict=self.strict,
                           max_message_size=self.max_message_size)
        self._trailing = None
        try:
            for span in walk:
                yield span_batch(self.buf, span)
        finally:
            if walk.stop is not None or walk.position >= self.end:  # the walk ran to its end
                self._trailing = walk.stop
                self._scanned = True

    def records(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[Record]:
        """Yield every record of every batch (deep iteration)."""
        for batch in self.batches():
            yield from batch.records(max_decompressed_bytes=max_decompressed_bytes)
