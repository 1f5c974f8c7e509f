"""The pipeline jobs (kafkafmt pipeline): hand-computable cases for each computation, the ListOffsets answers
checked against kafkafmt.log's fetchOffsetByTimestamp, and one Spark run over a generated log."""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest

from kafkafmt.config import LogConfig
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.gen.generator import generate_logs
from kafkafmt.gen.workload_file import parse_workload
from kafkafmt.log import Log, SimulatedClock
from kafkafmt.records import MemoryRecordsBuilder
from kafkafmt.spark.pipeline import (
    OUTPUTS,
    conversion_costs,
    default_targets,
    offsets_for_times,
    partition_tables,
    producer_skew,
    run_pipeline,
    segment_files,
    segment_retention,
    topic_settings,
)

SMALL = {
    "name": "small", "seed": 11, "duration_ms": 30000,
    "broker": {"inter.broker.protocol.version": "2.8", "log.retention.check.interval.ms": 600000},
    "topics": [
        {"name": "clicks", "partitions": 2,
         "config": {"message.format.version": "0.10.2", "segment.bytes": 8192, "retention.ms": 20000,
                    "retention.bytes": 16384},
         "changes": [{"at_ms": 15000, "config": {"message.format.version": "3.0"}}],
         "producers": [
             {"name": "web", "count": 2, "rate": 40, "keys": 40, "codec": "lz4",
              "magic": [{"from_ms": 0, "magic": 1}, {"from_ms": 15000, "magic": 2}],
              "clock": {"model": "normal", "sigma_ms": 300}},
             {"name": "late", "rate": 5, "keys": 40, "clock": {"model": "wrong", "offset_ms": -600000}}]},
        {"name": "audit", "partitions": 1, "config": {"message.timestamp.type": "LogAppendTime", "segment.bytes": 8192},
         "producers": [{"name": "svc", "rate": 30, "keys": 0}]},
    ]}


# ------------------------------------------------------------------------------------------------
# hand-computed cases
def _records(rows):
    return pd.DataFrame(rows, columns=["offset", "timestamp", "segment", "position", "producerId"])


def test_segment_retention_by_time_lat_and_size():
    # segment 0: batches at 0 (offsets 0-1) and 50 (offset 2), a far-future timestamp 5000;
    # segment 3: batches at 0 (offset 3) and 40 (offset 4); segment 5: one v0 batch, no timestamp
    recs = _records([(0, 100, 0, 0, 1), (1, 5000, 0, 0, 1), (2, 200, 0, 50, 1), (3, 150, 3, 0, 1),
                     (4, 400, 3, 40, 1), (5, -1, 5, 0, -1)])
    files = pd.DataFrame({"segment": [0, 3, 5], "size": [100, 80, 30], "last_modified_ms": [1000, 2000, 3000]})
    out = segment_retention(recs, files, retention_ms=1000, retention_bytes=100)
    assert out["base_offset"].tolist() == [0, 3, 5]
    assert out["records"].tolist() == [3, 2, 1]
    assert out["first_timestamp"].tolist() == [100, 150, -1]
    assert out["last_timestamp"].tolist() == [200, 400, -1]
    assert out["max_timestamp"].tolist() == [5000, 400, -1]
    assert out["largest_timestamp"].tolist() == [5000, 400, 3000]  # no timestamp: the file's mtime
    assert out["time_eligible_at_ms"].tolist() == [6001, 1401, 4001]
    assert out["time_deleted_at_ms"].tolist() == [6001, 6001, 6001]  # the far-future segment holds back the rest
    assert out["lat_deleted_at_ms"].tolist() == [2001, 3001, 4001]
    assert out["delay_vs_lat_ms"].tolist() == [4000, 3000, 2000]
    # by size: batch ends at 50, 100 | 140, 180 | 210 bytes; segment 0 goes once 100 bytes follow it (end 210)
    assert out["size_deleted_at_offset"].tolist() == [6, pd.NA, pd.NA]
    assert out["size_deleted_at_timestamp"].tolist() == [-1, pd.NA, pd.NA]
    never = segment_retention(recs, files, retention_ms=-1, retention_bytes=-1)
    assert never["time_deleted_at_ms"].isna().all() and never["size_deleted_at_offset"].isna().all()


def test_producer_skew_and_out_of_order():
    recs = _records([(0, 10, 0, 0, 1), (1, 20, 0, 0, 1), (2, 15, 0, 0, 2), (3, 30, 0, 0, 1), (4, 5, 0, 0, 2),
                     (5, 40, 0, 0, 1), (6, -1, 0, 0, -1)])
    out = producer_skew(recs, window=3).set_index("producerId")
    assert -1 not in out.index  # no timestamp, no skew
    p1, p2 = out.loc[1], out.loc[2]
    # rolling medians (centred, 3): 15, 15, 20, 15, 30, 22.5 -> skews -5, 5, -5, 15, -25, 17.5
    assert (p1["records"], p1["out_of_order"], p1["max_lateness_ms"]) == (4, 0, 0)
    assert p1["skew_median_ms"] == 10 and p1["skew_mean_ms"] == pytest.approx(8.125)
    assert (p2["records"], p2["out_of_order"], p2["out_of_order_fraction"]) == (2, 2, 1.0)
    assert (p2["max_lateness_ms"], p2["mean_lateness_ms"], p2["skew_median_ms"]) == (25, 15, -15)
    assert p2["skew_max_abs_ms"] == 25


def test_offsets_for_times_and_the_earlier_records_a_consumer_sees():
    recs = _records([(0, 100, 0, 0, 1), (1, 300, 0, 0, 1), (2, 200, 0, 0, 1), (3, 150, 3, 0, 1), (4, 400, 3, 0, 1),
                     (5, 250, 3, 0, 1)])
    segs = pd.DataFrame({"base_offset": [0, 3], "largest_timestamp": [300, 400]})
    out = offsets_for_times(recs, segs, [250, 350, 500]).set_index("target")
    assert out.loc[250, "answer_offset"] == 1 and out.loc[250, "answer_timestamp"] == 300
    assert (out.loc[250, "earlier_records"], out.loc[250, "last_earlier_offset"], out.loc[250, "offset_span"],
            out.loc[250, "max_early_ms"]) == (2, 3, 2, 100)
    assert (out.loc[350, "answer_offset"], out.loc[350, "earlier_records"], out.loc[350, "max_early_ms"]) == (4, 1, 100)
    assert out.loc[500, "answer_offset"] is pd.NA and out.loc[500, "earlier_records"] == 0
    # Kafka searches only the first segment whose largestTimestamp >= target: a v0 segment (no
    # timestamps) falls back to its mtime, and the search then finds nothing, although segment 3 would
    v0 = _records([(0, -1, 0, 0, -1), (1, -1, 0, 0, -1), (3, 150, 3, 0, 1), (4, 400, 3, 0, 1)])
    out = offsets_for_times(v0, pd.DataFrame({"base_offset": [0, 3], "largest_timestamp": [10**13, 400]}), [300])
    assert out["answer_offset"].isna().all()
    assert default_targets(pd.Series([-1, 0, 100])).tolist() == sorted(set(default_targets(pd.Series([0, 100]))))


def test_conversion_costs_per_fetch_version():
    b = MemoryRecordsBuilder(2, CompressionType.GZIP, TimestampType.CREATE_TIME, 0)
    for i in range(3):
        b.append(1000 + i, b"k", b"v" * 10)
    c = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 3)
    c.append(2000, None, b"x")
    data = b.build() + c.build()
    rows = {r["fetch_version"]: r for r in conversion_costs(data, LogConfig())}
    assert sorted(rows) == [1, 3, 9, 17]
    for v, magic in ((1, 0), (3, 1)):  # down-converted: every record rebuilt, the gzip batch recompressed once
        assert (rows[v]["to_magic"], rows[v]["zero_copy"], rows[v]["records_touched"]) == (magic, False, 4)
        assert (rows[v]["batches_rebuilt"], rows[v]["decompressions"], rows[v]["compressions"]) == (2, 1, 1)
        assert rows[v]["bytes_read"] == len(data)
    for v in (9, 17):  # zero-copy: the slice as it is
        assert rows[v]["zero_copy"] and rows[v]["records_touched"] == 0 and rows[v]["bytes_out"] == len(data)
    assert "cpu_time_ns" not in rows[1]  # measurements only when asked for
    zstd = conversion_costs(data, LogConfig.from_properties({"compression.type": "zstd"}), versions=[9, 10])
    assert [r["error"] for r in zstd] == ["UNSUPPORTED_COMPRESSION_TYPE", None]


def _line_config(line: str, props=None) -> LogConfig:
    from kafkafmt.config import BrokerConfig
    return LogConfig.from_properties(props or {}, broker=BrokerConfig(kafka_line=line))


def test_conversion_costs_carry_the_predicted_broker_cost_of_each_generation():
    """Each row priced by kafkafmt.costs on the topic's line: a fixed table, so every figure is by hand."""
    from kafkafmt.costs import CostTable, ReleaseCosts
    table = CostTable({"1.1.1": ReleaseCosts("1.1.1", zero_copy_s_per_byte=1e-9, reencode_s_per_record=2e-7,
                                             reencode_s_per_byte=4e-9, codec_s_per_byte={"lz4": 6e-9}),
                       "2.8.2": ReleaseCosts("2.8.2", zero_copy_s_per_byte=5e-10, reencode_s_per_record=1e-7,
                                             reencode_s_per_byte=3e-9, codec_s_per_byte={"lz4": 5e-9})},
                      machine="test", load="0", date="2026-01-01")
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    for i in range(3):
        b.append(1000 + i, b"k", b"v" * 10)
    data = b.build()
    v1 = 3 * (12 + 22 + 1 + 10)   # the v1 set a 0.10 consumer gets: offset, size, v1 header, key, value
    rows = {r["fetch_version"]: r for r in conversion_costs(data, _line_config("1.1"), versions=[1, 3, 4], table=table)}
    assert rows[3]["bytes_out"] == v1 and rows[3]["cost_measured_on"] == "1.1.1"
    assert rows[3]["predicted_cpu_s"] == pytest.approx(1e-9 * len(data) + 2e-7 * 3 + 4e-9 * v1)
    assert rows[3]["predicted_memory_bytes"] == v1            # eager: the whole converted response held
    assert rows[4]["predicted_cpu_s"] == pytest.approx(1e-9 * len(data)) and rows[4]["predicted_memory_bytes"] == 0
    lazy = {r["fetch_version"]: r for r in conversion_costs(data, _line_config("2.8"), table=table)}
    assert lazy[3]["cost_measured_on"] == "2.8.2"
    assert lazy[3]["predicted_cpu_s"] == pytest.approx(5e-10 * len(data) + 1e-7 * 3 + 3e-9 * v1)
    # a codec the table does not price, and a request the line refuses: no prediction, not a guess
    g = MemoryRecordsBuilder(2, CompressionType.GZIP, TimestampType.CREATE_TIME, 0)
    g.append(1000, b"k", b"v")
    gz = {r["fetch_version"]: r for r in conversion_costs(g.build(), _line_config("1.1"), versions=[3, 4], table=table)}
    assert gz[3]["predicted_cpu_s"] is None and gz[3]["records_touched"] == 1
    assert gz[4]["predicted_memory_bytes"] == 0     # zero-copy needs no codec cost
    refused = conversion_costs(data, _line_config("4.4"), versions=[1], table=table)[0]
    assert refused["predicted_cpu_s"] is None and refused["cost_measured_on"] is None


# ------------------------------------------------------------------------------------------------
# on a generated log
@pytest.fixture(scope="module")
def small_logs(tmp_path_factory):
    out = tmp_path_factory.mktemp("pipeline") / "small"
    generate_logs(parse_workload(SMALL), out, jobs=1, progress=False)
    return out


def _direct_records(log_dir, topic: str, partition: int) -> pd.DataFrame:
    """One partition's records decoded in this process (no Spark), in the jobs' columns."""
    from kafkafmt.records.columnar import records_table
    frames = []
    for row in segment_files(log_dir).query("topic == @topic and partition == @partition").itertuples():
        t = records_table(open(row.path, "rb").read(), include_data=False).to_pandas()
        frames.append(pd.DataFrame({"topic": topic, "partition": partition, "offset": t["offset"],
                                    "timestamp": t["timestamp_ms"], "timestampType": t["timestamp_type"],
                                    "producerId": t["producer_id"], "segment": row.segment,
                                    "position": t["batch_position"]}))
    return pd.concat(frames, ignore_index=True)


def test_offsets_for_times_agrees_with_the_log(small_logs, tmp_path):
    """The computed ListOffsets answer is kafkafmt.log's fetchOffsetByTimestamp (itself checked against Kafka)."""
    copy = tmp_path / "copy"
    shutil.copytree(small_logs, copy)
    files = segment_files(small_logs)
    settings = topic_settings(small_logs)
    checked = 0
    for (topic, part), f in files.groupby(["topic", "partition"]):
        recs = _direct_records(small_logs, topic, part)
        segs = segment_retention(recs, f.drop(columns=["topic", "partition"]), retention_ms=-1)
        targets = list(default_targets(recs["timestamp"], 25)) + [int(recs["timestamp"].max()) + 1]
        mine = offsets_for_times(recs, segs, targets)
        log = Log.open(copy / f"{topic}-{part}", settings[topic], SimulatedClock(0))
        try:
            for row in mine.itertuples():
                found = log.fetch_offset_by_timestamp(row.target)
                assert (None if found is None else found.offset) == (None if row.answer_offset is pd.NA
                                                                      else row.answer_offset), row
                checked += 1
        finally:
            log.close_handlers()
        if topic == "clicks":  # the clock ten minutes behind makes consumers see earlier records
            assert mine["earlier_records"].max() > 0
    assert checked > 50


def test_pipeline_on_spark(small_logs, spark, tmp_path):
    out = tmp_path / "derived"
    result = run_pipeline(small_logs, out, spark=spark, targets=10, window=21, sample_segments=1, progress=False)
    assert sorted(result["outputs"]) == sorted(OUTPUTS)
    manifest = json.loads((small_logs / "kafkafmt-gen.json").read_text())
    leo = {(p["topic"], p["partition"]): p for p in manifest["partitions"]}
    seg = pq.read_table(out / "segments.parquet").to_pandas()
    files = segment_files(small_logs)
    assert len(seg) == len(files) and seg["size_bytes"].sum() == files["size"].sum()
    for (topic, part), g in seg.groupby(["topic", "partition"]):
        info = leo[(topic, part)]
        assert g["records"].sum() == info["log_end_offset"] - info["log_start_offset"]
        assert g["base_offset"].iloc[0] == info["log_start_offset"]
    clicks = seg[seg["topic"] == "clicks"]
    assert (clicks["retention_ms"] == 20000).all() and (clicks["retention_bytes"] == 16384).all()
    # Spark's tables are the library's tables for the same partition, decoded directly
    direct = partition_tables(_direct_records(small_logs, "clicks", 1), files[(files["topic"] == "clicks") & (
        files["partition"] == 1)], topic_settings(small_logs)["clicks"], targets=10, window=21)
    costs = pq.read_table(out / "conversion_costs.parquet").to_pandas()
    # each segment and consumer generation priced on the topic's line (3.9 here) with the measured table
    zc = costs[costs["zero_copy"]]
    assert len(zc) and (zc["predicted_memory_bytes"] == 0).all() and (zc["cost_measured_on"] == "3.9.2").all()
    down = costs[~costs["zero_copy"] & costs["error"].isna() & costs["predicted_cpu_s"].notna()]
    assert len(down) and (down["predicted_memory_bytes"] > 0).all()
    per_read = zc.groupby(["topic", "partition", "base_offset"])["predicted_cpu_s"].max()
    assert (down.set_index(["topic", "partition", "base_offset"])["predicted_cpu_s"] > per_read.reindex(
        down.set_index(["topic", "partition", "base_offset"]).index)).all()   # converting costs more than sendfile
    for name, frame in (("segments", seg), ("conversion_costs", costs)):
        got = frame[(frame["topic"] == "clicks") & (frame["partition"] == 1)].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, direct[name].reset_index(drop=True), check_dtype=False)
    # CreateTime: normal clocks stamp the last records of a segment after its last append, so retention
    # by time comes later than under LogAppendTime
    assert (clicks["delay_vs_lat_ms"] > 0).mean() > 0.5
    audit = seg[seg["topic"] == "audit"]
    # a LogAppendTime topic: the largest timestamp is the last append's broker time, i.e. the mtime
    assert (audit["retention_ms"] == 7 * 24 * 3600 * 1000).all() and (audit["delay_vs_lat_ms"] == 0).all()
    skew = pq.read_table(out / "producer_skew.parquet").to_pandas()
    late = skew[(skew["topic"] == "clicks") & (skew["producerId"] == 1002)]
    assert len(late) == 2 and (late["skew_median_ms"] < -500000).all()
    assert pq.read_table(out / "offsets_for_times.parquet").num_rows > 0
    assert set(costs["fetch_version"]) == {1, 3, 9, 17} and "cpu_time_ns" not in costs.columns
    assert costs[costs["fetch_version"] == 17]["zero_copy"].all()
    timings = pq.read_table(out / "conversion_timings.parquet").to_pandas()
    assert (timings["sample_cpu_ns"] >= 0).all() and json.loads((out / "timings.json").read_text())["seconds"]


def test_cli_pipeline_errors_in_one_line(tmp_path, capsys):
    from kafkafmt.cli import main
    assert main(["pipeline", "--logs", str(tmp_path / "nothing")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().count("\n") == 0 and "not a log directory" in err
    with pytest.raises(SystemExit):
        main(["pipeline", "--help"])
    assert "--targets" in capsys.readouterr().out
