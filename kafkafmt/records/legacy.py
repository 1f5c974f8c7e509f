"""Message formats v0 and v1 (``LegacyRecord``, ``AbstractLegacyRecordBatch``).

A log entry is ``offset:int64 size:int32`` followed by one message (layouts
:data:`~kafkafmt.layout.LEGACY_V0` / :data:`~kafkafmt.layout.LEGACY_V1`).  A compressed message
(codec != none, null key) is a *wrapper* whose value is the compressed bytes of an inner message
set.  Rules, from ``AbstractLegacyRecordBatch.DeepRecordsIterator`` and KIP-31/KIP-32:

* v0 inner offsets are absolute; v1 inner offsets are relative (0..n-1) and the wrapper's offset
  is the absolute offset of the LAST inner message; a v1 wrapper offset of 0 means "take the inner
  offsets as they are" (KAFKA-5365, librdkafka).
* a v1 inner message's timestamp is its own, unless the wrapper says LogAppendTime, in which case
  it is the wrapper's; its timestamp type is always the wrapper's.
"""
from __future__ import annotations

from typing import Iterator

from .. import compression as _compression
from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    LEGACY_COMPRESSION_CODEC_MASK,
    LEGACY_RECORD_OVERHEAD_V0,
    LEGACY_TIMESTAMP_TYPE_MASK,
    LOG_OVERHEAD,
    NO_TIMESTAMP,
    CompressionType,
    TimestampType,
)
from ..crc import crc32
from ..errors import (
    CorruptRecordError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaFmtError,
    UnsupportedCompressionError,
)
from ..layout import LEGACY_V0, LEGACY_V1, LEGACY_VALUE_LENGTH
from ..limits import check_record_count, current_limits
from ..varint import wrap8, wrap64
from .batch import RecordBatch
from .record import Record
from .walker import INNER, BatchWalker

_LAYOUT = {0: LEGACY_V0, 1: LEGACY_V1}
_MAGIC_FIELD = LEGACY_V0.offset_of("magic")  # 16: CRC coverage starts here


def message_checksum(buf, position: int, end: int) -> int:
    """``LegacyRecord.computeChecksum``: CRC32 (IEEE) of the entry at ``position`` from its magic byte to ``end``."""
    return crc32(memoryview(buf)[position + _MAGIC_FIELD:end])


def record_overhead(magic: int) -> int:
    """``LegacyRecord.recordOverhead``: 14 for v0, 22 for v1."""
    return _LAYOUT[magic].size - LOG_OVERHEAD + LEGACY_VALUE_LENGTH.size


def codec_of(attributes: int) -> CompressionType:
    """The codec in a legacy attributes byte; ids 5-7 are an error as in ``CompressionType.forId``."""
    cid = attributes & LEGACY_COMPRESSION_CODEC_MASK
    try:
        return CompressionType(cid)
    except ValueError:
        raise UnsupportedCompressionError(f"Unknown compression type id: {cid}") from None


def timestamp_type_of(magic: int, attributes: int) -> TimestampType:
    """``LegacyRecord.timestampType``: v0 has none; v1 reads bit 3."""
    if magic == 0:
        return TimestampType.NO_TIMESTAMP_TYPE
    return TimestampType.LOG_APPEND_TIME if attributes & LEGACY_TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME


def legacy_attributes(magic: int, codec: CompressionType, timestamp_type: TimestampType) -> int:
    """``LegacyRecord.computeAttributes``: codec bits, plus bit 3 for LogAppendTime on v1."""
    attrs = int(codec) & LEGACY_COMPRESSION_CODEC_MASK
    if magic > 0 and timestamp_type == TimestampType.LOG_APPEND_TIME:
        attrs |= LEGACY_TIMESTAMP_TYPE_MASK
    return attrs


# ------------------------------------------------------------------------------------------------
# encoding
def encode_legacy_entry(offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None,
                        value: bytes | None, *, crc: int | None = None) -> bytes:
    """One log entry (``offset``, ``size``, message) with the CRC computed (or ``crc`` verbatim).

    ``LegacyRecord.write``: a null key/value is written with length -1; v0 has no timestamp field.
    """
    if magic not in (0, 1):
        raise IllegalArgumentError(f"Invalid magic value {magic}")
    layout = _LAYOUT[magic]
    klen = -1 if key is None else len(key)
    vlen = -1 if value is None else len(value)
    size = record_overhead(magic) + max(klen, 0) + max(vlen, 0)
    buf = bytearray(LOG_OVERHEAD + size)
    # the layouts' fields in order (offset, size, crc, magic, attributes, [timestamp,] keyLength)
    if magic == 1:
        layout.struct.pack_into(buf, 0, offset, size, 0, magic, wrap8(attributes), timestamp, klen)
    else:
        layout.struct.pack_into(buf, 0, offset, size, 0, magic, wrap8(attributes), klen)
    pos = layout.size
    if key is not None:
        buf[pos:pos + klen] = key
        pos += klen
    LEGACY_VALUE_LENGTH.pack_into(buf, pos, vlen)
    pos += LEGACY_VALUE_LENGTH.size
    if value is not None:
        buf[pos:pos + vlen] = value
    if crc is None:
        crc = message_checksum(buf, 0, len(buf))
    layout.put(buf, 0, "crc", crc)
    return bytes(buf)


# ------------------------------------------------------------------------------------------------
# decoding
def _inner_spans(data, wrapper_position: int, lenient: bool):
    """(position, span) of each whole inner entry (``DataLogInputStream``); errors point at the wrapper."""
    walk = BatchWalker(data, rules=INNER)
    spans = iter(walk)
    while True:
        pos = walk.position
        try:
            span = next(spans, None)
        except CorruptRecordError as e:  # Kafka's own message; kafkafmt's view says which inner entry
            raise CorruptRecordError(e.reason if lenient else
                                     f"{e.reason} (inner message at decompressed byte {pos} of the wrapper)",
                                     position=wrapper_position) from None
        if span is None:
            return
        yield pos, span


def _count_inner_entries(data) -> int:
    """How many whole inner entries the walk finds, counting no further than ``max_records_per_batch + 1``
    (a cheap pass before any entry is parsed; an error ends the count, the parsing pass reports it)."""
    count, stop = 0, current_limits().max_records_per_batch + 1
    try:
        for _ in BatchWalker(data, rules=INNER):
            count += 1
            if count >= stop:
                break
    except CorruptRecordError:
        pass
    return count


class LegacyMessage:
    """A parsed v0/v1 log entry (shallow: key and value are views).

    Strict (the default, ``LegacyRecordBatch``): the magic byte must be 0 or 1 and picks the layout;
    every inconsistency raises CorruptRecordError saying where.  ``lenient=True`` reads as Kafka's
    ``LegacyRecord`` does for an inner message of a wrapper: any magic byte is accepted (0 reads the
    v0 layout, anything else the v1 layout), so that LogValidator's "magic does not match" record
    error is reached as in Kafka; errors carry only a bare reason for the caller to place.
    ``layout_magic`` (0 or 1) forces a layout whatever the magic byte says: an old client parsing a
    newer entry with its own layout (KIP-31).
    """

    __slots__ = ("buf", "position", "offset", "size", "crc", "magic", "attributes", "timestamp",
                 "_key", "_value", "end", "_lenient")

    def __init__(self, buf, position: int, end: int | None = None, *, lenient: bool = False,
                 layout_magic: int | None = None):
        """Parse the entry at ``position``; ``end`` bounds the readable buffer."""
        end = len(buf) if end is None else end
        self.buf = buf
        self.position = position
        self._lenient = lenient = lenient or layout_magic is not None
        if end - position < LOG_OVERHEAD:
            raise CorruptRecordError("message truncated inside its offset/size header", position=position)
        self.offset, self.size = LEGACY_V0.get(buf, position, "offset"), LEGACY_V0.get(buf, position, "size")
        self.end = position + LOG_OVERHEAD + self.size
        if self.size < LEGACY_RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                f"Record size {self.size} is less than the minimum record overhead ({LEGACY_RECORD_OVERHEAD_V0})",
                position=position)
        if self.end > end:
            raise CorruptRecordError(f"message of size {self.size} is truncated: only {end - position - LOG_OVERHEAD}"
                                     " bytes follow its header", position=position)
        self.magic = magic = wrap8(buf[position + _MAGIC_FIELD])
        if layout_magic is not None:
            layout = _LAYOUT[layout_magic]
        elif lenient:
            layout = LEGACY_V0 if magic == 0 else LEGACY_V1
        else:
            if magic not in (0, 1):
                raise CorruptRecordError(f"Invalid magic found in record: {magic}", position=position + _MAGIC_FIELD)
            layout = _LAYOUT[magic]
            if layout.size + LEGACY_VALUE_LENGTH.size > LOG_OVERHEAD + self.size:
                raise CorruptRecordError(f"Record is corrupt (message of size {self.size} is smaller than the "
                                         f"v{magic} header)", position=position)
        if position + layout.size > self.end:
            raise CorruptRecordError("the message is too short for its header", position=position)
        fields = layout.unpack_from(buf, position)
        self.crc = fields[2]
        self.attributes = fields[4] & 0xFF
        self.timestamp = fields[5] if layout is LEGACY_V1 else NO_TIMESTAMP
        pos = position + layout.size
        self._key, pos = self._slice(pos, fields[-1], "key")
        if pos + LEGACY_VALUE_LENGTH.size > self.end:
            raise CorruptRecordError("the message is too short for its header" if lenient else
                                     "Record is corrupt (value length runs past the message end)", position=pos)
        (vlen,) = LEGACY_VALUE_LENGTH.unpack_from(buf, pos)
        pos += LEGACY_VALUE_LENGTH.size
        self._value, pos = self._slice(pos, vlen, "value")

    def _slice(self, pos: int, length: int, what: str):
        """``(start, length)`` of a length-prefixed field (None if null) and the position after it: views
        are made only when asked for, so the inner messages of a large wrapper stay small."""
        if length < 0:  # Utils.sizeDelimited: any negative length is null
            return None, pos
        if pos + length > self.end:
            raise CorruptRecordError(f"a length of {length} runs past the message end" if self._lenient else
                                     f"Record is corrupt ({what} length {length} runs past the message end)",
                                     position=pos)
        return (pos, length), pos + length

    def _view(self, span):
        return None if span is None else memoryview(self.buf)[span[0]:span[0] + span[1]]

    @property
    def key(self) -> memoryview | None:
        return self._view(self._key)

    @property
    def value(self) -> memoryview | None:
        return self._view(self._value)

    @property
    def codec(self) -> CompressionType:
        return codec_of(self.attributes)

    @property
    def timestamp_type(self) -> TimestampType:
        return timestamp_type_of(self.magic, self.attributes)

    def compute_checksum(self) -> int:
        return message_checksum(self.buf, self.position, self.end)

    def is_valid(self) -> bool:
        return self.size >= LEGACY_RECORD_OVERHEAD_V0 and self.crc == self.compute_checksum()

    def ensure_valid(self) -> None:
        computed = self.compute_checksum()
        if computed != self.crc:
            raise CorruptRecordError(f"Record is corrupt (stored crc = {self.crc}, computed crc = {computed})",
                                     position=self.position)

    def to_record(self, offset: int, timestamp: int, ts_type: TimestampType, position: int | None) -> Record:
        key, value = self._key, self._value
        return Record(offset=offset, timestamp=timestamp, timestamp_type=ts_type,
                      key=None if key is None else bytes(self.buf[key[0]:key[0] + key[1]]),
                      value=None if value is None else bytes(self.buf[value[0]:value[0] + value[1]]),
                      magic=self.magic, attributes=self.attributes, size=LOG_OVERHEAD + self.size,
                      position=position, stored_offset=self.offset,
                      stored_timestamp=self.timestamp if self.magic == 1 else None,
                      crc=self.crc, crc_valid=self.crc == self.compute_checksum())


class LegacyRecordBatch(RecordBatch):
    """A v0/v1 log entry seen as a batch (``AbstractLegacyRecordBatch``).

    Uncompressed: a batch of one message (``base_offset == last_offset == offset``).
    Compressed: the wrapper; ``last_offset`` is the wrapper offset, ``base_offset`` the first
    inner message's absolute offset (decompresses, as Kafka's ``baseOffset()`` does).
    """

    def __init__(self, buf, position: int, end: int | None = None):
        self.message = LegacyMessage(buf, position, end)
        super().__init__(buf, position, LOG_OVERHEAD + self.message.size)
        self.magic = self.message.magic
        self.attributes = self.message.attributes
        self.last_offset = self.message.offset
        self.checksum = self.message.crc
        self._base_offset: int | None = None

    @property
    def compression(self) -> CompressionType:
        return self.message.codec

    @property
    def timestamp_type(self) -> TimestampType:
        return self.message.timestamp_type

    @property
    def max_timestamp(self) -> int:
        return self.message.timestamp

    @property
    def base_offset(self) -> int:
        if self._base_offset is None:
            if self.is_compressed:
                first = next(iter(self.records()), None)
                self._base_offset = self.last_offset if first is None else first.offset
            else:
                self._base_offset = self.last_offset
        return self._base_offset

    def compute_checksum(self) -> int:
        return self.message.compute_checksum()

    def is_valid(self) -> bool:
        return self.message.is_valid()

    def ensure_valid(self) -> None:
        self.message.ensure_valid()

    def records(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[Record]:
        m = self.message
        if not self.is_compressed:
            yield m.to_record(m.offset, m.timestamp, m.timestamp_type, self.position)
            return
        yield from self._deep_records(max_decompressed_bytes)

    def inner_messages(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                       lenient: bool = False) -> list[LegacyMessage]:
        """Decompress a wrapper and parse its inner entries as stored (``DeepRecordsIterator``'s constructor).

        The inner set is walked by ``DataLogInputStream`` rules (:data:`~kafkafmt.records.walker.INNER`):
        a partial inner entry ends the set.  ``lenient`` reads each inner message as Kafka's
        ``LegacyRecord`` does (any magic; see :class:`LegacyMessage`) and keeps Kafka's own messages,
        as LogValidator needs; errors point at the wrapper and say which inner message failed.
        """
        data = self.decompressed_value(max_decompressed_bytes=max_decompressed_bytes)
        inner: list[LegacyMessage] = []
        for pos, span in _inner_spans(data, self.position, lenient):
            try:
                inner.append(LegacyMessage(data, span.position, span.end, lenient=lenient))
            except CorruptRecordError as e:
                where = f"inner message at decompressed byte {pos} of the wrapper"
                raise CorruptRecordError(f"Record is corrupt ({e.reason}; {where})" if lenient else
                                         f"{e.reason} ({where})", position=self.position) from None
        if not inner:
            raise InvalidRecordError("Found invalid compressed record set with no inner records",
                                     position=self.position)
        return inner

    def decompressed_value(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                           ) -> bytes | bytearray:
        """A wrapper's value, decompressed: its inner message set (``DeepRecordsIterator``'s checks first).

        A set of more inner entries than ``max_records_per_batch`` is refused (kafkafmt.limits).
        """
        m = self.message
        if m.magic not in (0, 1):  # pragma: no cover - only magic 0/1 entries become LegacyRecordBatch
            raise InvalidRecordError(f"Invalid wrapper magic found in legacy deep record iterator {m.magic}",
                                     position=self.position)
        codec = m.codec
        if codec == CompressionType.ZSTD:
            # Kafka's message prints the magic here, not the codec.
            raise InvalidRecordError(f"Invalid wrapper compressionType found in legacy deep record iterator {m.magic}",
                                     position=self.position)
        if m.value is None:
            raise InvalidRecordError(f"Found invalid compressed record set with null value (magic = {m.magic})",
                                     position=self.position)
        value_pos = self.end - len(m.value)
        try:
            data = _compression.decompress_buffer(codec, m.value, magic=m.magic, max_bytes=max_decompressed_bytes)
        except KafkaFmtError as e:
            raise e.at(value_pos)
        if len(data) // (LOG_OVERHEAD + LEGACY_RECORD_OVERHEAD_V0) > current_limits().max_records_per_batch:
            # only then can there be too many (every whole entry is at least that long): the count walks
            # the inner entries in Python, which cost 3x the whole columnar decode of a v1 gzip set
            check_record_count(_count_inner_entries(data), position=self.position, what="inner messages")
        return data

    def inner_offsets_base(self, inner: list[LegacyMessage]) -> int | None:
        """What to add to each inner offset: None for v0 (absolute), else ``wrapper - lastInner`` (KIP-31).

        A v1 wrapper offset of 0 means "take the inner offsets as they are" (KAFKA-5365).  Add it
        with :meth:`inner_offset` (Java long arithmetic).
        """
        m = self.message
        if m.magic != 1:
            return None
        if m.offset == 0:
            return 0
        last_inner = inner[-1].offset
        if m.offset < last_inner:
            raise InvalidRecordError(
                "Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                f"'{m.offset}' is less than the last inner message offset '{last_inner}' "
                "and it is not zero.", position=self.position)
        return wrap64(m.offset - last_inner)

    @staticmethod
    def inner_offset(base: int | None, im: LegacyMessage) -> int:
        """An inner message's absolute offset: ``base + inner`` as a Java long (v0: the inner offset)."""
        return im.offset if base is None else wrap64(base + im.offset)

    def inner_timestamp(self, im: LegacyMessage) -> tuple[int, TimestampType]:
        """An inner message's (timestamp, type): a v1 inner takes the wrapper's type, and its timestamp
        when the wrapper is LogAppendTime; v0 has none; any other magic (lenient) keeps its own."""
        m = self.message
        if im.magic == 1:
            wrapper_type = m.timestamp_type
            return (m.timestamp if wrapper_type == TimestampType.LOG_APPEND_TIME else im.timestamp), wrapper_type
        if im.magic == 0:
            return NO_TIMESTAMP, TimestampType.NO_TIMESTAMP_TYPE
        return im.timestamp, im.timestamp_type

    def _deep_records(self, max_decompressed_bytes: int) -> Iterator[Record]:
        inner = self.inner_messages(max_decompressed_bytes=max_decompressed_bytes)
        base = self.inner_offsets_base(inner)
        for im in inner:
            offset = self.inner_offset(base, im)
            ts, ts_type = self.inner_timestamp(im)
            if im.attributes & LEGACY_COMPRESSION_CODEC_MASK:
                raise InvalidRecordError("Inner messages must not be compressed", position=self.position,
                                         offset=offset)
            yield im.to_record(offset, ts, ts_type, None)
