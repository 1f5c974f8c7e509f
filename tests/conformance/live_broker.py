"""What the live-broker tests share: a Kafka 3.9.2 cluster (ZooKeeper mode, brokers started on demand) for a
module or a session, and kafka-python reading a partition, to compare what a real client is served with what
kafkafmt reads in the files."""
from __future__ import annotations

import contextlib
from typing import Iterator

from ci_mode import import_or_skip


@contextlib.contextmanager
def zookeeper_cluster() -> Iterator:
    """A :class:`kafkarig.broker.Cluster`, closed on exit; the test skipped without Java or the jars (a failure
    when ``CI=true``)."""
    from ci_mode import skip_or_fail
    from kafkarig.broker import Cluster, java_missing_reason
    reason = java_missing_reason()
    if reason:
        skip_or_fail(reason)
    cluster = Cluster()
    try:
        yield cluster
    finally:
        cluster.close()


def kafka_python_records(bootstrap: str, topic: str, end: int | None = None,
                         timeout_ms: int = 5000) -> list[tuple[int, bytes | None, bytes | None]]:
    """kafka-python's records of partition 0 of ``topic`` as (offset, key, value), from the first offset up to
    ``end`` (exclusive; default: the partition's end offset as the broker states it now); stops early if
    nothing arrives for ``timeout_ms``.  Skips the test when kafka-python is not installed."""
    kafka = import_or_skip("kafka")
    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                   auto_offset_reset="earliest", consumer_timeout_ms=timeout_ms)
    try:
        tp = kafka.TopicPartition(topic, 0)
        consumer.assign([tp])
        if end is None:
            end = consumer.end_offsets([tp])[tp]
        consumer.seek_to_beginning(tp)
        out = []
        for msg in consumer:
            out.append((msg.offset, msg.key, msg.value))
            if msg.offset >= end - 1:
                break
        return out
    finally:
        consumer.close()
