"""kafkafmt's log on the 4.4 line next to Kafka 4.4.0's own ``UnifiedLog``, file for file.

The same appends (as leader with origin CLIENT, so through LogValidator with toMagic 2: v0/v1 input is
converted; as follower: old batches kept as they are), rolls and high-watermark moves go to both; after
every step the directories must hold byte-identical ``.log``, ``.index``, ``.timeindex`` and
``leader-epoch-checkpoint`` files and agree on log start/end offset, recovery point, high watermark and
segments; after close too, but for the active segment's indexes: 4.4.0's ``UnifiedLog.close()`` called
alone leaves them at their preallocated size without the final time index entry, while a broker's clean
shutdown trims and completes them as kafkafmt's ``Log.close`` (and 3.9.2) do: that is checked on a live
broker in tests/conformance/test_kafka44_broker.py.  Needs Java 17 and ``make -C conformance oracle-4.4`` (skipped
without, a failure in CI).
"""
from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "log"))
from kafkafmt.config import BrokerConfig  # noqa: E402
from kafkarig.oracle import OracleError  # noqa: E402
from log_helpers import LogPair, batch, dir_files  # noqa: E402

pytestmark = pytest.mark.java

T0 = 100_000_000
B44 = BrokerConfig(kafka_line="4.4")


def _files(d):
    return dir_files(d, (".log", ".index", ".timeindex", "leader-epoch-checkpoint"))


class Pair44(LogPair):
    """Kafka 4.4.0's UnifiedLog and kafkafmt's Log on the 4.4 line, driven together."""

    def __init__(self, oracle, base, props, t):
        super().__init__(oracle, base, props, t, broker=B44)

    def both(self, op, fn, **kw):
        k_err = p_err = None
        try:
            self.o.call(op, log=self.key, **kw)
        except OracleError as e:
            k_err = e
        try:
            fn()
        except Exception as e:  # noqa: BLE001 -- compared below
            p_err = e
        assert (k_err is None) == (p_err is None), (op, k_err, p_err)
        if k_err is not None:
            assert p_err.reason in k_err.response["message"] or \
                k_err.response.get("invalidExceptionMessage", "").startswith(p_err.reason[:40]), (k_err, p_err)
        self.hw_to_leo()

    def hw_to_leo(self):
        leo = self.o.call("state", log=self.key)["logEndOffset"]
        self.o.call("updateHighWatermark", log=self.key, hw=leo)
        self.log.update_high_watermark(self.log.log_end_offset)

    def compare(self, label, *, closed_active: str | None = None):
        """Byte-identical files and the same offsets; after close (``closed_active``: the active segment's
        base name) the active segment's .index/.timeindex are left out (see the module doc)."""
        fa, fb = _files(self.kd), _files(self.pd)
        assert sorted(fa) == sorted(fb), label
        for n in fa:
            if closed_active and n.startswith(closed_active + "."):
                if n.endswith("index"):
                    entry = 8 if n.endswith(".index") else 12
                    assert len(fa[n]) == self.cfg.segment_index_bytes // entry * entry, (label, n)
                    continue
            assert fa[n] == fb[n], (label, n)
        if closed_active:
            return
        st = self.o.call("state", log=self.key)
        theirs = (st["logStartOffset"], st["logEndOffset"], st["recoveryPoint"], st["highWatermark"],
                  [s["baseOffset"] for s in st["segments"]])
        mine = (self.log.log_start_offset, self.log.log_end_offset, self.log.recovery_point,
                self.log.high_watermark, [s.base_offset for s in self.log.segments])
        assert theirs == mine, label

    def close(self):
        self.o.call("close", log=self.key)
        self.log.close()


@pytest.mark.parametrize("seed", [0, 1])
def test_appends_match_kafka_4_4_0_file_for_file(oracle44, tmp_path, seed):
    rng = random.Random(seed)
    props = {"segment.bytes": 1048576, "segment.index.bytes": rng.choice([60, 200]),
             "index.interval.bytes": rng.choice([0, 50, 300]),
             "message.timestamp.type": ["CreateTime", "LogAppendTime"][seed]}
    t = T0
    p = Pair44(oracle44, tmp_path / f"s{seed}", props, t)
    p.compare("open")
    for i in range(40):
        t += rng.randint(0, 400)
        p.set_time(t)
        leo = p.log.log_end_offset
        kind = rng.random()
        if kind < 0.15:  # an old client's v0/v1 data reaching LogValidator: converted to v2
            magic = rng.choice([0, 1])
            data = b"".join(batch(j, [(t if magic else -1, b"k", b"v" * 10)], magic=magic) for j in range(2))
            p.both("appendLeader", lambda: p.log.append_as_leader(data), records=data.hex(), epoch=0)
        elif kind < 0.25:  # old batches replicated from an old leader: kept as they are
            data = b"".join(batch(leo + j, [(t, b"k", b"v" * 10)], magic=1) for j in range(2))
            p.both("appendFollower", lambda: p.log.append_as_follower(data, leader_epoch=0), records=data.hex(),
                   epoch=0)
        elif kind < 0.32:
            p.both("roll", lambda: p.log.roll())
        else:
            n = rng.randint(1, 4)
            codec = rng.choice(["none", "gzip", "zstd", "lz4"])
            data = batch(0, [(max(0, t + rng.randint(-800, 800)), b"k", b"v" * rng.randint(1, 60)) for _ in range(n)],
                         compression=codec, magic=rng.choice([1, 2]) if codec != "zstd" else 2)
            p.both("appendLeader", lambda: p.log.append_as_leader(data), records=data.hex(), epoch=0)
        p.compare(f"step {i}")
    active = f"{p.log.segments[-1].base_offset:020d}"
    p.close()
    p.compare("closed", closed_active=active)


def test_index_dumps_match_kafka_4_4_0(oracle44, tmp_path):
    """kafka-dump-log 4.4.0 (the Java DumpLogSegments) on the .index/.timeindex files 4.4.0's UnifiedLog left,
    the active segment's untrimmed ones (a bare ``UnifiedLog.close()``) included: the same lines as kafkafmt's dumps,
    and where Kafka throws
    (the sanity check of an untrimmed time index) kafkafmt raises the same CorruptIndexException message."""
    from kafkafmt.errors import KafkaFmtError
    from kafkafmt.log import dump_index, dump_time_index
    test_appends_match_kafka_4_4_0_file_for_file(oracle44, tmp_path, 0)
    d = tmp_path / "s0" / "kafka" / "t-0"
    checked = 0
    for name in sorted(os.listdir(d)):
        if not name.endswith((".index", ".timeindex")):
            continue
        path = str(d / name)
        fn = dump_index if name.endswith(".index") else dump_time_index
        for flags in ([], ["--verify-index-only"], ["--index-sanity-check"]):
            theirs = oracle44.call("dump", args=["--files", path, *flags])
            try:
                out, err = fn(path, verify_only="--verify-index-only" in flags,
                              sanity_check_only="--index-sanity-check" in flags)
            except KafkaFmtError as e:
                assert theirs["exception"] == f"{e.kafka_exception}: {e.reason}", (name, flags)
                continue
            assert theirs["exception"] is None, (name, flags, theirs["exception"])
            assert [f"Dumping {path}", *out] == theirs["stdout"].splitlines(), (name, flags)
            assert err == theirs["stderr"].splitlines(), (name, flags)
            checked += 1
    assert checked >= 8
