"""What a consumer sees: the KIP-31/KIP-32 reading rules, and what an old client hits on newer formats.

:func:`consumer_view` reads a fetched record set the way a consumer of a given generation does and
explains, record by record, where each offset and timestamp came from:

* ``client_magic=2`` (or 1): a modern reader (``AbstractLegacyRecordBatch.DeepRecordsIterator``,
  ``DefaultRecordBatch.RecordIterator``, consumer ``CompletedFetch``): v1 relative inner offsets →
  absolute (``wrapper − lastInner + inner``; wrapper offset 0 → inner offsets as they are,
  KAFKA-5365); a LogAppendTime wrapper/batch overrides every inner timestamp; control batches are
  never returned; records below the fetch offset are skipped (a fetch returns whole batches).
  A 0.10 client (``client_magic=1``) reads v0 and v1 the same way.
* ``variant="seed"`` applies KIP-32's consumer rule literally (seed 000 §4.1): an inner timestamp
  that is not -1 is used, an inner -1 takes the wrapper's.  Kafka instead substitutes the wrapper's
  timestamp **only** when the wrapper is LogAppendTime (and then for every inner record, -1 or not),
  and keeps an inner -1 under a CreateTime wrapper.  The two differ on bytes Kafka writes: an
  in-place LogAppendTime wrapper keeps the producer's inner timestamps (the broker never recompresses).
* ``client_magic=0`` (a 0.9 Java consumer) and ``client_magic=1`` meeting v2: the old client does not
  check the magic byte (KIP-31: "the current code does not validate the magic byte"); it parses the
  entry with its own layout.  kafkafmt reproduces that parse (0.9/0.10 ``Record``, ``Fetcher``):
  a v1 message is CRC-valid for a 0.9 client (same CRC coverage) but its key length is read from the
  timestamp, giving garbage or ``KafkaException("Error deserializing key/value ...")``; a v2 batch
  has its partition leader epoch where the CRC should be, so it fails the CRC check (or, when the
  byte read as "attributes" names a codec, fails to decompress / names an unknown codec).
  KIP-31 expected "an exception for unsupported version"; the real error is one of these.
* ``client_line`` (the release of the Java consumer, :mod:`kafkafmt.kafka_lines`): what the application
  then sees (:attr:`ConsumerView.outcome`), row ``consumer.unparsable_fetch``.  A 0.9 Java consumer parses
  a fetch response inside its completion listener (0.9.0.1 ``Fetcher.handleFetchResponse``); the
  exception is caught and logged by ``NetworkClient.poll``, the response dropped and the same offset
  fetched again: the application gets no record and no error (``outcome == "stalls"``, the exception in
  :attr:`ConsumerView.logged`, the records it had parsed in :attr:`ConsumerView.dropped`).  From 0.10.0.1
  (KAFKA-3977) the exception reaches the application (``"raises"``).  Without ``client_line`` the view is
  the parse itself (``"raises"`` on an error).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import kafka_lines
from ..constants import LEGACY_COMPRESSION_CODEC_MASK, LOG_OVERHEAD, NO_TIMESTAMP, CompressionType, TimestampType
from ..errors import CorruptRecordError, KafkaFmtError
from ..layout import LEGACY_V0
from ..records import MemoryRecords
from ..records.legacy import LegacyMessage, message_checksum
from ..records.record import Header
from .trace import Trace

__all__ = ["consumer_view", "ConsumerView", "ConsumedRecord", "old_client_read"]


@dataclass
class ConsumedRecord:
    """One record as the application gets it, and how its offset/timestamp were derived."""

    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    headers: tuple = ()
    batch_magic: int = 2
    stored_offset: int | None = None
    stored_timestamp: int | None = None
    derivation: str = ""
    garbled: bool = False  #: an old client misparsed a newer format

    def to_dict(self) -> dict:
        return {"offset": self.offset, "timestamp": self.timestamp, "timestamp_type": self.timestamp_type.kafka_name,
                "key": self.key, "value": self.value,
                "headers": [(h.key, h.value) if isinstance(h, Header) else h for h in self.headers],
                "batch_magic": self.batch_magic, "stored_offset": self.stored_offset,
                "stored_timestamp": self.stored_timestamp, "derivation": self.derivation, "garbled": self.garbled}


@dataclass
class ConsumerView:
    records: list[ConsumedRecord]
    client_magic: int
    trace: Trace
    error: str | None = None  #: the exception the client raises (class name), if any
    error_message: str | None = None
    error_offset: int | None = None
    skipped: list = field(default_factory=list)  #: (offset, reason) of records not returned
    variant: str = "kafka"
    #: what the application sees: "records" (no error), "raises" (``error``), "stalls" (no record, no
    #: error: the client only logs ``logged`` and fetches the same offset again)
    outcome: str = "records"
    logged: str | None = None  #: the exception a stalled client logs ("KafkaException: ...")
    dropped: list = field(default_factory=list)  #: records parsed before the failure, then dropped (a stall)

    @property
    def offsets(self) -> list[int]:
        return [r.offset for r in self.records]

    @property
    def timestamps(self) -> list[int]:
        return [r.timestamp for r in self.records]


def consumer_view(records_bytes, *, client_magic: int = 2, fetch_offset: int | None = None,
                  variant: str = "kafka", topic: str = "topic", partition: int = 0,
                  client_line: str | None = None) -> ConsumerView:
    """The records an application receives from ``records_bytes`` (see the module doc); ``client_line``:
    the Java consumer's release line, deciding what a parse error becomes (:attr:`ConsumerView.outcome`)."""
    view = _parse_view(records_bytes, client_magic, fetch_offset, variant, topic, partition)
    if view.error is None:
        return view
    view.outcome = "raises"
    if client_line is None or kafka_lines.value("consumer.unparsable_fetch", client_line) != "stalls":
        return view
    row = kafka_lines.rows("consumer.unparsable_fetch")[0]
    view.logged = f"{view.error}: {view.error_message}"
    view.dropped, view.records = view.records, []
    view.error = view.error_message = None
    view.outcome = "stalls"
    view.trace.add("what the application sees", f"nothing: the Kafka {client_line} consumer parses the response "
                   f"inside its completion listener; the {view.logged.split(':')[0]} is caught and logged, the "
                   f"{len(view.dropped)} record(s) parsed before it dropped, and the same offset fetched again "
                   "(a stall: no record, no error)", f"{row.where}; row {row.key}", kafka_line_row=row.key)
    return view


def _parse_view(records_bytes, client_magic, fetch_offset, variant, topic, partition) -> ConsumerView:
    if variant not in ("kafka", "seed"):
        raise ValueError("variant must be 'kafka' or 'seed'")
    data = bytes(records_bytes)
    tp = f"{topic}-{partition}"
    tr = Trace(f"consumer view: a client reading up to v{client_magic}" +
               (" (KIP-32 seed rules)" if variant == "seed" else ""))
    view = ConsumerView([], client_magic, tr, variant=variant)
    records = MemoryRecords(data)
    try:
        batches = list(records.batches())
    except KafkaFmtError as e:
        view.error, view.error_message = e.kafka_exception, e.reason
        tr.add("parse", f"{e.kafka_exception}: {e.reason}", "ByteBufferLogInputStream.nextBatch")
        return view
    for b in batches:
        if b.magic > client_magic:
            recs, err = old_client_read(data, b.position, client_magic, tp)
            tr.add(f"v{b.magic} entry at offset {b.last_offset if b.magic < 2 else b.base_offset}",
                   f"a v{client_magic}-only client parses it with its own layout: " +
                   (f"{err[0]}: {err[1]}" if err else f"{len(recs)} garbled record(s)"),
                   "0.9.0 Record/Fetcher" if client_magic == 0 else "0.10.x Record/Fetcher",
                   note="KIP-31: 'old consumers ... an exception will be thrown for unsupported version'; the old "
                        "client never checks the magic byte, so the failure is a CRC, codec or parse error")
            view.records.extend(r for r in recs if fetch_offset is None or r.offset >= fetch_offset)
            if err:
                view.error, view.error_message, view.error_offset = err[0], err[1], err[2]
                return view
            continue
        if b.is_control:
            for r in b.records():
                view.skipped.append((r.offset, "control record"))
            tr.add(f"control batch at {b.base_offset}", "skipped: consumers never return control records",
                   "CompletedFetch.nextFetchedRecord")
            continue
        _read_batch(b, view, fetch_offset, variant, tr)
    trailing = records.trailing
    if trailing is not None:
        tr.add("trailing bytes", f"{trailing.length} byte(s) ignored: {trailing.reason}",
               "ByteBufferLogInputStream.nextBatch", note="a fetch response may end inside a batch")
    return view


def _read_batch(b, view: ConsumerView, fetch_offset, variant, tr: Trace) -> None:
    src = {0: "AbstractLegacyRecordBatch", 1: "AbstractLegacyRecordBatch", 2: "DefaultRecordBatch"}[b.magic]
    wrapper_lat = b.timestamp_type == TimestampType.LOG_APPEND_TIME
    n_before = len(view.records)
    for r in b.records():
        if fetch_offset is not None and r.offset < fetch_offset:
            view.skipped.append((r.offset, f"below the fetch offset {fetch_offset}"))
            continue
        ts, ts_type = r.timestamp, r.timestamp_type
        if b.magic == 2:
            off_how = f"baseOffset {b.base_offset} + delta {r.offset_delta}"
            ts_how = (f"batch maxTimestamp {b.max_timestamp} (LogAppendTime)" if wrapper_lat else
                      f"baseTimestamp {b.base_timestamp} + delta {r.timestamp_delta}")
        elif not b.is_compressed:
            off_how = "the message's own offset"
            ts_how = "none (v0)" if b.magic == 0 else f"the message's own timestamp ({ts_type.kafka_name})"
        else:
            if b.magic == 0:
                off_how = f"inner offset {r.stored_offset} (v0 inner offsets are absolute)"
            elif b.last_offset == 0:
                off_how = f"inner offset {r.stored_offset} as is (wrapper offset 0, KAFKA-5365)"
            else:
                off_how = (f"wrapper {b.last_offset} − last inner + inner {r.stored_offset} (KIP-31 relative offsets)")
            if r.magic == 0:
                ts_how = "none (v0 inner message)"
            elif variant == "seed":
                if r.stored_timestamp != NO_TIMESTAMP:
                    ts, ts_how = r.stored_timestamp, "the inner timestamp (seed 000 §4.1.1: not -1)"
                else:
                    ts, ts_how = b.max_timestamp, "the wrapper's timestamp (seed 000 §4.1.2: inner is -1)"
            elif wrapper_lat:
                ts_how = f"the wrapper's {b.max_timestamp} (LogAppendTime wrapper overrides inner {r.stored_timestamp})"
            else:
                ts_how = f"the inner message's own {r.stored_timestamp} (CreateTime wrapper; -1 stays -1 in Kafka)"
        view.records.append(ConsumedRecord(r.offset, ts, ts_type, r.key, r.value, r.headers, b.magic,
                                           r.stored_offset if r.stored_offset is not None else r.offset_delta,
                                           r.stored_timestamp, f"offset: {off_how}; timestamp: {ts_how}"))
    got = view.records[n_before:]
    if got:
        tr.add(f"v{b.magic} {'wrapper' if b.magic < 2 and b.is_compressed else 'batch'} at {b.position}",
               f"{len(got)} record(s), offsets {got[0].offset}..{got[-1].offset}", src,
               first=got[0].derivation, timestampType=b.timestamp_type.kafka_name)


# ------------------------------------------------------------------------------------------------
# an old client parsing a newer entry with its own layout
_OLD_CODECS = {0: 4, 1: 4}  # 0.9 / 0.10 know codec ids 0..3 (none, gzip, snappy, lz4)


def old_client_read(data: bytes, pos: int, client_magic: int, tp: str = "topic-0"):
    """Parse the entry at ``pos`` as a 0.9 (``client_magic=0``) or 0.10 (``1``) Java consumer would.

    Returns ``(records, error)``; ``error`` is ``(exception, message, offset)`` or None.
    """
    head = LEGACY_V0.read(data, pos)  # offset, size, crc, magic, attributes: where every old client looks
    offset, size = head["offset"], head["size"]
    codec_id = head["attributes"] & LEGACY_COMPRESSION_CODEC_MASK
    if codec_id >= _OLD_CODECS[client_magic]:
        return [], ("IllegalArgumentException", f"Unknown compression type id: {codec_id}", offset)
    stored = head["crc"]
    computed = message_checksum(data, pos, pos + LOG_OVERHEAD + size)
    magic = head["magic"] & 0xFF
    old_layout_magic = 0 if client_magic == 0 or magic not in (0, 1) else magic  # a 0.10 client switches on 0/1
    if codec_id != 0:
        key, value, err = _old_key_value(data, pos, old_layout_magic)
        if client_magic == 0 and err is None and value is None:
            # the value length read from misplaced bytes is -1: Record.value() is null, and the 0.9 client's
            # RecordsIterator decompresses it through Compressor.wrapForInput(new ByteBufferInputStream(null)),
            # whose first read throws (as 0.9.0.1's consumer logged live on a gzip v1 wrapper, seed004-migration)
            return [], ("NullPointerException", f"the {CompressionType(codec_id).kafka_name} wrapper's value read "
                        f"from a v{magic} entry is null (value length -1): ByteBufferInputStream.read on a null "
                        "buffer", offset)
        return [], ("KafkaException", f"the {CompressionType(codec_id).kafka_name} 'message set' read from a "
                    f"v{magic} entry is not one: {err or 'decompression of misplaced bytes fails'}", offset)
    if stored != computed:
        if client_magic == 0:
            return [], ("InvalidRecordException",
                        f"Record is corrupt (stored crc = {stored}, computed crc = {computed})", offset)
        return [], ("KafkaException", f"Record for partition {tp} at offset {offset} is corrupt (stored crc = "
                    f"{stored}, computed crc = {computed})", offset)
    key, value, err = _old_key_value(data, pos, old_layout_magic)
    if err:
        exc = "KafkaException" if client_magic == 0 else "SerializationException"
        return [], (exc, f"Error deserializing key/value for partition {tp} at offset {offset}", offset)
    ts = NO_TIMESTAMP
    return [ConsumedRecord(offset, ts, TimestampType.NO_TIMESTAMP_TYPE, key, value, (), magic, offset, None,
                           f"misparsed: a v{magic} message read with the v{old_layout_magic} layout "
                           "(key length taken from the timestamp field)", garbled=True)], None


def _old_key_value(data: bytes, pos: int, layout_magic: int):
    """``Record.key()/value()`` of the old client: the entry read with the v``layout_magic`` layout."""
    try:
        m = LegacyMessage(data, pos, layout_magic=layout_magic)
    except CorruptRecordError as e:
        return None, None, e.reason
    return (None if m.key is None else bytes(m.key)), (None if m.value is None else bytes(m.value)), None
