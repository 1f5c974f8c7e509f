"""Reproducible sample record sets: one small capture per format feature the workbench shows.

Everything is deterministic (fixed timestamps, a seeded RNG), so ``data/samples`` regenerates
byte for byte (compressed samples depend on the codec library versions).
"""
from __future__ import annotations

import random

from ..constants import CompressionType, ControlRecordType, TimestampType
from .builder import build_records, end_txn_marker

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
CT, LAT, NONE_TS = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME, TimestampType.NO_TIMESTAMP_TYPE


#: the message formats: v0, v1 (KIP-32), v2 (KIP-98)
MAGICS = (0, 1, 2)
#: the first timestamp of :func:`sample_records` (2023-11-14T22:13:20Z)
START_MS = T0


def sample_records(n: int, *, key_size: int = 8, value_size: int = 32, seed: int = 0, headers: int = 0,
                   step_ms: int = 5) -> list[tuple]:
    """``n`` reproducible ``(timestamp, key, value, headers)`` tuples: sensor-like text values.

    Values repeat a small vocabulary (like real JSON or CSV payloads), so codecs have something to
    find; keys are ``key-<i>`` padded to ``key_size`` (``key_size=0``: null keys).
    """
    if n < 1:
        raise ValueError("a record set needs at least one record")
    rng = random.Random(seed)
    words = [b"temp", b"humidity", b"pressure", b"sensor", b"ok", b"warn", b"room", b"floor"]
    out = []
    for i in range(n):
        key = None if key_size == 0 else f"key-{i}".encode().ljust(key_size, b"_")[:max(key_size, 1)]
        value = b""
        while len(value) < value_size:
            value += rng.choice(words) + b"=" + str(rng.randint(0, 999)).encode() + b";"
        hdrs = tuple((f"h{j}", f"v{rng.randint(0, 9)}".encode()) for j in range(headers))
        out.append((START_MS + i * step_ms, key, value[:value_size], hdrs))
    return out


def build(magic: int, codec: str, records: list[tuple], *, timestamp_type: str = "CreateTime",
          base_offset: int = 0) -> bytes:
    """One record set (a v2 batch, or a v0/v1 message set / compressed wrapper) from ``records``."""
    if magic not in MAGICS:
        raise ValueError(f"magic must be 0, 1 or 2 (got {magic})")
    if magic < 2 and any(headers for *_, headers in records):
        raise ValueError(f"message format v{magic} has no record headers (KIP-82 came with v2)")
    # a v0 message has no timestamp (KIP-32 came with v1)
    ts_type = TimestampType.from_name(timestamp_type) if magic > 0 else TimestampType.NO_TIMESTAMP_TYPE
    rows = records if magic > 0 else [(-1, key, value, headers) for _, key, value, headers in records]
    return build_records(rows, magic=magic, compression=codec, timestamp_type=ts_type, base_offset=base_offset,
                         log_append_time=START_MS if ts_type == TimestampType.LOG_APPEND_TIME else -1)


def _words(rng: random.Random, n: int) -> list[bytes]:
    vocab = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))).encode() for _ in range(n)]


def _build(magic, codec, ts_type, base_offset, rows, **kw) -> bytes:
    return build_records(rows, magic=magic, compression=codec, timestamp_type=ts_type, base_offset=base_offset, **kw)


def sample_record_sets(seed: int = 7) -> dict[str, tuple[str, bytes]]:
    """``{file name: (description, bytes)}`` for every sample."""
    rng = random.Random(seed)
    vals = _words(rng, 64)
    skewed = [T0 + i * 1000 + rng.randint(-5000, 5000) for i in range(64)]  # producer clock skew
    out: dict[str, tuple[str, bytes]] = {}

    def add(name, desc, data):
        out[name] = (desc, data)

    add("v0-uncompressed.bin", "message format v0: three plain messages, no timestamps",
        _build(0, CompressionType.NONE, NONE_TS, 0, [(-1, b"k%d" % i, vals[i]) for i in range(3)]))
    add("v1-uncompressed.bin", "message format v1 (KIP-32): CreateTime timestamps, a null key",
        _build(1, CompressionType.NONE, CT, 0, [(skewed[i], None if i == 1 else b"k%d" % i, vals[i]) for i in range(3)]))
    add("v1-gzip-wrapper.bin", "v1 gzip wrapper (KIP-31): relative inner offsets, wrapper offset = last, ts = max",
        _build(1, CompressionType.GZIP, CT, 100, [(skewed[i], b"k%d" % i, vals[i]) for i in range(5)]))
    add("v0-lz4-wrapper.bin", "v0 lz4 wrapper: absolute inner offsets, the KAFKA-3160 frame checksum",
        _build(0, CompressionType.LZ4, NONE_TS, 10, [(-1, None, vals[i]) for i in range(4)]))
    add("v1-lat-snappy.bin", "v1 snappy wrapper with LogAppendTime (xerial framing)",
        _build(1, CompressionType.SNAPPY, LAT, 0, [(skewed[i], None, vals[i]) for i in range(4)],
               log_append_time=T0 + 99_000))
    add("v2-headers.bin", "v2 batch (KIP-98) with record headers (KIP-82)",
        _build(2, CompressionType.NONE, CT, 0,
               [(skewed[i], b"user-%d" % (i % 3), vals[i], [("trace", b"%08x" % rng.getrandbits(32)), ("empty", None)])
                for i in range(4)]))
    add("v2-zstd.bin", "v2 batch compressed with zstd (KIP-110)",
        _build(2, CompressionType.ZSTD, CT, 0, [(skewed[i], None, vals[i]) for i in range(20)]))
    add("v2-idempotent.bin", "v2 idempotent batch: producer id, epoch, base sequence",
        _build(2, CompressionType.LZ4, CT, 0, [(skewed[i], None, vals[i]) for i in range(5)],
               producer_id=1001, producer_epoch=0, base_sequence=0))
    txn = _build(2, CompressionType.NONE, CT, 0, [(T0 + i, b"order", vals[i]) for i in range(3)],
                 producer_id=2002, producer_epoch=1, base_sequence=0, is_transactional=True)
    marker = end_txn_marker(base_offset=3, timestamp=T0 + 10, partition_leader_epoch=0, producer_id=2002,
                            producer_epoch=1, control_type=ControlRecordType.COMMIT, coordinator_epoch=4)
    add("v2-transaction-commit.bin", "a transactional v2 batch followed by its COMMIT control batch", txn + marker)
    mixed = (_build(0, CompressionType.NONE, NONE_TS, 0, [(-1, None, vals[0])])
             + _build(1, CompressionType.GZIP, CT, 1, [(skewed[1], None, vals[1]), (skewed[2], None, vals[2])])
             + _build(2, CompressionType.NONE, CT, 3, [(skewed[3], None, vals[3])]))
    add("mixed-magics.bin", "v0, v1 (gzip) and v2 batches in one buffer, as after a message-format upgrade", mixed)
    add("kip228-negative-timestamps.bin",
        "EXPERIMENTAL KIP-228 (never adopted): isTimestampExtended bit, negative timestamps, Long.MIN_VALUE = none",
        _build(2, CompressionType.NONE, CT, 0, [(-86_400_000, None, b"1969-12-31"), (-1, None, b"-1 ms"),
                                                (-(2**63), None, b"no timestamp")], timestamp_extended=True))
    return out


__all__ = ["sample_record_sets"]
