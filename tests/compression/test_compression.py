"""kafkafmt.compression: Kafka's codecs with Kafka's framing.

Golden bytes come from Kafka's documented layouts (kafka-rules.md section 3), computed
independently here (xxhash, zlib, struct), plus a few streams observed from the real
kafka-clients 3.9.2 jars (snappy-java 1.1.10.5, lz4-java 1.10.1, zstd-jni 1.5.6-4, JDK 17).
"""
from __future__ import annotations

import gzip as stdlib_gzip
import io
import random
import struct
import zlib

import cramjam
import kafka.codec as kc
import lz4.block
import lz4.frame
import pytest
import xxhash
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkafmt.compression import check_codec_for_magic, compress, decompress
from kafkafmt.constants import DEFAULT_MAX_DECOMPRESSED_BYTES, CompressionType
from kafkafmt.errors import (
    CompressionFramingError,
    CorruptRecordError,
    DecompressionLimitError,
    IllegalArgumentError,
    KafkaFmtError,
    UnsupportedCompressionError,
)

GZIP, SNAPPY, LZ4, ZSTD, NONE = (CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4,
                                 CompressionType.ZSTD, CompressionType.NONE)
CODECS = [GZIP, SNAPPY, LZ4, ZSTD]
#: (codec, magic) pairs Kafka allows: zstd only with v2 (KIP-110).
CODEC_MAGIC = [(c, m) for c in CODECS for m in (0, 1, 2) if not (c is ZSTD and m < 2)]

LZ4_MAGIC_LE = bytes.fromhex("04224d18")
XERIAL_HEADER = bytes.fromhex("82534e41505059000000000100000001")
SAMPLE = b"hello kafka " * 10
MiB = 1024 * 1024


def rand_bytes(n: int, seed: int = 42) -> bytes:
    return random.Random(seed).randbytes(n)


def lz4_hc(descriptor: bytes) -> int:
    """The LZ4 frame HC byte, computed here from the LZ4 frame spec: (xxh32(seed 0) >> 8) & 0xFF."""
    return (xxhash.xxh32(descriptor, seed=0).intdigest() >> 8) & 0xFF


def xerial_chunks(stream: bytes) -> list[tuple[int, int]]:
    """(start, end) of each raw snappy block in a single, well-formed xerial stream."""
    assert stream[:16] == XERIAL_HEADER
    pos, out = 16, []
    while pos < len(stream):
        (size,) = struct.unpack_from(">i", stream, pos)
        out.append((pos + 4, pos + 4 + size))
        pos += 4 + size
    assert pos == len(stream)
    return out


def lz4_blocks(stream: bytes) -> list[tuple[bool, bytes]]:
    """(stored_raw, block bytes) for each block of a Kafka-written lz4 frame (7-byte header)."""
    pos, out = 7, []
    while True:
        (word,) = struct.unpack_from("<I", stream, pos)
        pos += 4
        if word == 0:
            assert pos == len(stream)
            return out
        size = word & 0x7FFFFFFF
        out.append((bool(word & 0x80000000), stream[pos:pos + size]))
        pos += size


# ------------------------------------------------------------------------------------------
# golden layouts


@pytest.mark.parametrize("magic", [1, 2])
def test_lz4_header_magic_1_and_2(magic):
    flg, bd = 0x60, 0x40
    hc = lz4_hc(bytes([flg, bd]))  # descriptor = FLG + BD
    assert hc == 0x82
    expected = LZ4_MAGIC_LE + bytes([flg, bd, hc])
    assert expected == bytes.fromhex("04224d18604082")
    assert compress(LZ4, b"", magic=magic) == expected + b"\x00\x00\x00\x00"  # header + end mark


def test_lz4_header_magic_0_keeps_kafka_3160_checksum():
    # KAFKA-3160: for message format v0 Kafka hashes magic + FLG + BD.
    hc = lz4_hc(LZ4_MAGIC_LE + b"\x60\x40")
    assert hc == 0x1A
    assert compress(LZ4, SAMPLE, magic=0)[:7] == bytes.fromhex("04224d1860401a")
    assert compress(LZ4, b"", magic=0) == bytes.fromhex("04224d1860401a00000000")


def test_lz4_incompressible_block_is_stored_raw():
    data = rand_bytes(1000)
    frame = compress(LZ4, data)
    # header, int32 LE (1000 | 0x80000000), the input verbatim, end mark
    assert frame == bytes.fromhex("04224d18604082") + struct.pack("<I", 1000 | 0x80000000) + data + b"\0\0\0\0"


def test_lz4_blocks_cover_64k_of_input_each():
    data = rand_bytes(200_000, seed=1)
    blocks = lz4_blocks(compress(LZ4, data))
    assert [len(b) for _, b in blocks] == [65536, 65536, 65536, 200_000 - 3 * 65536]
    assert all(raw for raw, _ in blocks)
    assert b"".join(b for _, b in blocks) == data

    text = ((b"record-%06d;" % 7) * 20_000)[:240_000]  # compressible
    blocks = lz4_blocks(compress(LZ4, text))
    assert len(blocks) == 4 and not any(raw for raw, _ in blocks)
    for i, (_, block) in enumerate(blocks):  # each block is independent, <= 64 KiB of input
        chunk = text[i * 65536:(i + 1) * 65536]
        assert lz4.block.decompress(block, uncompressed_size=len(chunk)) == chunk


def test_snappy_xerial_header_and_empty_stream():
    assert compress(SNAPPY, b"") == XERIAL_HEADER  # written lazily at close: header only
    assert XERIAL_HEADER == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    assert decompress(SNAPPY, XERIAL_HEADER) == b""


def test_snappy_chunks_cover_32k_of_input_each():
    data = (b"snappy chunk test " * 6000)[:100_000]
    stream = compress(SNAPPY, data)
    chunks = xerial_chunks(stream)
    assert len(chunks) == 4  # ceil(100000 / 32768)
    pieces = [cramjam.snappy.decompress_raw(stream[a:b]) for a, b in chunks]
    assert [len(p) for p in pieces] == [32768, 32768, 32768, 100_000 - 3 * 32768]
    assert b"".join(bytes(p) for p in pieces) == data


def test_gzip_member_layout():
    data = SAMPLE * 50
    member = compress(GZIP, data)
    # GZIPOutputStream on JDK 17: no FNAME, MTIME 0, XFL 0, OS 0xff
    assert member[:10] == bytes.fromhex("1f8b08000000000000ff")
    assert member[-8:] == struct.pack("<II", zlib.crc32(data), len(data))
    assert zlib.decompress(member[10:-8], -15) == data
    # default level -1 is zlib's 6
    assert member == compress(GZIP, data, level=6)
    assert stdlib_gzip.decompress(member) == data


def test_zstd_frame_layout():
    data = SAMPLE * 50
    frame = compress(ZSTD, data)
    assert frame[:4] == bytes.fromhex("28b52ffd")
    fhd = frame[4]
    assert fhd >> 6 == 0 and not fhd & 0x20  # streaming writer: no content size, not single-segment
    assert frame.endswith(bytes.fromhex("010000"))  # flush, then close: an empty last raw block
    assert zstandard.ZstdDecompressor().decompressobj().decompress(frame) == data


# Streams observed from kafka-clients 3.9.2 (Compression.*.wrapForOutput, JDK 17 / system zlib,
# snappy-java 1.1.10.5, lz4-java 1.10.1 = liblz4 1.10.0, zstd-jni 1.5.6-4).
KAFKA_OBSERVED = [
    (GZIP, 2, None, SAMPLE, "1f8b08000000000000ffcb48cdc9c957c84e4ccb4e54c8a0231b00e6bb635078000000"),
    (GZIP, 2, None, b"", "1f8b08000000000000ff03000000000000000000"),
    (LZ4, 2, None, SAMPLE, "04224d1860408216000000cf68656c6c6f206b61666b61200c00545061666b612000000000"),
    (LZ4, 0, None, SAMPLE, "04224d1860401a16000000cf68656c6c6f206b61666b61200c00545061666b612000000000"),
    (LZ4, 2, 12, SAMPLE, "04224d1860408216000000cf68656c6c6f206b61666b61200c00545061666b612000000000"),
    (LZ4, 1, None, b"", "04224d1860408200000000"),
    (ZSTD, 2, None, SAMPLE, "28b52ffd00589c00006068656c6c6f206b61666b61200100e9694902010000"),
    (ZSTD, 2, None, b"", "28b52ffd2000010000"),
    (SNAPPY, 2, None, SAMPLE,
     "82534e4150505900000000010000000100000014782c68656c6c6f206b61666b6120fe0c00ae0c00"),
    (SNAPPY, 2, None, b"", "82534e41505059000000000100000001"),
]


@pytest.mark.parametrize("codec,magic,level,data,hexstream", KAFKA_OBSERVED)
def test_matches_streams_written_by_kafka(codec, magic, level, data, hexstream):
    expected = bytes.fromhex(hexstream)
    assert compress(codec, data, magic=magic, level=level) == expected
    assert decompress(codec, expected, magic=magic) == data


# ------------------------------------------------------------------------------------------
# round trips


@st.composite
def payloads(draw):
    """Empty to ~200 KB: random, text-like, runs and mixes, so both raw and compressed blocks occur."""
    kind = draw(st.sampled_from(["binary", "random", "text", "zeros", "mixed"]))
    if kind == "binary":
        return draw(st.binary(max_size=3000))
    size = draw(st.sampled_from([0, 1, 100, 32767, 32768, 32769, 65535, 65536, 65537, 100_000, 200_000])
                | st.integers(0, 200_000))
    rng = random.Random(draw(st.integers(0, 2**32)))
    if kind == "random":
        return rng.randbytes(size)
    if kind == "text":
        return (bytes(rng.choice(b"abcdefgh kafka") for _ in range(min(size, 20_000))) * (size // 20_000 + 1))[:size]
    if kind == "zeros":
        return bytes(size)
    return (rng.randbytes(size // 3) + bytes(size // 3) + b"xyz" * (size // 9))[:size]


@pytest.mark.parametrize("codec,magic", CODEC_MAGIC, ids=lambda x: str(x))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=payloads())
def test_round_trip(codec, magic, data):
    stream = compress(codec, data, magic=magic)
    assert decompress(codec, stream, magic=magic) == data
    assert decompress(codec, memoryview(stream), magic=magic) == data


@pytest.mark.parametrize("codec,level", [(GZIP, 1), (GZIP, 9), (LZ4, 1), (LZ4, 12), (LZ4, 17), (ZSTD, 1),
                                         (ZSTD, -5), (ZSTD, 19)])
def test_round_trip_levels(codec, level):
    data = (b"level test %d " * 20_000) % tuple(range(20_000))
    stream = compress(codec, data, level=level)
    assert decompress(codec, stream) == data


def test_lz4_default_level_is_9_fast_compressor():
    rng = random.Random(7)
    data = bytes(rng.choice(b"abcdefgh ") for _ in range(100_000))
    assert compress(LZ4, data) == compress(LZ4, data, level=9)
    assert compress(LZ4, data, level=12) != compress(LZ4, data)


def test_none_returns_data_unchanged():
    assert compress(NONE, memoryview(b"abc")) == b"abc"
    assert type(compress(NONE, bytearray(b"abc"))) is bytes
    assert decompress(0, b"xyz") == b"xyz"


def test_accepts_memoryview_and_bytearray_input():
    data = SAMPLE * 100
    for codec in CODECS:
        assert decompress(codec, bytearray(compress(codec, memoryview(data)))) == data
        big = memoryview(b"##" + compress(codec, bytearray(data)))[2:]
        assert decompress(codec, big) == data


# ------------------------------------------------------------------------------------------
# peer interop: kafka-python's kafka.codec


def test_kafka_python_gzip_interop():
    data = SAMPLE * 300
    # kafka-python's gzip_encode uses Python's gzip module: level 9 (Kafka: -1 = 6), a real
    # MTIME and XFL 2 in the header (Kafka's GZIPOutputStream writes MTIME 0, XFL 0).
    theirs = kc.gzip_encode(data)
    assert theirs[:4] == b"\x1f\x8b\x08\x00" and theirs[8] == 2
    assert decompress(GZIP, theirs) == data
    assert kc.gzip_decode(compress(GZIP, data)) == data


def test_kafka_python_snappy_interop():
    data = rand_bytes(5000) + SAMPLE * 8000
    assert decompress(SNAPPY, kc.snappy_encode(data, xerial_compatible=True)) == data
    # raw (non-xerial) snappy: SnappyInputStream decodes input without the magic as one block
    assert decompress(SNAPPY, kc.snappy_encode(data[:50_000], xerial_compatible=False)) == data[:50_000]
    assert kc.snappy_decode(compress(SNAPPY, data)) == data
    # Divergence: kafka-python recognises xerial framing only when len > 16, so Kafka's empty
    # stream (the bare 16-byte header, SnappyOutputStream's lazy header) is not decoded by it;
    # it also cannot read concatenated xerial streams (chunk length 0x82534E41).
    with pytest.raises(Exception):
        kc.snappy_decode(compress(SNAPPY, b""))


def test_kafka_python_lz4_interop():
    data = rand_bytes(3000) + SAMPLE * 9000
    # kafka-python's lz4_encode is lz4.frame with the content-size flag (FLG 0x68); Kafka never
    # writes it but Lz4BlockInputStream skips it.
    theirs = kc.lz4_encode(data)
    assert theirs[4] & 0x08
    assert decompress(LZ4, theirs, magic=1) == data
    assert decompress(LZ4, theirs, magic=2) == data
    assert kc.lz4_decode(compress(LZ4, data, magic=2)) == data
    assert kc.lz4_decode(compress(LZ4, data, magic=1)) == data


def test_kafka_python_lz4_old_kafka_interop():
    data = SAMPLE * 9000
    old = kc.lz4_encode_old_kafka(data)  # KAFKA-3160 checksum, for 0.8/0.9 brokers
    assert old[:7] == bytes.fromhex("04224d1860401a")
    assert decompress(LZ4, old, magic=0) == data  # v0 readers skip the HC check
    with pytest.raises(CompressionFramingError, match="Stream frame descriptor corrupted"):
        decompress(LZ4, old, magic=1)
    assert kc.lz4_decode_old_kafka(compress(LZ4, data, magic=0)) == data
    # lz4 frame readers that check HC (kafka-python's lz4_decode) reject Kafka's v0 frames
    with pytest.raises(Exception):
        kc.lz4_decode(compress(LZ4, data, magic=0))


def test_kafka_python_zstd_interop():
    data = rand_bytes(4000) + SAMPLE * 9000
    # kafka-python compresses in one shot (content size in the frame); Kafka's stream does not.
    theirs = kc.zstd_encode(data)
    assert decompress(ZSTD, theirs) == data
    assert kc.zstd_decode(compress(ZSTD, data)) == data


# ------------------------------------------------------------------------------------------
# reader features


def test_snappy_raw_block_without_header():
    data = SAMPLE * 5000
    assert decompress(SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data
    assert decompress(SNAPPY, b"\x00") == b""  # a raw block of nothing
    short = bytes(cramjam.snappy.compress_raw(b"hi"))  # < 16 bytes: always raw
    assert decompress(SNAPPY, short) == b"hi"


def test_snappy_concatenated_streams():
    a, b = SAMPLE * 4000, rand_bytes(40_000)
    assert decompress(SNAPPY, compress(SNAPPY, a) + compress(SNAPPY, b)) == a + b
    assert decompress(SNAPPY, XERIAL_HEADER * 3) == b""
    assert decompress(SNAPPY, compress(SNAPPY, b"") + compress(SNAPPY, b"x")) == b"x"


def test_snappy_partial_chunk_length_at_end_is_ignored():
    # SnappyInputStream.hasNextChunk: fewer than 4 bytes where a chunk length is due = end of stream
    stream = compress(SNAPPY, SAMPLE)
    for extra in (b"\x00", b"\x00\x00", b"\xff\xff\xff"):
        assert decompress(SNAPPY, stream + extra) == SAMPLE


def test_gzip_concatenated_members():
    a, b = SAMPLE * 100, rand_bytes(20_000)
    assert decompress(GZIP, compress(GZIP, a) + compress(GZIP, b) + compress(GZIP, b"")) == a + b
    assert decompress(GZIP, compress(GZIP, a) + kc.gzip_encode(b)) == a + b


def test_gzip_optional_header_fields():
    data = SAMPLE * 20
    buf = io.BytesIO()
    with stdlib_gzip.GzipFile(filename="name.txt", fileobj=buf, mode="wb", mtime=1) as f:
        f.write(data)
    assert decompress(GZIP, buf.getvalue()) == data  # FNAME
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = deflater.compress(data) + deflater.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data))
    head = b"\x1f\x8b\x08\x06\0\0\0\0\0\xff" + b"\x03\x00abc"  # FEXTRA + FHCRC
    hcrc = struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    assert decompress(GZIP, head + hcrc + body + trailer) == data
    with pytest.raises(CompressionFramingError, match="Corrupt GZIP header") as e:
        decompress(GZIP, head + bytes([hcrc[0] ^ 1, hcrc[1]]) + body + trailer)
    assert e.value.position == len(head)
    # GZIPInputStream ignores the reserved flag bits
    assert decompress(GZIP, b"\x1f\x8b\x08\xe0\0\0\0\0\0\xff" + body + trailer) == data


def test_gzip_trailing_garbage_after_member_is_ignored():
    # GZIPInputStream.readTrailer: a malformed next member header is ignored
    member = compress(GZIP, SAMPLE)
    assert decompress(GZIP, member + b"garbage that is not a gzip header") == SAMPLE
    assert decompress(GZIP, member + b"\x1f") == SAMPLE


def test_zstd_concatenated_and_skippable_frames():
    a, b = SAMPLE * 100, rand_bytes(10_000)
    skippable = b"\x50\x2a\x4d\x18" + struct.pack("<I", 4) + b"abcd"
    assert decompress(ZSTD, compress(ZSTD, a) + skippable + compress(ZSTD, b)) == a + b
    assert decompress(ZSTD, b"") == b""  # ZstdInputStreamNoFinalizer: empty source = empty stream


def test_zstd_incomplete_frame_after_complete_one_is_ignored():
    # zstd-jni quirk: frameFinished stays true until the next 128 KiB + 3 source read
    frame = compress(ZSTD, SAMPLE)
    assert decompress(ZSTD, frame + frame[:10]) == SAMPLE
    with pytest.raises(CompressionFramingError, match="Truncated source"):
        decompress(ZSTD, frame[:-1])


def test_lz4_block_checksum_verified_and_content_checksum_skipped():
    data = SAMPLE * 2000
    with_block_sums = lz4.frame.compress(data, block_linked=False, block_checksum=True)
    assert decompress(LZ4, with_block_sums) == data
    bad = bytearray(with_block_sums)
    bad[-8] ^= 0xFF  # last block's checksum (before the end mark)
    with pytest.raises(CompressionFramingError, match="Block checksum mismatch"):
        decompress(LZ4, bytes(bad))
    with_content_sum = lz4.frame.compress(data, block_linked=False, content_checksum=True)
    bad = with_content_sum[:-4] + bytes(4)  # Kafka 3.9 reads the content checksum, never checks it
    assert decompress(LZ4, bad) == data


def test_lz4_larger_block_sizes_and_trailing_bytes():
    data = rand_bytes(600_000) + bytes(600_000)
    frame = lz4.frame.compress(data, block_linked=False, block_size=lz4.frame.BLOCKSIZE_MAX4MB)
    assert frame[5] == 0x70  # BD size code 7: 4 MiB blocks
    assert decompress(LZ4, frame) == data
    frame = lz4.frame.compress(data, block_linked=False, block_size=lz4.frame.BLOCKSIZE_MAX256KB)
    assert frame[5] == 0x50
    assert decompress(LZ4, frame) == data
    assert decompress(LZ4, compress(LZ4, SAMPLE) + b"after the end mark") == SAMPLE


# ------------------------------------------------------------------------------------------
# errors


def test_zstd_needs_magic_2():
    for magic in (0, 1):
        message = f"ZStandard compression is not supported for magic {magic}"
        with pytest.raises(UnsupportedCompressionError, match=message):
            check_codec_for_magic(ZSTD, magic)
        with pytest.raises(UnsupportedCompressionError):
            compress(ZSTD, b"x", magic=magic)
        with pytest.raises(UnsupportedCompressionError):
            decompress(4, compress(ZSTD, b"x"), magic=magic)
    check_codec_for_magic(ZSTD, 2)
    for codec in (NONE, GZIP, SNAPPY, LZ4):
        check_codec_for_magic(codec, 0)


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_id(codec_id):
    with pytest.raises(UnsupportedCompressionError, match=f"Unknown compression type id: {codec_id}"):
        compress(codec_id, b"x")
    with pytest.raises(UnsupportedCompressionError, match=f"Unknown compression type id: {codec_id}"):
        decompress(codec_id, b"x")
    with pytest.raises(UnsupportedCompressionError):
        check_codec_for_magic(codec_id, 2)


@pytest.mark.parametrize("codec,level,message", [
    (GZIP, 0, "gzip doesn't support given compression level: 0"),
    (GZIP, 10, "gzip doesn't support given compression level: 10"),
    (LZ4, 0, "lz4 doesn't support given compression level: 0"),
    (LZ4, 18, "lz4 doesn't support given compression level: 18"),
    (ZSTD, 23, "zstd doesn't support given compression level: 23"),
])
def test_invalid_levels(codec, level, message):
    with pytest.raises(IllegalArgumentError, match=message):
        compress(codec, b"x", level=level)


def test_lz4_header_errors():
    good = compress(LZ4, SAMPLE)

    def expect(stream, message, position, magic=2):
        with pytest.raises(CompressionFramingError, match=message) as e:
            decompress(LZ4, stream, magic=magic)
        assert e.value.position == position

    expect(good[:5], "Stream ended prematurely", 5)
    expect(b"", "Stream ended prematurely", 0)
    expect(b"\x04\x22\x4d\x19" + good[4:], r"Stream unsupported \(invalid magic bytes\)", 0)
    expect(good[:4] + b"\x20" + good[5:], "Version 0 is unsupported", 4)
    expect(good[:4] + b"\x40" + good[5:], "Dependent block stream is unsupported", 4)
    expect(good[:4] + b"\x61" + good[5:], "Reserved bits must be 0", 4)
    expect(good[:5] + b"\x30" + good[6:], "Block size value must be between 4 and 7", 5)
    expect(good[:5] + b"\x41" + good[6:], "Reserved2 field must be 0", 5)
    expect(good[:5] + b"\xc0" + good[6:], "Reserved3 field must be 0", 5)
    expect(good[:6], "Stream ended prematurely", 6)


def test_lz4_header_checksum_checked_for_magic_1_and_2_only():
    frame = bytearray(compress(LZ4, SAMPLE, magic=2))
    frame[6] ^= 0x55
    for magic in (1, 2):
        with pytest.raises(CompressionFramingError, match="Stream frame descriptor corrupted") as e:
            decompress(LZ4, bytes(frame), magic=magic)
        assert e.value.position == 6
    assert decompress(LZ4, bytes(frame), magic=0) == SAMPLE
    # a v0 frame (HC 0x1a) is only readable as v0
    v0 = compress(LZ4, SAMPLE, magic=0)
    assert decompress(LZ4, v0, magic=0) == SAMPLE
    with pytest.raises(CompressionFramingError, match="Stream frame descriptor corrupted"):
        decompress(LZ4, v0, magic=2)


def test_lz4_block_errors():
    header = bytes.fromhex("04224d18604082")
    with pytest.raises(CompressionFramingError, match="Block size 65537 exceeded max: 65536") as e:
        decompress(LZ4, header + struct.pack("<I", 65537) + bytes(65537) + bytes(4))
    assert e.value.position == 7
    with pytest.raises(CompressionFramingError, match="Stream ended prematurely"):
        decompress(LZ4, header + struct.pack("<I", 10 | 0x80000000) + b"short")
    with pytest.raises(CompressionFramingError, match="lz4: corrupt block"):
        decompress(LZ4, header + struct.pack("<I", 5) + b"\xff\xff\xff\xff\xff" + bytes(4))
    # bit 31 with size 0 is the end mark too (the size is masked first)
    assert decompress(LZ4, header + struct.pack("<I", 0x80000000)) == b""


def test_gzip_errors():
    member = compress(GZIP, SAMPLE)
    with pytest.raises(CompressionFramingError, match="Not in GZIP format") as e:
        decompress(GZIP, b"\x1f\x8c" + member[2:])
    assert e.value.position == 0
    with pytest.raises(CompressionFramingError, match="Unsupported compression method") as e:
        decompress(GZIP, member[:2] + b"\x09" + member[3:])
    assert e.value.position == 2
    bad_crc = member[:-8] + bytes([member[-8] ^ 1]) + member[-7:]
    with pytest.raises(CompressionFramingError, match="Corrupt GZIP trailer") as e:
        decompress(GZIP, bad_crc)
    assert e.value.position == len(member) - 8
    bad_size = member[:-1] + b"\x01"
    with pytest.raises(CompressionFramingError, match="Corrupt GZIP trailer"):
        decompress(GZIP, bad_size)
    with pytest.raises(CompressionFramingError, match="invalid deflate data"):
        decompress(GZIP, member[:10] + b"\xff" * 20 + member[-8:])
    with pytest.raises(CompressionFramingError):
        decompress(GZIP, b"")


def test_snappy_errors():
    with pytest.raises(CompressionFramingError, match="Cannot decompress empty stream"):
        decompress(SNAPPY, b"")
    with pytest.raises(CompressionFramingError, match="chunkSize is too big or negative : -1") as e:
        decompress(SNAPPY, XERIAL_HEADER + b"\xff\xff\xff\xff" + bytes(8))
    assert e.value.position == 16
    with pytest.raises(CompressionFramingError, match="greater than max configured chunk size"):
        decompress(SNAPPY, XERIAL_HEADER + struct.pack(">i", 512 * MiB + 1) + bytes(8))
    with pytest.raises(CompressionFramingError, match="failed to read chunk"):
        decompress(SNAPPY, XERIAL_HEADER + struct.pack(">i", 100) + bytes(8))
    with pytest.raises(CompressionFramingError, match="Insufficient header size in a concatenated block"):
        decompress(SNAPPY, compress(SNAPPY, SAMPLE) + XERIAL_HEADER[:10])
    version_0 = XERIAL_HEADER[:8] + struct.pack(">ii", 0, 1)
    with pytest.raises(CompressionFramingError, match="incompatible codec version 0"):
        decompress(SNAPPY, compress(SNAPPY, SAMPLE) + version_0)
    assert decompress(SNAPPY, version_0) == b""  # the first header's version is not checked
    with pytest.raises(CompressionFramingError, match="snappy"):
        decompress(SNAPPY, b"not snappy at all, and longer than 16 bytes")
    with pytest.raises(CompressionFramingError):  # chunk length 0: an empty raw block is invalid
        decompress(SNAPPY, XERIAL_HEADER + bytes(4))


def test_errors_are_corrupt_record_errors():
    assert issubclass(CompressionFramingError, CorruptRecordError)
    assert issubclass(DecompressionLimitError, CorruptRecordError)


# ------------------------------------------------------------------------------------------
# hostile input


TRUNCATION_DATA = SAMPLE * 3 + rand_bytes(64) + bytes(100)


@pytest.mark.parametrize("codec,magic", [(GZIP, 2), (LZ4, 2), (LZ4, 0), (ZSTD, 2)])
def test_truncated_streams_fail_at_every_position(codec, magic):
    stream = compress(codec, TRUNCATION_DATA, magic=magic)
    for cut in range(len(stream)):
        if codec is ZSTD and cut == 0:
            assert decompress(codec, b"") == b""  # zstd-jni: no frame at all is an empty stream
            continue
        with pytest.raises(CompressionFramingError) as e:
            decompress(codec, stream[:cut], magic=magic)
        assert e.value.position is not None and 0 <= e.value.position <= cut
    assert decompress(codec, stream, magic=magic) == TRUNCATION_DATA


def test_truncated_snappy_fails_except_at_chunk_boundaries():
    data = (SAMPLE * 400)[:40_000]  # two chunks
    stream = compress(SNAPPY, data)
    (s1, e1), (s2, e2) = xerial_chunks(stream)
    assert e2 == len(stream)
    for cut in range(len(stream)):
        prefix = stream[:cut]
        if 16 <= cut < s1:
            expected = b""  # header, then < 4 bytes of chunk length: end of stream
        elif e1 <= cut < s2:
            expected = data[:32768]
        else:
            expected = None
        if expected is None:
            with pytest.raises(CompressionFramingError):
                decompress(SNAPPY, prefix)
        else:
            assert decompress(SNAPPY, prefix) == expected


@pytest.fixture(scope="module")
def bombs():
    zeros = bytes(10 * MiB)
    return {codec: compress(codec, zeros) for codec in CODECS}


@pytest.mark.parametrize("codec", CODECS)
def test_decompression_bomb_is_capped(codec, bombs):
    bomb = bombs[codec]
    assert len(bomb) < MiB
    with pytest.raises(DecompressionLimitError):
        decompress(codec, bomb, max_bytes=MiB)
    with pytest.raises(DecompressionLimitError):
        decompress(codec, bomb, max_bytes=10 * MiB - 1)
    assert len(decompress(codec, bomb, max_bytes=10 * MiB)) == 10 * MiB


def test_snappy_declared_length_checked_before_decoding():
    # raw block declaring 100 MiB with an almost empty body: refused before any allocation
    varint = bytes([0x80, 0x80, 0x80, 0x32])  # 100 MiB
    with pytest.raises(DecompressionLimitError) as e:
        decompress(SNAPPY, varint + b"\x00" * 20, max_bytes=MiB)
    assert e.value.position == 0
    with pytest.raises(CompressionFramingError, match="impossible"):
        decompress(SNAPPY, varint + b"\x00" * 20)
    chunk = varint + b"\x00" * 20
    with pytest.raises(DecompressionLimitError) as e:
        decompress(SNAPPY, XERIAL_HEADER + struct.pack(">i", len(chunk)) + chunk, max_bytes=MiB)
    assert e.value.position == 20


def test_default_cap():
    assert DEFAULT_MAX_DECOMPRESSED_BYTES == 256 * MiB
    with pytest.raises(IllegalArgumentError):
        decompress(GZIP, compress(GZIP, b"x"), max_bytes=-1)
    assert decompress(GZIP, compress(GZIP, b""), max_bytes=0) == b""


_FUZZ_BASE = {(c, m): compress(c, SAMPLE * 30 + rand_bytes(200), magic=m) for c, m in CODEC_MAGIC}


@pytest.mark.parametrize("codec,magic", CODEC_MAGIC, ids=lambda x: str(x))
@settings(max_examples=150, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
       cut=st.integers(0, 10_000), junk=st.binary(max_size=64))
def test_mutated_streams_only_raise_kafkafmt_errors(codec, magic, edits, cut, junk):
    stream = bytearray(_FUZZ_BASE[(codec, magic)])
    for pos, value in edits:
        stream[pos % len(stream)] = value
    candidates = [bytes(stream), bytes(stream[:cut % (len(stream) + 1)]) + junk, junk]
    for candidate in candidates:
        try:
            out = decompress(codec, candidate, magic=magic, max_bytes=MiB)
        except KafkaFmtError:
            continue
        assert isinstance(out, bytes) and len(out) <= MiB
