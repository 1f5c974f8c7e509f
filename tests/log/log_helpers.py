"""Helpers shared by the tests/log modules: building batches, batch boundaries, file snapshots, cleaned
partitions compared with Kafka's."""
from __future__ import annotations

import os
from pathlib import Path

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder


def batch(base_offset: int, records, *, magic: int = 2, compression: str = "none", lat: int | None = None,
          ple: int | None = None) -> bytes:
    """One batch (v2) or message set (v0/v1) of ``(timestamp, key, value)`` at ``base_offset``.

    v2 batches carry partition leader epoch 0 (as a leader writes them) unless ``ple`` says otherwise.
    ``lat`` = a LogAppendTime batch whose maxTimestamp is ``lat`` (what the leader stores).
    """
    ts_type = TimestampType.LOG_APPEND_TIME if lat is not None else TimestampType.CREATE_TIME
    b = MemoryRecordsBuilder(magic, CompressionType.from_name(compression), ts_type, base_offset,
                             log_append_time=-1 if lat is None else lat,
                             partition_leader_epoch=(0 if ple is None else ple) if magic >= 2 else -1)
    for ts, k, v in records:
        b.append(ts, k, v)
    return b.build()


def one(base_offset: int, ts: int, size: int = 20, **kw) -> bytes:
    """A one-record batch with a value of ``size`` bytes."""
    return batch(base_offset, [(ts, b"k", b"v" * size)], **kw)


def boundaries(data: bytes) -> list[tuple[int, int, int, int]]:
    """``(position, size, last_offset, max_timestamp)`` of each whole batch in ``data``."""
    out = []
    for b in MemoryRecords(data).batches():
        out.append((b.position, b.size_in_bytes, b.last_offset, b.max_timestamp))
    return out


def dir_files(d: str | os.PathLike, suffixes=(".log", ".index", ".timeindex")) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(d).iterdir()) if p.is_file() and p.name.endswith(suffixes)}


class LogPair:
    """A log oracle's ``UnifiedLog`` (Kafka's, over the rig's JSON-lines transport) and kafkafmt's ``Log``
    opened side by side on one simulated time: Kafka's in ``base/kafka/t-0``, kafkafmt's in ``base/kafkafmt/t-0``,
    both with the topic properties ``props`` (``file.delete.delay.ms`` 0) on ``broker`` (default: the default
    line).  The tests' pairs (test_log_vs_kafka.Pair, test_kafka44_log_files.Pair44) drive and compare them."""

    def __init__(self, oracle, base: Path, props: dict, t: int, broker=None) -> None:
        from kafkafmt.log import Log, LogConfig, SimulatedClock
        self.o, self.key = oracle, str(base)
        self.props = {k: str(v) for k, v in {**props, "file.delete.delay.ms": 0}.items()}
        self.cfg = LogConfig.from_properties(self.props, broker=broker)
        self.kd, self.pd = base / "kafka" / "t-0", base / "kafkafmt" / "t-0"
        self.clock = SimulatedClock(t)
        self.o.call("time", ms=t)
        self.o.call("open", log=self.key, dir=str(self.kd), config=self.props)
        self.log = Log(self.pd, self.cfg, self.clock)

    def set_time(self, t: int) -> None:
        self.clock.set(t)
        self.o.call("time", ms=t)


def assert_cleaned_like_kafka(kafka: Path, fmt: Path, suffixes=(".log", ".index", ".timeindex"),
                              logical=None) -> None:
    """A partition cleaned by kafkafmt (``fmt``) against its copy cleaned by Kafka's cleaner (``kafka``): the same
    segment files of ``suffixes``, byte for byte, the same ``.log`` modification times (the cleaner keeps the
    last segment's of a group) and the same ``cleaner-offset-checkpoint`` beside them.  With ``logical`` (a
    function of a ``.log``'s bytes), ``.log`` files whose bytes differ need only the same ``logical`` value."""
    from kafkafmt.log.clock import mtime_ms
    names = sorted(p.name for p in kafka.iterdir() if p.suffix in suffixes)
    assert names == sorted(p.name for p in fmt.iterdir() if p.suffix in suffixes)
    for n in names:
        a, b = (kafka / n).read_bytes(), (fmt / n).read_bytes()
        if n.endswith(".log"):
            assert mtime_ms(kafka / n) == mtime_ms(fmt / n), n
            if logical is not None and a != b:
                assert logical(a) == logical(b), n
                continue
        assert a == b, n
    ck = "cleaner-offset-checkpoint"
    assert (kafka.parent / ck).read_text() == (fmt.parent / ck).read_text()


def shm_or(tmp_path: Path) -> Path:
    """A fresh directory on tmpfs when there is one (Kafka's fsyncs are slow on disks), else ``tmp_path``."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        import tempfile
        return Path(tempfile.mkdtemp(prefix="kafkafmt-log-", dir=shm))
    return tmp_path
