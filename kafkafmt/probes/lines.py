"""A broker and a topic of a Kafka line, as the probes use them (the seeds' clusters)."""
from __future__ import annotations

from ..config import BrokerConfig, LogConfig, keys_by_name

#: the probes' clock
NOW_MS = 1_700_000_000_000
#: the older format the seeds' upgrades leave a topic at (IBP 2.8 on 3.9, so message.format.version counts)
OLD_FORMAT = "0.10.0"


def broker(line: str) -> BrokerConfig:
    """A broker of ``line`` with its default IBP (kafkafmt's 2.8 on 2.8 … 4.4: the seeds' clusters)."""
    return BrokerConfig(kafka_line=line)


def topic(line: str, message_format_version: str | None = None, **kw) -> LogConfig:
    """A topic on a ``line`` broker; ``message_format_version`` is set where the line has the key and honours
    it (not on 0.9, before KIP-32, nor on 4.x, after KIP-724)."""
    b = broker(line)
    if message_format_version is not None and "message.format.version" in keys_by_name(b.kafka_line):
        kw["message_format_version"] = message_format_version
    return LogConfig(broker=b, **kw)
