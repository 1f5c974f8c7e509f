"""The log directory's ``.lock`` (Kafka's ``LogManager.lockLogDirs`` / ``FileLock``) and the files Kafka keeps per
log directory (``.kafka_cleanshutdown``, ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``).

A broker-like holder is a separate process taking the POSIX record lock on ``.lock`` as the JDK's
``FileChannel.tryLock`` does on Linux; the live brokers of tests/conformance/test_live_dir_safety.py hold the real one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.errors import LogDirLockedError
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log import lock as dirlock
from kafkafmt.log.logdir import merge_offsets
from kafkafmt.records import MemoryRecordsBuilder

NOW = 1_700_000_000_000

_HOLDER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("refused", flush=True)
        sys.exit(3)
    print("locked", flush=True)
    sys.stdin.read()
""")


class Holder:
    """A process holding ``log_dir/.lock`` the way a broker does, until stopped."""

    def __init__(self, log_dir: Path):
        self.proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(log_dir / ".lock")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.state = self.proc.stdout.readline().strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)


def _try_lock_elsewhere(log_dir: Path) -> str:
    h = Holder(log_dir)
    h.stop()
    return h.state


def _batch(base: int, n: int = 3, first_key: int = 0) -> bytes:
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, base)
    first = first_key
    for i in range(n):
        b.append(NOW + first + i, b"k%d" % ((first + i) % 2), b"v%d" % (first + i))
    return b.build()


def _log(d: Path) -> Log:
    return Log(d, LogConfig(segment_bytes=300), SimulatedClock(NOW))


def _fill(d: Path, batches: int = 6) -> None:
    log = _log(d)
    for _ in range(batches):
        log.append_as_leader(_batch(0, first_key=log.log_end_offset))
    log.close()


def _snapshot(root: Path) -> dict:
    """Every file and directory under ``root``: bytes and mtime (ns)."""
    out = {}
    for p in sorted([root, *root.rglob("*")]):
        st = p.stat()
        out[str(p.relative_to(root))] = (p.read_bytes() if p.is_file() else None, st.st_mtime_ns)
    return out


@pytest.fixture
def filled(tmp_path):
    d = tmp_path / "logs" / "t-0"
    _fill(d)
    return d


def test_a_held_lock_refuses_every_writer_and_changes_nothing(filled):
    log_dir = filled.parent
    holder = Holder(log_dir)
    try:
        assert holder.state == "locked"
        before = _snapshot(log_dir)
        with pytest.raises(LogDirLockedError) as e:
            _log(filled)
        assert e.value.log_dir == str(log_dir) and e.value.holder_pid == holder.proc.pid
        assert f"Failed to acquire lock on file .lock in {log_dir}: held by process {holder.proc.pid}" in str(e.value)
        assert dirlock.holder(log_dir)[0] == holder.proc.pid
        # the command line: one line naming the directory and the holder, exit 1, nothing changed
        for cmd in (["clean", str(filled), "--now", str(NOW)],
                    ["build", "-", "-o", str(filled / "00000000000000000000.log")],
                    ["gen", "--out", str(log_dir), "--force", "--quiet"]):
            r = subprocess.run([sys.executable, "-m", "kafkafmt", *cmd], input="[]", capture_output=True, text=True)
            assert r.returncode == 1, (cmd, r.stderr)
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("kafkafmt: error: LogDirLockedError: Failed to acquire "
                                                           f"lock on file .lock in {log_dir}"), (cmd, r.stderr)
            assert f"process {holder.proc.pid}" in lines[0]
        assert _snapshot(log_dir) == before
        # a read-only open takes no lock and works on the held directory
        ro = Log.open(filled, LogConfig(segment_bytes=300), SimulatedClock(NOW), read_only=True)
        assert ro.log_end_offset == 18
        ro.close()
        assert _snapshot(log_dir) == before
    finally:
        holder.stop()
    _log(filled).close()  # the holder gone, writing works again


def test_while_kafkafmt_writes_a_broker_cannot_lock_and_the_lock_goes_at_close(filled):
    log_dir = filled.parent
    a = _log(filled)
    b = _log(log_dir / "u-0")  # a second log of the same process shares the one lock (one descriptor)
    assert (log_dir / ".lock").exists() and _try_lock_elsewhere(log_dir) == "refused"
    a.close()  # closing one log must not drop the lock the other still needs
    assert _try_lock_elsewhere(log_dir) == "refused"
    b.close()
    assert not (log_dir / ".lock").exists()  # FileLock.destroy deletes it
    assert _try_lock_elsewhere(log_dir) == "locked"


def test_release_never_deletes_a_newer_lock_file(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    dirlock.acquire(d)
    os.rename(d / ".lock", tmp_path / "old.lock")  # the directory replaced under the lock (gen --force)
    (d / ".lock").write_bytes(b"")
    dirlock.release(d)
    assert (d / ".lock").exists() and not dirlock.is_held_here(d)


def test_partition_directory_holds_only_kafkas_files_and_the_log_dir_its_checkpoints(tmp_path):
    log_dir = tmp_path / "logs"
    _fill(log_dir / "t-0")
    _fill(log_dir / "t-1", batches=2)
    assert sorted(p.name for p in (log_dir / "t-0").iterdir() if not p.name[:20].isdigit()) == \
        ["leader-epoch-checkpoint"]
    assert sorted(p.name for p in log_dir.iterdir()) == [
        ".kafka_cleanshutdown", "log-start-offset-checkpoint", "recovery-point-offset-checkpoint", "t-0", "t-1"]
    # OffsetCheckpointFile: version 0, count, one "topic partition offset" line per log, other lines kept
    assert (log_dir / "recovery-point-offset-checkpoint").read_text() == "0\n2\nt 0 18\nt 1 6\n"
    assert (log_dir / "log-start-offset-checkpoint").read_text() == "0\n0\n"  # no log start above a base
    assert json.loads((log_dir / ".kafka_cleanshutdown").read_text()) == {"version": 0, "brokerEpoch": -1}


def test_marker_content_is_kept_and_not_written_after_a_crash_or_for_unloaded_partitions(tmp_path):
    log_dir = tmp_path / "logs"
    _fill(log_dir / "t-0")
    (log_dir / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":42}')
    log = _log(log_dir / "t-0")
    assert not (log_dir / ".kafka_cleanshutdown").exists()  # deleted once seen (KAFKA-10471)
    log.close()
    assert (log_dir / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":42}'
    log = _log(log_dir / "t-0")
    log.crash()
    assert not (log_dir / ".kafka_cleanshutdown").exists()
    (log_dir / "u-0").mkdir()  # a partition this process never loads: it may need recovery, so no marker
    again = _log(log_dir / "t-0")
    assert again.events[0]["clean_shutdown"] is False
    again.close()
    assert not (log_dir / ".kafka_cleanshutdown").exists()


def test_checkpoint_merge_keeps_other_partitions_and_writes_atomically(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_text("0\n3\na 0 5\nb 2 7\nc 1 9\n")
    merge_offsets(path, {("b", 2): 8, ("d", 0): 1, ("c", 1): None}, fsync=True)
    assert path.read_text() == "0\n3\na 0 5\nb 2 8\nd 0 1\n"
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()
    mtime = path.stat().st_mtime_ns
    merge_offsets(path, {("a", 0): 5}, fsync=True)  # nothing changes: the file is not rewritten
    assert path.stat().st_mtime_ns == mtime
    path.write_text("0\n9\nbroken\n")  # LogManager ignores a malformed file and overwrites it
    merge_offsets(path, {("a", 0): 1}, fsync=False)
    assert path.read_text() == "0\n1\na 0 1\n"
