"""snappy in xerial framing, as Kafka writes and reads it.

Kafka's ``org.apache.kafka.common.compress.SnappyCompression`` wraps snappy-java 1.1.10.5's
``SnappyOutputStream`` / ``SnappyInputStream``.  That is *xerial* framing, not the official
snappy framing format:

* a 16-byte header ``82 'SNAPPY' 00``, int32 BE version 1, int32 BE compatible version 1
  (``SnappyCodec``), written lazily, so an empty stream is exactly the header;
* then chunks: int32 BE compressed length + one raw snappy block, each block compressing
  at most 32 KiB of input (``SnappyOutputStream.DEFAULT_BLOCK_SIZE``).

``SnappyInputStream`` rules replayed by :func:`decompress`:

* input shorter than 16 bytes, or whose first 8 bytes are not the magic, is ONE raw snappy
  block (``readHeader`` / ``readFully``); empty input is an error;
* the first header's version fields are not checked;
* a chunk length equal to ``0x82534E41`` starts a concatenated stream: the rest of its
  16-byte header must be present; one whose version is < 1 is an error, one whose 8-byte
  magic does not match is skipped unchecked (``hasNextChunk`` / ``isValidHeader``);
* a negative chunk length, or one > 512 MiB (``MAX_CHUNK_SIZE``), is an error;
* fewer than 4 bytes left where a chunk length is due ends the stream silently.

The raw snappy blocks are those of the snappy inside the line's snappy-java: cramjam's (the codec
python-snappy uses) where they are the same bytes (snappy 1.1.4 … 1.1.8: Kafka 1.0 … 2.8),
:mod:`kafkafmt.compression.snappy_block` for snappy 1.1.1/1.1.2 (0.9 … 0.11) and 1.1.10 (3.x, 4.x).
"""
from __future__ import annotations

import struct

import cramjam

from kafkafmt.errors import CompressionFramingError, DecompressionLimitError
from kafkafmt.layout import SNAPPY_XERIAL_HEADER

#: ``SnappyCodec.MAGIC_HEADER``.
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_VERSION = 1
XERIAL_MIN_COMPATIBLE_VERSION = 1
#: The full 16-byte stream header ``82534e41505059000000000100000001``.
XERIAL_HEADER = SNAPPY_XERIAL_HEADER.pack(magic=XERIAL_MAGIC, version=XERIAL_VERSION,
                                          compatibleVersion=XERIAL_MIN_COMPATIBLE_VERSION)
#: ``SnappyOutputStream.DEFAULT_BLOCK_SIZE``: input bytes per chunk.
BLOCK_SIZE = 32 * 1024
#: ``SnappyInputStream.MAX_CHUNK_SIZE``.
MAX_CHUNK_SIZE = 512 * 1024 * 1024
#: ``SnappyCodec.MAGIC_HEADER_HEAD``: the first 4 magic bytes read as an int32 BE chunk length.
MAGIC_HEADER_HEAD = struct.unpack(">i", XERIAL_MAGIC[:4])[0]

_INT32 = struct.Struct(">i")


#: the snappy-java releases whose bundled snappy writes what cramjam writes (snappy 1.1.4 … 1.1.8)
_CRAMJAM_SNAPPY_JAVA = ("1.1.4", "1.1.7.1", "1.1.7.2", "1.1.8.1")


def _raw_encoder(snappy_java: str | None):
    """The raw snappy compressor of snappy-java ``snappy_java`` (row ``codec.snappy_java``): cramjam's for
    None and the snappy-java releases that bundle snappy 1.1.4 … 1.1.8 (the same bytes), else the bundled
    snappy's own (:mod:`kafkafmt.compression.snappy_block`: 1.1.1/1.1.2 and 1.1.10)."""
    if snappy_java is None or snappy_java in _CRAMJAM_SNAPPY_JAVA:
        return lambda chunk: bytes(cramjam.snappy.compress_raw(chunk))
    from . import snappy_block  # numba: loaded by the lines that need it
    release = snappy_block.SNAPPY_OF_SNAPPY_JAVA[snappy_java]
    return lambda chunk: snappy_block.compress_raw(chunk, release)


def compress(data: bytes, block_size: int = BLOCK_SIZE, snappy_java: str | None = None) -> bytes:
    """Xerial stream as ``SnappyOutputStream`` writes it: header, then one chunk per ``block_size`` bytes of
    input (32 KiB, its default; Kafka 0.10.2's writers gave it 1 KiB: row ``codec.snappy_block``), each
    chunk compressed as snappy-java ``snappy_java`` does (row ``codec.snappy_java``; None: cramjam)."""
    encode = _raw_encoder(snappy_java)
    parts = [XERIAL_HEADER]
    for start in range(0, len(data), block_size):
        block = encode(data[start:start + block_size])
        parts.append(_INT32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _read_varint32(buf: memoryview, start: int, end: int) -> tuple[int, int]:
    """The uncompressed-length varint that opens a raw snappy block (``Varint::Parse32WithLimit``)."""
    value = 0
    pos = start
    for shift in (0, 7, 14, 21, 28):
        if pos >= end:
            raise CompressionFramingError(
                "snappy: raw block ends inside its uncompressed-length varint", position=pos)
        b = buf[pos]
        pos += 1
        if shift == 28 and b >= 16:
            break
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
    raise CompressionFramingError("snappy: invalid uncompressed-length varint in raw block", position=start)


def _raw_block(buf: memoryview, start: int, end: int, budget: int) -> bytes:
    """Decode one raw snappy block, checking its declared length against ``budget`` first."""
    declared, body = _read_varint32(buf, start, end)
    if declared > budget:
        raise DecompressionLimitError(
            f"snappy: block declares {declared} uncompressed bytes, over the remaining "
            f"decompression budget of {budget} bytes", position=start)
    # A snappy element of k bytes yields at most 64 bytes (copy with 2-byte offset: 3 -> 64).
    if declared * 3 > (end - body) * 64:
        raise CompressionFramingError(
            f"snappy: block declares {declared} uncompressed bytes, impossible for a "
            f"{end - start}-byte block", position=start)
    try:
        out = bytes(cramjam.snappy.decompress_raw(bytes(buf[start:end])))
    except Exception as e:  # cramjam.DecompressionError and anything else from the codec
        raise CompressionFramingError(f"snappy: failed to uncompress the chunk: {e}", position=start) from None
    if len(out) != declared:
        raise CompressionFramingError(
            f"snappy: expected {declared} bytes, but decompressed chunk has {len(out)} bytes", position=start)
    return out


def decompress(data: bytes | memoryview, max_bytes: int) -> bytes:
    """Decode as ``SnappyInputStream`` does (see the module docstring)."""
    buf = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    n = len(buf)
    if n == 0:
        raise CompressionFramingError("snappy: Cannot decompress empty stream", position=0)
    header_size = SNAPPY_XERIAL_HEADER.size
    if n < header_size or bytes(buf[:len(XERIAL_MAGIC)]) != XERIAL_MAGIC:
        return _raw_block(buf, 0, n, max_bytes)

    out = bytearray()  # grown in place: no second copy of up to max_bytes at the end
    total = 0
    pos = header_size
    while n - pos >= 4:
        chunk_size = _INT32.unpack_from(buf, pos)[0]
        if chunk_size == MAGIC_HEADER_HEAD:
            if n - pos < header_size:
                raise CompressionFramingError(
                    "snappy: Insufficient header size in a concatenated block", position=pos)
            head = SNAPPY_XERIAL_HEADER.read(buf, pos)
            if head["magic"] != XERIAL_MAGIC:
                # isValidHeader() is false: hasNextChunk() returns false without setting
                # finishedReading, so the read call in progress ends short and the next one
                # carries on after these 16 bytes (the caller sees -1 only if that read call
                # had produced nothing yet).  A full read, as here, skips the header.
                pos += header_size
                continue
            if head["version"] < XERIAL_MIN_COMPATIBLE_VERSION:
                raise CompressionFramingError(
                    f"snappy: Compressed with an incompatible codec version {head['version']}. "
                    f"At least version {XERIAL_MIN_COMPATIBLE_VERSION} is required",
                    position=pos + SNAPPY_XERIAL_HEADER.offset_of("version"))
            pos += header_size
            continue
        if chunk_size < 0:
            raise CompressionFramingError(
                f"snappy: chunkSize is too big or negative : {chunk_size}", position=pos)
        if chunk_size > MAX_CHUNK_SIZE:
            raise CompressionFramingError(
                f"snappy: Received chunkSize {chunk_size:,} is greater than max configured chunk size "
                f"{MAX_CHUNK_SIZE:,}", position=pos)
        start = pos + 4
        if n - start < chunk_size:
            raise CompressionFramingError(
                f"snappy: failed to read chunk: {chunk_size} bytes declared, {n - start} left "
                "(truncated stream)", position=pos)
        block = _raw_block(buf, start, start + chunk_size, max_bytes - total)
        total += len(block)
        out += block
        pos = start + chunk_size
    return out
