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

Which libzstd writes the frames: each Kafka line's zstd-jni bundles one (row ``codec.zstd_jni``,
:data:`LIBZSTD_OF_ZSTD_JNI`); kafkafmt's is the ``zstandard`` package's (:data:`OWN`).  Of what differs between
them kafkafmt follows the level-3 window a frame header declares (:data:`WINDOW_LOG`: libzstd 1.3.7, Kafka 2.1,
declares 1 MiB where 1.4 and later declare 2 MiB), not the block encoder: its blocks are libzstd 1.5.7's, byte
for byte those of Kafka 4.4's zstd-jni 1.5.7-17, while the libzstd 1.3.7, 1.4.9 and 1.5.6 of Kafka 2.1, 2.8 and
3.9 encode many inputs (tens of bytes to 64 KiB) otherwise.  :func:`exact` says which; all checked against
the zstd-jni jars, driven as each release's writer drives them (tests/compression/test_codec_lines.py).
"""
from __future__ import annotations

import zstandard

from kafkafmt.errors import CompressionFramingError, DecompressionLimitError, IllegalArgumentError

DEFAULT_LEVEL = 3  # CompressionType.ZSTD.defaultLevel()
#: the libzstd inside each zstd-jni a Kafka line ships (row ``codec.zstd_jni``; zstd-jni's version is libzstd's
#: and a build number)
LIBZSTD_OF_ZSTD_JNI = {"1.3.7-1": "1.3.7", "1.4.9-1": "1.4.9", "1.5.6-4": "1.5.6", "1.5.7-17": "1.5.7"}
#: the libzstd whose frames :func:`compress` writes (the ``zstandard`` package's)
OWN = ".".join(map(str, zstandard.ZSTD_VERSION))
#: the window a libzstd's level 3 declares for a stream of unknown size (log2 bytes, ZSTD_defaultCParameters'
#: first row: 20 in libzstd 1.3.7, 21 from 1.3.8/1.4 on), by libzstd release; absent: :data:`OWN`'s
WINDOW_LOG = {"1.3.7": 20}
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


def exact(zstd_jni: str | None) -> bool:
    """Whether :func:`compress` writes the frames of zstd-jni ``zstd_jni`` byte for byte (its libzstd is
    :data:`OWN`; None: kafkafmt's own)."""
    return zstd_jni is None or LIBZSTD_OF_ZSTD_JNI[zstd_jni] == OWN


_PARAMS: dict = {}


def _compressor(level: int, zstd_jni: str | None):
    """A new compressor (one per frame: a ZstdCompressor's context serves one stream at a time)."""
    window = WINDOW_LOG.get(LIBZSTD_OF_ZSTD_JNI[zstd_jni]) if zstd_jni is not None else None
    if window is None or level != DEFAULT_LEVEL:
        return zstandard.ZstdCompressor(level=level, write_checksum=False)
    if window not in _PARAMS:
        _PARAMS[window] = zstandard.ZstdCompressionParameters.from_level(level, window_log=window, write_checksum=0)
    return zstandard.ZstdCompressor(compression_params=_PARAMS[window])


def compress(data: bytes, level: int | None = None, zstd_jni: str | None = None) -> bytes:
    """One zstd frame as ``ZstdOutputStreamNoFinalizer`` writes it (continue, flush, end), declaring the window
    of zstd-jni ``zstd_jni``'s libzstd (:data:`WINDOW_LOG`; None: kafkafmt's own)."""
    cobj = _compressor(validate_level(level), zstd_jni).compressobj()
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
