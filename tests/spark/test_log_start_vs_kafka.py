"""``earliest`` in the Spark source is the broker's log start offset, read from the live broker's files.

A real Kafka 3.9.2 broker stores 3 batches, ``DeleteRecords`` moves the log start offset into the
middle of the only segment, and the broker writes it to ``<log.dirs>/log-start-offset-checkpoint``.
Reading that log directory (read-only, while the broker runs) must then start where the broker's own
``ListOffsets(earliest)`` answers, and never touch a file.
"""
from __future__ import annotations

import time

import pytest

import kafkafmt.spark as ks
from ci_mode import skip_or_fail
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.log.files import LOG_START_OFFSET_CHECKPOINT, checkpoint_offset
from kafkafmt.records import MemoryRecordsBuilder
from kafkarig.broker import Cluster, java_missing_reason
from spark_logs import snapshot

pytestmark = [pytest.mark.java, pytest.mark.broker]

TOPIC = "log-start"
EARLIEST = -2


def _batch(first: int, n: int) -> bytes:
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    for i in range(first, first + n):
        b.append(1_700_000_000_000 + i, f"k{i}".encode(), f"v{i}".encode())
    return b.build()


def _wait_for(fn, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = fn()
        if got is not None:
            return got
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def test_earliest_is_the_brokers_log_start_offset_after_delete_records():
    reason = java_missing_reason()
    if reason:
        skip_or_fail(reason)
    from kafka import KafkaAdminClient, TopicPartition

    with Cluster() as cluster:
        broker = cluster.broker("logstart", {"log.flush.start.offset.checkpoint.interval.ms": "100",
                                                     "log.initial.task.delay.ms": "0"})
        with broker.client() as c:
            assert c.create_topic(TOPIC) == (0, None)
            c.wait_for_leader(TOPIC)
            for first in (0, 10, 20):
                assert c.produce_retrying(TOPIC, 0, _batch(first, 10), version=8).error_code == 0
            admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{broker.port}", request_timeout_ms=20000)
            try:
                admin.delete_records({TopicPartition(TOPIC, 0): 15})   # inside the second batch
            finally:
                admin.close()
            broker_earliest = c.list_offsets(TOPIC, 0, EARLIEST).offset
        assert broker_earliest == 15
        ckpt = broker.log_dir / LOG_START_OFFSET_CHECKPOINT
        _wait_for(lambda: 15 if checkpoint_offset(ckpt, TOPIC, 0) == 15 else None,
                  "the broker to checkpoint log start offset 15")

        before = snapshot(broker.log_dir / f"{TOPIC}-0")
        part_dir = str(broker.log_dir / f"{TOPIC}-0")
        plan = ks.plan({"path": part_dir})
        assert plan.offset_ranges[(TOPIC, 0)] == (broker_earliest, 30)
        offsets = ks.read_all(plan).column("offset").to_pylist()
        assert offsets == list(range(15, 30))
        # the one segment is opened from the batch holding 15: the first batch (0-9) is read but dropped
        explicit = ks.read_all(ks.plan({"path": part_dir, "startingOffsets": f'{{"{TOPIC}":{{"0":-2}}}}'}))
        assert explicit.column("offset").to_pylist() == offsets
        assert snapshot(broker.log_dir / f"{TOPIC}-0") == before
