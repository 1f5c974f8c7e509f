"""Kafka's own accounting of a fetch's down-conversion (KIP-188 ``RecordConversionStats``): which bytes are read,
which chunks are converted and counted, per Kafka line.

Rules read in apache/kafka 1.1.1, 2.8.2 and 3.9: ``ReplicaManager.readFromLocalLog`` (``minOneMessage`` only from
Fetch v3, KIP-74), ``AbstractRecords.hasCompatibleMagic``, ``FileRecords.downConvert`` (eager, 1.x),
``LazyDownConversionRecords`` / ``LazyDownConversionRecordsSend`` (KIP-283, 2.0 on).
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import NOW, R, build, read  # noqa: E402
from kafkafmt.broker import BrokerConfig, LogConfig  # noqa: E402
from kafkafmt.broker.fetch import MAX_READ_SIZE, down_convert, fetch, min_one_message, overflow_batch  # noqa: E402
from kafkafmt.constants import ControlRecordType  # noqa: E402
from kafkafmt.records import MemoryRecords, end_txn_marker  # noqa: E402


def v2_topic(line: str) -> LogConfig:
    return LogConfig(broker=BrokerConfig(kafka_line=line))


def _log(n_batches=2, per_batch=3, value=b"value-%d"):
    return b"".join(build([R(NOW + j, b"k", value % j if b"%" in value else value) for j in range(per_batch)],
                          base_offset=i * per_batch) for i in range(n_batches))


def _first_size(log: bytes) -> int:
    return next(MemoryRecords(log).batches()).size_in_bytes


def test_min_one_message_from_fetch_v3():
    """KIP-74: ``hardMaxBytesLimit = versionId <= 2``; ``minOneMessage = !hardMaxBytesLimit``."""
    assert [min_one_message(v) for v in range(5)] == [False, False, False, True, True]


@pytest.mark.parametrize("line", ["1.1", "2.8"])
@pytest.mark.parametrize("version", [0, 1, 2])
def test_partial_first_entry_is_sent_unconverted_on_1x_and_2x(line, version):
    """Fetch v0-v2, partition max bytes below the first entry: the slice holds part of it, no whole batch, so
    ``hasCompatibleMagic`` (a loop over no batch) is true: the partial bytes go out as they are, nothing converted."""
    log = _log()
    res = fetch(log, topic_config=v2_topic(line), fetch_version=version, max_bytes=30)
    assert res.error is None and res.zero_copy and res.to_magic is None
    assert res.records == res.wire_records == log[:30]
    assert (res.stats.temporary_memory_bytes, res.stats.num_converted_records) == (0, 0)
    assert res.cost.records_touched == 0 and res.chunks_converted == 0


@pytest.mark.parametrize("version", [0, 1, 2])
def test_partial_first_entry_sends_nothing_on_3x(version):
    """3.x (no hasCompatibleMagic since KAFKA-12944): ``LazyDownConversionRecords`` of a slice with no whole
    batch: no first chunk and, since KAFKA-13116, a size of 0: nothing is sent, nothing converted."""
    res = fetch(_log(), topic_config=v2_topic("3.9"), fetch_version=version, max_bytes=30)
    assert res.error is None and not res.zero_copy and res.to_magic == (0 if version <= 1 else 1)
    assert res.records == b"" and res.wire_records == b"" and res.wire_size == 0
    assert (res.stats.temporary_memory_bytes, res.stats.num_converted_records) == (0, 0)


def test_partial_first_entry_on_a_line_without_kafka_13116_would_promise_an_overflow_batch():
    """Row fetch.lazy_no_whole_entry: before 3.1 a lazy conversion with no converted batch promises 12 bytes."""
    from kafkafmt import kafka_lines
    assert kafka_lines.value("fetch.lazy_no_whole_entry", "2.8") == "overflow batch"
    assert kafka_lines.value("fetch.lazy_no_whole_entry", "3.9") == "nothing"


def test_fetch_v3_reads_the_whole_first_entry_past_max_bytes():
    log = _log()
    res = fetch(log, topic_config=v2_topic("2.8"), fetch_version=3, max_bytes=30)
    assert res.cost.bytes_read == _first_size(log)
    assert res.stats.num_converted_records == 3 and [r[0] for r in read(res.records)] == [0, 1, 2]


def test_fetch_v2_max_bytes_zero_reads_nothing():
    res = fetch(_log(), topic_config=v2_topic("2.8"), fetch_version=2, max_bytes=0)
    assert res.records == b"" and res.stats.num_converted_records == 0 and res.error is None


def test_whole_entries_within_max_bytes_are_converted_on_fetch_v1():
    """A slice with whole batches and a partial one: the whole ones are converted, the partial one dropped
    (FileRecords' batch iterator stops before it)."""
    log = _log()
    cut = _first_size(log) + 20
    res = fetch(log, topic_config=v2_topic("2.8"), fetch_version=1, max_bytes=cut)
    assert res.cost.bytes_read == cut and res.stats.num_converted_records == 3


def _expanding_log(n_batches: int, records_per_batch: int) -> bytes:
    """Uncompressed v2 batches of tiny records: each record grows from 7 to 26 bytes as v0 (Fetch v1)."""
    return b"".join(build([R(NOW, None, b"")] * records_per_batch, base_offset=i * records_per_batch)
                    for i in range(n_batches))


def test_lazy_first_chunk_larger_than_the_slice_is_the_only_chunk_converted():
    """The promised size is max(slice, first chunk); when the first converted batch already fills it, the
    send writes it and stops: the other batches are never converted nor counted (2.8.2: a Fetch v2 answered
    with one converted batch)."""
    log = _expanding_log(2, 40)
    first = down_convert([next(MemoryRecords(log).batches())], 0, 0)
    assert len(first.records) > len(log)  # 40 × 26 bytes > 2 × (61 + 40 × 7)
    res = fetch(log, topic_config=v2_topic("2.8"), fetch_version=1)
    assert res.wire_size == len(first.records) and res.records == res.wire_records == first.records
    assert res.chunks_converted == 1 and res.batches_not_converted == 1
    assert (res.stats.temporary_memory_bytes, res.stats.num_converted_records) == \
        (first.stats.temporary_memory_bytes, 40)
    assert res.cost.records_touched == 40


def test_lazy_chunks_stop_once_the_promised_size_is_written():
    """Chunks of at most 128 KiB of source batches: here chunk 2 writes past the promised size, chunk 3 is
    never converted; its records are not in the stats."""
    per = 2000  # 61 + 2000 × 7 bytes ≈ 14 KiB a batch, ≈ 52 KB as v0
    log = _expanding_log(24, per)
    bsize = _first_size(log)
    per_chunk = MAX_READ_SIZE // bsize  # source batches in a later chunk
    res = fetch(log, topic_config=v2_topic("2.8"), fetch_version=1)
    assert res.wire_size == len(log)
    # chunk 1: one batch; chunk 2: per_chunk batches, already more than the slice once converted
    assert res.chunks_converted == 2 and res.batches_not_converted == 24 - 1 - per_chunk
    assert res.stats.num_converted_records == per * (1 + per_chunk)
    assert len(res.wire_records) == len(log) and res.wire_records == res.records[:len(log)]


def test_eager_conversion_converts_the_whole_slice():
    """1.1 (before KIP-283): ``FileRecords.downConvert`` converts everything in memory, counted at once."""
    log = _expanding_log(24, 2000)
    res = fetch(log, topic_config=v2_topic("1.1"), fetch_version=1)
    assert res.stats.num_converted_records == 48_000 and res.chunks_converted == 1
    assert res.wire_size == len(res.records) > len(log)


def test_lazy_converted_output_smaller_than_the_slice_is_padded_with_an_overflow_batch():
    """The converted records, then Kafka's overflow entry (offset -1) up to the promised size: the shape of
    2.8.2's answer to a Fetch v1 of an 11-record partition (526 bytes)."""
    log = b"".join(build([R(NOW + i, b"key-%d" % i, b"value-%d" % i)], base_offset=i) for i in range(11))
    res = fetch(log, topic_config=v2_topic("2.8"), fetch_version=1)
    assert len(res.records) < len(log) and res.wire_size == len(log)
    assert res.wire_records == res.records + overflow_batch(len(log) - len(res.records))
    assert res.stats.num_converted_records == 11 and res.chunks_converted == 2


def _marker(offset: int) -> bytes:
    return end_txn_marker(base_offset=offset, timestamp=NOW, partition_leader_epoch=0, producer_id=7,
                          producer_epoch=1, control_type=ControlRecordType.COMMIT, coordinator_epoch=0)


def test_lazy_first_chunk_after_dropped_batches_is_converted_again():
    """``LazyDownConversionRecords.Iterator`` skips one source batch for the cached first chunk: when a control
    batch (dropped) came first, the send converts the first data batch again and sends it twice."""
    a = build([R(NOW, b"k", b"a" * 50)] * 2, base_offset=1)
    b = build([R(NOW, b"k", b"b" * 50)] * 2, base_offset=3)
    log = _marker(0) + a + b
    res = fetch(log, topic_config=v2_topic("2.8"), fetch_version=3)
    conv_a = down_convert([next(iter(MemoryRecords(a).batches()))], 1, 0)
    assert res.records.startswith(conv_a.records + conv_a.records)
    assert res.stats.num_converted_records == 6 and res.chunks_converted == 2


def test_eager_1_1_sends_a_slice_with_nothing_to_convert_as_it_is():
    """1.1 ``FileRecords.downConvert``: numRecordsConverted == 0 → the slice as it is, RecordsProcessingStats.EMPTY
    (1.0: the converted records, here none)."""
    log = _marker(0)
    res11 = fetch(log, topic_config=v2_topic("1.1"), fetch_version=3)
    assert res11.records == log and res11.stats.temporary_memory_bytes == 0
    assert res11.sent_as_is and res11.chunks_converted == 0 and res11.to_dict()["sent_as_is"] is True
    res10 = fetch(log, topic_config=v2_topic("1.0"), fetch_version=3)
    assert res10.records == b"" and res10.stats.temporary_memory_bytes == 0
    assert not res10.sent_as_is and res10.chunks_converted == 1


def test_explain_fetch_says_a_1_1_slice_with_nothing_to_convert_went_as_it_was(tmp_path, capsys):
    """``kafkafmt explain fetch`` of a lone transaction marker on 1.1 (row fetch.eager_nothing_converted): no
    chunk converted, the slice sent as it was, in the trace, the outcome and the accounting; 1.0 converted it to
    nothing (one chunk, 0 bytes)."""
    import json

    from kafkafmt.cli import main
    f = tmp_path / "marker.bin"
    f.write_bytes(_marker(0))
    assert main(["explain", "fetch", str(f), "--fetch-version", "3", "--kafka-line", "1.1"]) == 0
    text = capsys.readouterr().out
    assert "chunk(s) converted" not in text and "DOWN-CONVERTED" not in text
    # the row is 1.1's rule (1.0 differs) but its value is 3.9's: listed apart from the differences from 3.9
    assert "Kafka 1.1 line: 2 difference(s) from 3.9 applied" in text
    assert "Kafka 1.1 line: 1 row(s) applied with 3.9's value (kafkafmt.kafka_lines):\n  fetch.eager_nothing_converted" \
        in text
    assert "sent as it was: 78 bytes, the slice unconverted: nothing to convert (eager)" in text
    assert "outcome: SENT AS IT WAS: nothing to convert to v1, the slice's 78 bytes sent unconverted " \
        "(row fetch.eager_nothing_converted), response size 78" in text
    assert "the broker spends  temporaryMemoryBytes 0, numRecordsConverted 0, nothing converted: the slice was " \
        "sent as it was (row fetch.eager_nothing_converted)" in text
    assert main(["explain", "fetch", str(f), "--fetch-version", "3", "--kafka-line", "1.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sent_as_is"] is True and out["chunks_converted"] == 0
    assert out["accounting"]["computed"]["sent_as_is"] is True and out["accounting"]["computed"]["chunks_converted"] == 0
    assert main(["explain", "fetch", str(f), "--fetch-version", "3", "--kafka-line", "1.0"]) == 0
    text = capsys.readouterr().out
    assert "outcome: DOWN-CONVERTED to v1: 0 bytes converted, response size 0" in text
    assert "numRecordsConverted 0, 1 chunk(s) converted" in text


# --- what the broker publishes (rows metrics.produce_conversion / metrics.fetch_conversion) -----------------
@pytest.mark.parametrize("line, published", [
    ("1.1", (None, None)),       # eager, recorded by KafkaApis: all of it
    ("2.1", (0, None)),          # the meter in the send's callback, after the request metrics
    ("2.8", (0, 0)),             # KAFKA-14295: nothing
    ("3.9", (None, None)),       # fixed in 3.5
])
def test_what_a_fetch_publishes_by_line(line, published):
    from kafkafmt.broker.accounting import accounting
    res = fetch(_log(), topic_config=v2_topic(line), fetch_version=1)
    acc = accounting(res, line)
    spent = (res.stats.temporary_memory_bytes, res.stats.num_converted_records)
    assert spent[1] == 6 and spent[0] > 0
    assert (acc.computed["temporary_memory_bytes"], acc.computed["num_converted_records"]) == spent
    want = tuple(s if p is None else p for s, p in zip(spent, published))
    assert (acc.published["temporary_memory_bytes"], acc.published["message_conversions"]) == want


def test_produce_publishes_everything_from_1_0():
    from kafkafmt.broker import validate_messages_and_assign_offsets
    from kafkafmt.broker.accounting import accounting
    for line in ("1.0", "2.8", "3.9"):
        res = validate_messages_and_assign_offsets(build([R(-1)] * 3, magic=0), v2_topic(line), now=NOW)
        acc = accounting(res, line)
        assert acc.request == "produce" and acc.published_as == "all"
        assert acc.published == {"temporary_memory_bytes": res.stats.temporary_memory_bytes,
                                 "message_conversions": 3, "histogram_updates": 1,
                                 "message_conversions_time": "measured"}


def test_a_line_without_kip_188_has_no_accounting():
    from kafkafmt.broker.accounting import accounting, has_accounting
    from kafkafmt.errors import ConfigError
    assert [has_accounting(v) for v in ("0.9", "0.10.2", "0.11", "1.0", "2.8.2")] == [False, False, False, True, True]
    with pytest.raises(ConfigError, match="Kafka 0.11 computes no conversion accounting.*KIP-188 in Kafka 1.0"):
        accounting(fetch(_log(), fetch_version=1), "0.11")


def test_explain_fetch_prints_the_accounting(tmp_path, capsys):
    import json

    from kafkafmt.cli import main
    f = tmp_path / "log.bin"
    f.write_bytes(_expanding_log(2, 40))
    assert main(["explain", "fetch", str(f), "--fetch-version", "1", "--kafka-line", "2.8"]) == 0
    text = capsys.readouterr().out
    assert "the broker spends  temporaryMemoryBytes" in text and "1 chunk(s) converted" in text
    assert "1 source batch(es) never converted" in text
    assert "its metrics show   TemporaryMemoryBytes 0, FetchMessageConversionsPerSec +0" in text and "KAFKA-14295" in text
    assert main(["explain", "fetch", str(f), "--fetch-version", "1", "--kafka-line", "3.9", "--json"]) == 0
    acc = json.loads(capsys.readouterr().out)["accounting"]
    assert acc["computed"]["num_converted_records"] == 40 and acc["computed"]["chunks_converted"] == 1
    assert acc["published"] == {"temporary_memory_bytes": acc["computed"]["temporary_memory_bytes"],
                                "message_conversions": 40, "histogram_updates": 1,
                                "message_conversions_time": "measured"}
    assert acc["rows"]["metrics.multi_partition"] == {"value": "last partition", "source": "KAFKA-15894 (apache/kafka "
                                                                                          "PR 21420)"}
    assert main(["explain", "fetch", str(f), "--fetch-version", "1", "--kafka-line", "0.10.2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accounting"] is None


def test_explain_accounting_on_a_line_without_kip_188_is_one_line(tmp_path, capsys):
    from kafkafmt.cli import main
    f = tmp_path / "log.bin"
    f.write_bytes(_log())
    assert main(["explain", "fetch", str(f), "--fetch-version", "1", "--kafka-line", "0.10.2", "--accounting"]) == 1
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "Traceback" not in cap.err
    assert "Kafka 0.10.2 computes no conversion accounting" in cap.err


def test_request_accounting_says_what_it_cannot_model():
    """A Produce of several partitions (row metrics.multi_partition): bad input is one clear line each; from 4.3 the
    published temporary memory is the sum (KAFKA-15894, 4.3.0's bytecode), whatever the order."""
    from kafkafmt.broker import validate_messages_and_assign_offsets
    from kafkafmt.broker.accounting import request_accounting
    from kafkafmt.errors import ConfigError
    res = {("t", p): validate_messages_and_assign_offsets(build([R(-1)] * (p + 1), magic=0), v2_topic("4.4"), now=NOW)
           for p in range(3)}
    acc = request_accounting(res, "4.4")
    assert acc.published["temporary_memory_bytes"] == acc.computed["temporary_memory_bytes"] == \
        sum(r.stats.temporary_memory_bytes for r in res.values())
    assert acc.published["message_conversions"] == 6
    for bad, match in (({}, "at least one partition"),
                       ({("t", p): res[("t", 0)] for p in range(13)}, "at most 12 partitions"),
                       ([(("t", 0), res[("t", 0)])] * 2, "each partition once")):
        with pytest.raises(ConfigError, match=match):
            request_accounting(bad, "2.8")
    with pytest.raises(ConfigError, match="Scala 2.11, 2.12 and 2.13"):
        request_accounting(res, "2.8", scala="3")


def test_explain_produce_with_several_partitions(tmp_path, capsys):
    """The live rig's 'produce v1 gzip into 3 partitions' through the CLI: real 2.8.2 and 1.1.1 brokers published
    mp-1's 395 bytes, 3.9.2 mp-0's 304 (tests/history/test_accounting_live.py); 4.3 on adds them up."""
    import json

    from kafkafmt.cli import main
    from kafkafmt.constants import CompressionType, TimestampType
    from kafkafmt.records import MemoryRecordsBuilder
    files = []
    for n in (2, 3, 4):
        b = MemoryRecordsBuilder(1, CompressionType.GZIP, TimestampType.CREATE_TIME, 0)
        for i in range(n):
            b.append_with_offset(i, NOW + i, b"key-%d" % i, (b"v%d-" % i + b"x" * 20)[:20])
        files.append(tmp_path / f"mp{n}.bin")
        files[-1].write_bytes(b.build())
    args = ["explain", "produce", str(files[0]), "--partition", "mp:0", "--with", f"mp:1={files[1]}",
            "--with", f"mp:2={files[2]}", "--now", str(NOW + 10_000), "--accounting", "--json"]
    published = {}
    for line in ("2.8", "3.9", "4.4"):
        assert main([*args, "--kafka-line", line]) == 0
        acc = json.loads(capsys.readouterr().out)
        published[line] = acc["published"]["temporary_memory_bytes"]
        assert acc["computed"]["temporary_memory_bytes"] == 304 + 395 + 486 and acc["published"]["message_conversions"] == 9
    assert published == {"2.8": 395, "3.9": 304, "4.4": 304 + 395 + 486}
    assert main([*args[:-1], "--kafka-line", "2.8"]) == 0
    assert "(TemporaryMemoryBytes is the last partition's, mp-1: KAFKA-15894" in capsys.readouterr().out
    assert main(["explain", "produce", str(files[0]), "--with", f"mp1={files[1]}"]) != 0
    assert "a partition is TOPIC:P" in capsys.readouterr().err
