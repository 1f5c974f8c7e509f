"""gzip's one-call path (the usual single-member stream inflated at once) gives exactly what the
replay of ``GZIPInputStream``'s 8 KiB reads gives: the same bytes, or the same error with the same
reason and position, for any stream (several members, trailing bytes on either side of the JDK's
26-byte rule and of the 8 KiB buffer boundary, corrupt or truncated bodies and trailers, the cap).

The replay itself is checked against the JDK's behaviour in test_compression.py and, through the
oracle, in test_records_vs_kafka.py.
"""
from __future__ import annotations

import os
import random
import struct
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkafmt.compression import gzip as gz
from kafkafmt.errors import KafkaFmtError

SETTINGS = settings(max_examples=int(os.environ.get("KAFKAFMT_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def member(data: bytes, level: int) -> bytes:
    """One member as GZIPOutputStream writes it; level 0 (stored blocks) puts the body's end where
    the test wants it relative to the 8 KiB input buffer."""
    deflater = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(data) + deflater.flush()
    return gz.GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data))


def outcome(fn, data: bytes, max_bytes: int):
    try:
        return "ok", bytes(fn(data, max_bytes))
    except KafkaFmtError as e:
        return type(e).__name__, e.reason, e.position


def replay_only(data: bytes, max_bytes: int):
    buf = memoryview(data)
    return gz._replay(buf, gz._parse_header(buf, 0), max_bytes)


payloads = st.one_of(
    st.integers(8192 - 48, 8192 + 48).map(lambda n: bytes(range(256)) * (n // 256) + bytes(n % 256)),
    st.integers(2 * 8192 - 48, 2 * 8192 + 16).map(lambda n: random.Random(n).randbytes(n)),
    st.binary(max_size=300),
    st.integers(0, 60_000).map(lambda n: b"kafka " * (n // 6)),
)


@st.composite
def streams(draw):
    members = [member(draw(payloads), draw(st.sampled_from([0, 0, 6])))
               for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3])))]
    data = b"".join(members)
    tail = draw(st.one_of(st.just(b""), st.just(b""), st.binary(max_size=40), st.just(gz.GZIP_MAGIC),
                          st.just(members[0][:draw(st.integers(1, 30))])))
    data = bytearray(data + tail)
    what = draw(st.sampled_from(["as is", "as is", "flip", "truncate"]))
    if what == "flip":
        at = draw(st.integers(len(gz.GZIP_HEADER), len(data) - 1))
        data[at] ^= 1 << draw(st.integers(0, 7))
    elif what == "truncate":
        del data[draw(st.integers(len(gz.GZIP_HEADER), len(data) - 1)):]
    return bytes(data)


@SETTINGS
@given(streams(), st.one_of(st.just(1 << 30), st.integers(0, 70_000)))
def test_one_call_path_equals_the_jdk_replay(data, max_bytes):
    assert outcome(gz.decompress, data, max_bytes) == outcome(replay_only, data, max_bytes)


def test_the_usual_stream_takes_the_one_call_path():
    data = b"kafka " * 10_000
    stream = member(data, 6)
    buf = memoryview(stream)
    assert gz._single_member(buf, len(gz.GZIP_HEADER), 1 << 20) == data
    # a second member, or more than 26 bytes left in the JDK's buffer, goes to the replay
    assert gz._single_member(memoryview(stream + stream), len(gz.GZIP_HEADER), 1 << 20) is None
    assert gz._single_member(memoryview(stream + bytes(19)), len(gz.GZIP_HEADER), 1 << 20) is None
    assert gz._single_member(buf, len(gz.GZIP_HEADER), len(data) - 1) is None  # over the cap


def test_zlib_ng_inflates_exactly_what_zlib_inflates():
    """The one-call path inflates with zlib-ng: over damaged deflate bodies (bit flips, cuts) it accepts
    exactly the streams zlib accepts, with the same output, and stops where zlib stops (the CRC after
    it is no excuse: a crafted stream could match it)."""
    from zlib_ng import zlib_ng

    rng = random.Random(4)
    bodies = [zlib.compress(bytes(rng.choice(b"abcdefgh ") for _ in range(rng.randint(0, 3000))), 6)[2:-4]
              for _ in range(30)]
    bodies += [zlib.compress(rng.randbytes(rng.randint(0, 500)), 6)[2:-4] for _ in range(10)]

    def inflate(module, body):
        d = module.decompressobj(-zlib.MAX_WBITS)
        try:
            out = d.decompress(body)
        except module.error:
            return "error"
        return ("end" if d.eof else "short", out, d.unused_data)

    seen = set()
    for _ in range(20_000):
        body = bytearray(rng.choice(bodies))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(body))
            body[at] ^= 1 << rng.randrange(8)
        if rng.random() < 0.2:
            del body[rng.randrange(len(body) + 1):]
        want = inflate(zlib, bytes(body))
        assert inflate(zlib_ng, bytes(body)) == want, bytes(body).hex()
        seen.add(want if want == "error" else want[0])
    assert seen == {"error", "end", "short"}


def test_header_fast_check_keeps_the_header_errors():
    """A header that starts like GZIPOutputStream's but is cut short, or one with flags, is still read
    by the header parser, which names the error and its position."""
    data = member(b"kafka" * 100, 6)
    for cut in range(4, len(gz.GZIP_HEADER)):
        assert outcome(gz.decompress, data[:cut], 1 << 20) == (
            "CompressionFramingError", "gzip: Unexpected end of gzip header", cut)
    with_name = data[:3] + bytes([8]) + data[4:10] + b"name\x00" + data[10:]
    assert outcome(gz.decompress, with_name, 1 << 20) == ("ok", b"kafka" * 100)
