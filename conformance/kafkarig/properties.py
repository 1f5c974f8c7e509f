"""Kafka's configuration files, written from a dict: the one writer every broker launcher uses.

A launcher (ZooKeeper mode, KRaft mode, an old release) builds its broker's settings as a dict of
strings and calls :func:`write_server_properties`; ``zoo.cfg`` is the same ``key=value`` format.
"""
from __future__ import annotations

from pathlib import Path

#: what every one-node test broker of this rig sets, in ZooKeeper and KRaft mode alike (replication factors of
#: one, no automatic topics, few threads, no cleaner thread, small segments and indexes, a flush per message);
#: each launcher adds its mode's own settings on top
SINGLE_NODE_CONFIG = {
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "auto.create.topics.enable": "false",
    "group.initial.rebalance.delay.ms": "0",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "num.replica.fetchers": "1",
    "log.cleaner.enable": "false",
    "log.retention.check.interval.ms": "3600000",
    "log.flush.interval.messages": "1",
    "log.segment.bytes": "1048576",
    "log.index.size.max.bytes": "8192",
    "controlled.shutdown.enable": "false",
    "message.max.bytes": "1048588",
}


def write_properties(path: Path, props: dict[str, str]) -> Path:
    """``props`` as ``key=value`` lines (``java.util.Properties``' format; keys and values here need no
    escaping: names, numbers, host:port lists and paths), in the dict's order."""
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def write_server_properties(directory: Path, props: dict[str, str]) -> Path:
    """A broker's ``server.properties`` in ``directory`` (what ``kafka.Kafka`` and the storage tool read)."""
    return write_properties(directory / "server.properties", props)
