"""A live Kafka 3.9.2 broker compacting a topic, against kafkafmt's cleaner and kafka-python's reading.

The topic is written with ``cleanup.policy=delete`` (nothing is cleaned), its partition directory copied,
then switched to ``compact`` (a low ``min.cleanable.dirty.ratio``, a 200 ms cleaner backoff); once the
broker's ``cleaner-offset-checkpoint`` holds the partition:

* kafka-python reads the compacted partition from the start: the same (offset, key, value) list as
  kafkafmt reading the broker's cleaned files (the holes of rebuilt wrappers included);
* kafkafmt cleans the copy of the input: the same checkpoint, and the broker's cleaned segments'
  ``.log``, ``.index``, ``.timeindex`` bytes and ``.log`` modification times.  A v2 delete horizon is
  the broker's clock plus ``delete.retention.ms``; kafkafmt cleans at the clock the horizon implies.
"""
from __future__ import annotations

import random
import shutil
import time
import warnings
from pathlib import Path

import pytest

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner import read_cleaner_checkpoint
from kafkafmt.log.cleaner.offset_map import CleanerConfig
from kafkafmt.log.clock import mtime_ms
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from live_broker import kafka_python_records, zookeeper_cluster

pytestmark = [pytest.mark.broker, pytest.mark.slow]

DEDUPE = 2 << 20  # a broker requires more than 1 MiB per cleaner thread (KafkaConfig)
RETENTION = 3_600_000
TOPIC_CONFIG = {"segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01", "file.delete.delay.ms": "0",
                "delete.retention.ms": str(RETENTION), "segment.index.bytes": "8192"}


@pytest.fixture(scope="module")
def cleaner_broker():
    with zookeeper_cluster() as cluster:
        yield cluster


def _batches(magic: int, codec: str, seed: int, n: int = 50) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    now = int(time.time() * 1000)
    for i in range(n):
        b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), TimestampType.CREATE_TIME, 0)
        for j in range(rng.randrange(1, 8)):
            b.append(now + i, b"k%d" % rng.randrange(25), None if rng.random() < 0.3 else b"v%d-%d" % (i, j))
        out.append(b.build())
    return out


def _records(d: Path) -> list:
    out = []
    for p in sorted(d.glob("*.log")):
        for b in MemoryRecords(p.read_bytes()).batches():
            out.extend((r.offset, r.key, r.value) for r in b.records())
    return out


def _horizon_now(d: Path) -> int | None:
    for p in sorted(d.glob("*.log")):
        for b in MemoryRecords(p.read_bytes()).batches():
            if b.magic >= 2 and b.delete_horizon_ms is not None:
                return b.delete_horizon_ms - RETENTION
    return None


@pytest.mark.parametrize("profile,magic,codec", [("modern", 2, "gzip"), ("legacy", 1, "gzip")])
def test_broker_compaction_equals_kafkafmt(cleaner_broker, tmp_path, profile, magic, codec):
    broker = cleaner_broker.broker(profile, overrides={
        "log.cleaner.enable": "true", "log.cleaner.backoff.ms": "200", "log.cleaner.dedupe.buffer.size": str(DEDUPE)})
    topic = f"compacted-{profile}"
    config = dict(TOPIC_CONFIG, **({"message.format.version": "0.10.2"} if magic == 1 else {}))
    with broker.client() as c:
        assert c.create_topic(topic, {**config, "cleanup.policy": "delete"})[0] == 0
        c.wait_for_leader(topic)
        for data in _batches(magic, codec, seed=magic):
            assert c.produce_retrying(topic, 0, data, version=3 if magic == 2 else 2).error_code == 0
        src = broker.partition_dir(topic)
        copy = tmp_path / "input" / src.name
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("*.deleted"))
        assert c.alter_topic_configs(topic, {"cleanup.policy": "compact"})[0] == 0
    ckpt = broker.log_dir / "cleaner-offset-checkpoint"
    deadline = time.monotonic() + 60
    while (topic, 0) not in read_cleaner_checkpoint(ckpt):
        assert time.monotonic() < deadline, "the broker did not clean the topic within 60 s"
        time.sleep(0.2)
    time.sleep(0.5)  # let the rename of the last .swap land
    theirs = _records(src)
    end = max(o for o, _, _ in theirs) + 1
    assert kafka_python_records(f"127.0.0.1:{broker.port}", topic, end) == [r for r in theirs if r[0] < end]

    now = _horizon_now(src)
    if magic >= 2:  # a kept tombstone's batch carries the broker's horizon; kafkafmt must write the same
        assert now is not None
    else:
        now = int(time.time() * 1000)
        holes = [b for p in src.glob("*.log") for b in MemoryRecords(p.read_bytes()).batches()
                 if any(y - x > 1 for x, y in zip(*(lambda o: (o, o[1:]))([r.offset for r in b.records()])))]
        assert holes, "no rebuilt v1 wrapper with holes: the workload misses seed 004's case"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = Log(copy, LogConfig.from_properties({**config, "cleanup.policy": "compact"}), SimulatedClock(now),
                  clean_shutdown=True)
    r = log.clean(now=now, cleaner=CleanerConfig(dedupe_buffer_size=DEDUPE))
    log.close()
    assert r.cleaned
    ours = read_cleaner_checkpoint(tmp_path / "input" / "cleaner-offset-checkpoint")[(topic, 0)]
    assert ours == read_cleaner_checkpoint(ckpt)[(topic, 0)]
    assert _records(copy) == theirs
    cleaned = [b for grp in r.groups for b in grp[:1]]
    for base in cleaned:
        for suffix in (".log", ".index", ".timeindex"):
            name = f"{base:020d}{suffix}"
            assert (src / name).read_bytes() == (copy / name).read_bytes(), name
        assert mtime_ms(src / f"{base:020d}.log") == mtime_ms(copy / f"{base:020d}.log")
