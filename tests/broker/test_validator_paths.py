"""Every branch of Kafka 3.9's produce validation (UnifiedLog.analyzeAndValidateRecords + LogValidator).

Expected values come from the rules in Kafka's source (cited per test: LogValidator, UnifiedLog,
MemoryRecordsBuilder, DefaultRecordBatch / ByteBufferLegacyRecordBatch setters) and the reference
digest kafka-rules §4; the differential module test_validator_vs_kafka.py runs the same kind of
cases through Kafka's own LogValidator.
"""
from __future__ import annotations

import os
import re
import struct
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import CT, LAT, NOW, R, batches, build, legacy_msg, legacy_wrapper, read, v2  # noqa: E402
from kafkafmt.broker import BrokerConfig, LogConfig  # noqa: E402
from kafkafmt.broker import validate_messages_and_assign_offsets as validate
from kafkafmt.broker.inplace import UnsupportedOperationError  # noqa: E402
from kafkafmt.broker.validator import (  # noqa: E402
    PATH_COMPRESSED_IN_PLACE,
    PATH_COMPRESSED_REBUILT,
    PATH_CONVERT,
    PATH_EMPTY,
    PATH_FOLLOWER,
    PATH_IN_PLACE,
)
from kafkafmt.constants import INT64_MAX, CompressionType, ControlRecordType  # noqa: E402
from kafkafmt.crc import crc32c  # noqa: E402
from kafkafmt.errors import (  # noqa: E402
    CorruptRecordError,
    IllegalArgumentError,
    InvalidRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
    RecordValidationError,
    UnsupportedCompressionError,
    UnsupportedForMessageFormatError,
)
from kafkafmt.records import end_txn_marker  # noqa: E402
from kafkafmt.records.record import Header  # noqa: E402

V2 = LogConfig()
V1 = LogConfig(message_format_version="0.10.0")
V0 = LogConfig(message_format_version="0.9.0")
RS = [R(NOW - 3, b"a", b"1"), R(NOW - 1, b"b", b"2"), R(NOW - 2, None, b"3")]


def crc_field(data, pos=0):
    return struct.unpack_from(">I", data, pos + 17)[0]


# ------------------------------------------------------------------------------------------------
# 4a  assignOffsetsNonCompressed
def test_in_place_v2_sets_base_offset_and_epoch_without_touching_the_crc():
    """assignOffsetsNonCompressed: setLastOffset + setPartitionLeaderEpoch are outside the CRC32C (§2.3)."""
    data = build(RS)
    res = validate(data, V2, offset=100, now=NOW, partition_leader_epoch=5)
    assert res.path == PATH_IN_PLACE
    (b,) = batches(res.records)
    assert (b.base_offset, b.last_offset, b.partition_leader_epoch) == (100, 102, 5)
    assert crc_field(res.records) == crc_field(data)  # unchanged CRC, still valid
    assert b.is_valid()
    assert res.records[21:] == data[21:]  # only baseOffset and PLE changed
    assert (res.first_offset, res.last_offset, res.next_offset) == (100, 102, 103)
    assert res.max_timestamp == NOW - 1 and res.shallow_offset_of_max_timestamp == 102  # v2: the batch's last offset
    assert not res.message_size_maybe_changed and not res.converted and not res.recompressed
    assert res.stats.num_converted_records == 0 and res.stats.temporary_memory_bytes == 0  # RecordValidationStats.EMPTY
    assert data == build(RS)  # the input is never modified


def test_in_place_v2_on_lat_topic_sets_bit3_and_max_timestamp_only():
    """setMaxTimestamp(LOG_APPEND_TIME, now): attribute bit 3 + maxTimestamp, CRC recomputed; deltas untouched."""
    data = build(RS)
    res = validate(data, V2.replace(timestamp_type=LAT), offset=7, now=NOW + 50)
    out = res.records
    (b,) = batches(out)
    assert b.timestamp_type == LAT and b.max_timestamp == NOW + 50
    assert b.base_timestamp == NOW - 3  # baseTimestamp stays the producer's
    assert out[61:] == data[61:]  # records (and their timestamp deltas) byte-identical
    assert crc_field(out) == crc32c(out[21:]) != crc_field(data)
    assert [r[1] for r in read(out)] == [NOW + 50] * 3  # readers substitute maxTimestamp (RecordIterator)
    assert res.max_timestamp == NOW + 50 and res.shallow_offset_of_max_timestamp == 9  # LAT v2: last offset


def test_in_place_v2_producer_lat_batch_on_create_time_topic_keeps_stale_max_quirk_b():
    """Golden quirk (b): records of a producer-LAT batch read as its maxTimestamp, so the CreateTime batch
    written back carries the producer's old maxTimestamp, with bit 3 cleared (accepted since 3.6)."""
    data = v2(RS, ts_type=LAT, max_ts=NOW - 50)
    res = validate(data, V2, offset=0, now=NOW)
    (b,) = batches(res.records)
    assert b.timestamp_type == CT and b.max_timestamp == NOW - 50
    assert res.max_timestamp == NOW - 50
    assert [r[1] for r in read(res.records)] == [NOW - 3, NOW - 1, NOW - 2]  # now the real record timestamps


def test_in_place_several_uncompressed_v1_messages_earliest_batch_wins_ties():
    """Several batches only for uncompressed v0/v1; shallow offset = the FIRST batch holding the max (strict >)."""
    data = build([R(NOW - 9), R(NOW - 1), R(NOW - 1)], magic=1)
    res = validate(data, V1, offset=100, now=NOW)
    assert res.path == PATH_IN_PLACE
    assert [b.last_offset for b in batches(res.records)] == [100, 101, 102]
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (NOW - 1, 101)


def test_seed000_2_1_2_uncompressed_v1_message_timestamp_overwritten_with_server_time():
    """seed 000 §2.1.2 (= Kafka, golden case G): each v1 message's own timestamp := now, bit 3 set, CRC32 redone;
    LogAppendTime + v1 → shallowOffsetOfMaxTimestamp = the first offset."""
    data = build([R(NOW - 9), R(NOW - 1)], magic=1)
    res = validate(data, V1.replace(timestamp_type=LAT), offset=40, now=NOW + 5)
    for b in batches(res.records):
        assert b.message.timestamp == NOW + 5 and b.attributes & 0x08 and b.is_valid()
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (NOW + 5, 40)


def test_v0_has_no_timestamps_even_on_a_lat_topic():
    """assignOffsetsNonCompressed with toMagic 0 and LogAppendTime: maxTimestamp -1, shallow offset -1."""
    res = validate(build(RS, magic=0), V0.replace(timestamp_type=LAT), offset=3, now=NOW)
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (-1, -1)
    assert [b.last_offset for b in batches(res.records)] == [3, 4, 5]


def test_quirk_d_uncompressed_v2_record_offset_deltas_are_never_checked():
    """Golden quirk (d): the in-place uncompressed path never looks at offset deltas: 0,2,2 stored as is."""
    data = v2(RS, deltas=[0, 2, 2], last_offset_delta=2)
    res = validate(data, V2, offset=100, now=NOW)
    assert res.path == PATH_IN_PLACE
    assert [r[0] for r in read(res.records)] == [100, 102, 102]


# ------------------------------------------------------------------------------------------------
# 4b  convertAndAssignOffsetsNonCompressed
def test_up_convert_v0_to_v2_on_create_time_topic():
    """convertAndAssignOffsetsNonCompressed: v0 → v2, timestamps -1, maxTs -1, shallow -1, baseTimestamp -1."""
    res = validate(build(RS, magic=0), V2, offset=10, now=NOW, partition_leader_epoch=3)
    assert res.path == PATH_CONVERT and res.converted and res.message_size_maybe_changed
    (b,) = batches(res.records)
    assert (b.magic, b.base_offset, b.last_offset, b.partition_leader_epoch) == (2, 10, 12, 3)
    assert b.base_timestamp == -1 and b.max_timestamp == -1
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (-1, -1)
    assert res.stats.num_converted_records == 3
    # temporaryMemoryBytes = builder.uncompressedBytesWritten() = records + 61-byte v2 header
    assert res.stats.temporary_memory_bytes == len(res.records)


def test_down_convert_on_produce_v2_to_v1_topic():
    """A v2 producer on a topic still on 0.10.0 (seed 004 'Broker convert the message into message.format.version')."""
    res = validate(build(RS), V1, offset=0, now=NOW)
    assert res.path == PATH_CONVERT
    assert [(b.magic, b.last_offset) for b in batches(res.records)] == [(1, 0), (1, 1), (1, 2)]
    assert [r[1] for r in read(res.records)] == [NOW - 3, NOW - 1, NOW - 2]
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (NOW - 1, 1)  # first record with the max


def test_headers_down_converted_to_v1_raise_illegal_argument():
    """MemoryRecordsBuilder.appendWithOffset: 'Magic v1 does not support record headers' (golden case V)."""
    data = build([R(NOW, b"k", b"v", (Header("h", b"x"),))])
    for data_ in (data, build([R(NOW, b"k", b"v", (Header("h", b"x"),))], compression_="gzip")):
        with pytest.raises(IllegalArgumentError, match="^Magic v1 does not support record headers$") as e:
            validate(data_, V1, now=NOW)
        assert e.value.kafka_exception == "IllegalArgumentException" and e.value.error_code is None


def test_transactional_to_v1_topic_uncompressed_fails_in_the_builder_first():
    """convertAndAssignOffsetsNonCompressed creates the MemoryRecordsBuilder (which refuses transactional < v2)
    BEFORE validateBatch runs, so uncompressed input gets IllegalArgumentException; compressed input reaches
    validateBatch first: UnsupportedForMessageFormatException."""
    txn = dict(pid=7, epoch=1, seq=0, txn=True)
    with pytest.raises(IllegalArgumentError, match="^Transactional records are not supported for magic 1$"):
        validate(v2(RS, **txn), V1, now=NOW)
    with pytest.raises(UnsupportedForMessageFormatError,
                       match="^Transactional records cannot be used with magic version 1$") as e:
        validate(v2(RS, compression_="gzip", **txn), V1, now=NOW)
    assert e.value.error_code == 43


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_idempotent_batch_to_v1_topic_is_unsupported_for_message_format(codec):
    """LogValidator.validateBatch: hasProducerId and toMagic < 2 (seed 003 Background)."""
    with pytest.raises(UnsupportedForMessageFormatError, match="^Idempotent records cannot be used with magic version 1$"):
        validate(v2(RS, compression_=codec, pid=7, epoch=1, seq=0), V1, now=NOW)


# ------------------------------------------------------------------------------------------------
# 4c  validateMessagesAndAssignOffsetsCompressed
def test_compressed_v2_in_place_keeps_the_compressed_payload():
    """In place when source == target codec and the batch is already in toMagic (≠ 0): header rewrite only."""
    data = build(RS, compression_="gzip")
    res = validate(data, V2, offset=50, now=NOW, partition_leader_epoch=2)
    assert res.path == PATH_COMPRESSED_IN_PLACE and not res.recompressed
    assert res.records[61:] == data[61:]
    (b,) = batches(res.records)
    assert (b.base_offset, b.last_offset, b.partition_leader_epoch) == (50, 52, 2)
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (NOW - 1, 52)
    # RecordValidationStats(uncompressedSizeInBytes, 0, 0): 61-byte header + the record sizes
    assert res.stats.temporary_memory_bytes == 61 + sum(r.size for r in b.records())
    assert res.stats.num_converted_records == 0


def test_compression_level_difference_does_not_recompress():
    """Only the codec type counts (LogValidatorTest.testDifferentLevelDoesNotCauseRecompression)."""
    data = build(RS, compression_="gzip")
    res = validate(data, V2.replace(compression_type="gzip", gzip_level=1), now=NOW)
    assert res.path == PATH_COMPRESSED_IN_PLACE and res.records[61:] == data[61:]


def test_codec_change_rebuilds_and_recompresses():
    """source gzip != target lz4 → buildRecordsAndAssignOffsets; numRecordsConverted counts every record."""
    res = validate(build(RS, compression_="gzip"), V2.replace(compression_type="lz4"), offset=5, now=NOW)
    assert res.path == PATH_COMPRESSED_REBUILT and res.recompressed and not res.converted
    (b,) = batches(res.records)
    assert b.compression == CompressionType.LZ4 and (b.base_offset, b.last_offset) == (5, 7)
    assert res.stats.num_converted_records == 3 and res.message_size_maybe_changed


def test_uncompressed_input_to_compressed_topic_is_rebuilt():
    res = validate(build(RS), V2.replace(compression_type="snappy"), now=NOW)
    assert res.path == PATH_COMPRESSED_REBUILT and batches(res.records)[0].compression == CompressionType.SNAPPY


def test_v0_compressed_is_always_rebuilt_with_absolute_inner_offsets():
    """toMagic 0 → never in place: ByteBufferLegacyRecordBatch.setLastOffset cannot fix v0 absolute inner offsets."""
    res = validate(build(RS, magic=0, compression_="gzip"), V0, offset=20, now=NOW)
    assert res.path == PATH_COMPRESSED_REBUILT
    (b,) = batches(res.records)
    assert b.last_offset == 22
    assert [m.offset for m in b.inner_messages()] == [20, 21, 22]  # absolute


def test_v1_compressed_in_place_rewrites_only_the_wrapper():
    """In place v1: wrapper offset := last offset; CreateTime wrapper timestamp := max inner (setMaxTimestamp)."""
    inner = [legacy_msg(i, NOW - 9 + i) for i in range(3)]
    data = legacy_wrapper(inner, ts=NOW + 999)  # a producer that stamped the wrapper wrongly
    res = validate(data, V1, offset=100, now=NOW)
    assert res.path == PATH_COMPRESSED_IN_PLACE
    (b,) = batches(res.records)
    assert b.last_offset == 102 and b.message.timestamp == NOW - 7 and b.is_valid()
    assert bytes(b.message.value) == bytes(batches(data)[0].message.value)  # compressed inner set untouched
    assert [r[0] for r in read(res.records)] == [100, 101, 102]


def test_kafka_9669_non_contiguous_v1_inner_offsets_are_reassigned_by_rebuilding():
    """seed 004 NOTE / KAFKA-9669 (2.6): relative offsets 0,2,5 (a mirrored compacted topic) → rebuilt 0,1,2."""
    data = build(RS, magic=1, compression_="gzip", offsets=[0, 2, 5])
    res = validate(data, V1, offset=100, now=NOW)
    assert res.path == PATH_COMPRESSED_REBUILT and res.recompressed and not res.converted
    (b,) = batches(res.records)
    assert [m.offset for m in b.inner_messages()] == [0, 1, 2] and b.last_offset == 102
    assert res.stats.num_converted_records == 3


def test_v1_wrapper_offset_zero_means_raw_inner_offsets_kafka_5365():
    """DeepRecordsIterator: wrapper offset 0 → inner offsets as they are (librdkafka), so 0..n-1 is in place."""
    data = legacy_wrapper([legacy_msg(i, NOW - i) for i in range(3)], wrapper_offset=0)
    res = validate(data, V1, offset=9, now=NOW)
    assert res.path == PATH_COMPRESSED_IN_PLACE and batches(res.records)[0].last_offset == 11


def test_v1_wrapper_offset_below_last_inner_is_invalid():
    data = legacy_wrapper([legacy_msg(i, NOW - i) for i in range(3)], wrapper_offset=1)
    with pytest.raises(InvalidRecordError, match="wrapper offset '1' is less than the last inner message offset '2'"):
        validate(data, V1, now=NOW)


def test_uncompressed_control_batch_from_coordinator_stays_uncompressed_on_a_gzip_topic():
    """'Do not compress control records unless they are written compressed': in place despite the topic codec."""
    m = end_txn_marker(base_offset=0, timestamp=NOW, partition_leader_epoch=0, producer_id=7, producer_epoch=1,
                       control_type=ControlRecordType.COMMIT, coordinator_epoch=3)
    res = validate(m, V2.replace(compression_type="gzip"), origin="COORDINATOR", offset=30, now=NOW)
    assert res.path == PATH_COMPRESSED_IN_PLACE
    (b,) = batches(res.records)
    assert b.is_control and b.compression == CompressionType.NONE and b.base_offset == 30


def test_zstd_target_with_ibp_below_2_1_is_unsupported():
    cfg = V2.replace(broker=BrokerConfig(inter_broker_protocol_version="2.0"), compression_type="zstd")
    with pytest.raises(UnsupportedCompressionError, match="^Produce requests to inter.broker.protocol.version < 2.1 "
                                                          "broker are not allowed to use ZStandard compression$") as e:
        validate(build(RS), cfg, now=NOW)
    assert e.value.error_code == 76


def test_zstd_batch_to_a_v1_topic_fails_in_the_builder_golden_case_r():
    """Rebuilding a zstd batch as v1: MemoryRecordsBuilder refuses zstd below v2 (IllegalArgumentException)."""
    with pytest.raises(IllegalArgumentError, match="^ZStandard compression is not supported for magic 1$"):
        validate(build(RS, compression_="zstd"), V1, now=NOW)


def test_quirk_a_in_place_without_timestamps_reports_last_offset():
    """Golden quirk (a): compressed in place with all timestamps -1 → shallow = last offset; uncompressed → -1."""
    recs = [R(-1), R(-1)]
    comp = validate(build(recs, compression_="gzip"), V2, offset=10, now=NOW)
    plain = validate(build(recs), V2, offset=10, now=NOW)
    assert (comp.max_timestamp, comp.shallow_offset_of_max_timestamp) == (-1, 11)
    assert (plain.max_timestamp, plain.shallow_offset_of_max_timestamp) == (-1, -1)


def test_quirk_c_compressed_v2_with_bad_offset_deltas_fails_with_unsupported_operation():
    """Golden quirk (c, U2): deltas 0,2,2 pass the count check; skipKeyValueIterator is chosen; then the offset
    mismatch forces a rebuild that needs the skipped keys → UnsupportedOperationException."""
    data = v2(RS, deltas=[0, 2, 2], last_offset_delta=2, compression_="gzip")
    with pytest.raises(UnsupportedOperationError, match="^key is skipped in PartialDefaultRecord$") as e:
        validate(data, V2, now=NOW)
    assert e.value.kafka_exception == "UnsupportedOperationException"
    # with a different target codec the full iterator is used and the rebuild succeeds (offsets reassigned)
    res = validate(data, V2.replace(compression_type="lz4"), offset=0, now=NOW)
    assert [r[0] for r in read(res.records)] == [0, 1, 2]


def test_quirk_c_non_zero_base_from_coordinator():
    """Golden case U: a non-zero base offset (allowed for non-CLIENT origins) triggers the same failure."""
    with pytest.raises(UnsupportedOperationError):
        validate(v2(RS, base_offset=100, compression_="gzip"), V2, origin="COORDINATOR", now=NOW)


# ------------------------------------------------------------------------------------------------
# batch-level errors
@pytest.mark.parametrize("kw, message", [
    (dict(last_offset_delta=5), "Inconsistent batch offset range [0, 5] and count of records 3 in topic partition topic-0"),
    (dict(count=2), "Inconsistent batch offset range [0, 2] and count of records 2 in topic partition topic-0"),
    (dict(last_offset_delta=-1), "Batch has an invalid offset range: [0, -1] in topic partition topic-0"),
])
def test_v2_batch_with_inconsistent_count_and_offsets(kw, message):
    """LogValidator.validateBatch (CLIENT, magic ≥ 2): offset range and count checks."""
    for codec in ("none", "gzip"):
        with pytest.raises(InvalidRecordError) as e:
            validate(v2(RS, compression_=codec, **kw), V2, now=NOW)
        assert e.value.reason == message and type(e.value) is InvalidRecordError and e.value.error_code == 87


def test_empty_v2_batch_from_a_client_is_rejected():
    """An empty batch (count 0, what the cleaner leaves) is refused from clients: 'Invalid reported count'."""
    with pytest.raises(InvalidRecordError, match="^Invalid reported count for record batch: 0 in topic partition "
                                                 "topic-0$"):
        validate(v2([], count=0), V2, now=NOW)


def test_several_compressed_batches_in_one_request():
    """getFirstBatchAndMaybeValidateNoMoreBatches (KAFKA-8428): one batch for v2 or compressed input."""
    for data in (build(RS, compression_="gzip") * 2, build(RS) * 2, build(RS, magic=1, compression_="gzip") * 2):
        cfg = V1 if data[16] == 1 else V2
        with pytest.raises(InvalidRecordError, match="^Compressed outer record has more than one batch$"):
            validate(data, cfg, now=NOW)


def test_mixed_magic_batches():
    with pytest.raises(InvalidRecordError, match="^Batch magic 1 is not the same as the first batch's magic byte 0 "
                                                 "in topic partition topic-0$"):
        validate(build(RS, magic=0) + build(RS, magic=1), V1, now=NOW)


def test_control_batch_from_a_client():
    m = end_txn_marker(base_offset=0, timestamp=NOW, partition_leader_epoch=0, producer_id=7, producer_epoch=1,
                       control_type=ControlRecordType.ABORT, coordinator_epoch=3)
    with pytest.raises(InvalidRecordError, match="^Clients are not allowed to write control records in topic "
                                                 "partition topic-0$"):
        validate(m, V2, now=NOW)


def test_producer_id_with_negative_sequence():
    with pytest.raises(InvalidRecordError, match="^Invalid sequence number -1 in record batch with producerId 7 in "
                                                 "topic partition topic-0$"):
        validate(v2(RS, pid=7, epoch=0, seq=-1), V2, now=NOW)


def test_client_v2_base_offset_must_be_zero():
    """UnifiedLog.analyzeAndValidateRecords: CLIENT, magic ≥ 2, baseOffset ≠ 0."""
    with pytest.raises(InvalidRecordError, match="^The baseOffset of the record batch in the append to topic-0 should "
                                                 "be 0, but it is 4$"):
        validate(build(RS, base_offset=4), V2, now=NOW)
    assert validate(build(RS, base_offset=4), V2, origin="COORDINATOR", offset=0, now=NOW).path == PATH_IN_PLACE


def test_outer_crc_is_checked_before_validation():
    """UnifiedLog: !batch.isValid() → CorruptRecordException('Record is corrupt (stored crc = X) in topic partition')."""
    data = bytearray(build(RS))
    data[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError) as e:
        validate(bytes(data), V2, now=NOW)
    assert e.value.reason == f"Record is corrupt (stored crc = {crc_field(data)}) in topic partition topic-0."


def test_corrupt_inner_crc_is_thrown_at_once():
    """validateRecord: a bad inner CRC of a legacy wrapper → CorruptRecordException immediately, even though an
    earlier record already had a (collected) error."""
    inner = [legacy_msg(0, NOW, key=None), legacy_msg(1, NOW, crc=12345)]
    with pytest.raises(CorruptRecordError) as e:
        validate(legacy_wrapper(inner), V1.replace(cleanup_policy="compact"), now=NOW)
    assert re.fullmatch(r"Record is corrupt \(stored crc = 12345, computed crc = \d+\)", e.value.reason)
    assert e.value.offset == 1


def test_nested_compression_in_a_wrapper():
    nested = legacy_wrapper([legacy_msg(0, NOW)])
    with pytest.raises(InvalidRecordError) as e:
        validate(legacy_wrapper([legacy_msg(0, NOW), nested]), V1, now=NOW)
    assert e.value.reason == "Inner messages must not be compressed"


def test_inner_magic_mismatch_is_a_record_error():
    data = legacy_wrapper([legacy_msg(i, NOW, magic=0) for i in range(2)], magic=1)
    with pytest.raises(RecordValidationError) as e:
        validate(data, V1, now=NOW)
    assert e.value.cause is InvalidRecordError
    assert [(b, i) for b, i, _ in e.value.record_errors] == [(0, 0), (0, 1)]
    assert e.value.record_errors[0][2].startswith("Record LegacyRecordBatch(offset=0, Record(magic=0, attributes=0, "
                                                  "compression=none, crc=")
    assert e.value.record_errors[0][2].endswith("'s magic does not match outer magic 1 in topic partition topic-0")


# ------------------------------------------------------------------------------------------------
# record-level errors
@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_out_of_range_timestamps_with_per_record_error_list(codec):
    """validateTimestamp + processRecordErrors: every record checked, errors collected with their index."""
    recs = [R(NOW - 10_000), R(NOW + 10_000), R(NOW), R(-1), R(NOW - 500_000)]
    with pytest.raises(RecordValidationError) as e:
        validate(build(recs, compression_=codec), V2.replace(timestamp_difference_max_ms=5000), now=NOW)
    err = e.value
    assert err.cause is InvalidTimestampError and err.kafka_exception == "InvalidTimestampException"
    assert err.error_code == 32 and err.reason == "One or more records have been rejected due to invalid timestamp"
    rng = f"[{NOW - 5000}, {NOW + 5000}]"
    assert err.record_errors == [
        (0, 0, f"Timestamp {NOW - 10_000} of message with offset 0 is out of range. The timestamp should be within {rng}"),
        (0, 1, f"Timestamp {NOW + 10_000} of message with offset 1 is out of range. The timestamp should be within {rng}"),
        (0, 4, f"Timestamp {NOW - 500_000} of message with offset 4 is out of range. The timestamp should be within {rng}"),
    ]
    assert err.trace.find("record errors")


def test_kip937_before_and_after_are_separate_bounds():
    recs = [R(NOW - 15_000), R(NOW + 1)]
    cfg = V2.replace(timestamp_before_max_ms=20_000, timestamp_after_max_ms=0)
    with pytest.raises(RecordValidationError) as e:
        validate(build(recs), cfg, now=NOW)
    assert [i for _, i, _ in e.value.record_errors] == [1]
    assert e.value.record_errors[0][2].endswith(f"within [{NOW - 20_000}, {NOW}]")


def test_range_message_uses_java_long_overflow():
    """'[now - before, now + after]' is computed in Java longs: now + Long.MAX wraps negative (golden case M)."""
    with pytest.raises(RecordValidationError) as e:
        validate(build([R(NOW - 5000)]), V2.replace(timestamp_before_max_ms=1000), now=NOW)
    wrapped = NOW + INT64_MAX - 2**64
    assert e.value.record_errors[0][2].endswith(f"within [{NOW - 1000}, {wrapped}]")


def test_timestamp_errors_take_precedence_over_key_errors():
    recs = [R(NOW, None), R(NOW - 2_000_000, b"k")]
    with pytest.raises(RecordValidationError) as e:
        validate(build(recs), V2.replace(cleanup_policy="compact", timestamp_difference_max_ms=1000), now=NOW)
    assert e.value.cause is InvalidTimestampError
    assert [i for _, i, _ in e.value.record_errors] == [0, 1]
    assert e.value.record_errors[0][2] == "Compacted topic cannot accept message without key in topic partition topic-0"


def test_key_errors_alone_are_invalid_record_and_message_shows_at_most_three():
    recs = [R(NOW, None)] * 4
    with pytest.raises(RecordValidationError) as e:
        validate(build(recs), V2.replace(cleanup_policy="compact"), now=NOW)
    msg = "Compacted topic cannot accept message without key in topic partition topic-0"
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{msg}')" for i in range(3))
    assert e.value.reason == ("One or more records have been rejected due to 4 record errors in total, and only showing "
                              f"the first three errors at most: [{shown}]")
    assert e.value.cause is InvalidRecordError and e.value.kafka_exception == "InvalidRecordException"


def test_producer_lat_batch_on_lat_topic_is_rejected():
    """validateTimestamp: batch LogAppendTime on a LogAppendTime topic → 'Producer should not set timestamp type'."""
    with pytest.raises(RecordValidationError) as e:
        validate(v2(RS, ts_type=LAT, max_ts=NOW), V2.replace(timestamp_type=LAT), now=NOW)
    assert e.value.record_errors[0][2] == (f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp={NOW}, "
                                           "key=1 bytes, value=1 bytes). Producer should not set timestamp type to "
                                           "LogAppendTime.")


# ------------------------------------------------------------------------------------------------
# UnifiedLog framing
def test_max_message_bytes_before_and_after_conversion():
    data = build(RS)
    with pytest.raises(RecordTooLargeError, match=f"^The record batch size in the append to topic-0 is {len(data)} "
                                                  "bytes which exceeds the maximum configured value of 50.$"):
        validate(data, V2.replace(max_message_bytes=50), now=NOW)
    big = build([R(NOW, b"k", b"v" * 200)], magic=1)  # 234-byte v1 message; v2 → 61 + 210
    res = validate(big, V2, now=NOW)
    limit = len(big)
    assert len(res.records) > limit
    with pytest.raises(RecordTooLargeError) as e:
        validate(big, V2.replace(max_message_bytes=limit), now=NOW)
    # (sic) Kafka's message has no space between "to" and "partition"
    assert e.value.reason == (f"Message batch size is {len(res.records)} bytes in append topartition topic-0 which "
                              f"exceeds the maximum configured size of {limit}.")


def test_trailing_partial_batch_is_trimmed_silently():
    data = build(RS) + build(RS)[:30]
    res = validate(data, V2, now=NOW)
    assert len(res.records) == len(build(RS)) and res.trace.find("trim invalid bytes")


def test_nothing_to_append():
    res = validate(b"", V2, now=NOW, offset=5)
    assert res.path == PATH_EMPTY and res.records == b"" and res.next_offset == 5


def test_produce_request_v3_rules():
    """ProduceRequest.validateRecords: v≥3 → exactly one v2 batch; v<7 → no zstd."""
    with pytest.raises(InvalidRecordError, match="only allowed to contain record batches with magic version 2"):
        validate(build(RS, magic=1), V2, produce_version=3, now=NOW)
    with pytest.raises(InvalidRecordError, match="exactly one record batch per partition"):
        validate(build(RS) * 2, V2, produce_version=8, now=NOW)
    with pytest.raises(InvalidRecordError, match="must have at least one record batch per partition"):
        validate(b"", V2, produce_version=9, now=NOW)
    with pytest.raises(UnsupportedCompressionError, match="^Produce requests with version 6 are not allowed to use "
                                                          "ZStandard compression$"):
        validate(build(RS, compression_="zstd"), V2, produce_version=6, now=NOW)
    assert validate(build(RS, compression_="zstd"), V2, produce_version=7, now=NOW).path == PATH_COMPRESSED_IN_PLACE
    assert validate(build(RS, magic=1), V1, produce_version=2, now=NOW).path == PATH_IN_PLACE


def test_follower_append_keeps_offsets_and_skips_size_check():
    """UnifiedLog.appendAsFollower: no LogValidator, ignoreRecordSize; offsets must not be below the LEO."""
    data = build(RS, base_offset=40)
    res = validate(data, V2.replace(max_message_bytes=10), origin="REPLICATION", offset=40, now=NOW)
    assert res.path == PATH_FOLLOWER and res.records == data
    assert (res.first_offset, res.last_offset) == (40, 42)
    from kafkafmt.broker.validator import UnexpectedAppendOffsetError
    with pytest.raises(UnexpectedAppendOffsetError):
        validate(data, V2, origin="REPLICATION", offset=41, now=NOW)


def test_follower_append_stops_at_a_newer_leader_epoch():
    """UnifiedLog.analyzeAndValidateRecords (Kafka 3.9.2, KAFKA-18723, the log's rule too): a REPLICATION append
    keeps the batches before the first one whose partition leader epoch is above the replica's own
    (``partition_leader_epoch``); that one and every batch after it are not appended."""
    older = build(RS, base_offset=40, partition_leader_epoch=2)
    newer = build(RS, base_offset=43, partition_leader_epoch=5)
    again = build(RS, base_offset=46, partition_leader_epoch=2)
    res = validate(older + newer + again, V2, origin="REPLICATION", offset=40, now=NOW, partition_leader_epoch=3)
    assert res.path == PATH_FOLLOWER and res.records == older
    assert (res.first_offset, res.last_offset) == (40, 42)
    assert res.trace.find("newer leader epoch")
    everything = validate(older + newer, V2, origin="REPLICATION", offset=40, now=NOW, partition_leader_epoch=5)
    assert everything.records == older + newer


def test_errors_carry_the_trace_and_the_input_is_untouched():
    data = build([R(NOW - 10**9)])
    copy = bytes(data)
    with pytest.raises(RecordValidationError) as e:
        validate(data, V2.replace(timestamp_difference_max_ms=1), now=NOW)
    assert data == copy
    steps = e.value.trace.to_dicts()
    assert steps[-1]["decision"].startswith("rejected") and steps[-1]["source"] == "LogValidator.processRecordErrors"
    assert "LogValidator.validateBatch" in e.value.trace.sources()


def test_transactional_records_need_a_transactional_id_in_a_produce_request():
    """KafkaApis.handleProduceRequest answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53) for a
    Produce request with transactional records and no transactional id, before any validation;
    the live-broker case produce-errors/v2-transactional-without-txn-id shows the broker doing so."""
    from kafkafmt.broker import LogConfig, validate_messages_and_assign_offsets
    from kafkafmt.constants import CompressionType, TimestampType
    from kafkafmt.errors import TransactionalIdAuthorizationError
    from kafkafmt.records import MemoryRecordsBuilder
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0, producer_id=77,
                             producer_epoch=0, base_sequence=0, is_transactional=True)
    b.append(1000, b"k", b"v")
    data = b.build()
    cfg = LogConfig()
    with pytest.raises(TransactionalIdAuthorizationError) as ei:
        validate_messages_and_assign_offsets(data, cfg, offset=0, now=2000, produce_version=8)
    assert ei.value.error_code == 53
    ok = validate_messages_and_assign_offsets(data, cfg, offset=0, now=2000, produce_version=8, transactional_id="t1")
    assert ok.next_offset == 1
    # without a Produce request (a direct LogValidator call) there is no such check
    assert validate_messages_and_assign_offsets(data, cfg, offset=0, now=2000).next_offset == 1
