"""Each Kafka line's codecs against the libraries its release shipped (rows ``codec.*`` of kafka_lines).

* the versions: each release's kafka-clients pom names the lz4-java, snappy-java and zstd-jni the rows say;
* lz4: kafkafmt's blocks for a line are byte for byte those of that line's lz4-java jar, its JNI fast compressor
  (``LZ4Factory.fastestInstance().fastCompressor()``, what ``KafkaLZ4BlockOutputStream`` calls), on random,
  repetitive and text-like inputs and on real message sets; the inputs include ones where liblz4 r100, r123 and
  1.10 write different blocks, so a line compressed with another line's library fails here;
* gzip: one compressor for every line, equal to the JDK's ``GZIPOutputStream`` driven as each line's writers
  drive it (row ``codec.gzip_stream``: deflate buffer, a ``BufferedOutputStream`` in front, an entry written as
  offset, size and message);
* snappy: the chunks a line's ``SnappyOutputStream`` cuts (row ``codec.snappy_block``) are snappy-java's: same
  number, each holding the same input, and every line's snappy is its snappy-java's byte for byte;
* zstd: every frame's header (the window its libzstd declares) is the line's zstd-jni's, driven as the release's
  writer drives it; the whole frames are where kafkafmt's libzstd is the zstd-jni's (``zstd.exact``: 4.4), and
  are not on some inputs where it is not (2.1, 2.8, 3.9: their libzstd's block encoder is not modelled).
"""
from __future__ import annotations

import random
import re

import pytest

import head_start
from ci_mode import skip_or_fail
from kafkafmt import kafka_lines
from kafkafmt.compression import compress, lz4_block
from kafkafmt.compression import snappy as snappy_codec
from kafkafmt.compression import zstd as zstd_codec
from kafkafmt.constants import CompressionType
from kafkafmt.records.builder import build_records

pytestmark = pytest.mark.java

#: the release of each line whose pom is read (the rig's releases, and 1.0.2, 2.0.1, 2.1.1, 3.9.2, 4.4.0)
RELEASE_OF = {"0.9": "0.9.0.1", "0.10.0": "0.10.0.1", "0.10.1": "0.10.1.1", "0.10.2": "0.10.2.2", "0.11": "0.11.0.3",
              "1.0": "1.0.2", "1.1": "1.1.1", "2.0": "2.0.1", "2.1": "2.1.1", "2.8": "2.8.2", "3.9": "3.9.2",
              "4.4": "4.4.0"}
assert set(RELEASE_OF) == set(kafka_lines.KAFKA_LINES)


def _prefetch() -> None:
    """Every pom and jar these tests read, brought into the local Maven repository by one Maven run (one run
    per artifact costs seconds each on a fresh machine), in the ``live`` lane of tests/head_start.py from the
    session's start; each test still gets its own through ``codec_jars``, and one Maven could not give fails
    or skips that test alone, as before."""
    from kafkarig import codec_jars as cj

    wanted = [cj.kafka_clients_pom_coordinates(r) for r in RELEASE_OF.values()] + list(cj.DRIVER_JARS)
    for line in kafka_lines.KAFKA_LINES:
        wanted.append(cj.lz4_java_coordinates(kafka_lines.value("codec.lz4_java", line)))
        wanted.append(cj.snappy_java_coordinates(kafka_lines.value("codec.snappy_java", line)))
        if kafka_lines.value("codec.zstd_jni", line):
            wanted.append(cj.zstd_jni_coordinates(kafka_lines.value("codec.zstd_jni", line)))
    cj.prefetch(wanted)


head_start.job("codec-jars", module=__name__, fixture="codec_jars", lane="live", commands=lambda tmp: [],
               before=_prefetch)


@pytest.fixture(scope="module")
def codec_jars():
    """kafkarig.codec_jars, once the head-start job has brought the artifacts in (skipped without Java)."""
    import shutil

    if shutil.which("java") is None:
        skip_or_fail("Java 17 is not installed")
    head_start.result("codec-jars")
    from kafkarig import codec_jars
    return codec_jars


def _pom_version(pom: str, artifact: str) -> str | None:
    m = re.search(rf"<artifactId>{re.escape(artifact)}</artifactId>\s*<version>([^<]+)</version>", pom)
    return m.group(1) if m else None


@pytest.mark.parametrize("line", kafka_lines.KAFKA_LINES)
def test_the_rows_name_the_libraries_of_the_release_pom(line, codec_jars):
    cj = codec_jars
    try:
        pom = cj.kafka_clients_pom(RELEASE_OF[line])
    except Exception as e:  # kafkarig.releases.ReleaseError: no Maven, or the pom cannot be had
        skip_or_fail(str(e))
    lz4 = _pom_version(pom, "lz4") or _pom_version(pom, "lz4-java")
    assert lz4 == kafka_lines.value("codec.lz4_java", line)
    assert _pom_version(pom, "snappy-java") == kafka_lines.value("codec.snappy_java", line)
    assert _pom_version(pom, "zstd-jni") == kafka_lines.value("codec.zstd_jni", line)
    assert lz4 in lz4_block.LIBLZ4_OF_LZ4_JAVA


def _inputs() -> list[bytes]:
    """Random, repetitive, text-like and mixed blocks of 0 … 64 KiB, and real v0/v1/v2 message sets."""
    r = random.Random(20261202)
    out = [b"", b"x", b"hello kafka " * 10, bytes(65536), r.randbytes(65536)]
    for i in range(160):
        n = r.choice([13, 16, 20, 31, 64, 255, 300, 1000, 4096, 30000, 65536]) if i % 2 else r.randrange(65537)
        kind = i % 4
        if kind == 0:
            alpha = bytes(r.sample(range(256), r.choice([2, 3, 5, 9, 30])))
            out.append(bytes(r.choice(alpha) for _ in range(n)))
        elif kind == 1:
            unit = r.randbytes(r.randrange(1, 40))
            b = bytearray((unit * (n // len(unit) + 1))[:n])
            for _ in range(r.randrange(20)):
                if n:
                    b[r.randrange(n)] = r.randrange(256)
            out.append(bytes(b))
        elif kind == 2:
            words = [r.randbytes(r.randrange(3, 9)) for _ in range(50)]
            out.append(b"".join(r.choice(words) for _ in range(n // 3 + 1))[:n])
        else:
            parts = []
            while sum(map(len, parts)) < n:
                parts.append(r.choice([b"value-%d" % r.randrange(10 ** 5), b"k%d" % r.randrange(999),
                                       bytes(r.randrange(30)), r.randbytes(r.randrange(12))]))
            out.append(b"".join(parts)[:n])
    for magic in (0, 1, 2):
        for count in (3, 40, 1000):
            recs = [(-1 if magic == 0 else 1700000000000 + j, b"k%d" % j, b"value-%d" % (j * 7919 % 1000))
                    for j in range(count)]
            out.append(build_records(recs, magic=magic, compression=CompressionType.NONE)[:65536])
    return out


@pytest.fixture(scope="module")
def inputs():
    return _inputs()


@pytest.fixture(scope="module")
def jni_blocks(inputs, codec_jars):
    """lz4-java version → its JNI fast compressor's block of each input."""
    cj = codec_jars
    out = {}
    for version in sorted({kafka_lines.value("codec.lz4_java", line) for line in kafka_lines.KAFKA_LINES}):
        try:
            jar = cj.lz4_java_jar(version)
        except Exception as e:
            skip_or_fail(str(e))
        out[version] = cj.run_driver("lz4", [jar], inputs)
    return out


@pytest.mark.parametrize("line", kafka_lines.KAFKA_LINES)
def test_lz4_blocks_of_each_line_are_its_lz4_java(line, inputs, jni_blocks):
    version = kafka_lines.value("codec.lz4_java", line)
    theirs = jni_blocks[version]
    for data, block in zip(inputs, theirs):
        frame = compress(CompressionType.LZ4, data, magic=1, line=line)
        if len(block) >= len(data):  # KafkaLZ4BlockOutputStream stores an incompressible block raw
            continue
        assert frame[7:11] == len(block).to_bytes(4, "little") and frame[11:-4] == block, (line, len(data))


def test_the_lz4_inputs_tell_the_liblz4_releases_apart(inputs, jni_blocks):
    """Kept honest: on these inputs r100, r123 and 1.8.3+ each write blocks the others do not."""
    old, r123, new = jni_blocks["1.2.0"], jni_blocks["1.3.0"], jni_blocks["1.10.1"]
    assert sum(a != c for a, c in zip(old, new)) >= 5
    assert sum(b != c for b, c in zip(r123, new)) >= 2
    assert sum(a != b for a, b in zip(old, r123)) >= 2


#: writes as Kafka's writers make them: an entry's offset (8), size (4), then its message (here 30 bytes)
KAFKA_WRITES = "8,4,30"


@pytest.mark.parametrize("line", kafka_lines.KAFKA_LINES)
def test_gzip_of_each_line_is_the_jdk_driven_as_its_writers_do(line, inputs, codec_jars):
    cj = codec_jars
    buffer, outer = kafka_lines.value("codec.gzip_stream", line)
    sample = inputs[::8]
    theirs = cj.run_driver(f"gzip:{buffer}:{outer}:{KAFKA_WRITES}", [], sample)
    for data, stream in zip(sample, theirs):
        assert compress(CompressionType.GZIP, data, line=line) == stream


@pytest.mark.parametrize("line", kafka_lines.KAFKA_LINES)
def test_snappy_of_each_line_is_its_snappy_java_byte_for_byte(line, inputs, codec_jars):
    """Every non-empty input (an empty stream, which Kafka never compresses, is no bytes at all with snappy-java
    1.1.7.x and the 16-byte header with the others)."""
    cj = codec_jars
    try:
        jar = cj.snappy_java_jar(kafka_lines.value("codec.snappy_java", line))
    except Exception as e:
        skip_or_fail(str(e))
    block = kafka_lines.value("codec.snappy_block", line)
    sample = [d for d in inputs if d]
    theirs = cj.run_driver(f"snappy:{block}", [jar], sample)
    for data, stream in zip(sample, theirs):
        assert compress(CompressionType.SNAPPY, data, line=line) == stream, (line, len(data))


def test_the_snappy_inputs_tell_the_snappy_releases_apart(inputs):
    """Kept honest: on these inputs snappy 1.1.2 (0.11), 1.1.8 (2.8) and 1.1.10 (3.9) write different chunks."""
    def differ(a, b):
        return sum(compress(CompressionType.SNAPPY, d, line=a) != compress(CompressionType.SNAPPY, d, line=b)
                   for d in inputs)
    assert differ("3.9", "2.8") >= 10 and differ("0.11", "2.8") >= 10 and differ("0.11", "3.9") >= 10


@pytest.mark.parametrize("line", ["0.10.1", "0.10.2", "0.11"])
def test_snappy_chunks_of_each_line_are_snappy_java(line, inputs, codec_jars):
    cj = codec_jars
    block = kafka_lines.value("codec.snappy_block", line)
    try:
        jar = cj.snappy_java_jar(kafka_lines.value("codec.snappy_java", line))
    except Exception as e:
        skip_or_fail(str(e))
    sample = [d for d in inputs if len(d) > 3000][:6]
    theirs = cj.run_driver(f"snappy:{block}", [jar], sample)
    for data, stream in zip(sample, theirs):
        ours = compress(CompressionType.SNAPPY, data, line=line)
        assert [b for _, b in _chunks(ours)] == [b for _, b in _chunks(stream)]
        assert len(_chunks(ours)) == -(-len(data) // block)


def _chunks(stream: bytes) -> list[tuple[int, bytes]]:
    """(compressed size, decompressed bytes) of each chunk of a one-header xerial stream."""
    import cramjam

    pos, out = 16, []
    while pos < len(stream):
        n = int.from_bytes(stream[pos:pos + 4], "big")
        out.append((n, bytes(cramjam.snappy.decompress_raw(stream[pos + 4:pos + 4 + n]))))
        pos += 4 + n
    assert stream[:16] == snappy_codec.XERIAL_HEADER
    return out


#: how a line's writer opens zstd-jni: 2.1.1's CompressionType.ZSTD a bare ZstdOutputStream(out)
#: (ZstdConstructors.OUTPUT); 2.8.2's ZstdFactory.wrapForOutput (and 3.x, 4.x's ZstdCompression) a
#: ZstdOutputStreamNoFinalizer behind a 16 KiB BufferedOutputStream
ZSTD_WRITER = {"2.1": ("ZstdOutputStream", 0)}
ZSTD_LINES = [line for line in kafka_lines.KAFKA_LINES if kafka_lines.value("codec.zstd_jni", line)]


@pytest.mark.parametrize("line", ZSTD_LINES)
def test_zstd_of_each_line_against_its_zstd_jni(line, inputs, codec_jars):
    """Every non-empty input: the frame header (magic, descriptor, window: libzstd 1.3.7 declares 1 MiB at level 3,
    later ones 2 MiB) is the jar's; the whole frame is wherever ``zstd.exact`` says, and kept honest where it says
    not (libzstd 1.3.7, 1.4.9 and 1.5.6 encode some of these inputs' blocks otherwise than kafkafmt's 1.5.7)."""
    cj = codec_jars
    version = kafka_lines.value("codec.zstd_jni", line)
    try:
        jar = cj.zstd_jni_jar(version)
    except Exception as e:
        skip_or_fail(str(e))
    cls, outer = ZSTD_WRITER.get(line, ("ZstdOutputStreamNoFinalizer", 16384))
    sample = [d for d in inputs if d]
    theirs = cj.run_driver(f"zstd:{cls}:{outer}:{KAFKA_WRITES}", [jar], sample)
    ours = [compress(CompressionType.ZSTD, d, line=line) for d in sample]
    assert [o[:6] for o in ours] == [t[:6] for t in theirs]
    same = sum(o == t for o, t in zip(ours, theirs))
    if zstd_codec.exact(version):
        assert same == len(sample), (line, version)
    else:
        assert 0 < same < len(sample), (line, version, same)
