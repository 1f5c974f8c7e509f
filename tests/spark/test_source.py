"""The data source and the writer on a real local[2] Spark session (one session for the whole run).

Spark's rows are compared with the direct decode of the ``.log`` files (record objects, not the
columnar path), and the input directories are checked byte-for-byte and mtime-identical afterwards.
"""
from __future__ import annotations

import json
import shutil

import pytest

from kafkafmt.errors import CorruptRecordError
from kafkafmt.log import Log
from kafkafmt.records import MemoryRecords
from kafkafmt.spark.failures import kafkafmt_error_from, kafkafmt_errors
from spark_logs import START, build_partition, direct_decode, fingerprint, snapshot

COLUMNS = ("offset", "ms", "timestampType", "key", "value", "headers", "isControl")


def spark_rows(df, by_partition=False):
    """``(offset, ms, type, key, value, headers, isControl)`` tuples in offset order from ONE Spark job;
    with ``by_partition``, a dict ``{(topic, partition): rows}``."""
    from pyspark.sql import functions as F

    t = df.select("topic", "partition", "offset", F.unix_millis("timestamp").alias("ms"), "timestampType", "key",
                  "value", "headers", "isControl").toArrow()
    out: dict = {}
    for r in t.to_pylist():
        out.setdefault((r["topic"], r["partition"]), []).append(
            (r["offset"], r["ms"], r["timestampType"], r["key"], r["value"],
             tuple((h["key"], h["value"]) for h in r["headers"] or ()), r["isControl"]))
    for rows in out.values():
        rows.sort(key=lambda row: row[0])
    if by_partition:
        return out
    assert len(out) <= 1
    return next(iter(out.values()), [])


def test_spark_rows_equal_direct_decode_every_magic_codec_txn_many_partitions(spark, sample_logs):
    before = snapshot(sample_logs)
    df = spark.read.format("kafkafmt").load(str(sample_logs))
    assert df.columns[:8] == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    got = spark_rows(df, by_partition=True)
    parts = sorted(p for p in sample_logs.iterdir() if p.is_dir())
    assert len(got) == len(parts) == 16
    for d in parts:
        topic, partition = d.name.rsplit("-", 1)
        rows, expected = got[(topic, int(partition))], direct_decode(d)
        assert len(rows) == len(expected) > 0                              # count
        assert [r[:3] for r in rows] == [r[:3] for r in expected]         # offsets, timestamps, types
        assert [r[6] for r in rows] == [r[6] for r in expected]           # control records flagged
        assert fingerprint(rows) == fingerprint(expected)                 # keys, values, headers
    assert any(r[6] for r in got[("txn", 0)]) and not any(r[6] for r in got[("upgrade", 0)])
    assert snapshot(sample_logs) == before


def test_spark_options_equal_filtering_a_full_read(spark, sample_logs, tmp_path):
    d = build_partition(tmp_path / "opt-0", [(2, "gzip"), (2, "none")], seed=5, batches_per_step=40)
    before = snapshot(d)
    full = spark_rows(spark.read.format("kafkafmt").load(str(d)))
    lo, hi = full[len(full) // 4][0], full[3 * len(full) // 4][0]
    spec = lambda off: json.dumps({"opt": {"0": off}})  # noqa: E731
    ranged = spark.read.format("kafkafmt").option("startingOffsets", spec(lo)).option("endingOffsets", spec(hi))
    assert spark_rows(ranged.load(str(d))) == [r for r in full if lo <= r[0] < hi]
    copy = tmp_path / "copy" / "opt-0"
    shutil.copytree(d, copy)
    target = sorted(r[1] for r in full)[len(full) // 2] - 1
    with Log.open(copy) as reference:
        start = reference.fetch_offset_by_timestamp(target).offset
    by_time = spark.read.format("kafkafmt").option("startingTimestamp", target).load(str(d))
    assert spark_rows(by_time) == [r for r in full if r[0] >= start]
    split = spark.read.format("kafkafmt").option("maxBytesPerPartition", 2000).load(str(d))
    assert split.rdd.getNumPartitions() > 5
    assert spark_rows(split) == full
    batches = spark.read.format("kafkafmt").option("level", "batch").load(str(d)).toArrow()
    assert batches.num_rows == 80 and all(batches.column("crcValid").to_pylist())
    assert snapshot(d) == before


def test_spark_failfast_names_file_and_position(spark, tmp_path):
    d = build_partition(tmp_path / "bad-0", [(2, "none")], seed=3, batches_per_step=30)
    seg = sorted(d.glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0x55
    seg.write_bytes(bytes(data))
    before = snapshot(d)
    with pytest.raises(Exception) as e:
        spark.read.format("kafkafmt").load(str(d)).count()
    text = str(e.value)
    assert "CorruptRecordError" in text and str(seg) in text and "byte position" in text
    permissive = spark.read.format("kafkafmt").option("mode", "PERMISSIVE").load(str(d))
    errors = permissive.where("error is not null").collect()
    assert len(errors) == 1 and errors[0]["segment"] == str(seg) and f"byte position {errors[0]['position']}" in text
    # the driver gets kafkafmt's error back (class, position, reason) from Spark's failure
    err = kafkafmt_error_from(e.value)
    assert isinstance(err, CorruptRecordError) and err.position == errors[0]["position"] and str(seg) in err.reason
    with pytest.raises(CorruptRecordError):
        with kafkafmt_errors():
            spark.read.format("kafkafmt").load(str(d)).count()
    assert snapshot(d) == before


def test_spark_damage_at_the_start_of_the_last_segment_and_reads_with_nothing_to_read(spark, tmp_path):
    """The walk to the log end finds no batch in a last segment that starts with garbage: reading to the
    end still covers its bytes, so FAILFAST reports the damage instead of an empty partition."""
    d = build_partition(tmp_path / "head-0", [(2, "none")], seed=4, batches_per_step=30)
    last = sorted(d.glob("*.log"))[-1]
    first_batch = next(MemoryRecords(last.read_bytes()).batches())
    data = bytearray(last.read_bytes()[:first_batch.end])           # one batch whose length runs past the file
    data[8:12] = (10**6).to_bytes(4, "big")
    last.write_bytes(bytes(data))
    for index in (last.with_suffix(".index"), last.with_suffix(".timeindex")):
        index.write_bytes(b"")                                     # no index entry to start the walk from
    with pytest.raises(CorruptRecordError) as e:
        with kafkafmt_errors():
            spark.read.format("kafkafmt").load(str(d)).count()
    assert e.value.position == 0 and str(last) in e.value.reason and "declares 1000012 bytes" in e.value.reason
    fine = build_partition(tmp_path / "fine-0", [(2, "none")], seed=4, batches_per_step=3)
    late = spark.read.format("kafkafmt").option("startingTimestamp", str(START + 10**9)).load(str(fine))
    assert late.count() == 0                                        # no split at all: one empty Spark partition


#: the written log directory: the partition and LogManager's files of a cleanly shut down broker
LOG_DIR_AFTER_WRITE = [".kafka_cleanshutdown", "copy-0", "log-start-offset-checkpoint",
                       "recovery-point-offset-checkpoint"]


def test_writer_round_trip_magic_and_codec(spark, sample_logs, tmp_path):
    src = spark.read.format("kafkafmt").load(str(sample_logs / "magic2-none-0"))
    rows = spark_rows(src)
    for magic, codec in ((2, "zstd"),):
        out = tmp_path / f"out-{magic}-{codec}"
        frame = src.select("key", "value", "timestamp", "partition", *(["headers"] if magic == 2 else []))
        frame.write.format("kafkafmt").option("topic", "copy").option("magic", magic).option("codec", codec) \
            .option("batchSize", 400).mode("append").save(str(out))
        # nothing staged is left behind: the partition and the log directory's own files
        assert sorted(p.name for p in out.iterdir()) == LOG_DIR_AFTER_WRITE
        written = direct_decode(out / "copy-0")
        assert [r[0] for r in written] == list(range(len(rows)))
        assert [(r[1], r[3], r[4]) for r in written] == [(r[1], r[3], r[4]) for r in rows]
        if magic == 2:
            assert fingerprint(written) == fingerprint(rows)
        back = spark.read.format("kafkafmt").option("level", "batch").load(str(out)).toArrow()
        assert set(back.column("magic").to_pylist()) == {magic} and set(back.column("codec").to_pylist()) == {codec}
        assert back.num_rows > 3 and all(back.column("crcValid").to_pylist())
    frame.write.format("kafkafmt").option("topic", "copy").mode("append").save(str(out))    # offsets continue
    assert [r[0] for r in direct_decode(out / "copy-0")] == list(range(2 * len(rows)))
    frame.write.format("kafkafmt").option("topic", "copy").mode("overwrite").save(str(out))
    assert len(direct_decode(out / "copy-0")) == len(rows)
    assert sorted(p.name for p in out.iterdir()) == LOG_DIR_AFTER_WRITE


def test_session_is_quiet_loopback_and_registered(spark):
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.ui.enabled") == "false" and conf.get("spark.driver.host") == "127.0.0.1"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    log4j = conf.get("spark.driver.extraJavaOptions").split("file:", 1)[1]
    jvm_log = __import__("pathlib").Path(log4j).with_name("spark-jvm.log")
    assert "incubator" in jvm_log.read_text()           # the JVM's own stderr went to the log file
    import kafkafmt.spark

    assert kafkafmt.spark.register(spark) is spark      # registering again is harmless
