"""Corrupt, truncated and hostile bytes: a documented kafkafmt error or trailing bytes, never garbage."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.dump import dump_log
from kafkafmt.errors import (
    CorruptRecordError,
    DecompressionLimitError,
    InvalidRecordError,
    KafkaFmtError,
    TruncatedRecordError,
)
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from kafkafmt.samples import sample_record_sets

SAMPLES = sample_record_sets()


def _read_all(data: bytes, **kw):
    recs = MemoryRecords(data, **kw)
    out = [(r.offset, r.key, r.value) for r in recs.records()]
    return out, recs.trailing


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_truncation_at_every_position_is_trailing_bytes_or_error(name):
    data = SAMPLES[name][1]
    whole_batches = [b.end for b in MemoryRecords(data).batches()]
    for cut in range(len(data)):
        try:
            recs, trailing = _read_all(data[:cut])
        except KafkaFmtError as e:
            assert e.position is not None and 0 <= e.position <= cut
            continue
        complete = [end for end in whole_batches if end <= cut]
        valid = complete[-1] if complete else 0
        if cut > valid:
            assert trailing is not None and trailing.position == valid and trailing.length == cut - valid
        else:
            assert trailing is None
        with pytest.raises(TruncatedRecordError) if cut > valid else _nullctx():
            _read_all(data[:cut], strict=True)


class _nullctx:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(SAMPLES)), flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)),
                                                           min_size=1, max_size=4))
def test_random_corruption_never_escapes_as_another_exception(name, flips):
    data = bytearray(SAMPLES[name][1])
    for pos, x in flips:
        data[pos % len(data)] ^= x
    try:
        recs = MemoryRecords(bytes(data))
        for batch in recs.batches():
            batch.is_valid()
            list(batch.records(max_decompressed_bytes=1 << 20))
        dump_log(bytes(data), filename="x.bin", deep=True, print_data=True)
    except KafkaFmtError as e:
        assert str(e)


def test_crc_mismatch_detected_and_reported_with_position():
    good = SAMPLES["v2-headers.bin"][1]
    bad = bytearray(good)
    bad[70] ^= 1
    (batch,) = MemoryRecords(bytes(bad)).batches()
    assert not batch.is_valid()
    with pytest.raises(CorruptRecordError, match=r"stored crc = \d+, computed crc = \d+") as ei:
        batch.ensure_valid()
    assert ei.value.position == 0


def test_huge_declared_batch_length_is_trailing_not_allocated():
    header = struct.pack(">qi", 0, 2**31 - 1) + b"\x00" * 4 + b"\x02" + b"\x00" * 10
    recs = MemoryRecords(header)
    assert list(recs.batches()) == []
    assert recs.trailing.length == len(header)


def test_size_below_minimum_is_corrupt():
    with pytest.raises(CorruptRecordError, match="less than the minimum record overhead"):
        list(MemoryRecords(struct.pack(">qi", 0, 13) + b"\x00" * 13).batches())


def test_unknown_magic_is_corrupt_with_position():
    data = bytearray(SAMPLES["v2-headers.bin"][1])
    data[16] = 7
    with pytest.raises(CorruptRecordError, match="Invalid magic found in record: 7") as ei:
        list(MemoryRecords(bytes(data)).batches())
    assert ei.value.position == 16


def test_record_count_lies_are_invalid_record():
    data = bytearray(SAMPLES["v2-headers.bin"][1])
    struct.pack_into(">i", data, 57, -1)
    (batch,) = MemoryRecords(bytes(data)).batches()
    with pytest.raises(InvalidRecordError, match="Found invalid record count -1 in magic v2 batch"):
        list(batch.records())
    struct.pack_into(">i", data, 57, 2)
    (batch,) = MemoryRecords(bytes(data)).batches()
    with pytest.raises(InvalidRecordError, match="records still remaining"):
        list(batch.records())


def test_huge_varint_lengths_inside_a_record():
    # a record whose key length varint claims 2**30 bytes: rejected, nothing allocated
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    b.append(1, b"k", b"v")
    data = bytearray(b.build())
    rec_start = 61
    # body: len, attrs, tsDelta, offsetDelta, keyLen(02)... replace keyLen with a 5-byte varint 2**30
    body = bytes(data[rec_start + 1:])
    assert body[3] == 0x02
    new_body = body[:3] + bytes([0x80, 0x80, 0x80, 0x80, 0x08]) + body[4:]
    from kafkafmt.records.default import encode_default_batch
    forged = encode_default_batch(base_offset=0, partition_leader_epoch=-1, attributes=0, last_offset_delta=0,
                                  base_timestamp=1, max_timestamp=1, producer_id=-1, producer_epoch=-1,
                                  base_sequence=-1, records_count=1, records=bytes([len(new_body) * 2]) + new_body)
    (batch,) = MemoryRecords(forged).batches()
    with pytest.raises(InvalidRecordError, match="invalid record structure"):
        list(batch.records())


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompression_bomb_is_capped(codec):
    b = MemoryRecordsBuilder(2, codec, TimestampType.CREATE_TIME, 0)
    b.append(1, None, b"\x00" * (4 << 20))
    (batch,) = MemoryRecords(b.build()).batches()
    assert batch.size_in_bytes < 300_000
    with pytest.raises(DecompressionLimitError) as ei:
        list(batch.records(max_decompressed_bytes=1 << 20))
    assert ei.value.position is not None and ei.value.position >= 61


def test_reading_never_modifies_the_input(tmp_path):
    from kafkafmt.io import open_readonly
    path = tmp_path / "x.log"
    data = b"".join(d for _, d in SAMPLES.values() if True)
    path.write_bytes(data)
    with open_readonly(path) as buf:
        list(MemoryRecords(buf).records())
        with pytest.raises(TypeError):
            buf[0] = 1  # mmap is read-only
    assert path.read_bytes() == data


def test_file_reader_takes_magic_above_2_as_v2_like_kafka():
    """FileLogInputStream reads any magic >= 2 as a DefaultRecordBatch (the CRC does not cover the
    magic byte); the in-memory reader rejects it (ByteBufferLogInputStream)."""
    data = bytearray(SAMPLES["v2-headers.bin"][1])
    data[16] = 88
    res = dump_log(bytes(data), filename="x.log")
    assert res.error is None and "magic: 88" in res.stdout[0] and "isvalid: true" in res.stdout[0]
    with pytest.raises(CorruptRecordError):
        list(MemoryRecords(bytes(data)).batches())
