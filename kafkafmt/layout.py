"""Wire layouts, written once as data.

Every fixed-size header kafkafmt reads or writes is a :class:`Layout`: a list of
:class:`Field` entries (name as Kafka spells it, byte offset, type, meaning, and the
Kafka class or KIP it comes from).  Decoding, encoding, ``kafkafmt dump`` and the
annotated byte view (:mod:`kafkafmt.annotate`) all use these objects, so a field's
position is stated in exactly one place.

Variable-length structures (the v2 record with its varints, legacy keys/values) are
described by :class:`VarField` sequences that the annotator walks; their fast decoders
are tested field-for-field against that walk.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable

_FIXED = {
    "int8": "b",
    "uint8": "B",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
}


@dataclass(frozen=True)
class Field:
    """One fixed-width field of a wire layout."""

    name: str
    offset: int
    type: str  # int8/uint8/int16/uint16/int32/uint32/int64 or bytesN
    doc: str
    source: str = ""

    @property
    def code(self) -> str:
        if self.type.startswith("bytes"):
            return f"{int(self.type[5:])}s"
        return _FIXED[self.type]

    @property
    def size(self) -> int:
        return struct.calcsize(">" + self.code)


class Layout:
    """A fixed-size header: an ordered, contiguous list of fields.

    ``unpack_from`` returns a tuple in field order; ``read`` a dict; ``pack`` /
    ``pack_into`` write values given in field order or by name.
    """

    def __init__(self, name: str, fields: Iterable[Field], *, source: str, doc: str = "",
                 little_endian: bool = False):
        self.name = name
        self.fields: tuple[Field, ...] = tuple(fields)
        self.source = source
        self.doc = doc
        end = self.fields[0].offset if self.fields else 0
        self.start = end
        for f in self.fields:
            if f.offset != end:
                raise AssertionError(f"{name}: field {f.name} at {f.offset}, expected {end}")
            end += f.size
        self.size = end - self.start
        order = "<" if little_endian else ">"
        self.struct = struct.Struct(order + "".join(f.code for f in self.fields))
        self.names = tuple(f.name for f in self.fields)
        self._by_name = {f.name: f for f in self.fields}
        self._field_structs = {f.name: struct.Struct(order + f.code) for f in self.fields}

    def __repr__(self) -> str:
        return f"<Layout {self.name} {self.size} bytes>"

    def field(self, name: str) -> Field:
        return self._by_name[name]

    def offset_of(self, name: str) -> int:
        return self._by_name[name].offset

    def unpack_from(self, buf, pos: int = 0) -> tuple:
        return self.struct.unpack_from(buf, pos + self.start)

    def read(self, buf, pos: int = 0) -> dict:
        return dict(zip(self.names, self.unpack_from(buf, pos)))

    def get(self, buf, pos: int, name: str):
        f = self._by_name[name]
        return self._field_structs[name].unpack_from(buf, pos + f.offset)[0]

    def put(self, buf, pos: int, name: str, value) -> None:
        f = self._by_name[name]
        self._field_structs[name].pack_into(buf, pos + f.offset, value)

    def _values(self, args, kwargs) -> tuple:
        if args and kwargs:
            raise TypeError("give values positionally or by name, not both")
        if kwargs:
            missing = [n for n in self.names if n not in kwargs]
            extra = [k for k in kwargs if k not in self._by_name]
            if missing or extra:
                raise TypeError(f"{self.name}: missing {missing}, unknown {extra}")
            return tuple(kwargs[n] for n in self.names)
        return args

    def pack(self, *args, **kwargs) -> bytes:
        return self.struct.pack(*self._values(args, kwargs))

    def pack_into(self, buf, pos: int, *args, **kwargs) -> None:
        self.struct.pack_into(buf, pos + self.start, *self._values(args, kwargs))


@dataclass(frozen=True)
class VarField:
    """One field of a variable-length structure, in wire order.

    ``type`` is one of ``int8``, ``int16``, ``int32``, ``int64``, ``varint``, ``varlong``,
    ``bytes(<lengthfield>)`` (raw bytes whose length is a previously read field, negative = null),
    ``string(<lengthfield>)`` (UTF-8), or ``repeat(<countfield>)`` followed by a nested list.
    """

    name: str
    type: str
    doc: str
    source: str = ""
    children: tuple["VarField", ...] = ()


# --------------------------------------------------------------------------------------------
# Log entry framing: shared by every magic (org.apache.kafka.common.record.Records)
_REC = "org.apache.kafka.common.record.Records"
LOG_ENTRY = Layout("log entry", [
    Field("offset", 0, "int64", "offset of the entry: a v2 batch's baseOffset, a legacy message's "
          "offset (a compressed wrapper's = its LAST inner offset)", _REC),
    Field("size", 8, "int32", "bytes that follow this field (LOG_OVERHEAD = 12 not included)", _REC),
], source=_REC)

_LEG = "org.apache.kafka.common.record.LegacyRecord"
_LEG_COMMON = [
    Field("offset", 0, "int64", "message offset (v1 inner message: relative offset, KIP-31)", _REC),
    Field("size", 8, "int32", "message size, from crc to the end of the value", _REC),
    Field("crc", 12, "uint32", "CRC32 (IEEE) of magic..end of value", _LEG),
    Field("magic", 16, "int8", "message format version: 0 or 1", _LEG),
    Field("attributes", 17, "int8", "bits 0-2 codec; bit 3 timestamp type (v1 only, KIP-32)", _LEG),
]
#: v0 message (magic 0), up to and including keyLength.
LEGACY_V0 = Layout("message v0", _LEG_COMMON + [
    Field("keyLength", 18, "int32", "key length; -1 = null key", _LEG),
], source=_LEG, doc="Message format v0 (Kafka 0.8-0.9)")
#: v1 message (magic 1, KIP-32), up to and including keyLength.
LEGACY_V1 = Layout("message v1", _LEG_COMMON + [
    Field("timestamp", 18, "int64", "CreateTime or LogAppendTime, ms since epoch; -1 = none (KIP-32)", _LEG),
    Field("keyLength", 26, "int32", "key length; -1 = null key", _LEG),
], source=_LEG, doc="Message format v1 (Kafka 0.10, KIP-31/KIP-32)")
#: the int32 length in front of a legacy value (position depends on the key).
LEGACY_VALUE_LENGTH = Layout("valueLength", [
    Field("valueLength", 0, "int32", "value length; -1 = null value", _LEG),
], source=_LEG)

_DRB = "org.apache.kafka.common.record.DefaultRecordBatch"
#: v2 record batch header (RECORD_BATCH_OVERHEAD = 61), KIP-98.
DEFAULT_BATCH = Layout("record batch v2", [
    Field("baseOffset", 0, "int64", "offset of the first record; outside the CRC", _DRB),
    Field("length", 8, "int32", "batch size - 12; outside the CRC", _DRB),
    Field("partitionLeaderEpoch", 12, "int32", "leader epoch set by the broker; outside the CRC", _DRB),
    Field("magic", 16, "int8", "2", _DRB),
    Field("crc", 17, "uint32", "CRC32C of attributes..end of batch", _DRB),
    Field("attributes", 21, "int16", "bits 0-2 codec, 3 LogAppendTime, 4 transactional, 5 control, "
          "6 hasDeleteHorizonMs (KIP-534); bit 7 isTimestampExtended is KIP-228's unadopted proposal", _DRB),
    Field("lastOffsetDelta", 23, "int32", "lastOffset - baseOffset", _DRB),
    Field("baseTimestamp", 27, "int64", "timestamp of the first record appended (deleteHorizonMs when "
          "bit 6 is set); records store deltas from it", _DRB),
    Field("maxTimestamp", 35, "int64", "max record timestamp, or broker time for LogAppendTime", _DRB),
    Field("producerId", 43, "int64", "idempotent/transactional producer id; -1 = none", _DRB),
    Field("producerEpoch", 51, "int16", "producer epoch; -1 = none", _DRB),
    Field("baseSequence", 53, "int32", "sequence of the first record; -1 = none", _DRB),
    Field("recordsCount", 57, "int32", "number of records", _DRB),
], source=_DRB, doc="Record batch v2 header (Kafka 0.11+, KIP-98)")
#: byte from which the v2 CRC32C is computed.
DEFAULT_BATCH_CRC_START = DEFAULT_BATCH.offset_of("attributes")

_DR = "org.apache.kafka.common.record.DefaultRecord"
#: v2 record (variable length), DefaultRecord.writeTo / readFrom.
DEFAULT_RECORD: tuple[VarField, ...] = (
    VarField("length", "varint", "size of the rest of the record", _DR),
    VarField("attributes", "int8", "unused, written 0", _DR),
    VarField("timestampDelta", "varlong", "timestamp - batch baseTimestamp", _DR),
    VarField("offsetDelta", "varint", "offset - batch baseOffset", _DR),
    VarField("keyLength", "varint", "key length; -1 = null", _DR),
    VarField("key", "bytes(keyLength)", "key bytes", _DR),
    VarField("valueLength", "varint", "value length; -1 = null", _DR),
    VarField("value", "bytes(valueLength)", "value bytes", _DR),
    VarField("headersCount", "varint", "number of headers (KIP-82)", _DR),
    VarField("headers", "repeat(headersCount)", "record headers", _DR, children=(
        VarField("headerKeyLength", "varint", "header key length (>= 0)", _DR),
        VarField("headerKey", "string(headerKeyLength)", "header key, UTF-8", _DR),
        VarField("headerValueLength", "varint", "header value length; -1 = null", _DR),
        VarField("headerValue", "bytes(headerValueLength)", "header value", _DR),
    )),
)

_CRT = "org.apache.kafka.common.record.ControlRecordType"
CONTROL_RECORD_KEY = Layout("control record key", [
    Field("version", 0, "int16", "control key version (0)", _CRT),
    Field("type", 2, "int16", "ABORT=0, COMMIT=1, LEADER_CHANGE=2, ...", _CRT),
], source=_CRT)
_ETM = "org.apache.kafka.common.record.EndTransactionMarker"
END_TXN_MARKER_VALUE = Layout("end transaction marker value", [
    Field("version", 0, "int16", "marker value version (0)", _ETM),
    Field("coordinatorEpoch", 2, "int32", "epoch of the transaction coordinator", _ETM),
], source=_ETM)

_IDX = "org.apache.kafka.storage.internals.log.OffsetIndex"
OFFSET_INDEX_ENTRY = Layout("offset index entry", [
    Field("relativeOffset", 0, "int32", "offset - segment base offset", _IDX),
    Field("position", 4, "int32", "byte position of the batch in the .log", _IDX),
], source=_IDX)
_TIX = "org.apache.kafka.storage.internals.log.TimeIndex"
TIME_INDEX_ENTRY = Layout("time index entry", [
    Field("timestamp", 0, "int64", "largest timestamp seen up to this offset (KIP-33)", _TIX),
    Field("relativeOffset", 8, "int32", "offset - segment base offset", _TIX),
], source=_TIX)

_SNP = "org.xerial.snappy.SnappyOutputStream (Kafka SnappyCompression)"
SNAPPY_XERIAL_HEADER = Layout("xerial snappy header", [
    Field("magic", 0, "bytes8", "0x82 'SNAPPY' 0x00", _SNP),
    Field("version", 8, "int32", "1", _SNP),
    Field("compatibleVersion", 12, "int32", "1", _SNP),
], source=_SNP)

_LZ4 = "org.apache.kafka.common.compress.Lz4BlockOutputStream"
LZ4_FRAME_HEADER = Layout("lz4 frame header", [
    Field("magic", 0, "uint32", "0x184D2204 (little-endian)", _LZ4),
    Field("FLG", 4, "uint8", "0x60: version 01, independent blocks, no checksums", _LZ4),
    Field("BD", 5, "uint8", "0x40: 64 KiB blocks", _LZ4),
    Field("HC", 6, "uint8", "(xxh32 >> 8) & 0xFF of FLG+BD; of magic+FLG+BD for message v0 (KAFKA-3160)", _LZ4),
], source=_LZ4, little_endian=True)

_TXI = "org.apache.kafka.storage.internals.log.AbortedTxn"
TXN_INDEX_ENTRY = Layout("transaction index entry", [
    Field("version", 0, "int16", "AbortedTxn.CURRENT_VERSION (0)", _TXI),
    Field("producerId", 2, "int64", "the aborting producer", _TXI),
    Field("firstOffset", 10, "int64", "first offset of the aborted transaction", _TXI),
    Field("lastOffset", 18, "int64", "offset of its abort marker", _TXI),
    Field("lastStableOffset", 26, "int64", "the last stable offset when the abort was appended", _TXI),
], source=_TXI)

#: Every fixed layout, for documentation and the annotated byte view.
ALL_LAYOUTS = (LOG_ENTRY, LEGACY_V0, LEGACY_V1, LEGACY_VALUE_LENGTH, DEFAULT_BATCH, CONTROL_RECORD_KEY,
               END_TXN_MARKER_VALUE, OFFSET_INDEX_ENTRY, TIME_INDEX_ENTRY, TXN_INDEX_ENTRY, SNAPPY_XERIAL_HEADER,
               LZ4_FRAME_HEADER)
