"""Notebook 01 (format anatomy): build record sets in v0, v1 or v2, and measure per-record overhead.

Everything is built with :class:`kafkafmt.records.MemoryRecordsBuilder` (Kafka's builder rules) and
measured on the bytes it writes; nothing here knows a header size by heart.
"""
from __future__ import annotations

import random

from ..constants import CompressionType, TimestampType
from ..records import MemoryRecordsBuilder

MAGICS = (0, 1, 2)
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
START_MS = 1_700_000_000_000


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
    ts_type = TimestampType.from_name(timestamp_type) if magic > 0 else TimestampType.NO_TIMESTAMP_TYPE
    b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), ts_type, base_offset,
                             log_append_time=START_MS if ts_type == TimestampType.LOG_APPEND_TIME else -1)
    for ts, key, value, headers in records:
        if headers and magic < 2:
            raise ValueError(f"message format v{magic} has no record headers (KIP-82 came with v2)")
        b.append(ts if magic > 0 else -1, key, value, headers if magic >= 2 else ())
    return b.build()


def record_set(magic: int = 2, codec: str = "none", count: int = 2, headers: int = 0, *, value_size: int = 12,
               key_size: int = 4, seed: int = 0) -> bytes:
    """The record set of notebook 01's byte view: ``count`` sample records with ``headers`` headers each."""
    return build(magic, codec, sample_records(count, key_size=key_size, value_size=value_size, seed=seed,
                                              headers=headers))


def payload_bytes(records: list[tuple]) -> int:
    """Key + value bytes of ``records`` (what the application wrote; headers count as overhead)."""
    return sum(len(k or b"") + len(v or b"") for _, k, v, _ in records)


def overhead_row(magic: int, codec: str, n: int, *, key_size: int = 8, value_size: int = 32, seed: int = 0) -> dict:
    """Size of ``n`` records in one record set and the per-record overhead ``(size - payload) / n``.

    A negative overhead means the codec saved more than the format costs.
    """
    recs = sample_records(n, key_size=key_size, value_size=value_size, seed=seed)
    size = len(build(magic, codec, recs))
    payload = payload_bytes(recs)
    return {"magic": magic, "codec": codec, "records": n, "size": size, "payload": payload,
            "overhead_per_record": (size - payload) / n}


def overhead_table(batch_sizes=(1, 2, 5, 10, 20, 50, 100, 200), *, magics=MAGICS, codecs=CODECS, key_size: int = 8,
                   value_size: int = 32, seed: int = 0):
    """A DataFrame of :func:`overhead_row` for every magic × codec × batch size.

    zstd exists for v2 only (KIP-110: ``MemoryRecordsBuilder`` refuses it below magic 2), so its
    v0/v1 rows are left out.
    """
    import pandas as pd
    return pd.DataFrame([overhead_row(m, c, n, key_size=key_size, value_size=value_size, seed=seed)
                         for m in magics for c in codecs if not (c == "zstd" and m < 2) for n in batch_sizes])


def single_record_overhead(magic: int, *, key_size: int = 8, value_size: int = 32) -> int:
    """Bytes a lone uncompressed record costs beyond its key and value in format ``magic``."""
    return int(overhead_row(magic, "none", 1, key_size=key_size, value_size=value_size)["overhead_per_record"])


def v2_break_even(*, key_size: int = 8, value_size: int = 32, max_records: int = 64) -> int | None:
    """The smallest uncompressed batch size at which v2 costs fewer bytes per record than v1.

    v2 pays its batch header once and varint-framed records after it; v1 pays the log overhead
    and the message header on every message (KIP-98's record batch design).
    """
    for n in range(1, max_records + 1):
        v1 = overhead_row(1, "none", n, key_size=key_size, value_size=value_size)["overhead_per_record"]
        v2 = overhead_row(2, "none", n, key_size=key_size, value_size=value_size)["overhead_per_record"]
        if v2 < v1:
            return n
    return None


__all__ = ["sample_records", "build", "record_set", "payload_bytes", "overhead_row", "overhead_table", "single_record_overhead",
           "v2_break_even", "MAGICS", "CODECS"]
