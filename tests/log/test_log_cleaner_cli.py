"""``kafkafmt clean``: --dry-run changes nothing, a real run equals Log.clean, errors are one line."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from kafkafmt.cli import main
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner.offset_map import CleanerConfig
from kafkafmt.log.clock import set_mtime_ms
from kafkafmt.records import MemoryRecords
from log_helpers import batch

T0 = 1_700_000_000_000
PROPS = {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"}


def _make(root: Path) -> Path:
    d = root / "t-0"
    log = Log(d, LogConfig.from_properties(PROPS), SimulatedClock(T0))
    off = 0
    for i in range(60):
        recs = [(T0 + i, b"k%d" % ((i * 7 + j) % 9), None if (i + j) % 6 == 0 else b"v%d" % i) for j in range(3)]
        log.append_as_follower(batch(off, recs, magic=2, compression="none"))
        off += 3
    log.close()
    for p in d.glob("*.log"):
        set_mtime_ms(p, T0)
    return d


def _state(root: Path) -> list:
    return sorted((str(p.relative_to(root)), p.read_bytes(), p.stat().st_mtime_ns)
                  for p in root.rglob("*") if p.is_file())


def _args(d: Path) -> list[str]:
    out = ["clean", str(d), "--now", str(T0 + 1000)]
    for k, v in PROPS.items():
        out += ["-c", f"{k}={v}"]
    return out


def test_dry_run_changes_nothing(tmp_path, capsys):
    d = _make(tmp_path / "a")
    before = _state(tmp_path / "a")
    assert main(_args(d) + ["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove" in out and "would wait as .deleted" in out  # file.delete.delay.ms: 60000 by default
    assert _state(tmp_path / "a") == before


def test_clean_equals_log_clean(tmp_path, capsys):
    d = _make(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b", copy_function=shutil.copy2)
    assert main(_args(d) + ["-c", "log.cleaner.dedupe.buffer.size=100000"]) == 0
    out = capsys.readouterr().out
    assert "removed" in out and "tombstone(s) kept:" in out and "tombstone at offset" not in out
    log = Log(tmp_path / "b" / "t-0", LogConfig.from_properties(PROPS), SimulatedClock(T0 + 1000))
    r = log.clean(now=T0 + 1000, cleaner=CleanerConfig(dedupe_buffer_size=100000))
    log.close()
    # the replaced segments' files wait as .deleted for Kafka's scheduler (file.delete.delay.ms=60000)
    waiting = sorted(p.name for p in (tmp_path / "a" / "t-0").glob("*.deleted"))
    assert waiting and waiting == sorted(Path(f).name for f in r.deleted_files)
    assert f"{len(waiting)} replaced file(s) wait as .deleted; Kafka deletes them after file.delete.delay.ms" in out
    for p in (tmp_path / "a" / "t-0").glob("*.log"):
        assert p.read_bytes() == (tmp_path / "b" / "t-0" / p.name).read_bytes()
    assert (tmp_path / "a" / "cleaner-offset-checkpoint").read_text() == \
        (tmp_path / "b" / "cleaner-offset-checkpoint").read_text()


def test_errors_are_one_line(tmp_path):
    for extra in (["-c", "log.cleaner.dedupe.buffer.size=x"], ["-c", "nosuch.key=1"], ["-c", "novalue"]):
        r = subprocess.run([sys.executable, "-m", "kafkafmt", "clean", str(tmp_path), *extra],
                           capture_output=True, text=True)
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "kafkafmt", "clean", str(tmp_path / "missing")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "not a partition directory" in r.stderr
    r = subprocess.run([sys.executable, "-m", "kafkafmt", "clean", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--dry-run" in r.stdout


def test_explain_fetch_at_a_removed_offset(tmp_path, capsys):
    """A fetch at an offset compaction removed is served from the next batch, not OFFSET_OUT_OF_RANGE: the
    log start offset comes from the segment's base and the log-start checkpoint, not the first batch."""
    from kafkafmt.broker.fetch import fetch
    d = tmp_path / "t-0"
    log = Log(d, LogConfig.from_properties(PROPS), SimulatedClock(T0))
    for i in range(40):  # key k0 rewritten again and again: every old k0 record goes
        log.append_as_follower(batch(i, [(T0 + i, b"k0" if i < 5 else b"k%d" % i, b"v%d" % i)], magic=2))
    log.clean(now=T0 + 1000)
    log.close()
    seg = d / "00000000000000000000.log"
    first = next(iter(MemoryRecords(seg.read_bytes()).batches()))
    assert first.base_offset > 0, "the workload left offset 0 in place"
    res = fetch(seg.read_bytes(), fetch_offset=0, log_start_offset=0)
    assert res.error is None and next(iter(MemoryRecords(res.records).batches())).base_offset == first.base_offset
    assert main(["explain", "fetch", str(seg), "--fetch-offset", "0"]) == 0
    out = capsys.readouterr().out
    assert "OFFSET_OUT_OF_RANGE" not in out and "ZERO-COPY" in out
    assert fetch(seg.read_bytes(), fetch_offset=0).error == "OFFSET_OUT_OF_RANGE"  # the first batch as log start


def test_kept_tombstones_summed_up_by_when_they_may_go_and_listed_on_request():
    """One line per delete horizon (v2) and one for the v0/v1 rule, with the count and offsets; --tombstones
    lists each one."""
    from kafkafmt.tools.clean import tombstone_lines
    kept = [(5, 1_700_000_100_000), (9, None), (12, 1_700_000_100_000), (30, 1_700_000_200_000)]
    assert tombstone_lines(kept) == [
        "4 tombstone(s) kept:",
        "  2 until 1700000100000 (2023-11-14 22:15:00.000 UTC, the batch's deleteHorizonMs): offsets 5 to 12",
        "  1 until 1700000200000 (2023-11-14 22:16:40.000 UTC, the batch's deleteHorizonMs): offset 30",
        "  1 until their segment's mtime + delete.retention.ms (v0/v1): offset 9"]
    every = tombstone_lines(kept, every=True)
    assert every[:4] == tombstone_lines(kept) and len(every) == 8
    assert every[5] == "  tombstone at offset 9 kept until their segment's mtime + delete.retention.ms (v0/v1)"
    assert tombstone_lines([]) == []


def test_tombstones_flag_lists_each_one(tmp_path, capsys):
    d = _make(tmp_path / "a")
    assert main(_args(d) + ["--tombstones", "--dry-run"]) == 0
    out = capsys.readouterr().out
    summary = next(line for line in out.splitlines() if line.endswith("tombstone(s) kept:"))
    assert out.count("tombstone at offset") == int(summary.split()[0]) > 0


def test_clean_touches_only_the_partitions_segments_and_the_cleaner_checkpoint(tmp_path, capsys):
    """A cleaner never touches the log directory's broker files (``.kafka_cleanshutdown``, the recovery-point
    and log-start checkpoints: ``LogManager``'s): after ``kafkafmt clean`` on a stopped broker's log directory
    they keep their bytes and their modification times; only segments, their indexes and
    ``cleaner-offset-checkpoint`` change."""
    import os
    d = _make(tmp_path / "a")
    assert (tmp_path / "a" / ".kafka_cleanshutdown").is_file()
    for p in (tmp_path / "a").rglob("*"):
        if p.is_file():
            os.utime(p, ns=(T0 * 1_000_000, T0 * 1_000_000))
    before = dict((name, (data, mtime)) for name, data, mtime in _state(tmp_path / "a"))
    assert main(_args(d) + ["-c", "file.delete.delay.ms=0"]) == 0
    assert "cleaned offsets" in capsys.readouterr().out
    after = dict((name, (data, mtime)) for name, data, mtime in _state(tmp_path / "a"))
    changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
    odd = [n for n in changed if n != "cleaner-offset-checkpoint" and not n.endswith((".log", ".index", ".timeindex"))]
    assert "cleaner-offset-checkpoint" in changed and not odd, [(n, before.get(n), after.get(n)) for n in odd]
    for name in (".kafka_cleanshutdown", "recovery-point-offset-checkpoint"):
        assert name in before and after[name] == before[name], name
