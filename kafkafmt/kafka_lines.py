"""The Kafka release lines kafkafmt models, 0.9 … 4.4, as one table of differences.

A **line** is a Kafka release series whose broker rules kafkafmt can follow: ``0.9``, ``0.10.0``,
``0.10.1``, ``0.10.2``, ``0.11``, ``1.0``, ``1.1``, ``2.0``, ``2.1``, ``2.8``, ``3.9`` (the default:
kafkafmt's rules are checked against Kafka 3.9.2's jars) and ``4.4``.  The line is the one setting
:attr:`kafkafmt.config.BrokerConfig.kafka_line`, chosen on the command line by ``--kafka-line``.

Every behaviour that differs between two neighbouring releases is **one row** (:class:`LineChange`):
the value before, the value from the release ``since`` on, the KIP or JIRA that made the change and
the Kafka class where it can be read.  A key may have several rows (the newest Produce version grew
eleven times); its value on a line is that of the newest row whose ``since`` is not after the line
(:func:`value`).  Lines and releases are compared by their order (:func:`order`), never by name, and
nothing else in kafkafmt compares version strings of releases.

>>> value("produce.min_version", "4.4")
3
>>> value("log.time_index", "0.10.0"), value("log.time_index", "0.10.1")
(False, True)
>>> change("fetch.down_conversion").source
'KIP-724, KIP-896'

How the rows were verified: each row's ``where`` names the class (and the release tag of
``apache/kafka`` where it was read); the 3.9 and 4.4 values are also checked against Kafka 3.9.2's and
4.4.0's jars and live brokers by the test suite.  This module is on the configuration floor: it imports
nothing of kafkafmt but the ground.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from .constants import INT64_MAX
from .errors import ConfigError

__all__ = ["KAFKA_LINES", "DEFAULT_LINE", "COMPARED_LINES", "LineChange", "CHANGES", "change", "row", "rows", "value",
           "changes", "check_line", "order", "line_at_least", "removed_topic_keys", "added_topic_keys",
           "changed_topic_defaults", "changed_topic_checks", "rows_applied", "rows_between", "API_BY_RELEASE",
           "ClientGeneration", "CLIENT_GENERATIONS", "RELEASE_DEFAULT"]

#: the Kafka lines kafkafmt models, oldest first (``--kafka-line``, ``BrokerConfig.kafka_line``)
KAFKA_LINES = ("0.9", "0.10.0", "0.10.1", "0.10.2", "0.11", "1.0", "1.1", "2.0", "2.1", "2.8", "3.9", "4.4")
#: the default: Kafka 3.9.2's rules
DEFAULT_LINE = "3.9"
#: the two lines whose rules are checked against real jars and live brokers in CI, compared side by side
#: by notebook 10 and the audit
COMPARED_LINES = ("3.9", "4.4")
#: a row value meaning "the release's own version" (``ApiVersion.latestVersion`` of that release)
RELEASE_DEFAULT = "the release's own version"


def order(release: str) -> tuple[int, int, int]:
    """A release or line as a comparable tuple: ``"0.10.1"`` → (0, 10, 1), ``"2.8"`` → (2, 8, 0)."""
    return _order(str(release).strip())


@functools.lru_cache(maxsize=4096)
def _order(release: str) -> tuple[int, int, int]:
    """:func:`order`, remembered: rows are looked up per batch on hot paths (the cleaner's ``compress``,
    measured 0.4 ms a call, a second of a 32 MiB lz4 clean, when each call parsed the releases again)."""
    parts = release.split(".")
    if not 1 <= len(parts) <= 4 or not all(p.isdigit() for p in parts):
        raise ConfigError(f"not a Kafka release: {release!r}")
    nums = [int(p) for p in parts][:3] + [0] * (3 - min(3, len(parts)))
    return nums[0], nums[1], nums[2]


def line_at_least(line: str, release: str) -> bool:
    """Whether ``line`` includes what ``release`` shipped (by order)."""
    return order(line) >= order(release)


def check_line(line: str) -> str:
    """``line`` as one of :data:`KAFKA_LINES`: a line (``"0.10.1"``), or a release of it (``"0.10.1.1"``,
    ``"4.4.0"``, ``"2.8.2"``); else a ConfigError listing the lines."""
    s = str(line).strip()
    for known in sorted(KAFKA_LINES, key=len, reverse=True):
        if s == known or s.startswith(known + "."):
            return known
    raise ConfigError(f"unknown Kafka line {s!r}: kafkafmt models {', '.join(KAFKA_LINES)}")


@dataclass(frozen=True)
class LineChange:
    """One difference between neighbouring Kafka releases.

    ``key`` is kafkafmt's stable name for what changes (several rows may share one, oldest first);
    ``area`` groups rows (``protocol``, ``produce``, ``fetch``, ``topic config``, ``broker config``,
    ``log``, ``dump``, ``cleaner``, ``metrics``: what the broker publishes, ``codec``: the compression
    libraries); ``before`` / ``after`` are the values the rules read before and from the release ``since``;
    ``source`` names the KIP or JIRA; ``where`` the Kafka class (and release tag) that shows it; ``landed``
    says so when only a range of releases is known (``"4.x"``: between 4.0 and 4.4.0, where kafkafmt measured it).
    """

    key: str
    area: str
    what: str
    since: str
    before: Any
    after: Any
    source: str
    where: str = ""
    landed: str = ""

    @property
    def release(self) -> str:
        """The release that made the change, as people read it."""
        return self.landed or self.since

    def value(self, line: str) -> Any:
        """The value of this row's key on ``line`` (every row of the key consulted)."""
        return value(self.key, line)

    def shown(self, line: str) -> Any:
        """The value on ``line`` as people read it: a topic key's spec as "known (TYPE, default D)"."""
        return _shown(self.key, self.value(line))

    def to_dict(self) -> dict:
        return {"key": self.key, "area": self.area, "what": self.what, "since": self.since,
                "before": _shown(self.key, self.before), "after": _shown(self.key, self.after),
                **{line: self.shown(line) for line in COMPARED_LINES},
                "source": self.source, "where": self.where, "release": self.release}


def _shown(key: str, v: Any) -> Any:
    if key.startswith(("topic.removed.", "topic.added.")):
        return "unknown key" if v is None else f"known ({v[0]}, default {v[1]})"
    return v


def _row(key, area, what, since, before, after, source, where="", landed="") -> LineChange:
    return LineChange(key, area, what, since, before, after, source, where, landed)


# A topic key's ConfigDef spec, as config.py's ConfigKey takes it: (type, default, check, server name).
_MFV = ("STRING", "3.0-IV1", ("version",), "log.message.format.version")
_DOWNCONV = ("BOOLEAN", True, None, "log.message.downconversion.enable")
_TSDIFF = ("LONG", INT64_MAX, ("at_least", 0), "log.message.timestamp.difference.max.ms")
_TSTYPE = ("STRING", "CreateTime", ("in", ("CreateTime", "LogAppendTime")), "log.message.timestamp.type")
_TSBEFORE = ("LONG", INT64_MAX, ("at_least", 0), "log.message.timestamp.before.max.ms")
_TSAFTER = ("LONG", INT64_MAX, ("at_least", 0), "log.message.timestamp.after.max.ms")
_MINLAG = ("LONG", 0, ("at_least", 0), "log.cleaner.min.compaction.lag.ms")
_MAXLAG = ("LONG", INT64_MAX, ("at_least", 1), "log.cleaner.max.compaction.lag.ms")
_THROTTLED = ("LIST", (), ("throttled",), None)
_GZIP = ("INT", -1, ("gzip_level",), "compression.gzip.level")
_LZ4 = ("INT", 9, ("between", 1, 17), "compression.lz4.level")
_ZSTD = ("INT", 3, ("between", -131072, 22), "compression.zstd.level")
_REMOTE = ("BOOLEAN", False, None, None)
_LOCAL_MS = ("LONG", -2, ("at_least", -2), "log.local.retention.ms")
_LOCAL_BYTES = ("LONG", -2, ("at_least", -2), "log.local.retention.bytes")
_MAX_DECOMPRESSED = ("INT", 2147483639, ("between", 1, 2147483639), "max.decompressed.message.bytes")

_LOGCONFIG = "LogConfig / TopicConfig"
_PROTOCOL_09 = "Protocol.java PRODUCE_REQUEST / FETCH_REQUEST"
_JSON = "ProduceRequest.json / FetchRequest.json validVersions"
_DUMP = "DumpLogSegments.dumpLog"
_POM = "kafka-clients pom, gradle/dependencies.gradle"

#: every difference kafkafmt models, by area, each key's rows oldest first
CHANGES: tuple[LineChange, ...] = (
    # --- requests a broker answers (Protocol.java before 2.x, the request JSON schemas after) -----------
    _row("protocol.api_versions", "protocol", "the broker answers ApiVersions, so clients can pick request versions "
         "(before: a client must know the broker's release)", "0.10.0", False, True, "KIP-35",
         "ApiKeys.API_VERSIONS (0.10.0.1)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v1 (throttle time)", "0.9", 0, 1,
         "KIP-13", f"{_PROTOCOL_09} (0.9.0.1)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v2 carries message format v1",
         "0.10.0", 1, 2, "KIP-32", f"{_PROTOCOL_09} (0.10.0.1)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v3 carries message format v2",
         "0.11", 2, 3, "KIP-98", f"{_PROTOCOL_09} (0.11.0.2)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v5 (v4: KAFKA_STORAGE_ERROR; "
         "v5: the log start offset in the response)", "1.0", 3, 5, "KIP-112, KIP-107",
         "ProduceRequest.PRODUCE_REQUEST_V5 (1.0.2)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v6 (throttling after the response)",
         "2.0", 5, 6, "KIP-219", "ProduceRequest.PRODUCE_REQUEST_V6 (2.0.1)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v7 (zstd batches)", "2.1", 6, 7,
         "KIP-110", "ProduceRequest.PRODUCE_REQUEST_V7 (2.1.1)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v8 (per-record errors)", "2.4", 7, 8,
         "KIP-467", f"{_JSON} (2.4.1)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v9 (flexible versions)", "2.8", 8, 9,
         "KIP-482", f"{_JSON} (2.8.2)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v10 (leader discovery)", "3.7", 9, 10,
         "KIP-951", f"{_JSON} (3.7.1)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v11 (TRANSACTION_ABORTABLE)", "3.8", 10, 11,
         "KIP-890", f"{_JSON} (3.8.0)"),
    _row("produce.max_version", "protocol", "newest Produce version answered: v13", "4.4", 11, 13,
         "KIP-890, KIP-516", f"{_JSON} (4.4.0, measured; which KIP made which version not verified)", "4.x"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v1 (throttle time)", "0.9", 0, 1,
         "KIP-13", f"{_PROTOCOL_09} (0.9.0.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v2 carries message format v1", "0.10.0",
         1, 2, "KIP-32", f"{_PROTOCOL_09} (0.10.0.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v3 (response max bytes)", "0.10.1", 2, 3,
         "KIP-74", f"{_PROTOCOL_09} (0.10.1.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v5 (v4 carries message format v2, "
         "v5 the log start offset)", "0.11", 3, 5, "KIP-98, KIP-107", f"{_PROTOCOL_09} (0.11.0.2)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v6 (KAFKA_STORAGE_ERROR)", "1.0", 5, 6,
         "KIP-112", "FetchRequest.FETCH_REQUEST_V6 (1.0.2)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v7 (fetch sessions)", "1.1", 6, 7,
         "KIP-227", "FetchRequest.FETCH_REQUEST_V7 (1.1.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v8 (throttling after the response)", "2.0",
         7, 8, "KIP-219", "FetchRequest.FETCH_REQUEST_V8 (2.0.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v10 (v9 leader epoch, v10 zstd)", "2.1",
         8, 10, "KIP-320, KIP-110", "FetchRequest.FETCH_REQUEST_V10 (2.1.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v11 (rack-aware fetching)", "2.3", 10, 11,
         "KIP-392", f"{_JSON} (2.3.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v12 (flexible versions)", "2.7", 11, 12,
         "KIP-482", f"{_JSON} (2.7.2)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v13 (topic ids)", "3.1", 12, 13,
         "KIP-516", f"{_JSON} (3.1.2)"),
    _row("fetch.max_version", "protocol",
         "newest Fetch version answered: v15 (v14: tiered storage errors, v15: replica state)", "3.5",
         13, 15, "KIP-405, KIP-903", f"{_JSON} (3.5.2)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v16 (leader discovery)", "3.7", 15, 16,
         "KIP-951", f"{_JSON} (3.7.1)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v17 (directory ids)", "3.9", 16, 17,
         "KIP-853", f"{_JSON} (3.9.0)"),
    _row("fetch.max_version", "protocol", "newest Fetch version answered: v18", "4.4", 17, 18,
         "KIP-1166", f"{_JSON} (4.4.0, measured; the KIP not verified)", "4.x"),
    _row("produce.min_version", "protocol", "oldest Produce version answered; older ones: the broker closes "
         "the connection (UnsupportedVersionException in its log), though ApiVersions still advertises "
         "Produce from v0 for librdkafka's sake (KAFKA-18659)", "4.0", 0, 3, "KIP-896", "ApiKeys.PRODUCE (4.4.0)"),
    _row("fetch.min_version", "protocol", "oldest Fetch version answered; older ones: the broker closes the "
         "connection", "4.0", 0, 4, "KIP-896", "ApiKeys.FETCH (4.4.0)"),
    _row("list_offsets.min_version", "protocol", "oldest ListOffsets version answered", "4.0", 0, 1, "KIP-896",
         "ApiKeys.LIST_OFFSETS (4.4.0)"),
    # --- produce: the LogValidator path ---------------------------------------------------------
    _row("produce.max_magic", "produce", "newest message format the broker reads and writes: v1 (timestamps)",
         "0.10.0", 0, 1, "KIP-32", "Message.CurrentMagicValue (0.10.0.1; 0 in 0.9.0.1)"),
    _row("produce.max_magic", "produce", "newest message format the broker reads and writes: v2 (record batches)",
         "0.11", 1, 2, "KIP-98", "DefaultRecordBatch, RecordBatch.CURRENT_MAGIC_VALUE (0.11.0.2)"),
    _row("produce.record_version", "produce", "the format the leader writes (LogValidator's toMagic): the "
         "topic's message.format.version (before: always v0)", "0.10.0", 0, "message.format.version", "KIP-32",
         "LogConfig.MessageFormatVersionProp, LogValidator (0.10.0.1)"),
    _row("produce.record_version", "produce", "the format the leader writes (LogValidator's toMagic): the "
         "topic's message.format.version under IBP < 3.0-IV1, else v2; 4.x always v2", "4.0",
         "message.format.version", 2, "KIP-724", "LogConfig.shouldIgnoreMessageFormatVersion (3.0.0), "
         "UnifiedLog (4.4.0)"),
    _row("produce.zstd", "produce", "zstd batches accepted (IBP >= 2.1-IV0 on 2.1 … 3.9)", "2.1", False, True,
         "KIP-110", "CompressionType.ZSTD (2.1.1)"),
    _row("produce.idempotence", "produce", "idempotent and transactional producers (producer id, epoch and "
         "sequence in the v2 batch header)", "0.11", False, True, "KIP-98", "ProducerStateManager (0.11.0.2)"),
    _row("produce.legacy_inner_offsets", "produce", "a compressed v1 wrapper whose inner offsets are not "
         "consecutive is rejected (InvalidRecordException) instead of rebuilt with new offsets (no line kafkafmt "
         "models falls in 2.4.0 … 2.5.0)", "2.4", "rebuilt", "rejected", "KAFKA-8106",
         "LogValidator.validateMessagesAndAssignOffsetsCompressed (2.4.1, 2.5.0)"),
    _row("produce.legacy_inner_offsets", "produce", "a compressed v1 wrapper whose inner offsets are not "
         "consecutive is rebuilt with new offsets again", "2.5.1", "rejected", "rebuilt", "KAFKA-9669",
         "LogValidator.validateMessagesAndAssignOffsetsCompressed (2.5.1, 2.6.0)"),
    _row("produce.rebuilt_legacy_inner", "produce", "a compressed v0/v1 message set the leader rebuilds "
         "(new codec, new format, or offsets to assign) under a LogAppendTime topic: each inner message written "
         "anew by the builder with the LogAppendTime attribute and the append time (before: each inner message "
         "converted on its own, keeping its own timestamp type and timestamp, v0 → v1 with CreateTime and -1, "
         "then copied as it is; only the wrapper gets LogAppendTime and the append time)", "0.11", "converted",
         "rewritten", "KIP-98 (KAFKA-4816)", "LogValidator.validateMessagesAndAssignOffsetsCompressed: "
         "record.convert + MemoryRecordsBuilder.appendWithOffset(offset, Record) copying the bytes (0.10.2.2; "
         "Message.toFormatVersion → convertToBuffer(…, Message.NoTimestamp) in 0.10.0.1), "
         "buildRecordsAndAssignOffsets → MemoryRecordsBuilder.appendLegacyRecord (0.11.0.2)"),
    _row("produce.timestamp_bounds", "produce", "how far a CreateTime may lie from the broker's clock: "
         "message.timestamp.difference.max.ms both ways, then before/after.max.ms apart", "3.6",
         "difference.max.ms", "before/after.max.ms", "KIP-937", "LogValidator.validateTimestamp (3.6.0)"),
    _row("produce.legacy_inner_offsets_base", "produce", "a compressed v1 wrapper's inner messages read at "
         "wrapper offset - last inner offset + inner offset only when that base is not negative (before: always, "
         "so a wrapper of offset 0 over inner offsets 0..n-1, as kafka-python writes it, reads -(n-1)..0 and is "
         "rebuilt by the leader instead of assigned in place)", "0.10.2", "always", "not negative", "KAFKA-4390",
         "RecordsIterator.DeepRecordsIterator (0.10.2.2; ByteBufferMessageSet.deepIterator in 0.10.1.1)"),
    _row("produce.legacy_inner_offsets_base", "produce", "a compressed v1 wrapper of offset 0 keeps its inner "
         "offsets; one below its last inner offset and not 0 is refused (InvalidRecordException)", "0.11",
         "not negative", "wrapper 0 or refused", "KAFKA-5365",
         "AbstractLegacyRecordBatch.DeepRecordsIterator (0.11.0.0)"),
    # --- fetch ------------------------------------------------------------------------------------
    _row("fetch.down_conversion", "fetch", "old fetch versions get v0 converted from v1 batches (before: one "
         "format, nothing to convert)", "0.10.0", False, True, "KIP-32",
         "KafkaApis.handleFetchRequest, Message.toFormatVersion (0.10.0.1)"),
    _row("fetch.down_conversion", "fetch", "old fetch versions get v0/v1 converted from newer batches "
         "(RecordsUtil.downConvert); 4.x has no down-conversion: every batch on disk, v0 and v1 included, "
         "is sent as it is (zero-copy)", "4.0", True, False, "KIP-724, KIP-896", "KafkaApis (4.4.0)"),
    _row("fetch.skip_compatible", "fetch", "a fetch slice whose entries are all at or below the format the "
         "client reads is sent unconverted (before: the topic's format alone decides)", "0.10.0", False, True,
         "KIP-32", "KafkaApis.handleFetchRequest: hasMatchingShallowMagic (0.10.2.2), hasCompatibleMagic (1.1.1, "
         "2.8.2)"),
    _row("fetch.skip_compatible", "fetch", "the topic's format alone decides whether a fetch is down-converted; "
         "entries already old enough are copied by the conversion", "3.0", True, False, "KAFKA-12944, KIP-724",
         "KafkaApis.handleFetchRequest (3.0.0: no hasCompatibleMagic)"),
    _row("fetch.down_conversion_output", "fetch", "what a down-conversion returns: every entry of the slice "
         "converted (records below the fetch offset included) and merged into one message set with the codec of "
         "the slice's first entry; then batch by batch, each keeping its codec (records below the fetch offset "
         "dropped from uncompressed batches)", "0.11", "merged", "per batch", "KIP-98",
         "AbstractRecords.toMessageFormat (0.10.2.2), AbstractRecords.downConvert (0.11.0.2)"),
    _row("fetch.down_conversion_mode", "fetch", "how a fetch is down-converted: the whole response in memory "
         "before it is sent (eager), then chunk by chunk while it is sent (lazy)", "2.0", "eager", "lazy",
         "KIP-283", "LazyDownConversionRecords (2.0.1; KafkaApis.downConvert in 1.1.1)"),
    _row("fetch.eager_nothing_converted", "fetch", "an eager down-conversion that converts no record (e.g. a "
         "slice of control batches only) sends the slice as it is, with no conversion stats (before: the converted "
         "records, possibly none; the slice as it is only when it holds no whole entry)", "1.1", "converted",
         "slice", "apache/kafka PR 4192", "FileRecords.downConvert (1.0.2: batches.isEmpty(); 1.1.1: "
         "numRecordsConverted() == 0)"),
    _row("fetch.lazy_no_whole_entry", "fetch", "a lazy down-conversion of a slice holding no whole entry (Fetch "
         "v0-v2 with a partition max bytes below the first entry, once the format alone decides) sends nothing "
         "(before: a 12-byte overflow batch)", "3.1", "overflow batch", "nothing", "KAFKA-13116",
         "LazyDownConversionRecords constructor (2.8.2, 3.1.0)"),
    _row("fetch.zstd_needs_v10", "fetch", "a compression.type=zstd topic answers Fetch below v10 with "
         "UNSUPPORTED_COMPRESSION_TYPE", "2.1", False, True, "KIP-110", "KafkaApis.handleFetchRequest (2.1.1)"),
    _row("fetch.zstd_needs_v10", "fetch", "a compression.type=zstd topic answers Fetch below v10 with "
         "UNSUPPORTED_COMPRESSION_TYPE (KIP-110); 4.x sends the zstd batches to any fetch it answers (the check "
         "went with KafkaApis' down-conversion; measured on 4.4.0)", "4.0", True, False, "KIP-724, KIP-896",
         "KafkaApis (4.4.0)"),
    # --- what the broker publishes of its conversion accounting (RecordConversionStats, KIP-188) ----
    _row("metrics.produce_conversion", "metrics", "a Produce's conversion accounting (temporaryMemoryBytes, records "
         "converted) published: RequestMetrics TemporaryMemoryBytes,request=Produce (every request, 0 included) and "
         "BrokerTopicMetrics ProduceMessageConversionsPerSec (records converted); before: no accounting at all",
         "1.0", "none", "all", "KIP-188", "KafkaApis.updateRecordsProcessingStats, RequestChannel.updateRequestMetrics "
         "(1.0.2, 1.1.1)"),
    _row("metrics.fetch_conversion", "metrics", "a Fetch's conversion accounting published: RequestMetrics "
         "TemporaryMemoryBytes,request=Fetch and BrokerTopicMetrics FetchMessageConversionsPerSec, recorded by "
         "KafkaApis when it converts (eager); before: no accounting at all", "1.0", "none", "all", "KIP-188",
         "KafkaApis.handleFetchRequest convertedPartitionData (1.0.2, 1.1.1)"),
    _row("metrics.fetch_conversion", "metrics", "a Fetch's conversion accounting published: the lazy conversion's "
         "stats reach KafkaApis in the send's completion callback (a MultiRecordsSend), after the request metrics "
         "were recorded: FetchMessageConversionsPerSec counts the records, TemporaryMemoryBytes records 0", "2.0",
         "all", "records only", "KIP-283 (the callback order: KAFKA-14743)",
         "KafkaApis.updateConversionStats, SocketServer.processCompletedSends: updateRequestMetrics before "
         "onComplete (2.0.1, 2.7.2)"),
    _row("metrics.fetch_conversion", "metrics", "a Fetch's conversion accounting published: nothing; the completion "
         "callback now gets a NetworkSend, not the MultiRecordsSend it matches, so neither the meter nor the "
         "histogram sees a fetch's conversion (the broker still does the work)", "2.8", "records only", "none",
         "KAFKA-14295 (caused by apache/kafka PR 9714)",
         "SocketServer.processCompletedSends, KafkaApis.updateConversionStats (2.8.2)"),
    _row("metrics.fetch_conversion", "metrics", "a Fetch's conversion accounting published again, both the meter "
         "and TemporaryMemoryBytes (request metrics recorded after the callback)", "3.5", "none", "all",
         "KAFKA-14295, KAFKA-14743", "KafkaApis.updateConversionStats, SocketServer (3.5.0)"),
    _row("metrics.conversion_time", "metrics", "RequestMetrics MessageConversionsTimeMs,request=Produce|Fetch: a "
         "histogram updated once per Produce and per Fetch request, like TemporaryMemoryBytes, with the request's "
         "conversion time in ms (Math.round): the time KafkaApis.updateRecordConversionStats took from a partition "
         "that converted records, so exactly 0 when none did or when the stats are not published (a fetch's on "
         "2.0-3.4, rows metrics.fetch_conversion); never restricted to converting requests (KAFKA-15133 proposed "
         "it, not merged; 4.4.0 still updates it on every request); before: no such metric", "1.0", "none",
         "every request", "KIP-188", "RequestChannel.Request.updateRequestMetrics (1.1.1, 2.8.2, 3.9), "
         "org.apache.kafka.network.Request.updateRequestMetrics (4.4.0 bytecode)"),
    _row("metrics.multi_partition", "metrics", "a request carrying several partitions: "
         "KafkaApis.updateRecordConversionStats runs once per partition, in the order the broker's maps visit them "
         "(a Produce's: kafkafmt.broker.request_order), and assigns the request's temporaryMemoryBytes (and its conversion time "
         "when the partition converted records), so TemporaryMemoryBytes and MessageConversionsTimeMs show the last "
         "partition visited (the *MessageConversionsPerSec meter, marked per partition, counts them all); then both "
         "are added up over the partitions", "4.3", "last partition", "sum", "KAFKA-15894 (apache/kafka PR 21420)",
         "KafkaApis.updateRecordsProcessingStats (1.1.1), updateRecordConversionStats (2.8.2, 3.9; 4.2.0 bytecode: "
         "assigned; 4.3.0 bytecode: ladd)"),
    # --- the Java consumer of the release (what an application sees) -----------------------------
    _row("consumer.unparsable_fetch", "consumer", "what the Java consumer does with a fetched partition it "
         "cannot parse (e.g. v1 bytes read with the 0.9 layout): the parse ran inside the fetch response's "
         "completion listener, whose KafkaException NetworkClient.poll catches and logs, so the response is "
         "dropped and the same offset fetched again: no record, no error, a stall; then the response is queued "
         "(CompletedFetch) and parsed in KafkaConsumer.poll, which throws to the application", "0.10.0",
         "stalls", "raises", "KAFKA-3977",
         "Fetcher.handleFetchResponse called from onSuccess, NetworkClient.poll 'Uncaught error in request "
         "completion' (0.9.0.1); Fetcher.CompletedFetch, Fetcher.fetchedRecords (0.10.0.1)"),
    # --- the Java producer of the release (what an application must configure) --------------------
    _row("producer.idempotent_max_in_flight", "producer", "the most requests in flight per connection "
         "(max.in.flight.requests.per.connection) a Java producer accepts with enable.idempotence=true, which "
         "also needs acks=all and retries > 0 (idempotence itself: row produce.idempotence): exactly 1, then at "
         "most 5, the broker keeping the sequences of a producer's last five batches", "1.0", 1, 5, "KAFKA-5494",
         "KafkaProducer.configureInflightRequests (0.11.0.3: != 1 throws ConfigException; 1.0.2, 1.1.1: > 5)"),
    # --- the log --------------------------------------------------------------------------------
    _row("log.time_index", "log", "each segment has a time index (.timeindex), ListOffsets v1 finds offsets "
         "by timestamp", "0.10.1", False, True, "KIP-33", "TimeIndex (0.10.1.1; absent in 0.10.0.1)"),
    _row("log.retention_time", "log", "what retention.ms measures a segment's age from: its .log file's "
         "modification time, then its largest record timestamp (the mtime only when it has none)", "0.10.1",
         "last modified", "largest timestamp", "KIP-33",
         "LogManager.cleanupExpiredSegments (0.10.0.1: _.lastModified), Log.deleteRetenionMsBreachedSegments "
         "(0.10.1.1: _.largestTimestamp)"),
    _row("log.roll_time", "log", "what segment.ms measures a segment's age from when a record arrives: the time "
         "the segment was created, then the first record's timestamp (the creation time when it has none)",
         "0.10.1", "segment create time", "first record timestamp", "KIP-33",
         "Log.maybeRoll (0.10.0.1: time.milliseconds - segment.created), LogSegment.timeWaitedForRoll (0.10.1.1)"),
    _row("log.time_index_on_load", "log", "a segment loaded without a .timeindex (written before KIP-33) gets a "
         "new one preallocated to segment.index.bytes, with no entry, left so until the segment is closed (then "
         "trimmed to 0 bytes); from 0.10.2 it is resized to 0 bytes as it is loaded", "0.10.2", "preallocated",
         "empty", "KAFKA-4734", "Log.loadSegments (0.10.1.1: new LogSegment(...) and sanityCheck only; 0.10.2.0: "
         "timeIndex.resize(0) when the file was newly created)"),
    _row("log.offset_index_key", "log", "the offset an offset index entry maps to its position: the first offset "
         "of the append (recovery: of the message set or batch); from 2.0 the last one", "2.0", "first offset",
         "last offset", "KAFKA-6264", "LogSegment.append / recover (0.10.0.1 … 1.1.1: index.append(firstOffset), "
         "entry.firstOffset or batch.baseOffset; 2.0.0: largestOffset, batch.lastOffset)"),
    _row("log.index_granularity", "log", "when LogSegment.append decides on an index entry (more than "
         "index.interval.bytes since the last one): once per append, at the append's start position; from 3.9.1 "
         "once per batch of the append, at the batch's", "3.9", "append", "batch", "KAFKA-806",
         "LogSegment.append (0.10.1.1 … 3.9.0: one decision per call; 3.9.1: per batch)", "3.9.x"),
    # --- broker configuration ---------------------------------------------------------------------
    _row("broker.message_format_default", "broker config", "default of log.message.format.version (the key "
         "came with KIP-32)", "0.10.0", None, RELEASE_DEFAULT, "KIP-32",
         "KafkaConfig.Defaults.LogMessageFormatVersion = ApiVersion.latestVersion (0.10.0.1)"),
    _row("broker.message_format_default", "broker config", "default of log.message.format.version",
         "3.0", RELEASE_DEFAULT, "3.0-IV1", "KIP-724", "KafkaConfig.Defaults.LogMessageFormatVersion (3.0.0)"),
    _row("broker.message_format_check", "broker config", "how KafkaConfig checks log.message.format.version "
         "against inter.broker.protocol.version: as ApiVersions (0.10.0 means 0.10.0-IV1, above 0.10.0-IV0: "
         "'cannot be used when'), then by the record version each stands for ('can only be used when … or "
         "higher'); the line 1.0 is its last patch release 1.0.2 (1.0.0 still had the ApiVersion check)",
         "1.0", "api version", "record version", "KAFKA-6238",
         "KafkaConfig.validateValues (0.10.0.1 … 1.0.0; 1.0.1, 1.1.0, 3.9.0)", "1.0.1"),
    _row("broker.inter_broker_protocol", "broker config", "inter.broker.protocol.version: the broker's own "
         "release by default (ApiVersion.latestVersion); 4.x has none (KRaft's metadata.version)", "4.0",
         RELEASE_DEFAULT, None, "KIP-500, KIP-724", "KafkaConfig.InterBrokerProtocolVersion (0.9.0.1 … 3.9)"),
    # --- topic configuration (LogConfig.configKeys) ----------------------------------------------
    *[_row(f"topic.added.{name}", "topic config", f"topic key {name}", since, None, spec, kip,
           f"{_LOGCONFIG} ({tag})")
      for name, since, spec, kip, tag in (
          ("message.format.version", "0.10.0", _MFV, "KIP-32", "0.10.0.1"),
          ("message.timestamp.type", "0.10.0", _TSTYPE, "KIP-32", "0.10.0.1"),
          ("message.timestamp.difference.max.ms", "0.10.0", _TSDIFF, "KIP-32", "0.10.0.1"),
          ("min.compaction.lag.ms", "0.10.1", _MINLAG, "KIP-58", "0.10.1.0"),
          ("leader.replication.throttled.replicas", "0.10.1", _THROTTLED, "KIP-73", "0.10.1.0"),
          ("follower.replication.throttled.replicas", "0.10.1", _THROTTLED, "KIP-73", "0.10.1.0"),
          ("message.downconversion.enable", "2.0", _DOWNCONV, "KIP-283", "2.0.1"),
          ("max.compaction.lag.ms", "2.3", _MAXLAG, "KIP-354", "2.3.1"),
          ("remote.storage.enable", "3.0", _REMOTE, "KIP-405", "3.0.0"),
          ("local.retention.ms", "3.0", _LOCAL_MS, "KIP-405", "3.0.0"),
          ("local.retention.bytes", "3.0", _LOCAL_BYTES, "KIP-405", "3.0.0"),
          ("message.timestamp.before.max.ms", "3.6", _TSBEFORE, "KIP-937", "3.6.0"),
          ("message.timestamp.after.max.ms", "3.6", _TSAFTER, "KIP-937", "3.6.0"),
          ("compression.gzip.level", "3.8", _GZIP, "KIP-390", "3.8.0"),
          ("compression.lz4.level", "3.8", _LZ4, "KIP-390", "3.8.0"),
          ("compression.zstd.level", "3.8", _ZSTD, "KIP-390", "3.8.0"),
          ("remote.log.copy.disable", "3.9", _REMOTE, "KIP-950", "3.9.0"),
          ("remote.log.delete.on.disable", "3.9", _REMOTE, "KIP-950", "3.9.0"))],
    _row("topic.removed.message.format.version", "topic config", "topic key message.format.version", "4.0",
         _MFV, None, "KIP-724", f"{_LOGCONFIG} (4.4.0)"),
    _row("topic.removed.message.downconversion.enable", "topic config", "topic key message.downconversion.enable",
         "4.0", _DOWNCONV, None, "KIP-724", f"{_LOGCONFIG} (4.4.0)"),
    _row("topic.removed.message.timestamp.difference.max.ms", "topic config",
         "topic key message.timestamp.difference.max.ms (replaced by before/after.max.ms)", "4.0", _TSDIFF, None,
         "KIP-937", f"{_LOGCONFIG} (4.4.0)"),
    _row("topic.added.max.decompressed.message.bytes", "topic config", "topic key max.decompressed.message.bytes "
         "(not modelled by kafkafmt: kept and written back)", "4.4", None, _MAX_DECOMPRESSED, "apache/kafka PR 24123",
         f"{_LOGCONFIG} (4.4.0)", "4.x"),
    _row("topic.added.remote.copy.lag.ms", "topic config", "topic key remote.copy.lag.ms (tiered storage; "
         "not modelled)", "4.4", None, ("LONG", 0, ("at_least", -1), "log.remote.copy.lag.ms"),
         "apache/kafka PR 22236", f"{_LOGCONFIG} (4.4.0)", "4.x"),
    _row("topic.added.remote.copy.lag.bytes", "topic config", "topic key remote.copy.lag.bytes (tiered storage; "
         "not modelled)", "4.4", None, ("LONG", -1, ("at_least", -1), "log.remote.copy.lag.bytes"),
         "apache/kafka PR 22236", f"{_LOGCONFIG} (4.4.0)", "4.x"),
    _row("topic.added.errors.deadletterqueue.group.enable", "topic config", "topic key "
         "errors.deadletterqueue.group.enable (share-group dead-letter queues; not modelled)", "4.4", None,
         ("BOOLEAN", False, None, None), "KIP-1191", f"{_LOGCONFIG} (4.4.0)", "4.x"),
    _row("topic.default.message.timestamp.after.max.ms", "topic config", "default of "
         "message.timestamp.after.max.ms (a record more than 1 h ahead of the broker: INVALID_TIMESTAMP)", "4.0",
         INT64_MAX, 3600000, "KIP-1030", "ServerLogConfigs (4.4.0)"),
    _row("topic.default.message.format.version", "topic config", "default of message.format.version (the "
         "broker's log.message.format.version)", "0.10.0", None, RELEASE_DEFAULT, "KIP-32",
         "KafkaConfig.Defaults.LogMessageFormatVersion (0.10.0.1)"),
    _row("topic.default.message.format.version", "topic config", "default of message.format.version",
         "3.0", RELEASE_DEFAULT, "3.0-IV1", "KIP-724", "KafkaConfig.Defaults.LogMessageFormatVersion (3.0.0)"),
    _row("topic.check.segment.bytes", "topic config", "smallest segment.bytes accepted", "4.0", 14, 1048576,
         "KIP-1030", "LogConfig (4.4.0)"),
    # --- kafka-dump-log -----------------------------------------------------------------------------
    _row("dump.format", "dump", "kafka-dump-log's line format: each message (deep: each inner message) with its "
         "timestamp type and timestamp after its position", "0.10.1", "0.9", "0.10.1", "KAFKA-3163",
         f"{_DUMP} (0.10.0.1, 0.10.1.1)"),
    _row("dump.format", "dump", "kafka-dump-log's line format: the compression types of the Records API (NONE, "
         "GZIP, SNAPPY, LZ4 for NoCompressionCodec …)", "0.10.2", "0.10.1", "0.10.2", "KAFKA-4390",
         f"{_DUMP} (0.10.2.2)"),
    _row("dump.format", "dump", "kafka-dump-log's line format: deep, one line per record (keysize and valuesize "
         "always, the batch's position, magic, codec and timestamp type; v2: producer fields and header keys, "
         "v0/v1: the record's crc); shallow, one line per batch", "0.11", "0.10.2", "0.11", "KIP-98",
         f"{_DUMP} (0.11.0.2, 1.1.1)"),
    _row("dump.format", "dump", "kafka-dump-log's line format: the shallow batch line with count (2.0.0) and "
         "isControl (2.0.1, KAFKA-7467)", "2.0", "0.11", "2.0", "KAFKA-7467", f"{_DUMP} (2.0.1, 2.1.1)"),
    _row("dump.format", "dump", "kafka-dump-log's line format: each batch's line printed before its records when "
         "deep (KAFKA-7687, 2.2), '| offset:' record lines holding every record and batch field (KAFKA-6181, "
         "2.8)", "2.8", "2.0", "2.8", "KAFKA-7687, KAFKA-6181", f"{_DUMP}, printBatchLevel (2.2.0, 2.8.2)",
         "2.2 … 2.8"),
    _row("dump.format", "dump", "kafka-dump-log's line format: the record lines without the batch's fields "
         "(apache/kafka PR 11101, 3.1), deleteHorizonMs in the batch line (PR 11694, 3.2), 'Log starting "
         "offset' (KAFKA-13845, 3.3), the codecs' own lower-case names (CompressionType.toString, 3.3)", "3.9", "2.8",
         "3.9", "KAFKA-13845",
         f"{_DUMP} (3.1.0 … 3.3.0, 3.9.2)", "3.1 … 3.3"),
    _row("dump.print_data_deep", "dump", "kafka-dump-log --print-data-log alone iterates deep (before: it prints "
         "the keys and payloads of the shallow entries: a compressed v0/v1 wrapper's payload is its compressed bytes "
         "read as UTF-8; a v2 batch line has none)", "1.1", False, True,
         "apache/kafka PR 4396 (MINOR: Enable deep-iteration to print data in DumpLogSegments; 1.1.0 and 2.0.0)",
         "DumpLogSegments.main: isDeepIteration (1.0.2: --deep-iteration only; 1.1.1, 2.0.1: || printDataLog)"),
    _row("dump.non_consecutive_scope", "dump", "which offsets kafka-dump-log checks for gaps: every entry it prints, "
         "a compressed shallow wrapper only setting the last offset seen (without --deep-iteration an uncompressed "
         "message after a wrapper is checked against the wrapper's offset); then the records of a deep iteration "
         "only", "0.11", "printed entries, uncompressed", "deep records", "KIP-98 (KAFKA-4816)",
         "DumpLogSegments.dumpLog (0.10.2.2: compressionType == NONE over the iterated entries; 0.11.0.3: inside "
         "if (isDeepIteration))"),
    _row("dump.non_consecutive_header", "dump", "the line kafka-dump-log writes to stderr before a file's "
         "non-consecutive offsets ('Non-secutive' until 0.11)", "0.11", "Non-secutive offsets in :",
         "Non-consecutive offsets in :", "KAFKA-5108", "DumpLogSegments.main (0.10.2.2, 0.11.0.3)"),
    _row("dump.non_consecutive_header", "dump", "the line kafka-dump-log writes to stderr before a file's "
         "non-consecutive offsets", "2.3", "Non-consecutive offsets in :", "Non-consecutive offsets in ",
         "KAFKA-7487", "DumpLogSegments.main (2.1.1; 2.3.0, 2.8.2)", "2.3"),
    _row("dump.index_entry_check", "dump", "what kafka-dump-log checks an offset index entry against: the first "
         "record at its position (deep), so that 2.0 and 2.1, whose brokers index a batch's last offset "
         "(row log.offset_index_key), report their own indexes as mismatched; then the first batch's last offset, "
         "the zero-slot stop before the check", "2.3", "first record", "batch last offset", "KAFKA-7487",
         "DumpLogSegments.dumpIndex (0.9.0.1 … 2.1.1: the first deep record's offset; 2.3.0, 2.8.2: "
         "slice.batches.iterator.next().lastOffset)", "2.3"),
    _row("dump.index_empty_line", "dump", "kafka-dump-log says '<file> is empty.' for an offset index without entries "
         "(before: nothing after 'Dumping <file>')", "2.8", False, True, "apache/kafka PR 9891",
         "DumpLogSegments.dumpIndex (2.1.1; 2.8.0, 2.8.2)"),
    _row("dump.legacy_record_brace", "dump", "kafka-dump-log --deep-iteration: a v0/v1 record line ends with "
         "a stray '}' (Scala DumpLogSegments); the Java tool of 4.x prints none", "4.4", True, False,
         "KAFKA-14579 (DumpLogSegments moved to tools, in Java)", "DumpLogSegments (4.4.0)", "4.x"),
    # --- codecs: the compression libraries a release ships and how its writers drive them ----------
    # (read by kafkafmt.compression: the bytes a line writes on produce, conversion and cleaning; the
    # versions are each release's kafka-clients pom / gradle/dependencies.gradle)
    _row("codec.lz4_java", "codec", "lz4-java, whose JNI fast compressor (LZ4Factory.fastestInstance()) writes "
         "KafkaLZ4BlockOutputStream's blocks: 1.3.0 bundles liblz4 r123 (1.2.0: r100)", "0.10.0", "1.2.0",
         "1.3.0", "KAFKA-2421", _POM + " (0.9.0.1, 0.10.0.1)"),
    _row("codec.lz4_java", "codec", "lz4-java 1.4 (still liblz4 r123 on linux/amd64)", "1.0", "1.3.0", "1.4",
         "apache/kafka PR 3619 (dependencies of 1.0.0)", _POM + " (1.0.2)"),
    _row("codec.lz4_java", "codec", "lz4-java 1.4.1 (still liblz4 r123 on linux/amd64)", "1.1", "1.4", "1.4.1",
         "KAFKA-6390", _POM + " (1.1.1)"),
    _row("codec.lz4_java", "codec", "lz4-java 1.5.0: liblz4 1.8.3", "2.1", "1.4.1", "1.5.0",
         "apache/kafka PR 5715", _POM + " (2.1.1)"),
    _row("codec.lz4_java", "codec", "lz4-java 1.7.1: liblz4 1.9.2 (1.6.0, liblz4 1.9.1, from 2.3)", "2.8", "1.5.0",
         "1.7.1", "apache/kafka PR 6735 (1.6.0), PR 8008 (1.7.1)", _POM + " (2.8.2)", "2.3 … 2.5"),
    _row("codec.lz4_java", "codec", "at.yawk.lz4:lz4-java 1.10.1, the maintained fork: liblz4 1.10.0 (org.lz4 "
         "1.8.0, liblz4 1.9.3, from 3.1)", "3.9", "1.7.1", "1.10.1", "apache/kafka PR 11303 (1.8.0); "
         "KAFKA-19951 (at.yawk.lz4, 3.9.2)", _POM + " (3.9.2)", "3.1 … 3.9.2"),
    _row("codec.lz4_java", "codec", "at.yawk.lz4:lz4-java 1.11.2 (liblz4 1.10.0)", "4.4", "1.10.1", "1.11.2",
         "KAFKA-19951 (the at.yawk.lz4 fork, later bumped)", _POM + " (4.4.0)", "4.x"),
    _row("codec.snappy_java", "codec", "snappy-java, whose native snappy writes each SnappyOutputStream chunk",
         "0.10.0", "1.1.1.7", "1.1.2.6", "KAFKA-3789", _POM + " (0.9.0.1, 0.10.0.1)", "0.10.0.1"),
    _row("codec.snappy_java", "codec", "snappy-java 1.1.4", "1.0", "1.1.2.6", "1.1.4",
         "apache/kafka PR 3619 (dependencies of 1.0.0)", _POM + " (1.0.2)"),
    _row("codec.snappy_java", "codec", "snappy-java 1.1.7.1", "1.1", "1.1.4", "1.1.7.1", "KAFKA-6390",
         _POM + " (1.1.1)"),
    _row("codec.snappy_java", "codec", "snappy-java 1.1.7.2", "2.1", "1.1.7.1", "1.1.7.2",
         "apache/kafka PR 5148", _POM + " (2.1.1)"),
    _row("codec.snappy_java", "codec", "snappy-java 1.1.8.1 (1.1.7.3 from 2.3, 1.1.7.7 in 2.7)", "2.8", "1.1.7.2",
         "1.1.8.1", "apache/kafka PR 9646", _POM + " (2.8.2)", "2.3 … 2.8"),
    _row("codec.snappy_java", "codec", "snappy-java 1.1.10.5", "3.9", "1.1.8.1", "1.1.10.5", "KAFKA-15498",
         _POM + " (3.9.2)", "3.x"),
    _row("codec.snappy_java", "codec", "snappy-java 1.1.10.7", "4.4", "1.1.10.5", "1.1.10.7",
         "KAFKA-15498 (snappy-java 1.1.10.x, later bumped)",
         _POM + " (4.4.0)", "4.x"),
    _row("codec.zstd_jni", "codec", "zstd-jni, whose libzstd writes ZstdOutputStream's frames", "2.1", None,
         "1.3.7-1", "KIP-110 (KAFKA-4514)", _POM + " (2.1.1)"),
    _row("codec.zstd_jni", "codec", "zstd-jni 1.4.9-1", "2.8", "1.3.7-1", "1.4.9-1", "KAFKA-12442",
         _POM + " (2.8.2)", "2.2 … 2.8"),
    _row("codec.zstd_jni", "codec", "zstd-jni 1.5.6-4", "3.9", "1.4.9-1", "1.5.6-4", "KAFKA-12921, KAFKA-17227",
         _POM + " (3.9.2)", "3.x"),
    _row("codec.zstd_jni", "codec", "zstd-jni 1.5.7-17", "4.4", "1.5.6-4", "1.5.7-17", "KAFKA-21123",
         _POM + " (4.4.0)", "4.x"),
    _row("codec.snappy_block", "codec", "input bytes per snappy chunk the broker writes: the leader's, the "
         "cleaner's and down-conversion's MemoryRecordsBuilder opens SnappyOutputStream(buffer, 1024) (before: "
         "Scala CompressionFactory's SnappyOutputStream(out), 32 KiB)", "0.10.2", 32768, 1024, "KAFKA-4390",
         "MemoryRecordsBuilder.wrapForOutput, COMPRESSION_DEFAULT_BUFFER_SIZE (0.10.2.2); CompressionFactory "
         "(0.10.1.1)"),
    _row("codec.snappy_block", "codec", "input bytes per snappy chunk: SnappyOutputStream(buffer), its 32 KiB "
         "default", "0.11", 1024, 32768, "KAFKA-5236", "CompressionType.SNAPPY.wrapForOutput (0.11.0.0)"),
    _row("codec.gzip_stream", "codec", "how the broker's writers drive the JDK's GZIPOutputStream (deflate "
         "buffer, buffered writer in front; the deflate bytes are the JDK zlib's whatever these sizes): "
         "GZIPOutputStream(buffer, 1024) (before: Scala CompressionFactory's GZIPOutputStream(out), 512)",
         "0.10.2", (512, 0), (1024, 0), "KAFKA-4390",
         "MemoryRecordsBuilder.wrapForOutput (0.10.2.2); CompressionFactory (0.10.1.1)"),
    _row("codec.gzip_stream", "codec", "GZIPOutputStream(buffer, 8 KiB)", "0.11", (1024, 0), (8192, 0),
         "KAFKA-5236", "CompressionType.GZIP.wrapForOutput (0.11.0.0)"),
    _row("codec.gzip_stream", "codec", "BufferedOutputStream(GZIPOutputStream(buffer, 8 KiB), 16 KiB)", "1.1",
         (8192, 0), (8192, 16384), "KAFKA-6430", "CompressionType.GZIP.wrapForOutput (1.1.1)"),
    _row("log.leader_epoch_cache", "log", "every partition has a leader epoch cache and its leader-epoch-checkpoint "
         "(empty until a v2 batch carries an epoch), whatever its message format", "0.11", "none", "always",
         "KIP-101", "Log.leaderEpochCache (0.11.0.3, 1.1.1)"),
    _row("log.leader_epoch_cache", "log", "below message format v2 a partition has no leader epoch cache: its "
         "leader-epoch-checkpoint is deleted, and an older batch appended clears the cache", "2.1", "always",
         "v2 only", "KAFKA-7897", "Log.initializeLeaderEpochCache (2.0.1 keeps the file, 2.1.1 and 2.8.2 delete it)",
         "2.1.1"),
    # --- the cleaner (read by the log cleaner) ----------------------------------------------------
    _row("cleaner.keep_whole_wrapper", "cleaner", "a compressed v0/v1 wrapper whose inner messages are all "
         "retained is written back as it was (before: every compressed set with a retained message is "
         "recompressed, so a set kept whole takes the bytes of the release's own codec, whatever client wrote it)",
         "0.10.0", False, True, "KIP-31/KIP-32 follow-up, KAFKA-3259, KAFKA-3253",
         "LogCleaner.cleanInto (0.9.0.1: compressMessages for every set with a retained message; 0.10.0.1: "
         "writeOriginalMessageSet)"),
    _row("cleaner.map_reach", "cleaner", "how far one pass reaches: the dirty segments whose offsets all fit the "
         "offset map beside the keys already in it are mapped whole (a segment of more offsets than the map holds "
         "is refused: 'N messages in segment … but offset map can fit only M'), the pass ends after the last of "
         "them (before); from 0.10.0 the map is filled key by key and the pass ends after the last segment "
         "mapped in full ('Unable to build the offset map for segment …' when even the first does not fit)",
         "0.10.0", "whole segments", "fully mapped segments", "KAFKA-3587",
         "LogCleaner.buildOffsetMap (0.9.0.1, 0.10.0.1)"),
    _row("cleaner.map_reach", "cleaner", "how far one pass reaches: to the record that filled the offset map "
         "(the map's latest offset + 1), a segment cleaned in part", "0.10.1", "fully mapped segments",
         "record that fills the map", "KAFKA-3894", "LogCleaner.buildOffsetMap, Cleaner.doClean (0.10.1.0, 0.10.2.2)"),
    _row("cleaner.legacy_to_v2", "cleaner", "the cleaner rewrites retained v0/v1 messages as v2 batches "
         "(each plain message its own batch, each compressed wrapper one batch)", "4.0", False, True, "KAFKA-13093",
         "LogCleaner (4.4.0)"),
    _row("cleaner.legacy_rebuild_magic", "cleaner", "a compressed v0/v1 wrapper the cleaner rebuilds keeps its own "
         "magic (before: the topic's message format's, its inner messages as they were, so 0.10.0 cleaning a v0 "
         "wrapper under message.format.version 0.10.0 fails reading it back: 'Compressed message has magic value 1 "
         "but inner message has magic value 0', the pass ends there)", "0.10.1", "message format", "wrapper's own",
         "KAFKA-4298", "LogCleaner.cleanInto, compressMessages (0.10.0.1; fixed in 0.10.1.1 and 0.10.2.0 per the "
         "JIRA, not checked)"),
    _row("cleaner.txn_metadata_scope", "cleaner", "the transactions the cleaner tracks (aborted ones from the "
         "transaction index, batches seen) span a whole group of segments; before, they started afresh with each "
         "segment, so an abort marker whose transaction's batches lay in an earlier segment was not written to the "
         "cleaned .txnindex and could go at once", "2.2", "segment", "group", "KAFKA-8335",
         "Cleaner.cleanSegments (1.1.1, 2.8.2; fixed in 2.0.2, 2.1.2, 2.2.1 per the JIRA, not checked)", "2.2.1"),
    _row("cleaner.time_index_offset", "cleaner", "the offset a cleaned segment's time index gives its largest "
         "timestamp: the last offset of the first batch (wrapper) holding it (before: the first record holding it, "
         "inside a compressed wrapper)", "0.10.2", "record", "batch", "KAFKA-4390",
         "LogCleaner.cleanInto, LogSegment.append's shallowOffsetOfMaxTimestamp (0.10.1.1, 0.10.2.2)"),
    _row("cleaner.delete_horizon", "cleaner", "v2 tombstones (and markers of emptied transactions) are kept "
         "delete.retention.ms after the pass that first keeps them: the batch gets deleteHorizonMs = now + "
         "delete.retention.ms in its header (attribute bit 6, as its baseTimestamp); before, v2 as v0/v1: kept "
         "while their segment's modification time is within delete.retention.ms of the last cleaned segment's, "
         "the batch bytes untouched", "3.1", False, True, "KIP-534",
         "LogCleaner.cleanSegments, MemoryRecords.filterTo (2.8.2, 3.1.0)"),
    _row("cleaner.retain_last_batch", "cleaner", "a batch the cleaner empties is kept (an empty v2 header) when its "
         "next offset is the end of the cleaning round, so the log end offset survives compaction (before: it "
         "is removed)", "3.9", None, "first uncleanable offset", "KAFKA-17076",
         "LogCleaner.cleanInto (3.9.2; trunk commit a577d30d, not in 3.9.0)", "3.9.x"),
    _row("cleaner.retain_last_batch", "cleaner", "a batch the cleaner empties is kept (an empty v2 header) "
         "when its next offset is this offset, so the log end offset survives compaction (KAFKA-17076); 4.4 "
         "keeps it only at the high watermark, not at the end of each cleaning round", "4.4",
         "first uncleanable offset", "high watermark", "KAFKA-20452", "Cleaner (4.4.0)", "4.x"),
)

_BY_KEY: dict[str, tuple[LineChange, ...]] = {}
for _c in CHANGES:
    _BY_KEY[_c.key] = _BY_KEY.get(_c.key, ()) + (_c,)
for _key, _rows in _BY_KEY.items():  # each key's rows chain, oldest first
    for _a, _b in zip(_rows, _rows[1:]):
        assert order(_a.since) < order(_b.since) and _a.after == _b.before, (_a, _b)
del _c, _key, _rows


def rows(key: str) -> tuple[LineChange, ...]:
    """Every row of ``key``, oldest first."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ConfigError(f"no Kafka line difference named {key}") from None


def change(key: str) -> LineChange:
    """The newest row of ``key``."""
    return rows(key)[-1]


@functools.lru_cache(maxsize=4096)
def row(key: str, line: str) -> LineChange | None:
    """The row of ``key`` in effect on ``line`` (None: the line predates every row of it; remembered: the rows
    never change in a process)."""
    found = None
    for r in rows(key):
        if line_at_least(line, r.since):
            found = r
    return found


def value(key: str, line: str) -> Any:
    """The value ``key`` has on ``line`` (a line or any release)."""
    r = row(key, line)
    return rows(key)[0].before if r is None else r.after


def changes(area: str | None = None) -> tuple[LineChange, ...]:
    """Every row, or those of one ``area``."""
    return tuple(c for c in CHANGES if area is None or c.area == area)


def rows_between(a: str, b: str) -> tuple[LineChange, ...]:
    """The rows that tell line ``a`` from line ``b`` (either order): those whose release lies after the
    older line and not after the newer one."""
    lo, hi = sorted((order(a), order(b)))
    return tuple(c for c in CHANGES if lo < order(c.since) <= hi)


def _topic_rows(prefix: str, line: str) -> dict[str, LineChange]:
    return {c.key[len(prefix):]: c for c in CHANGES if c.key.startswith(prefix)}


def removed_topic_keys(line: str) -> dict[str, LineChange]:
    """Topic keys the line no longer knows (removed after it had them): name → the row that removed it."""
    return {name: c for name, c in _topic_rows("topic.removed.", line).items() if line_at_least(line, c.since)}


def added_topic_keys(line: str) -> dict[str, tuple[LineChange, tuple | None]]:
    """Topic keys added by a release: name → (row, (type, default, check, server name) on the line, or None
    when the line predates the key)."""
    return {name: (c, value(c.key, line)) for name, c in _topic_rows("topic.added.", line).items()}


def changed_topic_defaults(line: str) -> dict[str, LineChange]:
    """Topic keys whose default on the line differs from 3.9's: name → row (``value(key, line)`` is the
    default; :data:`RELEASE_DEFAULT`: the line's own version)."""
    return {name: c for name, c in _topic_rows("topic.default.", line).items()
            if value(c.key, line) is not None and value(c.key, line) != value(c.key, DEFAULT_LINE)}


def changed_topic_checks(line: str) -> dict[str, LineChange]:
    """Topic keys whose lower bound on the line differs from 3.9's: name → row."""
    return {name: c for name, c in _topic_rows("topic.check.", line).items()
            if value(c.key, line) != value(c.key, DEFAULT_LINE)}


def rows_applied(trace) -> list[str]:
    """The row keys a :class:`~kafkafmt.broker.trace.Trace` says were applied (steps carrying ``kafka_line_row``)."""
    out = []
    for step in trace:
        key = step.values.get("kafka_line_row")
        if key and key not in out:
            out.append(key)
    return out


# --- client generations: what an old client sends, against the rows above ----------------------
#: (first release, newest ProduceRequest, newest FetchRequest) a client or broker of each release speaks,
#: oldest first: the releases where rows ``produce.max_version`` / ``fetch.max_version`` change
API_BY_RELEASE: tuple[tuple[str, int, int], ...] = tuple(
    (since, value("produce.max_version", since), value("fetch.max_version", since))
    for since in sorted({c.since for c in CHANGES if c.key in ("produce.max_version", "fetch.max_version")},
                        key=order))


def _metadata_release(release: str) -> str:
    """A MetadataVersion spelling (``0.10.1-IV0``, ``0.8.2``) as a release (``0.10.1``, ``0.8.2``)."""
    return re.sub(r"-IV\d+$", "", str(release).strip())


@dataclass(frozen=True)
class ClientGeneration:
    """Clients that speak the protocol of one Kafka release: the newest Produce and Fetch versions they
    send (rows ``produce.max_version`` / ``fetch.max_version`` on ``release``).  A client pinned to an old
    protocol (kafka-python's ``api_version=(0, 9)``) speaks its pin's generation.  Compared with rows
    ``produce.min_version`` / ``fetch.min_version`` by the audit."""

    name: str
    release: str  #: the release whose requests the generation sends
    clients: str
    source: str

    @property
    def produce_max(self) -> int:
        return value("produce.max_version", _metadata_release(self.release))

    @property
    def fetch_max(self) -> int:
        return value("fetch.max_version", _metadata_release(self.release))

    def to_dict(self) -> dict:
        return {"name": self.name, "release": self.release, "clients": self.clients,
                "produce_max": self.produce_max, "fetch_max": self.fetch_max, "source": self.source}


_APIKEYS = "ApiKeys and the Produce/Fetch request schemas of the release"
_KAFKA_PYTHON = "kafka-python's api_version pin (KafkaProducer/KafkaConsumer pick request versions by it)"

#: the generations an upgrade audit names, oldest first
CLIENT_GENERATIONS: tuple[ClientGeneration, ...] = (
    ClientGeneration("0.8", "0.8.2", "Java/Scala clients 0.8.x", _APIKEYS),
    ClientGeneration("0.9", "0.9.0", "Java clients 0.9; kafka-python api_version=(0, 9)", f"{_APIKEYS}; {_KAFKA_PYTHON}"),
    ClientGeneration("0.10.0", "0.10.0", "Java clients 0.10.0; kafka-python api_version=(0, 10)",
                     f"{_APIKEYS} (KIP-32); {_KAFKA_PYTHON}"),
    ClientGeneration("0.10.1-0.10.2", "0.10.1", "Java clients 0.10.1, 0.10.2; kafka-python api_version=(0, 10, 1)",
                     f"{_APIKEYS} (KIP-74); {_KAFKA_PYTHON}"),
    ClientGeneration("0.11", "0.11.0", "Java clients 0.11 (message format v2, KIP-98)", _APIKEYS),
    ClientGeneration("1.0 and later", "1.0", "Java clients 1.0 and later; kafka-python, aiokafka, librdkafka "
                     "negotiating with ApiVersions (KIP-35)", _APIKEYS),
)
