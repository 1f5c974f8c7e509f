"""The cleaner's bulk v2 read (kafkafmt.log.cleaner_scan) against its reference decoder and builder.

``scan_v2`` must see each record's offset, key and value presence as ``RecordBatch.records()`` does, and
``rebuild_v2`` must write the bytes :func:`~kafkafmt.log.cleaner_filter.rebuild_batch` writes (the
builder checked against Kafka's cleaner in test_log_cleaner_vs_kafka.py) for any retained subset, with
or without a delete horizon, for every codec and both timestamp types; where it cannot (headers) it
says so and the reference runs.
"""
from __future__ import annotations

import hashlib
import random

import pytest

from kafkafmt.errors import KafkaFmtError
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.log.cleaner_filter import rebuild_batch
from kafkafmt.log.cleaner_scan import R_HCOUNT, as_array, digests, rebuild_legacy, rebuild_v2, scan_legacy, scan_v2
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder


def _batch(rng: random.Random, codec: str, ts_type: TimestampType, headers: bool = False, pid: int = -1) -> bytes:
    base = rng.randrange(0, 10**6)
    b = MemoryRecordsBuilder(2, CompressionType.from_name(codec), ts_type, base, partition_leader_epoch=3,
                             log_append_time=1_700_000_009_999 if ts_type == TimestampType.LOG_APPEND_TIME else -1,
                             producer_id=pid, producer_epoch=0 if pid >= 0 else -1, base_sequence=7 if pid >= 0 else -1)
    off = base
    for j in range(rng.randrange(1, 30)):
        off += rng.randrange(1, 3)  # gaps, as a cleaned batch has
        ts = 1_700_000_000_000 + rng.randrange(-5000, 5000)  # not in order: the first is not the smallest
        key = None if rng.random() < 0.05 else b"k%d" % rng.randrange(1000) * rng.randrange(1, 40)
        value = None if rng.random() < 0.2 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
        hdrs = [("h", b"x")] if headers and rng.random() < 0.5 else []
        b.append_with_offset(off, ts, key, value, hdrs)
    return b.build()


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4", "zstd"])
@pytest.mark.parametrize("ts_type", [TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])
def test_rebuild_v2_equals_the_builder(codec, ts_type):
    rng = random.Random(hash((codec, int(ts_type))) & 0xFFFF)
    for n in range(40):
        data = _batch(rng, codec, ts_type, pid=7 if n % 3 == 0 else -1)
        (b,) = MemoryRecords(data).batches()
        scan = scan_v2(b, as_array(data), 1 << 30)
        assert scan is not None
        records = list(b.records())
        assert scan.offsets == [r.offset for r in records]
        assert digests(scan) == [None if r.key is None else hashlib.md5(r.key).digest()
                                 for r in records]
        assert [v >= 0 for v in scan.vlen] == [r.value is not None for r in records]
        for _ in range(5):
            keep = sorted(rng.sample(range(len(records)), rng.randrange(1, len(records) + 1)))
            horizon = rng.choice([None, 1_700_000_100_000])
            want = rebuild_batch(b, [records[i] for i in keep], horizon)
            assert rebuild_v2(b, scan, keep, horizon) == want


def test_headers_and_odd_batches_go_to_the_reference():
    rng = random.Random(3)
    data = _batch(rng, "none", TimestampType.CREATE_TIME, headers=True)
    (b,) = MemoryRecords(data).batches()
    scan = scan_v2(b, as_array(data), 1 << 30)
    with_headers = [i for i, h in enumerate(scan.rows[R_HCOUNT].tolist()) if h]
    assert with_headers and rebuild_v2(b, scan, with_headers, None) is None
    bad = bytearray(data)
    bad[57:61] = (b.count + 1).to_bytes(4, "big")  # recordsCount one too many: the reference raises
    (b,) = MemoryRecords(bytes(bad)).batches()
    with pytest.raises(KafkaFmtError):
        list(b.records())
    assert scan_v2(b, as_array(bytes(bad)), 1 << 30) is None


@pytest.mark.parametrize("magic,codec,ts_type", [(0, "gzip", TimestampType.CREATE_TIME), (1, "gzip", TimestampType.CREATE_TIME),
                                                 (1, "lz4", TimestampType.LOG_APPEND_TIME),
                                                 (1, "snappy", TimestampType.CREATE_TIME)])
def test_rebuild_legacy_equals_the_builder(magic, codec, ts_type):
    rng = random.Random(magic * 10 + len(codec))
    for _ in range(30):
        base = rng.randrange(0, 10**6)
        lat = 1_700_000_009_999 if ts_type == TimestampType.LOG_APPEND_TIME else -1
        b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), ts_type, base, log_append_time=lat)
        off = base
        for _ in range(rng.randrange(1, 30)):
            off += rng.randrange(1, 3)
            key = None if rng.random() < 0.05 else b"k%d" % rng.randrange(1000)
            value = None if rng.random() < 0.2 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
            b.append_with_offset(off, 1_700_000_000_000 + rng.randrange(-5000, 5000), key, value)
        data = b.build()
        (batch,) = MemoryRecords(data).batches()
        scan = scan_legacy(batch, 1 << 30)
        records = list(batch.records())
        assert scan.offsets == [r.offset for r in records]
        assert [v >= 0 for v in scan.vlen] == [r.value is not None for r in records]
        for _ in range(5):
            keep = sorted(rng.sample(range(len(records)), rng.randrange(1, len(records) + 1)))
            assert rebuild_legacy(batch, scan, keep) == rebuild_batch(batch, [records[i] for i in keep], None)


def test_md5_kernel_equals_hashlib():
    """The offset map's digests (``SkimpyOffsetMap`` hashes keys with MD5) at every padding boundary."""
    import numpy as np
    from kafkafmt.log.cleaner_scan import md5_digests
    rng = random.Random(5)
    keys = [bytes(rng.randrange(256) for _ in range(n)) for n in list(range(0, 140)) + [1000, 4096]]
    buf = b"".join(keys)
    pos = [sum(len(k) for k in keys[:i]) for i in range(len(keys))]
    got = md5_digests(np.frombuffer(buf, np.uint8), pos + [0], [len(k) for k in keys] + [-1])
    assert got == [hashlib.md5(k).digest() for k in keys] + [None]
