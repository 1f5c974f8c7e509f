"""kafkafmt's log next to Apache Kafka 3.9.2's own UnifiedLog, LogSegment and kafka-dump-log.

The same operations go to both (the Java side runs in tests/log/KafkaLogOracle.java with a mock clock
and an inline scheduler); after every step the directories must hold byte-identical ``.log``,
``.index``, ``.timeindex`` and ``leader-epoch-checkpoint`` files and the logs must agree on log start
offset, log end offset, recovery point, high watermark, segment list and ListOffsets answers.
Needs Java 17 and the jars of ``make oracle`` (skipped without them, a failure in CI).
"""
from __future__ import annotations

import os
import random
import shutil

import pytest

from kafkafmt.layout import OFFSET_INDEX_ENTRY, TIME_INDEX_ENTRY
from kafkafmt.log import DumpErrors, Log, LogConfig, SimulatedClock, dump_index, dump_time_index
from kafkarig.jsonl_jvm import OracleError
from log_helpers import LogPair, batch, dir_files

pytestmark = pytest.mark.java

T0 = 100_000_000


def _files(d):
    """The segment files (and the deleter's and cleaner's renamed ones) and the leader epoch checkpoint."""
    return dir_files(d, (".log", ".index", ".timeindex", ".deleted", ".swap", ".cleaned", "leader-epoch-checkpoint"))


class Pair(LogPair):
    """Kafka's UnifiedLog and kafkafmt's Log, driven together."""

    def hw_to_leo(self):
        # a single-replica partition: the high watermark follows the log end offset (Partition does this)
        if self.log._hw is None:
            leo = self.o.call("state", log=self.key)["logEndOffset"]
            self.o.call("updateHighWatermark", log=self.key, hw=leo)

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
        assert (k_err is None) == (p_err is None), (op, kw, k_err, p_err)

    def append_leader(self, data):
        self.both("appendLeader", lambda: self.log.append_as_leader(data, origin="RAFT_LEADER"),
                  records=data.hex(), origin="RAFT_LEADER", epoch=0)
        self.hw_to_leo()

    def append_follower(self, data):
        self.both("appendFollower", lambda: self.log.append_as_follower(data), records=data.hex(), epoch=0)
        self.hw_to_leo()

    def sync_mtimes(self):
        """Kafka's files get their mtime from the OS; give them the simulated one before retention."""
        for n in os.listdir(self.pd):
            dst = self.kd / n
            if n.endswith(".log") and dst.exists():
                st = os.stat(self.pd / n)
                os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))

    def compare(self, label):
        fa, fb = _files(self.kd), _files(self.pd)
        assert sorted(fa) == sorted(fb), label
        for n in fa:
            assert fa[n] == fb[n], (label, n)
        if self.log.closed:
            return
        st = self.o.call("state", log=self.key)
        theirs = (st["logStartOffset"], st["logEndOffset"], st["recoveryPoint"], st["highWatermark"],
                  [s["baseOffset"] for s in st["segments"]])
        mine = (self.log.log_start_offset, self.log.log_end_offset, self.log.recovery_point, self.log.high_watermark,
                [s.base_offset for s in self.log.segments])
        assert theirs == mine, label

    def lookup(self, ts):
        k = self.o.call("fetchOffsetByTimestamp", log=self.key, timestamp=ts)["result"]
        p = self.log.fetch_offset_by_timestamp(ts)
        assert (None if k is None else (k["timestamp"], k["offset"], k["leaderEpoch"])) == \
            (None if p is None else (p.timestamp, p.offset, p.leader_epoch)), ts

    def reopen(self, clean):
        rp, lso = self.log.recovery_point, self.log.log_start_offset
        if clean:
            self.o.call("close", log=self.key)
            self.log.close()
        else:
            self.o.call("closeHandlers", log=self.key)
            self.log.crash()
        self.compare("after close")
        k_err = p_err = None
        try:
            self.o.call("open", log=self.key, dir=str(self.kd), config=self.props, clean=clean, recoveryPoint=rp,
                        logStartOffset=lso)
        except OracleError as e:
            k_err = e
        try:
            self.log = Log.open(self.pd, self.cfg, self.clock, clean_shutdown=clean)
        except Exception as e:  # noqa: BLE001
            p_err = e
        assert (k_err is None) == (p_err is None), (k_err, p_err)
        if k_err is not None:  # Kafka cannot load this log either: same complaint
            assert str(p_err).replace("/kafkafmt/", "/kafka/") in str(k_err), (k_err, p_err)
            return False
        self.hw_to_leo()
        return True

    def close(self):
        self.o.call("close", log=self.key)
        self.log.close()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_operations_match_kafka_file_for_file(log_oracle, fast_dir, seed):
    rng = random.Random(seed)
    props = {"segment.bytes": rng.choice([600, 1000, 2000]), "segment.index.bytes": rng.choice([24, 60, 200]),
             "index.interval.bytes": rng.choice([0, 50, 300]), "segment.ms": rng.choice([500, 3000, 100000]),
             "retention.ms": rng.choice([-1, 2000, 10000]), "retention.bytes": rng.choice([-1, 1500, 5000]),
             "cleanup.policy": ["delete", "compact,delete", "delete"][seed], "preallocate": rng.choice(["true", "false"])}
    t = T0
    p = Pair(log_oracle, fast_dir / f"s{seed}", props, t)
    p.compare("open")
    for i in range(90):
        t += rng.randint(0, 400)
        p.set_time(t)
        leo = p.log.log_end_offset
        kind = rng.random()
        if kind < 0.08:  # an old-format follower fetch: two v0 messages
            p.append_follower(b"".join(batch(leo + j, [(-1, b"k", b"v" * 20)], magic=0) for j in range(2)))
        elif kind < 0.16:  # v1, several messages in one append
            p.append_follower(b"".join(batch(leo + j, [(t, b"k", b"v" * 10)], magic=1) for j in range(3)))
        elif kind < 0.24:  # a follower chunk of several v2 batches (per-batch indexing, KAFKA-806)
            p.append_follower(batch(leo, [(t, b"a", b"1")]) + batch(leo + 1, [(t + 5, b"b", b"2" * 30)]))
        elif kind < 0.30:
            p.append_leader(batch(leo, [(t, b"k", b"v" * 20)], lat=t))
        else:
            skew = rng.choice([0, 0, 0, -5000, 5000, 10**9]) if rng.random() < 0.15 else 0
            n = rng.randint(1, 4)
            p.append_leader(batch(leo, [(max(0, t + rng.randint(-800, 800) + skew), b"k", b"v" * rng.randint(1, 60))
                                        for _ in range(n)], compression=rng.choice(["none", "none", "gzip"])))
        if rng.random() < 0.04 and p.log.log_end_offset > 0:
            new = rng.randint(p.log.log_start_offset, p.log.high_watermark)
            p.both("maybeIncrementLogStartOffset", lambda: p.log.maybe_increment_log_start_offset(new), offset=new)
        if rng.random() < 0.03:
            target = rng.randint(0, p.log.log_end_offset)
            p.both("truncateTo", lambda: p.log.truncate_to(target), offset=target)
            p.hw_to_leo()
        if i % 6 == 0:
            p.sync_mtimes()
            p.both("deleteOldSegments", lambda: p.log.delete_old_segments())
        p.compare(f"step {i}")
        if i % 20 == 19:
            for ts in (-3, -2, -1, t - 3000, t - 1000, t, t + 10**10):
                p.lookup(ts)
        if i % 30 == 29:
            if not p.reopen(clean=rng.random() < 0.5):
                return  # both refused to load the directory (e.g. a full time index during recovery)
            p.compare(f"reopen {i}")
    p.close()
    p.compare("closed")


def test_recovery_of_every_damaged_byte_matches_kafka(log_oracle, fast_dir):
    """Truncate or flip each byte of the active segment (offset fields included) and recover on both sides:
    same files, same log end offset -- including Kafka's splitting of a segment whose offsets overflow, and
    its refusal to load when the overflow is not at the end (kafka-rules §7.5)."""
    props = {"segment.bytes": "2000", "segment.index.bytes": "200", "index.interval.bytes": "150"}
    cfg = LogConfig.from_properties(props)
    src = fast_dir / "src" / "t-0"
    clock = SimulatedClock(T0)
    log = Log(src, cfg, clock)
    rng = random.Random(5)
    for i in range(40):
        clock.advance(rng.randint(1, 2000))
        leo = log.log_end_offset
        data = batch(leo, [(clock.now() + rng.randint(-3000, 3000), b"k%d" % i, b"x" * rng.randint(5, 40))
                           for _ in range(rng.randint(1, 3))])
        log.append_as_leader(data, origin="RAFT_LEADER")
    rp = log.recovery_point
    active = f"{log.active_segment.base_offset:020d}.log"
    log.crash()
    size = (src / active).stat().st_size
    assert size > 300
    failures = 0
    # every 7th byte, plus every byte of the first batch header (offset, length, epoch, magic, crc, attributes)
    positions = sorted(set(range(0, size + 1, 7)) | set(range(0, 23)))
    for k in positions:
        for mode in ("truncate", "flip"):
            if mode == "flip" and k >= size:
                continue
            base = fast_dir / f"{mode}{k}"
            kd, pd = base / "kafka" / "t-0", base / "kafkafmt" / "t-0"
            for d in (kd, pd):
                shutil.copytree(src, d)
                raw = (d / active).read_bytes()
                (d / active).write_bytes(raw[:k] if mode == "truncate" else raw[:k] + bytes([raw[k] ^ 0x5A]) + raw[k + 1:])
            log_oracle.call("time", ms=clock.now())
            k_err = p_err = None
            try:
                st = log_oracle.call("open", log="rec", dir=str(kd), config=props, clean=False, recoveryPoint=rp)
            except OracleError as e:
                k_err = e
            try:
                mine = Log.open(pd, cfg, clock, clean_shutdown=False)
            except Exception as e:  # noqa: BLE001
                p_err = e
            assert (k_err is None) == (p_err is None), (mode, k, k_err, p_err)
            if k_err is not None:  # Kafka refuses to load: same message
                assert k_err.error == "java.lang.IllegalArgumentException", k_err
                assert str(p_err).replace("/kafkafmt/", "/kafka/") in str(k_err), (k_err, p_err)
                failures += 1
            else:
                assert st["logEndOffset"] == mine.log_end_offset, (mode, k)
                log_oracle.call("close", log="rec")
                mine.close()
                fa, fb = _files(kd), _files(pd)
                assert fa == fb, (mode, k, sorted(n for n in set(fa) | set(fb) if fa.get(n) != fb.get(n)))
            shutil.rmtree(base)
    assert failures >= 1  # a flipped first baseOffset makes a non-final batch overflow: Kafka cannot load


def test_dump_matches_kafka_dump_log(log_oracle, fast_dir):
    clock = SimulatedClock(1000)
    log = Log(fast_dir / "t-0", LogConfig(segment_bytes=1500, segment_index_bytes=120, index_interval_bytes=60), clock)
    rng = random.Random(0)
    for i in range(50):
        clock.advance(100)
        ts = clock.now() + rng.randint(-1000, 1000)
        data = batch(log.log_end_offset, [(ts, b"k", b"v" * rng.randint(1, 40)) for _ in range(rng.randint(1, 3))],
                     lat=clock.now() if i % 5 == 0 else None)
        log.append_as_leader(data, origin="RAFT_LEADER")
    log.crash()  # the active segment keeps its preallocated, zero-tailed indexes
    d = fast_dir / "t-0"
    names = sorted(n for n in os.listdir(d) if n.endswith((".index", ".timeindex")))
    assert len(names) >= 6

    def same(args, fn):
        ko, ke, kx = log_oracle.dump(*args)
        try:
            out, err = fn()
        except Exception as e:  # noqa: BLE001
            assert kx is not None and str(e) in kx, (args, kx, e)
            return
        assert kx is None, (args, kx)
        assert [x for x in ko if not x.startswith("Dumping ")] == out, args
        assert ke == err, args

    for n in names:
        p = str(d / n)
        fn = dump_index if n.endswith(".index") else dump_time_index
        same(["--files", p], lambda: fn(p))
        same(["--files", p, "--verify-index-only"], lambda: fn(p, verify_only=True))
        same(["--files", p, "--index-sanity-check"], lambda: fn(p, sanity_check_only=True))
        if n.endswith(".index") or n < names[-1]:
            assert not log_oracle.dump("--files", p, "--verify-index-only")[1]  # Kafka finds no mismatch in our files
    # damaged indexes and an empty one
    ip = d / names[0]
    raw = bytearray(ip.read_bytes())
    OFFSET_INDEX_ENTRY.pack_into(raw, 8, 3, 0)
    OFFSET_INDEX_ENTRY.pack_into(raw, 16, 5, 0)
    ip.write_bytes(bytes(raw))
    same(["--files", str(ip)], lambda: dump_index(ip))
    tp = d / names[1]
    raw = bytearray(tp.read_bytes())
    TIME_INDEX_ENTRY.pack_into(raw, 12, 5, 2)
    TIME_INDEX_ENTRY.pack_into(raw, 24, 999999, 1)
    tp.write_bytes(bytes(raw))
    same(["--files", str(tp)], lambda: dump_time_index(tp))
    same(["--files", str(tp), "--index-sanity-check"], lambda: dump_time_index(tp, sanity_check_only=True))
    for suffix in (".log", ".index", ".timeindex"):
        (d / f"00000000000000099999{suffix}").write_bytes(b"")
    for suffix, fn in ((".index", dump_index), (".timeindex", dump_time_index)):
        e = d / f"00000000000000099999{suffix}"
        same(["--files", str(e)], lambda: fn(e))
        same(["--files", str(e), "--index-sanity-check"], lambda: fn(e, sanity_check_only=True))
    # several files in one run: the reports come at the end, in Kafka's order
    errs, outs = DumpErrors(), []
    for f in (ip, tp):
        fn = dump_index if f.suffix == ".index" else dump_time_index
        outs += [f"Dumping {f}"] + fn(f, errors=errs)[0]
    ko, ke, kx = log_oracle.dump("--files", f"{ip},{tp}")
    assert (ko, ke, kx) == (outs, errs.render(), None)
