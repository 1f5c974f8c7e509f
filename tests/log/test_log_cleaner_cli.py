"""``kafkafmt clean``: --dry-run changes nothing, a real run equals Log.clean, errors are one line."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from kafkafmt.cli import main
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner_map import CleanerConfig
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
    assert "removed" in out and "tombstone at offset" in out
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
