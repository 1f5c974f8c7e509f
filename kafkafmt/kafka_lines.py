"""The Kafka lines kafkafmt models, 3.9 and 4.4, as one table of differences.

kafkafmt's rules follow Kafka 3.9.2 unless a broker says otherwise: ``BrokerConfig(kafka_version="4.4")``
(``kafkafmt.kafka.version=4.4`` in a properties file, ``explain -c``, a scenario file).  Every rule
that differs between the lines reads one row of :data:`CHANGES`, which names the KIP or JIRA that
made the change and the release it landed in; nothing else in kafkafmt compares version strings.

>>> value("produce.min_version", "4.4")
3
>>> change("fetch.down_conversion").source
'KIP-724, KIP-896'

The rows were checked against Kafka 4.4.0's jars and a live 4.4.0 broker (``ApiKeys`` version
ranges, ``LogConfig.configKeys()``, ``LogValidator``, ``DumpLogSegments``); see the test suite.
This module is on the configuration floor: it imports nothing of kafkafmt but the ground.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .constants import INT64_MAX
from .errors import ConfigError

__all__ = ["KAFKA_LINES", "DEFAULT_LINE", "LineChange", "CHANGES", "change", "value", "changes",
           "check_line", "removed_topic_keys", "added_topic_keys", "changed_topic_defaults",
           "changed_topic_checks", "rows_applied", "API_BY_RELEASE", "ClientGeneration", "CLIENT_GENERATIONS"]

#: the Kafka lines kafkafmt models (``kafkafmt.kafka.version``)
KAFKA_LINES = ("3.9", "4.4")
#: the default: today's rules, Kafka 3.9.2
DEFAULT_LINE = "3.9"


@dataclass(frozen=True)
class LineChange:
    """One difference between Kafka 3.9 and 4.4: what it is, its value on each line, and its source.

    ``key`` is kafkafmt's stable name for the row; ``area`` groups rows (``protocol``, ``produce``,
    ``fetch``, ``topic config``, ``dump``, ``cleaner``); ``v39`` / ``v44`` are the values the rules
    read; ``source`` names the KIP or JIRA; ``release`` the Kafka release that made the change ("4.x": somewhere
    between 4.0 and 4.4.0, where kafkafmt measured it).
    """

    key: str
    area: str
    what: str
    v39: Any
    v44: Any
    source: str
    release: str = "4.0"

    def value(self, line: str) -> Any:
        return self.v44 if check_line(line) == "4.4" else self.v39

    def shown(self, line: str) -> Any:
        """The value on ``line`` as people read it: a topic key's spec as "known (TYPE, default D)"."""
        v = self.value(line)
        if self.key.startswith(("topic.removed.", "topic.added.")):
            return "unknown key" if v is None else f"known ({v[0]}, default {v[1]})"
        return v

    def to_dict(self) -> dict:
        return {"key": self.key, "area": self.area, "what": self.what, "3.9": self.shown("3.9"),
                "4.4": self.shown("4.4"), "source": self.source, "release": self.release}


def _row(key, area, what, v39, v44, source, release="4.0") -> LineChange:
    return LineChange(key, area, what, v39, v44, source, release)


# A topic key's ConfigDef spec, as config.py's ConfigKey takes it: (type, default, check, server name).
_MFV = ("STRING", "3.0-IV1", ("version",), "log.message.format.version")
_DOWNCONV = ("BOOLEAN", True, None, "log.message.downconversion.enable")
_TSDIFF = ("LONG", INT64_MAX, ("at_least", 0), "log.message.timestamp.difference.max.ms")
_MAX_DECOMPRESSED = ("INT", 2147483639, ("between", 1, 2147483639), "max.decompressed.message.bytes")

#: every difference kafkafmt models, in the order a produce, a fetch, a topic and a dump meet them
CHANGES: tuple[LineChange, ...] = (
    # --- requests a broker answers (ApiKeys.oldestVersion/latestVersion) ----------------------------
    _row("produce.min_version", "protocol", "oldest Produce version answered; older ones: the broker closes "
         "the connection (UnsupportedVersionException in its log), though ApiVersions still advertises "
         "Produce from v0 for librdkafka's sake (KAFKA-18659)", 0, 3, "KIP-896"),
    _row("fetch.min_version", "protocol", "oldest Fetch version answered; older ones: the broker closes the "
         "connection", 0, 4, "KIP-896"),
    _row("list_offsets.min_version", "protocol", "oldest ListOffsets version answered", 0, 1, "KIP-896"),
    # --- produce: the LogValidator path ---------------------------------------------------------
    _row("produce.record_version", "produce", "the format the leader writes (LogValidator's toMagic): the "
         "topic's message.format.version under IBP < 3.0-IV1, else v2; 4.x always v2",
         "message.format.version", 2, "KIP-724"),
    # --- fetch ------------------------------------------------------------------------------------
    _row("fetch.down_conversion", "fetch", "old fetch versions get v0/v1 converted from newer batches "
         "(RecordsUtil.downConvert); 4.x has no down-conversion: every batch on disk, v0 and v1 included, "
         "is sent as it is (zero-copy)", True, False, "KIP-724, KIP-896"),
    _row("fetch.zstd_needs_v10", "fetch", "a compression.type=zstd topic answers Fetch below v10 with "
         "UNSUPPORTED_COMPRESSION_TYPE (KIP-110); 4.x sends the zstd batches to any fetch it answers (the check "
         "went with KafkaApis' down-conversion; measured on 4.4.0)", True, False, "KIP-724, KIP-896"),
    # --- topic configuration (LogConfig.configKeys) ----------------------------------------------
    _row("topic.removed.message.format.version", "topic config", "topic key message.format.version",
         _MFV, None, "KIP-724"),
    _row("topic.removed.message.downconversion.enable", "topic config", "topic key message.downconversion.enable",
         _DOWNCONV, None, "KIP-724"),
    _row("topic.removed.message.timestamp.difference.max.ms", "topic config",
         "topic key message.timestamp.difference.max.ms (replaced by before/after.max.ms)", _TSDIFF, None,
         "KIP-937"),
    _row("topic.added.max.decompressed.message.bytes", "topic config", "topic key max.decompressed.message.bytes "
         "(not modelled by kafkafmt: kept and written back)", None, _MAX_DECOMPRESSED, "apache/kafka PR 24123",
         "4.x"),
    _row("topic.added.remote.copy.lag.ms", "topic config", "topic key remote.copy.lag.ms (tiered storage; "
         "not modelled)", None, ("LONG", 0, ("at_least", -1), "log.remote.copy.lag.ms"), "apache/kafka PR 22236",
         "4.x"),
    _row("topic.added.remote.copy.lag.bytes", "topic config", "topic key remote.copy.lag.bytes (tiered storage; "
         "not modelled)", None, ("LONG", -1, ("at_least", -1), "log.remote.copy.lag.bytes"), "apache/kafka PR 22236",
         "4.x"),
    _row("topic.added.errors.deadletterqueue.group.enable", "topic config", "topic key "
         "errors.deadletterqueue.group.enable (share-group dead-letter queues; not modelled)", None,
         ("BOOLEAN", False, None, None), "KIP-1191", "4.x"),
    _row("topic.default.message.timestamp.after.max.ms", "topic config", "default of "
         "message.timestamp.after.max.ms (a record more than 1 h ahead of the broker: INVALID_TIMESTAMP)",
         INT64_MAX, 3600000, "KIP-1030"),
    _row("topic.check.segment.bytes", "topic config", "smallest segment.bytes accepted", 14, 1048576, "KIP-1030"),
    # --- kafka-dump-log -----------------------------------------------------------------------------
    _row("dump.legacy_record_brace", "dump", "kafka-dump-log --deep-iteration: a v0/v1 record line ends with "
         "a stray '}' (Scala DumpLogSegments); the Java tool of 4.x prints none", True, False,
         "KAFKA-14579 (DumpLogSegments moved to tools, in Java)", "4.x"),
    # --- the cleaner (read by the log cleaner) ----------------------------------------------------
    _row("cleaner.legacy_to_v2", "cleaner", "the cleaner rewrites retained v0/v1 messages as v2 batches "
         "(each plain message its own batch, each compressed wrapper one batch)", False, True, "KAFKA-13093"),
    _row("cleaner.retain_last_batch", "cleaner", "a batch the cleaner empties is kept (an empty v2 header) "
         "when its next offset is this offset, so the log end offset survives compaction (KAFKA-17076); 4.4 "
         "keeps it only at the high watermark, not at the end of each cleaning round", "first uncleanable offset",
         "high watermark",
         "KAFKA-20452", "4.x"),
)
_BY_KEY = {c.key: c for c in CHANGES}


def check_line(line: str) -> str:
    """``line`` as one of :data:`KAFKA_LINES` (``"4"``/``"4.4.0"`` → ``"4.4"``); else a ConfigError."""
    s = str(line).strip()
    for known in KAFKA_LINES:
        if s == known or s.startswith(known + "."):
            return known
    if s == "4":
        return "4.4"
    raise ConfigError(f"Invalid value {line} for configuration kafkafmt.kafka.version: String must be one of: "
                      f"{', '.join(KAFKA_LINES)}")


def change(key: str) -> LineChange:
    """The row named ``key``."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ConfigError(f"no Kafka line difference named {key}") from None


def value(key: str, line: str) -> Any:
    """The value row ``key`` has on ``line``."""
    return change(key).value(line)


def changes(area: str | None = None) -> tuple[LineChange, ...]:
    """Every row, or those of one ``area``."""
    return tuple(c for c in CHANGES if area is None or c.area == area)


def removed_topic_keys(line: str) -> dict[str, LineChange]:
    """Topic keys the line no longer knows: name → the row that removed it (none for 3.9)."""
    if check_line(line) == "3.9":
        return {}
    return {c.key.split(".", 2)[2]: c for c in CHANGES if c.key.startswith("topic.removed.")}


def added_topic_keys(line: str) -> dict[str, tuple[LineChange, tuple]]:
    """Topic keys new on the line: name → (row, (type, default, check, server name))."""
    if check_line(line) == "3.9":
        return {}
    return {c.key.split(".", 2)[2]: (c, c.v44) for c in CHANGES if c.key.startswith("topic.added.")}


def changed_topic_defaults(line: str) -> dict[str, LineChange]:
    """Topic keys whose default differs on the line: name → row (its ``value(line)`` is the default)."""
    if check_line(line) == "3.9":
        return {}
    return {c.key.split(".", 2)[2]: c for c in CHANGES if c.key.startswith("topic.default.")}


def changed_topic_checks(line: str) -> dict[str, LineChange]:
    """Topic keys whose lower bound differs on the line: name → row (its ``value(line)`` is the bound)."""
    if check_line(line) == "3.9":
        return {}
    return {c.key.split(".", 2)[2]: c for c in CHANGES if c.key.startswith("topic.check.")}


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
#: oldest first (``ApiKeys`` and the Produce/Fetch request schemas of each release; the 4.x lines are
#: :data:`kafkafmt.scenarios.versions.KAFKA4_API`)
API_BY_RELEASE: tuple[tuple[str, int, int], ...] = (
    ("0.8.2", 0, 0), ("0.9.0", 1, 1), ("0.10.0", 2, 2), ("0.10.1", 2, 3), ("0.11.0", 3, 5), ("1.0", 5, 6),
    ("1.1", 5, 7), ("2.0", 6, 8), ("2.1", 7, 10), ("2.3", 7, 11), ("2.7", 8, 12), ("2.8", 9, 12),
    ("3.1", 9, 13), ("3.5", 9, 15), ("3.7", 10, 16), ("3.9", 11, 17),
)
_API_OF_RELEASE = {first: (produce, fetch) for first, produce, fetch in API_BY_RELEASE}


@dataclass(frozen=True)
class ClientGeneration:
    """Clients that speak the protocol of one Kafka release: the newest Produce and Fetch versions they
    send (:data:`API_BY_RELEASE`'s row of ``release``).  A client pinned to an old protocol
    (kafka-python's ``api_version=(0, 9)``) speaks its pin's generation.  Compared with rows
    ``produce.min_version`` / ``fetch.min_version`` by the audit."""

    name: str
    release: str  #: the first release of a row of :data:`API_BY_RELEASE` (``MetadataVersion`` spelling)
    clients: str
    source: str

    @property
    def produce_max(self) -> int:
        return _API_OF_RELEASE[self.release][0]

    @property
    def fetch_max(self) -> int:
        return _API_OF_RELEASE[self.release][1]

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
