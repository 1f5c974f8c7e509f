"""The JSON record-set spec: what ``kafkafmt dump --json`` prints and ``kafkafmt build`` reads.

One JSON object per batch (JSON Lines; ``build`` also accepts a JSON array or
``{"batches": [...]}``).  Field names are kafka-dump-log's (``baseOffset``, ``lastOffset``,
``count``, ``magic``, ``compresscodec``, ``crc``, ``isvalid``, ``position``, ``size`` ...), plus the
raw header fields needed to rebuild the batch (``attributes``, ``baseTimestamp``,
``lastOffsetDelta`` ...).  Records carry ``offset``, ``timestamp``, ``keySize``, ``valueSize``,
``sequence``, ``headerKeys`` and, losslessly, ``key``, ``value`` and ``headers``.

Bytes are written as ``null``, ``{"utf8": "text"}`` (when the bytes are valid UTF-8) or
``{"hex": "0a0b"}``; ``build`` also accepts ``{"base64": ...}`` and a plain string (UTF-8).

Rebuilding (``build``): every field that a dump prints is honoured verbatim, so
``dump --json | build`` reproduces uncompressed input byte for byte, including inconsistent
counts or offset deltas.  Fields left out get the value Kafka's ``MemoryRecordsBuilder`` would
write (see :func:`build_batch`), so a hand-written spec can be short.  The stored CRC is used
only when the spec says ``"isvalid": false`` (to reproduce corrupt input); otherwise it is
computed.  A batch whose records could not be decoded is dumped with its raw ``payload`` and is
rebuilt from it.  Compressed batches are rebuilt frame for frame (the codec library may pick
different matches than Java's).
"""
from __future__ import annotations

import base64
import json
import struct
from typing import Any, Iterable, Iterator

from .. import compression as _compression
from ..constants import (
    LOG_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    CompressionType,
    ControlRecordType,
    TimestampType,
)
from ..errors import KafkaFmtError, SpecError
from ..layout import CONTROL_RECORD_KEY, END_TXN_MARKER_VALUE
from ..varint import wrap64
from . import RecordBatch
from .default import batch_attributes, encode_default_batch, encode_default_record
from .legacy import encode_legacy_entry, legacy_attributes
from .record import Header, Record


# ------------------------------------------------------------------------------------------------
# bytes <-> JSON
def bytes_to_json(data: bytes | None) -> dict | None:
    """``None`` → null; valid UTF-8 → ``{"utf8": ...}``; anything else → ``{"hex": ...}``."""
    if data is None:
        return None
    data = bytes(data)
    try:
        return {"utf8": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"hex": data.hex()}


def json_to_bytes(v: Any, what: str = "bytes") -> bytes | None:
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, dict) and len(v) == 1:
        (kind, text), = v.items()
        try:
            if kind == "utf8":
                return text.encode("utf-8", "surrogateescape")
            if kind == "hex":
                return bytes.fromhex(text)
            if kind == "base64":
                return base64.b64decode(text, validate=True)
        except (ValueError, TypeError) as e:
            raise SpecError(f"{what}: cannot decode {kind}: {e}") from None
    raise SpecError(f"{what}: expected null, a string, or {{\"utf8\"|\"hex\"|\"base64\": ...}}, got {v!r}")


# ------------------------------------------------------------------------------------------------
# dump side
def record_to_json(batch: RecordBatch, r: Record) -> dict:
    d: dict[str, Any] = {"offset": r.offset, "timestampType": r.timestamp_type.kafka_name, "timestamp": r.timestamp,
                         "keySize": r.key_size, "valueSize": r.value_size}
    if batch.magic >= 2:
        d.update(sequence=r.sequence, headerKeys=[h.key for h in r.headers], attributes=r.attributes,
                 timestampDelta=r.timestamp_delta, offsetDelta=r.offset_delta)
    else:
        d.update(isValid=bool(r.crc_valid), crc=r.crc, magic=r.magic, attributes=r.attributes,
                 storedOffset=r.stored_offset)
        if r.stored_timestamp is not None:
            d["storedTimestamp"] = r.stored_timestamp
    if r.control is not None:
        c = r.control
        if c.coordinator_epoch is not None:
            d.update(endTxnMarker=c.type.name, coordinatorEpoch=c.coordinator_epoch)
        else:
            d["controlType"] = c.name
    d["key"] = bytes_to_json(r.key)
    d["value"] = bytes_to_json(r.value)
    if batch.magic >= 2:
        d["headers"] = [{"key": h.key, "value": bytes_to_json(h.value)} for h in r.headers]
    return d


def batch_to_json(batch: RecordBatch, *, position: int | None = None, deep: bool = True) -> dict:
    """A batch as one JSON object (kafka-dump-log field names + what ``build`` needs)."""
    d: dict[str, Any] = {"baseOffset": None, "lastOffset": batch.last_offset}
    if batch.magic >= 2:
        d.update(count=batch.count, baseSequence=batch.base_sequence, lastSequence=batch.last_sequence,
                 producerId=batch.producer_id, producerEpoch=batch.producer_epoch,
                 partitionLeaderEpoch=batch.partition_leader_epoch, isTransactional=batch.is_transactional,
                 isControl=batch.is_control, deleteHorizonMs=batch.delete_horizon_ms)
    d.update(position=batch.position if position is None else position,
             timestampType=batch.timestamp_type.kafka_name, maxTimestamp=batch.max_timestamp,
             size=batch.size_in_bytes, magic=batch.magic, compresscodec=_codec_name(batch),
             crc=batch.checksum, isvalid=batch.is_valid(), attributes=_raw_attributes(batch))
    if batch.magic >= 2:
        d.update(baseTimestamp=batch.base_timestamp, lastOffsetDelta=batch.last_offset_delta)
        if batch.is_timestamp_extended:
            d["isTimestampExtended"] = True
    try:
        records = [record_to_json(batch, r) for r in batch.records()] if deep else None
        d["baseOffset"] = batch.base_offset
    except KafkaFmtError as e:
        records = None
        d["baseOffset"] = batch.base_offset if batch.magic >= 2 else batch.last_offset
        d["error"] = f"{type(e).__name__}: {e}"
        d["payload"] = bytes_to_json(_raw_payload(batch)) if deep else None
    if records is not None:
        d["records"] = records
    return d


def _codec_name(batch: RecordBatch) -> str:
    try:
        return batch.compression.kafka_name
    except KafkaFmtError:
        return f"unknown({batch.compression_id})"


def _raw_attributes(batch: RecordBatch) -> int:
    return getattr(batch, "raw_attributes", batch.attributes)


def _raw_payload(batch: RecordBatch) -> bytes | None:
    if batch.magic >= 2:
        return bytes(batch.raw[RECORD_BATCH_OVERHEAD:])
    v = batch.message.value
    return None if v is None else bytes(v)


def dump_json_lines(batches: Iterable[RecordBatch], *, deep: bool = True) -> Iterator[str]:
    for b in batches:
        yield json.dumps(batch_to_json(b, deep=deep), separators=(",", ":"))


# ------------------------------------------------------------------------------------------------
# build side
def load_spec(text: str) -> list[dict]:
    """Parse a spec file: JSON Lines, a JSON array, or ``{"batches": [...]}``."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise SpecError(f"the spec is not UTF-8 text ({e.reason})", position=e.start) from None
    text = text.strip()
    if not text:
        return []
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        doc = None
    if isinstance(doc, dict) and "batches" in doc:
        doc = doc["batches"]
        if not isinstance(doc, list):
            raise SpecError(f'"batches" must be a JSON array, got {type(doc).__name__}')
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        return [doc]
    if doc is not None:
        raise SpecError(f"a spec is JSON objects (one per batch), got {type(doc).__name__}")
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SpecError(f"line {n}: not JSON: {e}") from None
            except RecursionError:
                raise SpecError(f"line {n}: JSON nested too deeply") from None
    return out


def _get(d: dict, key: str, default=None):
    v = d.get(key, default)
    return default if v is None else v


def _ts_type(spec: dict, magic: int) -> TimestampType:
    name = spec.get("timestampType")
    if name is None:
        return TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    try:
        return TimestampType.from_name(name)
    except ValueError as e:
        raise SpecError(str(e)) from None


def _codec(spec: dict) -> CompressionType:
    try:
        return CompressionType.from_name(spec.get("compresscodec") or "none")
    except ValueError as e:
        raise SpecError(str(e)) from None


def build_batch(spec: dict) -> bytes:
    """Bytes of one batch described by a spec object (see the module docstring)."""
    if not isinstance(spec, dict):
        raise SpecError(f"a batch spec must be a JSON object, got {type(spec).__name__}")
    magic = spec.get("magic", 2)
    if type(magic) is not int:
        raise SpecError(f"magic must be an integer, got {magic!r}")
    try:
        if magic >= 2:
            return _build_v2(spec)
        if magic in (0, 1):
            return _build_legacy(spec, magic)
    except KafkaFmtError as e:
        if isinstance(e, SpecError):
            raise
        raise SpecError(f"batch at baseOffset {spec.get('baseOffset')}: {type(e).__name__}: {e.reason}") from e
    except _WRONG_TYPE_ERRORS as e:  # a field of the wrong JSON type or out of its Java range
        raise SpecError(f"batch at baseOffset {spec.get('baseOffset')!r}: invalid field: "
                        f"{type(e).__name__}: {e}") from None
    raise SpecError(f"unsupported magic {magic!r}")


#: what Python raises when a spec field has the wrong JSON type (a string where a number goes,
#: a list where an object goes) or a number outside its field's range (``struct.error``)
_WRONG_TYPE_ERRORS = (KeyError, IndexError, TypeError, ValueError, OverflowError, AttributeError, struct.error)


def build_record_set(specs: Iterable[dict]) -> bytes:
    return b"".join(build_batch(s) for s in specs)


def _control_key_value(r: dict) -> tuple[bytes | None, bytes | None]:
    if "endTxnMarker" in r and "key" not in r:
        t = ControlRecordType[r["endTxnMarker"]]
        return (CONTROL_RECORD_KEY.pack(0, int(t)), END_TXN_MARKER_VALUE.pack(0, int(r.get("coordinatorEpoch", 0))))
    return json_to_bytes(r.get("key"), "key"), json_to_bytes(r.get("value"), "value")


def _build_v2(s: dict) -> bytes:
    records = s.get("records") or []
    codec = _codec(s)
    ts_type = _ts_type(s, 2)
    base_offset = s.get("baseOffset")
    if base_offset is None:
        base_offset = records[0].get("offset", 0) if records else 0
    delete_horizon = s.get("deleteHorizonMs")
    if "attributes" in s:
        attributes = int(s["attributes"])
    else:
        attributes = batch_attributes(codec, ts_type, transactional=bool(s.get("isTransactional")),
                                      control=bool(s.get("isControl")), delete_horizon=delete_horizon is not None,
                                      timestamp_extended=bool(s.get("isTimestampExtended")))
    base_ts = s.get("baseTimestamp")
    if base_ts is None:
        base_ts = delete_horizon if delete_horizon is not None else (
            records[0].get("timestamp", NO_TIMESTAMP) if records else NO_TIMESTAMP)
    parts = []
    max_ts = NO_TIMESTAMP
    last_delta = 0
    for i, r in enumerate(records):
        offset_delta = r.get("offsetDelta")
        if offset_delta is None:
            offset_delta = r["offset"] - base_offset if "offset" in r else i
        ts_delta = r.get("timestampDelta")
        ts = r.get("timestamp", NO_TIMESTAMP)
        if ts_delta is None:
            ts_delta = wrap64(ts - base_ts)
        max_ts = max(max_ts, ts)
        last_delta = offset_delta
        if s.get("isControl"):
            key, value = _control_key_value(r)
        else:
            key, value = json_to_bytes(r.get("key"), "key"), json_to_bytes(r.get("value"), "value")
        headers = [Header(h["key"], json_to_bytes(h.get("value"), "header value")) for h in r.get("headers") or []]
        parts.append(encode_default_record(offset_delta, ts_delta, key, value, headers, int(r.get("attributes", 0))))
    max_timestamp = s.get("maxTimestamp")
    if max_timestamp is None:
        if ts_type == TimestampType.LOG_APPEND_TIME:
            raise SpecError("a LogAppendTime batch needs maxTimestamp (the log-append time)")
        max_timestamp = max_ts
    last_offset_delta = s.get("lastOffsetDelta")
    if last_offset_delta is None:
        last_offset_delta = s["lastOffset"] - base_offset if s.get("lastOffset") is not None else last_delta
    payload = b"".join(parts)
    already = False
    if "payload" in s and "records" not in s:
        payload, already = json_to_bytes(s["payload"], "payload") or b"", True
    crc = s.get("crc") if s.get("isvalid") is False else None
    return encode_default_batch(
        base_offset=base_offset, partition_leader_epoch=_get(s, "partitionLeaderEpoch", NO_PARTITION_LEADER_EPOCH),
        attributes=attributes, last_offset_delta=last_offset_delta, base_timestamp=base_ts,
        max_timestamp=max_timestamp, producer_id=_get(s, "producerId", NO_PRODUCER_ID),
        producer_epoch=_get(s, "producerEpoch", NO_PRODUCER_EPOCH), base_sequence=_get(s, "baseSequence", NO_SEQUENCE),
        records_count=_get(s, "count", len(records)), records=payload, magic=s.get("magic", 2), crc=crc,
        level=s.get("compressionLevel"), already_compressed=already)


def _build_legacy(s: dict, magic: int) -> bytes:
    codec = _codec(s)
    ts_type = _ts_type(s, magic)
    records = s.get("records")
    crc = s.get("crc") if s.get("isvalid") is False else None
    if codec == CompressionType.NONE:
        if not records or len(records) != 1:
            raise SpecError("an uncompressed v0/v1 entry holds exactly one record")
        r = records[0]
        attributes = s.get("attributes", r.get("attributes", legacy_attributes(magic, codec, ts_type)))
        offset = _get(r, "storedOffset", _get(r, "offset", s.get("lastOffset")))
        ts = _get(r, "storedTimestamp", _get(r, "timestamp", NO_TIMESTAMP))
        return encode_legacy_entry(offset, magic, attributes, ts, json_to_bytes(r.get("key"), "key"),
                                   json_to_bytes(r.get("value"), "value"), crc=crc)
    attributes = s.get("attributes", legacy_attributes(magic, codec, ts_type))
    if records is None:
        if "payload" not in s:
            raise SpecError("a compressed v0/v1 wrapper needs records (or its raw payload)")
        value = json_to_bytes(s["payload"], "payload")
        return encode_legacy_entry(s["lastOffset"], magic, attributes, _get(s, "maxTimestamp", NO_TIMESTAMP), None,
                                   value, crc=crc)
    if not records:
        raise SpecError("a compressed v0/v1 wrapper needs at least one record")
    first = records[0].get("offset", 0)
    inner = []
    max_ts = NO_TIMESTAMP
    lat = ts_type == TimestampType.LOG_APPEND_TIME
    for i, r in enumerate(records):
        rmagic = r.get("magic", magic)
        stored = r.get("storedOffset")
        if stored is None:
            off = r.get("offset", first + i)
            stored = off - first if magic > 0 else off
        ts = r.get("storedTimestamp")
        if ts is None:
            ts = s["maxTimestamp"] if lat and s.get("maxTimestamp") is not None else r.get("timestamp", NO_TIMESTAMP)
        max_ts = max(max_ts, ts)
        rattrs = r.get("attributes", legacy_attributes(rmagic, CompressionType.NONE, ts_type))
        rcrc = r.get("crc") if r.get("isValid") is False else None
        inner.append(encode_legacy_entry(stored, rmagic, rattrs, ts, json_to_bytes(r.get("key"), "key"),
                                         json_to_bytes(r.get("value"), "value"), crc=rcrc))
    value = _compression.compress(codec, b"".join(inner), magic=magic, level=s.get("compressionLevel"))
    last = s.get("lastOffset")
    if last is None:
        last = records[-1].get("offset", first + len(records) - 1)
    wrapper_ts = s.get("maxTimestamp")
    if wrapper_ts is None:
        wrapper_ts = max_ts
    return encode_legacy_entry(last, magic, attributes, wrapper_ts, None, value, crc=crc)


__all__ = ["bytes_to_json", "json_to_bytes", "record_to_json", "batch_to_json", "dump_json_lines", "load_spec",
           "build_batch", "build_record_set", "LOG_OVERHEAD"]
