"""``kafkafmt clean --kafka-line X`` against the cleaner of the release itself, pass after pass.

For each release, one JVM on its jars (``conformance/old-cleaner/OldCleaner.java``, :mod:`kafkarig.old_cleaner`):
the release's own ``kafka.log.Log`` writes each workload (appended as a follower appends, each batch at its
mock time, each ``.log`` given its last append's time), the directory is copied, and then pass after pass the
release's cleaner thread (``CleanerThread.cleanOrSleep``, 2.x ``cleanFilthiestLog``) cleans one copy at a fixed
clock and ``kafkafmt clean --kafka-line <line> --now <same>`` the other.  After every pass every ``.log`` (bytes
and modification time), ``.index``, ``.timeindex``, ``.txnindex``, ``leader-epoch-checkpoint`` and
``cleaner-offset-checkpoint`` must be byte-identical (or both sides refuse, with the same message).

The workloads are uncompressed or gzip (whose bytes no lz4-java version decides); the passes are at
``T0 + 5 s`` (tombstones within ``delete.retention.ms`` of their segment's time) and twice after it.  Java 17
and Maven are needed (the releases' jars resolved on first use): without them the tests skip locally and fail
under ``CI=true``.
"""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from kafkafmt.cli import main
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.records import MemoryRecordsBuilder
from old_release_fixtures import releases_or_skip

T0 = 1_700_000_000_000
PASSES = (T0 + 5_000, T0 + 10_000_000, T0 + 10_000_001)
PROPS = {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01",
         "file.delete.delay.ms": "0", "delete.retention.ms": "100"}
MAX_MESSAGE = 1000012  # message.max.bytes of these releases

#: workload name -> (record version, codec, distinct keys, dedupe buffer bytes[, topic settings beside PROPS])
WORKLOADS = {
    "v1-format-0.10.2": (1, "none", 9, 1 << 20, {"message.format.version": "0.10.2"}),  # leader-epoch-checkpoint
    "v0": (0, "none", 9, 1 << 20),
    "v0-gzip": (0, "gzip", 9, 1 << 20),
    "v1": (1, "none", 9, 1 << 20),
    "v1-gzip": (1, "gzip", 9, 1 << 20),
    "v0-small-map": (0, "none", 150, 960),  # a map of 36 keys: several partial passes
    "v1-small-map": (1, "none", 150, 960),
    "v2": (2, "none", 9, 1 << 20),
    "v2-gzip": (2, "gzip", 9, 1 << 20),
    "v2-small-map": (2, "none", 150, 960),
    "v0-tiny-map": (0, "none", 150, 480),  # 18 keys: 0.9 refuses a segment, 0.10.0 cannot map the first
    "v1-tiny-map": (1, "none", 150, 480),
}

#: release -> (line, the workloads byte-identical today)
RELEASES = {
    "0.9.0.1": ("0.9", ("v0", "v0-gzip", "v0-small-map", "v0-tiny-map")),
    "0.10.0.1": ("0.10.0", ("v0", "v1", "v0-small-map", "v1-small-map", "v1-tiny-map")),
    "0.10.2.2": ("0.10.2", ("v0", "v1", "v1-gzip", "v0-small-map", "v1-small-map", "v1-tiny-map")),
    "0.11.0.3": ("0.11", ("v0", "v1", "v2", "v2-gzip", "v2-small-map", "v1-format-0.10.2")),
    "1.1.1": ("1.1", ("v0", "v1-gzip", "v2", "v2-gzip", "v2-small-map", "v1-format-0.10.2")),
    "2.8.2": ("2.8", ("v0", "v1-gzip", "v2", "v2-gzip", "v2-small-map", "v1-format-0.10.2")),
}


def batch(offset: int, records, magic: int, codec: str) -> bytes:
    b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), TimestampType.CREATE_TIME, offset,
                             partition_leader_epoch=0 if magic >= 2 else -1)
    for ts, k, v in records:
        b.append(ts, k, v)
    return b.build()


def workload(magic: int, codec: str, keys: int, seed: int = 1) -> list[tuple[int, bytes]]:
    """60 appends of 3 records each (one message set per record when plain v0/v1), 1 in 6 a tombstone,
    10 ms apart: ``(append time, bytes)`` with consecutive offsets."""
    rnd, out, offset = random.Random(seed), [], 0
    for i in range(60):
        ts = T0 + i * 10
        recs = [(ts, b"k%d" % rnd.randrange(keys), None if rnd.randrange(6) == 0 else b"v%d-%d" % (i, j))
                for j in range(3)]
        sets = [[r] for r in recs] if codec == "none" and magic < 2 else [recs]
        for s in sets:
            out.append((ts, batch(offset, s, magic, codec)))
            offset += len(s)
    return out


def state(root: Path) -> dict:
    """What the comparison covers: each file's bytes, and each ``.log``'s modification time (ms)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and (p.suffix in (".log", ".index", ".timeindex", ".txnindex")
                            or p.name in ("leader-epoch-checkpoint", "cleaner-offset-checkpoint")):
            out[str(p.relative_to(root))] = (p.read_bytes(), p.stat().st_mtime_ns // 1_000_000 if p.suffix == ".log"
                                             else None)
    return out


@pytest.fixture(scope="module", params=list(RELEASES))
def release_runs(request, tmp_path_factory):
    """Every workload of one release written and cleaned pass after pass by the release itself (one JVM):
    (release, line, {workload: (the kafkafmt copy, [(state after each pass, the exception's message or None)])})."""
    version = request.param
    releases_or_skip(version)
    from kafkarig.old_cleaner import OldCleaner, OldCleanerError
    line, names = RELEASES[version]
    root = tmp_path_factory.mktemp(f"old-cleaner-{version}")
    runs = {}
    with OldCleaner(version) as kafka:
        for name in names:
            magic, codec, keys, dedupe, *extra = WORKLOADS[name]
            props = {**PROPS, **(extra[0] if extra else {})}
            a, b = root / name / "kafka", root / name / "kafkafmt"
            end = kafka.write(a / "t-0", props, workload(magic, codec, keys))
            shutil.copytree(a, b, copy_function=shutil.copy2)
            states = []
            for now in PASSES:
                try:
                    kafka.clean(a / "t-0", now=now, props=props, recovery_point=end, dedupe_buffer_size=dedupe,
                                max_message_size=MAX_MESSAGE)
                    error = None
                except OldCleanerError as e:  # what the cleaner thread threw (the checkpoint written first)
                    error = e.message
                states.append((state(a), error))
            runs[name] = (b, states, props)
    return version, line, runs


def test_kafkafmt_cleans_as_the_release(release_runs, capsys):
    version, line, runs = release_runs
    for name, (copy, states, props) in runs.items():
        before = state(copy)
        dedupe = WORKLOADS[name][3]
        for i, now in enumerate(PASSES):
            args = ["clean", str(copy / "t-0"), "--now", str(now), "--kafka-line", line,
                    "-c", f"log.cleaner.dedupe.buffer.size={dedupe}", "-c", f"message.max.bytes={MAX_MESSAGE}"]
            for k, v in props.items():
                args += ["-c", f"{k}={v}"]
            theirs, error = states[i]
            rc = main(args)
            err = capsys.readouterr().err.strip()
            if error is None:
                assert rc == 0, err
            else:  # the release's own answer, as one line
                assert rc == 1 and err.count("\n") == 0 and err.endswith(error), (err, error)
            mine = state(copy)
            differ = sorted(n for n in set(mine) | set(theirs) if mine.get(n) != theirs.get(n))
            assert not differ, f"{version} {name} pass {i + 1}: {differ}"
        assert states[0][1] is not None or states[0][0] != before, f"{version} {name}: the first pass changed nothing"
