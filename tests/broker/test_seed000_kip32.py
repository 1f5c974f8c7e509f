"""Seed 000 (KIP-32, message timestamps) statement by statement, against Kafka 3.9's behaviour.

Each test names the seed section it checks.  Where Kafka differs from the KIP text, the test asserts
Kafka's behaviour and also shows the seed's statement, with a note (``SEED:`` / ``KAFKA:``).
Sections 6 (time-index guarantees, retention, rolling) are about the log and its indexes, not the
broker's produce/fetch rules; they are covered by the log module's tests.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import CT, LAT, NOW, R, batches, build, legacy_msg, legacy_wrapper, read  # noqa: E402
from kafkafmt.broker import LogConfig  # noqa: E402
from kafkafmt.broker import validate_messages_and_assign_offsets as validate
from kafkafmt.broker.consumer import consumer_view  # noqa: E402
from kafkafmt.broker.fetch import fetch  # noqa: E402
from kafkafmt.broker.validator import PATH_COMPRESSED_IN_PLACE, PATH_COMPRESSED_REBUILT, PATH_CONVERT, PATH_FOLLOWER  # noqa: E402
from kafkafmt.constants import INT64_MAX, TimestampType  # noqa: E402
from kafkafmt.errors import RecordValidationError  # noqa: E402

V2 = LogConfig()
V1 = LogConfig(message_format_version="0.10.0")
V0 = LogConfig(message_format_version="0.9.0")


# §1 / §2 leader ------------------------------------------------------------------------------------
def test_seed000_1_user_stamps_the_message_at_produce():
    """§1 'Allow user to stamp the message when produce': CreateTime topics keep the producer's timestamps."""
    recs = [R(NOW - 30), R(NOW - 10)]
    for magic, cfg in ((1, V1), (2, V2)):
        res = validate(build(recs, magic=magic), cfg, now=NOW)
        assert [r[1] for r in read(res.records)] == [NOW - 30, NOW - 10]


def test_seed000_2_1_lat_leader_overrides_with_server_time():
    """§2.1: message.timestamp.type=LogAppendTime → the leader's local time."""
    res = validate(build([R(NOW - 30), R(NOW - 10)]), V2.replace(timestamp_type=LAT), now=NOW + 7)
    assert [r[1] for r in read(res.records)] == [NOW + 7, NOW + 7]
    assert res.response_log_append_time == NOW + 7


@pytest.mark.parametrize("magic, cfg", [(1, V1), (2, V2)])
def test_seed000_2_1_1_lat_compressed_wrapper_gets_server_time(magic, cfg):
    """§2.1.1: 'the timestamp in the compressed message will be updated to current server time' — KAFKA: yes.

    SEED: 'If the inner message's timestamp is not -1, the broker will overwrite it and do the recompression.'
    KAFKA: never recompresses for LogAppendTime: it rewrites only the wrapper (v1) / batch header (v2)
    timestamp and sets the LogAppendTime attribute bit; the inner timestamps stay the producer's, and
    readers substitute the wrapper's time (DeepRecordsIterator / DefaultRecordBatch.RecordIterator).
    """
    data = build([R(NOW - 30), R(NOW - 10)], magic=magic, compression_="gzip")
    res = validate(data, cfg.replace(timestamp_type=LAT), now=NOW + 7, offset=0)
    assert res.path == PATH_COMPRESSED_IN_PLACE and not res.recompressed
    (b,) = batches(res.records)
    assert b.timestamp_type == LAT and b.max_timestamp == NOW + 7
    # the compressed bytes are the producer's
    assert (bytes(b.message.value) == bytes(batches(data)[0].message.value) if magic == 1 else
            res.records[61:] == data[61:])
    # a Kafka consumer sees the server time on every record ...
    assert consumer_view(res.records).timestamps == [NOW + 7, NOW + 7]
    # ... but the inner timestamps were NOT set to -1 nor overwritten: what the seed's broker would have
    # recompressed away is still there, and a reader following the seed's consumer rule (§4.1.1) sees it
    inner = [r.stored_timestamp for r in b.records()] if magic == 1 else [r.timestamp_delta for r in b.records()]
    assert inner == ([NOW - 30, NOW - 10] if magic == 1 else [0, 20])
    if magic == 1:
        assert consumer_view(res.records, variant="seed").timestamps == [NOW - 30, NOW - 10]


def test_seed000_2_1_2_non_compressed_message_timestamp_overwritten():
    """§2.1.2 — KAFKA agrees for v1 (the message's own field is rewritten, CRC recomputed); for v2 the batch
    maxTimestamp + LogAppendTime bit are rewritten and every record reads as that time."""
    res1 = validate(build([R(NOW - 30)], magic=1), V1.replace(timestamp_type=LAT), now=NOW + 7)
    (m,) = batches(res1.records)
    assert m.message.timestamp == NOW + 7 and m.timestamp_type == LAT and m.is_valid()
    res2 = validate(build([R(NOW - 30)]), V2.replace(timestamp_type=LAT), now=NOW + 7)
    assert read(res2.records)[0][1] == NOW + 7


def test_seed000_2_2_1_within_threshold_accepted_wrapper_holds_largest_inner():
    """§2.2.1: within max.message.time.difference.ms the message is accepted; the compressed message's
    timestamp becomes the largest inner timestamp (setMaxTimestamp(CREATE_TIME, maxTimestamp))."""
    inner = [legacy_msg(0, NOW - 30), legacy_msg(1, NOW - 5), legacy_msg(2, NOW - 20)]
    data = legacy_wrapper(inner, ts=NOW - 999)  # a producer-side wrapper timestamp that is not the max
    res = validate(data, V1.replace(timestamp_difference_max_ms=60_000), now=NOW)
    (b,) = batches(res.records)
    assert b.max_timestamp == NOW - 5 == res.max_timestamp


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_seed000_2_2_2_beyond_threshold_rejects_the_entire_batch(codec):
    """§2.2.2: beyond the threshold the broker rejects the entire batch.

    SEED: with TimestampExceededThresholdException.  KAFKA: RecordValidationException whose cause is
    InvalidTimestampException (error INVALID_TIMESTAMP, 32), listing each offending record; nothing is
    appended even though other records of the batch are in range.
    """
    recs = [R(NOW), R(NOW - 120_000), R(NOW - 1)]
    with pytest.raises(RecordValidationError) as e:
        validate(build(recs, compression_=codec), V2.replace(timestamp_difference_max_ms=60_000), now=NOW)
    assert e.value.kafka_exception == "InvalidTimestampException" and e.value.error_code == 32
    assert [i for _, i, _ in e.value.record_errors] == [1]


# §3 follower --------------------------------------------------------------------------------------
def test_seed000_3_1_follower_indexes_the_compressed_message_timestamp():
    """§3.1: a follower uses the compressed message's timestamp for the time index (it does not look inside):
    UnifiedLog.appendAsFollower → analyzeAndValidateRecords takes batch.maxTimestamp (the wrapper's)."""
    inner = [legacy_msg(0, NOW - 30), legacy_msg(1, NOW - 5)]
    leader_written = legacy_wrapper(inner, wrapper_offset=11, ts=NOW - 5)
    res = validate(leader_written, V1, origin="REPLICATION", offset=10, now=NOW)
    assert res.path == PATH_FOLLOWER and res.records == leader_written
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (NOW - 5, 11)
    # the follower trusts the wrapper even if it disagrees with the inner messages
    odd = legacy_wrapper(inner, wrapper_offset=11, ts=NOW - 77)
    assert validate(odd, V1, origin="REPLICATION", offset=10, now=NOW).max_timestamp == NOW - 77


def test_seed000_3_2_follower_uses_the_message_timestamp_when_not_compressed():
    data = build([R(NOW - 30), R(NOW - 5), R(NOW - 9)], magic=1, base_offset=10)
    res = validate(data, V1, origin="REPLICATION", offset=10, now=NOW)
    assert (res.max_timestamp, res.shallow_offset_of_max_timestamp) == (NOW - 5, 11)


# §4 consumer --------------------------------------------------------------------------------------
def test_seed000_4_1_1_inner_timestamp_used_when_not_minus_one():
    """§4.1.1 — KAFKA agrees for a CreateTime wrapper."""
    data = legacy_wrapper([legacy_msg(0, NOW - 30), legacy_msg(1, NOW - 5)])
    assert consumer_view(data).timestamps == [NOW - 30, NOW - 5]


def test_seed000_4_1_2_inner_minus_one_takes_the_wrapper_timestamp():
    """§4.1.2 'If the inner message timestamp is -1, the timestamp of the compressed message will be used'.

    KAFKA: the wrapper's timestamp replaces inner ones only when the wrapper is LogAppendTime (then ALL of
    them, -1 or not); under a CreateTime wrapper an inner -1 stays -1 (AbstractLegacyRecordBatch /
    LegacyRecord.timestamp()).  The seed's rule is available as ``variant="seed"``.
    """
    ct = legacy_wrapper([legacy_msg(0, -1), legacy_msg(1, NOW - 5)], ts=NOW)
    assert consumer_view(ct).timestamps == [-1, NOW - 5]                    # KAFKA
    assert consumer_view(ct, variant="seed").timestamps == [NOW, NOW - 5]   # SEED
    lat = legacy_wrapper([legacy_msg(0, -1), legacy_msg(1, NOW - 5)], ts=NOW + 1, ts_type=LAT)
    assert consumer_view(lat).timestamps == [NOW + 1, NOW + 1]              # KAFKA: LAT overrides both
    assert consumer_view(lat, variant="seed").timestamps == [NOW + 1, NOW - 5]


def test_seed000_4_2_non_compressed_message_timestamp_used():
    assert consumer_view(build([R(NOW - 3)], magic=1)).timestamps == [NOW - 3]


# §7 / §8 ------------------------------------------------------------------------------------------
def test_seed000_7_1_timestamps_need_not_be_monotonic():
    """§7.1: the broker accepts out-of-order CreateTime timestamps; the max is not the last record's."""
    res = validate(build([R(NOW - 1), R(NOW - 50), R(NOW - 20)]), V2, now=NOW, offset=0)
    assert [r[1] for r in read(res.records)] == [NOW - 1, NOW - 50, NOW - 20]
    assert res.max_timestamp == NOW - 1


def test_seed000_8_1_threshold_long_max_is_create_time():
    """§8.1: a threshold of Long.MaxValue accepts any timestamp: pure CreateTime."""
    cfg = V2.replace(timestamp_difference_max_ms=INT64_MAX)
    res = validate(build([R(0), R(NOW * 5)]), cfg, now=NOW)
    assert [r[1] for r in read(res.records)] == [0, NOW * 5]


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_seed000_8_2_threshold_zero(codec):
    """§8.2 'If the time difference threshold is set to 0, the timestamp ... is equivalent to LogAppendTime.'

    KAFKA: a threshold of 0 does not rewrite anything: every record whose timestamp is not exactly ``now``
    is REJECTED (INVALID_TIMESTAMP); a record stamped exactly ``now`` is accepted, so accepted timestamps do
    equal the append time (the only sense in which the seed holds), and -1 passes untouched.  A real
    LogAppendTime topic accepts the same batch and overwrites the time.
    """
    cfg = V2.replace(timestamp_difference_max_ms=0)
    with pytest.raises(RecordValidationError) as e:
        validate(build([R(NOW), R(NOW - 1)], compression_=codec), cfg, now=NOW)
    assert [i for _, i, _ in e.value.record_errors] == [1]
    assert e.value.record_errors[0][2].endswith(f"within [{NOW}, {NOW}]")
    ok = validate(build([R(NOW), R(-1)], compression_=codec), cfg, now=NOW)
    assert [r[1] for r in read(ok.records)] == [NOW, -1]
    lat = validate(build([R(NOW), R(NOW - 1)], compression_=codec), V2.replace(timestamp_type=LAT), now=NOW)
    assert [r[1] for r in read(lat.records)] == [NOW, NOW]


def test_seed000_8_3_threshold_between_bounds_keeps_timestamps_in_range():
    cfg = V2.replace(timestamp_difference_max_ms=1000)
    assert validate(build([R(NOW - 1000), R(NOW + 1000)]), cfg, now=NOW).max_timestamp == NOW + 1000
    with pytest.raises(RecordValidationError):
        validate(build([R(NOW - 1001)]), cfg, now=NOW)
    with pytest.raises(RecordValidationError):
        validate(build([R(NOW + 1001)]), cfg, now=NOW)


# rolling upgrade, phase 1 (message.format.version=0.9.0) ------------------------------------------
def test_seed000_phase1_1_format_0_9_0_writes_v0():
    res = validate(build([R(NOW)]), V0, now=NOW)
    assert res.path == PATH_CONVERT and [b.magic for b in batches(res.records)] == [0]


def test_seed000_phase1_6_1_produce_v1_request_v0_compressed_is_decompressed_reassigned_recompressed():
    """Phase 1 §6.1: ProduceRequest V1 (v0 messages): decompress, assign absolute offsets, recompress."""
    res = validate(build([R(-1), R(-1)], magic=0, compression_="gzip"), V0, offset=70, now=NOW, produce_version=1)
    assert res.path == PATH_COMPRESSED_REBUILT and res.recompressed
    (b,) = batches(res.records)
    assert b.magic == 0 and [m.offset for m in b.inner_messages()] == [70, 71]


def test_seed000_phase1_6_2_produce_v2_request_v1_is_down_converted_to_v0_ignoring_time():
    """Phase 1 §6.2: ProduceRequest V2 (v1 messages) on 0.9.0: decompress, absolute offsets, time ignored,
    recompress, i.e. down-convert to v0."""
    res = validate(build([R(NOW - 5), R(NOW - 1)], magic=1, compression_="gzip"), V0, offset=70, now=NOW,
                   produce_version=2)
    assert res.path == PATH_COMPRESSED_REBUILT and res.converted and res.recompressed
    (b,) = batches(res.records)
    assert b.magic == 0 and [m.offset for m in b.inner_messages()] == [70, 71]
    assert consumer_view(res.records).timestamps == [-1, -1] and res.max_timestamp == -1


@pytest.mark.parametrize("fetch_version", [1, 2])
def test_seed000_phase1_6_3_and_6_4_fetch_v1_v2_on_v0_topic_is_zero_copy(fetch_version):
    """Phase 1 §6.3/§6.4: data on disk is v0, fetch v1 and v2 are answered with zero-copy."""
    log = build([R(-1), R(-1)], magic=0)
    res = fetch(log, topic_config=V0, fetch_version=fetch_version)
    assert res.zero_copy and res.records == log and res.cost.decompressions == 0


# phase 2 (message.format.version=0.10.0) -----------------------------------------------------------
@pytest.mark.parametrize("ts_type", [CT, LAT])
def test_seed000_phase2_2_1_produce_v0_up_converted_to_v1(ts_type):
    """Phase 2 §2.1: ProduceRequest V1 (v0): decompress, relative offsets, time -1 for CreateTime or server time
    for LogAppendTime, recompress: up-convert to v1."""
    res = validate(build([R(-1), R(-1)], magic=0, compression_="gzip"), V1.replace(timestamp_type=ts_type),
                   offset=30, now=NOW, produce_version=1)
    assert res.path == PATH_COMPRESSED_REBUILT and res.converted and res.recompressed
    (b,) = batches(res.records)
    assert b.magic == 1 and b.last_offset == 31
    assert [m.offset for m in b.inner_messages()] == [0, 1]  # relative (KIP-31)
    expected = -1 if ts_type == CT else NOW
    assert [m.timestamp for m in b.inner_messages()] == [expected, expected]
    assert consumer_view(res.records).timestamps == [expected, expected]


def test_seed000_phase2_2_2_produce_v1_compressed_not_recompressed():
    """Phase 2 §2.2: ProduceRequest V2 (v1): relative offsets, maybe overwrite the time, NOT recompress."""
    data = build([R(NOW - 5), R(NOW - 1)], magic=1, compression_="gzip")
    res = validate(data, V1, offset=30, now=NOW, produce_version=2)
    assert res.path == PATH_COMPRESSED_IN_PLACE and not res.recompressed
    assert bytes(batches(res.records)[0].message.value) == bytes(batches(data)[0].message.value)


def test_seed000_phase2_2_3_fetch_v1_on_v1_topic_down_converts_to_v0():
    log = build([R(NOW - 5), R(NOW - 1)], magic=1, compression_="gzip")
    res = fetch(log, topic_config=V1, fetch_version=1)
    assert not res.zero_copy and res.to_magic == 0
    assert [b.magic for b in batches(res.records)] == [0] and consumer_view(res.records).timestamps == [-1, -1]


def test_seed000_phase2_2_4_fetch_v2_on_v1_topic_is_zero_copy():
    log = build([R(NOW - 5), R(NOW - 1)], magic=1, compression_="gzip")
    res = fetch(log, topic_config=V1, fetch_version=2)
    assert res.zero_copy and res.records == log


# phase 3: one broker first ------------------------------------------------------------------------
def test_seed000_phase3_2_1_broker_b_replicates_v0_data_as_is():
    """Phase 3 §2.1: broker B (format 0.10.0) fetches from the other (0.9.0) brokers for replication; the follower
    append (UnifiedLog.appendAsFollower) takes the leader's bytes as they are: no conversion to B's format."""
    leader_data = build([R(-1), R(-1)], magic=0, compression_="gzip", base_offset=20)
    res = validate(leader_data, V1, origin="REPLICATION", offset=20, now=NOW)
    assert res.path == PATH_FOLLOWER and res.records == leader_data


def test_seed000_phase3_2_2_broker_b_serves_v1_requests_from_older_brokers_by_down_converting():
    """Phase 3 §2.2: B only sees FetchRequest V1 from the other brokers and clients.  As leader of a 0.10.0
    topic it down-converts for them; followers skip only the downconversion.enable check."""
    log = build([R(NOW)], magic=1, compression_="gzip")
    res = fetch(log, topic_config=V1.replace(downconversion_enable=False), fetch_version=1, is_follower=True)
    assert res.to_magic == 0 and [b.magic for b in batches(res.records)] == [0]


# phase 3: rollback ---------------------------------------------------------------------------------
def test_seed000_phase3_rollback_needs_the_v1_data_nuked():
    """Phase 3 §3: rollback = shut down, nuke the data, set 0.9.0, re-replicate.  Why the nuking: Kafka decides
    down-conversion from the topic CONFIG (KafkaApis.maybeConvertFetchedData), so v1 data left on disk under a
    0.9.0 setting is sent unconverted to a fetch v1 (v0-only) client, which cannot read it."""
    v1_on_disk = build([R(NOW - 5)], magic=1)
    res = fetch(v1_on_disk, topic_config=V0, fetch_version=1)
    assert res.zero_copy and res.records == v1_on_disk
    view = consumer_view(res.records, client_magic=0)
    # the 0.9 client reads the key length from the v1 timestamp's high word (NOW >> 32 = 395 bytes): too long
    assert (view.error, view.error_message) == ("KafkaException", "Error deserializing key/value for partition "
                                                                  "topic-0 at offset 0")
    # after nuking and re-replicating, the follower path writes what the (v0) leader sends
    v0_from_leader = build([R(NOW - 5)], magic=0)
    assert validate(v0_from_leader, V0, origin="REPLICATION", offset=0, now=NOW).records == v0_from_leader


def test_seed000_phase2_note_produce_versions_are_recorded_in_the_trace():
    res = validate(build([R(NOW)], magic=1), V1, produce_version=2, now=NOW)
    (step,) = res.trace.find("produce request version")
    assert step.values["produce_version"] == 2 and "v1" in step.decision
    assert TimestampType.CREATE_TIME == res.timestamp_type
