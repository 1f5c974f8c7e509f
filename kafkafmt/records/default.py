"""Record batch v2 (``DefaultRecordBatch``, ``DefaultRecord``; KIP-98, KIP-82).

Header layout: :data:`~kafkafmt.layout.DEFAULT_BATCH` (61 bytes).  CRC32C covers attributes to
the end, so the broker rewrites ``baseOffset`` and ``partitionLeaderEpoch`` without recomputing
it.  With a codec, the whole records area after byte 61 is one compressed stream.  Records are
varint-framed (:data:`~kafkafmt.layout.DEFAULT_RECORD`); for LogAppendTime batches every record's
timestamp reads as the batch ``maxTimestamp`` (``DefaultRecordBatch.RecordIterator``).
"""
from __future__ import annotations

from typing import Iterator, Sequence

from .. import compression as _compression
from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    INT32_MAX,
    LOG_OVERHEAD,
    NO_SEQUENCE,
    RECORD_BATCH_OVERHEAD,
    V2_COMPRESSION_CODEC_MASK,
    V2_CONTROL_FLAG_MASK,
    V2_DELETE_HORIZON_FLAG_MASK,
    V2_TIMESTAMP_EXTENDED_FLAG_MASK,
    V2_TIMESTAMP_TYPE_MASK,
    V2_TRANSACTIONAL_FLAG_MASK,
    CompressionType,
    TimestampType,
)
from ..crc import crc32c
from ..errors import (
    CorruptRecordError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaFmtError,
    UnsupportedCompressionError,
)
from ..layout import DEFAULT_BATCH, DEFAULT_BATCH_CRC_START
from ..limits import check_record_count
from ..varint import decode_varint, decode_varlong, encode_varint, encode_varlong, size_of_varint, wrap16, wrap64
from .batch import RecordBatch
from .record import Header, Record, parse_control_record

_F = {name: i for i, name in enumerate(DEFAULT_BATCH.names)}


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence``: sequences wrap from INT_MAX to 0."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence``."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def batch_attributes(codec: CompressionType, timestamp_type: TimestampType, *, transactional: bool = False,
                     control: bool = False, delete_horizon: bool = False, timestamp_extended: bool = False) -> int:
    """``DefaultRecordBatch.computeAttributes`` (plus KIP-228's proposed bit 7 when asked for)."""
    if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
        raise IllegalArgumentError("Timestamp type must be provided to compute attributes for message format v2 and above")
    attrs = int(codec) & V2_COMPRESSION_CODEC_MASK
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attrs |= V2_TIMESTAMP_TYPE_MASK
    if transactional:
        attrs |= V2_TRANSACTIONAL_FLAG_MASK
    if control:
        attrs |= V2_CONTROL_FLAG_MASK
    if delete_horizon:
        attrs |= V2_DELETE_HORIZON_FLAG_MASK
    if timestamp_extended:
        attrs |= V2_TIMESTAMP_EXTENDED_FLAG_MASK
    return attrs


# ------------------------------------------------------------------------------------------------
# record encoding / decoding
def encode_headers(headers: Sequence[Header]) -> bytes:
    """``DefaultRecord.writeTo``'s tail: headersCount, then each header key and value (KIP-82)."""
    if headers is None:
        raise IllegalArgumentError("Headers cannot be null")
    body = bytearray(encode_varint(len(headers)))
    for h in headers:
        if h.key is None:
            raise IllegalArgumentError("Invalid null header key found in headers")
        kb = h.key_bytes
        body += encode_varint(len(kb))
        body += kb
        if h.value is None:
            body += encode_varint(-1)
        else:
            body += encode_varint(len(h.value))
            body += h.value
    return bytes(body)


def encode_default_record(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                          headers: Sequence[Header] = (), attributes: int = 0) -> bytes:
    """``DefaultRecord.writeTo``: length varint, then the body (see ``layout.DEFAULT_RECORD``)."""
    body = bytearray()
    body.append(attributes & 0xFF)
    body += encode_varlong(timestamp_delta)
    body += encode_varint(offset_delta)
    if key is None:
        body += encode_varint(-1)
    else:
        body += encode_varint(len(key))
        body += key
    if value is None:
        body += encode_varint(-1)
    else:
        body += encode_varint(len(value))
        body += value
    body += encode_headers(headers)
    return encode_varint(len(body)) + bytes(body)


def decode_default_record(buf, pos: int, end: int, base_offset: int, base_timestamp: int, base_sequence: int,
                          log_append_time: int | None, ts_type: TimestampType, *, control: bool = False,
                          position_base: int | None = None) -> tuple[Record, int]:
    """``DefaultRecord.readFrom``: parse one record at ``pos``; return ``(record, next_pos)``.

    ``position_base`` is the record's byte position in the input for uncompressed batches (so
    errors point at it); ``None`` for records inside a compressed stream.
    Raises InvalidRecordError with Kafka's messages for every structural error.
    """
    where = position_base if position_base is not None else None
    try:
        body_len, p = decode_varint(buf, pos, end)
    except InvalidRecordError as e:
        raise InvalidRecordError("Incorrect declared batch size, premature EOF reached", position=where) from e
    if body_len > end - p or body_len < 0:
        raise InvalidRecordError(f"Invalid record size: expected {body_len} bytes in record payload, but instead "
                                 f"the buffer has only {end - p} remaining bytes.", position=where)
    start = p
    try:
        if p >= end:
            raise InvalidRecordError("record attributes run past the end")
        attributes = buf[p]
        p += 1
        ts_delta, p = decode_varlong(buf, p, end)
        offset_delta, p = decode_varint(buf, p, end)
        klen, p = decode_varint(buf, p, end)
        key = None
        if klen >= 0:
            if p + klen > end:
                raise InvalidRecordError("key runs past the end")
            key = bytes(buf[p:p + klen])
            p += klen
        vlen, p = decode_varint(buf, p, end)
        value = None
        if vlen >= 0:
            if p + vlen > end:
                raise InvalidRecordError("value runs past the end")
            value = bytes(buf[p:p + vlen])
            p += vlen
        nheaders, p = decode_varint(buf, p, end)
        if nheaders < 0:
            raise _Direct(f"Found invalid number of record headers {nheaders}")
        if nheaders > end - p:
            raise _Direct("Found invalid number of record headers. The number of headers is larger than the "
                          "remaining size of the buffer")
        headers = []
        for _ in range(nheaders):
            hklen, p = decode_varint(buf, p, end)
            if hklen < 0:
                raise _Direct(f"Invalid negative header key size {hklen}")
            if p + hklen > end:
                raise InvalidRecordError("header key runs past the end")
            hkey = bytes(buf[p:p + hklen]).decode("utf-8", "surrogateescape")
            p += hklen
            hvlen, p = decode_varint(buf, p, end)
            hval = None
            if hvlen >= 0:
                if p + hvlen > end:
                    raise InvalidRecordError("header value runs past the end")
                hval = bytes(buf[p:p + hvlen])
                p += hvlen
            headers.append(Header(hkey, hval))
    except _Direct as e:
        raise InvalidRecordError(str(e), position=where) from None
    except InvalidRecordError as e:
        raise InvalidRecordError(f"Found invalid record structure ({e.reason})", position=where) from None
    if p - start != body_len:
        raise InvalidRecordError(f"Invalid record size: expected to read {body_len} bytes in record payload, "
                                 f"but instead read {p - start}", position=where)
    offset = wrap64(base_offset + offset_delta)
    timestamp = log_append_time if log_append_time is not None else wrap64(base_timestamp + ts_delta)
    sequence = increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else NO_SEQUENCE
    control_rec = parse_control_record(key, value, position=where) if control else None
    rec = Record(offset=offset, timestamp=timestamp, timestamp_type=ts_type, key=key, value=value,
                 headers=tuple(headers), sequence=sequence, magic=2, attributes=attributes,
                 size=p - pos, position=where, timestamp_delta=ts_delta, offset_delta=offset_delta,
                 control=control_rec)
    return rec, p


class _Direct(Exception):
    """An error Kafka raises with its own message (not wrapped as 'invalid record structure')."""


# ------------------------------------------------------------------------------------------------
# batch encoding
def encode_default_batch(*, base_offset: int, partition_leader_epoch: int, attributes: int,
                         last_offset_delta: int, base_timestamp: int, max_timestamp: int, producer_id: int,
                         producer_epoch: int, base_sequence: int, records_count: int, records: bytes,
                         magic: int = 2, crc: int | None = None, level: int | None = None,
                         already_compressed: bool = False) -> bytes:
    """Assemble a v2 batch: header + (compressed) records, with length and CRC32C filled in.

    ``records`` is the uncompressed concatenation of encoded records unless
    ``already_compressed``.  ``crc`` overrides the computed checksum (to rebuild corrupt input).
    """
    cid = attributes & V2_COMPRESSION_CODEC_MASK
    if cid > CompressionType.ZSTD:
        raise UnsupportedCompressionError(f"Unknown compression type id: {cid}")
    codec = CompressionType(cid)
    payload = records if already_compressed or codec == CompressionType.NONE else \
        _compression.compress(codec, records, magic=2, level=level)
    size = RECORD_BATCH_OVERHEAD + len(payload)
    buf = bytearray(size)
    DEFAULT_BATCH.pack_into(buf, 0, base_offset, size - LOG_OVERHEAD, partition_leader_epoch, magic, 0,
                            wrap16(attributes), last_offset_delta, base_timestamp, max_timestamp, producer_id,
                            producer_epoch, base_sequence, records_count)
    buf[RECORD_BATCH_OVERHEAD:] = payload
    DEFAULT_BATCH.put(buf, 0, "crc", crc32c(memoryview(buf)[DEFAULT_BATCH_CRC_START:]) if crc is None else crc)
    return bytes(buf)


# ------------------------------------------------------------------------------------------------
# batch view
class DefaultRecordBatch(RecordBatch):
    """A v2 batch view over ``buf`` at ``position`` (header parsed, records on demand)."""

    magic = 2

    def __init__(self, buf, position: int, end: int | None = None):
        end = len(buf) if end is None else end
        if end - position < RECORD_BATCH_OVERHEAD:
            # a batch this short still has a valid length field; it simply cannot hold a header
            length = DEFAULT_BATCH.get(buf, position, "length") if end - position >= LOG_OVERHEAD else 0
            raise CorruptRecordError(f"Record batch is corrupt (the size {length + LOG_OVERHEAD} is smaller than the "
                                     f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})", position=position)
        h = DEFAULT_BATCH.unpack_from(buf, position)
        length = h[_F["length"]]
        super().__init__(buf, position, length + LOG_OVERHEAD)
        if self.size_in_bytes < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(f"Record batch is corrupt (the size {self.size_in_bytes} is smaller than the "
                                     f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})", position=position)
        if self.end > end:
            raise CorruptRecordError(f"batch of size {self.size_in_bytes} is truncated: only {end - position} bytes "
                                     "remain", position=position)
        self.header = h
        self.base_offset = h[_F["baseOffset"]]
        self.partition_leader_epoch = h[_F["partitionLeaderEpoch"]]
        self.magic = h[_F["magic"]]
        self.checksum = h[_F["crc"]]
        self.raw_attributes = h[_F["attributes"]] & 0xFFFF
        self.attributes = self.raw_attributes & 0xFF  # DefaultRecordBatch reads only the low byte
        self.last_offset_delta = h[_F["lastOffsetDelta"]]
        self.base_timestamp = h[_F["baseTimestamp"]]
        self.max_timestamp = h[_F["maxTimestamp"]]
        self.producer_id = h[_F["producerId"]]
        self.producer_epoch = h[_F["producerEpoch"]]
        self.base_sequence = h[_F["baseSequence"]]
        self.count = h[_F["recordsCount"]]

    # --- header semantics (DefaultRecordBatch) ------------------------------------------------
    @property
    def last_offset(self) -> int:
        return wrap64(self.base_offset + self.last_offset_delta)  # Java long arithmetic

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def compression(self) -> CompressionType:
        cid = self.attributes & V2_COMPRESSION_CODEC_MASK
        try:
            return CompressionType(cid)
        except ValueError:
            raise UnsupportedCompressionError(f"Unknown compression type id: {cid}", position=self.position) from None

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & V2_TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & V2_TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & V2_CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & V2_DELETE_HORIZON_FLAG_MASK)

    @property
    def is_timestamp_extended(self) -> bool:
        """KIP-228's proposed ``isTimestampExtended`` bit (never part of Kafka)."""
        return bool(self.attributes & V2_TIMESTAMP_EXTENDED_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        return self.base_timestamp if self.has_delete_horizon else None

    # --- validity ----------------------------------------------------------------------------
    def compute_checksum(self) -> int:
        return crc32c(memoryview(self._buf)[self.position + DEFAULT_BATCH_CRC_START:self.end])

    def is_valid(self) -> bool:
        return self.size_in_bytes >= RECORD_BATCH_OVERHEAD and self.checksum == self.compute_checksum()

    def ensure_valid(self) -> None:
        computed = self.compute_checksum()
        if computed != self.checksum:
            raise CorruptRecordError(f"Record is corrupt (stored crc = {self.checksum}, computed crc = {computed})",
                                     position=self.position)

    # --- records -----------------------------------------------------------------------------
    def payload(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES):
        """The uncompressed records area, and its byte position in the input (None if decompressed).

        A batch declaring more records than ``max_records_per_batch`` is refused first (kafkafmt.limits).
        """
        check_record_count(self.count, position=self.position)
        start = self.position + RECORD_BATCH_OVERHEAD
        raw = memoryview(self._buf)[start:self.end]
        codec = self.compression
        if codec == CompressionType.NONE:
            return raw, start
        try:
            return _compression.decompress_buffer(codec, raw, magic=2, max_bytes=max_decompressed_bytes), None
        except KafkaFmtError as e:
            raise e.at(start)

    def records(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[Record]:
        count = self.count
        if count == 0:
            return
        if count < 0:
            raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch", position=self.position)
        data, abs_start = self.payload(max_decompressed_bytes=max_decompressed_bytes)
        lat = self.max_timestamp if self.timestamp_type == TimestampType.LOG_APPEND_TIME else None
        ts_type = self.timestamp_type
        control = self.is_control
        pos, end = 0, len(data)
        for i in range(count):
            if pos >= end:
                raise InvalidRecordError("Incorrect declared batch size, premature EOF reached",
                                         position=self.position)
            rec, nxt = decode_default_record(
                data, pos, end, self.base_offset, self.base_timestamp, self.base_sequence, lat, ts_type,
                control=control, position_base=None if abs_start is None else abs_start + pos)
            pos = nxt
            if i == count - 1 and pos != end:
                raise InvalidRecordError("Incorrect declared batch size, records still remaining in file",
                                         position=self.position)
            yield rec

    def skip_key_value_records(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                               ) -> Iterator[Record | PartialRecord]:
        """``DefaultRecordBatch.skipKeyValueIterator``: the validator's view when it assigns offsets in place.

        An uncompressed batch yields its full records (Kafka's ``uncompressedIterator``).  A compressed
        one is read as a stream of :class:`PartialRecord` (``DefaultRecord.readPartiallyFrom``): keys,
        values and headers are skipped by their lengths, the record's own length is read but never
        checked, so a record whose length field disagrees with its fields is accepted, as in Kafka.
        """
        if self.count == 0:
            return
        if not self.is_compressed:
            yield from self.records(max_decompressed_bytes=max_decompressed_bytes)
            return
        count = self.count
        if count < 0:
            raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch", position=self.position)
        data, _ = self.payload(max_decompressed_bytes=max_decompressed_bytes)
        lat = self.max_timestamp if self.timestamp_type == TimestampType.LOG_APPEND_TIME else None
        pos, end = 0, len(data)
        for i in range(count):
            try:  # StreamRecordIterator.readNext: a bad length varint (EOF included) is a premature EOF
                body_len, pos = decode_varint(data, pos, end)
            except InvalidRecordError:
                raise InvalidRecordError("Incorrect declared batch size, premature EOF reached",
                                         position=self.position) from None
            rec, pos = _read_partially(data, pos, end, body_len, self, lat)
            if i == count - 1 and pos < end:
                raise InvalidRecordError("Incorrect declared batch size, records still remaining in file",
                                         position=self.position)
            yield rec


class PartialRecord:
    """``PartialDefaultRecord``: a v2 record read with its key, value and headers skipped (sizes kept)."""

    __slots__ = ("offset", "timestamp", "timestamp_type", "sequence", "attributes", "size", "key_size",
                 "value_size", "offset_delta", "timestamp_delta")
    magic = 2
    headers = ()

    def __init__(self, offset, timestamp, timestamp_type, sequence, attributes, size, key_size, value_size,
                 offset_delta, timestamp_delta):
        self.offset, self.timestamp, self.timestamp_type, self.sequence = offset, timestamp, timestamp_type, sequence
        self.attributes, self.size, self.key_size, self.value_size = attributes, size, key_size, value_size
        self.offset_delta, self.timestamp_delta = offset_delta, timestamp_delta


def _read_partially(data, pos: int, end: int, body_len: int, batch: DefaultRecordBatch, lat: int | None):
    """``DefaultRecord.readPartiallyFrom`` after the length varint: Kafka's messages, stream semantics
    (a missing attributes byte reads as -1; a varint cut by the end of the stream is malformed)."""
    size = size_of_varint(body_len) + body_len
    try:
        attributes = data[pos] if pos < end else 0xFF
        ts_delta, pos = decode_varlong(data, pos + 1, end)
        offset_delta, pos = decode_varint(data, pos, end)
        key_size, pos = decode_varint(data, pos, end)
        pos = _skip(pos, key_size, end)
        value_size, pos = decode_varint(data, pos, end)
        pos = _skip(pos, value_size, end)
        n_headers, pos = decode_varint(data, pos, end)
        if n_headers < 0:
            raise _Direct(f"Found invalid number of record headers {n_headers}")
        for _ in range(n_headers):
            key_len, pos = decode_varint(data, pos, end)
            if key_len < 0:
                raise _Direct(f"Invalid negative header key size {key_len}")
            pos = _skip(pos, key_len, end)
            value_len, pos = decode_varint(data, pos, end)
            pos = _skip(pos, value_len, end)
    except _Direct as e:
        raise InvalidRecordError(str(e)) from None
    except InvalidRecordError:  # IllegalArgumentException from a varint
        raise InvalidRecordError("Found invalid record structure") from None
    base_seq = batch.base_sequence
    rec = PartialRecord(wrap64(batch.base_offset + offset_delta),
                        lat if lat is not None else wrap64(batch.base_timestamp + ts_delta), batch.timestamp_type,
                        increment_sequence(base_seq, offset_delta) if base_seq >= 0 else NO_SEQUENCE,
                        attributes, size, key_size, value_size, offset_delta, ts_delta)
    return rec, pos


def _skip(pos: int, length: int, end: int) -> int:
    """``DefaultRecord.skipBytes``: nothing for a length <= 0; an error if the stream ends first."""
    if length <= 0:
        return pos
    if pos + length > end:
        raise _Direct(f"Reached end of input stream before skipping all bytes. Remaining bytes:{pos + length - end}")
    return pos + length
