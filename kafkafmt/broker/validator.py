"""The leader's produce path: ``UnifiedLog.analyzeAndValidateRecords`` + ``LogValidator`` (Kafka 3.9).

:func:`validate_messages_and_assign_offsets` takes the bytes of one partition's produce payload and
a :class:`~kafkafmt.config.LogConfig`, and returns what the leader would append
(:class:`ValidationResult`), or raises the exception Kafka raises, with Kafka's message.  Every
decision is recorded in a :class:`~kafkafmt.broker.trace.Trace` (``result.trace``, or
``error.trace`` on failure).  The input is never modified.

Order of checks (each cites its Kafka source):

1. When ``produce_version`` is given (a Produce request): ``KafkaApis.handleProduceRequest``'s
   check that transactional records come with a transactional id (no authorizer is modelled: any
   id is authorized), then ``ProduceRequest.validateRecords`` (v≥3: exactly one v2 batch; v<7: no zstd).
2. ``UnifiedLog.analyzeAndValidateRecords`` (:mod:`kafkafmt.broker.append`, the log's too), per batch: a
   CLIENT v2 batch must have baseOffset 0; ``max.message.bytes`` (RecordTooLargeException);
   ``batch.isValid()`` (v2 size + CRC32C, legacy **outer** CRC32) else CorruptRecordException; the
   source codec is the last non-none codec; a REPLICATION append (whose replica's leader epoch is
   ``partition_leader_epoch``) stops at the first batch of a newer leader epoch.  A partial trailing
   batch is trimmed silently (``trimInvalidBytes``).
3. ``LogValidator.validateMessagesAndAssignOffsets`` (kafka-rules §4.3-4.8)::

       source == NONE and target == NONE:
           every batch already at toMagic → assignOffsetsNonCompressed       (in place)
           otherwise                      → convertAndAssignOffsetsNonCompressed
       else                               → validateMessagesAndAssignOffsetsCompressed
                                              (in place, or rebuilt with MemoryRecordsBuilder)

4. Back in ``UnifiedLog.append``: if the size may have changed, every batch is checked against
   ``max.message.bytes`` again, and the whole set against ``segment.bytes``.

The Kafka line (``BrokerConfig.kafka_line``, rows of :mod:`kafkafmt.kafka_lines`) decides which Produce
versions are answered (rows ``produce.min_version`` / ``produce.max_version``: on 4.4 a request below v3 is
not answered, KIP-896), the newest message format the broker reads (``produce.max_magic``: v0 before
KIP-32, v1 before KIP-98) and the format it writes (``produce.record_version``: v0 on 0.9, the topic's
``message.format.version`` until 3.9, v2 from 4.0, KIP-724); the rest is the same LogValidator (checked
against 3.9.2's and 4.4.0's jars).

Seeds vs Kafka (see the test-suite for each): KIP-32 (seed 000 §2.1.1) says a LogAppendTime broker
overwrites inner timestamps that are not -1 and recompresses; Kafka never does: it only rewrites the
wrapper/batch timestamp and sets the LogAppendTime attribute bit, and readers substitute it.
KIP-32 §8.2 says a threshold of 0 makes the timestamp "equivalent to LogAppendTime"; Kafka rejects
every record whose timestamp is not exactly ``now`` (so the accepted ones do equal the append time),
and lets -1 through.  KIP-31 (seed 004) says the broker "decompresses to verify the CRC and relative
offsets" and reassigns non-contiguous relative offsets: Kafka does so by rebuilding the wrapper
(KAFKA-9669, since 2.5.1 and 2.6.0; 2.4.0 … 2.5.0 rejected such wrappers, KAFKA-8106: row
``produce.legacy_inner_offsets``; recompression included).
"""
from __future__ import annotations

import dataclasses
import time
import zlib
from dataclasses import dataclass, field

from .. import kafka_lines
from ..compression import kafka_line_codecs
from ..config import LogConfig, record_version
from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    LOG_OVERHEAD,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    CompressionType,
    TimestampType,
)
from ..errors import (
    CorruptRecordError,
    IllegalArgumentError,
    InvalidRecordError,
    InvalidTimestampError,
    KafkaFmtError,
    OffsetsOutOfOrderError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    RecordValidationError,
    TransactionalIdAuthorizationError,
    UnexpectedAppendOffsetError,
    UnsupportedCompressionError,
    UnsupportedForMessageFormatError,
    UnsupportedVersionError,
)
from ..layout import LEGACY_V0
from ..records import MemoryRecords, MemoryRecordsBuilder
from ..records.batch import RecordBatch
from ..records.legacy import record_overhead, timestamp_type_of
from . import inplace
from .append import UNKNOWN_OFFSET, AppendOrigin, LogAppendInfo, analyze_and_validate_records
from .inplace import UnsupportedOperationError
from .recordview import BrokerRecord, iter_batch_records
from .trace import Trace

__all__ = ["validate_messages_and_assign_offsets", "ValidationResult", "ValidationStats",
           "PATH_IN_PLACE", "PATH_CONVERT", "PATH_COMPRESSED_IN_PLACE", "PATH_COMPRESSED_REBUILT",
           "PATH_FOLLOWER", "PATH_EMPTY", "UnsupportedOperationError", "OffsetsOutOfOrderError",
           "UnexpectedAppendOffsetError", "batch_header_size", "java_long", "magic_for_produce_version"]


PATH_IN_PLACE = "assignOffsetsNonCompressed"
PATH_CONVERT = "convertAndAssignOffsetsNonCompressed"
PATH_COMPRESSED_IN_PLACE = "validateMessagesAndAssignOffsetsCompressed(in place)"
PATH_COMPRESSED_REBUILT = "validateMessagesAndAssignOffsetsCompressed(rebuilt)"
PATH_FOLLOWER = "appendAsFollower(offsets and timestamps kept)"
PATH_EMPTY = "nothing to append (UnifiedLog.append: validBytes <= 0)"

_LV = "LogValidator"






def java_long(v: int) -> int:
    """Wrap ``v`` to a signed 64-bit value, as Java's long arithmetic overflows."""
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= (1 << 63) else v


def batch_header_size(magic: int, codec: CompressionType) -> int:
    """``AbstractRecords.recordBatchHeaderSizeInBytes``: 61 for v2, the wrapper for compressed legacy, else 0."""
    if magic > 1:
        return RECORD_BATCH_OVERHEAD
    if codec != CompressionType.NONE:
        return LOG_OVERHEAD + record_overhead(magic)
    return 0


@dataclass
class ValidationStats:
    """``RecordValidationStats``: temporaryMemoryBytes, numRecordsConverted, conversionTimeNanos."""

    temporary_memory_bytes: int = 0
    num_converted_records: int = 0
    conversion_time_ns: int = 0


@dataclass
class ValidationResult:
    """What the leader appends (``LogValidator.ValidationResult`` plus kafkafmt's explanations).

    ``log_append_time_ms`` is LogValidator's ``logAppendTimeMs`` (``now`` on every path; the produce
    response carries it only for LogAppendTime topics: :attr:`response_log_append_time`).
    ``shallow_offset_of_max_timestamp`` has Kafka 3.8+ semantics (KAFKA-16310): the LAST offset of
    the batch holding the max timestamp, except uncompressed v1 + LogAppendTime (the first offset)
    and v0 (-1).
    """

    records: bytes
    log_append_time_ms: int
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    message_size_maybe_changed: bool
    converted: bool
    recompressed: bool
    path: str
    first_offset: int
    last_offset: int
    next_offset: int
    stats: ValidationStats
    trace: Trace
    to_magic: int = 2
    source_compression: CompressionType = CompressionType.NONE
    target_compression: CompressionType = CompressionType.NONE
    trimmed_bytes: int = 0
    record_count: int = 0
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    metrics: dict = field(default_factory=dict)

    @property
    def response_log_append_time(self) -> int:
        """``ProduceResponse`` logAppendTime: ``now`` for LogAppendTime topics, else -1."""
        return self.log_append_time_ms if self.timestamp_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP

    def to_dict(self) -> dict:
        return {"path": self.path, "first_offset": self.first_offset, "last_offset": self.last_offset,
                "next_offset": self.next_offset, "max_timestamp": self.max_timestamp,
                "shallow_offset_of_max_timestamp": self.shallow_offset_of_max_timestamp,
                "log_append_time_ms": self.log_append_time_ms,
                "message_size_maybe_changed": self.message_size_maybe_changed, "converted": self.converted,
                "recompressed": self.recompressed, "to_magic": self.to_magic,
                "source_compression": self.source_compression.kafka_name,
                "target_compression": self.target_compression.kafka_name, "size": len(self.records),
                "trimmed_bytes": self.trimmed_bytes, "record_count": self.record_count,
                "temporary_memory_bytes": self.stats.temporary_memory_bytes,
                "num_converted_records": self.stats.num_converted_records,
                "conversion_time_ns": self.stats.conversion_time_ns}


#: per-batch trace steps are recorded for the first batches only (a produce of 10,000 v1 messages stays readable)
_MAX_BATCH_STEPS = 20

#: LogValidator.MetricsRecorder counters (kafkafmt reports them on results and errors)
_ZERO_METRICS = {"invalidMagic": 0, "invalidOffset": 0, "invalidSequence": 0, "invalidChecksums": 0,
                 "noKeyCompactedTopic": 0}


class _Ctx:
    """State shared by the LogValidator paths (one call)."""

    def __init__(self, buf, batches, config: LogConfig, *, offset, now, origin, ple, tp, trace, to_magic,
                 source, target, max_decompressed_bytes):
        self.buf = buf
        self.batches: list[RecordBatch] = batches
        self.config = config
        self.counter = offset
        self.now = now
        self.origin = origin
        self.ple = ple
        self.tp = tp
        self.trace = trace
        self.to_magic = to_magic
        self.source = source
        self.target = target
        self.ts_type = config.timestamp_type
        self.before = config.effective_before_max_ms
        self.after = config.effective_after_max_ms
        self.max_bytes = max_decompressed_bytes
        self.metrics = dict(_ZERO_METRICS)
        #: how a compressed v1 wrapper's inner offsets are read (KAFKA-4390, KAFKA-5365)
        self.legacy_inner_offsets_base = kafka_lines.value("produce.legacy_inner_offsets_base",
                                                           config.broker.kafka_line)


def _raise(err: KafkaFmtError, trace: Trace, rule: str, source: str, **values):
    trace.add(rule, f"rejected: {err.kafka_exception}: {err.reason}", source, **values)
    raise err


# ------------------------------------------------------------------------------------------------
# public entry point
def validate_messages_and_assign_offsets(records, config: LogConfig | None = None, *, offset: int = 0,
                                         now: int | None = None, origin: str | AppendOrigin = "CLIENT",
                                         partition_leader_epoch: int = 0, produce_version: int | None = None,
                                         transactional_id: str | None = None, topic: str = "topic", partition: int = 0,
                                         pre_checks: bool = True,
                                         source_compression: CompressionType | None = None,
                                         max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                                         ) -> ValidationResult:
    """Validate one partition's produce payload and assign offsets, as the Kafka 3.9 leader does (or the
    leader of the Kafka line ``config.broker.kafka_line``).

    ``records``: bytes-like or :class:`~kafkafmt.records.MemoryRecords` (never modified).
    ``offset``: the log end offset (the first offset to assign).  ``now``: the broker clock in ms
    (default: the wall clock).  ``origin``: CLIENT, COORDINATOR (validated), REPLICATION or
    RAFT_LEADER (appended without LogValidator, as ``appendAsFollower`` / Raft appends do).
    ``pre_checks=False`` runs LogValidator alone (no baseOffset/CRC/size checks, trailing bytes
    kept), as a direct ``new LogValidator(...).validateMessagesAndAssignOffsets`` call does.
    ``source_compression`` overrides the codec the caller reports (default: computed as UnifiedLog does).
    ``transactional_id`` is the Produce request's transactional id (checked only with ``produce_version``).

    Raises the kafkafmt error mirroring Kafka's exception; the error carries ``.trace``.
    """
    config = config or LogConfig()
    origin = AppendOrigin.of(origin)
    now = int(time.time() * 1000) if now is None else int(now)
    data = bytes(records)  # bytes-like or MemoryRecords (which defines __bytes__); a private copy
    tp = f"{topic}-{partition}"
    tr = Trace(f"produce to {tp}: {len(data)} bytes, log end offset {offset}, now {now}, origin {origin}")
    tr.add("broker configuration", config.broker.describe(), "BrokerConfig (kafkafmt.config)",
           **config.broker.to_properties())
    tr.add("topic configuration", f"toMagic v{config.to_magic}, {config.timestamp_type.kafka_name}, "
           f"compression.type {config.broker_compression}", "LogConfig", **config.describe())
    line = config.broker.kafka_line
    written = kafka_lines.value("produce.record_version", line)
    if written != "message.format.version":
        row = kafka_lines.row("produce.record_version", line) or kafka_lines.rows("produce.record_version")[0]
        where = ("UnifiedLog: LogValidator toMagic = RecordBatch.CURRENT_MAGIC_VALUE" if written == 2
                 else "Message.CurrentMagicValue: the broker knows one format")
        tr.add(f"Kafka line {line}", f"every topic is written in v{written} (no message.format.version)",
               f"{row.source} ({where})", kafka_line_row=row.key)
    elif config.message_format_ignored and record_version(config.message_format_version) != 2:
        tr.add("message.format.version ignored", "IBP >= 3.0-IV1: the topic is written in v2",
               "LogConfig.shouldIgnoreMessageFormatVersion (KIP-724)",
               message_format_version=config.message_format_version,
               inter_broker_protocol_version=config.inter_broker_protocol_version)
    try:
        with kafka_line_codecs(line):  # a rebuilt batch is compressed by the line's libraries (rows codec.*)
            result = _validate(bytearray(data), config, offset=offset, now=now, origin=origin,
                               ple=partition_leader_epoch, produce_version=produce_version, tp=tp, trace=tr,
                               transactional_id=transactional_id,
                               pre_checks=pre_checks, source_override=source_compression,
                               max_decompressed_bytes=max_decompressed_bytes)
        if config.broker.kip228_enabled and result.to_magic == 2:
            result = _kip228_extend(result, tr)
        return result
    except KafkaFmtError as e:
        e.trace = tr
        if not hasattr(e, "metrics"):
            e.metrics = dict(_ZERO_METRICS)
        if not tr.steps or not tr.steps[-1].decision.startswith("rejected"):
            tr.add("append rejected", f"{e.kafka_exception}: {e.reason}", type(e).__name__)
        raise


def _kip228_extend(result: ValidationResult, tr: Trace) -> ValidationResult:
    """Seed 002's new broker (``kafkafmt.kip228.enable``, never in Kafka): v2 batches are stored with
    the isTimestampExtended bit, an old NO_TIMESTAMP (-1) turned into Long.MIN_VALUE."""
    from ..records.kip228 import convert_to_extended, is_extended
    before = [is_extended(b) for b in MemoryRecords(result.records).batches()]
    if all(before):
        return result
    extended = convert_to_extended(result.records)
    batches = list(MemoryRecords(extended).batches())
    tr.add("KIP-228 extended timestamps", f"{before.count(False)} batch(es) rebuilt with isTimestampExtended; "
           "-1 (old NO_TIMESTAMP) stored as Long.MIN_VALUE", "seed 002 (KIP-228, proposed, never adopted)",
           note="\"Broker should convert old NO_TIMESTAMP=−1L to new NO_TIMESTAMP_EXTENDED=Long.MIN_VALUE.\"")
    return dataclasses.replace(result, records=extended, max_timestamp=max(b.max_timestamp for b in batches),
                               message_size_maybe_changed=True)


def _validate(buf: bytearray, config: LogConfig, *, offset, now, origin, ple, produce_version, tp, trace,
              transactional_id=None,
              pre_checks, source_override, max_decompressed_bytes) -> ValidationResult:
    if produce_version is not None:
        _request_version_check(config, produce_version, trace)
        _transactional_id_check(buf, transactional_id, trace)
        _produce_request_checks(buf, produce_version, trace)

    mr = MemoryRecords(buf)
    batches = list(mr.batches())
    _magic_known_check(config, batches, trace)
    trailing = mr.trailing
    valid_end = trailing.position if trailing is not None else len(buf)
    trace.add("parse batches", f"{len(batches)} whole batch(es), magics {[b.magic for b in batches]}",
              "ByteBufferLogInputStream.nextBatch", valid_bytes=valid_end,
              trailing_bytes=0 if trailing is None else trailing.length)

    source = CompressionType.NONE
    for b in batches:
        if b.compression != CompressionType.NONE:
            source = b.compression
    if source_override is not None:
        source = CompressionType(source_override)

    if pre_checks:
        info = analyze_and_validate_records(
            buf, origin=origin, leader_epoch=ple, max_message_bytes=config.max_message_bytes, topic_partition=tp,
            ignore_record_size=origin is AppendOrigin.REPLICATION,  # appendAsFollower: ignoreRecordSize = true
            require_offsets_monotonic=origin in (AppendOrigin.REPLICATION, AppendOrigin.RAFT_LEADER),
            batches=batches, trace=trace)
        if info.skipped_batches:  # a newer leader epoch's batches are not appended (trimInvalidBytes)
            valid_end = min(valid_end, info.valid_bytes)
            trailing = trailing if trailing is not None and trailing.position < valid_end else None
        if valid_end < len(buf):
            if trailing is not None:
                trace.add("trim invalid bytes", f"{trailing.length} trailing byte(s) dropped: {trailing.reason}",
                          "UnifiedLog.trimInvalidBytes", position=trailing.position)
            # a copy, not ``del buf[valid_end:]``: the batches hold views into ``buf``
            buf = buf[:valid_end]
            batches = list(MemoryRecords(buf).batches())
        if valid_end == 0:
            trace.add("nothing to append", "no whole batch: appendInfo returned as is", "UnifiedLog.append",
                      validBytes=0)
            return ValidationResult(b"", NO_TIMESTAMP, NO_TIMESTAMP, -1, False, False, False, PATH_EMPTY, -1, -1,
                                    offset, ValidationStats(), trace, to_magic=config.to_magic,
                                    source_compression=source, timestamp_type=config.timestamp_type)
        if origin in (AppendOrigin.REPLICATION, AppendOrigin.RAFT_LEADER):
            return _follower_append(buf, batches, config, info, offset, now, origin, tp, trace, source)

    to_magic = config.to_magic
    target = config.target_compression(source)
    trace.add("source and target compression",
              f"source {source.kafka_name}, target {target.kafka_name}",
              "UnifiedLog.append / BrokerCompressionType.targetCompression",
              sourceCompression=source.kafka_name, compression_type=config.broker_compression,
              targetCompression=target.kafka_name)
    ctx = _Ctx(buf, batches, config, offset=offset, now=now, origin=origin, ple=ple, tp=tp, trace=trace,
               to_magic=to_magic, source=source, target=target, max_decompressed_bytes=max_decompressed_bytes)

    try:
        result = _run_log_validator(ctx)
    except KafkaFmtError as e:
        e.metrics = dict(ctx.metrics)
        raise
    result.metrics = ctx.metrics
    if pre_checks:
        _post_checks(result, config, tp, trace)
    trace.add("result", f"{result.path}: offsets {result.first_offset}..{result.last_offset}, "
              f"maxTimestamp {result.max_timestamp}, shallowOffsetOfMaxTimestamp "
              f"{result.shallow_offset_of_max_timestamp}", "LogValidator.ValidationResult",
              size=len(result.records), messageSizeMaybeChanged=result.message_size_maybe_changed,
              converted=result.converted, recompressed=result.recompressed)
    return result


def _run_log_validator(ctx: _Ctx) -> ValidationResult:
    """``LogValidator.validateMessagesAndAssignOffsets``: the three-way decision (kafka-rules §4.3)."""
    trace, batches, to_magic, source, target = ctx.trace, ctx.batches, ctx.to_magic, ctx.source, ctx.target
    if source == CompressionType.NONE and target == CompressionType.NONE:
        matching = all(b.magic == to_magic for b in batches)
        trace.add("decision tree", "uncompressed in and out: " + (
            f"every batch is v{to_magic} → assign offsets in place" if matching else
            f"some batch is not v{to_magic} → convert"), "LogValidator.validateMessagesAndAssignOffsets",
            toMagic=to_magic, hasMatchingMagic=matching)
        result = _assign_in_place(ctx) if matching else _convert_non_compressed(ctx)
    else:
        trace.add("decision tree", "compressed input or output → validateMessagesAndAssignOffsetsCompressed",
                  "LogValidator.validateMessagesAndAssignOffsets", sourceCompression=source.kafka_name,
                  targetCompression=target.kafka_name)
        result = _validate_compressed(ctx)
    return result


# ------------------------------------------------------------------------------------------------
# request-level and UnifiedLog checks
def _request_version_check(config: LogConfig, version: int, trace: Trace) -> None:
    """The Produce versions the line parses (rows ``produce.max_version``, ``produce.min_version``): a newer
    version than its release knows, or one older than KIP-896 (Kafka 4.0) left, is not parsed; the broker
    closes the connection."""
    line = config.broker.kafka_line
    newest = kafka_lines.value("produce.max_version", line)
    if version > newest:
        row = kafka_lines.row("produce.max_version", line)
        _raise(UnsupportedVersionError(f"Produce v{version} is not known to Kafka {line} (newest v{newest}): "
                                       "no response, the broker closes the connection"), trace,
               "produce request version", f"{row.source} ({row.where})", produce_version=version, newest=newest,
               kafka_line_row=row.key)
    oldest = kafka_lines.value("produce.min_version", line)
    if version < oldest:
        row = kafka_lines.change("produce.min_version")
        _raise(UnsupportedVersionError(f"Produce v{version} is not supported by Kafka {line} (oldest v{oldest}): "
                                       "no response, the broker closes the connection"), trace,
               "produce request version", f"{row.source} (ApiKeys.PRODUCE.oldestVersion)",
               produce_version=version, oldest=oldest, kafka_line_row=row.key)
    if kafka_lines.row("produce.min_version", line) is not None:
        trace.add("produce request version", f"v{version} >= v{oldest}: answered by Kafka {line}",
                  "KIP-896 (ApiKeys.PRODUCE.oldestVersion)", kafka_line_row="produce.min_version")


def _magic_known_check(config: LogConfig, batches, trace: Trace) -> None:
    """Row ``produce.max_magic``: a broker older than a message format cannot read it (v1 came with KIP-32
    in 0.10.0, v2 with KIP-98 in 0.11).

    A v2 batch in a Produce version a 0.10 broker answers (v2: kafka-python pinned to 0.11 sends it so) is
    read as a legacy message set: its bytes 12-15 (the batch's partitionLeaderEpoch) as the message's CRC,
    checked first (``Log.analyzeAndValidateMessageSet``: ``Message.ensureValid``, 0.10.0.1 / 0.10.1.1;
    ``Record.ensureValid``, 0.10.2.2), so the broker answers CORRUPT_MESSAGE (CorruptRecordException, error 2),
    as 0.10.0.1, 0.10.1.1 and 0.10.2.2 answered live; only a batch whose leader-epoch bytes happened to be the
    legacy CRC would get as far as its magic."""
    line = config.broker.kafka_line
    newest = kafka_lines.value("produce.max_magic", line)
    newer = sorted({b.magic for b in batches if b.magic > newest})
    if newer and newest == 1:
        crc_at, magic_at = LEGACY_V0.offset_of("crc"), LEGACY_V0.offset_of("magic")  # the CRC covers magic … end
        for batch in batches:
            raw = bytes(batch.raw)
            stored = int.from_bytes(raw[crc_at:crc_at + 4], "big")
            computed = zlib.crc32(raw[magic_at:])
            if batch.magic == 2 and stored != computed:
                row = kafka_lines.row("produce.max_magic", line)
                _raise(CorruptRecordError(f"Message is corrupt (stored crc = {stored}, computed crc = "
                                          f"{computed}): a v2 batch read as a legacy message by Kafka {line}"),
                       trace, "message format", f"{row.source} ({row.where}); Message.ensureValid",
                       magics=newer, newest=newest, kafka_line_row=row.key)
    if newer:
        row = next(r for r in kafka_lines.rows("produce.max_magic") if r.after == newer[0])
        _raise(UnsupportedVersionError(f"message format v{newer[0]} is not known to Kafka {line} (newest "
                                       f"v{newest}; v{newer[0]} came in {row.release} with {row.source})"), trace,
               "message format", f"{row.source} ({row.where})", magics=newer, newest=newest,
               kafka_line_row=row.key)


def _transactional_id_check(buf, transactional_id: str | None, trace: Trace) -> None:
    src = "KafkaApis.handleProduceRequest"
    has_txn = any(b.is_transactional for b in MemoryRecords(buf).batches())
    if has_txn and transactional_id is None:
        _raise(TransactionalIdAuthorizationError("Transactional Id authorization failed."), trace,
               "transactional records need a transactional id", src,
               note="checked for the whole request before any record validation; the broker answers "
                    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53)")
    trace.add("transactional id", "transactional records with an id" if has_txn else "no transactional records",
              src, transactional_id=transactional_id)


def magic_for_produce_version(version: int) -> int:
    """The message format a ProduceRequest of ``version`` carries: v0/v1 → v0, v2 → v1 (KIP-32), v3+ → v2
    (KIP-98) (``ProduceRequest`` schema history)."""
    return 0 if version <= 1 else (1 if version == 2 else 2)


def _produce_request_checks(buf, version: int, trace: Trace) -> None:
    src = "ProduceRequest.validateRecords"
    usual = magic_for_produce_version(version)
    trace.add("produce request version", f"v{version} normally carries message format v{usual}", src,
              note="ProduceRequest v0/v1 = MessageAndOffset v0, v2 = v1 (seed 000 phase 1/2, KIP-32); the broker "
                   "does not enforce the magic below v3 (comment in ProduceRequest.validateRecords)",
              produce_version=version)
    if version < 3:
        return
    batches = list(MemoryRecords(buf).batches())
    if not batches:
        _raise(InvalidRecordError(f"Produce requests with version {version} must have at least one record batch "
                                  "per partition"), trace, "produce v3+: at least one batch", src)
    first = batches[0]
    if first.magic != 2:
        _raise(InvalidRecordError(f"Produce requests with version {version} are only allowed to contain record "
                                  "batches with magic version 2"), trace, "produce v3+: magic 2 only", src,
               magic=first.magic)
    if version < 7 and first.compression == CompressionType.ZSTD:
        _raise(UnsupportedCompressionError(f"Produce requests with version {version} are not allowed to use "
                                           "ZStandard compression"), trace, "produce < v7: no zstd", src)
    if len(batches) > 1:
        _raise(InvalidRecordError(f"Produce requests with version {version} are only allowed to contain exactly "
                                  "one record batch per partition"), trace, "produce v3+: exactly one batch", src,
               batches=len(batches))
    trace.add("produce request records", "one v2 batch: ok", src)


def _follower_append(buf, batches, config, info: LogAppendInfo, leo, now, origin, tp, trace,
                     source) -> ValidationResult:
    src = ("UnifiedLog.appendAsFollower" if origin is AppendOrigin.REPLICATION
           else "UnifiedLog.appendAsLeader(RAFT_LEADER)")
    trace.add("no LogValidator", "offsets, timestamps and codecs are taken as given", src,
              note="seed 000 §3: the follower indexes the wrapper/batch timestamp (the max of its inner "
                   "messages), it does not look inside compressed messages")
    first = info.first_or_last_offset_of_first_batch
    if first < leo:
        first_or_last = "First offset" if info.first_offset != UNKNOWN_OFFSET else "Last offset of the first batch"
        _raise(UnexpectedAppendOffsetError(
            f"Unexpected offset in append to {tp}. {first_or_last} {first} is less than the next offset {leo}."),
            trace, "append offset >= log end offset", "UnifiedLog.append")
    max_ts, shallow = info.max_timestamp, info.shallow_offset_of_max_timestamp
    trace.add("time index input", f"maxTimestamp {max_ts} at shallow offset {shallow}",
              "UnifiedLog.analyzeAndValidateRecords (max of batch.maxTimestamp)",
              note="seed 000 §3.1/§3.2: compressed → the wrapper timestamp; uncompressed → the message timestamp")
    last = info.last_offset
    return ValidationResult(bytes(buf), NO_TIMESTAMP, max_ts, shallow, False, False, False,
                            PATH_FOLLOWER, info.first_offset, last, last + 1, ValidationStats(), trace,
                            to_magic=config.to_magic, source_compression=source, target_compression=source,
                            record_count=0, timestamp_type=config.timestamp_type)


def _post_checks(result: ValidationResult, config: LogConfig, tp: str, trace: Trace) -> None:
    if result.message_size_maybe_changed:
        for b in MemoryRecords(result.records).batches():
            if b.size_in_bytes > config.max_message_bytes:
                # (sic) Kafka's message has no space between "to" and "partition"
                _raise(RecordTooLargeError(f"Message batch size is {b.size_in_bytes} bytes in append to"
                                           f"partition {tp} which exceeds the maximum configured size of "
                                           f"{config.max_message_bytes}."), trace,
                       "max.message.bytes after conversion", "UnifiedLog.append", size=b.size_in_bytes)
        trace.add("re-check sizes", "size may have changed: every batch still fits max.message.bytes",
                  "UnifiedLog.append", max_message_bytes=config.max_message_bytes)
    if len(result.records) > config.segment_bytes:
        _raise(RecordBatchTooLargeError(f"Message batch size is {len(result.records)} bytes in append to partition "
                                        f"{tp}, which exceeds the maximum configured segment size of "
                                        f"{config.segment_bytes}."), trace, "segment.bytes", "UnifiedLog.append")


# ------------------------------------------------------------------------------------------------
# LogValidator helpers
def _first_batch(ctx: _Ctx, source: CompressionType) -> RecordBatch:
    """``getFirstBatchAndMaybeValidateNoMoreBatches``."""
    src = "LogValidator.getFirstBatchAndMaybeValidateNoMoreBatches"
    if not ctx.batches:
        _raise(InvalidRecordError("Record batch has no batches at all"), ctx.trace, "at least one batch", src)
    first = ctx.batches[0]
    if (first.magic >= 2 or source != CompressionType.NONE) and len(ctx.batches) > 1:
        _raise(InvalidRecordError("Compressed outer record has more than one batch"), ctx.trace,
               "one batch for v2 or compressed input", src, batches=len(ctx.batches), first_magic=first.magic,
               sourceCompression=source.kafka_name,
               note="KAFKA-8428 (2.3): several batches are allowed only for uncompressed v0/v1 input")
    return first


def _validate_batch(ctx: _Ctx, first: RecordBatch, batch: RecordBatch, index: int) -> None:
    """``LogValidator.validateBatch``."""
    src = "LogValidator.validateBatch"
    tp, tr = ctx.tp, ctx.trace
    if first.magic != batch.magic:
        ctx.metrics["invalidMagic"] += 1
        _raise(InvalidRecordError(f"Batch magic {batch.magic} is not the same as the first batch's magic byte "
                                  f"{first.magic} in topic partition {tp}"), tr, "same magic as the first batch",
               src, batch=index)
    if ctx.origin is AppendOrigin.CLIENT:
        if batch.magic >= 2:
            base, last = batch.base_offset, batch.last_offset
            count_from_offsets = last - base + 1
            if count_from_offsets <= 0:
                ctx.metrics["invalidOffset"] += 1
                _raise(InvalidRecordError(f"Batch has an invalid offset range: [{base}, {last}] in topic partition "
                                          f"{tp}"), tr, "offset range", src, batch=index)
            count = batch.count
            if count <= 0:
                ctx.metrics["invalidOffset"] += 1
                _raise(InvalidRecordError(f"Invalid reported count for record batch: {count} in topic partition "
                                          f"{tp}"), tr, "record count > 0", src, batch=index, count=count)
            if count_from_offsets != count:
                ctx.metrics["invalidOffset"] += 1
                _raise(InvalidRecordError(f"Inconsistent batch offset range [{base}, {last}] and count of records "
                                          f"{count} in topic partition {tp}"), tr, "count matches offsets", src,
                       batch=index, count=count, countFromOffsets=count_from_offsets)
        if batch.is_control:
            ctx.metrics["invalidOffset"] += 1
            _raise(InvalidRecordError(f"Clients are not allowed to write control records in topic partition {tp}"),
                   tr, "no control batches from clients", src, batch=index)
        if batch.has_producer_id and batch.base_sequence < 0:
            ctx.metrics["invalidSequence"] += 1
            _raise(InvalidRecordError(f"Invalid sequence number {batch.base_sequence} in record batch with "
                                      f"producerId {batch.producer_id} in topic partition {tp}"), tr,
                   "idempotent batch needs a sequence", src, batch=index)
    if batch.is_transactional and ctx.to_magic < 2:
        _raise(UnsupportedForMessageFormatError(f"Transactional records cannot be used with magic version "
                                                f"{ctx.to_magic}"), tr, "transactions need v2", src, batch=index)
    if batch.has_producer_id and ctx.to_magic < 2:
        _raise(UnsupportedForMessageFormatError(f"Idempotent records cannot be used with magic version "
                                                f"{ctx.to_magic}"), tr, "idempotence needs v2", src, batch=index,
               note="seed 003: 'safe' mode would have downgraded such a batch; Kafka always rejects it")
    if index < _MAX_BATCH_STEPS:
        tr.add(f"batch {index}", f"v{batch.magic} {batch.compression.kafka_name} batch valid", src,
               origin=ctx.origin, producerId=batch.producer_id, transactional=batch.is_transactional,
               control=batch.is_control)


def _validate_record(ctx: _Ctx, batch: RecordBatch, rec: BrokerRecord, index: int):
    """``LogValidator.validateRecord``: returns (apiError, recordIndex, message) or None; raises for CRC."""
    tp = ctx.tp
    if not rec.has_magic(batch.magic):
        ctx.metrics["invalidMagic"] += 1
        return ("INVALID_RECORD", index, f"Record {rec}'s magic does not match outer magic {batch.magic} in topic "
                                         f"partition {tp}")
    if batch.magic <= 1 and batch.is_compressed:
        try:
            rec.ensure_valid()
        except CorruptRecordError as e:
            ctx.metrics["invalidChecksums"] += 1
            _raise(e, ctx.trace, "inner message CRC", "LogValidator.validateRecord (LegacyRecord.ensureValid)",
                   record_index=index, offset=rec.offset,
                   note="thrown at once as CorruptRecordException, not collected with the other record errors")
    if ctx.config.compacted and not rec.has_key:
        ctx.metrics["noKeyCompactedTopic"] += 1
        return ("INVALID_RECORD", index, f"Compacted topic cannot accept message without key in topic partition {tp}")
    return _validate_timestamp(ctx, batch, rec, index)


def _validate_timestamp(ctx: _Ctx, batch: RecordBatch, rec: BrokerRecord, index: int):
    """``LogValidator.validateTimestamp`` (KIP-32 / KIP-937); Java long overflow reproduced."""
    ts = rec.timestamp
    if ctx.ts_type == TimestampType.CREATE_TIME and ts != NO_TIMESTAMP:
        diff = java_long(ctx.now - ts)
        if diff > ctx.before or java_long(-diff) > ctx.after:
            return ("INVALID_TIMESTAMP", index,
                    f"Timestamp {ts} of message with offset {rec.offset} is out of range. The timestamp should be "
                    f"within [{java_long(ctx.now - ctx.before)}, {java_long(ctx.now + ctx.after)}]")
    elif batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
        return ("INVALID_TIMESTAMP", index, f"Invalid timestamp type in message {rec}. Producer should not set "
                                            "timestamp type to LogAppendTime.")
    return None


def _validate_record_compression(ctx: _Ctx, rec: BrokerRecord, index: int):
    """``LogValidator.validateRecordCompression`` (legacy inner messages; v2 records are never compressed)."""
    if ctx.source != CompressionType.NONE and rec.is_compressed:
        return ("INVALID_RECORD", index, "Compressed outer record should not have an inner record with a "
                                         f"compression attribute set: {rec}")
    return None


def _process_record_errors(ctx: _Ctx, errors: list, batch_index: int) -> None:
    """``LogValidator.processRecordErrors``: timestamp errors win; at most three shown in the message."""
    if not errors:
        return
    rec_errors = [(batch_index, idx, msg) for _, idx, msg in errors]
    src = "LogValidator.processRecordErrors"
    if any(api == "INVALID_TIMESTAMP" for api, _, _ in errors):
        err = RecordValidationError("One or more records have been rejected due to invalid timestamp", rec_errors,
                                    cause=InvalidTimestampError)
    else:
        shown = ", ".join(f"RecordError(batchIndex={idx}, message='{msg}')" for _, idx, msg in errors[:3])
        err = RecordValidationError(f"One or more records have been rejected due to {len(errors)} record errors "
                                    f"in total, and only showing the first three errors at most: [{shown}]",
                                    rec_errors, cause=InvalidRecordError)
    ctx.trace.add("record errors", f"{len(errors)} record error(s) in batch {batch_index}: "
                  f"RecordValidationException({err.cause.kafka_exception})", src,
                  errors=[f"#{idx}: {msg}" for _, idx, msg in errors])
    _raise(err, ctx.trace, "reject the batch", src)


def _records(ctx: _Ctx, batch: RecordBatch, *, skip_key_value: bool = False):
    return iter_batch_records(batch, skip_key_value=skip_key_value, max_decompressed_bytes=ctx.max_bytes,
                              legacy_inner_offsets_base=ctx.legacy_inner_offsets_base)


# ------------------------------------------------------------------------------------------------
# 4a: in place
def _assign_in_place(ctx: _Ctx) -> ValidationResult:
    """``LogValidator.assignOffsetsNonCompressed``: offsets, PLE and timestamps rewritten in place."""
    src = "LogValidator.assignOffsetsNonCompressed"
    tr, now, buf = ctx.trace, ctx.now, ctx.buf
    max_ts, shallow, initial = NO_TIMESTAMP, -1, ctx.counter
    first = _first_batch(ctx, CompressionType.NONE)
    n = 0
    for bi, batch in enumerate(ctx.batches):
        _validate_batch(ctx, first, batch, bi)
        max_batch_ts = NO_TIMESTAMP
        errors = []
        for idx, rec in enumerate(_records(ctx, batch)):
            err = _validate_record(ctx, batch, rec, idx)
            if err:
                errors.append(err)
            ctx.counter += 1
            n += 1
            if batch.magic > 0 and rec.timestamp > max_batch_ts:
                max_batch_ts = rec.timestamp
        _process_record_errors(ctx, errors, bi)
        if batch.magic > 0 and max_batch_ts > max_ts:
            max_ts, shallow = max_batch_ts, ctx.counter - 1
        last = ctx.counter - 1
        if bi == _MAX_BATCH_STEPS:
            tr.add("…", f"{len(ctx.batches) - bi} more batch(es) handled the same way (steps not shown)", src)
        tr = ctx.trace if bi < _MAX_BATCH_STEPS else Trace()  # later batches: steps discarded
        ch = inplace.set_last_offset(buf, batch.position, batch.magic, last)
        tr.add(f"batch {bi}: setLastOffset", f"{ch['field']} {ch['old']} → {ch['new']} (CRC untouched)",
               "RecordBatch.setLastOffset", lastOffset=last)
        if batch.magic >= 2:
            ch = inplace.set_partition_leader_epoch(buf, batch.position, 2, ctx.ple)
            tr.add(f"batch {bi}: setPartitionLeaderEpoch", f"{ch['old']} → {ch['new']} (outside the CRC)",
                   "DefaultRecordBatch.setPartitionLeaderEpoch")
        if batch.magic > 0:
            if ctx.ts_type == TimestampType.LOG_APPEND_TIME:
                ch = inplace.set_max_timestamp(buf, batch.position, batch.magic, TimestampType.LOG_APPEND_TIME, now)
                why = "LogAppendTime topic: batch time := now" + (
                    " (a v1 message's own timestamp field, seed 000 §2.1.2)" if batch.magic == 1 else
                    " (maxTimestamp + attribute bit 3; record deltas untouched)")
            else:
                ch = inplace.set_max_timestamp(buf, batch.position, batch.magic, TimestampType.CREATE_TIME,
                                               max_batch_ts)
                why = "CreateTime topic: maxTimestamp := max record timestamp"
            tr.add(f"batch {bi}: setMaxTimestamp", why + (f"; CRC {ch['old_crc']} → {ch['new_crc']}"
                                                          if ch["changed"] else "; unchanged, no-op"),
                   "RecordBatch.setMaxTimestamp", **{k: v for k, v in ch.items() if k != "crc_recomputed"})
    tr = ctx.trace
    if ctx.ts_type == TimestampType.LOG_APPEND_TIME:
        max_ts = now
        if ctx.to_magic == 0:
            max_ts, shallow = NO_TIMESTAMP, -1
        elif ctx.to_magic == 1:
            shallow = initial
        else:
            shallow = ctx.counter - 1
    tr.add("max timestamp", f"maxTimestamp {max_ts}, shallowOffsetOfMaxTimestamp {shallow}", src,
           note="3.8+ (KAFKA-16310): the last offset of the earliest batch holding the max; LogAppendTime: v1 → "
                "the first offset, v2 → the last, v0 → -1")
    return ValidationResult(bytes(buf), now, max_ts, shallow, False, False, False, PATH_IN_PLACE, initial,
                            ctx.counter - 1, ctx.counter, ValidationStats(), tr, to_magic=ctx.to_magic,
                            source_compression=ctx.source, target_compression=ctx.target, record_count=n,
                            timestamp_type=ctx.ts_type)


# ------------------------------------------------------------------------------------------------
# 4b: convert uncompressed
def _convert_non_compressed(ctx: _Ctx) -> ValidationResult:
    """``LogValidator.convertAndAssignOffsetsNonCompressed``: rebuilt uncompressed in ``toMagic``."""
    src = "LogValidator.convertAndAssignOffsetsNonCompressed"
    tr, now = ctx.trace, ctx.now
    start = time.perf_counter_ns()
    initial = ctx.counter
    # AbstractRecords.estimateSizeInBytes(toMagic, ..., records.records()) walks every record of every batch
    # before anything else, so a structurally broken record fails here first.
    for b in ctx.batches:
        for _ in _records(ctx, b):
            pass
    first = _first_batch(ctx, CompressionType.NONE)
    tr.add("convert", f"v{sorted({b.magic for b in ctx.batches})} → v{ctx.to_magic}, uncompressed", src,
           producerId=first.producer_id, producerEpoch=first.producer_epoch, baseSequence=first.base_sequence,
           isTransactional=first.is_transactional,
           note="seed 000 phase 2 §2.1 / seed 004: up-convert on produce (v0 → v1 gets timestamp -1 on a "
                "CreateTime topic); an older topic format down-converts")
    try:
        builder = MemoryRecordsBuilder(ctx.to_magic, CompressionType.NONE, ctx.ts_type, ctx.counter,
                                       log_append_time=now, producer_id=first.producer_id,
                                       producer_epoch=first.producer_epoch, base_sequence=first.base_sequence,
                                       is_transactional=first.is_transactional, partition_leader_epoch=ctx.ple)
    except IllegalArgumentError as e:
        _raise(e, tr, "MemoryRecordsBuilder constructor", "MemoryRecordsBuilder.<init>",
               note="the builder is created before validateBatch runs, so its IllegalArgumentException wins")
    n = 0
    for bi, batch in enumerate(ctx.batches):
        _validate_batch(ctx, first, batch, bi)
        errors = []
        for idx, rec in enumerate(_records(ctx, batch)):
            err = _validate_record(ctx, batch, rec, idx)
            if err:
                errors.append(err)
            if not errors:
                try:
                    builder.append_with_offset(ctx.counter, rec.timestamp, rec.key, rec.value, rec.headers)
                except IllegalArgumentError as e:
                    _raise(e, tr, "append converted record", "MemoryRecordsBuilder.appendWithOffset",
                           offset=ctx.counter, note="not an ApiException: the broker answers UNKNOWN_SERVER_ERROR")
                ctx.counter += 1
                n += 1
        _process_record_errors(ctx, errors, bi)
    try:
        out = builder.build()
    except IllegalArgumentError as e:
        _raise(e, tr, "close builder", "MemoryRecordsBuilder.close (validateProducerState)")
    info = builder.info()
    stats = ValidationStats(builder.uncompressed_bytes + batch_header_size(ctx.to_magic, CompressionType.NONE),
                            builder.num_records, time.perf_counter_ns() - start)
    tr.add("converted", f"{n} record(s) written as v{ctx.to_magic} at offsets {initial}..{ctx.counter - 1}",
           "MemoryRecordsBuilder.info", maxTimestamp=info.max_timestamp,
           shallowOffsetOfMaxTimestamp=info.shallow_offset_of_max_timestamp, size=len(out))
    return ValidationResult(out, now, info.max_timestamp, info.shallow_offset_of_max_timestamp, True, True, False,
                            PATH_CONVERT, initial, ctx.counter - 1, ctx.counter, stats, tr, to_magic=ctx.to_magic,
                            source_compression=ctx.source, target_compression=ctx.target, record_count=n,
                            timestamp_type=ctx.ts_type)


# ------------------------------------------------------------------------------------------------
# 4c: compressed
def _validate_compressed(ctx: _Ctx) -> ValidationResult:
    """``LogValidator.validateMessagesAndAssignOffsetsCompressed``: decide, validate the records, then
    assign in place or rebuild (three named steps, each recording its trace steps)."""
    first, in_place = _compressed_decide(ctx)
    validated, uncompressed_size, max_ts, in_place = _compressed_validate_records(ctx, first, in_place)
    if not in_place:
        return _build_and_assign(ctx, first, validated, uncompressed_size)
    return _compressed_assign_in_place(ctx, first, validated, uncompressed_size, max_ts)


_SRC_COMPRESSED = "LogValidator.validateMessagesAndAssignOffsetsCompressed"


def _compressed_decide(ctx: _Ctx) -> tuple[RecordBatch, bool]:
    """The first part of ``validateMessagesAndAssignOffsetsCompressed``: zstd and the IBP, and whether the
    batch may stay in place (same codec, same format, not v0; an uncompressed control batch always)."""
    src, tr = _SRC_COMPRESSED, ctx.trace
    if ctx.target == CompressionType.ZSTD and not ctx.config.ibp_supports_zstd:
        _raise(UnsupportedCompressionError("Produce requests to inter.broker.protocol.version < 2.1 broker are not "
                                           "allowed to use ZStandard compression"), tr, "zstd needs IBP >= 2.1", src,
               inter_broker_protocol_version=ctx.config.inter_broker_protocol_version)
    in_place = ctx.source == ctx.target
    tr.add("in place? (1) codec", f"source {ctx.source.kafka_name} {'==' if in_place else '!='} target "
           f"{ctx.target.kafka_name} → {'maybe in place' if in_place else 'rebuild'}", src,
           note="only the codec type counts, never the level (LogValidatorTest.testDifferentLevelDoesNotCause"
                "Recompression)")
    first = _first_batch(ctx, ctx.source)
    if first.magic != ctx.to_magic or ctx.to_magic == 0:
        in_place = False
        tr.add("in place? (2/3) format", f"batch v{first.magic}, topic v{ctx.to_magic} → rebuild", src,
               note="v0 inner offsets are absolute, so v0 is always rebuilt" if ctx.to_magic == 0 else
               "format conversion needs a rebuild")
    if ctx.source == CompressionType.NONE and first.is_control:
        in_place = True
        tr.add("control batch", "uncompressed control batch stays uncompressed → in place", src)
    return first, in_place


def _compressed_validate_records(ctx: _Ctx, first: RecordBatch, in_place: bool):
    """The record loop of ``validateMessagesAndAssignOffsetsCompressed``: every batch and record validated,
    the max timestamp taken, and in place given up when a v1/v2 inner offset is not the expected one
    (KAFKA-9669).  Returns (validated records, uncompressed size, max timestamp, in place)."""
    src, tr = _SRC_COMPRESSED, ctx.trace
    max_ts = NO_TIMESTAMP
    expected = 0
    validated: list[BrokerRecord] = []
    uncompressed_size = 0
    for bi, batch in enumerate(ctx.batches):
        _validate_batch(ctx, first, batch, bi)
        uncompressed_size += batch_header_size(ctx.to_magic, batch.compression)
        skip_kv = in_place and first.magic >= 2
        if skip_kv:
            tr.add(f"batch {bi}: iterator", "skipKeyValueIterator (keys/values not needed in place)",
                   "DefaultRecordBatch.skipKeyValueIterator")
        errors = []
        n_off_mismatch = 0
        for idx, rec in enumerate(_records(ctx, batch, skip_key_value=skip_kv)):
            exp = expected
            expected += 1
            err = _validate_record_compression(ctx, rec, idx) or _validate_record(ctx, batch, rec, idx)
            if err is None and batch.magic > 0 and ctx.to_magic > 0:
                if rec.timestamp > max_ts:
                    max_ts = rec.timestamp
                if rec.offset != exp:
                    if in_place:
                        tr.add("inner offsets", f"record {idx} has offset {rec.offset}, expected {exp} → rebuild",
                               src, note="KAFKA-9669 (2.6): non-contiguous v1 relative offsets are reassigned by "
                                         "rebuilding, not rejected (seed 004: mirrored compacted topics)")
                    n_off_mismatch += 1
                    in_place = False
            if err:
                errors.append(err)
            else:
                uncompressed_size += rec.size_in_bytes
                validated.append(rec)
        _process_record_errors(ctx, errors, bi)
        if bi < _MAX_BATCH_STEPS:
            tr.add(f"batch {bi}: records", f"{len(validated)} record(s) valid so far" +
                   (f", {n_off_mismatch} with unexpected offsets" if n_off_mismatch else ""),
                   "LogValidator.validateRecord", maxTimestamp=max_ts)
    return validated, uncompressed_size, max_ts, in_place


def _compressed_assign_in_place(ctx: _Ctx, first: RecordBatch, validated: list[BrokerRecord],
                                uncompressed_size: int, max_ts: int) -> ValidationResult:
    """The in-place end of ``validateMessagesAndAssignOffsetsCompressed``: last offset, max timestamp and
    partition leader epoch rewritten in the batch header (or v1 wrapper); the payload kept as is."""
    src, tr, now = _SRC_COMPRESSED, ctx.trace, ctx.now
    initial = ctx.counter
    ctx.counter += len(validated)
    last = ctx.counter - 1
    ch = inplace.set_last_offset(ctx.buf, first.position, first.magic, last)
    tr.add("setLastOffset", f"{ch['field']} {ch['old']} → {ch['new']}; compressed payload kept as is", src,
           note="seed 004 / KIP-31: only the wrapper (v1) or batch header (v2) changes, no recompression")
    if ctx.ts_type == TimestampType.LOG_APPEND_TIME:
        max_ts = now
    if ctx.to_magic >= 1:
        ch = inplace.set_max_timestamp(ctx.buf, first.position, first.magic, ctx.ts_type, max_ts)
        note = ""
        if ctx.ts_type == TimestampType.LOG_APPEND_TIME:
            note = ("seed 000 §2.1.1 says the broker overwrites inner timestamps that are not -1 and recompresses; "
                    "Kafka never does: it sets the wrapper/batch time and the LogAppendTime bit, inner bytes stay")
        else:
            note = "seed 000 §2.2.1: the wrapper/batch timestamp is the largest inner timestamp"
        tr.add("setMaxTimestamp", f"{ctx.ts_type.kafka_name} {max_ts}" + (
            f"; CRC {ch['old_crc']} → {ch['new_crc']}" if ch["changed"] else "; unchanged, no-op"),
            "RecordBatch.setMaxTimestamp", note=note)
    if ctx.to_magic >= 2:
        inplace.set_partition_leader_epoch(ctx.buf, first.position, 2, ctx.ple)
        tr.add("setPartitionLeaderEpoch", f"{ctx.ple} (outside the CRC)", "DefaultRecordBatch.setPartitionLeaderEpoch")
    stats = ValidationStats(uncompressed_size, 0, 0)
    if max_ts == NO_TIMESTAMP:
        tr.add("max timestamp", f"no timestamps, yet shallowOffsetOfMaxTimestamp = last offset {last}", src,
               note="golden quirk (a): the uncompressed path would report -1 here")
    return ValidationResult(bytes(ctx.buf), now, max_ts, last, False, False, False, PATH_COMPRESSED_IN_PLACE,
                            initial, last, ctx.counter, stats, tr, to_magic=ctx.to_magic,
                            source_compression=ctx.source, target_compression=ctx.target,
                            record_count=len(validated), timestamp_type=ctx.ts_type)


def _inner_messages_keep_own_timestamps(ctx: _Ctx) -> bool:
    """Whether a rebuilt v1 wrapper of a LogAppendTime topic keeps each inner message's own timestamp type
    and timestamp (row ``produce.rebuilt_legacy_inner``: Kafka before 0.11 converted each message on its
    own, ``Record.convert`` / ``Message.toFormatVersion``, and copied it; only the wrapper got LogAppendTime
    and the append time)."""
    if ctx.to_magic != 1 or ctx.ts_type != TimestampType.LOG_APPEND_TIME:
        return False
    line = ctx.config.broker.kafka_line
    if kafka_lines.value("produce.rebuilt_legacy_inner", line) != "converted":
        return False
    row = kafka_lines.rows("produce.rebuilt_legacy_inner")[0]
    ctx.trace.add("inner messages", f"Kafka {line}: each inner message keeps its own timestamp type and "
                  "timestamp (v0 → v1 CreateTime, -1); the wrapper alone gets LogAppendTime and the append time",
                  row.where, kafka_line_row=row.key, note=row.source)
    return True


def _build_and_assign(ctx: _Ctx, first: RecordBatch, validated: list[BrokerRecord],
                      uncompressed_size: int) -> ValidationResult:
    """``LogValidator.buildRecordsAndAssignOffsets``: MemoryRecordsBuilder in toMagic with the target codec."""
    src = "LogValidator.buildRecordsAndAssignOffsets"
    tr, now = ctx.trace, ctx.now
    start = time.perf_counter_ns()
    initial = ctx.counter
    level = ctx.config.target_level(ctx.source)
    tr.add("rebuild", f"{len(validated)} record(s) → v{ctx.to_magic} {ctx.target.kafka_name}", src,
           producerId=first.producer_id, producerEpoch=first.producer_epoch, baseSequence=first.base_sequence,
           isTransactional=first.is_transactional, level=level)
    try:
        builder = MemoryRecordsBuilder(ctx.to_magic, ctx.target, ctx.ts_type, ctx.counter, log_append_time=now,
                                       producer_id=first.producer_id, producer_epoch=first.producer_epoch,
                                       base_sequence=first.base_sequence, is_transactional=first.is_transactional,
                                       partition_leader_epoch=ctx.ple, level=level)
    except IllegalArgumentError as e:
        _raise(e, tr, "MemoryRecordsBuilder constructor", "MemoryRecordsBuilder.<init>",
               note="golden case R: zstd cannot be written below v2; IllegalArgumentException, not an ApiException")
    own_types = _inner_messages_keep_own_timestamps(ctx)
    for rec in validated:
        ts, own = rec.timestamp, None
        if own_types and rec.kind == "legacy":
            # Record.convert: a v0 message becomes v1 CreateTime with no timestamp, a v1 one stays as it is
            own = timestamp_type_of(rec.magic, rec.attributes)
            ts = NO_TIMESTAMP if rec.magic == 0 else ts
        try:
            builder.append_with_offset(ctx.counter, ts, rec.key_for_append(), rec.value_for_append(),
                                       rec.headers_for_append(), own_timestamp_type=own)
        except UnsupportedOperationError as e:
            _raise(e, tr, "append record", "PartialDefaultRecord.key",
                   note="golden quirk (c): the key-skipping iterator was chosen while in-place still looked "
                        "possible; the rebuild then needs the skipped keys")
        except IllegalArgumentError as e:
            _raise(e, tr, "append record", "MemoryRecordsBuilder.appendWithOffset", offset=ctx.counter)
        ctx.counter += 1
    try:
        out = builder.build()
    except IllegalArgumentError as e:
        _raise(e, tr, "close builder", "MemoryRecordsBuilder.close (validateProducerState)")
    info = builder.info()
    stats = ValidationStats(uncompressed_size + builder.uncompressed_bytes
                            + batch_header_size(ctx.to_magic, ctx.target),
                            builder.num_records, time.perf_counter_ns() - start)
    converted = any(b.magic != ctx.to_magic for b in ctx.batches)
    recompressed = ctx.target != CompressionType.NONE
    tr.add("rebuilt", f"offsets {initial}..{ctx.counter - 1}" + (", compressed again" if recompressed else ""),
           "MemoryRecordsBuilder.info", maxTimestamp=info.max_timestamp,
           shallowOffsetOfMaxTimestamp=info.shallow_offset_of_max_timestamp, size=len(out),
           numRecordsConverted=builder.num_records,
           note="LogValidator counts every rebuilt record as 'converted', even without a format change")
    return ValidationResult(out, now, info.max_timestamp, info.shallow_offset_of_max_timestamp, True, converted,
                            recompressed, PATH_COMPRESSED_REBUILT, initial, ctx.counter - 1, ctx.counter, stats, tr,
                            to_magic=ctx.to_magic, source_compression=ctx.source, target_compression=ctx.target,
                            record_count=len(validated), timestamp_type=ctx.ts_type)

