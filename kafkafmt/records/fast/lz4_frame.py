"""Kafka's lz4 frames decoded in compiled code: the frames Kafka writes (``Lz4BlockOutputStream``: FLG
``0x60``, BD ``0x40``, no checksums, independent blocks of at most 64 KiB, see
:mod:`kafkafmt.compression.lz4`), each block an LZ4 block (``LZ4_decompress_safe``).

Each block goes to the very function the reference decoder calls, liblz4's ``LZ4_decompress_safe``, called
from compiled code (the ``lz4`` package's copy of liblz4, the one ``lz4.block.decompress`` runs); where
that library cannot be linked, a compiled decoder stricter than liblz4 takes its place.  Like the other
kernels this one is stricter than the reference, never looser: any other frame descriptor, a block
liblz4 refuses (or, in the stand-in, one near liblz4's limits ``MFLIMIT``, ``LASTLITERALS``), or an
output larger than the room given returns -1, and the caller decodes that frame with
:func:`kafkafmt.compression.lz4.decompress`, whose errors are Kafka's.
"""
from __future__ import annotations

import lz4.block._block as _liblz4_module
import numpy as np

from ...compression.lz4 import BD, BLOCK_SIZE, FLG, LZ4_FRAME_INCOMPRESSIBLE_MASK, MAGIC, header_checksum
from ...layout import LZ4_FRAME_HEADER
from .jit import INTERPRETED, inner

if not INTERPRETED:
    import llvmlite.binding as _llvm
    from numba import types

__all__ = ["lz4_frame_into", "lz4_frame_bound"]

#: the frame descriptor Kafka writes for message format v1/v2, magic and header checksum included
_HC_AT = LZ4_FRAME_HEADER.offset_of("HC")
_DESCRIPTOR = tuple(MAGIC.to_bytes(4, "little")) + (FLG, BD, header_checksum(bytes([FLG, BD])))
_D0, _D1, _D2, _D3, _D4, _D5, _D6 = _DESCRIPTOR
#: liblz4's end-of-block rules (lz4.c): the last 5 bytes are literals, the last match starts 12 bytes before the end
_LASTLITERALS = 5
_MFLIMIT = 12


@inner
def _u32le(src, p):
    return (np.int64(src[p]) | (np.int64(src[p + 1]) << 8) | (np.int64(src[p + 2]) << 16)
            | (np.int64(src[p + 3]) << 24))


@inner
def _length(src, ip, iend, n):
    """A token's 4-bit length ``n``, extended by the bytes after it while they are 255 (the LZ4 block format):
    (length, next position), or (-1, ip) when the block ends first."""
    n = np.int64(n)
    if n == 15:
        while True:
            if ip >= iend:
                return -1, ip
            b = src[ip]
            ip += 1
            n += np.int64(b)
            if b != 255:
                break
    return n, ip


@inner
def _block_into(src, ip, iend, dst, op, oend):
    """One LZ4 block ``src[ip:iend]`` into ``dst[op:oend]``: the end of the output, or -1."""
    start = op
    while True:
        if ip >= iend:
            return -1
        token = src[ip]
        ip += 1
        lit, ip = _length(src, ip, iend, token >> 4)
        if lit < 0 or ip + lit > iend or op + lit > oend:
            return -1
        dst[op:op + lit] = src[ip:ip + lit]
        ip += lit
        op += lit
        if ip == iend:
            return op  # the last sequence: literals only
        if ip > iend - (2 + 1 + _LASTLITERALS) or op > oend - _MFLIMIT:
            return -1  # a match this near the end: liblz4 refuses or decides on rules not mirrored here
        offset = np.int64(src[ip]) | (np.int64(src[ip + 1]) << 8)
        ip += 2
        if offset == 0 or offset > op - start:
            return -1
        mlen, ip = _length(src, ip, iend, token & 15)
        if mlen < 0:
            return -1
        mlen += 4
        if op + mlen > oend - _LASTLITERALS:
            return -1
        if offset >= mlen:
            dst[op:op + mlen] = dst[op - offset:op - offset + mlen]
        else:
            for k in range(mlen):  # byte by byte: the match overlaps what it writes
                dst[op + k] = dst[op - offset + k]
        op += mlen


#: ``int LZ4_decompress_safe(const char* src, char* dst, int compressedSize, int dstCapacity)``
_lz4_decompress_safe = None if INTERPRETED else types.ExternalFunction(
    "LZ4_decompress_safe", types.int32(types.intp, types.intp, types.int32, types.int32))


def _liblz4_linked() -> bool:
    """Whether ``LZ4_decompress_safe`` can be linked into compiled code (the ``lz4`` package's library loaded)."""
    if INTERPRETED:
        return False
    try:
        _llvm.load_library_permanently(_liblz4_module.__file__)
    except RuntimeError:
        return False
    return bool(_llvm.address_of_symbol("LZ4_decompress_safe"))


@inner
def _block_liblz4(src, ip, iend, dst, op, oend):
    """One LZ4 block by liblz4 itself: the end of the output, or -1."""
    n = _lz4_decompress_safe(src.ctypes.data + ip, dst.ctypes.data + op, iend - ip, oend - op)
    return -1 if n < 0 else op + n


def _block_interpreted(src, ip, iend, dst, op, oend):
    """One LZ4 block by liblz4 through the ``lz4`` package (interpreted kernels): the end of the output, or -1."""
    try:
        out = _liblz4_module.decompress(src[ip:iend].tobytes(), uncompressed_size=oend - op)
    except _liblz4_module.LZ4BlockError:
        return -1
    dst[op:op + len(out)] = np.frombuffer(out, np.uint8)
    return op + len(out)


#: the block decoder the frame decoder calls
_block = _block_interpreted if INTERPRETED else _block_liblz4 if _liblz4_linked() else _block_into


@inner
def _blocks_start(src, p, end):
    """Where the blocks of the frame at ``p`` start: after Kafka's frame descriptor, or -1 (any other)."""
    if end - p < _HC_AT + 1 + 4:
        return -1
    if (src[p] != _D0 or src[p + 1] != _D1 or src[p + 2] != _D2 or src[p + 3] != _D3 or src[p + 4] != _D4
            or src[p + 5] != _D5 or src[p + _HC_AT] != _D6):
        return -1
    return p + _HC_AT + 1


@inner
def lz4_frame_bound(src, p, end):
    """The most bytes the frame ``src[p:end]`` can decode to (a stored block its size, a compressed one at most
    ``BLOCK_SIZE``), or -1 when :func:`lz4_frame_into` refuses its framing: the room to give it."""
    p = _blocks_start(src, p, end)
    if p < 0:
        return -1
    total = 0
    while True:
        if end - p < 4:
            return -1
        word = _u32le(src, p)
        p += 4
        if word == 0:
            return total
        size = word & (LZ4_FRAME_INCOMPRESSIBLE_MASK - 1)
        if size > BLOCK_SIZE or end - p < size:
            return -1
        total += size if word & LZ4_FRAME_INCOMPRESSIBLE_MASK else BLOCK_SIZE
        p += size


@inner
def lz4_frame_into(src, p, end, dst, cap):
    """The frame ``src[p:end]`` decoded into ``dst[:cap]``: the decoded length, or -1 (see the module docstring)."""
    p = _blocks_start(src, p, end)
    if p < 0:
        return -1
    q = 0
    while True:
        if end - p < 4:
            return -1
        word = _u32le(src, p)
        p += 4
        if word == 0:
            return q  # the end mark; Kafka's reader ignores what follows
        size = word & (LZ4_FRAME_INCOMPRESSIBLE_MASK - 1)
        if size > BLOCK_SIZE or end - p < size:
            return -1
        if word & LZ4_FRAME_INCOMPRESSIBLE_MASK:
            if q + size > cap:
                return -1
            dst[q:q + size] = src[p:p + size]
            q += size
        else:
            q = _block(src, p, p + size, dst, q, min(cap, q + BLOCK_SIZE))
            if q < 0:
                return -1
        p += size
