"""One topic configuration, as Kafka has it: :class:`LogConfig`, and the broker settings apart.

Kafka keeps one ``org.apache.kafka.storage.internals.log.LogConfig`` per topic; kafkafmt does the
same.  The broker's produce and fetch rules (:mod:`kafkafmt.broker`) and the log on disk
(:mod:`kafkafmt.log`) take the same object.

* Every topic setting Kafka 3.9.2 knows is listed once, as data, in :data:`TOPIC_KEYS`: its name,
  ``ConfigDef`` type, default and validator (``LogConfig.CONFIG`` / ``ServerLogConfigs``; the test
  suite checks each against ``LogConfig.configKeys()`` from the 3.9.2 jars).  Values are parsed as
  ``ConfigDef.parseType`` parses them (strings as in a ``.properties`` file, or Python values) and
  rejected with Kafka's own message (``Invalid value X for configuration Y: ...``).
* A key Kafka does not know is an error naming it, with the closest known key suggested (Kafka:
  ``Unknown topic config name: X``).  A key Kafka knows but kafkafmt does not model (flush, replica
  throttling, tiered storage ...) is validated, kept, written back by
  :meth:`LogConfig.to_properties`, listed in :attr:`LogConfig.not_modelled` and announced once per
  process with a :class:`NotModelledConfigWarning`.
* Broker-level settings that change what a topic does live in :class:`BrokerConfig`:
  ``inter.broker.protocol.version`` (kafkafmt's default is **2.8**, see there), the broker's
  defaults for topic settings (``log.segment.bytes`` ...), and two switches for proposals Kafka
  never shipped (KIP-228, seed 003).  A :class:`LogConfig` carries the broker it lives on.
"""
from __future__ import annotations

import dataclasses
import difflib
import random
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from . import kafka_lines
from .constants import (
    DEFAULT_MAX_MESSAGE_BYTES,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    LEGACY_RECORD_OVERHEAD_V0,
    CompressionType,
    TimestampType,
)
from .errors import BrokerConfigRefusedError, ConfigError, KafkaFmtError  # noqa: F401 (ConfigError re-exported)

# ================================================================================================
# Kafka's MetadataVersion order (server-common MetadataVersion, 3.9.2; 4.0-IV0/IV1 are listed but
# not production-ready there).  message.format.version and inter.broker.protocol.version use it.
METADATA_VERSIONS = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0",
    "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0",
    "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0", "2.0-IV0", "2.0-IV1",
    "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1",
    "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1", "3.0-IV0", "3.0-IV1",
    "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1",
    "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4",
    "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1",
)
_MV_INDEX: dict[str, int] = {}
for _i, _name in enumerate(METADATA_VERSIONS):
    _MV_INDEX[_name] = _i
    _MV_INDEX[_name.split("-IV")[0]] = _i  # a release version means its latest IV (maxInterVersion)


def metadata_version_index(version: str) -> int:
    """Position of ``version`` in Kafka's MetadataVersion order (``MetadataVersion.fromVersionString``).

    Like Kafka, ``"0.10.0.1"`` means ``"0.10.0"`` (3 segments for 0.x, 2 after) and a release
    without ``-IVn`` means that release's latest inter-version.
    """
    s = str(version).strip()
    segs = s.split(".")
    n = 3 if s.startswith("0.") else 2
    key = s if n >= len(segs) else ".".join(segs[:n])
    try:
        return _MV_INDEX[key]
    except KeyError:
        raise ConfigError(f"Version {version} is not a valid version") from None


def version_at_least(version: str, floor: str) -> bool:
    return metadata_version_index(version) >= metadata_version_index(floor)


def record_version(message_format_version: str) -> int:
    """``MetadataVersion.highestSupportedRecordVersion``: <0.10.0-IV0 → 0, <0.11.0-IV0 → 1, else 2."""
    i = metadata_version_index(message_format_version)
    if i < _MV_INDEX["0.10.0-IV0"]:
        return 0
    if i < _MV_INDEX["0.11.0-IV0"]:
        return 1
    return 2


# ================================================================================================
# the keys, as data
GiB = 1024 * 1024 * 1024
WEEK_MS = 7 * 24 * 60 * 60 * 1000
BROKER_CODECS = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


@dataclass(frozen=True)
class ConfigKey:
    """One topic setting: Kafka's name, ``ConfigDef`` type and default, validator, and kafkafmt's field.

    ``check`` is the validator as data: ``("at_least", n)``, ``("between", lo, hi)``, ``("in", names)``,
    ``("list_in", names)``, ``("gzip_level",)``, ``("version",)``, ``("throttled",)`` or ``None``.
    ``attr`` is the :class:`LogConfig` field holding the value, or ``None`` when kafkafmt does not
    model the setting (it is then validated and kept as a string in ``not_modelled``).
    """

    name: str
    type: str  #: BOOLEAN INT LONG DOUBLE STRING LIST, as ConfigDef.Type
    default: Any  #: the parsed default (Kafka 3.9.2)
    check: tuple | None
    server_name: str | None  #: the broker's default for it (``LogConfig.serverConfigName``)
    attr: str | None = None

    @property
    def modelled(self) -> bool:
        return self.attr is not None


def _k(name, type_, default, check, server, attr=None) -> ConfigKey:
    return ConfigKey(name, type_, default, check, server, attr)


#: Every topic setting of Kafka 3.9.2 (``LogConfig.configKeys()``), in Kafka's order.
TOPIC_KEYS: tuple[ConfigKey, ...] = (
    _k("segment.bytes", "INT", GiB, ("at_least", LEGACY_RECORD_OVERHEAD_V0), "log.segment.bytes", "segment_bytes"),
    _k("segment.ms", "LONG", WEEK_MS, ("at_least", 1), "log.roll.ms", "segment_ms"),
    _k("segment.jitter.ms", "LONG", 0, ("at_least", 0), "log.roll.jitter.ms", "segment_jitter_ms"),
    _k("segment.index.bytes", "INT", 10 * 1024 * 1024, ("at_least", 4), "log.index.size.max.bytes",
       "segment_index_bytes"),
    _k("flush.messages", "LONG", INT64_MAX, ("at_least", 1), "log.flush.interval.messages"),
    _k("flush.ms", "LONG", INT64_MAX, ("at_least", 0), "log.flush.interval.ms"),
    _k("retention.bytes", "LONG", -1, None, "log.retention.bytes", "retention_bytes"),
    _k("retention.ms", "LONG", WEEK_MS, ("at_least", -1), "log.retention.ms", "retention_ms"),
    _k("max.message.bytes", "INT", DEFAULT_MAX_MESSAGE_BYTES, ("at_least", 0), "message.max.bytes",
       "max_message_bytes"),
    _k("index.interval.bytes", "INT", 4096, ("at_least", 0), "log.index.interval.bytes", "index_interval_bytes"),
    _k("delete.retention.ms", "LONG", 86400000, ("at_least", 0), "log.cleaner.delete.retention.ms",
       "delete_retention_ms"),
    _k("min.compaction.lag.ms", "LONG", 0, ("at_least", 0), "log.cleaner.min.compaction.lag.ms",
       "min_compaction_lag_ms"),
    _k("max.compaction.lag.ms", "LONG", INT64_MAX, ("at_least", 1), "log.cleaner.max.compaction.lag.ms",
       "max_compaction_lag_ms"),
    _k("file.delete.delay.ms", "LONG", 60000, ("at_least", 0), "log.segment.delete.delay.ms", "file_delete_delay_ms"),
    _k("min.cleanable.dirty.ratio", "DOUBLE", 0.5, ("between", 0, 1), "log.cleaner.min.cleanable.ratio",
       "min_cleanable_dirty_ratio"),
    _k("cleanup.policy", "LIST", ("delete",), ("list_in", ("compact", "delete")), "log.cleanup.policy",
       "cleanup_policy"),
    _k("unclean.leader.election.enable", "BOOLEAN", False, None, "unclean.leader.election.enable"),
    _k("min.insync.replicas", "INT", 1, ("at_least", 1), "min.insync.replicas"),
    _k("compression.type", "STRING", "producer", ("in", BROKER_CODECS), "compression.type", "compression_type"),
    _k("compression.gzip.level", "INT", -1, ("gzip_level",), "compression.gzip.level", "gzip_level"),
    _k("compression.lz4.level", "INT", 9, ("between", 1, 17), "compression.lz4.level", "lz4_level"),
    _k("compression.zstd.level", "INT", 3, ("between", -131072, 22), "compression.zstd.level", "zstd_level"),
    _k("preallocate", "BOOLEAN", False, None, "log.preallocate", "preallocate"),
    _k("message.format.version", "STRING", "3.0-IV1", ("version",), "log.message.format.version",
       "message_format_version"),
    _k("message.timestamp.type", "STRING", "CreateTime", ("in", ("CreateTime", "LogAppendTime")),
       "log.message.timestamp.type", "timestamp_type"),
    _k("message.timestamp.difference.max.ms", "LONG", INT64_MAX, ("at_least", 0),
       "log.message.timestamp.difference.max.ms", "timestamp_difference_max_ms"),
    _k("message.timestamp.before.max.ms", "LONG", INT64_MAX, ("at_least", 0),
       "log.message.timestamp.before.max.ms", "timestamp_before_max_ms"),
    _k("message.timestamp.after.max.ms", "LONG", INT64_MAX, ("at_least", 0),
       "log.message.timestamp.after.max.ms", "timestamp_after_max_ms"),
    _k("leader.replication.throttled.replicas", "LIST", (), ("throttled",), None),
    _k("follower.replication.throttled.replicas", "LIST", (), ("throttled",), None),
    _k("message.downconversion.enable", "BOOLEAN", True, None, "log.message.downconversion.enable",
       "downconversion_enable"),
    _k("remote.storage.enable", "BOOLEAN", False, None, None),
    _k("local.retention.ms", "LONG", -2, ("at_least", -2), "log.local.retention.ms"),
    _k("local.retention.bytes", "LONG", -2, ("at_least", -2), "log.local.retention.bytes"),
    _k("remote.log.copy.disable", "BOOLEAN", False, None, None),
    _k("remote.log.delete.on.disable", "BOOLEAN", False, None, None),
)
KEYS_BY_NAME: dict[str, ConfigKey] = {k.name: k for k in TOPIC_KEYS}
KEYS_BY_ATTR: dict[str, ConfigKey] = {k.attr: k for k in TOPIC_KEYS if k.attr}
#: broker default name (``log.segment.bytes`` ...) → topic key
KEYS_BY_SERVER_NAME: dict[str, ConfigKey] = {k.server_name: k for k in TOPIC_KEYS if k.server_name}

_LINE_KEYS: dict[str, tuple[ConfigKey, ...]] = {}


def newest_metadata_version(line: str) -> str:
    """The newest MetadataVersion (``ApiVersion``) a Kafka line knows: ``"0.10.2"`` → ``"0.10.2-IV0"``,
    ``"0.9"`` → ``"0.9.0"``; what its broker defaults ``inter.broker.protocol.version`` and
    ``log.message.format.version`` to (``ApiVersion.latestVersion``)."""
    line = kafka_lines.check_line(line)
    known = [v for v in METADATA_VERSIONS if kafka_lines.line_at_least(line, v.split("-IV")[0])]
    return known[-1]


def line_default(value: Any, line: str) -> Any:
    """A row value as a setting: :data:`kafkafmt.kafka_lines.RELEASE_DEFAULT` → the line's own version."""
    return newest_metadata_version(line) if value == kafka_lines.RELEASE_DEFAULT else value


def topic_keys(line: str = kafka_lines.DEFAULT_LINE) -> tuple[ConfigKey, ...]:
    """The topic settings a Kafka line knows (``LogConfig.configKeys()``): 3.9's :data:`TOPIC_KEYS` with
    the rows of :mod:`kafkafmt.kafka_lines` applied (keys a release added or removed, defaults and lower
    bounds changed, ``compression.type=zstd`` from 2.1, KIP-110).  A key the line does not know that
    kafkafmt models keeps its field at 3.9's default."""
    line = kafka_lines.check_line(line)
    if line not in _LINE_KEYS:
        removed = kafka_lines.removed_topic_keys(line)
        added = kafka_lines.added_topic_keys(line)
        defaults = kafka_lines.changed_topic_defaults(line)
        checks = kafka_lines.changed_topic_checks(line)
        keys = []
        for k in TOPIC_KEYS:
            if k.name in removed or (k.name in added and added[k.name][1] is None):
                continue
            if k.name in defaults:
                k = dataclasses.replace(k, default=line_default(defaults[k.name].value(line), line))
            if k.name in checks:
                k = dataclasses.replace(k, check=("at_least", checks[k.name].value(line)))
            if k.name == "compression.type" and not kafka_lines.value("produce.zstd", line):
                k = dataclasses.replace(k, check=("in", tuple(c for c in BROKER_CODECS if c != "zstd")))
            keys.append(k)
        names = {k.name for k in TOPIC_KEYS}
        for name, (_, spec) in added.items():
            if spec is not None and name not in names:
                type_, default, check, server = spec
                keys.append(ConfigKey(name, type_, default, check, server))
        _LINE_KEYS[line] = tuple(keys)
    return _LINE_KEYS[line]


def keys_by_name(line: str = kafka_lines.DEFAULT_LINE) -> dict[str, ConfigKey]:
    """Kafka name → :class:`ConfigKey` on a Kafka line."""
    return {k.name: k for k in topic_keys(line)}


def topic_key_error(name: str, line: str) -> ConfigError:
    """A key the line does not know: a removed one names the release and KIP that removed it, one that came
    later the release and KIP that added it."""
    row = kafka_lines.removed_topic_keys(line).get(name)
    if row is not None:
        return ConfigError(f"Unknown topic config name: {name} (removed in Kafka {row.release} by {row.source}; "
                           f"Kafka line {line})")
    added = kafka_lines.added_topic_keys(line).get(name)
    if added is not None and added[1] is None:
        row = added[0]
        return ConfigError(f"Unknown topic config name: {name} (added in Kafka {row.release} by {row.source}; "
                           f"Kafka line {line})")
    return unknown_key_error(name, keys_by_name(line))


class NotModelledConfigWarning(UserWarning):
    """A setting Kafka knows but kafkafmt does not model: kept and written back, with no effect here."""


_announced: set[str] = set()


def _announce(names: Iterable[str]) -> None:
    new = sorted(n for n in names if n not in _announced)
    if new:
        _announced.update(new)
        warnings.warn(f"kafkafmt keeps but does not model {', '.join(new)} (no effect on the workbench's "
                      f"logs and broker rules)", NotModelledConfigWarning, stacklevel=4)


def unknown_key_error(name: str, known: Iterable[str], what: str = "topic config") -> ConfigError:
    """Kafka's ``Unknown topic config name: X``, with the closest known names suggested."""
    close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    if name in ("inter.broker.protocol.version",) and what == "topic config":
        hint = " (a broker setting: pass it in BrokerConfig)"
    return ConfigError(f"Unknown {what} name: {name}{hint}")


def _invalid(key: str, value: Any, message: str) -> ConfigError:
    return ConfigError(f"Invalid value {value} for configuration {key}: {message}")


def parse_value(key: ConfigKey, value: Any) -> Any:
    """``ConfigDef.parseType`` + the key's validator: a string or Python value → the parsed value."""
    name, t = key.name, key.type
    if t == "BOOLEAN":
        if isinstance(value, bool):
            v = value
        elif isinstance(value, str) and value.strip().lower() in ("true", "false"):
            v = value.strip().lower() == "true"
        else:
            raise _invalid(name, value, "Expected value to be either true or false")
    elif t in ("INT", "LONG"):
        lo, hi = (INT32_MIN, INT32_MAX) if t == "INT" else (INT64_MIN, INT64_MAX)
        if isinstance(value, bool):
            raise _invalid(name, value, f"Not a number of type {t}")
        if isinstance(value, int):
            v = value
        else:
            try:
                v = int(str(value).strip())
            except ValueError:
                raise _invalid(name, value, f"Not a number of type {t}") from None
        if not lo <= v <= hi:
            raise _invalid(name, value, f"Not a number of type {t}")
    elif t == "DOUBLE":
        try:
            v = float(str(value).strip()) if isinstance(value, str) else float(value)
        except (TypeError, ValueError):
            raise _invalid(name, value, "Not a number of type DOUBLE") from None
    elif t == "LIST":
        if isinstance(value, str):
            v = tuple(p.strip() for p in value.split(",")) if value.strip() else ()
        elif isinstance(value, (list, tuple)):
            v = tuple(str(p).strip() for p in value)
        else:
            raise _invalid(name, value, "Expected a comma separated list.")
    else:  # STRING
        if isinstance(value, TimestampType):
            value = value.kafka_name
        if not isinstance(value, str):
            raise _invalid(name, value, f"Expected value to be a string, but it was a {type(value).__name__}")
        v = value.strip()
    _check(key, v)
    return v


def _check(key: ConfigKey, v: Any) -> None:
    c = key.check
    if c is None:
        return
    name, kind = key.name, c[0]
    shown = v if key.type != "DOUBLE" else repr(float(v))
    if kind == "at_least" and v < c[1]:
        raise _invalid(name, shown, f"Value must be at least {c[1]}")
    if kind == "between":
        if v < c[1]:
            raise _invalid(name, shown, f"Value must be at least {c[1]}")
        if v > c[2]:
            raise _invalid(name, shown, f"Value must be no more than {c[2]}")
    if kind == "in" and v not in c[1]:
        raise _invalid(name, v, f"String must be one of: {', '.join(c[1])}")
    if kind == "list_in":
        for item in v:
            if item not in c[1]:
                raise _invalid(name, item, f"String must be one of: {', '.join(c[1])}")
    if kind == "gzip_level" and not (1 <= v <= 9 or v == -1):
        raise _invalid(name, v, "Value must be between 1 and 9 or equal to -1")
    if kind == "version":
        try:
            metadata_version_index(v)
        except ConfigError:
            raise _invalid(name, v, f"Version {v} is not a valid version") from None
    if kind == "throttled" and v and v != ("*",):
        ok = all(len(p.split(":")) == 2 and all(s.strip().isdigit() for s in p.split(":")) for p in v)
        if not ok:
            raise _invalid(name, "[" + ", ".join(v) + "]",
                           f"{name} must be the literal '*' or a list of replicas in the following format: "
                           "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def format_value(key: ConfigKey, v: Any) -> str:
    """``ConfigDef.convertToString``: the value as it stands in a ``.properties`` file."""
    if isinstance(v, TimestampType):
        return v.kafka_name
    if key.type == "BOOLEAN":
        return "true" if v else "false"
    if key.type == "LIST":
        return ",".join(v)
    if key.type == "DOUBLE":
        return repr(float(v))
    return str(v)


# ================================================================================================
# the broker
@dataclass(frozen=True)
class BrokerConfig:
    """Broker settings that change what a topic does (Kafka's ``KafkaConfig``, the part kafkafmt models).

    ``inter_broker_protocol_version`` — **kafkafmt's default is "2.8", not Kafka 3.9's.**  Kafka 3.9
    defaults the IBP to its latest (3.9-IV0), and from 3.0-IV1 on ``message.format.version`` is
    ignored: every topic is written in v2 (KIP-724, ``LogConfig.shouldIgnoreMessageFormatVersion``).
    2.8 is the last IBP that still honours the topic's format (ZooKeeper mode), so that a topic with
    ``message.format.version=0.10.0`` really stores v1, as the seeds' rolling upgrades (KIP-31/32)
    need.  Pass ``"3.9"`` to see what a current cluster does.  Below 2.1 the broker also refuses zstd.

    ``topic_defaults`` — the broker's defaults for topic settings, by their server names
    (``log.segment.bytes``, ``log.message.format.version``, ``message.max.bytes`` ...), applied
    under each topic's own overrides (``LogConfig.fromProps(defaults, overrides)``).

    Two proposals Kafka never shipped, off by default:
    ``kip228_enabled`` (``kafkafmt.kip228.enable``) — the broker of seed 002 (KIP-228): it stores
    v2 batches with the ``isTimestampExtended`` bit and turns an old ``NO_TIMESTAMP`` (-1) into
    Long.MIN_VALUE on append (:func:`kafkafmt.kip228.convert_to_extended`).
    ``idempotence_variant`` (``kafkafmt.idempotence.variant``) — which design of seed 003 the broker
    runs for idempotent batches sent to an older-format topic: ``kafka`` (what shipped: rejected),
    ``seed`` (safe mode downgraded, required mode fails) or ``published`` (see
    :mod:`kafkafmt.broker.idempotence`).
    """

    inter_broker_protocol_version: str | None = None
    topic_defaults: Mapping[str, str] = field(default_factory=dict)
    kip228_enabled: bool = False
    idempotence_variant: str = "kafka"
    #: which Kafka line's rules the broker follows (:data:`kafkafmt.kafka_lines.KAFKA_LINES`, ``--kafka-line``):
    #: every rule that differs between releases reads the rows of :mod:`kafkafmt.kafka_lines` on this line
    kafka_line: str = kafka_lines.DEFAULT_LINE

    PROPERTY_NAMES = {"inter.broker.protocol.version": "inter_broker_protocol_version",
                      "kafkafmt.kip228.enable": "kip228_enabled",
                      "kafkafmt.idempotence.variant": "idempotence_variant"}
    #: kafkafmt's default IBP where the line knows it (see the class docstring); older lines: their own
    DEFAULT_IBP = "2.8"

    def __post_init__(self):
        line = kafka_lines.check_line(self.kafka_line)
        object.__setattr__(self, "kafka_line", line)
        newest = newest_metadata_version(line)
        ibp = self.inter_broker_protocol_version
        if ibp is None:
            ibp = self.DEFAULT_IBP if version_at_least(newest, self.DEFAULT_IBP) else newest
        metadata_version_index(ibp)
        if not version_at_least(newest, ibp):
            raise _invalid("inter.broker.protocol.version", ibp,
                           f"Version {ibp} is not a valid version (Kafka {line} knows versions up to {newest})")
        object.__setattr__(self, "inter_broker_protocol_version", str(ibp))
        gone = {}
        for name, row in kafka_lines.removed_topic_keys(line).items():
            gone[row.value("3.9")[3]] = (name, row, "removed")
        for name, (row, spec) in kafka_lines.added_topic_keys(line).items():
            if spec is None and row.value("3.9") is not None and row.value("3.9")[3]:
                gone[row.value("3.9")[3]] = (name, row, "added")
        for name in dict(self.topic_defaults):
            if name in gone:
                key, row, how = gone[name]
                raise ConfigError(f"Unknown broker log config name: {name} ({how} in Kafka {row.release} with "
                                  f"{key} by {row.source}; Kafka line {line})")
        if self.idempotence_variant not in ("kafka", "seed", "published"):
            raise _invalid("kafkafmt.idempotence.variant", self.idempotence_variant,
                           "String must be one of: kafka, seed, published")
        defaults = {}
        for name, value in dict(self.topic_defaults).items():
            key = KEYS_BY_SERVER_NAME.get(name) or KEYS_BY_NAME.get(name)
            if key is None:
                raise unknown_key_error(name, list(KEYS_BY_SERVER_NAME), "broker log config")
            defaults[key.server_name or key.name] = format_value(key, parse_value(key, value))
        object.__setattr__(self, "topic_defaults", defaults)
        if "log.message.format.version" in defaults and self.has_ibp:
            self._check_format_against_ibp(defaults["log.message.format.version"])

    def _check_format_against_ibp(self, fmt: str) -> None:
        """``KafkaConfig.validateValues``: the broker refuses to start with a ``log.message.format.version``
        newer than its ``inter.broker.protocol.version``.  Until KAFKA-6238 (row
        ``broker.message_format_check``) the two were compared as ApiVersions, so ``0.10.0`` (0.10.0-IV1)
        was refused under ``0.10.0-IV0``; from 1.0.1 on by the record version each stands for.  Only a
        ``log.message.format.version`` set in ``topic_defaults`` is checked (a topic's own
        ``message.format.version`` is not: ``LogConfig`` validates it alone).  Raises
        :class:`~kafkafmt.errors.BrokerConfigRefusedError` worded as the line's release words it."""
        ibp = self.inter_broker_protocol_version
        row = "broker.message_format_check"
        if kafka_lines.value(row, self.kafka_line) == "api version":
            if metadata_version_index(ibp) < metadata_version_index(fmt):
                raise BrokerConfigRefusedError(f"log.message.format.version {fmt} cannot be used when "
                                               f"inter.broker.protocol.version is set to {ibp}", row=row)
        elif record_version(ibp) < record_version(fmt):
            floor = {0: "0.8.0", 1: "0.10.0", 2: "0.11.0"}[record_version(fmt)]
            raise BrokerConfigRefusedError(f"log.message.format.version {fmt} can only be used when "
                                           f"inter.broker.protocol.version is set to version {floor} or higher",
                                           row=row)

    @classmethod
    def from_properties(cls, props: Mapping[str, Any] | None = None, *,
                        kafka_line: str = kafka_lines.DEFAULT_LINE) -> "BrokerConfig":
        """From a ``server.properties`` mapping (the modelled broker keys and ``log.*`` topic defaults), for
        a broker of ``kafka_line``."""
        kw: dict[str, Any] = {"kafka_line": kafka_line}
        defaults: dict[str, Any] = {}
        for name, value in dict(props or {}).items():
            if name == "kafkafmt.kafka.version":
                raise ConfigError("kafkafmt.kafka.version is not a property: the Kafka line is chosen with "
                                  "--kafka-line (BrokerConfig.kafka_line)")
            if name in cls.PROPERTY_NAMES:
                attr = cls.PROPERTY_NAMES[name]
                kw[attr] = (parse_value(ConfigKey(name, "BOOLEAN", False, None, None), value)
                            if attr == "kip228_enabled" else str(value).strip())
            elif name in KEYS_BY_SERVER_NAME:
                defaults[name] = value
            else:
                raise unknown_key_error(name, [*cls.PROPERTY_NAMES, *KEYS_BY_SERVER_NAME], "broker config")
        return cls(topic_defaults=defaults, **kw)

    def to_properties(self) -> dict[str, str]:
        out = {"inter.broker.protocol.version": self.inter_broker_protocol_version}
        if self.kip228_enabled:
            out["kafkafmt.kip228.enable"] = "true"
        if self.idempotence_variant != "kafka":
            out["kafkafmt.idempotence.variant"] = self.idempotence_variant
        out.update(self.topic_defaults)
        return out

    @property
    def message_format_ignored(self) -> bool:
        """``LogConfig.shouldIgnoreMessageFormatVersion``: IBP ≥ 3.0-IV1 → every topic is v2 (KIP-724).

        Row ``produce.record_version``: a line that always writes v2 (4.x) has no such setting; one that
        predates ``message.format.version`` (0.9) writes v0."""
        written = kafka_lines.value("produce.record_version", self.kafka_line)
        if written != "message.format.version":
            return written == 2
        return version_at_least(self.inter_broker_protocol_version, "3.0-IV1")

    @property
    def has_ibp(self) -> bool:
        """Whether the line has ``inter.broker.protocol.version`` (row ``broker.inter_broker_protocol``; 4.x:
        KRaft's metadata.version instead)."""
        return kafka_lines.value("broker.inter_broker_protocol", self.kafka_line) is not None

    @property
    def supports_zstd(self) -> bool:
        """zstd (row ``produce.zstd``, KIP-110) needs IBP ≥ 2.1-IV0 where there is an IBP
        (``LogValidator.validateMessagesAndAssignOffsetsCompressed``)."""
        if not kafka_lines.value("produce.zstd", self.kafka_line):
            return False
        if not self.has_ibp:
            return True
        return version_at_least(self.inter_broker_protocol_version, "2.1-IV0")

    def describe(self) -> str:
        line = self.kafka_line
        if not self.has_ibp:
            return (f"Kafka line {line}: Kafka {line}'s rules (KRaft; every "
                    "topic is v2, no down-conversion, Produce < v3 and Fetch < v4 refused: KIP-724, KIP-896)")
        if line != kafka_lines.DEFAULT_LINE:
            return f"Kafka line {line}: inter.broker.protocol.version {self.inter_broker_protocol_version}"
        ibp = self.inter_broker_protocol_version
        why = ("kafkafmt's default: the last IBP that honours message.format.version; Kafka 3.9's own default "
               "is 3.9, under which every topic is written in v2 (KIP-724)") if ibp == "2.8" else (
            "message.format.version is ignored: every topic is v2 (KIP-724)" if self.message_format_ignored
            else "message.format.version is honoured")
        return f"inter.broker.protocol.version {ibp} ({why})"

    def replace(self, **changes) -> "BrokerConfig":
        """This broker with some fields changed; a new ``kafka_line`` takes that line's default IBP unless
        the IBP was set (or is given)."""
        if "kafka_line" in changes and "inter_broker_protocol_version" not in changes \
                and self.inter_broker_protocol_version == BrokerConfig(kafka_line=self.kafka_line).inter_broker_protocol_version:
            changes["inter_broker_protocol_version"] = None
        return dataclasses.replace(self, **changes)


DEFAULT_BROKER = BrokerConfig()


# ================================================================================================
# the topic
def _default(attr: str):
    key = KEYS_BY_ATTR[attr]
    if attr == "timestamp_type":
        return field(default=TimestampType.CREATE_TIME)
    return field(default=key.default)


@dataclass(frozen=True)
class LogConfig:
    """A topic's configuration (Kafka's ``LogConfig``): every modelled setting as a field, Kafka's defaults.

    Build it from Kafka's property names with :meth:`from_properties` (strings or Python values),
    or with field names (``LogConfig(segment_bytes=1024, timestamp_type="LogAppendTime")``).
    :meth:`to_properties` writes it back losslessly; :meth:`with_properties` applies changes as
    ``kafka-configs --alter`` does.  ``broker`` is the :class:`BrokerConfig` the topic lives on.
    """

    segment_bytes: int = _default("segment_bytes")                  #: segment.bytes
    segment_ms: int = _default("segment_ms")                        #: segment.ms
    segment_jitter_ms: int = _default("segment_jitter_ms")          #: segment.jitter.ms
    segment_index_bytes: int = _default("segment_index_bytes")      #: segment.index.bytes
    retention_bytes: int = _default("retention_bytes")              #: retention.bytes (-1: no size limit)
    retention_ms: int = _default("retention_ms")                    #: retention.ms (-1: keep forever)
    max_message_bytes: int = _default("max_message_bytes")          #: max.message.bytes
    index_interval_bytes: int = _default("index_interval_bytes")    #: index.interval.bytes
    max_compaction_lag_ms: int = _default("max_compaction_lag_ms")  #: max.compaction.lag.ms
    min_compaction_lag_ms: int = _default("min_compaction_lag_ms")  #: min.compaction.lag.ms (the cleaner)
    delete_retention_ms: int = _default("delete_retention_ms")      #: delete.retention.ms (the cleaner's tombstones)
    min_cleanable_dirty_ratio: float = _default("min_cleanable_dirty_ratio")  #: min.cleanable.dirty.ratio
    file_delete_delay_ms: int = _default("file_delete_delay_ms")    #: file.delete.delay.ms
    cleanup_policy: tuple[str, ...] = _default("cleanup_policy")    #: cleanup.policy
    compression_type: str = _default("compression_type")            #: compression.type
    gzip_level: int = _default("gzip_level")                        #: compression.gzip.level
    lz4_level: int = _default("lz4_level")                          #: compression.lz4.level
    zstd_level: int = _default("zstd_level")                        #: compression.zstd.level
    preallocate: bool = _default("preallocate")                     #: preallocate
    message_format_version: str = _default("message_format_version")  #: message.format.version
    timestamp_type: TimestampType = _default("timestamp_type")      #: message.timestamp.type
    timestamp_difference_max_ms: int = _default("timestamp_difference_max_ms")  #: ...difference.max.ms
    timestamp_before_max_ms: int = _default("timestamp_before_max_ms")  #: message.timestamp.before.max.ms
    timestamp_after_max_ms: int = _default("timestamp_after_max_ms")    #: message.timestamp.after.max.ms
    downconversion_enable: bool = _default("downconversion_enable")  #: message.downconversion.enable
    #: settings Kafka knows and kafkafmt keeps without modelling them (Kafka name → string)
    not_modelled: Mapping[str, str] = field(default_factory=dict)
    broker: BrokerConfig = field(default=DEFAULT_BROKER)
    #: the Kafka names set explicitly (``LogConfig.overriddenConfigs``); None = those differing from defaults
    overridden: frozenset | None = field(default=None, compare=False)

    def __post_init__(self):
        if not isinstance(self.broker, BrokerConfig):
            raise ConfigError(f"broker must be a BrokerConfig, not {type(self.broker).__name__}")
        line = self.broker.kafka_line
        if line != kafka_lines.DEFAULT_LINE:
            self._apply_line(line)
        for attr, key in KEYS_BY_ATTR.items():
            key = _line_key(key, line)
            value = getattr(self, attr)
            if attr == "timestamp_type":
                if isinstance(value, TimestampType):
                    if value == TimestampType.NO_TIMESTAMP_TYPE:
                        raise _invalid(key.name, "NoTimestampType", "String must be one of: CreateTime, LogAppendTime")
                    continue
                value = TimestampType.from_name(parse_value(key, value if isinstance(value, str) else str(value)))
            else:
                if attr == "compression_type" and isinstance(value, str) and value.strip().lower() == "none":
                    value = "uncompressed"  # kafkafmt's alias, as the producer's codec name
                value = parse_value(key, value)
            object.__setattr__(self, attr, value)
        kept = {}
        known = keys_by_name(line)
        for name, value in dict(self.not_modelled).items():
            key = known.get(name)
            if key is None or key.modelled:
                raise topic_key_error(name, line) if key is None else \
                    ConfigError(f"{name} is modelled: set the field {key.attr}")
            kept[name] = format_value(key, parse_value(key, value))
        object.__setattr__(self, "not_modelled", kept)
        if kept:
            _announce(kept)
        if self.overridden is None:
            diff = {k.name for a, k in KEYS_BY_ATTR.items()
                    if getattr(self, a) != _parsed_default(_line_key(k, line))}
            object.__setattr__(self, "overridden", frozenset(diff | set(kept)))

    def _apply_line(self, line: str) -> None:
        """A line's topic rules (:mod:`kafkafmt.kafka_lines`): a setting the line does not know (removed, or
        added by a later release) given a value other than 3.9's default is an error naming the release and
        KIP; a setting whose default differs takes the line's default unless it was set (``overridden``) or
        differs from 3.9's default; ``message.format.version`` newer than the line is an error."""
        explicit = self.overridden
        known = keys_by_name(line)
        for key in TOPIC_KEYS:
            if key.name not in known and key.attr is not None and (
                    getattr(self, key.attr) != _parsed_default(key) or (explicit is not None and key.name in explicit)):
                raise topic_key_error(key.name, line)
        for name, row in kafka_lines.changed_topic_defaults(line).items():
            key = KEYS_BY_NAME[name]
            if getattr(self, key.attr) == _parsed_default(key) and (explicit is None or name not in explicit):
                object.__setattr__(self, key.attr, line_default(row.value(line), line))
        if "message.format.version" in known:
            newest = newest_metadata_version(line)
            mfv = str(self.message_format_version).strip()
            if not version_at_least(newest, mfv):
                raise _invalid("message.format.version", mfv,
                               f"Version {mfv} is not a valid version (Kafka {line} knows versions up to {newest})")

    # --- construction --------------------------------------------------------------------------
    @classmethod
    def from_properties(cls, props: Mapping[str, Any] | None = None, *, broker: BrokerConfig | None = None,
                        **fields) -> "LogConfig":
        """From Kafka's topic property names (``{"segment.bytes": "1024", ...}``), as ``LogConfig.fromProps``.

        ``broker``'s ``topic_defaults`` apply first, then ``props`` (strings as in a ``.properties``
        file, or Python values), then ``fields`` (field names).  An unknown key is a
        :class:`~kafkafmt.errors.ConfigError` naming it; a known but unmodelled key is kept.
        """
        broker = broker or DEFAULT_BROKER
        known = keys_by_name(broker.kafka_line)
        merged: dict[str, Any] = {}
        for server_name, value in broker.topic_defaults.items():
            key = KEYS_BY_SERVER_NAME[server_name]
            merged[key.name] = value
        given = dict(props or {})
        for name in given:
            if name not in known:
                raise topic_key_error(name, broker.kafka_line)
        merged.update(given)
        kw: dict[str, Any] = {}
        kept: dict[str, Any] = {}
        for name, value in merged.items():
            key = known[name]
            if key.modelled:
                kw[key.attr] = value
            else:
                kept[name] = value
        kw.update(fields)
        overridden = frozenset(given) | frozenset(KEYS_BY_ATTR[f].name for f in fields if f in KEYS_BY_ATTR)
        return cls(not_modelled=kept, broker=broker, overridden=overridden, **kw)

    def to_properties(self, *, defaults: bool = False) -> dict[str, str]:
        """The settings as Kafka topic properties (strings).  Only those overridden unless ``defaults``.

        ``LogConfig.from_properties(c.to_properties(), broker=c.broker) == c`` for every config ``c``.
        """
        out: dict[str, str] = {}
        for key in topic_keys(self.broker.kafka_line):
            if not (defaults or key.name in self.overridden):
                continue
            if key.modelled:
                out[key.name] = format_value(key, getattr(self, key.attr))
            elif key.name in self.not_modelled:
                out[key.name] = self.not_modelled[key.name]
            else:
                out[key.name] = format_value(key, key.default)
        return out

    def with_properties(self, props: Mapping[str, Any]) -> "LogConfig":
        """This configuration with some Kafka properties changed (``kafka-configs --alter --add-config``)."""
        merged = self.to_properties()
        known = keys_by_name(self.broker.kafka_line)
        for name in props:
            if name not in known:
                raise topic_key_error(name, self.broker.kafka_line)
        merged.update(props)
        return LogConfig.from_properties(merged, broker=self.broker)

    def replace(self, **changes) -> "LogConfig":
        """This configuration with some fields changed (field names; ``broker=`` too)."""
        unknown = [c for c in changes if c not in {f.name for f in dataclasses.fields(self)}]
        if unknown:
            raise unknown_key_error(unknown[0], [f.name for f in dataclasses.fields(self)], "LogConfig field")
        changed = frozenset(KEYS_BY_ATTR[c].name for c in changes if c in KEYS_BY_ATTR)
        return dataclasses.replace(self, overridden=(self.overridden or frozenset()) | changed, **changes)

    # --- derived values (LogConfig.java) --------------------------------------------------------
    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    compacted = compact

    @property
    def max_index_size(self) -> int:
        return self.segment_index_bytes

    @property
    def max_message_size(self) -> int:
        return self.max_message_bytes

    @property
    def max_segment_ms(self) -> int:
        """``maxSegmentMs``: min(max.compaction.lag.ms, segment.ms) for compacted topics."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def init_file_size(self) -> int:
        """``initFileSize``: segment.bytes when preallocating, else 0."""
        return self.segment_bytes if self.preallocate else 0

    def random_segment_jitter(self, rng: random.Random) -> int:
        """``randomSegmentJitter``: ``abs(nextInt) % min(segment.jitter.ms, segment.ms)``, 0 without jitter.

        Kafka draws ``nextInt`` from ``ThreadLocalRandom``; here a 32-bit signed int is drawn from
        ``rng`` (one draw per segment), so runs with the same seed roll at the same times.
        """
        if self.segment_jitter_ms == 0:
            return 0
        n = rng.getrandbits(32)
        if n >= 2**31:
            n -= 2**32
        n = 0 if n == -(2**31) else abs(n)  # Utils.abs
        return n % min(self.segment_jitter_ms, self.segment_ms)

    # --- message format ------------------------------------------------------------------------
    @property
    def inter_broker_protocol_version(self) -> str:
        return self.broker.inter_broker_protocol_version

    @property
    def message_format_ignored(self) -> bool:
        """IBP ≥ 3.0-IV1: ``message.format.version`` has no effect (KIP-724); see :class:`BrokerConfig`."""
        return self.broker.message_format_ignored

    @property
    def to_magic(self) -> int:
        """The topic's record version (``LogConfig.recordVersion``), the ``toMagic`` LogValidator gets: row
        ``produce.record_version`` (v0 before KIP-32; the topic's message.format.version; v2 from KIP-724)."""
        written = kafka_lines.value("produce.record_version", self.broker.kafka_line)
        if written != "message.format.version":
            return written
        if self.message_format_ignored:
            return 2
        return record_version(self.message_format_version)

    record_version = to_magic

    @property
    def ibp_supports_zstd(self) -> bool:
        return self.broker.supports_zstd

    # --- timestamps ----------------------------------------------------------------------------
    @property
    def effective_before_max_ms(self) -> int:
        """``LogConfig.getMessageTimestampBeforeMaxMs``: before.max.ms unless left at Long.MAX."""
        if self.timestamp_before_max_ms != INT64_MAX:
            return self.timestamp_before_max_ms
        return self.timestamp_difference_max_ms

    @property
    def effective_after_max_ms(self) -> int:
        """``LogConfig.getMessageTimestampAfterMaxMs``: after.max.ms unless left at Long.MAX."""
        if self.timestamp_after_max_ms != INT64_MAX:
            return self.timestamp_after_max_ms
        return self.timestamp_difference_max_ms

    # --- compression ---------------------------------------------------------------------------
    @property
    def broker_compression(self) -> str:
        """``BrokerCompressionType`` name (``uncompressed`` … ``producer``)."""
        return self.compression_type

    def target_compression(self, source: CompressionType) -> CompressionType:
        """``BrokerCompressionType.targetCompression``: ``producer`` → the source codec."""
        bc = self.compression_type
        if bc == "producer":
            return CompressionType(source)
        if bc == "uncompressed":
            return CompressionType.NONE
        return CompressionType.from_name(bc)

    def target_level(self, source: CompressionType) -> int | None:
        """The level the broker compresses with: the topic's level (None: the codec's default, also
        when ``producer`` keeps the producer's codec, as ``BrokerCompressionType.targetCompression``)."""
        if self.compression_type == "producer":
            return None
        codec = self.target_compression(source)
        attr = {CompressionType.GZIP: "gzip_level", CompressionType.LZ4: "lz4_level",
                CompressionType.ZSTD: "zstd_level"}.get(codec)
        if attr is None:
            return None
        level = getattr(self, attr)
        return None if level == KEYS_BY_ATTR[attr].default else level

    # --- traces --------------------------------------------------------------------------------
    def describe(self) -> dict:
        """The derived values the broker uses (for traces), and what is kept without being modelled."""
        out = {"message.format.version": self.message_format_version,
               "inter.broker.protocol.version": self.inter_broker_protocol_version,
               "message_format_ignored": self.message_format_ignored, "toMagic": self.to_magic,
               "message.timestamp.type": self.timestamp_type.kafka_name,
               "timestampBeforeMaxMs": self.effective_before_max_ms,
               "timestampAfterMaxMs": self.effective_after_max_ms,
               "compression.type": self.broker_compression, "compacted": self.compact,
               "max.message.bytes": self.max_message_bytes}
        if self.broker.kafka_line != kafka_lines.DEFAULT_LINE:
            out = {"kafka_line": self.broker.kafka_line, **out}
        if self.not_modelled:
            out["not modelled"] = ", ".join(sorted(self.not_modelled))
        return out


def _line_key(key: ConfigKey, line: str) -> ConfigKey:
    """``key`` as the line knows it (its default and lower bound); 3.9's for a key the line removed."""
    if line == kafka_lines.DEFAULT_LINE:
        return key
    return keys_by_name(line).get(key.name, key)


def _parsed_default(key: ConfigKey):
    if key.attr == "timestamp_type":
        return TimestampType.CREATE_TIME
    return key.default


# ================================================================================================
# The broker's log-cleaner settings (``CleanerConfig``'s keys): here, beside the other broker settings, so
# that ``kafkafmt clean --help`` names them without loading the cleaner (numba); the cleaner's
# ``CleanerConfig`` (:mod:`kafkafmt.log.cleaner.offset_map`) reads them from here.
# ================================================================================================

#: broker setting (Kafka name) -> (CleanerConfig field, type (int or float), Kafka 3.9 default)
CLEANER_KEYS: dict[str, tuple[str, Callable[[str], Any], Any]] = {
    "log.cleaner.threads": ("num_threads", int, 1),
    "log.cleaner.dedupe.buffer.size": ("dedupe_buffer_size", int, 128 * 1024 * 1024),
    "log.cleaner.io.buffer.load.factor": ("load_factor", float, 0.9),
    "log.cleaner.io.buffer.size": ("io_buffer_size", int, 512 * 1024),
    "message.max.bytes": ("max_message_size", int, 1024 * 1024 + 12),
    "log.cleaner.backoff.ms": ("backoff_ms", int, 15 * 1000),
    "producer.id.expiration.ms": ("producer_id_expiration_ms", int, 86400000),
}


__all__ = ["LogConfig", "BrokerConfig", "ConfigKey", "TOPIC_KEYS", "KEYS_BY_NAME", "topic_keys", "keys_by_name",
           "topic_key_error",
           "NotModelledConfigWarning", "ConfigError", "metadata_version_index", "version_at_least",
           "record_version", "METADATA_VERSIONS", "DEFAULT_BROKER", "newest_metadata_version", "line_default",
           "CLEANER_KEYS"]
