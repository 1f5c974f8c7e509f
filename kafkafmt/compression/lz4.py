"""lz4 as Kafka frames it: the LZ4 frame subset of ``Lz4BlockOutputStream`` / ``Lz4BlockInputStream``.

Writer (``org.apache.kafka.common.compress.Lz4BlockOutputStream``, via ``Lz4Compression``):

* magic ``04 22 4D 18``, FLG ``0x60`` (version 01, independent blocks, no checksums, no
  content size), BD ``0x40`` (64 KiB blocks), HC = ``(xxh32(data, 0) >> 8) & 0xFF``;
* ``data`` is FLG+BD (HC ``0x82``), except for message format v0, where Kafka keeps the
  pre-0.10 bug and hashes magic+FLG+BD (HC ``0x1a``; KAFKA-3160,
  ``useBrokenFlagDescriptorChecksum = messageVersion == 0``);
* each block compresses <= 64 KiB of input independently: int32 LE size then the block; when
  the compressed form is not smaller than the input the input is stored raw with the size's
  bit 31 set (``LZ4_FRAME_INCOMPRESSIBLE_MASK``);
* end mark ``00000000``; no content checksum;
* level 9 (Kafka's default) uses lz4's fast compressor, any other level 1..17 LZ4HC.

Reader (``Lz4BlockInputStream``; its exception messages are kept): FLG version 1, block
independence, reserved bits 0; BD size code 4..7, reserved bits 0; content size skipped;
HC checked except for message format v0 (``ignoreFlagDescriptorChecksum``); block checksums
verified when flagged; the content checksum skipped unverified (Kafka 3.9); anything after the
end mark ignored.

Only the framing is written here.  Blocks: level 9 goes through cramjam's lz4 block codec
(liblz4 1.10, as in lz4-java 1.10.1's JNI build, so the bytes match Kafka's) for an lz4-java bundling liblz4
1.8.3 or later, through :mod:`kafkafmt.compression.lz4_block` (the fast compressor of liblz4 r100 or r123)
for the older ones of Kafka 0.9 … 2.0 (row ``codec.lz4_java``); LZ4HC levels
and decoding through the ``lz4`` package's block API (its liblz4 1.9.4 HC output matches
lz4-java for levels 3..17; levels 1-2 are liblz4 1.10's new "mid" mode there and differ).
"""
from __future__ import annotations

import functools
import struct
from typing import TYPE_CHECKING, Callable, Iterator

import cramjam
import lz4.block
import xxhash

from kafkafmt.errors import CompressionFramingError, DecompressionLimitError, IllegalArgumentError
from kafkafmt.layout import LZ4_FRAME_HEADER

if TYPE_CHECKING:  # numpy is loaded by the callers that pass arrays (the columnar core), not by every lz4 read
    import numpy as np

MAGIC = 0x184D2204
#: FLG written by Kafka: version 01, block independence, nothing else.
FLG = 0x60
#: BD written by Kafka: block maximum size code 4 (``BLOCKSIZE_64KB``).
BD = 0x40
BLOCK_SIZE = 64 * 1024
LZ4_FRAME_INCOMPRESSIBLE_MASK = 0x80000000
END_MARK = b"\x00\x00\x00\x00"
DEFAULT_LEVEL = 9  # CompressionType.LZ4.defaultLevel(): the fast compressor
MIN_LEVEL = 1
MAX_LEVEL = 17

PREMATURE_EOS = "Stream ended prematurely"
NOT_SUPPORTED = "Stream unsupported (invalid magic bytes)"
BLOCK_HASH_MISMATCH = "Block checksum mismatch"
DESCRIPTOR_HASH_MISMATCH = "Stream frame descriptor corrupted"

_FLG_POS = LZ4_FRAME_HEADER.offset_of("FLG")
_BD_POS = LZ4_FRAME_HEADER.offset_of("BD")
_HC_POS = LZ4_FRAME_HEADER.offset_of("HC")
_U32 = struct.Struct("<I")


def header_checksum(descriptor: bytes | memoryview) -> int:
    """The frame descriptor's HC byte: second byte of xxh32(descriptor, seed 0)."""
    return (xxhash.xxh32_intdigest(bytes(descriptor), seed=0) >> 8) & 0xFF


@functools.lru_cache(maxsize=None)
def frame_header(magic: int = 2) -> bytes:
    """The 7-byte frame header ``Lz4BlockOutputStream.writeHeader`` writes for this message format."""
    head = LZ4_FRAME_HEADER.pack(magic=MAGIC, FLG=FLG, BD=BD, HC=0)
    covered = head[:_HC_POS] if magic == 0 else head[_FLG_POS:_HC_POS]  # KAFKA-3160 for v0
    return LZ4_FRAME_HEADER.pack(magic=MAGIC, FLG=FLG, BD=BD, HC=header_checksum(covered))


def validate_level(level: int | None) -> int:
    """``Lz4Compression.Builder.level``: 1..17."""
    if level is None:
        return DEFAULT_LEVEL
    if level < MIN_LEVEL or level > MAX_LEVEL:
        raise IllegalArgumentError(f"lz4 doesn't support given compression level: {level}")
    return level


#: the lz4-java releases whose blocks kafkafmt writes itself (liblz4 older than 1.8.3: lz4_block.OWN)
_OLD_LZ4_JAVA = ("1.2.0", "1.3.0", "1.4", "1.4.1")


def _old_compressor(lz4_java: str):
    from . import lz4_block  # numba: loaded only by the lines that need it

    found = lz4_block.fast_compressor(lz4_java)
    assert found.release in lz4_block.OWN, lz4_java
    return found


def compress(data: bytes, magic: int = 2, level: int | None = None, lz4_java: str | None = None) -> bytes:
    """A frame exactly as ``Lz4BlockOutputStream`` writes it (see the module docstring), its blocks those of
    lz4-java ``lz4_java`` (default: one bundling liblz4 1.10)."""
    level = validate_level(level)
    old = None if lz4_java is None or lz4_java not in _OLD_LZ4_JAVA else _old_compressor(lz4_java)
    if level == DEFAULT_LEVEL and old is not None:
        def block_compress(chunk: bytes) -> bytes:
            # KafkaLZ4BlockOutputStream's LZ4Factory.fastestInstance().fastCompressor(): the JNI build
            # of an old liblz4 (lz4-java 1.2.0: r100; 1.3.0 … 1.4.1: r123)
            from . import lz4_block
            return lz4_block.compress_block(chunk, old)
    elif level == DEFAULT_LEVEL:
        def block_compress(chunk: bytes) -> bytes:
            # lz4-java's JNI fast compressor is liblz4 1.10's LZ4_compress_default; cramjam's
            # lz4 block codec is that liblz4 (the lz4 package's bundled 1.9.4 differs).
            return bytes(cramjam.lz4.compress_block(chunk, mode="default", store_size=False))
    else:
        def block_compress(chunk: bytes) -> bytes:
            # LZ4HC (lz4-java highCompressor(level)); cramjam ignores HC levels, the lz4 package does not.
            return lz4.block.compress(chunk, mode="high_compression", compression=level, store_size=False)
    parts = [frame_header(magic)]
    for start in range(0, len(data), BLOCK_SIZE):
        chunk = data[start:start + BLOCK_SIZE]
        packed = block_compress(chunk)
        if len(packed) >= len(chunk):
            parts.append(_U32.pack(len(chunk) | LZ4_FRAME_INCOMPRESSIBLE_MASK))
            parts.append(chunk)
        else:
            parts.append(_U32.pack(len(packed)))
            parts.append(packed)
    parts.append(END_MARK)
    return b"".join(parts)


def _fail(reason: str, position: int) -> CompressionFramingError:
    return CompressionFramingError(f"lz4: {reason}", position=position)


def _frame(data: bytes | memoryview, magic: int) -> tuple[memoryview, int, int, int, int]:
    """Check the frame descriptor as ``Lz4BlockInputStream.readHeader`` does: the buffer, the position
    of the first block, the maximum block size and the content- and block-checksum flags."""
    buf = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    n = len(buf)
    if n < _HC_POS:
        raise _fail(PREMATURE_EOS, n)
    if _U32.unpack_from(buf, 0)[0] != MAGIC:
        raise _fail(NOT_SUPPORTED, 0)
    flg = buf[_FLG_POS]
    # Lz4BlockOutputStream.FLG.validate
    if flg & 3:
        raise _fail(f"Reserved bits must be 0 (FLG {flg:#04x})", _FLG_POS)
    if not (flg >> 5) & 1:
        raise _fail(f"Dependent block stream is unsupported (FLG {flg:#04x})", _FLG_POS)
    if (flg >> 6) & 3 != 1:
        raise _fail(f"Version {(flg >> 6) & 3} is unsupported (FLG {flg:#04x})", _FLG_POS)
    content_checksum = (flg >> 2) & 1
    content_size = (flg >> 3) & 1
    block_checksum = (flg >> 4) & 1
    bd = buf[_BD_POS]
    # Lz4BlockOutputStream.BD.validate
    if bd & 15:
        raise _fail(f"Reserved2 field must be 0 (BD {bd:#04x})", _BD_POS)
    size_code = (bd >> 4) & 7
    if size_code < 4:
        raise _fail(f"Block size value must be between 4 and 7 (BD {bd:#04x})", _BD_POS)
    if bd >> 7:
        raise _fail(f"Reserved3 field must be 0 (BD {bd:#04x})", _BD_POS)
    max_block = 1 << (2 * size_code + 8)

    pos = _HC_POS
    if content_size:
        if n - pos < 8:
            raise _fail(PREMATURE_EOS, n)
        pos += 8
    if pos >= n:
        raise _fail(f"{PREMATURE_EOS} (no header checksum byte)", n)
    if magic != 0:  # message format v0 ignores HC (KAFKA-3160)
        expected = header_checksum(buf[_FLG_POS:pos])
        if buf[pos] != expected:
            raise _fail(f"{DESCRIPTOR_HASH_MISMATCH} (HC {buf[pos]:#04x}, expected {expected:#04x})", pos)
    return buf, pos + 1, max_block, content_checksum, block_checksum


def _blocks(data: bytes | memoryview, magic: int) -> Iterator[tuple[int, memoryview, bool, int]]:
    """Each block of a frame in order, as ``Lz4BlockInputStream.readBlock`` meets it: its position, its
    bytes, whether they are compressed, and the maximum block size; the framing is checked on the way."""
    buf, pos, max_block, content_checksum, block_checksum = _frame(data, magic)
    n = len(buf)
    while True:
        if n - pos < 4:
            raise _fail(f"{PREMATURE_EOS} (no block size or end mark)", pos)
        word = _U32.unpack_from(buf, pos)[0]
        compressed = not word & LZ4_FRAME_INCOMPRESSIBLE_MASK
        size = word & ~LZ4_FRAME_INCOMPRESSIBLE_MASK
        if size == 0:  # end mark
            if content_checksum and n - (pos + 4) < 4:
                raise _fail(f"{PREMATURE_EOS} (no content checksum)", pos + 4)
            return
        if size > max_block:
            raise _fail(f"Block size {size} exceeded max: {max_block}", pos)
        start = pos + 4
        if n - start < size:
            raise _fail(f"{PREMATURE_EOS} (block of {size} bytes, {n - start} left)", pos)
        block = buf[start:start + size]
        yield pos, block, compressed, max_block  # the block is decoded before its checksum is read, as in Kafka
        pos = start + size
        if block_checksum:
            if n - pos < 4:
                raise _fail(f"{PREMATURE_EOS} (no block checksum)", pos)
            if xxhash.xxh32_intdigest(block, seed=0) != _U32.unpack_from(buf, pos)[0]:
                raise _fail(BLOCK_HASH_MISMATCH, pos)
            pos += 4


def _over_limit(max_bytes: int, pos: int) -> DecompressionLimitError:
    return DecompressionLimitError(f"lz4: decompressed data exceeds max_bytes={max_bytes}", position=pos)


def decompress(data: bytes | memoryview, magic: int, max_bytes: int) -> bytes:
    """Decode one frame as ``Lz4BlockInputStream`` does (see the module docstring)."""
    out = bytearray()  # grown in place: no second copy of up to max_bytes at the end
    total = 0
    for pos, block, compressed, max_block in _blocks(data, magic):
        if compressed:
            try:
                chunk = lz4.block.decompress(block, uncompressed_size=max_block)
            except Exception as e:  # lz4.block.LZ4BlockError
                raise _fail(f"corrupt block: {e}", pos) from None
        else:
            chunk = bytes(block)
        total += len(chunk)
        if total > max_bytes:
            raise _over_limit(max_bytes, pos)
        out += chunk
    return out


def decompress_into(data: bytes | memoryview, magic: int, max_bytes: int,
                    reserve: Callable[[int], np.ndarray]) -> int:
    """:func:`decompress` writing the content straight into one buffer instead of joining blocks (the
    columnar decoder's arena): ``reserve(n)`` returns a writable uint8 array of at least ``n`` bytes and
    the frame's content is written at its start; returns its length.  Blocks are decoded by liblz4
    (``LZ4_decompress_safe``, through cramjam) with the same per-block limit as :func:`decompress`.  A
    frame :func:`decompress` would refuse raises here too, but a corrupt block's message may differ: a
    caller that reports errors re-runs :func:`decompress` for Kafka's (the reference's) message."""
    blocks = list(_blocks(data, magic))
    out = reserve(sum(max_block if compressed else len(block) for _, block, compressed, max_block in blocks))
    total = 0
    for pos, block, compressed, max_block in blocks:
        if compressed:
            try:
                size = cramjam.lz4.decompress_block_into(block, out[total:total + max_block])
            except Exception as e:  # cramjam.DecompressionError
                raise _fail(f"corrupt block: {e}", pos) from None
        else:
            size = len(block)
            out[total:total + size] = block
        total += size
        if total > max_bytes:
            raise _over_limit(max_bytes, pos)
    return total
