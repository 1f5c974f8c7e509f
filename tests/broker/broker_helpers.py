"""Crafting helpers for the broker tests: record sets with exactly the (possibly broken) fields a case needs.

Valid record sets come from :class:`kafkafmt.records.MemoryRecordsBuilder`; broken ones (wrong
counts, holes in offsets, bad inner CRCs, producer LogAppendTime bits...) are assembled from the
record/batch encoders so that every field is under the test's control.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from kafkafmt import compression
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from kafkafmt.records.default import batch_attributes, encode_default_batch, encode_default_record
from kafkafmt.records.legacy import encode_legacy_entry, legacy_attributes

NOW = 1_700_000_000_000
CT = TimestampType.CREATE_TIME
LAT = TimestampType.LOG_APPEND_TIME


@dataclass
class R:
    """One record to write: timestamp, key, value, headers."""

    ts: int
    key: bytes | None = b"k"
    value: bytes | None = b"v"
    headers: tuple = ()


def codec(c) -> CompressionType:
    return CompressionType.from_name(c) if isinstance(c, str) else CompressionType(c)


def build(recs, *, magic=2, compression_="none", ts_type=CT, base_offset=0, log_append_time=-1, offsets=None,
          **kw) -> bytes:
    """A valid record set written by kafkafmt's MemoryRecordsBuilder (= Kafka's builder)."""
    b = MemoryRecordsBuilder(magic, codec(compression_), ts_type, base_offset, log_append_time=log_append_time, **kw)
    for i, r in enumerate(recs):
        off = base_offset + i if offsets is None else offsets[i]
        b.append_with_offset(off, r.ts, r.key, r.value, r.headers)
    return b.build()


def v2(recs, *, compression_="none", base_offset=0, deltas=None, last_offset_delta=None, count=None,
       ts_type=CT, max_ts=None, base_ts=None, pid=-1, epoch=-1, seq=-1, txn=False, control=False, ple=-1) -> bytes:
    """A hand-assembled v2 batch: every header field can be set independently of the records."""
    deltas = list(range(len(recs))) if deltas is None else list(deltas)
    if base_ts is None:
        base_ts = recs[0].ts if recs else -1
    body = b"".join(encode_default_record(d, r.ts - base_ts, r.key, r.value, r.headers) for d, r in zip(deltas, recs))
    attrs = batch_attributes(codec(compression_), ts_type, transactional=txn, control=control)
    if max_ts is None:
        max_ts = max((r.ts for r in recs), default=-1)
    return encode_default_batch(
        base_offset=base_offset, partition_leader_epoch=ple, attributes=attrs,
        last_offset_delta=(deltas[-1] if deltas else 0) if last_offset_delta is None else last_offset_delta,
        base_timestamp=base_ts, max_timestamp=max_ts, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
        records_count=len(recs) if count is None else count, records=body)


def legacy_wrapper(inner: list[bytes], *, magic=1, compression_="gzip", wrapper_offset=None, ts=None,
                   ts_type=CT) -> bytes:
    """A v0/v1 compressed wrapper around already-encoded inner entries (offsets as given)."""
    data = b"".join(inner)
    c = codec(compression_)
    payload = compression.compress(c, data, magic=magic)
    if wrapper_offset is None:
        wrapper_offset = struct.unpack_from(">q", inner[-1], 0)[0]
    if ts is None:
        ts = -1
        for e in inner:
            if e[16] == 1:
                ts = max(ts, struct.unpack_from(">q", e, 18)[0])
    return encode_legacy_entry(wrapper_offset, magic, legacy_attributes(magic, c, ts_type), ts, None, payload)


def legacy_msg(offset, ts, key=b"k", value=b"v", *, magic=1, ts_type=CT, crc=None, attributes=None) -> bytes:
    """One v0/v1 log entry (``crc`` overrides the computed CRC32, to corrupt it)."""
    attrs = legacy_attributes(magic, CompressionType.NONE, ts_type) if attributes is None else attributes
    return encode_legacy_entry(offset, magic, attrs, ts, key, value, crc=crc)


def read(data: bytes):
    """[(offset, timestamp, key, value, headers)] as a modern reader sees ``data``."""
    return [(r.offset, r.timestamp, r.key, r.value, tuple((h.key, h.value) for h in r.headers))
            for r in MemoryRecords(data).records()]


def batches(data: bytes):
    return list(MemoryRecords(data).batches())


def source_compression(data: bytes) -> CompressionType:
    """The ``sourceCompression`` a Kafka ``LogValidator`` is given for ``data``: the codec of its last compressed
    batch, ``NONE`` when none is (as ``UnifiedLog.analyzeAndValidateRecords`` sets it)."""
    src = CompressionType.NONE
    for b in MemoryRecords(data).batches():
        if b.compression != CompressionType.NONE:
            src = b.compression
    return src
