"""Records as LogValidator and RecordsUtil see them, with Kafka's ``toString`` and per-record hooks.

Kafka's validator works on ``org.apache.kafka.common.record.Record`` objects: a ``DefaultRecord``
(v2), a ``PartialDefaultRecord`` (v2 read by ``skipKeyValueIterator``: key and value are skipped,
asking for them throws ``UnsupportedOperationException("key is skipped in PartialDefaultRecord")``)
or a legacy entry (``AbstractLegacyRecordBatch``: an uncompressed v0/v1 message, or an inner message
of a wrapper as ``DeepRecordsIterator`` yields it).  :class:`BrokerRecord` carries what the broker
looks at (offset, timestamp, magic, compression attribute, size, inner CRC) plus the exact
``toString`` Kafka prints inside error messages.

:func:`iter_batch_records` reproduces the iteration order and the moment each structural error is
raised: a wrapper is decompressed and parsed completely before its first record is returned, and
"Inner messages must not be compressed" is raised when that inner message is reached
(``AbstractLegacyRecordBatch.DeepRecordsIterator``).
"""
from __future__ import annotations

from typing import Iterator

from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    LEGACY_COMPRESSION_CODEC_MASK,
    LOG_OVERHEAD,
    CompressionType,
    TimestampType,
)
from ..errors import CorruptRecordError, InvalidRecordError
from ..records.batch import RecordBatch
from ..records.default import PartialRecord
from ..varint import wrap8, wrap64
from .inplace import UnsupportedOperationError


class BrokerRecord:
    """One record as the broker's validator sees it."""

    __slots__ = ("kind", "offset", "timestamp", "key", "value", "headers", "magic", "attributes",
                 "size_in_bytes", "message", "timestamp_type", "compressed", "key_size", "value_size")

    def __init__(self, kind: str, offset: int, timestamp: int, key, value, headers=(), *, magic: int = 2,
                 attributes: int = 0, size_in_bytes: int = 0, message=None,
                 timestamp_type: TimestampType = TimestampType.CREATE_TIME, compressed: bool = False,
                 key_size: int | None = None, value_size: int | None = None):
        self.kind = kind  # "default" | "partial" | "legacy"
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = headers
        self.magic = magic
        self.attributes = attributes
        self.size_in_bytes = size_in_bytes
        self.message = message  # the LegacyMessage of a legacy record (an inner one read leniently)
        self.timestamp_type = timestamp_type
        self.compressed = compressed
        #: lengths as stored (-1 = null); a partial record knows only these
        self.key_size = (-1 if key is None else len(key)) if key_size is None else key_size
        self.value_size = (-1 if value is None else len(value)) if value_size is None else value_size

    # --- Record interface ----------------------------------------------------------------------
    def has_magic(self, magic: int) -> bool:
        """``Record.hasMagic``: a v2 record matches any magic ≥ 2; a legacy one only its own."""
        if self.kind == "legacy":
            return self.magic == magic
        return magic >= 2

    @property
    def has_key(self) -> bool:
        return self.key_size >= 0

    @property
    def is_compressed(self) -> bool:
        """``Record.isCompressed``: always false for v2 records; the codec bits of a legacy message."""
        return self.compressed

    def key_for_append(self):
        if self.kind == "partial":
            raise UnsupportedOperationError("key is skipped in PartialDefaultRecord")
        return self.key

    def value_for_append(self):
        if self.kind == "partial":
            raise UnsupportedOperationError("value is skipped in PartialDefaultRecord")
        return self.value

    def headers_for_append(self):
        if self.kind == "partial":
            raise UnsupportedOperationError("headers is skipped in PartialDefaultRecord")
        return self.headers

    def ensure_valid(self) -> None:
        """``LegacyRecord.ensureValid`` of an inner message (v2 records have no record CRC)."""
        m = self.message
        if m is None:
            return
        computed = m.compute_checksum()
        if computed != m.crc:
            raise CorruptRecordError(f"Record is corrupt (stored crc = {m.crc}, computed crc = {computed})",
                                     offset=self.offset)

    def __str__(self) -> str:
        """Kafka's ``toString`` (DefaultRecord / PartialDefaultRecord / LegacyRecordBatch)."""
        if self.kind == "default":
            return (f"DefaultRecord(offset={self.offset}, timestamp={self.timestamp}, "
                    f"key={0 if self.key is None else len(self.key)} bytes, "
                    f"value={0 if self.value is None else len(self.value)} bytes)")
        if self.kind == "partial":
            return (f"PartialDefaultRecord(offset={self.offset}, timestamp={self.timestamp}, "
                    f"key={self.key_size} bytes, value={self.value_size} bytes)")
        m = self.message
        cid = self.attributes & LEGACY_COMPRESSION_CODEC_MASK
        codec = CompressionType(cid).kafka_name if cid <= CompressionType.ZSTD else "?"
        k = 0 if self.key is None else len(self.key)
        v = 0 if self.value is None else len(self.value)
        crc = m.crc if m is not None else 0
        if self.magic > 0:
            inner = (f"Record(magic={self.magic}, attributes={wrap8(self.attributes)}, compression={codec}, crc={crc}, "
                     f"{self.timestamp_type.kafka_name}={self.timestamp}, key={k} bytes, value={v} bytes)")
        else:
            inner = (f"Record(magic={self.magic}, attributes={wrap8(self.attributes)}, compression={codec}, crc={crc}, "
                     f"key={k} bytes, value={v} bytes)")
        return f"LegacyRecordBatch(offset={self.offset}, {inner})"

    __repr__ = __str__


def _default(r) -> BrokerRecord:
    return BrokerRecord("default", r.offset, r.timestamp, r.key, r.value, r.headers, magic=2, attributes=r.attributes,
                        size_in_bytes=r.size, timestamp_type=r.timestamp_type)


def _legacy(m, offset: int, timestamp: int, ts_type: TimestampType) -> BrokerRecord:
    return BrokerRecord("legacy", offset, timestamp, None if m.key is None else bytes(m.key),
                        None if m.value is None else bytes(m.value), (), magic=m.magic, attributes=m.attributes,
                        size_in_bytes=LOG_OVERHEAD + m.size, message=m, timestamp_type=ts_type,
                        compressed=(m.attributes & LEGACY_COMPRESSION_CODEC_MASK) != 0)


def iter_batch_records(batch: RecordBatch, *, skip_key_value: bool = False,
                       max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                       legacy_inner_offsets_base: str = "wrapper 0 or refused") -> Iterator[BrokerRecord]:
    """Iterate ``batch`` as Kafka's batch iterators do (``streamingIterator`` / ``skipKeyValueIterator``);
    a compressed v1 wrapper's inner offsets as row ``produce.legacy_inner_offsets_base``'s value says."""
    if batch.magic >= 2:
        if skip_key_value:  # compressed: PartialDefaultRecords; uncompressed: full records, as in Kafka
            for r in batch.skip_key_value_records(max_decompressed_bytes=max_decompressed_bytes):
                if isinstance(r, PartialRecord):
                    yield BrokerRecord("partial", r.offset, r.timestamp, None, None, magic=2, attributes=r.attributes,
                                       size_in_bytes=r.size, timestamp_type=r.timestamp_type,
                                       key_size=r.key_size, value_size=r.value_size)
                else:
                    yield _default(r)
            return
        for r in batch.records(max_decompressed_bytes=max_decompressed_bytes):
            yield _default(r)
        return
    m = batch.message
    if not batch.is_compressed:
        yield _legacy(m, m.offset, m.timestamp, m.timestamp_type)
        return
    # DeepRecordsIterator: everything decompressed and parsed first (LegacyRecord: any inner magic)
    inner = batch.inner_messages(max_decompressed_bytes=max_decompressed_bytes, lenient=True)
    base = _inner_offsets_base(batch, inner, legacy_inner_offsets_base)
    for im in inner:
        offset = batch.inner_offset(base, im)
        ts, ts_type = batch.inner_timestamp(im)
        if im.attributes & LEGACY_COMPRESSION_CODEC_MASK:
            raise InvalidRecordError("Inner messages must not be compressed", position=batch.position, offset=offset)
        yield _legacy(im, offset, ts, ts_type)


def _inner_offsets_base(batch, inner, rule: str) -> int | None:
    """What a v1 wrapper adds to its inner offsets (row ``produce.legacy_inner_offsets_base``): from 0.11
    :meth:`~kafkafmt.records.legacy.LegacyRecordBatch.inner_offsets_base` (KAFKA-5365); before, wrapper offset
    - last inner offset, kept only when not negative from 0.10.2 (``RecordsIterator``), always before it
    (``ByteBufferMessageSet``'s deep iterator, Java long arithmetic)."""
    if rule == "wrapper 0 or refused" or batch.magic != 1:
        return batch.inner_offsets_base(inner)
    base = wrap64(batch.message.offset - inner[-1].offset)
    return 0 if rule == "not negative" and base < 0 else base
