"""Issue 12, item 4: ``Log.open(dir, read_only=True)`` never changes the directory, answers as the
recovered log does, and says what recovery would change; writing operations are refused."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kafkafmt.cli import main
from kafkafmt.errors import UnsupportedOperationError
from kafkafmt.log import Log, LogConfig, SimulatedClock
from log_helpers import batch

T0 = 1_700_000_000_000


def _state(d: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime (ns), and the directory's own listing."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(d.iterdir())}


def _broker_like_dir(root: Path) -> Path:
    """A partition directory as a crashed broker leaves it: three segments, no clean-shutdown marker,
    a torn write at the end of the active segment, and leftover .deleted/.cleaned/.swap/.tmp files."""
    d = root / "orders-3"
    log = Log(d, LogConfig(segment_bytes=400), SimulatedClock(T0))
    for i in range(12):
        log.append_as_leader(batch(0, [(T0 + i, b"k%d" % i, b"v" * 40)]))
    log.flush()
    log.crash()
    active = sorted(d.glob("*.log"))[-1]
    with open(active, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x00\x63\x00\x00\x01\x00torn")  # a partial batch
    for name in ("00000000000000000099.log.deleted", "00000000000000000050.log.cleaned",
                 "00000000000000000051.index.swap", "00000000000000000052.timeindex.tmp"):
        (d / name).write_bytes(b"leftover")
    marker_time = T0 / 1000 - 3600
    for p in d.iterdir():  # distinct, old mtimes: an accidental write or touch would show
        os.utime(p, (marker_time, marker_time))
    return d


@pytest.fixture
def crashed(tmp_path):
    return _broker_like_dir(tmp_path / "src")


def test_read_only_open_leaves_every_file_byte_and_mtime_identical(crashed):
    before = _state(crashed)
    with Log.open(crashed, LogConfig(segment_bytes=400), SimulatedClock(T0 + 5), read_only=True) as log:
        assert log.read_only and log.source_dir == crashed
        log.read(0, 1 << 20, isolation="log_end")
        log.fetch_offset_by_timestamp(T0 + 3)
        scratch = log.dir
        assert scratch != crashed and scratch.exists()
    assert _state(crashed) == before
    assert not scratch.exists(), "the private copy is removed on close"


def test_read_only_answers_as_the_recovered_log_and_says_what_recovery_changes(crashed, tmp_path):
    copy = tmp_path / "real" / crashed.name
    shutil.copytree(crashed, copy, copy_function=shutil.copy2)
    config, clock = LogConfig(segment_bytes=400), SimulatedClock(T0 + 5)
    ro = Log.open(crashed, config, clock, read_only=True)
    real_before = {p.name: p.stat().st_size for p in copy.iterdir()}
    rw = Log.open(copy, config, clock)
    try:
        assert ro.log_end_offset == rw.log_end_offset == 12
        assert [s.base_offset for s in ro.segments] == [s.base_offset for s in rw.segments]
        got = bytes(ro.read(0, 1 << 20, isolation="log_end").records)
        assert got == bytes(rw.read(0, 1 << 20, isolation="log_end").records)
        for ts in (T0, T0 + 7, T0 + 99):
            assert ro.fetch_offset_by_timestamp(ts) == rw.fetch_offset_by_timestamp(ts)
        # what recovery changed in the copy is what opening the real directory changed
        real_after = {p.name: p.stat().st_size for p in copy.iterdir()}
        changes = {c["file"]: c for c in ro.recovery_changes}
        assert {n for n in real_before if n not in real_after} == \
            {n for n, c in changes.items() if c["change"] == "deleted"}
        active_log = sorted(n for n in real_after if n.endswith(".log"))[-1]
        assert changes[active_log] == {"file": active_log, "change": "truncated", "from": real_before[active_log],
                                       "to": real_after[active_log]}
        for leftover in ("00000000000000000099.log.deleted", "00000000000000000050.log.cleaned",
                         "00000000000000000052.timeindex.tmp"):
            assert changes[leftover]["change"] == "deleted"
    finally:
        ro.close()
        rw.close()


def test_read_only_refuses_every_writing_operation(crashed):
    before = _state(crashed)
    log = Log.open(crashed, LogConfig(segment_bytes=400), SimulatedClock(T0), read_only=True)
    writes = [lambda: log.append_as_leader(batch(0, [(T0, b"k", b"v")])),
              lambda: log.append_as_follower(batch(12, [(T0, b"k", b"v")])),
              log.roll, log.flush, lambda: log.truncate_to(3), lambda: log.truncate_fully_and_start_at(0),
              log.delete_old_segments, lambda: log.maybe_increment_log_start_offset(1), log.delete]
    for w in writes:
        with pytest.raises(UnsupportedOperationError, match="read-only"):
            w()
    log.close()
    assert _state(crashed) == before


def test_dump_of_every_file_of_a_directory_changes_nothing(crashed, capsys):
    before = _state(crashed)
    files = [str(p) for p in sorted(crashed.iterdir()) if p.suffix in (".log", ".index", ".timeindex")]
    main(["dump", "--deep", *files])
    main(["dump", "--verify-index-only", *files])
    capsys.readouterr()
    assert _state(crashed) == before


def test_opening_for_writing_does_change_the_directory(crashed):
    """The reason read-only exists (and what the docs say): a normal open writes."""
    before = _state(crashed)
    Log.open(crashed, LogConfig(segment_bytes=400), SimulatedClock(T0)).close()
    assert _state(crashed) != before


def test_read_only_file_records_close_leaves_a_growing_file_alone(tmp_path):
    """A live broker appends to the active segment while a reader has it open: closing the read-only
    view must neither cut the file back to the size it saw nor fail."""
    from kafkafmt.log.file_records import FileRecords

    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"\x00" * 100)
    view = FileRecords(path, file_already_exists=True, mutable=False)
    assert view.size == 100
    with open(path, "ab") as f:                      # the broker's append, after the reader opened the file
        f.write(b"\x01" * 50)
    view.close()
    assert path.read_bytes() == b"\x00" * 100 + b"\x01" * 50
