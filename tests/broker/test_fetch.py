"""The fetch path: KafkaApis.maybeConvertFetchedData, RecordsUtil.downConvert, LazyDownConversionRecords(Send),
and the conversion cost accounting."""
from __future__ import annotations

import os
import struct
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import LAT, NOW, R, batches, build, read, v2  # noqa: E402
from kafkafmt.broker import BrokerConfig, LogConfig  # noqa: E402
from kafkafmt.broker.fetch import (  # noqa: E402
    MAX_READ_SIZE,
    down_convert,
    fetch,
    fetch_version_for_magic,
    max_magic_for_fetch_version,
    overflow_batch,
)
from kafkafmt.constants import CompressionType, ControlRecordType  # noqa: E402
from kafkafmt.errors import UnsupportedCompressionError  # noqa: E402
from kafkafmt.records import end_txn_marker  # noqa: E402
from kafkafmt.records.record import Header  # noqa: E402

V2 = LogConfig()
V1 = LogConfig(message_format_version="0.10.0")
V0 = LogConfig(message_format_version="0.9.0")


@pytest.mark.parametrize("fmt_cfg, version, target", [
    (V0, 0, None), (V0, 1, None), (V0, 2, None),
    (V1, 0, 0), (V1, 1, 0), (V1, 2, None), (V1, 3, None), (V1, 4, None),
    (V2, 1, 0), (V2, 2, 1), (V2, 3, 1), (V2, 4, None), (V2, 17, None),
])
def test_target_magic_from_topic_config_and_fetch_version(fmt_cfg, version, target):
    """KafkaApis.maybeConvertFetchedData: format > v0 and fetch ≤ 1 → v0; format > v1 and fetch ≤ 3 → v1."""
    res = fetch(build([R(NOW)], magic=fmt_cfg.to_magic), topic_config=fmt_cfg, fetch_version=version)
    assert res.to_magic == target and res.zero_copy is (target is None) and res.error is None


def test_decision_uses_the_topic_config_not_the_bytes_on_disk():
    """'it's unsafe to downgrade the message format version after a single message has been produced'."""
    v2_on_disk = build([R(NOW)])
    assert fetch(v2_on_disk, topic_config=V1, fetch_version=2).zero_copy  # v2 bytes to a v1-only client
    # IBP ≥ 3.0: the format is always v2, so every fetch ≤ v3 goes through conversion, even for v1 data
    v1_on_disk = build([R(NOW)], magic=1)
    res = fetch(v1_on_disk, topic_config=V1.replace(broker=BrokerConfig(inter_broker_protocol_version="3.9")), fetch_version=3)
    assert res.to_magic == 1 and res.records == v1_on_disk and res.cost.batches_copied == 1


def test_client_magic_maps_to_a_fetch_version():
    assert [fetch_version_for_magic(m) for m in (0, 1, 2)] == [1, 3, 17]
    assert [max_magic_for_fetch_version(v) for v in (0, 1, 2, 3, 4, 17)] == [0, 0, 1, 1, 2, 2]
    assert fetch(build([R(NOW)]), topic_config=V2, client_max_magic=1).to_magic == 1


def test_zstd_topic_and_old_fetch_version():
    """compression.type=zstd and fetch < 10 → UNSUPPORTED_COMPRESSION_TYPE (also for followers)."""
    log = build([R(NOW)], compression_="zstd")
    cfg = V2.replace(compression_type="zstd")
    for follower in (False, True):
        assert fetch(log, topic_config=cfg, fetch_version=9, is_follower=follower).error == "UNSUPPORTED_COMPRESSION_TYPE"
    assert fetch(log, topic_config=cfg, fetch_version=10).zero_copy


def test_downconversion_disabled_is_unsupported_version_for_consumers_only():
    """KIP-283 message.downconversion.enable=false: consumers get UNSUPPORTED_VERSION; followers are served."""
    cfg = V2.replace(downconversion_enable=False)
    log = build([R(NOW)])
    assert fetch(log, topic_config=cfg, fetch_version=3).error == "UNSUPPORTED_VERSION"
    assert fetch(log, topic_config=cfg, fetch_version=3, is_follower=True).to_magic == 1
    assert fetch(log, topic_config=cfg, fetch_version=4).zero_copy


def test_down_convert_drops_control_batches_and_headers_keeps_offsets_and_aborted_data():
    """RecordsUtil.downConvert: control batches dropped, headers dropped, producer state dropped, offsets kept."""
    data = v2([R(NOW - 1, b"a", b"1", (Header("h", b"x"),)), R(NOW, b"b", b"2")], pid=7, epoch=1, seq=0, txn=True,
              base_offset=10)
    marker = end_txn_marker(base_offset=12, timestamp=NOW, partition_leader_epoch=0, producer_id=7, producer_epoch=1,
                            control_type=ControlRecordType.ABORT, coordinator_epoch=0)
    dc = down_convert(data + marker, 1, 0)
    assert read(dc.records) == [(10, NOW - 1, b"a", b"1", ()), (11, NOW, b"b", b"2", ())]
    assert all(b.producer_id == -1 and not b.is_transactional for b in batches(dc.records))
    assert dc.cost.batches_dropped == 1 and dc.cost.batches_rebuilt == 1
    assert dc.stats.num_converted_records == 2


def test_down_convert_keeps_offset_gaps_and_the_batch_codec():
    data = build([R(NOW)] * 3, compression_="gzip", base_offset=10, offsets=[10, 12, 15])
    dc = down_convert(data, 1, 0)
    (b,) = batches(dc.records)
    assert b.magic == 1 and b.compression == CompressionType.GZIP and b.last_offset == 15
    assert [r[0] for r in read(dc.records)] == [10, 12, 15]
    assert [m.offset for m in b.inner_messages()] == [0, 2, 5]  # relative to the first kept record


def test_records_below_the_fetch_offset_dropped_only_from_uncompressed_batches():
    """'If a client requests records in v1 format starting from the middle of an uncompressed batch in v2 format,
    we need to drop records' (librdkafka relies on it); compressed batches are kept whole."""
    plain = build([R(NOW)] * 4)
    assert [r[0] for r in read(down_convert(plain, 1, 2).records)] == [2, 3]
    comp = build([R(NOW)] * 4, compression_="gzip")
    assert [r[0] for r in read(down_convert(comp, 1, 2).records)] == [0, 1, 2, 3]
    assert down_convert(plain, 1, 10).records == b""  # nothing left: the batch is skipped


def test_lat_batch_becomes_lat_v1_carrying_its_time():
    data = build([R(NOW - 5), R(NOW - 3)], ts_type=LAT, log_append_time=NOW + 9, compression_="gzip")
    (b,) = batches(down_convert(data, 1, 0).records)
    assert b.timestamp_type == LAT and b.max_timestamp == NOW + 9
    assert [m.timestamp for m in b.inner_messages()] == [NOW + 9, NOW + 9]


def test_batches_at_or_below_the_target_are_copied_verbatim():
    """A v0 batch stays v0 in a v1 fetch (not up-converted); a v1 batch in a v1 fetch is copied as is."""
    v0 = build([R(-1)], magic=0)
    v1 = build([R(NOW)], magic=1, base_offset=1)
    v2b = build([R(NOW)], base_offset=2)
    dc = down_convert(v0 + v1 + v2b, 1, 0)
    assert dc.records[:len(v0) + len(v1)] == v0 + v1
    assert [b.magic for b in batches(dc.records)] == [0, 1, 1]
    assert (dc.cost.batches_copied, dc.cost.batches_rebuilt) == (2, 1)


def test_zstd_batch_cannot_be_down_converted():
    with pytest.raises(UnsupportedCompressionError, match="Down-conversion of zstandard-compressed batches is not "
                                                          "supported"):
        down_convert(build([R(NOW)], compression_="zstd"), 1, 0)
    res = fetch(build([R(NOW)], compression_="zstd"), topic_config=V2, fetch_version=3)
    assert res.error == "UNSUPPORTED_COMPRESSION_TYPE" and res.records == b""


def test_zstd_after_the_first_chunk_ends_in_an_overflow_batch():
    """LazyDownConversionRecordsSend: UnsupportedCompressionTypeException mid-stream → overflow batch; the
    consumer gets the error on its next fetch (from the zstd batch's offset)."""
    first = build([R(NOW)], base_offset=0)
    zstd = build([R(NOW)], compression_="zstd", base_offset=1)
    res = fetch(first + zstd, topic_config=V2, fetch_version=3)
    assert res.error is None and res.deferred_error == "UNSUPPORTED_COMPRESSION_TYPE"
    assert [r[0] for r in read(res.records)] == [0]
    size = max(len(first + zstd), len(res.records))
    assert res.wire_size == size and len(res.wire_records) == size
    pad = res.wire_records[len(res.records):]
    assert struct.unpack_from(">q", pad, 0)[0] == -1


def test_wire_size_is_the_max_of_source_and_first_chunk_and_longer_output_is_cut():
    """LazyDownConversionRecords.sizeInBytes = max(records.sizeInBytes, first converted chunk size)."""
    log = b"".join(build([R(NOW, b"k", b"v")] * 5, base_offset=i * 5) for i in range(3))  # v1 output is larger
    res = fetch(log, topic_config=V2, fetch_version=3)
    first_chunk = down_convert(batches(log)[:1], 1, 0).records
    assert res.wire_size == max(len(log), len(first_chunk)) == len(log)
    assert len(res.records) > len(log) and res.wire_records == res.records[:len(log)]


def test_overflow_batch_layout():
    """buildOverflowBatch: offset -1, length max(remaining + 1, 61), zeros, cut to remaining."""
    ob = overflow_batch(100)
    assert len(ob) == 100 and struct.unpack_from(">qi", ob, 0) == (-1, 101) and set(ob[12:]) == {0}
    assert struct.unpack_from(">qi", overflow_batch(20), 0) == (-1, 61)
    assert overflow_batch(5) == b"\xff" * 5
    assert len(overflow_batch(MAX_READ_SIZE * 2)) == MAX_READ_SIZE


def test_only_control_batches_promise_an_overflow_message():
    marker = end_txn_marker(base_offset=0, timestamp=NOW, partition_leader_epoch=0, producer_id=7, producer_epoch=1,
                            control_type=ControlRecordType.COMMIT, coordinator_epoch=0)
    res = fetch(marker, topic_config=V2, fetch_version=3)
    assert res.records == b"" and res.wire_size == 12 and res.wire_records == overflow_batch(12)


def test_log_read_starts_at_the_batch_containing_the_fetch_offset():
    """LogSegment.read: the first batch with lastOffset ≥ fetchOffset; whole batches (records below included)."""
    log = build([R(NOW)] * 3) + build([R(NOW)] * 3, base_offset=3) + build([R(NOW)] * 3, base_offset=6)
    res = fetch(log, topic_config=V2, fetch_offset=4)
    assert [r[0] for r in read(res.records)] == [3, 4, 5, 6, 7, 8]
    cut = fetch(log, topic_config=V2, fetch_offset=4, max_bytes=len(batches(log)[1].raw) + 10)
    assert len(cut.records) == len(batches(log)[1].raw) + 10  # may end inside a batch
    assert fetch(log, topic_config=V2, fetch_offset=9).records == b""
    assert fetch(log, topic_config=V2, fetch_offset=10).error == "OFFSET_OUT_OF_RANGE"
    # down-conversion then also drops records below the fetch offset of the uncompressed batch
    assert [r[0] for r in read(fetch(log, topic_config=V2, fetch_offset=4, fetch_version=3).records)] == [4, 5, 6, 7, 8]


def _lz4_log():
    return b"".join(build([R(NOW + i * 1000 + j, b"key-%d" % j, b"value-%d-%d" % (i, j)) for j in range(1000)],
                          compression_="lz4", base_offset=i * 1000) for i in range(10))


def test_cost_accounting_v1_fetch_of_10000_lz4_records():
    """v2 on disk, 10 lz4 batches × 1000 records: a v1 fetch decompresses and recompresses each batch once;
    a v2 fetch is zero-copy and costs no codec work at all."""
    log = _lz4_log()
    down = fetch(log, topic_config=V2, fetch_version=3)
    c = down.cost
    assert (c.decompressions, c.compressions, c.batches_rebuilt, c.batches_copied) == (10, 10, 10, 0)
    assert c.records_touched == 10_000 and down.stats.num_converted_records == 10_000
    assert c.bytes_read == len(log)
    # decompressed bytes = the v2 record sections; compressed bytes = the v1 inner message sets
    assert c.bytes_decompressed == sum(sum(r.size for r in b.records()) for b in batches(log))
    assert c.bytes_compressed == sum(sum(12 + m.size for m in b.inner_messages()) for b in batches(down.records))
    assert c.cpu_time_ns > 0 and c.bytes_out == len(down.records)
    assert all(b.magic == 1 and b.compression == CompressionType.LZ4 for b in batches(down.records))
    zero = fetch(log, topic_config=V2, fetch_version=17)
    z = zero.cost
    assert zero.zero_copy and zero.records == log
    assert (z.decompressions, z.compressions, z.bytes_decompressed, z.bytes_compressed, z.records_touched,
            z.batches_rebuilt, z.cpu_time_ns) == (0, 0, 0, 0, 0, 0, 0)
    assert set(down.cost.to_dict()) >= {"bytes_read", "bytes_decompressed", "bytes_compressed", "records_touched",
                                        "batches_rebuilt", "batches_copied", "decompressions", "compressions",
                                        "cpu_time_ns"}


def test_trace_explains_the_decision():
    res = fetch(build([R(NOW)]), topic_config=V2, fetch_version=1)
    steps = res.trace.to_dicts()
    assert any(s["source"] == "KafkaApis.maybeConvertFetchedData" and "v0" in s["decision"] for s in steps)
    assert any(s["source"] == "RecordsUtil.convertRecordBatch" for s in steps)
    assert "FetchResult" not in res.trace.render()
