"""The cluster model's parts: brokers, producers, consumers, the row each hop returns, and the one place
where a broker's Kafka properties become its configuration (:func:`topic_config_for`, with
:func:`broker_config_for` for the broker's own settings)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .. import kafka_lines
from ..config import BrokerConfig, LogConfig
from ..errors import ConfigError
from .versions import code_record_version, kafka4_line, normalize_api_version, release_line, without_ibp

__all__ = ["BrokerSpec", "ProducerSpec", "ConsumerSpec", "PathRow", "topic_config_for", "broker_config_for",
           "IDEMPOTENCE_MODES", "START_MS", "removed_properties"]

#: the simulated clock's start (2023-11-14T22:13:20Z), so CreateTime checks see realistic times
START_MS = 1_700_000_000_000
#: seed 003's modes, plus Kafka's booleans and the producer's "none"
IDEMPOTENCE_MODES = ("off", "safe", "required", "true", "false")


@dataclass
class BrokerSpec:
    """A broker: its code generation and its Kafka properties (``inter.broker.protocol.version`` …)."""

    name: str
    version: str = "3.9"  #: the code generation: its release line's rules (:attr:`kafka_line`)
    properties: dict = field(default_factory=dict)  #: Kafka property names → values
    kip228: bool = False  #: seed 002's "new broker"
    idempotence_modes: bool = False  #: seed 003's 1.0.0 broker (safe → downgrade, required → error)
    up: bool = True

    @property
    def inter_broker_protocol_version(self) -> str:
        """The IBP; a Kafka 4.x broker has none (KRaft's metadata.version): its line ("4.4") stands for it."""
        line = kafka4_line(self.version)
        if line is not None:
            return line
        return normalize_api_version(self.properties.get("inter.broker.protocol.version", self.version))

    @property
    def kafka_line(self) -> str:
        """Whose rules the broker runs: the line of its code generation ("0.10.0" for ``version: "0.10.0"``,
        "4.4" for "4.4"), ``BrokerConfig.kafka_line`` of its logs (rows of :mod:`kafkafmt.kafka_lines`)."""
        return release_line(self.version)


@dataclass
class ProducerSpec:
    """A producer: client generation, optional forced request version, codec, idempotence, KIP-228."""

    name: str
    version: str = "3.9"
    produce_version: int | None = None  #: None: the newest version both sides speak
    compression: str = "none"
    idempotence: str = "off"  #: off | safe | required | true | false (seed 003)
    kip228: bool = False  #: seed 002's "new producer": sets isTimestampExtended

    def mode(self) -> str:
        """The effective mode: a 1.0.0-or-later client reads true as required, false as off (seed 003)."""
        m = str(self.idempotence).lower()
        if m not in IDEMPOTENCE_MODES:
            raise ConfigError(f"Invalid value {self.idempotence} for configuration enable.idempotence")
        return {"true": "required", "false": "off"}.get(m, m)


@dataclass
class ConsumerSpec:
    """A consumer: client generation, optional forced fetch version, KIP-228 awareness."""

    name: str
    version: str = "3.9"
    fetch_version: int | None = None
    kip228: bool = False  #: seed 002's "new consumer"


@dataclass
class PathRow:
    """What one hop did: computed fields (deterministic) and ``measured`` timings (not)."""

    path: str  #: producer | leader | follower | consumer | broker | disk | client
    actor: str
    partition: int | None = None
    request: str = ""  #: e.g. "ProduceRequest v2"
    magic_in: int | None = None
    magic_out: int | None = None  #: on disk (leader/follower) or delivered (consumer)
    conversion: str = ""  #: zero-copy | in place | converted up v0→v1 | converted down v1→v0 | …
    recompressed: bool | None = None
    records: int = 0
    records_touched: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    error: str | None = None
    detail: dict = field(default_factory=dict)
    measured: dict = field(default_factory=dict)

    def to_dict(self, *, with_measured: bool = True) -> dict:
        d = asdict(self)
        if not with_measured:
            d.pop("measured")
        return d


def removed_properties(broker: BrokerSpec) -> list[str]:
    """The broker's properties its Kafka line does not know, ignored by the model as the release ignores
    them: keys removed before the line (a 3.9 broker's ``message.format.version`` and
    ``inter.broker.protocol.version`` after its code became 4.4: KIP-724) or added after it (a 0.9
    broker's ``message.format.version``: KIP-32)."""
    line = broker.kafka_line
    gone = {"inter.broker.protocol.version"} if without_ibp(line) else set()
    for name, row in kafka_lines.removed_topic_keys(line).items():
        gone |= {name, row.value(kafka_lines.DEFAULT_LINE)[3]}
    for name, (row, spec) in kafka_lines.added_topic_keys(line).items():
        if spec is None and row.value(kafka_lines.DEFAULT_LINE) is not None:
            gone |= {name, row.value(kafka_lines.DEFAULT_LINE)[3]}
    return sorted(k for k in broker.properties if k in gone)


def _broker_settings(broker: BrokerSpec) -> tuple[dict, dict]:
    """The broker's properties its line knows, split: ``(topic properties, server properties)``.  The
    server properties are ``inter.broker.protocol.version`` and ``log.message.format.version`` (the
    scenario's ``message.format.version`` or ``log.message.format.version``: the broker's default for its
    topics), the format capped at what the broker's code can write and defaulting to its code version."""
    line = broker.kafka_line
    gone = set(removed_properties(broker))
    props = {k: v for k, v in broker.properties.items() if k not in gone}
    if without_ibp(line):
        return props, {}
    props.pop("inter.broker.protocol.version", None)
    fmt = props.pop("message.format.version", props.pop("log.message.format.version", broker.version))
    fmt = normalize_api_version(fmt)
    if code_record_version(fmt) > code_record_version(broker.version):
        fmt = normalize_api_version(broker.version)
    server = {"inter.broker.protocol.version": broker.inter_broker_protocol_version}
    if kafka_lines.value("topic.added.message.format.version", line) is not None:  # KIP-32 (0.10.0)
        server["log.message.format.version"] = fmt
    return props, server


def broker_config_for(broker: BrokerSpec) -> BrokerConfig:
    """The broker's :class:`~kafkafmt.config.BrokerConfig`: its line (``kafka_line``), its
    ``inter.broker.protocol.version`` and its ``log.message.format.version`` (as ``topic_defaults``), and the
    two switches for proposals Kafka never shipped (``kip228`` → ``kafkafmt.kip228.enable``,
    ``idempotence_modes`` → ``kafkafmt.idempotence.variant=seed``).

    Raises :class:`~kafkafmt.errors.BrokerConfigRefusedError` when the broker's release refuses to start with
    those settings (``KafkaConfig.validateValues``: a format newer than the IBP, compared as the line compares
    them, row ``broker.message_format_check``, KAFKA-6238)."""
    variant = "seed" if broker.idempotence_modes else "kafka"
    _, server = _broker_settings(broker)
    defaults = dict(server)
    ibp = defaults.pop("inter.broker.protocol.version", None)
    return BrokerConfig(inter_broker_protocol_version=ibp, topic_defaults=defaults, kafka_line=broker.kafka_line,
                        kip228_enabled=broker.kip228, idempotence_variant=variant)


def topic_config_for(broker: BrokerSpec) -> LogConfig:
    """THE place where a broker's Kafka properties become the configuration its logs run with.

    The broker's own settings (``inter.broker.protocol.version``, default: the code version;
    ``message.format.version`` or ``log.message.format.version``, its ``log.message.format.version``: capped at
    what the broker's code can write, a 0.9 broker writes v0, and defaulting to the code version) go to its
    :class:`~kafkafmt.config.BrokerConfig` (:func:`broker_config_for`), which refuses them as the broker's
    release does; every other property is a topic property of :class:`~kafkafmt.config.LogConfig`.  Every
    broker runs its release's line (``BrokerConfig.kafka_line``: a 0.10.0 broker the 0.10.0 rows, a 4.4
    broker the 4.4 ones, where every topic is v2); the properties its line does not know
    (:func:`removed_properties`) are left out.
    """
    props, _ = _broker_settings(broker)
    return LogConfig.from_properties(props, broker=broker_config_for(broker))
