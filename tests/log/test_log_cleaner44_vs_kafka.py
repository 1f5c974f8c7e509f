"""kafkafmt's cleaner on the Kafka 4.4 line against Kafka 4.4.0's own (org.apache.kafka.storage.internals.log
.LogCleaner + CleanerThread.cleanFilthiestLog, mock clock; conformance/oracle-4.4/CleanerOracle44.java).

As test_log_cleaner_vs_kafka.py does for 3.9.2: each workload is appended in phases (v0/v1 data written as a
3.9 broker or an older one left it) to two copies of a partition directory; after each phase Kafka 4.4.0
cleans one copy and kafkafmt with ``--kafka-line 4.4`` the other, at the same mock time, and the
copies must hold byte-identical ``.log``, ``.index`` and ``.timeindex`` files, ``.log`` modification times
and ``cleaner-offset-checkpoint``.  The 4.4 cleaner rewrites retained v0/v1 entries as v2 batches
(KAFKA-13093), so after a pass every cleaned segment holds v2 only.  4.4 accepts no ``segment.bytes``
below 1 MiB (KIP-1030): the segments are written at 1 KiB by the 3.9 appends and cleaned with
``segment.bytes=1048576`` on both sides, so each pass cleans one group.
"""
from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest

from kafkafmt.config import BrokerConfig, LogConfig
from kafkafmt.log import Log, SimulatedClock
from kafkafmt.log.cleaner.offset_map import CleanerConfig
from kafkafmt.records import MemoryRecords
from test_log_cleaner_vs_kafka import (
    PHASE_MS,
    T0,
    _append,
    _compare,
    _config,
    _phase_batches,
    _props,
    delete_delay_case,
)

BROKER44 = BrokerConfig(kafka_line="4.4")


@pytest.fixture(scope="module")
def cleaner44():
    from kafkarig.cleaner_oracle44 import cleaner_oracle44_or_skip
    return cleaner_oracle44_or_skip()


def _config44(props: dict) -> LogConfig:
    with warnings.catch_warnings():  # delete.retention.ms & co: kept, not modelled (the cleaner reads them)
        warnings.simplefilter("ignore")
        return LogConfig.from_properties(props, broker=BROKER44)


def props44(props: dict) -> dict:
    """The topic's settings as a 4.4 broker has them: no message.format.version (KIP-724), 1 MiB segments."""
    p = {k: v for k, v in props.items() if k != "message.format.version"}
    p["segment.bytes"] = "1048576"
    return p


def clean44(kafka_oracle, kafka: Path, fmt: Path, props: dict, at: int, *, dedupe: int = 1 << 20,
            io_buffer: int = 512 * 1024):
    """One pass of each cleaner at ``at``; returns (kafkafmt's CleanResult, Kafka's answer)."""
    p44 = props44(props)
    k = kafka_oracle.clean(kafka, now=at, config=p44, cleaner={"dedupeBufferSize": dedupe, "ioBufferSize": io_buffer})
    log = Log(fmt, _config44(p44), SimulatedClock(at), clean_shutdown=True)
    assert log.config.broker.kafka_line == "4.4"
    r = log.clean(now=at, cleaner=CleanerConfig(dedupe_buffer_size=dedupe, io_buffer_size=io_buffer))
    log.close()
    assert r.cleaned == k["cleaned"]
    return r, k


def run44(oracle, tmp_path: Path, phases: list[tuple[int, str]], *, seed: int = 0, props_extra=None,
          dedupe: int = 1 << 20, per_phase: int = 40, keys: int = 12, io_buffer: int = 512 * 1024,
          **batch_kw) -> list:
    """Append ``per_phase`` batches per (magic, codec) phase with the 3.9 rules; after each, clean both copies
    on the 4.4 line and compare."""
    rng = random.Random(seed)
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    props = _props(min(m for m, _ in phases), props_extra)
    offset, results = 0, []
    for i, (magic, codec) in enumerate(phases):
        now = T0 + i * PHASE_MS
        batches, offset = _phase_batches(rng, offset, now, magic, codec, per_phase, keys, **batch_kw)
        for d in (kafka, fmt):
            _append(d, props, batches, now)
        r, _ = clean44(oracle, kafka, fmt, props, now + PHASE_MS // 2, dedupe=dedupe, io_buffer=io_buffer)
        _compare(kafka, fmt, {c for _, c in phases})
        results.append(r)
    return results


def _magics(d: Path, below: int | None = None) -> set[int]:
    """The magics of the batches in ``d``'s segments (those with a base offset below ``below``)."""
    out = set()
    for p in sorted(d.glob("*.log")):
        if below is None or int(p.stem) < below:
            out |= {b.magic for b in MemoryRecords(p.read_bytes()).batches()}
    return out


CODECS = [(0, "none"), (0, "gzip"), (0, "snappy"), (0, "lz4"), (1, "none"), (1, "gzip"), (1, "snappy"),
          (1, "lz4"), (2, "none"), (2, "gzip"), (2, "lz4"), (2, "zstd")]
_DEFAULT = {(0, "none"), (0, "gzip"), (1, "none"), (1, "gzip"), (1, "lz4"), (2, "none"), (2, "zstd")}


@pytest.mark.parametrize("magic,codec", [pytest.param(m, c, id=f"v{m}-{c}", marks=() if (m, c) in _DEFAULT
                                                      else pytest.mark.slow) for m, c in CODECS])
def test_each_magic_and_codec(cleaner44, tmp_path, magic, codec):
    """Three phases across the delete horizon; v0/v1 data comes out of the cleaned segments as v2."""
    results = run44(cleaner44, tmp_path, [(magic, codec)] * 3, seed=magic * 10 + len(codec))
    assert results[0].cleaned
    assert any(r.stats.tombstones_kept or r.stats.tombstones_removed for r in results)
    cleaned_below = results[-1].end_offset
    assert _magics(tmp_path / "fmt" / "t-0", cleaned_below) == {2}


@pytest.mark.parametrize("magic,codec", [(0, "none"), (1, "gzip"), (2, "none")])
def test_tombstones_across_the_delete_horizon(cleaner44, tmp_path, magic, codec):
    """Tombstones that stay their key's latest record: a v0/v1 tombstone kept by the segment-mtime rule is
    rewritten into a v2 batch with deleteHorizonMs = pass time + delete.retention.ms (KIP-534 applied to
    converted data), and removed by the first pass after that horizon."""
    results = run44(cleaner44, tmp_path, [(magic, codec)] * 5, seed=31, disjoint=True, keys=40)
    assert any(r.stats.tombstones_kept for r in results[:2])
    assert sum(r.stats.tombstones_removed for r in results) > 0


def test_mixed_magics(cleaner44, tmp_path):
    run44(cleaner44, tmp_path, [(0, "gzip"), (1, "none"), (2, "lz4"), (1, "gzip"), (2, "none")], seed=7)


@pytest.mark.parametrize("magic,codec", [(1, "gzip"), (1, "none"), (2, "lz4")])
def test_log_append_time(cleaner44, tmp_path, magic, codec):
    """LogAppendTime entries: the converted batch takes the wrapper's time as its log-append time."""
    run44(cleaner44, tmp_path, [(magic, codec)] * 3, seed=23, lat=True,
          props_extra={"message.timestamp.type": "LogAppendTime"})


def test_dedupe_buffer_too_small(cleaner44, tmp_path):
    """A map of 30 slots for 200 keys: a prefix per pass; legacy data past the map's end stays as it was only
    where the cleaner does not reach (the rest of a cleaned segment is rewritten too)."""
    results = run44(cleaner44, tmp_path, [(1, "gzip")] * 3, seed=11, dedupe=720, keys=200)
    assert results[0].end_offset < results[0].first_uncleanable_offset


def test_io_buffer_smaller_than_a_batch(cleaner44, tmp_path):
    run44(cleaner44, tmp_path, [(1, "gzip"), (2, "none")], seed=13, io_buffer=200)


def test_compact_delete(cleaner44, tmp_path):
    run44(cleaner44, tmp_path, [(0, "none"), (2, "none"), (2, "none")], seed=5,
          props_extra={"cleanup.policy": "compact,delete", "retention.bytes": "3000"})


def test_line_39_unchanged(cleaner44, tmp_path):
    """The same v1 partition cleaned on line 3.9 keeps its v1 entries (no KAFKA-13093 rewrite)."""
    fmt = tmp_path / "fmt" / "t-0"
    props = _props(1)
    batches, _ = _phase_batches(random.Random(3), 0, T0, 1, "gzip", 40, 12)
    _append(fmt, props, batches, T0)
    log = Log(fmt, _config(props), SimulatedClock(T0 + PHASE_MS), clean_shutdown=True)
    r = log.clean(now=T0 + PHASE_MS)
    log.close()
    assert r.cleaned and _magics(fmt) == {1}


@pytest.fixture(scope="module")
def cleaner39():
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    return cleaner_oracle_or_skip()


@pytest.mark.parametrize("line", ["3.9", "4.4"])
@pytest.mark.parametrize("hw_at", ["segment-base", "mid-segment"])
def test_the_batch_ending_the_round(cleaner39, cleaner44, tmp_path, line, hw_at):
    """Keyless records (which the cleaner drops) up to a high watermark below the log end: Kafka 3.9.2 keeps
    the batch ending at the first uncleanable offset as an empty batch (KAFKA-17076), 4.4.0 the one ending at
    the high watermark (KAFKA-20452): with the high watermark inside a segment 4.4 keeps none."""
    props = _props(2)
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    from log_helpers import batch
    batches, off = [], 0
    for i in range(40):
        batches.append(batch(off, [(T0 + i, None, b"v%d" % off)] * (1 + i % 3)))
        off += 1 + i % 3
    for d in (kafka, fmt):
        _append(d, props, batches, T0)
    log = Log(fmt, _config(props), SimulatedClock(T0), clean_shutdown=True)
    bases = [s.base_offset for s in log.segments]
    log.close()
    assert len(bases) >= 4
    seg = MemoryRecords((fmt / f"{bases[-2]:020d}.log").read_bytes())
    hw = bases[-2] if hw_at == "segment-base" else next(iter(seg.batches())).last_offset + 1
    at = T0 + PHASE_MS
    if line == "3.9":
        k = cleaner39.clean(kafka, now=at, config=props, highWatermark=hw)
        config = _config(props)
    else:
        props = props44(props)
        k = cleaner44.clean(kafka, now=at, config=props, highWatermark=hw)
        config = _config44(props)
    log = Log(fmt, config, SimulatedClock(at), clean_shutdown=True)
    log.set_high_watermark(hw)
    r = log.clean(now=at)
    log.close()
    assert r.cleaned and k["cleaned"] and r.first_uncleanable_offset == bases[-2]
    _compare(kafka, fmt, {"none"})
    empty = [b.last_offset + 1 for p in sorted(fmt.glob("*.log")) if int(p.stem) < bases[-2]
             for b in MemoryRecords(p.read_bytes()).batches()]
    assert empty == ([] if (line, hw_at) == ("4.4", "mid-segment") else [bases[-2]])


def test_cli_on_line_44(cleaner44, tmp_path, capsys):
    """`kafkafmt clean --kafka-line 4.4 ...` cleans a v1 partition as Kafka 4.4.0 does."""
    from kafkafmt.cli import main
    props = _props(1)
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    batches, _ = _phase_batches(random.Random(41), 0, T0, 1, "gzip", 40, 12)
    for d in (kafka, fmt):
        _append(d, props, batches, T0)
    at = T0 + PHASE_MS
    p44 = props44(props)
    k = cleaner44.clean(kafka, now=at, config=p44)
    args = ["clean", str(fmt), "--now", str(at), "--kafka-line", "4.4"]
    assert main(args + [a for kv in p44.items() for a in ("-c", "=".join(kv))]) == 0
    assert "cleaned offsets [0," in capsys.readouterr().out and k["cleaned"]
    _compare(kafka, fmt, {"gzip"})
    assert _magics(fmt, k["segments"][-1]) == {2}


@pytest.fixture(scope="module")
def log_oracle():
    from kafkarig.log_oracle import log_oracle_or_skip
    return log_oracle_or_skip()


@pytest.mark.parametrize("codec", ["none", pytest.param("lz4", marks=pytest.mark.slow)])
def test_transactions_with_aborts(cleaner44, log_oracle, tmp_path, codec):
    """test_log_cleaner_txn_vs_kafka's workload (appended by Kafka 3.9.2's UnifiedLog.appendAsFollower, so both
    copies carry Kafka's .txnindex files and producer snapshots), cleaned pass after pass by Kafka 4.4.0 and by
    kafkafmt on line 4.4: .log, .index, .timeindex, .txnindex, mtimes and checkpoint identical."""
    from test_log_cleaner_txn_vs_kafka import PROPS, Producers, _kafka_append
    from test_log_cleaner_txn_vs_kafka import _compare as _compare_txn
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    producers = Producers(seed=len(codec))
    off, empty_kept = 0, False
    p44 = props44(PROPS)
    for i in range(4):
        now = T0 + i * PHASE_MS
        batches, off = producers.phase(off, now, 50, codec, close_all=i >= 2)
        for d in (kafka, fmt):
            _kafka_append(log_oracle, d, batches, now)
        at = now + PHASE_MS // 2
        k = cleaner44.clean(kafka, now=at, config=p44, cleaner={"dedupeBufferSize": 1 << 20})
        log = Log(fmt, _config44(p44), SimulatedClock(at), clean_shutdown=True)
        r = log.clean(now=at, cleaner=CleanerConfig(dedupe_buffer_size=1 << 20))
        log.close()
        assert r.cleaned == k["cleaned"]
        _compare_txn(kafka, fmt)
        empty_kept |= any(b.count == 0 for p in fmt.glob("*.log") for b in MemoryRecords(p.read_bytes()).batches())
    assert producers.aborts and empty_kept


def test_headers(cleaner44, tmp_path):
    run44(cleaner44, tmp_path, [(2, "gzip")] * 3, seed=29, headers=True)


def test_min_compaction_lag(cleaner44, tmp_path):
    run44(cleaner44, tmp_path, [(1, "gzip"), (2, "gzip"), (2, "gzip")], seed=9,
          props_extra={"min.compaction.lag.ms": str(PHASE_MS)})


@pytest.mark.parametrize("extra,cleans", [
    ({"min.cleanable.dirty.ratio": "0.99"}, False),
    ({"min.cleanable.dirty.ratio": "0.99", "max.compaction.lag.ms": str(PHASE_MS // 4)}, True)],
    ids=["ratio-not-reached", "max-compaction-lag-passed"])
def test_when_a_log_is_cleaned(cleaner44, tmp_path, extra, cleans):
    """LogCleanerManager's choice on 4.4.0 as on 3.9.2: the dirty ratio, or max.compaction.lag.ms passed."""
    results = run44(cleaner44, tmp_path, [(0, "none"), (2, "none")], seed=19, props_extra=extra)
    assert [r.cleaned for r in results] == [True, cleans]


def test_converted_wrappers_keep_their_offsets(cleaner44, tmp_path):
    """A v1 gzip wrapper with records removed becomes a v2 batch from its first to its last retained offset,
    the removed ones left as gaps in the offset deltas (KIP-31's holes, now inside a v2 batch); a later pass
    filters it as any v2 batch, keeping its base and last offset (overrideLastOffset)."""
    run44(cleaner44, tmp_path, [(1, "gzip")] * 2, seed=3, keys=60)
    holes = 0
    for p in sorted((tmp_path / "fmt" / "t-0").glob("*.log")):
        for b in MemoryRecords(p.read_bytes()).batches():
            if b.magic == 2:
                offs = [r.offset for r in b.records()]
                holes += any(y - x > 1 for x, y in zip(offs, offs[1:]))
                assert b.base_offset <= offs[0] and offs[-1] <= b.last_offset
    assert holes > 0


@pytest.mark.parametrize("magic,codec", [(1, "gzip"), (2, "none")])
def test_kill_at_each_step(cleaner44, tmp_path, magic, codec):
    """kafkafmt's 4.4 cleaner killed (SIGKILL) after each step -- .cleaned written, .swap, each replaced segment
    deleted, renamed, checkpoint -- leaves a directory that Kafka 4.4.0's loader (restarting after a crash) and
    kafkafmt's open to the same records, every key's latest value kept (v0/v1 ones as v2 or as they were)."""
    import shutil
    import signal

    from test_log_cleaner_crash import _append as _append_crash
    from test_log_cleaner_crash import _kafkafmt_records, _latest, killed_cleaner
    base = tmp_path / "base" / "t-0"
    _append_crash(base, 0, 30, T0, magic, codec)
    before = _latest(_kafkafmt_records(shutil.copytree(base.parent, tmp_path / "ref") / "t-0"))
    now, props = T0 + 3000, props44({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01",
                                      "file.delete.delay.ms": "0"})
    full = shutil.copytree(base.parent, tmp_path / "full") / "t-0"
    with killed_cleaner(full, now, props, tmp_path / "child.err", line="4.4") as (steps, kill_after):
        assert {"cleaned", "swap", "deleted", "renamed", "checkpoint"} <= set(steps) and steps.count("deleted") >= 2
        for k in range(1, len(steps) + 1):
            work = shutil.copytree(base.parent, tmp_path / f"k{k}")
            assert kill_after(k, work / "t-0") == f"killed {signal.SIGKILL.value}", (tmp_path / "child.err").read_text()
            kafka = shutil.copytree(work, tmp_path / f"k{k}-kafka") / "t-0"
            theirs = cleaner44.records(kafka, now=now, config=props)["records"]
            ours = _kafkafmt_records(work / "t-0")
            assert ours == theirs, f"after step {k} ({steps[k - 1]})"
            assert _latest(ours) == before, f"a key's latest value was lost after step {k} ({steps[k - 1]})"


@pytest.mark.parametrize("delay", [0, 45_000])
def test_file_delete_delay(cleaner44, tmp_path, delay):
    """As for 3.9.2 (test_log_cleaner_vs_kafka.test_file_delete_delay): Kafka 4.4.0's replaceSegments leaves
    the replaced files and merged-away producer snapshots ``.deleted`` for file.delete.delay.ms, and so
    does kafkafmt on line 4.4; after the delay Kafka's scheduler and kafkafmt's next open remove them."""
    props = props44(_props(2, {"file.delete.delay.ms": str(delay)}))
    delete_delay_case(cleaner44, tmp_path, props, _config44(props))
