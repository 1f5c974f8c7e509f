"""The pipeline's ``compaction`` job: per compacted partition, the cleaner's passes on a copy, checked
against the library (kafkafmt.log) and Kafka 3.9.2's cleaner on the same partitions, and run by Spark."""
from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kafkafmt.gen.generator import generate_logs
from kafkafmt.gen.workload_file import parse_workload
from kafkafmt.log.clock import mtime_ms
from kafkafmt.records import MemoryRecords
from kafkafmt.spark.compaction import partition_compaction
from kafkafmt.spark.pipeline import partition_dirs, run_pipeline, topic_settings

SAMPLE = {
    "name": "compacted-sample", "seed": 3, "duration_ms": 40000,
    "broker": {"inter.broker.protocol.version": "2.8", "log.cleaner.enable": "false"},
    "topics": [
        {"name": "users", "partitions": 1,
         "config": {"cleanup.policy": "compact", "segment.bytes": 8192, "min.cleanable.dirty.ratio": 0.01,
                    "delete.retention.ms": 600000},
         "producers": [{"name": "p", "rate": 60, "keys": 30, "value_bytes": [20, 60], "tombstones": 0.2}]},
        {"name": "legacy", "partitions": 1,
         "config": {"cleanup.policy": "compact", "message.format.version": "0.10.2", "segment.bytes": 4096,
                    "min.cleanable.dirty.ratio": 0.01},
         "producers": [{"name": "s", "rate": 40, "keys": 25, "codec": "gzip", "idempotent": False, "magic": 1}]},
        {"name": "plain", "partitions": 1, "config": {"segment.bytes": 8192},
         "producers": [{"name": "q", "rate": 20, "keys": 10}]},
    ]}


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("compaction") / "logs"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generate_logs(parse_workload(SAMPLE), out, jobs=1, progress=False)
        return out, topic_settings(out)


def _records(d: Path) -> list[tuple]:
    return [(r.offset, r.key, r.value, b.magic) for s in sorted(d.glob("*.log"))
            for b in MemoryRecords(s.read_bytes()).batches() if not b.is_control for r in b.records()]


def test_job_rows_match_the_library_and_never_touch_the_log(sample):
    out, settings = sample
    before = {p: (p.read_bytes(), mtime_ms(p)) for p in out.rglob("*") if p.is_file()}
    rows = {d.name: partition_compaction(d, settings[d.name.rsplit("-", 1)[0]]) for d in partition_dirs(out)}
    assert {p: (p.read_bytes(), mtime_ms(p)) for p in out.rglob("*") if p.is_file()} == before
    assert rows["plain-0"] is None  # cleanup.policy=delete: no row
    users = rows["users-0"]
    recs = _records(out / "users-0")
    keys = {k for _, k, _, _ in recs}
    assert users["records_before"] == len(recs) and users["keys_before"] == len(keys) == 30
    assert users["tombstones_before"] == sum(1 for _, k, v, _ in recs if v is None)
    assert users["passes"] >= 1 and users["records_after"] < users["records_before"]
    assert users["keys_after"] <= users["keys_before"] and users["bytes_after"] < users["bytes_before"]
    # tombstones are kept (delete.retention.ms 10 min) and wait for the horizon the first pass wrote
    assert users["tombstones_after"] > 0 and users["tombstones_waiting_until_ms"] == users["clean_at_ms"] + 600000
    legacy = rows["legacy-0"]
    assert legacy["oldest_magic"] == 1 and legacy["keys_after"] == 25 and legacy["tombstones_waiting_until_ms"] is None


def test_job_after_equals_kafkas_cleaner(sample, tmp_path):
    """The records left after the job's passes are those Kafka 3.9.2's cleaner leaves on the same copy."""
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    oracle = cleaner_oracle_or_skip()
    out, settings = sample
    for d in partition_dirs(out):
        topic = d.name.rsplit("-", 1)[0]
        row = partition_compaction(d, settings[topic])
        if row is None:
            continue
        props = {k: str(v) for k, v in next(t for t in SAMPLE["topics"] if t["name"] == topic)["config"].items()}
        copy = tmp_path / topic / d.name
        shutil.copytree(d, copy)
        for _ in range(row["passes"]):
            assert oracle.clean(copy, now=row["clean_at_ms"], config=props)["cleaned"]
        assert not oracle.clean(copy, now=row["clean_at_ms"], config=props)["cleaned"]
        left = _records(copy)
        assert len(left) == row["records_after"] and left[0][0] == row["oldest_offset"]
        assert len({k for _, k, _, _ in left}) == row["keys_after"]
        assert sum(p.stat().st_size for p in copy.glob("*.log")) == row["bytes_after"]


def test_pipeline_writes_the_compaction_table(sample, spark, tmp_path):
    out, settings = sample
    run_pipeline(out, tmp_path / "derived", spark=spark, targets=5, window=11, sample_segments=1, progress=False)
    table = pq.read_table(tmp_path / "derived" / "compaction.parquet").to_pandas()
    assert sorted(table["topic"]) == ["legacy", "users"]
    users = table[table["topic"] == "users"].iloc[0].to_dict()
    direct = partition_compaction(out / "users-0", settings["users"])
    assert {k: users[k] for k in direct} == direct
