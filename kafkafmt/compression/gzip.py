"""gzip as Kafka writes and reads it.

Writer: ``org.apache.kafka.common.compress.GzipCompression`` wraps ``GzipOutputStream``, a
``java.util.zip.GZIPOutputStream``: one member, header ``1f 8b 08 00 00000000 00 ff`` (no FNAME,
MTIME 0, XFL 0, OS 0xff as written by JDK 16+), a raw deflate body (zlib, default level -1 = 6,
memLevel 8, default strategy), then CRC32 and ISIZE, both little-endian.

Reader: ``java.util.zip.GZIPInputStream(in, 8 * 1024)`` (``GzipCompression.wrapForInput``).  It
accepts concatenated members, verifies every trailer, and after a trailer silently stops at
anything that does not parse as another gzip header.  Like the JDK it reads the member body
through an 8 KiB input buffer, and that buffer decides when the next member is looked for
(``GZIPInputStream.readTrailer``: more input in the stream, or more than 26 bytes left in the
buffer); this module replays the same buffering so the same inputs are accepted.

Only the framing is written here.  Deflate is the stdlib ``zlib`` (the JDK's own zlib: output byte for
byte as Kafka writes it), except the one-member fast path of :func:`decompress`, which inflates with
zlib-ng (``zlib_ng``, a fork of zlib's inflate with the same checks, about a third faster); anything it
does not finish cleanly is decoded again by ``zlib`` with the JDK's buffering, which names the error.
"""
from __future__ import annotations

import struct
import zlib

from zlib_ng import zlib_ng

from kafkafmt.errors import CompressionFramingError, DecompressionLimitError, IllegalArgumentError

#: GZIPOutputStream's member header on JDK 16+ (OS byte 0xff; JDK <= 15 wrote 0x00).
GZIP_HEADER = bytes.fromhex("1f8b08000000000000ff")
GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_LEVEL = -1  # java.util.zip.Deflater.DEFAULT_COMPRESSION (= zlib level 6)
MIN_LEVEL = 1
MAX_LEVEL = 9
#: GzipCompression.wrapForInput: ``new GZIPInputStream(..., 8 * 1024)``.
INPUT_BUFFER_SIZE = 8 * 1024

_FHCRC = 2
_FEXTRA = 4
_FNAME = 8
_FCOMMENT = 16
_TRAILER = struct.Struct("<II")
#: a member header with no flag set (GZIPOutputStream's): magic, CM 8, FLG 0, then MTIME, XFL and OS
_PLAIN_HEADER_START = GZIP_MAGIC + b"\x08\x00"
_PLAIN_HEADER_SIZE = 10


def validate_level(level: int | None) -> int:
    """Return the effective level; ``GzipCompression.Builder.level`` accepts 1..9 or -1."""
    if level is None:
        return DEFAULT_LEVEL
    if (level < MIN_LEVEL or level > MAX_LEVEL) and level != DEFAULT_LEVEL:
        raise IllegalArgumentError(f"gzip doesn't support given compression level: {level}")
    return level


def compress(data: bytes, level: int | None = None) -> bytes:
    """One gzip member exactly as ``GZIPOutputStream`` writes it (``GzipCompression``)."""
    deflater = zlib.compressobj(validate_level(level), zlib.DEFLATED, -zlib.MAX_WBITS, 8)
    body = deflater.compress(data) + deflater.flush(zlib.Z_FINISH)
    return GZIP_HEADER + body + _TRAILER.pack(zlib.crc32(data), len(data) & 0xFFFFFFFF)


class _HeaderError(Exception):
    def __init__(self, reason: str, position: int):
        super().__init__(reason)
        self.reason = reason
        self.position = position


def _parse_header(buf: memoryview, start: int) -> int:
    """Parse one member header at ``start`` (``GZIPInputStream.readHeader``); return its end.

    Like the JDK: magic and CM are checked, FEXTRA/FNAME/FCOMMENT skipped, FHCRC verified,
    reserved flag bits ignored.
    """
    n = len(buf)
    pos = start

    def need(count: int) -> None:
        if pos + count > n:
            raise _HeaderError("Unexpected end of gzip header", n)

    need(2)
    if bytes(buf[pos:pos + 2]) != GZIP_MAGIC:
        raise _HeaderError("Not in GZIP format", pos)
    need(3)
    if buf[pos + 2] != 8:
        raise _HeaderError("Unsupported compression method", pos + 2)
    need(10)
    flg = buf[pos + 3]
    pos += 10
    if flg & _FEXTRA:
        need(2)
        xlen = buf[pos] | (buf[pos + 1] << 8)
        pos += 2
        need(xlen)
        pos += xlen
    for flag in (_FNAME, _FCOMMENT):
        if flg & flag:
            while True:
                need(1)
                pos += 1
                if buf[pos - 1] == 0:
                    break
    if flg & _FHCRC:
        need(2)
        expected = zlib.crc32(buf[start:pos]) & 0xFFFF
        if buf[pos] | (buf[pos + 1] << 8) != expected:
            raise _HeaderError("Corrupt GZIP header", pos)
        pos += 2
    return pos


def decompress(data: bytes | memoryview, max_bytes: int) -> bytes:
    """Decode as ``GZIPInputStream`` does, stopping with DecompressionLimitError past ``max_bytes``."""
    buf = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    try:
        plain = len(buf) >= _PLAIN_HEADER_SIZE and buf[:4] == _PLAIN_HEADER_START
        body_start = _PLAIN_HEADER_SIZE if plain else _parse_header(buf, 0)
    except _HeaderError as e:
        raise CompressionFramingError(f"gzip: {e.reason}", position=e.position) from None
    out = _single_member(buf, body_start, max_bytes)
    return out if out is not None else _replay(buf, body_start, max_bytes)


def _single_member(buf: memoryview, body_start: int, max_bytes: int) -> bytes | None:
    """The usual stream (what ``GZIPOutputStream`` writes: one member, nothing after its trailer)
    inflated in one zlib call; None for anything else (an error, the cap, more members, trailing
    bytes), which :func:`_replay` then decodes with the JDK's 8 KiB reads and reports exactly."""
    n = len(buf)
    inflater = zlib_ng.decompressobj(-zlib.MAX_WBITS)
    try:
        out = inflater.decompress(buf[body_start:], max_bytes + 1)
    except zlib_ng.error:
        return None
    if not inflater.eof or len(out) > max_bytes:
        return None
    body_end = n - len(inflater.unused_data)
    if body_end + 8 > n:
        return None
    want_crc, want_size = _TRAILER.unpack_from(buf, body_end)
    if want_crc != zlib_ng.crc32(out) or want_size != len(out) & 0xFFFFFFFF:
        return None
    # where the JDK's 8 KiB buffer stood when the inflater finished: GZIPInputStream.readTrailer
    # looks for another member only if the stream has more bytes or the buffer more than 26
    inp_end = min(body_start + -(-(body_end - body_start) // INPUT_BUFFER_SIZE) * INPUT_BUFFER_SIZE, n)
    if n - max(inp_end, body_end + 8) > 0 or inp_end - body_end > 26:
        return None
    return out


def _replay(buf: memoryview, body_start: int, max_bytes: int) -> bytearray:
    """Every member, read as ``GZIPInputStream`` reads it: 8 KiB of input at a time."""
    n = len(buf)
    out = bytearray()  # grown in place: no second copy of up to max_bytes at the end
    total = 0
    # The JDK's view of the input: `pos` is how far the underlying stream has been read;
    # [inp_start, inp_end) is what its 8 KiB buffer still holds for the inflater.
    pos = body_start
    inp_start = inp_end = body_start
    while True:  # one iteration per member
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        crc = 0
        size = 0
        pending = buf[inp_start:inp_end]
        while True:
            if not pending:
                if pos >= n:
                    raise CompressionFramingError(
                        "gzip: Unexpected end of ZLIB input stream (truncated deflate data)", position=n)
                inp_start, inp_end = pos, min(pos + INPUT_BUFFER_SIZE, n)
                pos = inp_end
                pending = buf[inp_start:inp_end]
            try:
                chunk = inflater.decompress(pending, max_bytes - total + 1)
            except zlib.error as e:
                raise CompressionFramingError(
                    f"gzip: invalid deflate data ({e}) in the input starting at byte {inp_start}",
                    position=inp_start) from None
            if chunk:
                total += len(chunk)
                if total > max_bytes:
                    raise DecompressionLimitError(
                        f"gzip: decompressed data exceeds max_bytes={max_bytes}", position=inp_start)
                crc = zlib.crc32(chunk, crc)
                size += len(chunk)
                out += chunk
            if inflater.eof:
                break
            pending = inflater.unconsumed_tail
        left = len(inflater.unused_data)  # Inflater.getRemaining()
        body_end = inp_end - left
        if body_end + 8 > n:
            raise CompressionFramingError("gzip: Unexpected end of gzip trailer (truncated stream)", position=n)
        want_crc, want_size = _TRAILER.unpack_from(buf, body_end)
        if want_crc != crc or want_size != size & 0xFFFFFFFF:
            raise CompressionFramingError(
                f"gzip: Corrupt GZIP trailer (CRC32 {want_crc:#010x} / ISIZE {want_size} stored, "
                f"{crc:#010x} / {size & 0xFFFFFFFF} computed)", position=body_end)
        trailer_end = body_end + 8
        pos = max(pos, trailer_end)
        # GZIPInputStream.readTrailer: look for another member only if the stream has more
        # bytes or the buffer still holds more than 26 (trailer 8 + min header 10 + trailer 8).
        if not (n - pos > 0 or left > 26):
            break
        try:
            header_end = _parse_header(buf, trailer_end)
        except _HeaderError:
            break  # the JDK ignores whatever follows ("ignore any malformed, do nothing")
        pos = max(pos, header_end)
        if inp_end > header_end:
            inp_start = header_end
        else:
            inp_start = inp_end = pos
    return out
