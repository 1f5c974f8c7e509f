"""``kafkafmt clean --kafka-line X`` against the cleaner of the release itself, pass after pass.

For each release, one JVM on its jars (``conformance/old-cleaner/OldCleaner.java``, :mod:`kafkarig.old_cleaner`):
the release's own ``kafka.log.Log`` appends each phase of a workload to both copies (as a follower appends,
each batch at its mock time, each ``.log`` given its last append's time), then pass after pass the release's
cleaner thread (``CleanerThread.cleanOrSleep``, 2.x ``cleanFilthiestLog``) cleans one copy at a fixed clock and
``kafkafmt clean --kafka-line <line> --now <same>`` the other.  After every pass every ``.log`` (bytes and
modification time), ``.index``, ``.timeindex``, ``.txnindex``, ``leader-epoch-checkpoint`` and
``cleaner-offset-checkpoint`` must be byte-identical (or both sides refuse, with the same message).

The workloads are uncompressed, gzip, snappy (each release's snappy-java rebuilding the wrappers with holes:
rows ``codec.snappy_java``, ``codec.snappy_block``) or zstd (2.1.1 and 2.8.2: small batches, whose frames kafkafmt
writes as their libzstd does, :mod:`kafkafmt.compression.zstd`); lz4 is tests/history/test_old_cleaner_codecs.py's.
Some are on LogAppendTime topics (batches as the leader stamped them) or ``cleanup.policy=compact,delete``
(retention by bytes or time in the same pass, KIP-71).  The passes are at ``T0 + 5 s`` and twice long after
(tombstones and transaction markers on these lines live by their segment's modification time, row
``cleaner.delete_horizon``).  Where 0.10.0.1 throws (KAFKA-4298: a v0 wrapper rebuilt under
message.format.version 0.10.0, a v1 one under 0.9.0) kafkafmt refuses with the release's message, the
directory left as the release left it (the groups before swapped in, the checkpoint at the first dirty
offset).  Java 17 and Maven are needed (the releases' jars resolved on first use): without them the tests skip
locally and fail under ``CI=true``.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from kafkafmt.cli import main
from kafkafmt.constants import CompressionType, ControlRecordType, TimestampType
from kafkafmt.log.cleaner import compared
from kafkafmt.records import MemoryRecordsBuilder, end_txn_marker
from old_release_fixtures import releases_or_skip

T0 = 1_700_000_000_000
PASSES = (T0 + 5_000, T0 + 10_000_000, T0 + 10_000_001)
PROPS = {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01",
         "file.delete.delay.ms": "0", "delete.retention.ms": "100"}
MAX_MESSAGE = 1000012  # message.max.bytes of these releases

#: the workloads (record version, codec, distinct keys, dedupe buffer bytes[, topic settings beside PROPS]) and
#: release -> (line, the workloads byte-identical today): kafkafmt.log.cleaner.compared's tables, from which notebook
#: 09 derives on which real release each row of kafka_lines was checked
WORKLOADS, RELEASES = compared.WORKLOADS, compared.RELEASES


def batch(offset: int, records, magic: int, codec: str, log_append_time: int | None = None) -> bytes:
    """``records`` as the leader stores them; with ``log_append_time`` as a leader of a LogAppendTime topic does
    (an uncompressed v0/v1 message, a compressed wrapper or a v2 batch stamped with that time and type)."""
    ts_type = TimestampType.CREATE_TIME if log_append_time is None else TimestampType.LOG_APPEND_TIME
    b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), ts_type, offset,
                             partition_leader_epoch=0 if magic >= 2 else -1,
                             **({} if log_append_time is None else {"log_append_time": log_append_time}))
    for ts, k, v in records:
        b.append(ts, k, v)
    return b.build()


def workload(magic, codec: str, keys: int, seed: int = 1, log_append: bool = False) -> list[tuple[int, bytes]]:
    """60 appends of 3 records each (one message set per record when plain v0/v1), 1 in 6 a tombstone,
    10 ms apart: ``(append time, bytes)`` with consecutive offsets.  ``magic``: a record version, or
    several one after the other (``(0, 1, 2)``: a third of the appends in each), or ``"txn"``.  ``log_append``:
    stamped by a LogAppendTime leader at the append time, 1 ms after the records' own timestamps."""
    if magic == "txn":
        return transactions(codec, keys, seed)
    magics = magic if isinstance(magic, tuple) else (magic,)
    rnd, out, offset = random.Random(seed), [], 0
    for i in range(60):
        magic = magics[i * len(magics) // 60]
        ts = T0 + i * 10
        recs = [(ts, b"k%d" % rnd.randrange(keys), None if rnd.randrange(6) == 0 else b"v%d-%d" % (i, j))
                for j in range(3)]
        sets = [[r] for r in recs] if codec == "none" and magic < 2 else [recs]
        at = ts + 1 if log_append else ts
        for s in sets:
            out.append((at, batch(offset, s, magic, codec, at if log_append else None)))
            offset += len(s)
    return out


def transactions(codec: str, keys: int, seed: int) -> list[tuple[int, bytes]]:
    """80 v2 appends, 1 s apart (segments seconds apart in mtime, so markers go once their transaction has):
    three transactional producers (each transaction committed or, 2 in 5, aborted), an idempotent one and
    plain batches; every transaction closed at the end."""
    rnd, out, offset = random.Random(seed), [], 0
    seq, open_ = {1000: 0, 1001: 0, 1002: 0, 2000: 0}, set()

    def data_batch(ts, pid, txn):
        nonlocal offset
        n = rnd.randrange(1, 4)
        b = MemoryRecordsBuilder(2, CompressionType.from_name(codec), TimestampType.CREATE_TIME, offset,
                                 producer_id=pid, producer_epoch=0 if pid >= 0 else -1, base_sequence=seq.get(pid, -1),
                                 is_transactional=txn, partition_leader_epoch=0)
        for j in range(n):
            b.append(ts + j, b"k%d" % rnd.randrange(keys), None if rnd.random() < 0.15 else b"v%d" % (offset + j))
        if pid >= 0:
            seq[pid] += n
        offset += n
        return b.build()

    def marker(ts, pid, kind):
        nonlocal offset
        offset += 1
        return end_txn_marker(base_offset=offset - 1, timestamp=ts, partition_leader_epoch=0, producer_id=pid,
                              producer_epoch=0, control_type=kind, coordinator_epoch=0)

    for i in range(80):
        ts = T0 + i * 1000
        pid = rnd.choice([1000, 1001, 1002, 2000, -1])
        if pid in open_ and rnd.random() < 0.4:
            kind = ControlRecordType.ABORT if rnd.random() < 0.4 else ControlRecordType.COMMIT
            out.append((ts, marker(ts, pid, kind)))
            open_.discard(pid)
        else:
            out.append((ts, data_batch(ts, pid, 1000 <= pid < 2000)))
            if 1000 <= pid < 2000:
                open_.add(pid)
    for pid in sorted(open_):
        out.append((T0 + 80_000, marker(T0 + 80_000, pid, ControlRecordType.COMMIT)))
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


def phases(name: str) -> list[tuple[list[tuple[int, bytes]], tuple[int, ...]]]:
    """The workload as (appends, then the passes at these times) phases: one phase and :data:`PASSES`, or for
    transactions three phases of appends (the last closing every transaction), a pass after each and two more
    after the last, so markers meet later passes with their transactions emptied."""
    magic, codec, keys, _, *extra = WORKLOADS[name]
    appends = workload(magic, codec, keys,
                       log_append=(extra[0] if extra else {}).get("message.timestamp.type") == "LogAppendTime")
    if magic != "txn":
        return [(appends, PASSES)]
    third = len(appends) // 3
    chunks = [appends[:third], appends[third:2 * third], appends[2 * third:]]
    return [(c, (c[-1][0] + 5_000,) + (PASSES[1:] if i == 2 else ())) for i, c in enumerate(chunks)]


CASES = [(version, name) for version, (_, names) in RELEASES.items() for name in names]


@pytest.fixture(scope="module")
def jvms():
    """One JVM per release, the previous one closed when the cases move to the next release."""
    running: dict = {}

    def of(version: str):
        if version not in running:
            for other in list(running):
                running.pop(other).close()
            releases_or_skip(version)
            from kafkarig.old_cleaner import OldCleaner
            running[version] = OldCleaner(version)
        return running[version]

    yield of
    for k in running.values():
        k.close()


@pytest.mark.parametrize("version,name", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_kafkafmt_cleans_as_the_release(jvms, version, name, tmp_path, capsys):
    """The release's Log appends each phase to both copies (on the kafkafmt copy: over what kafkafmt's passes
    left, identical to Kafka's so far); then the release's cleaner cleans one and ``kafkafmt clean`` the
    other, pass after pass, compared after each; where the release threw, kafkafmt refuses with its message."""
    from kafkarig.old_cleaner import OldCleanerError
    kafka = jvms(version)
    line = RELEASES[version][0]
    dedupe, *extra = WORKLOADS[name][3:]
    props = {**PROPS, **(extra[0] if extra else {})}
    theirs_dir, mine_dir = tmp_path / "kafka" / "t-0", tmp_path / "kafkafmt" / "t-0"
    changed = False
    for n, (appends, passes) in enumerate(phases(name)):
        before = state(theirs_dir.parent)
        end = kafka.write(theirs_dir, props, appends)
        assert kafka.write(mine_dir, props, appends) == end
        for i, now in enumerate(passes):
            try:
                kafka.clean(theirs_dir, now=now, props=props, recovery_point=end, dedupe_buffer_size=dedupe,
                            max_message_size=MAX_MESSAGE)
                error = None
            except OldCleanerError as e:  # what the cleaner thread threw (the checkpoint written first)
                error = e.message
            theirs = state(theirs_dir.parent)
            changed |= i == 0 and theirs != before
            args = ["clean", str(mine_dir), "--now", str(now), "--kafka-line", line,
                    "-c", f"log.cleaner.dedupe.buffer.size={dedupe}", "-c", f"message.max.bytes={MAX_MESSAGE}"]
            for k, v in props.items():
                args += ["-c", f"{k}={v}"]
            rc = main(args)
            err = capsys.readouterr().err.strip()
            if error is None:
                assert rc == 0, err
            else:  # the release's own answer, as one line
                assert rc == 1 and err.count("\n") == 0 and err.endswith(error), (err, error)
            mine = state(mine_dir.parent)
            differ = sorted(f for f in set(mine) | set(theirs) if mine.get(f) != theirs.get(f))
            assert not differ, f"phase {n + 1} pass {i + 1}: {differ}"
    assert changed or error is not None, "the release's passes changed nothing: the workload misses its point"
