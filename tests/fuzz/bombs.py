"""Decompression bombs and small-input blowups, built from repeated codec units (cheap to make).

Each builder returns the bytes of one record set.  ``expands_to`` is the decompressed size.
Streams are made of repeated whole units that Kafka's readers accept back to back: gzip members,
zstd frames, xerial snappy chunks, independent lz4 blocks.
"""
from __future__ import annotations

from kafkafmt.compression import gzip as gzip_codec
from kafkafmt.compression import lz4 as lz4_codec
from kafkafmt.compression import snappy as snappy_codec
from kafkafmt.compression import zstd as zstd_codec
from kafkafmt.constants import CompressionType
from kafkafmt.records.default import encode_default_batch
from kafkafmt.records.legacy import encode_legacy_entry

CODECS = ("gzip", "snappy", "lz4", "zstd")
#: the smallest v2 record: length 6, attributes, tsDelta 0, offsetDelta 0, null key, null value, 0 headers
TINY_V2_RECORD = bytes([12, 0, 0, 0, 1, 1, 0])


def _tiny_v1_message() -> bytes:
    return encode_legacy_entry(0, 1, 0, 0, None, None)


def stream(codec: str, unit: bytes, repeat: int, *, magic: int = 2) -> bytes:
    """A ``codec`` stream that decompresses to ``unit * repeat`` (``unit`` <= 32 KiB for snappy/lz4)."""
    if codec == "gzip":
        return gzip_codec.compress(unit, 1) * repeat
    if codec == "zstd":
        return zstd_codec.compress(unit) * repeat
    if codec == "snappy":
        one = snappy_codec.compress(unit)  # header + one chunk
        head, chunk = one[:16], one[16:]
        return head + chunk * repeat
    if codec == "lz4":
        one = lz4_codec.compress(unit, magic)  # header(7) + one block + end mark(4)
        return one[:7] + one[7:-4] * repeat + one[-4:]
    raise ValueError(codec)


def zero_bomb(codec: str, expands_to: int, *, magic: int = 2) -> bytes:
    """A batch (v2) or wrapper (v0/v1) whose payload is ``expands_to`` bytes of zeros."""
    unit = 32 * 1024 if codec in ("snappy", "lz4") else 16 * 1024 * 1024
    payload = stream(codec, b"\0" * unit, -(-expands_to // unit), magic=magic)
    return _wrap(codec, payload, magic, count=1)


def tiny_records(codec: str, count: int, *, magic: int = 2) -> bytes:
    """A batch of ``count`` smallest records (v2) or a wrapper of ``count`` tiny inner messages (v0/v1)."""
    rec = TINY_V2_RECORD if magic == 2 else _tiny_v1_message()
    per_unit = (32 * 1024 if codec in ("snappy", "lz4") else 4 * 1024 * 1024) // len(rec)
    repeat = -(-count // per_unit)
    payload = stream(codec, rec * per_unit, repeat, magic=magic)
    return _wrap(codec, payload, magic, count=per_unit * repeat)


def _wrap(codec: str, payload: bytes, magic: int, *, count: int) -> bytes:
    ctype = CompressionType.from_name(codec)
    if magic == 2:
        return encode_default_batch(base_offset=0, partition_leader_epoch=-1, attributes=int(ctype),
                                    last_offset_delta=max(0, min(count - 1, 2**31 - 1)), base_timestamp=0,
                                    max_timestamp=0, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                    records_count=min(count, 2**31 - 1), records=payload, already_compressed=True)
    return encode_legacy_entry(0, magic, int(ctype), 0, None, payload)


__all__ = ["CODECS", "stream", "zero_bomb", "tiny_records"]
