"""kafkafmt on a real broker's ``log.dirs``: a live Kafka 3.9.2 broker (ZooKeeper) and a live 4.4.0 (KRaft).

* While the broker runs, ``kafkafmt clean`` on its partition directory exits 1 with one line naming the log
  directory's ``.lock`` and the process holding it, and the partition directory keeps every byte and mtime.
* Stopped, cleaned by kafkafmt, restarted: the broker skips recovery (the clean-shutdown marker kafkafmt kept),
  and kafka-python reads exactly the records kafkafmt reads in the cleaned files, so the latest value of every
  key kafkafmt keeps.  The partition directory holds only names Kafka uses there; the log directory gains
  ``cleaner-offset-checkpoint`` and nothing else, byte for byte the one Kafka 3.9.2's cleaner writes for the
  same pass (the cleaner oracle over a copy taken before).
* A producer writing while ``dump --deep`` and ``audit --format json`` run in a loop on the same partition
  (8 s and at least three reads): every run exits 0, the counts never decrease and never exceed the records
  acknowledged by then, and they grow from the first read to the last (the reads saw the partition written).

Each broker starts once for the module (and restarts once); skipped locally without Java or the jars
(``make oracle``, ``make -C conformance oracle-4.4``), a failure when ``CI=true``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ci_mode import import_or_skip
from kafkafmt.records import MemoryRecords
from live_broker import kafka_python_records, zookeeper_cluster

pytestmark = [pytest.mark.broker, pytest.mark.slow]

TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": "2048", "file.delete.delay.ms": "0",
                "min.cleanable.dirty.ratio": "0.01"}
#: the broker's own cleaner is off: kafkafmt's pass is the only one
BROKER = {"log.cleaner.enable": "false"}
#: names Kafka 3.9 / 4.4 keep in a partition directory (LocalLog, LogFileUtils, PartitionMetadataFile)
SEGMENT_NAME = re.compile(r"\d{20}\.(log|index|timeindex|txnindex|snapshot)(\.deleted)?")
PARTITION_FILES = {"leader-epoch-checkpoint", "partition.metadata"}


def _kafkafmt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkafmt", *args], capture_output=True, text=True, timeout=120)


def _kafkafmt_together(*commands: list[str]) -> list[subprocess.CompletedProcess]:
    """The commands run at the same time; their results in order."""
    procs = [subprocess.Popen([sys.executable, "-m", "kafkafmt", *c], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for c in commands]
    out = []
    for c, p in zip(commands, procs):
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(c, p.returncode, stdout, stderr))
    return out


def _states(d: Path) -> dict:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(d.iterdir()) if p.is_file()}


def _records(d: Path) -> list[tuple[int, bytes, bytes | None]]:
    return [(r.offset, r.key, r.value) for p in sorted(d.glob("*.log"))
            for b in MemoryRecords(p.read_bytes()).batches() if not b.is_control for r in b.records()]


def _produce(bootstrap: str, topic: str, n: int, keys: int, pad: int = 0) -> int:
    kafka = import_or_skip("kafka")
    # the broker fsyncs every append (log.flush.interval.messages=1): 16 padded records a batch, not 4
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=max(600, 16 * pad))
    try:
        futures = [producer.send(topic, key=b"key-%02d" % (i % keys), value=b"value-%04d" % i + b"." * pad,
                                 partition=0) for i in range(n)]
        producer.flush()
        return sum(1 for f in futures if f.get(10) is not None)
    finally:
        producer.close()


class Live:
    """What the two brokers have in common for these tests."""

    def __init__(self, name, log_dir: Path, bootstrap: str, pid, stop, start, log_text, line: str):
        self.name, self.log_dir, self.bootstrap = name, log_dir, bootstrap
        self.pid, self.stop, self.start, self.log_text, self.line = pid, stop, start, log_text, line


@pytest.fixture(scope="module")
def zk_broker():
    with zookeeper_cluster() as cluster:
        b = cluster.broker("modern", overrides=BROKER)
        yield Live("3.9.2", b.log_dir, f"127.0.0.1:{b.port}", lambda: b.process.pid, b.stop, b.start,
                   lambda: (b.dir / "kafka.log").read_text(errors="replace"), "3.9"), b


@pytest.fixture  # one test uses it: started once, and stopped before the next test needs the cores
def kraft_broker():
    from ci_mode import skip_or_fail
    from kafkarig.kraft import KRaftBroker, kraft_missing_reason
    reason = kraft_missing_reason()
    if reason:
        skip_or_fail(reason)
    b = KRaftBroker(overrides=BROKER)
    try:
        yield Live("4.4.0", b.log_dir, b.bootstrap, lambda: b.pid, b.stop, b.start, b.log_text, "4.4"), b
    finally:
        b.close()


def _create(b, topic: str, config: dict) -> None:
    with b.client() as c:
        assert c.create_topic(topic, config)[0] == 0
        c.wait_for_leader(topic)


def _refused_then_cleaned(live: Live, broker, topic: str, tmp_path: Path, oracle=None, hold_check=False) -> None:
    # Kafka 4.x takes no segment.bytes below 1 MiB (KIP-1030): there, bigger records make the segments
    n, pad, config = (400, 0, TOPIC_CONFIG) if live.line == "3.9" else \
        (2600, 1000, dict(TOPIC_CONFIG, **{"segment.bytes": str(1 << 20)}))
    _create(broker, topic, config)
    assert _produce(live.bootstrap, topic, n, keys=25, pad=pad) == n
    part = live.log_dir / f"{topic}-0"
    time.sleep(1.0)  # the broker idle: nothing of its own changes the partition directory now
    before = _states(part)
    r = _kafkafmt("clean", str(part), "-c", "cleanup.policy=compact", "-c", "file.delete.delay.ms=0",
                  "--kafka-line", live.line)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"kafkafmt: error: LogDirLockedError: Failed to acquire lock on file .lock in "
                               f"{live.log_dir}: held by "), lines[0]
    pid = live.pid()
    # the JDK's FileChannel.tryLock is a POSIX record lock: F_GETLK names the broker's JVM
    assert f"held by a Kafka broker, process {pid} (java" in lines[0], lines[0]
    assert _states(part) == before, "a refused clean changed the partition directory"

    live.stop()
    log_dir_before = _states(live.log_dir)
    if oracle is not None:  # Kafka 3.9.2's cleaner over a copy: its cleaner-offset-checkpoint for the pass
        copy = tmp_path / "kafka" / part.name
        shutil.copytree(part, copy)
    now = int(time.time() * 1000)
    r = _kafkafmt("clean", str(part), "--now", str(now), "-c", "cleanup.policy=compact",
                  "-c", "file.delete.delay.ms=0", "-c", "min.cleanable.dirty.ratio=0.01",
                  "--kafka-line", live.line)
    assert r.returncode == 0 and "cleaned offsets [0," in r.stdout, r.stdout + r.stderr
    odd = [n for n in os.listdir(part) if not (SEGMENT_NAME.fullmatch(n) or n in PARTITION_FILES)]
    assert odd == [], f"names Kafka never writes in a partition directory: {odd}"
    after = _states(live.log_dir)
    assert set(after) - set(log_dir_before) == {"cleaner-offset-checkpoint"}
    assert set(log_dir_before) - set(after) == set()
    for name in set(log_dir_before) - {"cleaner-offset-checkpoint"}:  # LogManager's files: the same bytes
        assert after[name][0] == log_dir_before[name][0], name
    if oracle is not None:
        oracle.clean(copy, now=now, config=config, cleaner={})
        assert after["cleaner-offset-checkpoint"][0] == (copy.parent / "cleaner-offset-checkpoint").read_bytes()
    ours = _records(part)
    kept = {k: v for _, k, v in ours}
    assert len(ours) < n and len(kept) == 25

    mark = len(live.log_text())
    if hold_check:  # while kafkafmt holds the directory, the broker refuses to start, as against another broker
        from kafkafmt.log import lock as dirlock
        from kafkarig.broker import BrokerError
        cleaned, dir_names = _states(part), sorted(os.listdir(live.log_dir))
        with dirlock.hold(live.log_dir):
            with pytest.raises(BrokerError):
                live.start()
        assert f"Failed to acquire lock on file .lock in {live.log_dir}" in live.log_text()[mark:]
        assert _states(part) == cleaned and sorted(os.listdir(live.log_dir)) == dir_names  # nothing lost
        mark = len(live.log_text())
    live.start()
    got = kafka_python_records(live.bootstrap, topic)
    assert got == ours  # the broker serves exactly what kafkafmt reads in the cleaned files
    assert {k: v for _, k, v in got} == kept
    restart = live.log_text()[mark:]
    assert "since clean shutdown file was found" in restart and "since no clean shutdown file" not in restart
    assert not [ln for ln in restart.splitlines() if f"{topic}-0" in ln and (" WARN " in ln or " ERROR " in ln)]


def test_zk_broker_refuses_then_serves_what_kafkafmt_cleaned(zk_broker, tmp_path):
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    live, broker = zk_broker
    _refused_then_cleaned(live, broker, "safety", tmp_path, oracle=cleaner_oracle_or_skip(), hold_check=True)


def test_kraft_broker_refuses_then_serves_what_kafkafmt_cleaned(kraft_broker, tmp_path):
    live, broker = kraft_broker
    _refused_then_cleaned(live, broker, "safety", tmp_path)


def test_dump_and_audit_of_a_partition_being_written(zk_broker):
    live, broker = zk_broker
    topic = "growing"
    _create(broker, topic, {"segment.bytes": str(64 << 20)})
    kafka = import_or_skip("kafka")
    producer = kafka.KafkaProducer(bootstrap_servers=live.bootstrap, acks="all", linger_ms=2)
    acked, in_flight, stop = [0], threading.Lock(), threading.Event()

    def produce():
        i = 0
        while not stop.is_set():
            with in_flight:  # a batch is counted once acknowledged; readers wait for the one in flight
                futures = [producer.send(topic, key=b"k%d" % (i + j), value=b"v" * 100, partition=0)
                           for j in range(20)]
                producer.flush()
                for f in futures:
                    f.get(10)
                acked[0] += len(futures)
            i += 20

    part = live.log_dir / f"{topic}-0"
    seg = part / "00000000000000000000.log"
    t = threading.Thread(target=produce)
    t.start()
    runs, first, last = 0, None, {"dump": 0, "audit": 0}
    try:
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline or runs < 3:  # 8 s of writing, and at least three reads during it
            assert time.monotonic() < deadline + 60, f"only {runs} reads in 68 s"
            d, a = _kafkafmt_together(["dump", "--deep", str(seg)],
                                      ["audit", "--format", "json", "--quiet", "--kafka-line", "3.9", str(part)])
            with in_flight:
                bound = acked[0]
            assert d.returncode == 0 and a.returncode == 0, d.stderr + a.stderr
            counts = {"dump": sum(1 for ln in d.stdout.splitlines() if ln.startswith("| offset: ")),
                      "audit": sum(m["records"] for m in json.loads(a.stdout)["magics"].values())}
            for k, v in counts.items():
                assert last[k] <= v <= bound, (k, last[k], v, bound)
            first, last = first or counts, counts
            runs += 1
    finally:
        stop.set()
        t.join(30)
        producer.close()
    assert runs >= 3 and last["dump"] > 0
    assert last["dump"] > first["dump"] and last["audit"] > first["audit"], (first, last)  # read while written
