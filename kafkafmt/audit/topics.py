"""Which configuration each topic of an audited log directory runs with (cleanup.policy, retention.ms).

Kafka keeps topic configurations in ZooKeeper (``/config/topics/<topic>``) or, under KRaft, in the
metadata log (``ConfigRecord``), never in a ``log.dirs`` entry: a partition directory holds segments,
indexes and checkpoints only.  So the audit takes them from, in order of precedence:

1. ``overrides``: ``{topic: {Kafka property: value}}`` (``-c TOPIC:cleanup.policy=compact`` on the
   command line; topic ``*`` applies to every topic);
2. the manifest ``kafkafmt gen`` writes beside the partitions (:func:`kafkafmt.log.files.manifest_topic_properties`);
3. Kafka's defaults (``cleanup.policy=delete``, ``retention.ms`` = 7 days).

The result is a :class:`kafkafmt.config.LogConfig` per topic (:func:`kafkafmt.gen.workload_file.log_config`,
the one place Kafka property names become kafkafmt configuration).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..config import LogConfig, keys_by_name
from ..errors import ConfigError
from ..gen.workload_file import log_config
from ..log.files import MANIFEST, manifest_topic_properties

__all__ = ["TopicSetting", "topic_setting", "parse_topic_options", "delete_retention_ms", "ALL_TOPICS"]

#: the topic name an override uses to apply to every topic
ALL_TOPICS = "*"


@dataclass(frozen=True)
class TopicSetting:
    """A topic's configuration and where it came from (``source``: ``option``, the manifest, ``default``)."""

    topic: str
    config: LogConfig
    source: str


def topic_setting(topic: str, log_dir: str | os.PathLike | None,
                  overrides: Mapping[str, Mapping[str, Any]] | None = None) -> TopicSetting:
    """``topic``'s configuration as held by ``log_dir`` (its manifest, if any) and ``overrides``."""
    manifest = manifest_topic_properties(log_dir) if log_dir is not None else None
    props: dict[str, Any] = {}
    broker: dict = {}
    sources = []
    if manifest is not None and topic in manifest[0]:
        props.update(manifest[0][topic])
        broker = manifest[1]
        sources.append(MANIFEST)
    given = {**dict((overrides or {}).get(ALL_TOPICS, {})), **dict((overrides or {}).get(topic, {}))}
    if given:
        props.update(given)
        sources.append("option")
    try:
        config = log_config(props, broker)
    except ConfigError as e:
        raise ConfigError(f"topic {topic}: {e}") from None
    return TopicSetting(topic, config, " + ".join(sources) if sources else "default")


def parse_topic_options(configs: Iterable[str] = (), compacted: Iterable[str] = ()) -> dict[str, dict[str, str]]:
    """``["TOPIC:key=value", ...]`` and ``["TOPIC", ...]`` (compacted topics) → overrides for
    :func:`topic_setting`; a malformed item is a :class:`~kafkafmt.errors.ConfigError`."""
    out: dict[str, dict[str, str]] = {}
    for item in configs:
        topic, sep, kv = str(item).partition(":")
        key, eq, value = kv.partition("=")
        if not sep or not eq or not topic or not key.strip():
            raise ConfigError(f"topic setting {item!r}: write TOPIC:key=value (e.g. orders:cleanup.policy=compact, "
                              f"or {ALL_TOPICS}:retention.ms=86400000 for every topic)")
        out.setdefault(topic, {})[key.strip()] = value.strip()
    for topic in compacted:
        if not topic:
            raise ConfigError("--compacted needs a topic name")
        out.setdefault(topic, {})["cleanup.policy"] = "compact"
    return out


def delete_retention_ms(config: LogConfig) -> int:
    """The topic's ``delete.retention.ms`` (a field once the configuration models it, else kept as text)."""
    value = getattr(config, "delete_retention_ms", None)
    if value is None:
        key = "delete.retention.ms"
        value = config.not_modelled.get(key, keys_by_name(config.broker.kafka_line)[key].default)
    return int(value)
