"""Topic configuration as the broker's validator and fetch path read it.

:class:`TopicConfig` holds the settings of ``org.apache.kafka.storage.internals.log.LogConfig``
that decide how a produce request is validated and how a fetch is answered:

* ``message.format.version`` → :attr:`TopicConfig.to_magic` (``LogConfig.recordVersion`` =
  ``MetadataVersion.highestSupportedRecordVersion``: < 0.10.0 → v0, < 0.11.0 → v1, else v2),
  **ignored** (always v2) when ``inter.broker.protocol.version`` ≥ 3.0-IV1
  (``LogConfig.shouldIgnoreMessageFormatVersion``; ``LogManager.fetchTopicConfigOverrides`` drops
  the override; KIP-724);
* ``message.timestamp.type``, ``message.timestamp.difference.max.ms`` (KIP-32) and
  ``message.timestamp.before.max.ms`` / ``after.max.ms`` (KIP-937, Kafka 3.6), which fall back to
  the difference when left at Long.MAX (``LogConfig.getMessageTimestampBeforeMaxMs``);
* ``compression.type`` (``BrokerCompressionType``; ``producer`` keeps the producer's codec);
* ``cleanup.policy`` containing ``compact``, ``max.message.bytes``, ``segment.bytes``,
  ``message.downconversion.enable`` (KIP-283).

**Default inter-broker protocol version.**  Kafka 3.9's own default IBP is its latest, under which
``message.format.version`` has no effect.  kafkafmt defaults :attr:`TopicConfig.inter_broker_protocol_version`
to ``"2.8"`` (the last IBP that still honours the topic's format, ZooKeeper mode only) so that
``TopicConfig(message_format_version="0.10.0")`` really writes v1, as the seeds' rolling-upgrade
scenarios (KIP-31/32) need.  Pass ``inter_broker_protocol_version="3.9"`` to see what a current
cluster does (the format setting is then ignored and recorded as such).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..constants import INT64_MAX, CompressionType, TimestampType
from ..errors import ConfigError, KafkaFmtError  # noqa: F401 (ConfigError re-exported)

# MetadataVersion.ibpVersion strings in order (server-common MetadataVersion, Kafka 3.9).
_IBP_ORDER = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0",
    "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0",
    "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0", "2.0-IV0", "2.0-IV1",
    "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1",
    "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1", "3.0-IV0", "3.0-IV1",
    "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1",
    "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4",
    "3.8-IV0", "3.9-IV0",
)
_IBP_INDEX: dict[str, int] = {}
for _i, _name in enumerate(_IBP_ORDER):
    _IBP_INDEX[_name] = _i
    _IBP_INDEX[_name.split("-IV")[0]] = _i  # a release version means its latest IV (maxInterVersion)




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
        return _IBP_INDEX[key]
    except KeyError:
        raise ConfigError(f"Version {version} is not a valid version") from None


def version_at_least(version: str, floor: str) -> bool:
    return metadata_version_index(version) >= metadata_version_index(floor)


def record_version(message_format_version: str) -> int:
    """``MetadataVersion.highestSupportedRecordVersion``: <0.10.0-IV0 → 0, <0.11.0-IV0 → 1, else 2."""
    i = metadata_version_index(message_format_version)
    if i < _IBP_INDEX["0.10.0-IV0"]:
        return 0
    if i < _IBP_INDEX["0.11.0-IV0"]:
        return 1
    return 2


_BROKER_CODECS = ("producer", "uncompressed", "none", "gzip", "snappy", "lz4", "zstd")

#: Kafka's dotted property names → TopicConfig field names
PROPERTY_NAMES = {
    "message.format.version": "message_format_version",
    "log.message.format.version": "message_format_version",
    "inter.broker.protocol.version": "inter_broker_protocol_version",
    "message.timestamp.type": "timestamp_type",
    "log.message.timestamp.type": "timestamp_type",
    "compression.type": "compression_type",
    "message.timestamp.difference.max.ms": "timestamp_difference_max_ms",
    "log.message.timestamp.difference.max.ms": "timestamp_difference_max_ms",
    "message.timestamp.before.max.ms": "timestamp_before_max_ms",
    "log.message.timestamp.before.max.ms": "timestamp_before_max_ms",
    "message.timestamp.after.max.ms": "timestamp_after_max_ms",
    "log.message.timestamp.after.max.ms": "timestamp_after_max_ms",
    "cleanup.policy": "compacted",
    "log.cleanup.policy": "compacted",
    "max.message.bytes": "max_message_bytes",
    "message.max.bytes": "max_message_bytes",
    "segment.bytes": "segment_bytes",
    "log.segment.bytes": "segment_bytes",
    "message.downconversion.enable": "downconversion_enable",
    "log.message.downconversion.enable": "downconversion_enable",
    "compression.gzip.level": "gzip_level",
    "compression.lz4.level": "lz4_level",
    "compression.zstd.level": "zstd_level",
}


@dataclass
class TopicConfig:
    """The topic settings LogValidator and the fetch path use (``LogConfig``); see the module doc."""

    message_format_version: str = "3.0-IV1"  #: Kafka 3.x default (``LOG_MESSAGE_FORMAT_VERSION_DEFAULT``)
    inter_broker_protocol_version: str = "2.8"  #: kafkafmt's choice, so that old formats take effect
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    compression_type: str = "producer"
    timestamp_difference_max_ms: int = INT64_MAX
    timestamp_before_max_ms: int = INT64_MAX
    timestamp_after_max_ms: int = INT64_MAX
    compacted: bool = False
    max_message_bytes: int = 1048588
    segment_bytes: int = 1073741824
    downconversion_enable: bool = True
    gzip_level: int | None = None
    lz4_level: int | None = None
    zstd_level: int | None = None
    extra: dict = field(default_factory=dict, repr=False)  #: properties kafkafmt does not use

    def __post_init__(self):
        if isinstance(self.timestamp_type, str):
            try:
                self.timestamp_type = TimestampType.from_name(self.timestamp_type)
            except ValueError:
                raise ConfigError(f"Invalid value {self.timestamp_type} for configuration message.timestamp.type: "
                                  "String must be one of: CreateTime, LogAppendTime") from None
        self.timestamp_type = TimestampType(self.timestamp_type)
        if self.timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise ConfigError("message.timestamp.type must be CreateTime or LogAppendTime")
        self.compression_type = str(self.compression_type).lower()
        if self.compression_type not in _BROKER_CODECS:
            raise ConfigError(f"Invalid value {self.compression_type} for configuration compression.type: "
                              "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer")
        metadata_version_index(self.message_format_version)
        metadata_version_index(self.inter_broker_protocol_version)
        for name in ("timestamp_difference_max_ms", "timestamp_before_max_ms", "timestamp_after_max_ms"):
            if int(getattr(self, name)) < 0:
                raise ConfigError(f"Invalid value {getattr(self, name)} for configuration "
                                  f"{_dotted(name)}: Value must be at least 0")

    # --- message format ------------------------------------------------------------------------
    @property
    def message_format_ignored(self) -> bool:
        """``LogConfig.shouldIgnoreMessageFormatVersion``: IBP ≥ 3.0-IV1 → always v2 (KIP-724)."""
        return version_at_least(self.inter_broker_protocol_version, "3.0-IV1")

    @property
    def to_magic(self) -> int:
        """The topic's record version (``LogConfig.recordVersion``), the ``toMagic`` LogValidator gets."""
        if self.message_format_ignored:
            return 2
        return record_version(self.message_format_version)

    record_version = to_magic

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
        """``BrokerCompressionType`` name: ``none`` is accepted as kafkafmt's alias of ``uncompressed``."""
        return "uncompressed" if self.compression_type == "none" else self.compression_type

    def target_compression(self, source: CompressionType) -> CompressionType:
        """``BrokerCompressionType.targetCompression``: ``producer`` → the source codec."""
        bc = self.broker_compression
        if bc == "producer":
            return CompressionType(source)
        if bc == "uncompressed":
            return CompressionType.NONE
        return CompressionType.from_name(bc)

    def target_level(self, source: CompressionType) -> int | None:
        """The level the broker compresses with: the topic's level unless ``producer`` (then default)."""
        if self.broker_compression == "producer":
            return None
        codec = self.target_compression(source)
        return {CompressionType.GZIP: self.gzip_level, CompressionType.LZ4: self.lz4_level,
                CompressionType.ZSTD: self.zstd_level}.get(codec)

    @property
    def ibp_supports_zstd(self) -> bool:
        """zstd needs IBP ≥ 2.1-IV0 (``LogValidator.validateMessagesAndAssignOffsetsCompressed``, KAFKA-7920)."""
        return version_at_least(self.inter_broker_protocol_version, "2.1-IV0")

    # --- construction --------------------------------------------------------------------------
    @classmethod
    def from_properties(cls, props: dict, **overrides) -> "TopicConfig":
        """Build from Kafka's dotted property names (``message.format.version`` …) or field names.

        ``cleanup.policy`` is a comma list (``compact`` in it sets :attr:`compacted`); booleans and
        numbers may be given as strings.  Unknown properties are kept in :attr:`extra`.
        """
        kw: dict = {}
        extra: dict = {}
        fields = {f.name for f in dataclasses.fields(cls)}
        for key, value in dict(props, **overrides).items():
            name = PROPERTY_NAMES.get(key, key.replace(".", "_").replace("-", "_"))
            if name not in fields or name == "extra":
                extra[key] = value
                continue
            kw[name] = _coerce(name, value)
        return cls(extra=extra, **kw)

    def to_properties(self) -> dict:
        """The settings as Kafka topic properties (``message.format.version`` …)."""
        out = {
            "message.format.version": self.message_format_version,
            "inter.broker.protocol.version": self.inter_broker_protocol_version,
            "message.timestamp.type": self.timestamp_type.kafka_name,
            "compression.type": self.broker_compression,
            "message.timestamp.difference.max.ms": self.timestamp_difference_max_ms,
            "message.timestamp.before.max.ms": self.timestamp_before_max_ms,
            "message.timestamp.after.max.ms": self.timestamp_after_max_ms,
            "cleanup.policy": "compact" if self.compacted else "delete",
            "max.message.bytes": self.max_message_bytes,
            "segment.bytes": self.segment_bytes,
            "message.downconversion.enable": self.downconversion_enable,
        }
        for codec in ("gzip", "lz4", "zstd"):
            lvl = getattr(self, f"{codec}_level")
            if lvl is not None:
                out[f"compression.{codec}.level"] = lvl
        return out

    def replace(self, **changes) -> "TopicConfig":
        return dataclasses.replace(self, **changes)

    def describe(self) -> dict:
        """The derived values the broker uses (for traces)."""
        return {"message.format.version": self.message_format_version,
                "inter.broker.protocol.version": self.inter_broker_protocol_version,
                "message_format_ignored": self.message_format_ignored, "toMagic": self.to_magic,
                "message.timestamp.type": self.timestamp_type.kafka_name,
                "timestampBeforeMaxMs": self.effective_before_max_ms,
                "timestampAfterMaxMs": self.effective_after_max_ms,
                "compression.type": self.broker_compression, "compacted": self.compacted,
                "max.message.bytes": self.max_message_bytes}


def _dotted(name: str) -> str:
    for k, v in PROPERTY_NAMES.items():
        if v == name and not k.startswith("log."):
            return k
    return name


def _coerce(name: str, value):
    if name == "compacted":
        if isinstance(value, bool):
            return value
        return "compact" in [p.strip().lower() for p in str(value).split(",")]
    if name == "downconversion_enable":
        if isinstance(value, bool):
            return value
        s = str(value).strip().lower()
        if s not in ("true", "false"):
            raise ConfigError(f"Invalid value {value} for configuration message.downconversion.enable: "
                              "Expected value to be either true or false")
        return s == "true"
    if name in ("timestamp_difference_max_ms", "timestamp_before_max_ms", "timestamp_after_max_ms",
                "max_message_bytes", "segment_bytes", "gzip_level", "lz4_level", "zstd_level"):
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"Invalid value {value} for configuration {_dotted(name)}: Not a number of type LONG") \
                from None
    return value
