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

import struct
from typing import Iterator

from .. import compression as _compression
from ..constants import (DEFAULT_MAX_DECOMPRESSED_BYTES, LEGACY_RECORD_OVERHEAD_V0, LOG_OVERHEAD, NO_TIMESTAMP,
                         CompressionType, TimestampType)
from ..crc import crc32
from ..errors import CorruptRecordError, InvalidRecordError, KafkaFmtError
from ..layout import LOG_ENTRY
from ..records.batch import RecordBatch
from .inplace import UnsupportedOperationError


def _s8(v: int) -> int:
    v &= 0xFF
    return v - 256 if v > 127 else v


class BrokerRecord:
    """One record as the broker's validator sees it."""

    __slots__ = ("kind", "offset", "timestamp", "key", "value", "headers", "magic", "attributes",
                 "size_in_bytes", "message", "timestamp_type", "compressed")

    def __init__(self, kind: str, offset: int, timestamp: int, key, value, headers=(), *, magic: int = 2,
                 attributes: int = 0, size_in_bytes: int = 0, message=None,
                 timestamp_type: TimestampType = TimestampType.CREATE_TIME, compressed: bool = False):
        self.kind = kind  # "default" | "partial" | "legacy"
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = headers
        self.magic = magic
        self.attributes = attributes
        self.size_in_bytes = size_in_bytes
        self.message = message  # LegacyMessage / KafkaInnerMessage for legacy records
        self.timestamp_type = timestamp_type
        self.compressed = compressed

    # --- Record interface ----------------------------------------------------------------------
    def has_magic(self, magic: int) -> bool:
        """``Record.hasMagic``: a v2 record matches any magic ≥ 2; a legacy one only its own."""
        if self.kind == "legacy":
            return self.magic == magic
        return magic >= 2

    @property
    def has_key(self) -> bool:
        return self.key is not None

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
                    f"key={-1 if self.key is None else len(self.key)} bytes, "
                    f"value={-1 if self.value is None else len(self.value)} bytes)")
        m = self.message
        codec = CompressionType(self.attributes & 0x07).kafka_name if (self.attributes & 7) <= 4 else "?"
        k = 0 if self.key is None else len(self.key)
        v = 0 if self.value is None else len(self.value)
        crc = m.crc if m is not None else 0
        if self.magic > 0:
            inner = (f"Record(magic={self.magic}, attributes={_s8(self.attributes)}, compression={codec}, crc={crc}, "
                     f"{self.timestamp_type.kafka_name}={self.timestamp}, key={k} bytes, value={v} bytes)")
        else:
            inner = (f"Record(magic={self.magic}, attributes={_s8(self.attributes)}, compression={codec}, crc={crc}, "
                     f"key={k} bytes, value={v} bytes)")
        return f"LegacyRecordBatch(offset={self.offset}, {inner})"

    __repr__ = __str__


def _legacy(m, offset: int, timestamp: int, ts_type: TimestampType) -> BrokerRecord:
    return BrokerRecord("legacy", offset, timestamp, None if m.key is None else bytes(m.key),
                        None if m.value is None else bytes(m.value), (), magic=m.magic, attributes=m.attributes,
                        size_in_bytes=LOG_OVERHEAD + m.size, message=m, timestamp_type=ts_type,
                        compressed=(m.attributes & 0x07) != 0)


class KafkaInnerMessage:
    """An inner message of a legacy wrapper read as Kafka's ``DataLogInputStream`` + ``LegacyRecord`` do.

    More lenient than :class:`kafkafmt.records.legacy.LegacyMessage` on purpose: any magic byte is
    accepted (``LegacyRecord`` reads the v0 layout for magic 0 and the v1 layout otherwise), so that
    LogValidator's "magic does not match outer magic" record error is reached as in Kafka.
    """

    __slots__ = ("buf", "position", "offset", "size", "crc", "magic", "attributes", "timestamp", "key", "value")

    def __init__(self, buf: bytes, position: int, wrapper_position: int):
        self.buf, self.position = buf, position
        self.offset, self.size = LOG_ENTRY.unpack_from(buf, position)
        end = position + LOG_OVERHEAD + self.size
        self.crc = struct.unpack_from(">I", buf, position + 12)[0]
        self.magic = _s8(buf[position + 16])
        self.attributes = buf[position + 17]
        try:
            if self.magic == 0:
                self.timestamp, at = NO_TIMESTAMP, position + 18
            else:
                self.timestamp, at = _unpack(">q", buf, position + 18, end), position + 26
            self.key, at = _sized(buf, at, end)
            self.value, at = _sized(buf, at, end)
        except ValueError as e:
            raise CorruptRecordError(f"Record is corrupt ({e}; inner message at decompressed byte {position} of the "
                                     "wrapper)", position=wrapper_position) from None

    def compute_checksum(self) -> int:
        return crc32(memoryview(self.buf)[self.position + 16:self.position + LOG_OVERHEAD + self.size])


def _unpack(fmt: str, buf, at: int, end: int):
    n = struct.calcsize(fmt)
    if at + n > end:
        raise ValueError("the message is too short for its header")
    return struct.unpack_from(fmt, buf, at)[0]


def _sized(buf, at: int, end: int):
    n = _unpack(">i", buf, at, end)
    at += 4
    if n < 0:  # Utils.sizeDelimited: any negative length is null
        return None, at
    if at + n > end:
        raise ValueError(f"a length of {n} runs past the message end")
    return bytes(buf[at:at + n]), at + n


def kafka_inner_messages(batch: RecordBatch, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES):
    """``DeepRecordsIterator``'s constructor: wrapper checks, decompress everything, read the inner entries."""
    m = batch.message
    if m.magic not in (0, 1):  # pragma: no cover - read_batch only makes legacy batches for 0/1
        raise InvalidRecordError(f"Invalid wrapper magic found in legacy deep record iterator {m.magic}")
    if m.codec == CompressionType.ZSTD:
        # (sic) Kafka's message prints the magic, not the codec
        raise InvalidRecordError(f"Invalid wrapper compressionType found in legacy deep record iterator {m.magic}",
                                 position=batch.position)
    if m.value is None:
        raise InvalidRecordError(f"Found invalid compressed record set with null value (magic = {m.magic})",
                                 position=batch.position)
    try:
        data = _compression.decompress(m.codec, m.value, magic=m.magic, max_bytes=max_decompressed_bytes)
    except KafkaFmtError as e:
        raise e.at(batch.end - len(m.value))
    inner, pos, n = [], 0, len(data)
    while n - pos >= LOG_OVERHEAD:  # DataLogInputStream.nextBatch
        _, size = LOG_ENTRY.unpack_from(data, pos)
        if size < LEGACY_RECORD_OVERHEAD_V0:
            raise CorruptRecordError(f"Record size is less than the minimum record overhead "
                                     f"({LEGACY_RECORD_OVERHEAD_V0})", position=batch.position)
        if pos + LOG_OVERHEAD + size > n:
            break  # a partial inner entry ends the set
        inner.append(KafkaInnerMessage(data, pos, batch.position))
        pos += LOG_OVERHEAD + size
    if not inner:
        raise InvalidRecordError("Found invalid compressed record set with no inner records", position=batch.position)
    return inner


def iter_batch_records(batch: RecordBatch, *, skip_key_value: bool = False,
                       max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[BrokerRecord]:
    """Iterate ``batch`` as Kafka's batch iterators do (``streamingIterator`` / ``skipKeyValueIterator``)."""
    if batch.magic >= 2:
        kind = "partial" if skip_key_value else "default"
        for r in batch.records(max_decompressed_bytes=max_decompressed_bytes):
            yield BrokerRecord(kind, r.offset, r.timestamp, r.key, r.value, r.headers, magic=2,
                               attributes=r.attributes, size_in_bytes=r.size, timestamp_type=r.timestamp_type)
        return
    m = batch.message
    if not batch.is_compressed:
        yield _legacy(m, m.offset, m.timestamp, m.timestamp_type)
        return
    # DeepRecordsIterator: everything decompressed and parsed first
    inner = kafka_inner_messages(batch, max_decompressed_bytes=max_decompressed_bytes)
    if m.magic == 1:
        if m.offset == 0:
            base = 0  # KAFKA-5365: librdkafka sends wrapper offset 0; inner offsets used as they are
        else:
            last_inner = inner[-1].offset
            if m.offset < last_inner:
                raise InvalidRecordError(
                    "Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                    f"'{m.offset}' is less than the last inner message offset '{last_inner}' and it is not zero.",
                    position=batch.position)
            base = m.offset - last_inner
    else:
        base = None
    wrapper_type = m.timestamp_type
    for im in inner:
        offset = im.offset if base is None else base + im.offset
        if im.magic == 1:  # re-wrapped with the wrapper's timestamp and type
            ts_type = wrapper_type
            ts = m.timestamp if wrapper_type == TimestampType.LOG_APPEND_TIME else im.timestamp
        elif im.magic == 0:
            ts_type, ts = TimestampType.NO_TIMESTAMP_TYPE, NO_TIMESTAMP
        else:  # any other magic: LegacyRecord reads the v1 layout and its own timestamp-type bit
            ts_type = TimestampType.LOG_APPEND_TIME if im.attributes & 0x08 else TimestampType.CREATE_TIME
            ts = im.timestamp
        if im.attributes & 0x07:
            raise InvalidRecordError("Inner messages must not be compressed", position=batch.position, offset=offset)
        yield _legacy(im, offset, ts, ts_type)
