"""Issue 12, item 4: ``kill -9`` in the middle of writing, repeated, never leaves something that looks
complete but is not, and the next run leaves no stray temporary file.

Each kill is aimed: the parent watches the files and sends SIGKILL while the child is writing
(a ``build -o`` temp file exists; the log has grown), so the interrupted state is really tested.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.records import MemoryRecords

ROUNDS = 3


def _kill_when(proc: subprocess.Popen, condition, timeout: float = 60.0) -> bool:
    """SIGKILL ``proc`` as soon as ``condition()`` holds; False if it ended (or timed out) first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if condition():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.0005)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    return False


def test_kill_during_build_output_leaves_the_old_file_or_the_whole_new_one(tmp_path):
    spec = tmp_path / "spec.json"
    records = [{"offset": i, "timestamp": i, "value": {"hex": os.urandom(2000).hex()}} for i in range(4000)]
    spec.write_text(json.dumps({"magic": 2, "compresscodec": "none", "records": records}))
    out = tmp_path / "out.bin"
    cmd = [sys.executable, "-m", "kafkafmt", "build", str(spec), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    expected = out.read_bytes()
    assert len(expected) > 8_000_000
    out.unlink()

    def temps():
        return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out.bin.") and p.name.endswith(".tmp"))

    interrupted = 0
    for _ in range(ROUNDS):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        interrupted += _kill_when(proc, lambda: bool(temps()))
        assert not out.exists() or out.read_bytes() == expected, "a partial output looks complete"
    assert interrupted == ROUNDS and temps(), "the kills did not land while the output was being written"
    subprocess.run(cmd, check=True, capture_output=True)
    assert out.read_bytes() == expected
    assert temps() == [], "the next run must remove the temp files of killed runs"


_APPENDER = textwrap.dedent("""
    import sys
    from kafkafmt.constants import CompressionType, TimestampType
    from kafkafmt.log import Log, LogConfig, SimulatedClock
    from kafkafmt.records import MemoryRecordsBuilder
    log = Log.open(sys.argv[1], LogConfig(segment_bytes=32768, index_interval_bytes=512), SimulatedClock(10**12))
    while True:
        first = log.log_end_offset
        b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
        for i in range(5):
            b.append(10**12 + first + i, None, b"value-%08d" % (first + i) * 20)
        log.append_as_leader(b.build())
""")


def _check_log(d: Path) -> int:
    """Reopen as the next run would; every record whole and in order; no leftover; return the LEO."""
    log = Log.open(d, LogConfig(segment_bytes=32768, index_interval_bytes=512), SimulatedClock(10**12))
    try:
        leo = log.log_end_offset
        expected = 0
        for seg in log.segments:
            for b in MemoryRecords(seg.log.read_all()).batches():
                assert b.is_valid()
                for r in b.records():
                    assert r.offset == expected and r.value == b"value-%08d" % expected * 20
                    expected += 1
        assert expected == leo and leo % 5 == 0, "a batch is cut or missing"
        strays = [p.name for p in d.iterdir() if p.name.endswith((".tmp", ".cleaned", ".swap", ".deleted"))]
        assert strays == []
        return leo
    finally:
        log.close()


def test_kill_during_log_appends_leaves_whole_batches_only(tmp_path):
    d = tmp_path / "t-0"
    Log(d, LogConfig(segment_bytes=32768), SimulatedClock(10**12)).close()
    cmd = [sys.executable, "-c", _APPENDER, str(d)]
    leo = 0
    for _ in range(ROUNDS):
        size0 = sum(p.stat().st_size for p in d.glob("*.log"))
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        grew = lambda: sum(p.stat().st_size for p in d.glob("*.log")) > size0 + 60_000  # noqa: E731
        assert _kill_when(proc, grew), proc.stderr.read().decode()[-2000:]
        new_leo = _check_log(d)
        assert new_leo > leo
        leo = new_leo
    assert len(list(d.glob("*.log"))) > 2, "the kills should span segment rolls"
