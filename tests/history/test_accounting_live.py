"""Kafka's own conversion accounting (KIP-188), request by request, against real 1.1.1, 2.1.1, 2.8.2, 3.9.2 brokers.

One run of :func:`kafkarig.accounting_live.run_accounting` per session, in a subprocess started when the session
begins (tests/head_start.py; four brokers one after another, JVMs capped at 256 MB; about 80 s here): per
release, up to ten Produce requests (v0/v1/v2 message sets into v2 and v1 topics, none/gzip/snappy/lz4, zstd
from 2.1) and up to sixteen Fetch requests (v0-v3; v2 and v1 topics; offsets inside batches; partition max
bytes below the first entry, and one entry and a half; a zstd batch after a converted one, and at the fetch
offset; two committed transactions written by the release's own Java producer, fetched from a marker and alone;
a 430 KB fetch of tiny records whose v0/v1 form outgrows the promised size, so the lazy send stops
converting), one partition per request, one request at a time; and three Produce requests of several partitions
(3, 6 and 2: KAFKA-15894).  For each request:

* what the broker **publishes** (JMX: the change of ``RequestMetrics`` TemporaryMemoryBytes' Mean x Count and
  of ``BrokerTopicMetrics`` *MessageConversionsPerSec's Count; ``RequestMetrics`` MessageConversionsTimeMs'
  Count, one per request, and its value, 0 where predicted) equals
  :func:`kafkafmt.broker.accounting.accounting` ``.published`` on the release's line (rows
  ``metrics.fetch_conversion``: 2.1.1's fetches publish the records converted and a temporary memory of 0,
  2.8.2's nothing, KAFKA-14295);
* on 2.1.1 and 2.8.2, what the broker **computed** for a fetch, read by a JDWP breakpoint on
  ``RecordConversionStats.add`` (once per chunk ``LazyDownConversionRecordsSend`` converts), equals kafkafmt's
  ``temporary_memory_bytes``, ``num_converted_records`` and ``chunks_converted``;
* the bytes of each fetch response equal kafkafmt's ``wire_records``.

Java is needed (the releases' jars resolved by Maven, 3.9.2's by ``make oracle``); without it the tests skip
locally and fail under ``CI=true`` (tests/ci_mode.py).
"""
from __future__ import annotations

import pytest

from ci_mode import skip_or_fail
from old_release_fixtures import rig_job, rig_result

pytestmark = [pytest.mark.java, pytest.mark.broker]

from kafkarig.accounting_live import JDWP_STATS, case_names  # noqa: E402

OLD = ("1.1.1", "2.1.1", "2.8.2")  # resolved by Maven (kafkarig.releases); 3.9.2 is the oracle's class path
rig_job("accounting-rig", module=__name__, fixture="run", target="kafkarig.accounting_live:run_accounting",
        releases=OLD)


@pytest.fixture(scope="module")
def run():
    from kafkarig.broker import java_missing_reason
    reason = java_missing_reason()
    if reason:
        skip_or_fail(reason)
    result = rig_result("accounting-rig", OLD)
    assert not result["errors"], result["errors"]
    failed = [r for r in result["rows"] if "real" not in r]
    assert not failed, failed
    return {r["case"]: r for r in result["rows"]}


@pytest.mark.parametrize("case", case_names())
def test_published_accounting_equals_the_broker_s_metrics(run, case):
    row = run[case]
    assert row["error"] == row["model_error"], row  # NONE, or the same error (zstd below Fetch v10)
    real = row["real"]
    assert real["requests"] == 1, row  # one request recorded by the histogram, no retry
    assert (real["temporary_memory_bytes"], real["message_conversions"]) == \
        (row["published"]["temporary_memory_bytes"], row["published"]["message_conversions"]), row


def _byte_cases():
    # every fetch's bytes, 3.9.2's snappy v1 wrappers included: kafkafmt writes snappy-java 1.1.10.5's blocks on
    # the 3.9 line (row codec.snappy_java; they were one byte shorter than cramjam's on this input)
    return [pytest.param(c, id=c) for c in case_names() if " fetch" in c or " lazy" in c]


@pytest.mark.parametrize("case", list(_byte_cases()))
def test_fetch_bytes_equal_the_model_s_wire_records(run, case):
    row = run[case]
    assert row["bytes_agree"], f"{case}: broker sent {row['real_size']} bytes, kafkafmt {row['model_size']}; " \
        f"first difference at {row['differs_at']} ({row['differs_in']}): real {row['real_bytes']}, " \
        f"kafkafmt {row['model_bytes']}"


@pytest.mark.parametrize("case", [c for c in case_names() if c.split()[0] in JDWP_STATS and
                                  (" fetch" in c or " lazy" in c)])
def test_2_x_fetch_computed_accounting_equals_the_broker_s_own_stats(run, case):
    """2.x publishes a fetch's conversion in part (2.1.1) or not at all (2.8.2); the broker's RecordConversionStats,
    read through JDWP."""
    row = run[case]
    real, computed = row["real"], row["computed"]
    assert (real["jdwp_chunks"], real["jdwp_temporary_memory_bytes"], real["jdwp_num_converted_records"]) == \
        (computed["chunks_converted"], computed["temporary_memory_bytes"], computed["num_converted_records"]), row


def test_the_run_covers_what_the_rows_distinguish(run):
    """The run is not vacuous: it converts on every release, 2.8.2 publishes none of a fetch's conversion, the
    large lazy fetch leaves chunks unconverted on 2.x/3.x but not on 1.1.1, and a Fetch v2 below the first entry
    gets its partial bytes on 1.1.1 and 2.8.2 and nothing on 3.9.2."""
    big = {v: run[f"{v} large lazy fetch v1"] for v in ("1.1.1", "2.1.1", "2.8.2", "3.9.2")}
    assert big["1.1.1"]["computed"]["batches_not_converted"] == 0 and big["1.1.1"]["computed"]["num_converted_records"] == 48_000
    for v in ("2.1.1", "2.8.2", "3.9.2"):
        assert big[v]["computed"]["batches_not_converted"] > 0 and big[v]["computed"]["num_converted_records"] < 48_000
    assert big["2.8.2"]["real"]["message_conversions"] == 0 and big["2.8.2"]["real"]["jdwp_num_converted_records"] > 0
    assert big["3.9.2"]["real"]["message_conversions"] == big["3.9.2"]["computed"]["num_converted_records"]
    assert big["2.1.1"]["real"]["message_conversions"] == big["2.1.1"]["computed"]["num_converted_records"] > 0
    assert big["2.1.1"]["real"]["temporary_memory_bytes"] == 0 < big["2.1.1"]["real"]["jdwp_temporary_memory_bytes"]
    assert [run[f"{v} fetch v2 max bytes 30"]["real_size"] for v in ("1.1.1", "2.8.2", "3.9.2")] == [30, 30, 0]


def test_transaction_markers_as_each_release_serves_them(run):
    """From a marker, the lazy send's iterator skips one batch for its cached first chunk, so the data batch
    after the marker is converted, counted (and published, 3.9.2) and sent twice; 1.1.1 converts it once.  A
    lone marker: 1.1.1 sends it as it is (row fetch.eager_nothing_converted), the lazy lines a 12-byte overflow
    batch."""
    from_marker = {v: run[f"{v} fetch v3 from a transaction marker"] for v in ("1.1.1", "2.1.1", "2.8.2", "3.9.2")}
    assert from_marker["1.1.1"]["computed"]["num_converted_records"] == 2
    for v in ("2.1.1", "2.8.2", "3.9.2"):
        assert from_marker[v]["computed"]["num_converted_records"] == 4 and from_marker[v]["computed"]["chunks_converted"] == 2
    assert from_marker["3.9.2"]["real"]["message_conversions"] == 4
    lone = {v: run[f"{v} fetch v3 of a lone transaction marker"]["real_size"] for v in ("1.1.1", "2.8.2", "3.9.2")}
    assert lone["1.1.1"] > 12 and lone["2.8.2"] == lone["3.9.2"] == 12


@pytest.mark.parametrize("case", case_names())
def test_the_conversion_time_histogram_as_published(run, case):
    """MessageConversionsTimeMs (row metrics.conversion_time): one update per request; exactly 0 where kafkafmt
    says the time is not published or nothing was converted, the broker's own time (not predicted) otherwise."""
    row = run[case]
    real, published = row["real"], row["published"]
    assert real["time_requests"] == published["histogram_updates"] == 1, row
    if published["message_conversions_time"] == "zero":
        assert real["time_ms"] == 0, row
    else:
        assert published["message_conversions_time"] == "measured" and real["time_ms"] >= 0, row


def test_the_conversion_time_is_published_where_the_rows_say(run):
    """Not vacuous: the large fetch's conversion takes milliseconds; 1.1.1 (eager) and 3.9.2 publish them, 2.1.1
    and 2.8.2 record 0 (the lazy send's stats arrive after the request metrics: KAFKA-14743, KAFKA-14295)."""
    big = {v: run[f"{v} large lazy fetch v1"] for v in ("1.1.1", "2.1.1", "2.8.2", "3.9.2")}
    assert big["1.1.1"]["real"]["time_ms"] > 0 and big["3.9.2"]["real"]["time_ms"] > 0
    assert big["2.1.1"]["real"]["time_ms"] == big["2.8.2"]["real"]["time_ms"] == 0
    assert all(b["computed"]["num_converted_records"] > 0 for b in big.values())


def test_a_produce_of_several_partitions_publishes_the_last_partition_s_memory(run):
    """KAFKA-15894 (row metrics.multi_partition, before 4.3): the meter counts every partition's records, the
    TemporaryMemoryBytes histogram shows the partition the broker's maps visit last (kafkafmt.broker.request_order):
    of mp-0, mp-1, mp-2, mp-1 on the Scala 2.12 builds and mp-0 on 3.9.2's 2.13; of six partitions, six-1 (2.12's
    immutable hash trie) and six-5; of a v2 and a v1 topic, the unconverted v1 partition (0 published) on 1.1.1 and
    2.1.1 (their ProduceRequest's java.util.HashMap order), the converted one on 2.8.2 (the request's order) and
    3.9.2."""
    for v in ("1.1.1", "2.1.1", "2.8.2", "3.9.2"):
        for name in ("produce v1 gzip into 3 partitions", "produce v0 into 6 partitions",
                     "produce v1 into a v2 and a v1 topic"):
            row = run[f"{v} {name}"]
            parts = row["computed"]["partitions"]
            assert row["real"]["message_conversions"] == sum(p["num_converted_records"] for p in parts)
            assert row["real"]["temporary_memory_bytes"] == parts[-1]["temporary_memory_bytes"], row
            assert len({p["temporary_memory_bytes"] for p in parts}) == len(parts), row  # which one is visible
    last = {v: (run[f"{v} produce v1 gzip into 3 partitions"]["computed"]["partitions"][-1]["partition"],
                run[f"{v} produce v0 into 6 partitions"]["computed"]["partitions"][-1]["partition"])
            for v in ("1.1.1", "2.8.2", "3.9.2")}
    assert last == {"1.1.1": (1, 1), "2.8.2": (1, 1), "3.9.2": (0, 5)}
    mixed = {v: run[f"{v} produce v1 into a v2 and a v1 topic"]["real"]["temporary_memory_bytes"]
             for v in ("1.1.1", "2.1.1", "2.8.2", "3.9.2")}
    assert mixed["1.1.1"] == mixed["2.1.1"] == 0 < mixed["2.8.2"] == mixed["3.9.2"]
