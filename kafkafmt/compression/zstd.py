"""zstd as Kafka writes and reads it (message format v2 only, KIP-110).

Writer: ``org.apache.kafka.common.compress.ZstdCompression`` wraps zstd-jni's
``ZstdOutputStreamNoFinalizer`` (level default 3, no checksum) in a 16 KiB
``BufferedOutputStream``.  Data goes in with ``ZSTD_e_continue``, closing the record stream
flushes (``ZSTD_e_flush``) and then ends the frame (``ZSTD_e_end``), so a frame has no content
size and ends with an empty last block; empty input gives a frame with content size 0.
:func:`compress` makes the same calls.

Reader: ``ZstdInputStreamNoFinalizer``: standard frames, concatenated, skippable frames
skipped; empty input is an empty stream, a frame cut short is an error ("Truncated source").
One zstd-jni quirk is kept: its ``frameFinished`` flag is only cleared when it reads a new
128 KiB + 3 piece of the source, so an incomplete frame that follows a complete one within
the same piece ends the stream silently instead of failing.
Decoding here is streaming, fed in small pieces so output never exceeds the cap by much.
"""
from __future__ import annotations

import zstandard

from kafkafmt.errors import CompressionFramingError, DecompressionLimitError, IllegalArgumentError

DEFAULT_LEVEL = 3  # CompressionType.ZSTD.defaultLevel()
MIN_LEVEL = -131072  # ZSTD_minCLevel() = -(1 << 17)
MAX_LEVEL = 22  # ZSTD_maxCLevel()
#: The largest output one input byte can produce: an RLE block is 4 bytes for <= 128 KiB.
_MAX_EXPANSION_PER_BYTE = 128 * 1024 // 4
_MIN_FEED = 64
_MAX_FEED = 64 * 1024
#: ZstdInputStreamNoFinalizer reads its source in ZSTD_DStreamInSize() = 128 KiB + 3 byte pieces.
SOURCE_READ_SIZE = 128 * 1024 + 3


def validate_level(level: int | None) -> int:
    """``ZstdCompression.Builder.level``: ``ZSTD_minCLevel()``..22."""
    if level is None:
        return DEFAULT_LEVEL
    if level < MIN_LEVEL or level > MAX_LEVEL:
        raise IllegalArgumentError(f"zstd doesn't support given compression level: {level}")
    return level


def compress(data: bytes, level: int | None = None) -> bytes:
    """One zstd frame as ``ZstdOutputStreamNoFinalizer`` writes it (continue, flush, end)."""
    cctx = zstandard.ZstdCompressor(level=validate_level(level), write_checksum=False)
    cobj = cctx.compressobj()
    if not data:
        # Nothing reaches the stream before close: zstd-jni's first call is ZSTD_e_end, so
        # the frame is single-segment with content size 0 (28b52ffd 20 00 010000).
        return cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)
    return (cobj.compress(data)
            + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
            + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))


def decompress(data: bytes | memoryview, max_bytes: int) -> bytes:
    """Decode every frame in ``data`` as ``ZstdInputStreamNoFinalizer`` does.

    Error positions are the start of the input piece being decoded when zstd failed (zstd
    does not say which byte), or the end of the input for a truncated frame.
    """
    buf = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    n = len(buf)
    dctx = zstandard.ZstdDecompressor()
    out = bytearray()  # grown in place: no second copy of up to max_bytes at the end
    total = 0
    pos = 0
    last_piece_start = (n - 1) // SOURCE_READ_SIZE * SOURCE_READ_SIZE
    while pos < n:
        frame_start = pos
        dobj = dctx.decompressobj()
        while not dobj.eof:
            if pos >= n:
                if frame_start > last_piece_start:
                    # zstd-jni: the previous frame ended inside the last source piece, so
                    # frameFinished is still true at EOF and the partial frame is ignored.
                    return out
                raise CompressionFramingError("zstd: Truncated source (the last frame is incomplete)",
                                              position=n)
            feed = (max_bytes - total) // _MAX_EXPANSION_PER_BYTE
            feed = min(_MAX_FEED, max(_MIN_FEED, feed))
            piece = bytes(buf[pos:pos + feed])
            try:
                chunk = dobj.decompress(piece)
            except Exception as e:  # zstandard.ZstdError
                raise CompressionFramingError(f"zstd: {e}", position=pos) from None
            pos += len(piece)
            if chunk:
                total += len(chunk)
                if total > max_bytes:
                    raise DecompressionLimitError(
                        f"zstd: decompressed data exceeds max_bytes={max_bytes}", position=pos - len(piece))
                out += chunk
        pos -= len(dobj.unused_data)
    return out
