"""Byte-exact golden tests.

Expected bytes are assembled here by hand from Kafka's documented layouts (the protocol guide's
"Message sets" / "Record batch" sections and ``LegacyRecord`` / ``DefaultRecordBatch`` field
tables), with struct.pack, literal varint bytes and independent CRC functions (zlib.crc32 and the
crc32c package) — never from kafkafmt's own encoders.  ``test_records_vs_kafka.py`` checks the same
builders against Apache Kafka's real MemoryRecordsBuilder.
"""
from __future__ import annotations

import struct
import zlib

import crc32c
import pytest
import xxhash

from kafkafmt.constants import CompressionType, ControlRecordType, TimestampType
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder, end_txn_marker

CT, LAT = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME


def legacy_entry(offset, magic, attributes, timestamp, key, value):
    """offset int64, size int32, crc uint32, magic int8, attributes int8, [timestamp int64], key, value."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += struct.pack(">i", -1) if key is None else struct.pack(">i", len(key)) + key
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    msg = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(msg)) + msg


def v2_batch(*, base_offset, ple, attributes, last_offset_delta, base_ts, max_ts, pid, epoch, base_seq, count,
             records: bytes):
    after_crc = struct.pack(">hiqqqhii", attributes, last_offset_delta, base_ts, max_ts, pid, epoch, base_seq,
                            count) + records
    length = 4 + 1 + 4 + len(after_crc)  # ple + magic + crc + rest
    return struct.pack(">qiib", base_offset, length, ple, 2) + struct.pack(">I", crc32c.crc32c(after_crc)) + after_crc


def test_v0_uncompressed_message():
    expected = legacy_entry(0, 0, 0, None, b"key", b"value")
    # hand check of the framing: size = crc4 + magic1 + attr1 + klen4 + 3 + vlen4 + 5 = 22
    assert expected[8:12] == b"\x00\x00\x00\x16"
    b = MemoryRecordsBuilder(0, CompressionType.NONE, TimestampType.NO_TIMESTAMP_TYPE, 0)
    b.append(-1, b"key", b"value")
    assert b.build() == expected


def test_v1_uncompressed_message_with_null_key():
    expected = legacy_entry(7, 1, 0, 1_700_000_000_000, None, b"v")
    b = MemoryRecordsBuilder(1, CompressionType.NONE, CT, 7)
    b.append(1_700_000_000_000, None, b"v")
    assert b.build() == expected
    (rec,) = MemoryRecords(expected).records()
    assert (rec.offset, rec.timestamp, rec.timestamp_type, rec.key, rec.value) == (7, 1_700_000_000_000, CT, None, b"v")


def _gzip_java(data: bytes) -> bytes:
    """java.util.zip.GZIPOutputStream framing: 10-byte header (OS=0xff on JDK 17), raw deflate, crc32+isize."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return bytes.fromhex("1f8b08000000000000ff") + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def test_v1_gzip_wrapper_has_relative_inner_offsets_and_last_offset():
    inner = (legacy_entry(0, 1, 0, 1000, None, b"a") + legacy_entry(1, 1, 0, 1002, None, b"b")
             + legacy_entry(2, 1, 0, 1001, None, b"c"))
    # KIP-31: inner offsets 0,1,2; wrapper offset = absolute LAST inner offset (100+2);
    # KIP-32: wrapper timestamp = max inner timestamp 1002 (0x3ea); attributes = gzip (1)
    expected = legacy_entry(102, 1, 1, 1002, None, _gzip_java(inner))
    b = MemoryRecordsBuilder(1, CompressionType.GZIP, CT, 100)
    for ts, v in ((1000, b"a"), (1002, b"b"), (1001, b"c")):
        b.append(ts, None, v)
    assert b.build() == expected
    recs = list(MemoryRecords(expected).records())
    assert [(r.offset, r.stored_offset, r.timestamp) for r in recs] == [(100, 0, 1000), (101, 1, 1002), (102, 2, 1001)]


def test_v1_log_append_time_wrapper_and_inner_timestamps():
    inner = legacy_entry(0, 1, 0x08, 5555, b"k", b"v")  # inner carries logAppendTime and the LAT bit
    expected = legacy_entry(0, 1, 0x08 | 1, 5555, None, _gzip_java(inner))
    b = MemoryRecordsBuilder(1, CompressionType.GZIP, LAT, 0, log_append_time=5555)
    b.append(42, b"k", b"v")
    assert b.build() == expected


# v2 record: length, attributes, tsDelta (varlong), offsetDelta (varint), key, value, headers
# literal zigzag varints: 0 -> 00, 1 -> 02, 2 -> 04, 3 -> 06, 5 -> 0a, -1 -> 01
REC0 = bytes.fromhex("00" "00" "00" "02" "6b" "02" "76" "02" "02" "68" "02" "78")  # no length prefix yet
REC0 = bytes([len(REC0) * 2]) + REC0  # length varint (zigzag) of the body
REC1 = bytes.fromhex("00" "04" "02" "01" "06" "763232" "00")  # tsDelta 2, offsetDelta 1, null key, "v22"
REC1 = bytes([len(REC1) * 2]) + REC1


def test_v2_batch_with_headers():
    expected = v2_batch(base_offset=0, ple=-1, attributes=0, last_offset_delta=1, base_ts=1000, max_ts=1002,
                        pid=-1, epoch=-1, base_seq=-1, count=2, records=REC0 + REC1)
    b = MemoryRecordsBuilder(2, CompressionType.NONE, CT, 0)
    b.append(1000, b"k", b"v", [("h", b"x")])
    b.append(1002, None, b"v22")
    assert b.build() == expected
    recs = list(MemoryRecords(expected).records())
    assert recs[0].headers[0].key == "h" and recs[0].headers[0].value == b"x"
    assert [(r.offset, r.timestamp, r.sequence) for r in recs] == [(0, 1000, -1), (1, 1002, -1)]


def test_v2_idempotent_batch():
    rec = bytes.fromhex("00" "00" "00" "02" "6b" "02" "76" "00")
    rec = bytes([len(rec) * 2]) + rec
    expected = v2_batch(base_offset=0, ple=-1, attributes=0, last_offset_delta=0, base_ts=50, max_ts=50,
                        pid=1234, epoch=5, base_seq=10, count=1, records=rec)
    b = MemoryRecordsBuilder(2, CompressionType.NONE, CT, 0, producer_id=1234, producer_epoch=5, base_sequence=10)
    b.append(50, b"k", b"v")
    assert b.build() == expected
    (batch,) = MemoryRecords(expected).batches()
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_sequence) == (1234, 5, 10, 10)
    assert next(batch.records()).sequence == 10


def test_v2_transactional_batch():
    rec = bytes.fromhex("00" "00" "00" "01" "02" "76" "00")
    rec = bytes([len(rec) * 2]) + rec
    expected = v2_batch(base_offset=0, ple=-1, attributes=0x10, last_offset_delta=0, base_ts=7, max_ts=7,
                        pid=99, epoch=0, base_seq=0, count=1, records=rec)
    b = MemoryRecordsBuilder(2, CompressionType.NONE, CT, 0, producer_id=99, producer_epoch=0, base_sequence=0,
                             is_transactional=True)
    b.append(7, None, b"v")
    assert b.build() == expected
    assert next(MemoryRecords(expected).batches()).is_transactional


def test_commit_marker():
    # key: version int16 0, type int16 1 (COMMIT); value: version int16 0, coordinatorEpoch int32 5
    key, value = bytes.fromhex("00000001"), bytes.fromhex("000000000005")
    rec = bytes.fromhex("00" "00" "00") + b"\x08" + key + b"\x0c" + value + b"\x00"
    rec = bytes([len(rec) * 2]) + rec
    expected = v2_batch(base_offset=40, ple=3, attributes=0x30, last_offset_delta=0, base_ts=9000, max_ts=9000,
                        pid=77, epoch=2, base_seq=-1, count=1, records=rec)
    got = end_txn_marker(base_offset=40, timestamp=9000, partition_leader_epoch=3, producer_id=77, producer_epoch=2,
                         control_type=ControlRecordType.COMMIT, coordinator_epoch=5)
    assert got == expected
    (batch,) = MemoryRecords(got).batches()
    (r,) = batch.records()
    assert batch.is_control and batch.is_transactional
    assert r.control.type == ControlRecordType.COMMIT and r.control.coordinator_epoch == 5


def _lz4_header(magic: int) -> bytes:
    flg_bd = bytes([0x60, 0x40])
    hashed = bytes.fromhex("04224d18") + flg_bd if magic == 0 else flg_bd
    return bytes.fromhex("04224d18") + flg_bd + bytes([(xxhash.xxh32(hashed, seed=0).intdigest() >> 8) & 0xFF])


@pytest.mark.parametrize("magic,hc", [(0, 0x1A), (1, 0x82), (2, 0x82)])
def test_lz4_frame_header_per_magic(magic, hc):
    assert _lz4_header(magic)[-1] == hc  # KAFKA-3160: magic 0 keeps the broken checksum
    b = MemoryRecordsBuilder(magic, CompressionType.LZ4, CT if magic else TimestampType.NO_TIMESTAMP_TYPE, 0)
    b.append(1 if magic else -1, None, b"x" * 100)
    data = b.build()
    (batch,) = MemoryRecords(data).batches()
    if magic < 2:
        frame = bytes(batch.message.value)
    else:
        frame = bytes(batch.raw[61:])
    assert frame[:7] == _lz4_header(magic)
    assert frame[-4:] == b"\x00\x00\x00\x00"  # end mark, no content checksum
    block_size = struct.unpack_from("<I", frame, 7)[0]
    assert 7 + 4 + (block_size & 0x7FFFFFFF) + 4 == len(frame)
    assert [r.value for r in batch.records()] == [b"x" * 100]
