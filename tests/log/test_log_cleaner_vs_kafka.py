"""kafkafmt's log cleaner against Kafka 3.9.2's own (LogCleaner + CleanerThread.cleanFilthiestLog, mock clock).

Each workload is appended in phases to two copies of a partition directory; after each phase Kafka
cleans one copy (conformance/oracle/CleanerOracle.java) and kafkafmt the other, at the same mock time,
and the copies must hold byte-identical ``.log``, ``.index`` and ``.timeindex`` files, the same
``.log`` modification times and the same ``cleaner-offset-checkpoint``.  Snappy is the one exception:
Java's snappy and the Python binding choose different matches, so a wrapper or batch the cleaner
rebuilds is compared record for record, header field for header field (every other byte stays equal).
"""
from __future__ import annotations

import random
import shutil
import warnings
from pathlib import Path

import pytest

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner.offset_map import CleanerConfig
from kafkafmt.log.clock import set_mtime_ms
from kafkafmt.log.files import offset_from_file_name
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from log_helpers import assert_cleaned_like_kafka, batch

T0 = 1_700_000_000_000
PHASE_MS = 60_000


@pytest.fixture(scope="module")
def cleaner_oracle():
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    return cleaner_oracle_or_skip()


def _props(magic: int, extra: dict | None = None) -> dict:
    p = {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01",
         "delete.retention.ms": str(2 * PHASE_MS), "file.delete.delay.ms": "0"}
    if magic < 2:
        p["message.format.version"] = "0.9.0" if magic == 0 else "0.10.2"
    p.update(extra or {})
    return p


def _config(props: dict) -> LogConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LogConfig.from_properties(props)


def _phase_batches(rng: random.Random, start: int, now: int, magic: int, codec: str, n: int, keys: int,
                   lat: bool = False, headers: bool = False, disjoint: bool = False):
    """``disjoint``: each phase writes its own keys, so a phase's last tombstones stay the latest."""
    out, off = [], start
    prefix = b"p%d-" % now if disjoint else b""
    for i in range(n):
        count = rng.randrange(1, 5)
        if headers:  # v2 records with headers, some with a null header value
            b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), TimestampType.CREATE_TIME, off,
                                     partition_leader_epoch=0)
            for j in range(count):
                b.append(now + i * 10 + j, b"k%d" % rng.randrange(keys),
                         None if rng.random() < 0.15 else b"v%d-%d" % (off, j),
                         [("h%d" % h, None if h == 2 else b"x" * h) for h in range(rng.randrange(4))])
            out.append(b.build())
        else:
            recs = [(now + i * 10 + j, prefix + b"k%d" % rng.randrange(keys),
                     None if rng.random() < 0.15 else b"v%d-%d" % (off, j)) for j in range(count)]
            out.append(batch(off, recs, magic=magic, compression=codec, lat=now + i * 10 + 5 if lat else None))
        off += count
    return out, off


def _append(d: Path, props: dict, batches: list[bytes], now: int) -> None:
    log = Log(d, _config(props), SimulatedClock(now), clean_shutdown=True)
    first_new = log.active_segment.base_offset
    for b in batches:
        log.append_as_follower(b)
    log.close()
    for p in d.glob("*.log"):  # what a broker's appends leave: the phase's time on the segments written
        if offset_from_file_name(p.name) >= first_new:
            set_mtime_ms(p, now)


def _logical(data: bytes) -> list:
    out = []
    for b in MemoryRecords(data).batches():
        out.append((b.magic, b.base_offset, b.last_offset, b.max_timestamp, b.compression, b.delete_horizon_ms,
                    [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in b.records()]))
    return out


def _compare(kafka: Path, fmt: Path, codecs: set[str]) -> None:
    """Kafka's cleaned copy against kafkafmt's (:func:`log_helpers.assert_cleaned_like_kafka`); with snappy in
    ``codecs`` a differing .log needs only the same batches and records (:func:`_logical`)."""
    assert_cleaned_like_kafka(kafka, fmt, logical=_logical if "snappy" in codecs else None)


def run_and_compare(oracle, tmp_path: Path, phases: list[tuple[int, str]], *, seed: int = 0, props_extra=None,
                    dedupe: int = 1 << 20, per_phase: int = 40, keys: int = 12, io_buffer: int = 512 * 1024,
                    **batch_kw) -> list:
    """Append ``per_phase`` batches per (magic, codec) phase; after each, clean both copies and compare."""
    rng = random.Random(seed)
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    props = _props(min(m for m, _ in phases), props_extra)
    offset, results = 0, []
    for i, (magic, codec) in enumerate(phases):
        now = T0 + i * PHASE_MS
        batches, offset = _phase_batches(rng, offset, now, magic, codec, per_phase, keys, **batch_kw)
        for d in (kafka, fmt):
            _append(d, props, batches, now)
        clean_at = now + PHASE_MS // 2
        k = oracle.clean(kafka, now=clean_at, config=props, cleaner={"dedupeBufferSize": dedupe,
                                                                     "ioBufferSize": io_buffer})
        log = Log(fmt, _config(props), SimulatedClock(clean_at), clean_shutdown=True)
        r = log.clean(now=clean_at, cleaner=CleanerConfig(dedupe_buffer_size=dedupe, io_buffer_size=io_buffer))
        log.close()
        assert r.cleaned == k["cleaned"]
        _compare(kafka, fmt, {c for _, c in phases})
        results.append(r)
    return results


CODECS = [(0, "none"), (0, "gzip"), (0, "snappy"), (0, "lz4"), (1, "none"), (1, "gzip"), (1, "snappy"),
          (1, "lz4"), (2, "none"), (2, "gzip"), (2, "snappy"), (2, "lz4"), (2, "zstd")]
#: the default run keeps one case per magic and codec family; the rest run with the slow tests
_DEFAULT = {(0, "none"), (0, "gzip"), (1, "gzip"), (1, "lz4"), (1, "snappy"), (2, "none"), (2, "zstd")}


@pytest.mark.parametrize("magic,codec", [pytest.param(m, c, id=f"v{m}-{c}", marks=() if (m, c) in _DEFAULT
                                                      else pytest.mark.slow) for m, c in CODECS])
def test_each_magic_and_codec(cleaner_oracle, tmp_path, magic, codec):
    """Three phases across the delete horizon (2 phases): tombstones kept, then removed, as Kafka does."""
    results = run_and_compare(cleaner_oracle, tmp_path, [(magic, codec)] * 3, seed=magic * 10 + len(codec))
    assert results[0].cleaned
    # tombstones met the horizon rules: kept by a pass, or removed once their horizon passed
    assert any(r.stats.tombstones_kept or r.stats.tombstones_removed for r in results)


@pytest.mark.parametrize("magic,codec", [(1, "gzip"), pytest.param(1, "none", marks=pytest.mark.slow), (2, "lz4")])
def test_log_append_time(cleaner_oracle, tmp_path, magic, codec):
    """LogAppendTime wrappers and batches rebuilt with their log-append time (and a v2 delete horizon)."""
    props = {"message.timestamp.type": "LogAppendTime"}
    run_and_compare(cleaner_oracle, tmp_path, [(magic, codec)] * 3, seed=23, lat=True, props_extra=props)


def test_headers(cleaner_oracle, tmp_path):
    run_and_compare(cleaner_oracle, tmp_path, [(2, "gzip")] * 3, seed=29, headers=True)


@pytest.mark.parametrize("magic,codec", [(0, "none"), (1, "gzip"), (2, "none"),
                                         pytest.param(2, "zstd", marks=pytest.mark.slow)])
def test_tombstones_across_the_delete_horizon(cleaner_oracle, tmp_path, magic, codec):
    """Tombstones that stay their key's latest record: kept (v2: deleteHorizonMs written) until the horizon
    (v2: pass time + delete.retention.ms; v0/v1: the last clean segment's mtime - delete.retention.ms
    against each segment's mtime), removed by the first pass after it, as Kafka does."""
    results = run_and_compare(cleaner_oracle, tmp_path, [(magic, codec)] * 5, seed=31, disjoint=True, keys=40)
    assert any(r.stats.tombstones_kept for r in results[:2])
    assert sum(r.stats.tombstones_removed for r in results) > 0


def test_mixed_magics(cleaner_oracle, tmp_path):
    run_and_compare(cleaner_oracle, tmp_path, [(0, "gzip"), (1, "gzip"), (2, "lz4"), (2, "none")], seed=7)


def test_v1_wrapper_holes(cleaner_oracle, tmp_path):
    """A rebuilt v1 gzip wrapper keeps its retained inner offsets (seed 004's holes, KIP-31)."""
    run_and_compare(cleaner_oracle, tmp_path, [(1, "gzip")] * 2, seed=3, keys=60)
    holes = 0
    for p in sorted((tmp_path / "fmt" / "t-0").glob("*.log")):
        for b in MemoryRecords(p.read_bytes()).batches():
            offs = [r.offset for r in b.records()]
            holes += any(y - x > 1 for x, y in zip(offs, offs[1:]))
            assert offs[-1] == b.last_offset
    assert holes > 0


def test_holes_in_dump_and_annotate(cleaner_oracle, log_oracle, tmp_path, capsys):
    """kafka-dump-log --deep-iteration reports a cleaned wrapper's holes ("Non-consecutive offsets"), and
    kafkafmt dump prints the same lines; annotate --deep names each hole at the inner offset after it."""
    from kafkafmt.annotate import render
    from kafkafmt.cli import main
    run_and_compare(cleaner_oracle, tmp_path, [(1, "gzip")] * 2, seed=3, keys=60)
    checked = 0
    for p in sorted((tmp_path / "fmt" / "t-0").glob("*.log")):
        data = p.read_bytes()
        if not any(y - x > 1 for b in MemoryRecords(data).batches()
                   for x, y in zip(*(lambda o: (o, o[1:]))([r.offset for r in b.records()]))):
            continue
        out, err, exc = log_oracle.dump("--deep-iteration", "--files", str(p))
        assert exc is None and any("Non-consecutive offsets" in line for line in err)
        capsys.readouterr()
        main(["dump", "--deep", str(p)])
        ours = capsys.readouterr()
        assert ours.out.splitlines() == out and ours.err.splitlines() == err
        assert "hole: " in render(data, decompressed=True)
        checked += 1
    assert checked


def test_dedupe_buffer_too_small(cleaner_oracle, tmp_path):
    """A map of 30 slots (720 bytes, load factor 0.9 -> 27 keys) for 200 keys cleans a prefix per pass."""
    results = run_and_compare(cleaner_oracle, tmp_path, [(2, "none")] * 3, seed=11, dedupe=720, keys=200)
    assert results[0].end_offset < results[0].first_uncleanable_offset


def test_io_buffer_smaller_than_a_batch(cleaner_oracle, tmp_path):
    """A 100-byte read buffer (log.cleaner.io.buffer.size=200, one thread): the cleaner grows it per batch."""
    run_and_compare(cleaner_oracle, tmp_path, [(1, "gzip"), (2, "none")], seed=13, io_buffer=200)


def test_compact_delete(cleaner_oracle, tmp_path):
    """cleanup.policy=compact,delete: cleaning, then retention by size moves the log start offset."""
    run_and_compare(cleaner_oracle, tmp_path, [(2, "none")] * 3, seed=5,
                    props_extra={"cleanup.policy": "compact,delete", "retention.bytes": "3000"})


def test_min_compaction_lag(cleaner_oracle, tmp_path):
    run_and_compare(cleaner_oracle, tmp_path, [(2, "gzip")] * 3, seed=9,
                    props_extra={"min.compaction.lag.ms": str(PHASE_MS)})


@pytest.fixture(scope="module")
def log_oracle():
    from kafkarig.log_oracle import log_oracle_or_skip
    return log_oracle_or_skip()


@pytest.mark.parametrize("magic,codec", [(1, "gzip"), pytest.param(2, "none", marks=pytest.mark.slow)])
def test_reading_a_compacted_log(cleaner_oracle, log_oracle, tmp_path, magic, codec):
    """A fetch at an offset the cleaner removed is served from the next batch (UnifiedLog.read), by
    kafkafmt's Log.read as by Kafka's; the log start offset stays where it was."""
    run_and_compare(cleaner_oracle, tmp_path, [(magic, codec)] * 2, seed=21, keys=30)
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    props = _props(magic)
    log = Log(fmt, _config(props), SimulatedClock(T0), clean_shutdown=True)
    log_oracle.call("time", ms=T0)
    log_oracle.call("open", log="compacted", dir=str(kafka), config=props, clean=True)
    try:
        log_oracle.call("updateHighWatermark", log="compacted", hw=log.log_end_offset)
        present = {r.offset for s in log.segments for b in s.log.batches() for r in b.records()}
        removed = [o for o in range(log.log_end_offset) if o not in present]
        assert removed and log.log_start_offset == 0
        for offset in removed + sorted(present)[:5]:
            ours = log.read(offset, 300)
            theirs = log_oracle.call("read", log="compacted", offset=offset, maxLength=300)
            assert bytes(ours.records).hex() == theirs["records"], offset
            assert ours.fetch_offset_metadata.segment_base_offset == theirs["segmentBaseOffset"]
            assert ours.fetch_offset_metadata.relative_position_in_segment == theirs["relativePositionInSegment"]
    finally:
        log_oracle.call("close", log="compacted")
        log.close()


def test_cli_uses_the_log_dirs_checkpoints(cleaner_oracle, tmp_path, capsys):
    """`kafkafmt clean` loads the partition as a broker's LogManager does: the log start offset from the log
    directory's log-start-offset-checkpoint (here above the first segment), then cleans as Kafka does."""
    from kafkafmt.cli import main
    from kafkafmt.log.files import write_checkpoint
    rng = random.Random(17)
    props = _props(2)
    kafka, fmt = tmp_path / "kafka" / "t-0", tmp_path / "fmt" / "t-0"
    batches, _ = _phase_batches(rng, 0, T0, 2, "none", 40, 12)
    for d in (kafka, fmt):
        _append(d, props, batches, T0)
    start = 30
    write_checkpoint(fmt.parent / "log-start-offset-checkpoint", [("t", 0, start)], fsync=False)
    at = T0 + PHASE_MS
    k = cleaner_oracle.clean(kafka, now=at, config=props, log_start_offset=start)
    assert main(["clean", str(fmt), "--now", str(at)] + [a for kv in props.items() for a in ("-c", "=".join(kv))]) == 0
    assert f"cleaned offsets [{start}," in capsys.readouterr().out and k["cleaned"]
    _compare(kafka, fmt, {"none"})


@pytest.mark.parametrize("extra,cleans", [
    ({"min.cleanable.dirty.ratio": "0.99"}, False),
    ({"min.cleanable.dirty.ratio": "0.99", "max.compaction.lag.ms": str(PHASE_MS // 4)}, True)],  # 2nd pass
    ids=["ratio-not-reached", "max-compaction-lag-passed"])
def test_when_a_log_is_cleaned(cleaner_oracle, tmp_path, extra, cleans):
    """The dirty ratio must exceed min.cleanable.dirty.ratio, unless max.compaction.lag.ms has passed
    for a dirty segment's first batch (LogCleanerManager.grabFilthiestCompactedLog)."""
    results = run_and_compare(cleaner_oracle, tmp_path, [(2, "none")] * 2, seed=19, props_extra=extra)
    assert [r.cleaned for r in results] == [True, cleans]  # the first pass: all dirty, ratio 1.0



def _segment_files(d: Path) -> dict:
    """A partition directory's segment files (``.log``, indexes, producer snapshots, ``.deleted`` ones
    included) by name: their bytes."""
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and p.name[:20].isdigit()}


@pytest.mark.parametrize("delay", [0, 45_000])
def test_file_delete_delay(cleaner_oracle, tmp_path, delay):
    """file.delete.delay.ms: replaceSegments renames each replaced segment's files, and the producer snapshot
    of each segment merged away, ``.deleted`` at once (LocalLog.deleteSegmentFiles with asyncDelete,
    ProducerStateManager.removeAndMarkSnapshotForDeletion); Kafka's scheduler unlinks them after the delay
    (at once with 0).  After one pass both directories hold the same segment files, ``.deleted`` ones
    included, byte for byte; once the delay has passed Kafka's are gone, and kafkafmt's next open removes
    its own (as LogLoader does)."""
    props = _props(2, {"file.delete.delay.ms": str(delay), "segment.bytes": "3000"})
    delete_delay_case(cleaner_oracle, tmp_path, props, _config(props))


def delete_delay_case(oracle, tmp_path: Path, props: dict, config: LogConfig) -> None:
    """:func:`test_file_delete_delay` against ``oracle`` with topic ``props`` (kafkafmt's ``config``)."""
    from test_log_cleaner_crash import _append as append_small
    delay = int(props["file.delete.delay.ms"])
    base = tmp_path / "base" / "t-0"
    append_small(base, 0, 35, T0, 2, "none")  # 700-byte segments, 4 of them merged into one group
    # Kafka opens and closes it once, as a broker restarting would: producer snapshots at the last two
    # segments' bases and the log end (UnifiedLog.rebuildProducerState), in both copies
    oracle.call("records", dir=str(base), now=T0, config=props, clean=True)
    kafka, fmt = (shutil.copytree(base.parent, tmp_path / n) / "t-0" for n in ("kafka", "fmt"))
    at = T0 + PHASE_MS
    k = oracle.clean(kafka, now=at, config=props)
    log = Log(fmt, config, SimulatedClock(at), clean_shutdown=True)
    r = log.clean(now=at)
    log.close()
    assert r.cleaned and k["cleaned"] and any(len(g) > 1 for g in r.groups)
    _compare(kafka, fmt, {"none"})
    theirs = _segment_files(kafka)
    assert theirs == _segment_files(fmt)
    waiting = sorted(n for n in theirs if n.endswith(".deleted"))
    assert sorted(Path(f).name for f in r.deleted_files) == waiting
    if delay == 0:
        assert waiting == [] and k["scheduled"] == []
        return
    assert any(n.endswith(".log.deleted") for n in waiting) and any(n.endswith(".snapshot.deleted") for n in waiting)
    assert {t["dueMs"] for t in k["scheduled"]} == {at + delay}
    assert oracle.run_scheduled(at + delay - 1)["ran"] == []
    done = oracle.run_scheduled(at + delay)
    assert done["ran"] and done["scheduled"] == []
    gone = {n: b for n, b in theirs.items() if not n.endswith(".deleted")}
    assert _segment_files(kafka) == gone
    Log(fmt, config, SimulatedClock(at + delay), clean_shutdown=True).close()
    assert _segment_files(fmt) == gone
