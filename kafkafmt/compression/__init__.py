"""Kafka's compression codecs, with Kafka's exact framing.

``org.apache.kafka.common.compress``: ``GzipCompression`` (one gzip member), ``SnappyCompression``
(snappy-java xerial framing), ``Lz4Compression`` (``Lz4BlockOutputStream``'s LZ4 frame subset,
with the KAFKA-3160 header checksum for message format v0) and ``ZstdCompression`` (zstd frames,
message format v2 only).  The codecs themselves are the usual libraries (zlib, cramjam's snappy
and lz4 blocks, lz4, zstandard, xxhash); the per-codec modules write only Kafka's framing.

The compressed bytes are those of the Kafka line's own libraries (rows ``codec.*`` of
:mod:`kafkafmt.kafka_lines`): the line is :func:`compress`'s ``line``, else the one set by
:func:`kafka_line_codecs` around a block (the validator and the fetch path set their configuration's
``kafka_line``), else kafkafmt's default line.  lz4 follows the liblz4 inside the line's lz4-java
(:mod:`kafkafmt.compression.lz4_block`), snappy the chunk size the line's writers give
``SnappyOutputStream``; gzip is the JDK's zlib however the line drives ``GZIPOutputStream`` (row
``codec.gzip_stream``: the deflate bytes do not depend on those buffer sizes), snappy also the encoder of the
snappy inside the line's snappy-java (:mod:`kafkafmt.compression.snappy_block`); zstd the window the libzstd
inside the line's zstd-jni declares, not its block encoder (:mod:`kafkafmt.compression.zstd`: libzstd 1.5.7's
blocks, Kafka 4.4's; :func:`kafkafmt.compression.zstd.exact` says for which lines that is the line's bytes).

Decompression is incremental and capped: past ``max_bytes`` of output it raises
:class:`~kafkafmt.errors.DecompressionLimitError`.  A malformed or truncated stream raises
:class:`~kafkafmt.errors.CompressionFramingError` with the byte position in the compressed input.
Nothing else escapes: library errors are wrapped.
"""
from __future__ import annotations

import contextlib
import contextvars

from kafkafmt import kafka_lines
from kafkafmt.constants import DEFAULT_MAX_DECOMPRESSED_BYTES, MAGIC_VALUE_V2, CompressionType
from kafkafmt.errors import (
    CompressionFramingError,
    IllegalArgumentError,
    KafkaFmtError,
    UnsupportedCompressionError,
)
from kafkafmt.limits import current_limits

from . import gzip as gzip_codec
from . import lz4 as lz4_codec
from . import snappy as snappy_codec
from . import zstd as zstd_codec

__all__ = ["compress", "kafka_line_codecs", "codec_line", "decompress", "decompress_buffer", "decompress_lz4_into",
           "max_bytes_in_force",
           "check_codec_for_magic", "codec_of",
           "validate_level"]


def codec_of(codec: CompressionType | int) -> CompressionType:
    """``CompressionType.forId``: ids 0-4; anything else is unknown (ids 5-7 fit the attribute bits)."""
    if isinstance(codec, CompressionType):
        return codec
    try:
        return CompressionType(int(codec))
    except (ValueError, TypeError):
        raise UnsupportedCompressionError(f"Unknown compression type id: {codec}") from None


def check_codec_for_magic(codec: CompressionType | int, magic: int) -> None:
    """zstd needs message format v2 (KIP-110; ``MemoryRecordsBuilder``'s constructor check)."""
    if codec_of(codec) is CompressionType.ZSTD and magic < MAGIC_VALUE_V2:
        raise UnsupportedCompressionError(f"ZStandard compression is not supported for magic {magic}")


def validate_level(codec: CompressionType | int, level: int | None) -> int | None:
    """The effective level for ``codec`` (Kafka's ``*Compression.Builder.level`` ranges).

    gzip: 1..9 or -1 (default -1); lz4: 1..17 (default 9); zstd: -131072..22 (default 3).
    none and snappy have no level in Kafka; a level given for them is ignored (``None``).
    """
    ctype = codec_of(codec)
    if ctype is CompressionType.GZIP:
        return gzip_codec.validate_level(level)
    if ctype is CompressionType.LZ4:
        return lz4_codec.validate_level(level)
    if ctype is CompressionType.ZSTD:
        return zstd_codec.validate_level(level)
    return None


_LINE: contextvars.ContextVar[str | None] = contextvars.ContextVar("kafkafmt_codec_line", default=None)


@contextlib.contextmanager
def kafka_line_codecs(line: str | None):
    """Within the block, :func:`compress` writes what Kafka line ``line``'s libraries write (None: the
    default line); the validator and the fetch path wrap their work in their configuration's line."""
    token = _LINE.set(None if line is None else kafka_lines.check_line(line))
    try:
        yield
    finally:
        _LINE.reset(token)


def codec_line(line: str | None = None) -> str:
    """The Kafka line whose codecs :func:`compress` follows: ``line``, else :func:`kafka_line_codecs`'
    line, else kafkafmt's default line."""
    if line is not None:
        return kafka_lines.check_line(line)
    return _LINE.get() or kafka_lines.DEFAULT_LINE


def compress(codec: CompressionType | int, data: bytes | memoryview, *, magic: int = 2,
             level: int | None = None, line: str | None = None) -> bytes:
    """Compress ``data`` exactly as Kafka's writer for ``codec`` and message format ``magic`` does, with the
    libraries of Kafka line ``line`` (:func:`codec_line`).

    ``magic`` matters for lz4 (the v0 header checksum) and zstd (v2 only).  NONE returns the
    data unchanged.
    """
    ctype = codec_of(codec)
    check_codec_for_magic(ctype, magic)
    data = bytes(data)
    if ctype is CompressionType.NONE:
        return data
    if ctype is CompressionType.GZIP:
        return gzip_codec.compress(data, level)
    line = codec_line(line)
    if ctype is CompressionType.SNAPPY:
        return snappy_codec.compress(data, kafka_lines.value("codec.snappy_block", line),
                                     snappy_java=kafka_lines.value("codec.snappy_java", line))
    if ctype is CompressionType.LZ4:
        return lz4_codec.compress(data, magic, level, lz4_java=kafka_lines.value("codec.lz4_java", line))
    return zstd_codec.compress(data, level, zstd_jni=kafka_lines.value("codec.zstd_jni", line))


def decompress(codec: CompressionType | int, data: bytes | memoryview, *, magic: int = 2,
               max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress a whole ``codec`` stream as Kafka's reader for message format ``magic`` does
    (see :func:`decompress_buffer`, which this copies into ``bytes``)."""
    return bytes(decompress_buffer(codec, data, magic=magic, max_bytes=max_bytes))


def max_bytes_in_force(max_bytes: int) -> int:
    """The decompression cap a call with ``max_bytes`` works under: the caller's, or, left at its default, the
    limit in force (:func:`kafkafmt.limits.current_limits`)."""
    if max_bytes == DEFAULT_MAX_DECOMPRESSED_BYTES:  # not chosen by the caller: the limit in force
        max_bytes = current_limits().max_decompressed_bytes
    if max_bytes < 0:
        raise IllegalArgumentError(f"max_bytes must be >= 0, got {max_bytes}")
    return max_bytes


def decompress_lz4_into(data: bytes | memoryview, reserve, *, magic: int = 2,
                        max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> int:
    """An lz4 stream decompressed straight into ``reserve(n)``'s buffer (``lz4.decompress_into``: the
    columnar decoder's arena); the same checks and cap as :func:`decompress_buffer`.  A corrupt block's
    message may differ from :func:`decompress`'s: callers that report errors re-run it."""
    check_codec_for_magic(CompressionType.LZ4, magic)
    try:
        return lz4_codec.decompress_into(data, magic, max_bytes_in_force(max_bytes), reserve)
    except KafkaFmtError:
        raise
    except Exception as e:  # a library error the codec module did not anticipate
        raise CompressionFramingError(f"lz4: {type(e).__name__}: {e}") from e


def decompress_buffer(codec: CompressionType | int, data: bytes | memoryview, *, magic: int = 2,
                      max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytes | bytearray:
    """Decompress a whole ``codec`` stream as Kafka's reader for message format ``magic`` does.

    Returns the codec's output buffer itself (a ``bytearray`` grown in place), so decoding up to
    ``max_bytes`` costs one copy of the output, not two; the record readers use this.

    ``max_bytes`` left at its default means :func:`kafkafmt.limits.current_limits`' cap.
    Raises DecompressionLimitError as soon as the output would exceed ``max_bytes`` and
    CompressionFramingError (with ``position``) for a malformed or truncated stream.
    """
    ctype = codec_of(codec)
    check_codec_for_magic(ctype, magic)
    max_bytes = max_bytes_in_force(max_bytes)
    if ctype is CompressionType.NONE:
        return bytes(data)
    try:
        if ctype is CompressionType.GZIP:
            return gzip_codec.decompress(data, max_bytes)
        if ctype is CompressionType.SNAPPY:
            return snappy_codec.decompress(data, max_bytes)
        if ctype is CompressionType.LZ4:
            return lz4_codec.decompress(data, magic, max_bytes)
        return zstd_codec.decompress(data, max_bytes)
    except KafkaFmtError:
        raise
    except Exception as e:  # a library error the codec module did not anticipate
        raise CompressionFramingError(f"{ctype.kafka_name}: {type(e).__name__}: {e}") from e
