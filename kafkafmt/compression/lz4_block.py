"""LZ4's fast block compressor as each liblz4 release wrote it: the blocks of a Kafka line's lz4-java.

Kafka's lz4 writer (``KafkaLZ4BlockOutputStream``, later ``Lz4BlockOutputStream``) compresses each block
of at most 64 KiB with ``LZ4Factory.fastestInstance().fastCompressor()``: on x86_64 Linux the JNI binding,
i.e. the liblz4 that lz4-java bundles (``LZ4_compress_limitedOutput``, later ``LZ4_compress_default``).
Which lz4-java a line ships is row ``codec.lz4_java`` of :mod:`kafkafmt.kafka_lines`; which liblz4 each
lz4-java bundles is :data:`LIBLZ4_OF_LZ4_JAVA` (lz4-java's CHANGES.md; lz4-java 1.4 and 1.4.1 kept r123's
linux/amd64 library, byte for byte the one of 1.3.0).

A block of at most 64 KiB + 10 bytes always takes liblz4's ``byU16`` path (``LZ4_64Klimit``): a 2^13-entry
hash table of 16-bit positions, ``hash = (read32(p) * 2654435761) >> 19``.  The releases kafkafmt models
differ in two places of ``LZ4_compress_generic``'s match search only (read in lz4.c of r100, r123, 1.8.3,
1.9.2 and 1.10.0 and checked against the jars, tests/compression/test_lz4_releases.py):

* how fast the search skips ahead when it finds nothing: move ``k`` of a search advances
  ``max(1, (skip_base + k) >> 6)`` bytes; r100 (``lz4_encoder.h``) counts ``findMatchAttempts`` from
  ``(1 << SKIPSTRENGTH) + 3`` and takes the step before moving (``skip_base`` 67), r123 onwards start
  ``searchMatchNb`` at ``1 << LZ4_skipTrigger`` and take the step after (63);
* where the search gives up: a candidate whose next position lies past ``iend - MFLIMIT`` (12) ends it
  before liblz4 1.8.3, past ``iend - MFLIMIT + 1`` (``mflimitPlusOne``) from 1.8.3 on, so the newer
  release can still find a match starting one byte later.

Everything else (the table, the catch-up, the match length up to ``iend - LASTLITERALS``, the
"test next position" after a match, the sequence encoding) is the same in all of them.  liblz4 1.8.3 and
later are what cramjam's and the ``lz4`` package's liblz4 write; :func:`compress_block` is used for the
older ones (:data:`RELEASES`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernel_mode import njit  # numba's, or the Python function in an interpreted process

__all__ = ["LIBLZ4_OF_LZ4_JAVA", "OWN", "RELEASES", "FastCompressor", "compress_block", "fast_compressor"]

#: the liblz4 inside each lz4-java a Kafka line ships, its linux/amd64 JNI library (lz4-java CHANGES.md;
#: at.yawk.lz4 1.10.1 and 1.11.2: liblz4 1.10.0)
LIBLZ4_OF_LZ4_JAVA = {"1.2.0": "r100", "1.3.0": "r123", "1.4": "r123", "1.4.1": "r123", "1.5.0": "1.8.3",
                      "1.7.1": "1.9.2", "1.10.1": "1.10.0", "1.11.2": "1.10.0"}


@dataclass(frozen=True)
class FastCompressor:
    """The two knobs of ``LZ4_compress_generic``'s byU16 search that differ between liblz4 releases."""

    release: str
    #: move ``k`` of a search advances ``max(1, (skip_base + k) >> 6)`` bytes
    skip_base: int
    #: the search ends when the next candidate lies past ``iend - 12 + last_slack``
    last_slack: int


#: the liblz4 releases whose fast compressor kafkafmt writes itself, by the value of LIBLZ4_OF_LZ4_JAVA;
#: the newer ones (1.8.3 …) are the libraries' own (cramjam, lz4)
RELEASES = {
    "r100": FastCompressor("r100", 67, 0),
    "r123": FastCompressor("r123", 63, 0),
    "1.8.3": FastCompressor("1.8.3", 63, 1),
}

#: the releases whose blocks this module writes (the newer ones: the libraries' own liblz4, the same bytes)
OWN = ("r100", "r123")


def fast_compressor(lz4_java: str) -> FastCompressor:
    """The fast compressor of lz4-java ``lz4_java`` (a ``codec.lz4_java`` value); 1.8.3's for any newer."""
    liblz4 = LIBLZ4_OF_LZ4_JAVA[lz4_java]
    return RELEASES.get(liblz4, RELEASES["1.8.3"])


_MINMATCH = 4
_LASTLITERALS = 5
_MFLIMIT = 12
_HASH_SHIFT = 32 - 13  # byU16: LZ4_HASHLOG + 1 = 13 bits
_U16_LIMIT = 65536 + _MFLIMIT - 1  # LZ4_64Klimit: the byU16 path takes inputs below it


@njit(cache=True, nogil=True)
def _read32(src, p):
    return np.uint32(src[p]) | (np.uint32(src[p + 1]) << 8) | (np.uint32(src[p + 2]) << 16) | \
        (np.uint32(src[p + 3]) << 24)


@njit(cache=True, nogil=True)
def _hash(src, p):
    return ((_read32(src, p) * np.uint32(2654435761)) & np.uint32(0xFFFFFFFF)) >> _HASH_SHIFT


@njit(cache=True, nogil=True)
def _length(out, o, n):
    """The 255-run continuation of a literal or match length (n already has its nibble's 15 taken off)."""
    while n >= 255:
        out[o] = 255
        o += 1
        n -= 255
    out[o] = n
    return o + 1


@njit(cache=True, nogil=True)
def _literals(out, o, src, anchor, ip):
    """A sequence's token and literals (``ip - anchor`` bytes from ``anchor``); returns (token, o)."""
    lit = ip - anchor
    token = o
    o += 1
    if lit >= 15:
        out[token] = 15 << 4
        o = _length(out, o, lit - 15)
    else:
        out[token] = lit << 4
    out[o:o + lit] = src[anchor:ip]
    return token, o + lit


@njit(cache=True, nogil=True)
def _match(out, o, token, src, ip, ref, matchlimit):
    """A sequence's offset and match length (``LZ4_count`` up to ``matchlimit``); returns (ip after it, o)."""
    off = ip - ref
    out[o] = off & 0xFF
    out[o + 1] = off >> 8
    o += 2
    p = ip + _MINMATCH
    q = ref + _MINMATCH
    while p < matchlimit and src[p] == src[q]:
        p += 1
        q += 1
    ml = p - ip - _MINMATCH
    if ml >= 15:
        out[token] += 15
        o = _length(out, o, ml - 15)
    else:
        out[token] += ml
    return p, o


@njit(cache=True, nogil=True)
def _search(src, table, ip, forward_h, skip_base, search_end):
    """``LZ4_compress_generic``'s "find a match" loop from ``ip``: (ip, ref, next hash), ip -1 past the end."""
    forward_ip = ip
    k = 0
    while True:
        h = forward_h
        ip = forward_ip
        step = max(1, (skip_base + k) >> 6)
        k += 1
        forward_ip = ip + step
        if forward_ip > search_end:
            return -1, 0, 0
        ref = table[h]
        forward_h = _hash(src, forward_ip)
        table[h] = ip
        if _read32(src, ref) == _read32(src, ip):
            return ip, ref, forward_h


@njit(cache=True, nogil=True)
def _fast_u16(src, out, skip_base, last_slack):
    """``LZ4_compress_generic(…, byU16, noDict, noDictIssue)`` of ``src`` into ``out``; returns the size."""
    iend = src.shape[0]
    table = np.zeros(1 << 13, np.int64)
    mflimit = iend - _MFLIMIT
    matchlimit = iend - _LASTLITERALS
    anchor = 0
    o = 0
    if iend >= _MFLIMIT + 1:  # LZ4_minLength: shorter inputs are all literals
        table[_hash(src, 0)] = 0
        ip = 1
        forward_h = _hash(src, ip)
        while True:
            ip, ref, forward_h = _search(src, table, ip, forward_h, skip_base, mflimit + last_slack)
            if ip < 0:
                break
            while ip > anchor and ref > 0 and src[ip - 1] == src[ref - 1]:  # catch up
                ip -= 1
                ref -= 1
            token, o = _literals(out, o, src, anchor, ip)
            while True:  # _next_match
                ip, o = _match(out, o, token, src, ip, ref, matchlimit)
                anchor = ip
                if ip > mflimit:  # test end of chunk
                    break
                table[_hash(src, ip - 2)] = ip - 2  # fill table
                h = _hash(src, ip)  # test next position
                ref = table[h]
                table[h] = ip
                if _read32(src, ref) != _read32(src, ip):
                    break
                token = o
                out[token] = 0
                o += 1
            if ip > mflimit:
                break
            ip += 1
            forward_h = _hash(src, ip)
    # last literals
    token, o = _literals(out, o, src, anchor, iend)
    return o


def compress_block(data: bytes | memoryview, compressor: FastCompressor) -> bytes:
    """One LZ4 block of ``data`` (at most 64 KiB + 10 bytes) as ``compressor``'s liblz4 release writes it."""
    src = np.frombuffer(bytes(data), np.uint8)
    if src.shape[0] >= _U16_LIMIT:
        raise ValueError(f"an LZ4 block of {src.shape[0]} bytes is past the byU16 path (at most {_U16_LIMIT - 1})")
    out = np.empty(src.shape[0] + src.shape[0] // 255 + 16, np.uint8)  # LZ4_compressBound
    return out[:_fast_u16(src, out, compressor.skip_base, compressor.last_slack)].tobytes()
