"""The snappy block compressor of snappy 1.1.10 (``snappy::RawCompress``), which snappy-java 1.1.10.x bundles.

Kafka's snappy writer (``SnappyOutputStream``) compresses each chunk with ``Snappy.rawCompress``: the C++
library inside snappy-java.  Which snappy-java a line ships is row ``codec.snappy_java`` of
:mod:`kafkafmt.kafka_lines`; snappy-java 1.1.10.x (Kafka 3.x, 4.x) bundles snappy 1.1.10, whose
``CompressFragment`` probes the first 16 positions after each literal start one by one before it starts
skipping, hashes with ``(0x1e35a7bd * bytes) >> 17`` (the x86_64 build of snappy-java has no CRC32
instruction: checked in its ``libsnappyjava.so``), sizes the table by the input (256 … 16384 entries) and
writes a copy of fewer than 12 bytes at an offset below 2048 with one offset byte only when the match was
found shorter than 12.  Read in snappy.cc of google/snappy 1.1.10 and checked against snappy-java 1.1.10.5's
jar (tests/compression/test_codec_lines.py).  cramjam's encoder writes what snappy 1.1.4 and 1.1.8 write, so
it stays in use for the lines that ship those.
"""
from __future__ import annotations

import numpy as np

from ..kernel_mode import njit  # numba's, or the Python function in an interpreted process

__all__ = ["SNAPPY_OF_SNAPPY_JAVA", "compress_raw"]

_MAGIC = np.uint32(0x1E35A7BD)
_MARGIN = 15  # kInputMarginBytes
_MIN_TABLE = 1 << 8
_MAX_TABLE = 1 << 14
_BLOCK = 1 << 16  # kBlockSize: one fragment


@njit(cache=True, nogil=True)
def _load32(src, p):
    return np.uint32(src[p]) | (np.uint32(src[p + 1]) << 8) | (np.uint32(src[p + 2]) << 16) | \
        (np.uint32(src[p + 3]) << 24)


@njit(cache=True, nogil=True)
def _index(v, table_bits):
    return ((v * _MAGIC) & np.uint32(0xFFFFFFFF)) >> np.uint32(18) & np.uint32((1 << table_bits) - 1)


@njit(cache=True, nogil=True)
def _hash_classic(v, table_bits):
    """``HashBytes`` before 1.1.10: ``(bytes * 0x1e35a7bd) >> (32 - log2(table size))``."""
    return ((v * _MAGIC) & np.uint32(0xFFFFFFFF)) >> np.uint32(32 - table_bits)


@njit(cache=True, nogil=True)
def _literal(out, o, src, start, n):
    m = n - 1
    if m < 60:
        out[o] = m << 2
        o += 1
    else:
        count = 1
        while m >> (8 * count):
            count += 1
        out[o] = (59 + count) << 2
        o += 1
        for i in range(count):
            out[o + i] = (m >> (8 * i)) & 0xFF
        o += count
    out[o:o + n] = src[start:start + n]
    return o + n


@njit(cache=True, nogil=True)
def _copy_at_most_64(out, o, offset, n, short):
    if short and offset < 2048:
        out[o] = 1 + ((offset >> 3) & 0xE0) + ((n - 4) << 2)
        out[o + 1] = offset & 0xFF
        return o + 2
    out[o] = 2 + ((n - 1) << 2)
    out[o + 1] = offset & 0xFF
    out[o + 2] = (offset >> 8) & 0xFF
    return o + 3


@njit(cache=True, nogil=True)
def _copy(out, o, offset, n, short):
    if short:
        return _copy_at_most_64(out, o, offset, n, True)
    while n >= 68:
        o = _copy_at_most_64(out, o, offset, 64, False)
        n -= 64
    if n > 64:
        o = _copy_at_most_64(out, o, offset, 60, False)
        n -= 60
    return _copy_at_most_64(out, o, offset, n, n < 12)


@njit(cache=True, nogil=True)
def _match_end(src, a, b, end):
    while b < end and src[a] == src[b]:
        a += 1
        b += 1
    return b


@njit(cache=True, nogil=True)
def _emit_matches(src, out, o, table, bits, ip, candidate, end, limit):
    """``emit_match``: copies while the next position matches too; returns (ip, o, candidate ok, done)."""
    while True:
        base = ip
        ip = _match_end(src, candidate + 4, ip + 4, end)
        matched = ip - base
        o = _copy(out, o, base - candidate, matched, matched < 12)
        if ip >= limit:
            return ip, o, True
        table[_index(_load32(src, ip - 1), bits)] = ip - 1
        h = _index(_load32(src, ip), bits)
        candidate = table[h]
        table[h] = ip
        if _load32(src, ip) != _load32(src, candidate):
            return ip, o, False


@njit(cache=True, nogil=True)
def _fragment(src, out, bits):
    """``CompressFragment`` of snappy 1.1.10 over ``src`` (at most 64 KiB) into ``out``; returns the size."""
    n = src.shape[0]
    table = np.zeros(1 << bits, np.int64)
    o = 0
    ip = 0
    if n >= _MARGIN:
        limit = n - _MARGIN
        while True:
            next_emit = ip
            ip += 1
            skip = 32
            found = False
            candidate = 0
            if limit - ip >= 16:
                for i in range(16):
                    h = _index(_load32(src, ip + i), bits)
                    candidate = table[h]
                    table[h] = ip + i
                    if _load32(src, candidate) == _load32(src, ip + i):
                        o = _literal(out, o, src, next_emit, i + 1)
                        ip += i
                        found = True
                        break
                if not found:
                    ip += 16
                    skip += 16
            if not found:
                while True:
                    h = _index(_load32(src, ip), bits)
                    step = skip >> 5
                    skip += step
                    if ip + step > limit:
                        ip = next_emit
                        break
                    candidate = table[h]
                    table[h] = ip
                    if _load32(src, ip) == _load32(src, candidate):
                        found = True
                        break
                    ip += step
                if not found:
                    break
                o = _literal(out, o, src, next_emit, ip - next_emit)
            ip, o, done = _emit_matches(src, out, o, table, bits, ip, candidate, n, limit)
            if done:
                break
    if ip < n:
        o = _literal(out, o, src, ip, n - ip)
    return o


@njit(cache=True, nogil=True)
def _classic(src, out, bits, old_skip):
    """``CompressFragment`` of snappy 1.1.3 … 1.1.8 (``old_skip``: the lookups' step grows by one every 32
    misses, ``skip++ >> 5``, as before 1.1.4; else ``skip += skip >> 5``); returns the size."""
    n = src.shape[0]
    table = np.zeros(1 << bits, np.int64)
    o = 0
    next_emit = 0
    ip = 0
    if n >= _MARGIN:
        limit = n - _MARGIN
        ip = 1
        next_h = _hash_classic(_load32(src, ip), bits)
        done = False
        while not done:
            skip = 32
            next_ip = ip
            while True:
                ip = next_ip
                h = next_h
                if old_skip:
                    step = skip >> 5
                    skip += 1
                else:
                    step = skip >> 5
                    skip += step
                next_ip = ip + step
                if next_ip > limit:
                    done = True
                    break
                next_h = _hash_classic(_load32(src, next_ip), bits)
                candidate = table[h]
                table[h] = ip
                if _load32(src, ip) == _load32(src, candidate):
                    break
            if done:
                break
            o = _literal(out, o, src, next_emit, ip - next_emit)
            while True:
                base = ip
                ip = _match_end(src, candidate + 4, ip + 4, n)
                matched = ip - base
                o = _copy(out, o, base - candidate, matched, matched < 12)
                next_emit = ip
                if ip >= limit:
                    done = True
                    break
                table[_hash_classic(_load32(src, ip - 1), bits)] = ip - 1
                h = _hash_classic(_load32(src, ip), bits)
                candidate = table[h]
                table[h] = ip
                if _load32(src, ip) != _load32(src, candidate):
                    break
            if done:
                break
            next_h = _hash_classic(_load32(src, ip + 1), bits)
            ip += 1
    if next_emit < n:
        o = _literal(out, o, src, next_emit, n - next_emit)
    return o


def _table_bits(size: int) -> int:
    """``CalculateTableSize``: the power of two at least ``size``, between 2^8 and 2^14."""
    if size > _MAX_TABLE:
        return 14
    if size < _MIN_TABLE:
        return 8
    return max(8, (size - 1).bit_length())


#: the snappy release inside each snappy-java a Kafka line ships (snappy-java's release notes), as the
#: compressor generation written here: "1.1.3" (the lookups' step grows by one every 32 misses), "1.1.8"
#: (grows by itself / 32; cramjam's bytes), "1.1.10" (the 16 first probes, the new hash)
SNAPPY_OF_SNAPPY_JAVA = {"1.1.1.7": "1.1.3", "1.1.2.6": "1.1.3", "1.1.4": "1.1.8", "1.1.7.1": "1.1.8",
                         "1.1.7.2": "1.1.8", "1.1.8.1": "1.1.8", "1.1.10.5": "1.1.10", "1.1.10.7": "1.1.10"}


def compress_raw(data: bytes | memoryview, release: str = "1.1.10") -> bytes:
    """One raw snappy block of ``data`` as ``RawCompress`` of snappy ``release`` (a value of
    :data:`SNAPPY_OF_SNAPPY_JAVA`) writes it: varint length, then a fragment per 64 KiB."""
    src = np.frombuffer(bytes(data), np.uint8)
    n = src.shape[0]
    head = bytearray()
    v = n
    while v >= 0x80:
        head.append((v & 0x7F) | 0x80)
        v >>= 7
    head.append(v)
    parts = [bytes(head)]
    for start in range(0, n, _BLOCK):
        frag = src[start:start + _BLOCK]
        out = np.empty(32 + frag.shape[0] + frag.shape[0] // 6, np.uint8)
        bits = _table_bits(frag.shape[0])
        size = _fragment(frag, out, bits) if release == "1.1.10" else _classic(frag, out, bits, release == "1.1.3")
        parts.append(out[:size].tobytes())
    return b"".join(parts)
