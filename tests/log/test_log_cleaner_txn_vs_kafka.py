"""Transactions and idempotent producers through the cleaner, kafkafmt against Kafka 3.9.2.

The input is appended by Kafka's own ``UnifiedLog.appendAsFollower`` (tests/log/KafkaLogOracle.java), so
both copies carry Kafka's ``.txnindex`` files and producer snapshots; then Kafka's cleaner and kafkafmt's
clean one copy each, pass after pass across the delete horizon, and ``.log``, ``.index``, ``.timeindex``,
``.txnindex``, ``.log`` mtimes and the checkpoint must be identical: aborted batches removed on the first
pass, an active producer's last batch kept empty, markers given a delete horizon once their transaction
is empty and removed after it, nothing cleaned past an open transaction.
"""
from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest

from kafkafmt.constants import CompressionType, ControlRecordType, TimestampType
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner.offset_map import CleanerConfig
from kafkafmt.log.clock import set_mtime_ms
from kafkafmt.log.files import offset_from_file_name
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder, end_txn_marker
from log_helpers import assert_cleaned_like_kafka

T0 = 1_700_000_000_000
PHASE_MS = 60_000
PROPS = {"cleanup.policy": "compact", "segment.bytes": "1200", "min.cleanable.dirty.ratio": "0.01",
         "delete.retention.ms": str(PHASE_MS // 2), "file.delete.delay.ms": "0"}


@pytest.fixture(scope="module")
def oracles():
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    from kafkarig.log_oracle import log_oracle_or_skip
    return cleaner_oracle_or_skip(), log_oracle_or_skip()


class Producers:
    """Transactional producers (commit or abort), an idempotent one and plain batches, seeded."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seq = {1000: 0, 1001: 0, 1002: 0, 2000: 0}
        self.open: set[int] = set()
        self.aborts = 0

    def _batch(self, off, now, pid, txn, codec):
        n = self.rng.randrange(1, 4)
        b = MemoryRecordsBuilder(2, CompressionType.from_name(codec), TimestampType.CREATE_TIME, off,
                                 producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                                 base_sequence=self.seq.get(pid, -1), is_transactional=txn, partition_leader_epoch=0)
        for j in range(n):
            b.append(now + j, b"k%d" % self.rng.randrange(8), None if self.rng.random() < 0.15 else b"v%d" % (off + j))
        if pid >= 0:
            self.seq[pid] += n
        return b.build(), off + n

    def phase(self, off: int, now: int, n: int, codec: str, close_all: bool) -> tuple[list[bytes], int]:
        out = []
        for i in range(n):
            t = now + i * 10
            pid = self.rng.choice([1000, 1001, 1002, 2000, -1])
            if pid >= 2000 or pid < 0:
                data, off = self._batch(off, t, pid, False, codec)
            elif pid in self.open and self.rng.random() < 0.4:
                kind = ControlRecordType.ABORT if self.rng.random() < 0.4 else ControlRecordType.COMMIT
                data = end_txn_marker(base_offset=off, timestamp=t, partition_leader_epoch=0, producer_id=pid,
                                      producer_epoch=0, control_type=kind, coordinator_epoch=0)
                off += 1
                self.open.discard(pid)
                self.aborts += kind == ControlRecordType.ABORT
            else:
                data, off = self._batch(off, t, pid, True, codec)
                self.open.add(pid)
            out.append(data)
        if close_all:
            for pid in sorted(self.open):
                out.append(end_txn_marker(base_offset=off, timestamp=now + n * 10, partition_leader_epoch=0,
                                          producer_id=pid, producer_epoch=0, control_type=ControlRecordType.COMMIT,
                                          coordinator_epoch=0))
                off += 1
            self.open.clear()
        return out, off


def _kafka_append(log_oracle, d: Path, batches: list[bytes], now: int) -> None:
    bases = [offset_from_file_name(p.name) for p in d.glob("*.log")] if d.exists() else []
    first_new = max(bases) if bases else 0
    log_oracle.call("time", ms=now)
    log_oracle.call("open", log="txn", dir=str(d), config=PROPS, clean=True)
    try:
        for b in batches:  # one append per batch, as a follower's fetches of small segments would
            log_oracle.call("appendFollower", log="txn", records=b, epoch=0)
    finally:
        log_oracle.call("close", log="txn")
    for p in d.glob("*.log"):
        if offset_from_file_name(p.name) >= first_new:
            set_mtime_ms(p, now)


def _compare(kafka: Path, fmt: Path) -> None:
    assert_cleaned_like_kafka(kafka, fmt, suffixes=(".log", ".index", ".timeindex", ".txnindex"))


@pytest.mark.parametrize("codec", ["none", pytest.param("lz4", marks=pytest.mark.slow)])
def test_transactions_with_aborts(oracles, tmp_path, codec):
    cleaner_oracle, log_oracle = oracles
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    producers = Producers(seed=len(codec))
    off, seen = 0, {"txnindex": False, "empty_kept": False, "markers_left": []}
    phases = 4
    for i in range(phases):
        now = T0 + i * PHASE_MS
        batches, off = producers.phase(off, now, 50, codec, close_all=i >= phases - 2)
        for d in (kafka, fmt):
            _kafka_append(log_oracle, d, batches, now)
        at = now + PHASE_MS // 2
        k = cleaner_oracle.clean(kafka, now=at, config=PROPS, cleaner={"dedupeBufferSize": 1 << 20})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            log = Log(fmt, LogConfig.from_properties(PROPS), SimulatedClock(at), clean_shutdown=True)
        r = log.clean(now=at, cleaner=CleanerConfig(dedupe_buffer_size=1 << 20))
        log.close()
        assert r.cleaned == k["cleaned"]
        _compare(kafka, fmt)
        seen["txnindex"] |= any(p.stat().st_size for p in kafka.glob("*.txnindex"))
        markers = set()
        for p in fmt.glob("*.log"):
            for b in MemoryRecords(p.read_bytes()).batches():
                seen["empty_kept"] |= b.count == 0
                if b.is_control:
                    markers.add(b.base_offset)
        seen["markers_left"].append(markers)
    assert producers.aborts and seen["txnindex"], "the workload aborted no transaction"
    assert seen["empty_kept"], "no producer's last batch was kept empty: the workload misses the case"
    ever = set().union(*seen["markers_left"])
    assert ever - seen["markers_left"][-1], "no marker went after its delete horizon"
