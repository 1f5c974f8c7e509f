"""The record value: what a reader gets for each message, in every magic.

:class:`Record` mirrors ``org.apache.kafka.common.record.Record`` (offset, timestamp, key,
value, headers, sequence) and also keeps the wire details a workbench shows (the stored,
possibly relative offset and timestamp of a legacy inner message; the deltas of a v2 record)
so that a record set can be rebuilt from what was read.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..constants import ControlRecordType, TimestampType
from ..errors import IllegalArgumentError, InvalidRecordError
from ..layout import CONTROL_RECORD_KEY, END_TXN_MARKER_VALUE


@dataclass(frozen=True, slots=True)
class Header:
    """A v2 record header (KIP-82).  Keys are UTF-8 text; values are bytes or None.

    Keys that are not valid UTF-8 are decoded with ``surrogateescape`` so they survive a
    dump/build round trip (Kafka itself would substitute U+FFFD).
    """

    key: str
    value: bytes | None

    @property
    def key_bytes(self) -> bytes:
        return self.key.encode("utf-8", "surrogateescape")



def headers_of(headers) -> tuple[Header, ...]:
    """A record's headers from :class:`Header` objects or ``(key, value)`` pairs, refused as Kafka's
    ``RecordHeaders`` and ``DefaultRecord.writeTo`` refuse them (no null header list, no null key)."""
    if headers is None:
        raise IllegalArgumentError("Headers cannot be null")
    out = []
    for h in headers:
        if isinstance(h, Header):
            out.append(h)
        else:
            k, v = h
            if k is None:
                raise IllegalArgumentError("Invalid null header key found in headers")
            out.append(Header(k, None if v is None else bytes(v)))
    return tuple(out)

@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A parsed control record (``ControlRecordType``, ``EndTransactionMarker``)."""

    type: ControlRecordType
    raw_type: int
    version: int
    coordinator_epoch: int | None = None  # for ABORT / COMMIT markers

    @property
    def name(self) -> str:
        return self.type.name if self.type != ControlRecordType.UNKNOWN else f"UNKNOWN({self.raw_type})"


def parse_control_record(key: bytes | None, value: bytes | None, *, position: int | None = None) -> ControlRecord:
    """Parse a control record's key (and the end-transaction marker value for ABORT/COMMIT)."""
    if key is None or len(key) < CONTROL_RECORD_KEY.size:
        raise InvalidRecordError("Invalid value size found for control record key: "
                                 f"{0 if key is None else len(key)} bytes (need 4)", position=position)
    version, raw_type = CONTROL_RECORD_KEY.unpack_from(key)
    if version < 0:
        raise InvalidRecordError(f"Invalid version found for control record: {version}", position=position)
    try:
        ctype = ControlRecordType(raw_type)
    except ValueError:
        ctype = ControlRecordType.UNKNOWN
    epoch = None
    if ctype in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        if value is None or len(value) < END_TXN_MARKER_VALUE.size:
            raise InvalidRecordError("Invalid value size found for end transaction marker: "
                                     f"{0 if value is None else len(value)} bytes (need 6)", position=position)
        mversion, epoch = END_TXN_MARKER_VALUE.unpack_from(value)
        if mversion < 0:
            raise InvalidRecordError(f"Invalid version found for end transaction marker: {mversion}",
                                     position=position)
    return ControlRecord(ctype, raw_type, version, epoch)


@dataclass(slots=True)
class Record:
    """One record as a consumer sees it, plus its wire details.

    ``offset``, ``timestamp`` and ``timestamp_type`` are the values Kafka's reader reports
    (absolute offset; for LogAppendTime the batch/wrapper time).  The ``stored_*`` and
    ``*_delta`` fields are what is literally in the bytes.
    """

    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    sequence: int = -1
    magic: int = 2
    attributes: int = 0
    size: int = 0  #: bytes on the wire (v2: varint length + body; legacy: LOG_OVERHEAD + message)
    position: int | None = None  #: byte position in the input, when the record is not compressed
    # v2 wire details
    timestamp_delta: int | None = None
    offset_delta: int | None = None
    # legacy wire details
    stored_offset: int | None = None  #: the offset field as stored (v1 inner: relative, KIP-31)
    stored_timestamp: int | None = None  #: a v1 message's own timestamp field
    crc: int | None = None  #: a legacy message's stored CRC32
    crc_valid: bool | None = None
    control: ControlRecord | None = field(default=None)

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)

    @property
    def is_control(self) -> bool:
        return self.control is not None
