"""The fetch path: zero-copy or down-conversion, with the conversion's cost accounted (kafka-rules §5).

:func:`fetch` answers one partition of a FetchRequest from a log (bytes or MemoryRecords):

1. **Log read** (``LogSegment.read``): from the first batch whose last offset ≥ ``fetch_offset``,
   at most ``max_bytes``; from Fetch v3 on the first batch always fits (``minOneMessage``, KIP-74), before
   it the slice may hold part of the first batch only (:func:`min_one_message`); a slice may end inside
   a batch, which the client then ignores.
2. **Decide** (``KafkaApis.maybeConvertFetchedData``):

   * topic ``compression.type=zstd`` and fetch version < 10 → ``UNSUPPORTED_COMPRESSION_TYPE``;
   * the target magic comes from the **topic configuration** (``LogConfig.recordVersion``), not from
     the bytes on disk: format > v0 and fetch ≤ v1 → v0; format > v1 and fetch ≤ v3 → v1; else none;
   * conversion needed, a consumer (not a follower) and ``message.downconversion.enable=false`` →
     ``UNSUPPORTED_VERSION``;
   * no conversion → the file slice is sent untouched (zero-copy, ``sendfile``).

3. **Down-convert** lazily (``LazyDownConversionRecords``, KIP-283): the first chunk is one batch
   at a time until something converts (a zstd batch there → ``UNSUPPORTED_COMPRESSION_TYPE``), then
   chunks of ≤ 128 KiB of source batches, each through ``RecordsUtil.downConvert``
   (:func:`down_convert`): batches already at ≤ target magic are copied verbatim (even v0 into a v1
   fetch), control batches dropped, zstd refused, records below the fetch offset dropped from
   **uncompressed** sources only, headers dropped, offsets (and their gaps) kept, producer state
   dropped, the batch's codec kept (default level), a LogAppendTime batch's time carried over.
   On the wire (``LazyDownConversionRecordsSend``) the response holds ``max(source size, first
   converted chunk size)`` bytes, and a chunk is converted (and counted) only while bytes are still
   owed: longer output is cut (a partial batch the consumer ignores) and the chunks after it are never
   converted, shorter output is padded with an "overflow batch"; a zstd batch met after the first chunk
   also ends in the overflow batch and the error comes on the next fetch.

**The Kafka line** (``BrokerConfig.kafka_line``, rows of :mod:`kafkafmt.kafka_lines`): a Fetch version
the line does not answer gets no response (``connection_closed``; rows ``fetch.max_version`` and, from 4.0,
``fetch.min_version``: below v4, KIP-896).  Before KIP-283 (2.0) the conversion is eager (row
``fetch.down_conversion_mode``: the whole response converted in memory, then sent as it is); on 4.x nothing
is down-converted and nothing is refused for zstd: every batch on disk, v0 and v1 included, is sent as it
is (KIP-724); on 0.9 there is one format and nothing to convert.

**Cost accounting** (:class:`ConversionCost`) is kafkafmt's own: per converted compressed batch one
decompression and one compression; zero of both for zero-copy.  ``cpu_time_ns`` is measured with
``time.process_time_ns``.

Seeds vs Kafka: KIP-31 (seed 004 §"message.format.version" 3.1) says zero-copy is used when "the
FetchRequest version is equal to message.format.version"; Kafka compares the topic's record version
with thresholds of the fetch version (v0 ≤ fetch 1, v1 ≤ fetch 3); KIP-32 (seed 000 phase 2 §2.3/2.4)
matches Kafka: a v1 topic is down-converted for fetch v1 and sent zero-copy for fetch v2.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from .. import kafka_lines
from ..compression import kafka_line_codecs
from ..config import LogConfig
from ..constants import LOG_OVERHEAD, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, CompressionType, TimestampType
from ..errors import UnsupportedCompressionError
from ..layout import LOG_ENTRY
from ..records import MemoryRecords, MemoryRecordsBuilder
from ..records.batch import RecordBatch
from .trace import Trace
from .validator import ValidationStats, batch_header_size

__all__ = ["fetch", "down_convert", "FetchResult", "ConversionCost", "DownConversion", "fetch_version_for_magic",
           "max_magic_for_fetch_version", "LATEST_FETCH_VERSION", "MAX_READ_SIZE", "overflow_batch",
           "min_one_message"]

#: FetchRequest.json validVersions "0-17" in Kafka 3.9
LATEST_FETCH_VERSION = 17
#: LazyDownConversionRecordsSend.MAX_READ_SIZE
MAX_READ_SIZE = 128 * 1024
_MIN_OVERFLOW_MESSAGE_LENGTH = LOG_OVERHEAD


def max_magic_for_fetch_version(version: int) -> int:
    """The newest message format a fetch version can carry: v0-1 → 0, v2-3 → 1 (KIP-32), v4+ → 2 (KIP-98)."""
    return 0 if version <= 1 else (1 if version <= 3 else 2)


def fetch_version_for_magic(magic: int) -> int:
    """A representative fetch version for a client reading up to ``magic``: 0 → v1, 1 → v3, 2 → the latest."""
    return {0: 1, 1: 3}.get(magic, LATEST_FETCH_VERSION)


@dataclass
class ConversionCost:
    """What serving the fetch cost the broker (kafkafmt's accounting; zero-copy costs only the read).

    ``bytes_read``: log bytes read (the fetched slice).  ``bytes_decompressed``: bytes produced by
    decompression.  ``bytes_compressed``: uncompressed bytes fed to a compressor.  ``records_touched``:
    records decoded.  ``batches_rebuilt`` / ``batches_copied`` / ``batches_dropped``: converted with a
    builder / copied verbatim into the response buffer / dropped (control, nothing left).
    ``decompressions`` / ``compressions``: codec invocations.  ``bytes_out``: bytes of the records the
    broker answers with (the slice for zero-copy, the converted chunks otherwise).
    """

    bytes_read: int = 0
    bytes_decompressed: int = 0
    bytes_compressed: int = 0
    records_touched: int = 0
    batches_rebuilt: int = 0
    batches_copied: int = 0
    batches_dropped: int = 0
    decompressions: int = 0
    compressions: int = 0
    cpu_time_ns: int = 0
    bytes_out: int = 0

    def add(self, other: "ConversionCost") -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)

    def to_dict(self) -> dict:
        return asdict(self)

    def table(self) -> str:
        """Two-column text table (for the CLI)."""
        rows = self.to_dict()
        w = max(len(k) for k in rows)
        return "\n".join(f"{k:<{w}}  {v:>14,}" for k, v in rows.items())


@dataclass
class DownConversion:
    """Result of :func:`down_convert` (``RecordsUtil.downConvert``'s ``ConvertedRecords``)."""

    records: bytes
    stats: ValidationStats
    cost: ConversionCost
    trace: Trace


@dataclass
class FetchResult:
    """One partition of a fetch response.

    ``records``: the record set the broker produced for the response: the log slice (zero-copy) or
    the concatenated down-converted chunks.  ``wire_records``: the bytes actually written to the
    socket for a down-conversion (``LazyDownConversionRecordsSend``: cut or padded with an overflow
    batch to ``wire_size``); equal to ``records`` for zero-copy.  ``error``: None or Kafka's error
    name for the partition (``UNSUPPORTED_VERSION`` …); ``deferred_error``: an error the consumer
    will only meet on its next fetch (zstd after the first chunk).
    """

    records: bytes
    zero_copy: bool
    to_magic: int | None
    error: str | None
    cost: ConversionCost
    trace: Trace
    fetch_version: int = LATEST_FETCH_VERSION
    wire_records: bytes = b""
    wire_size: int = 0
    deferred_error: str | None = None
    stats: ValidationStats = field(default_factory=ValidationStats)
    fetch_offset: int = 0
    is_follower: bool = False
    #: Kafka 4.x (KIP-896): a Fetch below v4 gets no response, the broker closes the connection
    connection_closed: bool = False
    #: down-conversion: the chunks converted and counted (eager: 1; lazy: ``LazyDownConversionRecordsSend``
    #: takes chunks only until the promised size is written)
    chunks_converted: int = 0
    #: lazy down-conversion: source batches of the slice never converted (the promised size was written first)
    batches_not_converted: int = 0
    #: eager down-conversion that converted no record (row ``fetch.eager_nothing_converted``, 1.1): the slice was
    #: sent as it was, no chunk converted nor counted (``FileRecords.downConvert`` returns ``this`` with
    #: ``RecordsProcessingStats.EMPTY``)
    sent_as_is: bool = False

    def to_dict(self) -> dict:
        return {"zero_copy": self.zero_copy, "connection_closed": self.connection_closed, "to_magic": self.to_magic,
                "error": self.error, "deferred_error": self.deferred_error, "fetch_version": self.fetch_version,
                "size": len(self.records), "wire_size": self.wire_size, "fetch_offset": self.fetch_offset,
                "is_follower": self.is_follower, **self.cost.to_dict(),
                "temporary_memory_bytes": self.stats.temporary_memory_bytes,
                "num_converted_records": self.stats.num_converted_records,
                "chunks_converted": self.chunks_converted, "batches_not_converted": self.batches_not_converted,
                "sent_as_is": self.sent_as_is}


# ------------------------------------------------------------------------------------------------
# RecordsUtil.downConvert
def down_convert(batches, to_magic: int, first_offset: int = 0, *, trace: Trace | None = None,
                 max_batch_steps: int = 20) -> DownConversion:
    """``RecordsUtil.downConvert(batches, toMagic, firstOffset)``, with cost accounting.

    ``batches``: bytes / MemoryRecords / an iterable of kafkafmt batches.  Raises
    :class:`~kafkafmt.errors.UnsupportedCompressionError` ("Down-conversion of zstandard-compressed
    batches is not supported") before converting anything if a zstd batch is met with
    ``to_magic < 2``, as Kafka's first pass does.  Two named steps: :func:`_plan_down_conversion`
    (Kafka's first pass) and :func:`_write_down_converted` (its second).
    """
    tr = trace if trace is not None else Trace(f"down-convert to v{to_magic} from offset {first_offset}")
    if isinstance(batches, (bytes, bytearray, memoryview)):
        batches = list(MemoryRecords(bytes(batches)).batches())
    elif isinstance(batches, MemoryRecords):
        batches = list(batches.batches())
    else:
        batches = list(batches)
    cost = ConversionCost()
    cpu0 = time.process_time_ns()
    wall0 = time.perf_counter_ns()
    steps = _Steps(tr, max_batch_steps)
    plan = _plan_down_conversion(batches, to_magic, first_offset, cost, steps)
    out, temp_mem, converted = _write_down_converted(plan, to_magic, cost, steps)
    steps.close()
    cost.cpu_time_ns = time.process_time_ns() - cpu0
    cost.bytes_out = len(out)
    stats = ValidationStats(temp_mem, converted, time.perf_counter_ns() - wall0)
    return DownConversion(bytes(out), stats, cost, tr)


_SRC_DOWN = "RecordsUtil.downConvert"


class _Steps:
    """Per-batch trace steps, the first ``limit`` of them recorded (a fetch of 10,000 batches stays readable)."""

    def __init__(self, trace: Trace, limit: int):
        self.trace, self.limit, self.n = trace, limit, 0

    def __call__(self, rule, decision, source=_SRC_DOWN, **values):
        self.n += 1
        if self.n <= self.limit:
            self.trace.add(rule, decision, source, **values)

    def close(self):
        if self.n > self.limit:
            self.trace.add("…", f"{self.n - self.limit} more batch step(s) not shown", _SRC_DOWN)


def _plan_down_conversion(batches, to_magic: int, first_offset: int, cost: ConversionCost, step: _Steps) -> list:
    """``RecordsUtil.downConvert``'s first pass: per batch, drop it (control, nothing at or above the fetch
    offset), copy it (already at or below ``to_magic``) or decode the records to convert; zstd refused.
    Returns [(batch, records or None to copy, base offset)]."""
    plan: list[tuple[RecordBatch, list | None, int | None]] = []
    for i, batch in enumerate(batches):
        if to_magic < 2:
            if batch.is_control:
                cost.batches_dropped += 1
                step(f"batch {i}", f"control batch at {batch.base_offset} dropped (no control records below v2)")
                continue
            if batch.compression == CompressionType.ZSTD:
                step.trace.add(f"batch {i}", "zstd batch: cannot be down-converted", _SRC_DOWN,
                               note="UnsupportedCompressionTypeException; zstd exists only in v2 (KIP-110)")
                raise UnsupportedCompressionError("Down-conversion of zstandard-compressed batches is not supported",
                                                  position=batch.position)
        if batch.magic <= to_magic:
            plan.append((batch, None, None))
            continue
        recs = []
        all_recs = list(batch.records())
        cost.records_touched += len(all_recs)
        if batch.is_compressed:
            cost.decompressions += 1
            cost.bytes_decompressed += sum(r.size for r in all_recs)
        for r in all_recs:
            if to_magic > 1 or batch.is_compressed or r.offset >= first_offset:
                recs.append(r)
        if not recs:
            cost.batches_dropped += 1
            step(f"batch {i}", f"uncompressed v{batch.magic} batch entirely below fetch offset {first_offset}: skipped")
            continue
        base = batch.base_offset if (batch.magic >= 2 and to_magic >= 2) else recs[0].offset
        plan.append((batch, recs, base))
    return plan


def _write_down_converted(plan: list, to_magic: int, cost: ConversionCost, step: _Steps) -> tuple[bytearray, int, int]:
    """``RecordsUtil.downConvert``'s second pass (``convertRecordBatch``): copied batches verbatim, the others
    rebuilt in ``to_magic`` with their codec, offsets and LogAppendTime; headers and producer state dropped.
    Returns (bytes, temporary memory, records converted)."""
    out = bytearray()
    temp_mem = 0
    converted = 0
    for batch, recs, base in plan:
        temp_mem += batch.size_in_bytes
        if recs is None:
            out += batch.raw
            cost.batches_copied += 1
            step(f"batch {batch.base_offset if batch.magic >= 2 else batch.last_offset}",
                 f"v{batch.magic} ≤ v{to_magic}: copied verbatim ({batch.size_in_bytes} bytes)", "RecordBatch.writeTo",
                 note="kept as is even when older than the target (a v0 batch stays v0 in a v1 fetch)")
            continue
        ts_type = batch.timestamp_type
        lat = batch.max_timestamp if ts_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP
        codec = batch.compression
        builder = MemoryRecordsBuilder(to_magic, codec, ts_type, base, log_append_time=lat)
        dropped_headers = 0
        for r in recs:
            if to_magic > 1:
                builder.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers)
            else:
                dropped_headers += len(r.headers)
                builder.append_with_offset(r.offset, r.timestamp, r.key, r.value)
        data = builder.build()
        out += data
        temp_mem += builder.uncompressed_bytes + batch_header_size(to_magic, codec)
        converted += builder.num_records
        cost.batches_rebuilt += 1
        if codec != CompressionType.NONE:
            cost.compressions += 1
            cost.bytes_compressed += builder.uncompressed_bytes
        step(f"batch {batch.base_offset}", f"v{batch.magic} {codec.kafka_name} → v{to_magic} {codec.kafka_name}: "
             f"{len(recs)} record(s) rebuilt, offsets {recs[0].offset}..{recs[-1].offset} kept",
             "RecordsUtil.convertRecordBatch", timestampType=ts_type.kafka_name, logAppendTime=lat,
             headers_dropped=dropped_headers, producerId_dropped=batch.producer_id,
             transactional_dropped=batch.is_transactional, size=len(data))
    return out, temp_mem, converted


def overflow_batch(remaining: int) -> bytes:
    """``LazyDownConversionRecordsSend.buildOverflowBatch`` as written to the socket (``remaining`` bytes).

    offset -1, length max(remaining + 1, 61), zeros; cut to ``remaining`` bytes, so the client sees a
    batch longer than the response and ignores it.
    """
    size = max(_MIN_OVERFLOW_MESSAGE_LENGTH, min(remaining + 1, MAX_READ_SIZE))
    buf = bytearray(size)
    LOG_ENTRY.pack_into(buf, 0, -1, max(remaining + 1, RECORD_BATCH_OVERHEAD))
    return bytes(buf[:min(size, remaining)])


# ------------------------------------------------------------------------------------------------
# the fetch decision
def fetch(log, *, topic_config: LogConfig | None = None, fetch_version: int | None = None,
          client_max_magic: int | None = None, fetch_offset: int | None = None, is_follower: bool = False,
          max_bytes: int | None = None, log_start_offset: int | None = None) -> FetchResult:
    """Answer one partition of a fetch as a Kafka 3.9 broker (or one of ``topic_config.broker.kafka_line``) does.

    ``fetch_version`` or ``client_max_magic`` (a client that reads up to that magic uses fetch v1 / v3 /
    the latest); default: the latest version the line answers.  ``fetch_offset`` default: the log start offset.
    ``log_start_offset``: the partition's (``UnifiedLog.logStartOffset``, from the log-start checkpoint
    and the segment bases); default: the first batch's base offset.  The log cleaner removes records
    without moving it, so a fetch at a removed offset is served from the next batch.
    Named steps: the request version (4.4: KIP-896), the log read, the conversion decision, and the
    zero-copy answer or the lazy down-conversion.
    """
    config = topic_config or LogConfig()
    with kafka_line_codecs(config.broker.kafka_line):  # a down-converted batch: the line's codecs
        data = bytes(log)  # bytes-like or MemoryRecords
        if fetch_version is None:
            newest = min(LATEST_FETCH_VERSION, kafka_lines.value("fetch.max_version", config.broker.kafka_line))
            fetch_version = newest if client_max_magic is None else fetch_version_for_magic(client_max_magic)
        tr = _fetch_trace(config, len(data), fetch_version, client_max_magic, fetch_offset, is_follower)
        result = FetchResult(b"", False, None, None, ConversionCost(), tr, fetch_version=fetch_version,
                             fetch_offset=fetch_offset, is_follower=is_follower)
        if not _fetch_version_answered(config, result):
            return result
        slice_ = _log_read(data, result, max_bytes, log_start_offset)
        if slice_ is None:
            return result
        target = _conversion_target(config, result)
        if result.error is not None:
            return result
        if target is not None and kafka_lines.value("fetch.skip_compatible", config.broker.kafka_line):
            target = _skip_compatible(config, result, slice_, target)
        if target is None:
            return _zero_copy(config, result, slice_)
        if not is_follower and not config.downconversion_enable:
            result.error = "UNSUPPORTED_VERSION"
            tr.add("message.downconversion.enable", "false for this topic → UNSUPPORTED_VERSION to the consumer",
                   "KafkaApis.maybeConvertFetchedData", note="KIP-283; followers are always served")
            return result
        if kafka_lines.value("fetch.down_conversion_mode", config.broker.kafka_line) == "eager":
            return _eager_down_convert(config, result, slice_, target)
        return _lazy_down_convert(config, result, slice_, target)


def _fetch_trace(config: LogConfig, size: int, fetch_version: int, client_max_magic, fetch_offset,
                 is_follower: bool) -> Trace:
    """The trace's first steps: the broker, the request and the topic."""
    role = "follower" if is_follower else "consumer"
    tr = Trace(f"fetch v{fetch_version} from a {role} at offset "
               f"{'(log start)' if fetch_offset is None else fetch_offset}, {size} log bytes")
    tr.add("broker configuration", config.broker.describe(), "BrokerConfig (kafkafmt.config)",
           **config.broker.to_properties())
    tr.add("request", f"fetch v{fetch_version} carries message formats up to "
           f"v{max_magic_for_fetch_version(fetch_version)}", "FetchRequest / FetchResponse versions",
           fetch_version=fetch_version, client_max_magic=client_max_magic, is_follower=is_follower,
           note="KIP-32 (seed 000): fetch v2 introduced message format v1; KIP-98: fetch v4 message format v2")
    tr.add("topic configuration", f"record version v{config.to_magic}", "LogConfig.recordVersion",
           **config.describe(), downconversion_enable=config.downconversion_enable)
    return tr


def _fetch_version_answered(config: LogConfig, result: FetchResult) -> bool:
    """The Fetch versions the line parses: one newer than its release knows (row ``fetch.max_version``), or
    below v4 from Kafka 4.0 on (KIP-896, row ``fetch.min_version``), gets no response: the broker closes the
    connection."""
    line = config.broker.kafka_line
    newest = kafka_lines.value("fetch.max_version", line)
    if result.fetch_version > newest:
        row = kafka_lines.row("fetch.max_version", line)
        result.error = "UNSUPPORTED_VERSION"
        result.connection_closed = True
        result.trace.add("fetch request version", f"v{result.fetch_version} > v{newest}: unknown to Kafka {line}; no "
                         "response: the broker closes the connection", f"{row.source} ({row.where})",
                         fetch_version=result.fetch_version, newest=newest, kafka_line_row=row.key)
        return False
    row = kafka_lines.row("fetch.min_version", line)
    if row is None:
        return True
    oldest = row.value(line)
    answered = result.fetch_version >= oldest
    if not answered:
        result.error = "UNSUPPORTED_VERSION"
        result.connection_closed = True
    result.trace.add("fetch request version", f"v{result.fetch_version} {'>=' if answered else '<'} v{oldest}: " + (
        f"answered by Kafka {line}" if answered else "no response: the broker closes the connection"),
        f"{row.source} (ApiKeys.FETCH.oldestVersion)", fetch_version=result.fetch_version, oldest=oldest,
        kafka_line_row=row.key)
    return answered


def _log_read(data: bytes, result: FetchResult, max_bytes: int | None,
              log_start_offset: int | None = None) -> bytes | None:
    """``UnifiedLog.read`` / ``LogSegment.read``: the slice from the batch holding the fetch offset (whole
    batches, at least the first: minOneMessage); None when there is nothing to send."""
    tr, cost = result.trace, result.cost
    all_batches = list(MemoryRecords(data).batches())
    log_start = log_start_offset if log_start_offset is not None else \
        (all_batches[0].base_offset if all_batches else 0)
    log_end = max(all_batches[-1].last_offset + 1 if all_batches else 0, log_start)
    if result.fetch_offset is None:
        result.fetch_offset = log_start
    fetch_offset = result.fetch_offset
    if fetch_offset < log_start or fetch_offset > log_end:
        result.error = "OFFSET_OUT_OF_RANGE"
        tr.add("log read", f"offset {fetch_offset} outside [{log_start}, {log_end}]", "UnifiedLog.read",
               note="OffsetOutOfRangeException")
        return None
    start_i = next((i for i, b in enumerate(all_batches) if b.last_offset >= fetch_offset), None)
    if start_i is None:
        tr.add("log read", f"offset {fetch_offset} is the log end offset: nothing to return", "LogSegment.read")
        result.zero_copy = True
        return None
    start_pos = all_batches[start_i].position
    first_size = all_batches[start_i].size_in_bytes
    avail = len(data) - start_pos
    one_message = min_one_message(result.fetch_version)
    if max_bytes is None:
        limit = avail
    else:
        limit = min(avail, max(max_bytes, first_size) if one_message else max_bytes)
    if limit <= 0:
        tr.add("log read", f"partition max bytes {max_bytes}: nothing read", "LogSegment.read",
               max_bytes=max_bytes, minOneMessage=one_message)
        result.zero_copy = True
        return None
    slice_ = data[start_pos:start_pos + limit]
    cost.bytes_read = len(slice_)
    partial = limit < first_size
    tr.add("log read", f"{len(slice_)} bytes from position {start_pos} (batch with last offset "
           f"{all_batches[start_i].last_offset} ≥ {fetch_offset})" +
           (f": part of that {first_size}-byte entry only" if partial else ""), "LogSegment.read",
           max_bytes=max_bytes, minOneMessage=one_message,
           note=(f"fetch v{result.fetch_version} < 3 has no 'at least one message' rule (KIP-74, "
                 "ReplicaManager.readFromLocalLog: hardMaxBytesLimit): the slice holds no whole entry") if partial
           else "whole batches are returned, so records below the fetch offset can be included")
    return slice_


def min_one_message(fetch_version: int) -> bool:
    """Whether the log read returns the first entry whole even past the partition max bytes: from Fetch v3 on
    (KIP-74; ``ReplicaManager.readFromLocalLog``: ``minOneMessage = !hardMaxBytesLimit``, ``hardMaxBytesLimit =
    versionId <= 2`` in ``KafkaApis.handleFetchRequest``).  Fetch v0-v2 read at most the max bytes, which may
    cut the first entry: the slice then holds no whole entry."""
    return fetch_version >= 3


def _conversion_target(config: LogConfig, result: FetchResult) -> int | None:
    """``KafkaApis.maybeConvertFetchedData``: zstd for old fetches, and the magic to convert to (None: none).

    On the 4.4 line there is no down-conversion at all (KIP-724 / KIP-896): the target is always None, and
    a zstd topic is no longer refused to fetches below v10 (row ``fetch.zstd_needs_v10``)."""
    tr, fetch_version = result.trace, result.fetch_version
    zstd_check = kafka_lines.value("fetch.zstd_needs_v10", config.broker.kafka_line)
    if config.broker_compression == "zstd" and fetch_version < 10 and not zstd_check:
        row = kafka_lines.change("fetch.zstd_needs_v10")
        tr.add("zstd topic", f"compression.type=zstd and fetch v{fetch_version} < 10: sent all the same on Kafka "
               f"{config.broker.kafka_line}", row.source, kafka_line_row=row.key)
    if config.broker_compression == "zstd" and fetch_version < 10 and zstd_check:
        result.error = "UNSUPPORTED_COMPRESSION_TYPE"
        tr.add("zstd topic", f"compression.type=zstd and fetch v{fetch_version} < 10 → UNSUPPORTED_COMPRESSION_TYPE",
               "KafkaApis.maybeConvertFetchedData", note="KIP-110: clients older than fetch v10 cannot read zstd")
        return None
    if not kafka_lines.value("fetch.down_conversion", config.broker.kafka_line):
        row = kafka_lines.change("fetch.down_conversion")
        tr.add("down-conversion needed?", f"no: Kafka {config.broker.kafka_line} has no down-conversion; the file slice "
               "is sent as is (zero-copy)", f"{row.source} (KafkaApis: no maybeConvertFetchedData)",
               fetch_version=fetch_version, kafka_line_row=row.key)
        return None
    fmt = config.to_magic
    if fmt > 0 and fetch_version <= 1:
        target = 0
    elif fmt > 1 and fetch_version <= 3:
        target = 1
    else:
        target = None
    tr.add("down-conversion needed?", "no: send the file slice as is (zero-copy)" if target is None else
           f"yes: topic format v{fmt} is newer than fetch v{fetch_version} can carry → v{target}",
           "KafkaApis.maybeConvertFetchedData", topic_record_version=fmt, fetch_version=fetch_version,
           note="decided from the TOPIC CONFIG, not the bytes on disk: data written before a format downgrade is "
                "sent unconverted (KafkaApis comment); seed 004 §3.1 'fetch version equal to message.format.version'"
                " is Kafka's v0≤1 / v1≤3 thresholds")
    return target


def _skip_compatible(config: LogConfig, result: FetchResult, slice_: bytes, target: int) -> int | None:
    """Row ``fetch.skip_compatible`` (0.10.0 … 2.8): a slice whose entries are all at or below ``target`` is
    sent as it is (``hasMatchingShallowMagic`` / ``hasCompatibleMagic``)."""
    magics = sorted({b.magic for b in MemoryRecords(slice_).batches()})
    row = kafka_lines.row("fetch.skip_compatible", config.broker.kafka_line)
    compatible = all(m <= target for m in magics)  # a loop over the slice's whole entries: none → compatible
    if not magics:
        decision = "no whole entry in the slice (partial bytes): nothing to check, sent unconverted"
    else:
        decision = f"entries v{magics}: " + (f"all at or below v{target}, sent unconverted" if compatible
                                             else f"some above v{target}, converted")
    result.trace.add("slice already compatible?", decision, f"{row.source} ({row.where})", magics=magics,
                     target=target, kafka_line_row=row.key)
    return None if compatible else target


def _merged_down_conversion(batches, target: int, cost: ConversionCost, stats: ValidationStats) -> bytes:
    """``AbstractRecords.toMessageFormat`` (0.10.x, row ``fetch.down_conversion_output``): every record of the
    slice, below the fetch offset too, converted and written into one message set with the codec of the first
    entry (each record keeps its offset; v0 drops the timestamp): each compressed entry decompressed, the
    set compressed once (``cost``: ``bytes_decompressed`` the compressed entries' inner messages,
    ``bytes_compressed`` the output's inner message set, as :func:`down_convert` counts them)."""
    records = []
    for b in batches:
        inner = list(b.records())
        records += [(r.offset, r.timestamp, r.key, r.value) for r in inner]
        if b.compression != CompressionType.NONE:
            cost.decompressions += 1
            cost.bytes_decompressed += sum(r.size for r in inner)
    if not records:
        return b""
    cost.records_touched += len(records)
    cost.batches_rebuilt += 1
    stats.num_converted_records += len(records)
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if target == 0 else TimestampType.CREATE_TIME
    builder = MemoryRecordsBuilder(target, batches[0].compression, ts_type, records[0][0])
    for offset, ts, key, value in records:
        builder.append_with_offset(offset, ts if target > 0 else NO_TIMESTAMP, key, value)
    out = builder.build()
    if batches[0].compression != CompressionType.NONE:
        cost.compressions += 1
        cost.bytes_compressed += builder.uncompressed_bytes
    return out


def _zero_copy(config: LogConfig, result: FetchResult, slice_: bytes) -> FetchResult:
    """No conversion: the file slice goes to the socket untouched (``sendfile``)."""
    tr = result.trace
    result.records = slice_
    result.wire_records = slice_
    result.wire_size = len(slice_)
    result.zero_copy = True
    result.cost.bytes_out = len(slice_)
    on_disk = sorted({b.magic for b in MemoryRecords(slice_).batches()})
    if on_disk and max(on_disk) > max_magic_for_fetch_version(result.fetch_version):
        tr.add("client view", f"the slice holds v{max(on_disk)} batches a fetch v{result.fetch_version} client cannot "
               "parse", "KafkaApis.maybeConvertFetchedData",
               note="see consumer_view(..., client_magic=...) for what the old client then hits")
    row = kafka_lines.row("fetch.down_conversion", config.broker.kafka_line)
    if row is not None and not row.after and on_disk and min(on_disk) < 2:
        tr.add("old batches on disk", f"v{[m for m in on_disk if m < 2]} batches served as they are (no "
               "up-conversion either): the client must read message formats v0/v1 itself", row.source,
               magics=on_disk, kafka_line_row=row.key)
    return result


def _eager_down_convert(config: LogConfig, result: FetchResult, slice_: bytes, target: int) -> FetchResult:
    """Before KIP-283 (row ``fetch.down_conversion_mode``): ``KafkaApis`` converts the whole slice in memory
    (``FileRecords.downConvert``) and sends the converted records as they are: no chunks, no overflow batch,
    the response as long as the converted bytes; a zstd batch cannot be on such a broker.  The conversion of
    each batch is :func:`down_convert`'s (``RecordsUtil.downConvert``)."""
    tr, cost = result.trace, result.cost
    row = kafka_lines.row("fetch.down_conversion_mode", config.broker.kafka_line) or \
        kafka_lines.rows("fetch.down_conversion_mode")[0]
    result.to_magic = target
    cpu0 = time.process_time_ns()
    stats = ValidationStats()
    batches = list(MemoryRecords(slice_).batches())
    if kafka_lines.value("fetch.down_conversion_output", config.broker.kafka_line) == "merged":
        out_row = kafka_lines.rows("fetch.down_conversion_output")[0]
        converted = _merged_down_conversion(batches, target, cost, stats)
        tr.add("merged", f"every record of the {len(batches)} entries in one v{target} message set, codec of the "
               "first entry", f"{out_row.source} ({out_row.where})", kafka_line_row=out_row.key)
    else:
        dc = down_convert(batches, target, result.fetch_offset, trace=tr)
        _acc_cost(cost, dc)
        nothing_row = kafka_lines.row("fetch.eager_nothing_converted", config.broker.kafka_line)
        if dc.stats.num_converted_records == 0 and \
                kafka_lines.value("fetch.eager_nothing_converted", config.broker.kafka_line) == "slice":
            converted = slice_
            tr.add("nothing converted", "no record was converted: the slice is sent as it is, with no conversion "
                   "stats (RecordsProcessingStats.EMPTY)", f"{nothing_row.source} ({nothing_row.where})",
                   kafka_line_row=nothing_row.key)
            result.sent_as_is = True
        else:
            _acc(stats, dc)
            converted = dc.records
            result.chunks_converted = 1
    cost.cpu_time_ns = time.process_time_ns() - cpu0
    cost.bytes_out = len(converted)
    result.records = result.wire_records = converted
    result.wire_size = len(converted)
    result.stats = stats
    step, done = ("sent as it was", f"{len(converted)} bytes, the slice unconverted: nothing to convert (eager)") \
        if result.sent_as_is else \
        ("down-converted", f"{len(converted)} bytes, converted at once before the response is sent (eager)")
    tr.add(step, done,
           f"{row.source}: {row.where}", decompressions=cost.decompressions, compressions=cost.compressions,
           numRecordsConverted=stats.num_converted_records, temporaryMemoryBytes=stats.temporary_memory_bytes,
           kafka_line_row=row.key)
    return result


def _lazy_down_convert(config: LogConfig, result: FetchResult, slice_: bytes, target: int) -> FetchResult:
    """``LazyDownConversionRecords`` + ``LazyDownConversionRecordsSend`` (KIP-283, row ``fetch.down_conversion_mode``).

    The constructor converts one batch at a time until one converts (the first chunk) and promises the larger of
    the slice and that chunk.  The send (``writeTo``) takes the next chunk of at most 128 KiB of source batches
    only when the previous one is written and bytes are still owed: chunks are converted, and their
    ``RecordConversionStats`` added, until the promised size is written, then an overflow batch fills the rest;
    the chunks after that are never converted nor counted.  The send's iterator skips one source batch for the
    cached first chunk (``LazyDownConversionRecords.Iterator``), so when batches converting to nothing preceded
    it, the first chunk's batch is converted (and sent) again."""
    tr, cost, fetch_offset = result.trace, result.cost, result.fetch_offset
    result.to_magic = target
    src_batches = list(MemoryRecords(slice_).batches())
    cpu0 = time.process_time_ns()
    stats = ValidationStats()
    try:
        first_chunk = _first_chunk(src_batches, target, fetch_offset, cost, tr)
    except UnsupportedCompressionError as e:
        result.error = "UNSUPPORTED_COMPRESSION_TYPE"
        tr.add("first chunk", f"{e.reason} → UNSUPPORTED_COMPRESSION_TYPE", "KafkaApis.maybeConvertFetchedData",
               note="raised by the LazyDownConversionRecords constructor, before anything is sent")
        cost.cpu_time_ns = time.process_time_ns() - cpu0
        return result
    chunks: list[bytes] = []
    written = 0
    if first_chunk is None:
        empty_row = kafka_lines.row("fetch.lazy_no_whole_entry", config.broker.kafka_line)
        nothing = kafka_lines.value("fetch.lazy_no_whole_entry", config.broker.kafka_line) == "nothing"
        size = 0 if not src_batches and nothing else LOG_OVERHEAD
        tr.add("first chunk", "nothing converted (e.g. only control batches)" if src_batches else
               "no whole entry in the slice", "LazyDownConversionRecords", sizeInBytes=size,
               **({"kafka_line_row": empty_row.key} if empty_row is not None and not src_batches else {}))
        idx = 0  # the send's iterator starts over: every batch converted again, to nothing
    else:
        size = max(len(slice_), len(first_chunk.records))
        chunks.append(first_chunk.records)
        _acc(stats, first_chunk)
        written = min(len(first_chunk.records), size)
        idx = 1  # LazyDownConversionRecords.Iterator: batchIterator.next() once for the cached first chunk
    deferred = None
    if size > 0:
        idx, written, deferred = _later_chunks(src_batches, idx, size, written, target, fetch_offset, cost, stats,
                                               tr, chunks)
    cost.cpu_time_ns = time.process_time_ns() - cpu0
    converted = b"".join(chunks)
    cost.bytes_out = len(converted)
    result.records = converted
    result.stats = stats
    result.deferred_error = deferred
    result.wire_size = size
    result.wire_records = _wire(chunks, size)
    result.chunks_converted = len(chunks)
    result.batches_not_converted = len(src_batches) - idx
    tr.add("down-converted", f"{len(converted)} bytes in {len(chunks)} chunk(s); response size {size}" + (
        f"; {result.batches_not_converted} source batch(es) never converted: the promised size was written"
        if result.batches_not_converted and deferred is None else ""),
           "LazyDownConversionRecords / LazyDownConversionRecordsSend",
           decompressions=cost.decompressions, compressions=cost.compressions, batches_rebuilt=cost.batches_rebuilt,
           batches_copied=cost.batches_copied, batches_dropped=cost.batches_dropped,
           numRecordsConverted=stats.num_converted_records, temporaryMemoryBytes=stats.temporary_memory_bytes,
           note="seed 000 phase 2 §2.3 / seed 004: no zero-copy for old consumers; the conversion costs CPU and memory")
    return result


def _first_chunk(src_batches, target, fetch_offset, cost, tr) -> DownConversion | None:
    """``LazyDownConversionRecords``' constructor: ``iterator(0)``, one batch per chunk until one converts."""
    for batch in src_batches:
        dc = down_convert([batch], target, fetch_offset, trace=tr)
        _acc_cost(cost, dc)
        if dc.records:
            return dc
    return None


def _later_chunks(src_batches, idx, size, written, target, fetch_offset, cost, stats, tr,
                  chunks: list) -> tuple[int, int, str | None]:
    """``LazyDownConversionRecordsSend.writeTo``: while bytes are owed, the next chunk of <= MAX_READ_SIZE source
    bytes (chunks converting to nothing skipped, their stats dropped); a zstd batch ends the response (overflow
    batch) and its error is deferred to the next fetch.  Returns (next source batch, bytes written, error)."""
    while written < size and idx < len(src_batches):
        group = [src_batches[idx]]
        so_far = src_batches[idx].size_in_bytes
        idx += 1
        while idx < len(src_batches) and so_far + src_batches[idx].size_in_bytes <= MAX_READ_SIZE:
            so_far += src_batches[idx].size_in_bytes
            group.append(src_batches[idx])
            idx += 1
        try:
            dc = down_convert(group, target, fetch_offset, trace=tr)
        except UnsupportedCompressionError as e:
            tr.add("later chunk", f"{e.reason}: the rest of the response is an overflow batch",
                   "LazyDownConversionRecordsSend.writeTo",
                   note="the consumer reads what came before and gets UNSUPPORTED_COMPRESSION_TYPE on its next fetch")
            return idx - len(group), written, "UNSUPPORTED_COMPRESSION_TYPE"
        _acc_cost(cost, dc)
        if dc.records:
            chunks.append(dc.records)
            _acc(stats, dc)
            written += min(len(dc.records), size - written)
    return idx, written, None


def _acc_cost(cost: ConversionCost, dc: DownConversion) -> None:
    read = cost.bytes_read
    cost.add(dc.cost)
    cost.bytes_read = read  # bytes_read counts the log slice once


def _acc(stats: ValidationStats, dc: DownConversion) -> None:
    """``RecordConversionStats.add``: one chunk's accounting added to the request's."""
    stats.temporary_memory_bytes += dc.stats.temporary_memory_bytes
    stats.num_converted_records += dc.stats.num_converted_records
    stats.conversion_time_ns += dc.stats.conversion_time_ns


def _wire(chunks: list[bytes], size: int) -> bytes:
    """``LazyDownConversionRecordsSend.writeTo``: chunks cut to the promised size, then overflow padding."""
    out = bytearray()
    for c in chunks:
        remaining = size - len(out)
        if remaining <= 0:
            break
        out += c[:remaining]
    while size - len(out) > 0:  # one overflow batch per writeTo call (each at most MAX_READ_SIZE bytes)
        out += overflow_batch(size - len(out))
    return bytes(out)

