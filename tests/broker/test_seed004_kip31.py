"""Seed 004 (KIP-31, relative offsets in compressed message sets; message.format.version), statement by
statement, against Kafka 3.9."""
from __future__ import annotations

import os
import struct
import sys
import zlib

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import NOW, R, batches, build, legacy_msg, legacy_wrapper, read, v2  # noqa: E402
from kafkafmt.broker import LogConfig  # noqa: E402
from kafkafmt.broker import validate_messages_and_assign_offsets as validate
from kafkafmt.broker.consumer import consumer_view  # noqa: E402
from kafkafmt.broker.fetch import fetch  # noqa: E402
from kafkafmt.broker.validator import PATH_COMPRESSED_IN_PLACE, PATH_COMPRESSED_REBUILT, PATH_CONVERT  # noqa: E402
from kafkafmt.errors import CorruptRecordError  # noqa: E402

V2 = LogConfig()
V1 = LogConfig(message_format_version="0.10.0")
V0 = LogConfig(message_format_version="0.9.0")


def test_seed004_producer_writes_relative_inner_offsets_wrapper_holds_the_last():
    """'When the producer compresses a message, write the relative offset value in the raw message's offset
    field.'  Kafka's builder: inner 0..n-1; the wrapper offset is the last absolute offset (not blank)."""
    (b,) = batches(build([R(NOW)] * 3, magic=1, compression_="gzip", base_offset=500))
    assert [m.offset for m in b.inner_messages()] == [0, 1, 2] and b.last_offset == 502


def test_seed004_broker_decompresses_to_verify_the_crc():
    """Broker step 1 'Decompress the message to verify the CRC': a bad inner CRC → CorruptRecordException."""
    data = legacy_wrapper([legacy_msg(0, NOW), legacy_msg(1, NOW, crc=1)])
    with pytest.raises(CorruptRecordError) as e:
        validate(data, V1, now=NOW)
    assert e.value.reason.startswith("Record is corrupt (stored crc = 1, computed crc = ")


def test_seed004_note_non_contiguous_relative_offsets_are_reassigned():
    """NOTE: non-contiguous relative offsets (mirrored compacted topic) → the broker reassigns rather than rejects.
    Kafka does it by rebuilding (and recompressing) the wrapper (KAFKA-9669, 2.6; before that it was rejected)."""
    data = build([R(NOW)] * 3, magic=1, compression_="gzip", offsets=[10, 12, 15], base_offset=10)
    res = validate(data, V1, offset=0, now=NOW)
    assert res.path == PATH_COMPRESSED_REBUILT
    (b,) = batches(res.records)
    assert [m.offset for m in b.inner_messages()] == [0, 1, 2] and b.last_offset == 2


def test_seed004_broker_sets_only_the_outer_offset_without_recompression():
    """Broker step 2: 'Set outer message's base offset ... no need to re-compress'."""
    data = build([R(NOW - 1)] * 3, magic=1, compression_="lz4")
    res = validate(data, V1, offset=1000, now=NOW)
    assert res.path == PATH_COMPRESSED_IN_PLACE and not res.recompressed
    # only the 8-byte entry offset changed (the wrapper timestamp is already the max, so no CRC change)
    assert res.records[8:] == data[8:]
    assert struct.unpack_from(">q", res.records, 0)[0] == 1002


def test_seed004_cleaner_holes_are_read_as_absolute_offsets_with_holes():
    """'When the log cleaner compacts log segments ... This will leave holes inside the new wrapped message';
    the consumer converts relative to absolute: wrapper 105 with inner 0,2,5 → 100, 102, 105."""
    cleaned = legacy_wrapper([legacy_msg(0, NOW), legacy_msg(2, NOW), legacy_msg(5, NOW)], wrapper_offset=105)
    view = consumer_view(cleaned)
    assert view.offsets == [100, 102, 105]
    assert "wrapper 105" in view.records[0].derivation


def test_seed004_consumer_converts_relative_offsets_back_to_absolute():
    data = validate(build([R(NOW)] * 3, magic=1, compression_="gzip"), V1, offset=77, now=NOW).records
    assert consumer_view(data).offsets == [77, 78, 79]


@pytest.mark.parametrize("magic_in, cfg, magic_out", [(0, V1, 1), (1, V0, 0), (2, V1, 1), (0, V2, 2)])
def test_seed004_mfv_2_broker_writes_the_configured_format(magic_in, cfg, magic_out):
    """message.format.version 'It works in the following way' 2: the broker converts to the configured version."""
    for codec in ("none", "gzip"):
        res = validate(build([R(NOW - 1), R(NOW)], magic=magic_in, compression_=codec), cfg, now=NOW)
        assert {b.magic for b in batches(res.records)} == {magic_out}
        assert res.path == (PATH_CONVERT if codec == "none" else PATH_COMPRESSED_REBUILT)


@pytest.mark.parametrize("fetch_version, zero_copy", [(1, False), (2, True), (3, True), (4, True)])
def test_seed004_mfv_3_zero_copy_when_the_fetch_version_can_carry_the_format(fetch_version, zero_copy):
    """3.1 'if the FetchRequest version is equal to message.format.version → zero-copy'; 3.2 lower → down-convert.
    KAFKA: thresholds, not equality: a v1 topic is zero-copy for fetch ≥ 2 (v2 and v3 both carry v1)."""
    log = build([R(NOW)], magic=1)
    res = fetch(log, topic_config=V1, fetch_version=fetch_version)
    assert res.zero_copy is zero_copy
    assert res.to_magic == (None if zero_copy else 0)


def test_seed004_migration_2_1_produce_v1_request_is_up_converted_and_recompressed():
    """Migration 2.1: ProduceRequest V1 (v0): decompress, relative offsets, recompress (up-convert)."""
    res = validate(build([R(-1)] * 2, magic=0, compression_="snappy"), V1, offset=9, now=NOW, produce_version=1)
    (b,) = batches(res.records)
    assert res.recompressed and b.magic == 1 and [m.offset for m in b.inner_messages()] == [0, 1]


def test_seed004_migration_2_2_produce_v2_request_no_recompression():
    data = build([R(NOW)] * 2, magic=1, compression_="snappy")
    res = validate(data, V1, offset=9, now=NOW, produce_version=2)
    assert res.path == PATH_COMPRESSED_IN_PLACE and res.records[8:] == data[8:]


def test_seed004_migration_2_3_and_2_4_fetch_v1_down_converts_fetch_v2_zero_copy():
    log = build([R(NOW)] * 2, magic=1, compression_="snappy")
    down = fetch(log, topic_config=V1, fetch_version=1)
    assert down.to_magic == 0 and down.cost.decompressions == 1 and down.cost.compressions == 1
    assert [b.magic for b in batches(down.records)] == [0]
    assert fetch(log, topic_config=V1, fetch_version=2).zero_copy


def test_seed004_old_consumers_cannot_read_v1():
    """'For old consumers that cannot recognize V1, ... an exception will be thrown for unsupported version.'

    KAFKA (0.9.0 Java consumer): the magic byte is not checked.  A v1 message has the same CRC32 coverage,
    so it passes the CRC check, and its key length is read at the v0 position, i.e. from the timestamp's
    high 32 bits (NOW >> 32 = 395 here): the slice fails and the client throws
    KafkaException('Error deserializing key/value for partition ... at offset N').
    """
    assert NOW >> 32 == 395
    view = consumer_view(build([R(NOW)], magic=1, base_offset=3), client_magic=0)
    assert (view.error, view.error_message, view.error_offset) == (
        "KafkaException", "Error deserializing key/value for partition topic-0 at offset 3", 3)
    assert consumer_view(build([R(NOW)], magic=1), client_magic=1).error is None


def test_the_0_9_java_consumer_stalls_where_the_parse_fails_and_a_0_10_one_raises():
    """What the application sees (row consumer.unparsable_fetch): the 0.9.0.1 Fetcher parses inside the
    response's completion listener and NetworkClient.poll only logs its KafkaException, so a v0 record read
    before the v1 one is dropped too; KAFKA-3977 (0.10.0.1) hands the exception to KafkaConsumer.poll."""
    data = build([R(NOW)], magic=0, base_offset=2) + build([R(NOW)], magic=1, base_offset=3)
    parse = consumer_view(data, client_magic=0)
    assert (parse.outcome, parse.offsets, parse.error) == ("raises", [2], "KafkaException")
    stall = consumer_view(data, client_magic=0, client_line="0.9")
    assert (stall.outcome, stall.records, stall.error) == ("stalls", [], None)
    assert [r.offset for r in stall.dropped] == [2]
    assert stall.logged == "KafkaException: Error deserializing key/value for partition topic-0 at offset 3"
    assert any(step.values.get("kafka_line_row") == "consumer.unparsable_fetch" for step in stall.trace)
    raised = consumer_view(data, client_magic=0, client_line="0.10.0")
    assert (raised.outcome, raised.offsets, raised.error) == ("raises", [2], "KafkaException")
    assert consumer_view(data, client_magic=1, client_line="0.9").outcome == "records"


def test_old_010_consumer_on_v2_fails_the_crc_check_with_the_leader_epoch_as_stored_crc():
    """A 0.10 consumer reading a v2 batch: the bytes where its CRC should be are the partition leader epoch
    (-1 → 4294967295) and its CRC32 covers magic..end; if the byte it takes for 'attributes' (the first CRC32C
    byte) names no codec, Fetcher.parseRecord throws 'Record for partition ... is corrupt'."""
    for i in range(64):
        data = v2([R(NOW, b"k", b"v%d" % i)])
        if data[17] & 7 == 0:
            break
    else:  # pragma: no cover
        pytest.skip("no suitable batch found")
    view = consumer_view(data, client_magic=1)
    assert view.error == "KafkaException"
    assert view.error_message == (f"Record for partition topic-0 at offset 0 is corrupt (stored crc = 4294967295, "
                                  f"computed crc = {zlib.crc32(data[16:])})")
    bad_codec = next(v2([R(NOW, b"k", b"w%d" % i)]) for i in range(64)
                     if v2([R(NOW, b"k", b"w%d" % i)])[17] & 7 >= 4)
    assert consumer_view(bad_codec, client_magic=1).error == "IllegalArgumentException"


def test_seed004_read_as_modern_consumer_matches_records_module():
    data = build([R(NOW - 1, b"a", b"1"), R(NOW, None, b"2")], magic=1, compression_="gzip", base_offset=5)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in consumer_view(data).records] == \
        [(o, t, k, v) for o, t, k, v, _ in read(data)]


def test_a_0_9_consumer_decompresses_the_null_value_of_a_v1_wrapper_without_timestamp():
    """A gzip v1 wrapper whose timestamp is -1 (v0 messages converted up) read with the 0.9 layout: key and value
    lengths come from the timestamp's two halves, -1 and -1, so Record.value() is null and RecordsIterator's
    ByteBufferInputStream over it throws a NullPointerException, which 0.9.0.1's NetworkClient logged live
    (seed004-migration, step 10); a wrapper with a real timestamp fails to decompress misplaced bytes instead."""
    inner = [legacy_msg(i, -1, b"k%d" % i, b"v%d" % i, magic=1) for i in range(2)]
    no_time = consumer_view(legacy_wrapper(inner, magic=1), client_magic=0, client_line="0.9")
    assert no_time.outcome == "stalls" and no_time.logged.startswith("NullPointerException: the gzip wrapper's "
                                                                      "value read from a v1 entry is null")
    timed = [legacy_msg(i, NOW, b"k%d" % i, b"v%d" % i, magic=1) for i in range(2)]
    view = consumer_view(legacy_wrapper(timed, magic=1), client_magic=0, client_line="0.9")
    assert view.outcome == "stalls" and view.logged.startswith("KafkaException: the gzip 'message set' read from a "
                                                               "v1 entry is not one")
