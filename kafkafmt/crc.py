"""Checksums: CRC32 (IEEE) for message formats v0/v1, CRC32C (Castagnoli) for v2 batches.

``LegacyRecord`` uses ``java.util.zip.CRC32`` (= ``zlib.crc32``); ``DefaultRecordBatch`` uses
``org.apache.kafka.common.utils.Crc32C`` (the ``crc32c`` package, hardware-accelerated where the
CPU allows).  Both return unsigned 32-bit values, as Kafka stores them.
"""
from __future__ import annotations

import zlib

import crc32c as _crc32c


def crc32(data) -> int:
    """IEEE CRC32 of ``data`` (bytes-like), unsigned."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data) -> int:
    """CRC32C (Castagnoli) of ``data`` (bytes-like), unsigned."""
    return _crc32c.crc32c(data) & 0xFFFFFFFF
