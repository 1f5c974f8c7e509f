"""The compiled columnar decoder agrees with the pure-Python reference decoder on every column, and
corrupt input gets the same error at the same position from both (issue 8 part 2, issue 12 item 5).

Record sets come from kafkafmt's builder (itself checked byte-for-byte against Kafka's
``MemoryRecordsBuilder`` in test_records_vs_kafka.py); every magic and codec, null and empty keys and
values, headers (non-UTF-8 keys too), control batches, negative and extreme timestamps, and base
offsets anywhere in the int64 range (so offsets wrap as Java's long does).
"""
from __future__ import annotations

import os
import struct
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkafmt.constants import CompressionType, ControlRecordType, TimestampType
from kafkafmt.crc import crc32, crc32c
from kafkafmt.errors import CorruptRecordError, KafkaFmtError
from kafkafmt.layout import DEFAULT_BATCH, DEFAULT_BATCH_CRC_START
from kafkafmt.records import RECORD_SCHEMA, MemoryRecords, batches_table, columnar, decode_records, records_table
from kafkafmt.records.builder import MemoryRecordsBuilder, end_txn_marker
from kafkafmt.records.record import Header

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
#: KAFKAFMT_EXAMPLES=5000 for a long campaign; the default keeps this file within its test-time budget
SETTINGS = settings(max_examples=int(os.environ.get("KAFKAFMT_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

blobs = st.one_of(st.none(), st.just(b""), st.binary(min_size=1, max_size=40))
header_keys = st.one_of(st.text(max_size=8), st.binary(max_size=6).map(lambda b: b.decode("utf-8", "surrogateescape")))
headers = st.lists(st.tuples(header_keys, blobs).map(lambda kv: Header(*kv)), max_size=3)


@st.composite
def batch(draw):
    """One batch (v2) or message set (v0/v1), built as Kafka's builder would."""
    magic = draw(st.sampled_from([0, 1, 2]))
    codecs = [0, 1, 2, 3, 4] if magic == 2 else [0, 1, 2, 3]
    codec = CompressionType(draw(st.sampled_from(codecs)))
    if magic == 2 and draw(st.integers(0, 9)) == 0:
        return end_txn_marker(base_offset=draw(st.integers(0, 2**40)), timestamp=draw(st.integers(0, 2**41)),
                              partition_leader_epoch=3, producer_id=7, producer_epoch=1,
                              control_type=draw(st.sampled_from([ControlRecordType.ABORT, ControlRecordType.COMMIT])),
                              coordinator_epoch=draw(st.integers(0, 100)))
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else draw(
        st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME]))
    extended = magic == 2 and draw(st.booleans())  # KIP-228: any negative timestamp
    ts = st.integers(INT64_MIN, INT64_MAX) if extended else st.one_of(
        st.just(-1), st.integers(0, INT64_MAX), st.integers(0, 2**42))
    kw = {}
    if magic == 2 and draw(st.booleans()):
        kw = dict(producer_id=draw(st.integers(0, 2**40)), producer_epoch=draw(st.integers(0, 32767)),
                  base_sequence=draw(st.integers(0, 2**31 - 1)))
    b = MemoryRecordsBuilder(magic, codec, ts_type, draw(st.integers(0, 2**40)),
                             log_append_time=draw(st.integers(0, INT64_MAX)), timestamp_extended=extended, **kw)
    for _ in range(draw(st.integers(1, 5))):
        b.append(-1 if magic == 0 else draw(ts), draw(blobs), draw(blobs), draw(headers) if magic == 2 else ())
    data = bytearray(b.build())
    if magic == 2 and draw(st.booleans()):  # baseOffset is outside the CRC: any int64 stays valid
        DEFAULT_BATCH.put(data, 0, "baseOffset", draw(st.sampled_from([INT64_MAX, INT64_MAX - 1, INT64_MIN, -1])))
    elif magic < 2 and draw(st.integers(0, 3)) == 0:  # a legacy entry's offset is outside its CRC too
        struct.pack_into(">q", data, 0, draw(st.sampled_from([INT64_MAX, INT64_MIN, -1, 0])))
    return bytes(data)


record_sets = st.lists(batch(), min_size=1, max_size=4).map(b"".join)


def outcome(data: bytes, **kw):
    """The table, or the error as (class, reason, position)."""
    try:
        return records_table(data, **kw)
    except KafkaFmtError as e:
        return type(e), e.reason, e.position


def assert_same(data: bytes, **kw):
    fast = outcome(data, **kw)
    ref = outcome(data, engine="reference", **kw)
    if isinstance(ref, pa.Table):
        assert isinstance(fast, pa.Table), fast
        assert fast.schema == RECORD_SCHEMA
        for name in RECORD_SCHEMA.names:
            assert fast.column(name).to_pylist() == ref.column(name).to_pylist() if name != "timestamp" else \
                fast.column(name).cast(pa.int64()).equals(ref.column(name).cast(pa.int64())), name
    else:
        assert fast == ref
    return fast


@SETTINGS
@given(record_sets)
def test_fast_and_reference_agree_on_every_column(data):
    t = assert_same(data)
    if isinstance(t, pa.Table):  # and both agree with the per-record objects of MemoryRecords
        recs = list(MemoryRecords(data).records())
        assert t.column("offset").to_pylist() == [r.offset for r in recs]
        assert t.column("timestamp_ms").to_pylist() == [r.timestamp for r in recs]
        assert t.column("key").to_pylist() == [r.key for r in recs]
        assert t.column("value").to_pylist() == [r.value for r in recs]
        assert t.column("is_control").to_pylist() == [r.is_control for r in recs]


def _recrc(data: bytearray) -> None:
    """Recompute every top-level CRC, so that mutations reach the record decoders."""
    pos = 0
    while len(data) - pos >= 17:
        size = struct.unpack_from(">i", data, pos + 8)[0]
        end = pos + 12 + size
        if size < 14 or end > len(data):
            return
        if data[pos + 16] == 2 and end - pos >= 61:
            DEFAULT_BATCH.put(data, pos, "crc", crc32c(bytes(data[pos + DEFAULT_BATCH_CRC_START:end])))
        elif data[pos + 16] in (0, 1):
            struct.pack_into(">I", data, pos + 12, crc32(bytes(data[pos + 16:end])))
        pos = end


@SETTINGS
@given(record_sets, st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
       st.booleans(), st.integers(0, 10**6))
def test_corrupt_input_same_error_same_position(data, flips, recrc, cut):
    d = mutate(data, flips, recrc, cut)
    assert_same(d, check_crc=False)
    assert_same(d)
    assert_same_records(d)


def mutate(data: bytes, flips, recrc: bool, cut: int) -> bytes:
    d = bytearray(data)
    for where, value in flips:
        d[where % len(d)] = value
    if cut % 5 == 0:
        del d[cut % len(d):]
    if recrc:
        _recrc(d)
    return bytes(d)


@SETTINGS
@given(st.lists(record_sets, min_size=1, max_size=3).map(b"".join),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3), st.booleans(),
       st.integers(0, 10**6), st.integers(1, 400), st.booleans(), st.booleans())
def test_values_gathered_as_rows_fill_agree_for_any_group_size(data, flips, recrc, cut, group, keys, values):
    """records_table copies keys and values as decode_v2 reads them (a failed batch's copies are
    overwritten) and right after each call of the v0/v1 kernels (about ``_GATHER_BYTES`` of messages at a
    time): with groups of a few bytes (every message its own call, failures in between) and chunks
    of a few bytes, every column and every error is still the reference's."""
    d = mutate(data, flips, recrc, cut) if flips else data
    with mock.patch.object(columnar, "_GATHER_BYTES", group):
        assert_same(d, include_keys=keys, include_values=values, check_crc=False)
        assert_same(d, chunk_bytes=group)


def record_stream(records):
    """The records a generator yields, then its error as (class, reason, position) or None."""
    out = []
    try:
        for r in records:
            out.append(r)
    except KafkaFmtError as e:
        return out, (type(e), e.reason, e.position)
    return out, None


def assert_same_records(data: bytes):
    """decode_records (compiled) yields Record objects equal, field by field, to the reference's, and
    the same records before the same error."""
    assert record_stream(decode_records(data)) == record_stream(MemoryRecords(data).records())
    assert record_stream(decode_records(data, chunk_bytes=1)) == record_stream(MemoryRecords(data).records())


@SETTINGS
@given(record_sets)
def test_deep_decode_objects_equal_the_reference(data):
    assert_same_records(data)


@SETTINGS
@given(record_sets, st.booleans(), st.booleans(), st.booleans())
def test_options_agree(data, keys, values, control):
    t = assert_same(data, include_keys=keys, include_values=values, include_headers=keys, control_records=control,
                    topic="t", partition=3)
    if isinstance(t, pa.Table):
        assert set(t.column("topic").to_pylist()) <= {"t"} and set(t.column("partition").to_pylist()) <= {3}
        if not control:
            assert not any(t.column("is_control").to_pylist())


def test_non_utf8_header_key_is_kept_losslessly():
    raw = b"\xffk\xc3"  # not UTF-8
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    b.append(1, b"k", b"v", [Header(raw.decode("utf-8", "surrogateescape"), b"x"), Header("ok", None)])
    b.append(2, b"k", b"v", [Header("plain", b"y")])
    for engine in ("fast", "reference"):
        t = records_table(b.build(), engine=engine)
        # headers.key reads as Java's new String(bytes, UTF_8): each bad sequence is U+FFFD
        assert t.column("headers").to_pylist() == [[{"key": "\ufffdk\ufffd", "value": b"x"}, {"key": "ok", "value": None}],
                                                   [{"key": "plain", "value": b"y"}]]
        assert t.column("header_key_bytes").to_pylist() == [[raw, b"ok"], None]


@pytest.mark.parametrize("raw", [
    b"\xed\xa0\x80", b"\xed\xbf\xbf",  # UTF-16 surrogates encoded: not UTF-8
    b"\xc0\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xf0\x8f\xbf\xbf",  # overlong
    b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff",  # above U+10FFFF, never a lead byte
    b"a\xe2\x82", b"\x80",  # truncated, a lone continuation byte
    b"\xef\xbf\xbf", b"\xed\x9f\xbf", b"\xf4\x8f\xbf\xbf", b"\xe2\x82\xac", b"",  # well-formed edges
])
def test_header_key_utf8_edges_read_as_the_reference(raw):
    """The fast path's UTF-8 check (Arrow's cast to string) accepts exactly what the reference does."""
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    b.append(1, b"k", b"v", [Header(raw.decode("utf-8", "surrogateescape"), b"x"), Header("ok", None)])
    data = b.build()
    fast = records_table(data)
    assert fast.equals(records_table(data, engine="reference"))
    assert fast.column("header_key_bytes").to_pylist() == [None if _utf8(raw) else [raw, b"ok"]]


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_offsets_wrap_as_java_long():
    b = MemoryRecordsBuilder(2, CompressionType.LZ4, TimestampType.CREATE_TIME, 0)
    for i in range(3):
        b.append(i, None, b"v")
    data = bytearray(b.build())
    DEFAULT_BATCH.put(data, 0, "baseOffset", INT64_MAX)
    for engine in ("fast", "reference"):
        assert records_table(bytes(data), engine=engine).column("offset").to_pylist() == [INT64_MAX, INT64_MIN,
                                                                                          INT64_MIN + 1]
    assert batches_table(bytes(data)).column("last_offset").to_pylist() == [INT64_MIN + 1]


def test_crc_invalid_batch_raises_or_is_flagged():
    good = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    good.append(5, b"k", b"value")
    data = bytearray(good.build() * 2)
    data[len(data) - 2] ^= 1  # the last value byte of the second batch ("value" -> "valud")
    with pytest.raises(CorruptRecordError, match=r"Record is corrupt \(stored crc = \d+, computed crc = \d+\)") as e:
        records_table(bytes(data))
    assert e.value.position == len(data) // 2
    t = records_table(bytes(data), check_crc=False)
    assert t.column("crc_valid").to_pylist() == [True, False]
    assert t.column("value").to_pylist() == [b"value", b"valud"]


def test_spark_columns():
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.LOG_APPEND_TIME, 10, log_append_time=1_700_000_000_000)
    b.append(1, None, b"v", [Header("h", b"1")])
    t = records_table(b.build(), topic="orders", partition=2)
    spark = pa.schema([("key", pa.binary()), ("value", pa.binary()), ("topic", pa.string()),
                       ("partition", pa.int32()), ("offset", pa.int64()), ("timestamp", pa.timestamp("ms")),
                       ("timestampType", pa.int32()),
                       ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])))])
    assert t.select(spark.names).schema == spark
    row = t.select(spark.names).to_pylist()[0]
    assert (row["topic"], row["partition"], row["offset"], row["timestampType"]) == ("orders", 2, 10, 1)
    assert row["timestamp"].year == 2023 and row["headers"] == [{"key": "h", "value": b"1"}]


def test_chunks_split_and_rejoin():
    b = MemoryRecordsBuilder(2, CompressionType.GZIP, TimestampType.CREATE_TIME, 0)
    for i in range(50):
        b.append(i, b"%d" % i, b"x" * 100)
    data = b.build() * 5
    whole = records_table(data)
    small = records_table(data, chunk_bytes=1)
    assert small.equals(whole) and whole.num_rows == 250


def test_read_only_mmap_closes_after_decoding(tmp_path):
    """Nothing of a mapped file outlives the decode (an exported buffer would make close() raise BufferError),
    whether the decode succeeds or raises."""
    import mmap

    from kafkafmt.samples import sample_record_sets
    data = b"".join(d for _, d in sample_record_sets().values())
    corrupt = bytearray(data)
    corrupt[-2] ^= 1
    for payload, ok in ((data, True), (bytes(corrupt), False)):
        path = tmp_path / "segment.log"
        path.write_bytes(payload)
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            if ok:
                assert records_table(mm).num_rows == records_table(data).num_rows
                assert list(decode_records(mm)) == list(MemoryRecords(data).records())
            else:
                with pytest.raises(CorruptRecordError):
                    records_table(mm)
                assert records_table(mm, check_crc=False).column("crc_valid").to_pylist()[-1] is False


def test_every_buffer_type_gives_the_same_table():
    from kafkafmt.samples import sample_record_sets
    data = b"".join(d for _, d in sample_record_sets().values())
    want = records_table(data)
    for buf in (bytearray(data), memoryview(data), memoryview(bytearray(data)), MemoryRecords(data)):
        assert records_table(buf).equals(want)
        assert list(decode_records(buf)) == list(MemoryRecords(data).records())


def _lz4_batch_with_frame(frame_of) -> bytes:
    """A v2 lz4 batch of records too large for one 64 KiB block (one value incompressible), its frame
    rewritten by ``frame_of(records area)`` and its CRC recomputed."""
    import lz4.block  # noqa: F401  (the codec's own dependency)
    rnd = __import__("random").Random(5)
    b = MemoryRecordsBuilder(2, CompressionType.LZ4, TimestampType.CREATE_TIME, 10)
    b.append(1, b"k", bytes(rnd.getrandbits(8) for _ in range(70_000)))
    b.append(2, None, b"abc" * 30_000, (Header("h", b"v"),))
    b.append(3, b"", None)
    data = bytearray(b.build())
    area = records_area(bytes(data))
    framed = frame_of(area)
    start = DEFAULT_BATCH.size
    data[start:] = framed
    DEFAULT_BATCH.put(data, 0, "length", len(data) - 12)
    DEFAULT_BATCH.put(data, 0, "crc", crc32c(bytes(data[DEFAULT_BATCH_CRC_START:])))
    return bytes(data)


def records_area(batch: bytes) -> bytes:
    from kafkafmt.compression import decompress
    return decompress(CompressionType.LZ4, batch[DEFAULT_BATCH.size:], magic=2)


def test_lz4_decompressed_into_one_buffer_agrees_with_the_reference():
    """The columnar decoder decodes lz4 frames straight into one buffer (compression/lz4.decompress_into):
    multi-block frames, stored (incompressible) blocks, frames with block and content checksums and a
    content size, the decompression cap and a corrupt block give the reference's rows or error."""
    import lz4.frame

    from kafkafmt.compression import compress
    kafka = _lz4_batch_with_frame(lambda area: compress(CompressionType.LZ4, area, magic=2))
    checked = _lz4_batch_with_frame(lambda area: lz4.frame.compress(
        area, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False, content_checksum=True,
        block_checksum=True, store_size=True))
    assert records_table(kafka + checked).num_rows == 6
    for data in (kafka, checked, kafka + checked):
        assert_same(data)
        assert_same_records(data)
        for cap in (0, 65_536, 160_000, 200_000):
            assert_same(data, max_decompressed_bytes=cap)
    corrupt = bytearray(kafka)
    corrupt[DEFAULT_BATCH.size + 7 + 4 + 20] ^= 0xFF  # inside the first block (stored raw: still decodes)
    corrupt[-30] ^= 0xFF  # inside the last, compressed block
    DEFAULT_BATCH.put(corrupt, 0, "crc", crc32c(bytes(corrupt[DEFAULT_BATCH_CRC_START:])))
    assert_same(bytes(corrupt))
    assert_same_records(bytes(corrupt))
    # the codec's into-path itself writes exactly what decompress returns, at the buffer's start
    import numpy as np

    from kafkafmt.compression import lz4 as lz4_codec
    for data in (kafka, checked):
        frame = data[DEFAULT_BATCH.size:]
        expected = lz4_codec.decompress(frame, 2, 10**6)
        arena = np.zeros(400_000, np.uint8)
        n = lz4_codec.decompress_into(frame, 2, 10**6, lambda need: arena[:need])
        assert n == len(expected) and arena[:n].tobytes() == expected


def test_compiled_run_of_plain_legacy_messages_agrees_with_the_reference():
    """records_table takes consecutive uncompressed v0/v1 messages as one compiled run
    (fast.legacy_plain_run) and the walker resumes after it: a run broken by a bad CRC, a compressed
    wrapper, a v2 batch, a message over max_message_size, a short message and a cut tail, and runs split
    across chunks, give the reference's rows or error."""
    def plain(magic, n, base):
        return b"".join(_one(magic, base + i) for i in range(n))

    def _one(magic, offset):
        b = MemoryRecordsBuilder(magic, CompressionType.NONE, TimestampType.CREATE_TIME, offset)
        b.append(-1 if magic == 0 else 1000 + offset, b"k%d" % offset if offset % 3 else None, b"v" * (offset % 50))
        return b.build()

    run = plain(1, 40, 0) + plain(0, 30, 40) + plain(1, 30, 70)
    wrapper = MemoryRecordsBuilder(1, CompressionType.GZIP, TimestampType.CREATE_TIME, 100)
    wrapper.append(5, b"a", b"b")
    v2 = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 121)
    v2.append(6, b"c", b"d")
    data = run + wrapper.build() + plain(1, 20, 101) + v2.build() + plain(0, 20, 122)
    assert records_table(data).column("offset").to_pylist() == list(range(142))
    bad_crc = bytearray(data)
    bad_crc[len(plain(1, 40, 0)) + 12] ^= 0xFF  # the CRC of the first v0 message
    for d in (data, bytes(bad_crc), data + data[:50], data[:-3]):
        assert_same(d)
        assert_same(d, check_crc=False)
        assert_same(d, chunk_bytes=700)
    t = records_table(bytes(bad_crc), check_crc=False)
    assert t.column("crc_valid").to_pylist().count(False) == 1
    assert t.column("batch_index").to_pylist() == list(range(142))
    for limit in (60, 10_000):  # a message above max_message_size ends the run; the walker raises Kafka's error
        src = MemoryRecords(data, max_message_size=limit)
        fast_out = outcome(src)
        ref_out = outcome(src, engine="reference")
        assert (fast_out == ref_out) if isinstance(ref_out, tuple) else fast_out.equals(ref_out)


def test_compiled_run_checks_crcs_across_its_blocks():
    """legacy_plain_run parses messages a block at a time (``_CRC_BLOCK``) and checks their CRCs together:
    a bad CRC at a block's first or last message, or anywhere after the first block, ends the run right
    before it, as the reference decoder would, with messages of varied lengths (the CRC's groups of four)."""
    from kafkafmt.records.fast.kernels import _CRC_BLOCK
    msgs = []
    for i in range(2 * _CRC_BLOCK + 40):
        b = MemoryRecordsBuilder(1 if i % 5 else 0, CompressionType.NONE, TimestampType.CREATE_TIME, i)
        b.append(-1 if i % 5 == 0 else i, b"k%d" % i, b"v" * (i % 37))
        msgs.append(b.build())
    data = b"".join(msgs)
    for bad in (0, _CRC_BLOCK - 1, _CRC_BLOCK, _CRC_BLOCK + 3, 2 * _CRC_BLOCK + 39):
        corrupt = bytearray(data)
        corrupt[sum(map(len, msgs[:bad])) + 12] ^= 0x01  # the message's stored CRC
        assert_same(bytes(corrupt))
        t = records_table(bytes(corrupt), check_crc=False)
        assert t.column("crc_valid").to_pylist() == [i != bad for i in range(len(msgs))]
        with pytest.raises(CorruptRecordError):
            records_table(bytes(corrupt))
    assert records_table(data).column("offset").to_pylist() == list(range(len(msgs)))


def _kernel_crc32s(data: bytes, spans: list[tuple[int, int]]) -> list[int]:
    import numpy as np

    from kafkafmt.records.fast import crc32_spans
    arr = np.frombuffer(data, np.uint8)
    starts, ends = (np.array(col, np.int64) for col in zip(*spans))
    out = np.zeros(len(spans), np.uint32)
    crc32_spans(arr, starts, ends, out)
    return out.tolist()


def test_kernel_crc32_is_zlibs_on_every_length():
    """The kernels' CRC-32 (slicing-by-8, four spans at a time) equals zlib's (Java's ``CRC32``) on random
    bytes of every length 0..64 and some large ones, at any alignment, whether a span shares its group of
    four with shorter or longer ones (each order) or is computed alone (the last spans)."""
    import random
    import zlib
    rng = random.Random(8)
    data = rng.randbytes(300_000)
    spans = [(a, a + n) for n in range(65) for a in (0, 1, 3, 7, rng.randrange(1000))]
    spans += [(a, a + n) for n in (1000, 4093, 65_536, 299_000) for a in (0, 5)]
    for order in (spans, spans[::-1], rng.sample(spans, len(spans))):
        for take in (len(order), len(order) - 1, len(order) - 2, len(order) - 3):  # a tail of 0 to 3 spans alone
            got = _kernel_crc32s(data, order[:take])
            assert got == [zlib.crc32(data[a:e]) for a, e in order[:take]]


@SETTINGS
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=9))
def test_kernel_crc32_is_zlibs(pieces):
    """The same on any bytes, spans of any lengths side by side."""
    import zlib
    spans, at = [], 0
    for piece in pieces:
        spans.append((at, at + len(piece)))
        at += len(piece)
    assert _kernel_crc32s(b"".join(pieces), spans) == [zlib.crc32(p) for p in pieces]


def test_lz4_arena_path_obeys_the_limits_in_force():
    """kafkafmt.limits' caps in force (max_decompressed_bytes, max_records_per_batch) refuse an lz4 batch
    on the arena path exactly as on the reference path."""
    from kafkafmt.limits import decode_limits
    b = MemoryRecordsBuilder(2, CompressionType.LZ4, TimestampType.CREATE_TIME, 0)
    for i in range(20):
        b.append(i, b"k", b"v" * 100)
    data = b.build()
    with decode_limits(max_decompressed_bytes=500):
        fast = assert_same(data)
        assert isinstance(fast, tuple) and "max_bytes=500" in fast[1]
    with decode_limits(max_records_per_batch=5):
        fast = assert_same(data)
        assert isinstance(fast, tuple) and "max_records_per_batch=5" in fast[1]
    assert records_table(data).num_rows == 20


def test_batch_the_kernel_hands_over_mid_group_keeps_the_batches_after_it():
    """A valid v2 batch the kernel leaves to the reference (a producer batch whose record has a negative
    offset delta: ``incrementSequence`` with a negative step) between two ordinary ones: the batches
    after it are decoded by the kernel again, with their keys and values, whatever the group size."""
    def producer_batch(base: int, negative_delta: bool) -> bytes:
        b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, base, producer_id=9,
                                 producer_epoch=0, base_sequence=5)
        for i in range(3):
            b.append(1_000, b"k%d" % (base + i), b"v" * (i + 1))
        data = bytearray(b.build())
        if negative_delta:
            second = list(MemoryRecords(bytes(data)).records())[1]
            at = second.position + 3  # length, attributes and a zero timestampDelta: one byte each
            assert data[at] == 2  # offsetDelta 1, zigzag
            data[at] = 1  # offsetDelta -1
            DEFAULT_BATCH.put(data, 0, "crc", crc32c(bytes(data[DEFAULT_BATCH_CRC_START:])))
        return bytes(data)

    data = producer_batch(0, False) + producer_batch(3, True) + producer_batch(6, False) + producer_batch(9, False)
    assert [r.sequence for r in MemoryRecords(data).records()][3:6] == [5, 4, 7]
    for group in (1, 100, 1 << 20):
        with mock.patch.object(columnar, "_GATHER_BYTES", group):
            t = assert_same(data)
        assert t.column("key").to_pylist() == [b"k%d" % i for i in range(12)]
    assert_same_records(data)


def test_compiled_run_of_v2_batches_agrees_with_the_reference():
    """Runs of v2 batches read in one compiled pass (``fast.v2_run``, no Python step per batch): uncompressed
    and lz4 runs side by side with a control batch between them, a batch with an invalid CRC inside a run
    (raised at its position, or flagged), an lz4 batch over the decompression cap inside a run, runs cut by a
    small chunk (the arena grown for the next lz4 frame) and by a full ``heads`` matrix: the reference's rows,
    or its error at its position."""
    from kafkafmt.limits import decode_limits

    def v2(codec, base: int, value: bytes = b"v" * 50) -> bytes:
        b = MemoryRecordsBuilder(2, codec, TimestampType.CREATE_TIME, base, producer_id=4, producer_epoch=2,
                                 base_sequence=base)
        for i in range(3):
            b.append(1_000 + i, b"k%d" % (base + i), value + b"%d" % i, (Header("h", b"x"),) if i == 1 else ())
        return b.build()

    none = [v2(CompressionType.NONE, 3 * i) for i in range(6)]
    lz4 = [v2(CompressionType.LZ4, 100 + 3 * i) for i in range(6)]
    big = v2(CompressionType.LZ4, 200, b"abc" * 5_000)  # decompresses past the cap below
    marker = end_txn_marker(base_offset=50, timestamp=9, partition_leader_epoch=1, producer_id=4,
                            producer_epoch=2, control_type=ControlRecordType.COMMIT, coordinator_epoch=0)
    data = b"".join(none[:3]) + b"".join(lz4[:3]) + marker + b"".join(none[3:]) + b"".join(lz4[3:]) + big + lz4[0]
    bad = bytearray(data)
    at = len(none[0]) + len(none[1]) - 5  # inside the second batch's last value: its CRC no longer matches
    bad[at] ^= 0xFF
    assert records_table(data).num_rows == 3 * 14 + 1
    for run_batches in (2, 1024):
        with mock.patch.object(columnar, "_RUN_BATCHES", run_batches):
            for chunk_bytes in (100, 1 << 20):
                assert_same(data, chunk_bytes=chunk_bytes)
                fast = assert_same(bytes(bad), chunk_bytes=chunk_bytes)
                assert fast[0] is CorruptRecordError and fast[2] == len(none[0])
                flagged = assert_same(bytes(bad), check_crc=False, chunk_bytes=chunk_bytes)
                assert flagged.column("crc_valid").to_pylist().count(False) == 3
                with decode_limits(max_decompressed_bytes=2_000):
                    fast = assert_same(data, chunk_bytes=chunk_bytes)
                    big_at = len(data) - len(lz4[0]) - len(big)
                    assert isinstance(fast, tuple) and big_at < fast[2] < big_at + len(big)  # the block's position
            assert_same_records(data)
            assert_same_records(bytes(bad))
