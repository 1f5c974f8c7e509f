"""rewrite_as_v2 (the 4.x cleaner's v0/v1 → v2 rewrite, KAFKA-13093) against Kafka 4.4.0's own
``MemoryRecords.filterTo`` (conformance/legacy-to-v2-4.4/FilterTo44.java, run on 4.4.0's jars)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ci_mode import skip_or_fail
from kafkafmt.constants import NO_PARTITION_LEADER_EPOCH, CompressionType, TimestampType
from kafkafmt.errors import IllegalArgumentError
from kafkafmt.log.cleaner.legacy_to_v2 import rewrite_as_v2
from kafkafmt.records import MemoryRecords, build_records

ROOT = Path(__file__).resolve().parents[2]
LIB44 = ROOT / "conformance" / ".cache" / "lib-4.4"
DRIVER = ROOT / "conformance" / "legacy-to-v2-4.4" / "FilterTo44.java"
T = 1700000000000
NOW, DELETE_RETENTION = T + 5000, 86400000  # the driver's cleaner clock and delete.retention.ms
HORIZON = NOW + DELETE_RETENTION


def _kafka44(cases: list[tuple[bytes, list[int]]]) -> list[bytes]:
    """What Kafka 4.4.0's filterTo writes for each (record set, offsets to drop)."""
    java = os.environ.get("KAFKA_ORACLE_JAVA") or "java"
    if not (LIB44 / "kafka-clients-4.4.0.jar").is_file() or shutil.which(java) is None:
        skip_or_fail("Kafka 4.4.0 jars not fetched: run `make -C conformance jars-4.4` (Java 17 + Maven)")
    lines = "".join(f"{d.hex()} {','.join(map(str, drop))}\n".replace(" \n", "\n") for d, drop in cases)
    out = subprocess.run([java, "-Xmx256m", "-cp", f"{LIB44}/*", str(DRIVER), str(NOW), str(DELETE_RETENTION)],
                         input=lines, capture_output=True, text=True, timeout=300, check=True).stdout.split()
    assert len(out) == len(cases), out
    assert not any(o.startswith("ERROR") for o in out), out
    return [bytes.fromhex(o) for o in out]


def _ours(data: bytes, drop: list[int]) -> bytes:
    """The cleaner's output with rewrite_as_v2 for v0/v1 entries (v2 batches: copied when nothing is dropped)."""
    out = []
    for b in MemoryRecords(data).batches():
        kept = [r for r in b.records() if r.offset not in drop]
        if b.magic >= 2:
            assert len(kept) == b.count, "the driver's v2 cases drop nothing"
            out.append(bytes(b.raw))
        else:
            out.append(rewrite_as_v2(b, kept, delete_horizon_ms=HORIZON))
    return b"".join(out)


def _recs(n: int, ts, *, start: int = 0, null_key_every: int = 0):
    return [{"offset": start + i, "timestamp": ts(i), "key": None if null_key_every and i % null_key_every == 0
             else b"key-%d" % i, "value": None if i == 2 else b"value-%d" % i * (i % 3 + 1)} for i in range(n)]


def _cases() -> dict[str, tuple[bytes, list[int]]]:
    v0 = lambda n, codec="none", start=0: build_records(_recs(n, lambda i: -1, start=start), magic=0,  # noqa: E731
                                                        compression=codec, base_offset=start)
    v1 = lambda n, codec="none", start=0, ts_type=TimestampType.CREATE_TIME: build_records(  # noqa: E731
        _recs(n, lambda i: T + 7 * i - (40 if i == 1 else 0), start=start, null_key_every=4), magic=1,
        compression=codec, base_offset=start, timestamp_type=ts_type,
        log_append_time=T + 999 if ts_type == TimestampType.LOG_APPEND_TIME else -1)
    plain_v0 = b"".join(v0(1, start=i) for i in range(3))
    plain_v1 = b"".join(v1(1, start=i) for i in range(3))
    return {
        "v0 plain messages": (plain_v0, []),
        "v1 plain messages, one dropped": (plain_v1, [1]),
        "v0 gzip wrapper": (v0(5, "gzip"), []),
        "v0 snappy wrapper, two dropped": (v0(6, "snappy", start=10), [11, 14]),
        "v0 lz4 wrapper": (v0(4, "lz4"), []),
        "v1 gzip wrapper": (v1(7, "gzip", start=100), []),
        "v1 lz4 wrapper, first dropped": (v1(5, "lz4", start=3), [3]),
        "v1 LogAppendTime gzip wrapper": (v1(4, "gzip", ts_type=TimestampType.LOG_APPEND_TIME), []),
        "v1 LogAppendTime plain": (v1(1, ts_type=TimestampType.LOG_APPEND_TIME), []),
        "v0, v1 and a v2 batch": (v0(2, "gzip") + v1(1, start=2) +
                                  build_records(_recs(2, lambda i: T + i, start=3), base_offset=3), []),  # v2: no tombstone
    }


def test_rewrite_as_v2_is_what_kafka_44_writes():
    cases = _cases()
    theirs = _kafka44(list(cases.values()))
    for (name, (data, drop)), expected in zip(cases.items(), theirs):
        assert _ours(data, drop) == expected, name


def _fields(b) -> tuple:
    """A batch's header fields but length and CRC, and its records as decoded (the compressed bytes aside)."""
    head = (b.magic, b.base_offset, b.last_offset, b.partition_leader_epoch, b.attributes, b.base_timestamp,
            b.max_timestamp, b.producer_id, b.producer_epoch, b.base_sequence, b.count)
    return head, [(r.offset, r.timestamp, r.key, r.value, r.headers, r.attributes, r.offset_delta,
                   r.timestamp_delta) for r in b.records()]


def test_the_mixed_sample_segments_as_kafka_44_cleans_them(mixed):
    """Whole generated segments: every batch as Kafka 4.4.0 writes it; a compressed batch byte for byte
    where the codec chose the same matches as Java's (snappy-java may find a match cramjam does not),
    else the same header and records."""
    segs = [p for p in sorted(mixed.glob("accounts-*/*.log")) + sorted(mixed.glob("clicks-0/*.log"))
            if any(b.magic < 2 for b in MemoryRecords(p.read_bytes()).batches())]
    assert len(segs) >= 4
    theirs = _kafka44([(p.read_bytes(), []) for p in segs])
    same = compressed = 0
    for p, expected in zip(segs, theirs):
        ours = list(MemoryRecords(_ours(p.read_bytes(), [])).batches())
        exp = list(MemoryRecords(expected).batches())
        assert len(ours) == len(exp), p
        for a, b in zip(ours, exp):
            if bytes(a.raw) == bytes(b.raw):
                same += 1
                compressed += a.is_compressed
                continue
            assert a.is_compressed, (p, a)
            assert _fields(a) == _fields(b), (p, a)
    assert same > 0.95 * sum(1 for _ in MemoryRecords(b"".join(theirs)).batches())
    assert compressed > 100  # gzip, snappy wrappers rewritten byte for byte


def test_the_rules_kafka_13093_names():
    data, _ = _cases()["v0 gzip wrapper"]
    (wrapper,) = MemoryRecords(data).batches()
    (b,) = MemoryRecords(rewrite_as_v2(wrapper, delete_horizon_ms=HORIZON)).batches()
    assert (b.magic, b.compression, b.timestamp_type) == (2, CompressionType.GZIP, TimestampType.CREATE_TIME)
    assert b.partition_leader_epoch == NO_PARTITION_LEADER_EPOCH and b.producer_id == -1
    assert b.delete_horizon_ms == HORIZON  # it keeps a tombstone (offset 2)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in b.records()] == \
        [(r.offset, -1, r.key, r.value) for r in wrapper.records()]
    plain, _ = _cases()["v1 plain messages, one dropped"]
    rewritten = [rewrite_as_v2(e, delete_horizon_ms=HORIZON) for e in MemoryRecords(plain).batches()]
    assert [len(list(MemoryRecords(r).batches())) for r in rewritten] == [1, 1, 1]
    assert all(next(MemoryRecords(r).batches()).delete_horizon_ms is None for r in rewritten)  # no tombstone
    assert rewrite_as_v2(next(MemoryRecords(plain).batches()), [], delete_horizon_ms=HORIZON) == b""
    with pytest.raises(IllegalArgumentError):
        rewrite_as_v2(next(MemoryRecords(build_records([(T, b"k", b"v")])).batches()), delete_horizon_ms=HORIZON)
