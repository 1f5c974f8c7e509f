"""The audit as a Spark job (kafkafmt.spark.audit) equals the library's audit, partition for partition,
over two brokers' log.dirs; a kafkafmt error in a task reaches the driver as that error."""
from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "audit"))

from kafkafmt.audit import audit_log_dirs  # noqa: E402
from kafkafmt.errors import CorruptRecordError  # noqa: E402
from kafkafmt.log.readonly import file_states  # noqa: E402
from mixed_sample import START_MS, make_mixed  # noqa: E402

NOW = START_MS + 3600000


@pytest.fixture(scope="module")
def brokers(tmp_path_factory):
    """Two brokers' log.dirs: the mixed sample, and a second broker holding a copy of two of its partitions."""
    root = tmp_path_factory.mktemp("brokers")
    make_mixed(root / "broker-1")
    (root / "broker-2").mkdir()
    for name in ("accounts-1", "clicks-0"):
        shutil.copytree(root / "broker-1" / name, root / "broker-2" / name)
    return [root / "broker-1", root / "broker-2"]


def test_spark_job_equals_the_library(spark, brokers):
    from kafkafmt.spark.audit import audit_frame, audit_partitions
    opts = {"clicks": {"cleanup.policy": "compact,delete"}}
    before = {d: file_states(d) for b in brokers for d in [b, *b.iterdir()] if d.is_dir()}
    lib = audit_log_dirs(brokers, now_ms=NOW, topic_config=opts).to_dict()["partitions"]
    job = audit_partitions(spark, brokers, now_ms=NOW, topic_config=opts)
    assert job == lib and len(job) == 6
    frame = audit_frame(spark, brokers, now_ms=NOW, topic_config=opts).orderBy("dir").collect()
    assert [json.loads(r["audit"]) for r in frame] == sorted(lib, key=lambda p: p["dir"])
    assert {(r["topic"], r["partition"], r["v0_batches"] > 0) for r in frame} == {
        ("accounts", 0, True), ("accounts", 1, True), ("clicks", 0, False), ("modern", 0, False)}
    # broker-2 has no manifest: its clicks-0 takes the option only, its accounts-1 Kafka's defaults
    two = {p["topic"]: p for p in job if "broker-2" in p["dir"]}
    assert two["clicks"]["config_source"] == "option" and not two["accounts"]["compacted"]
    assert {d: file_states(d) for b in brokers for d in [b, *b.iterdir()] if d.is_dir()} == before


def test_a_corrupt_segment_fails_the_job_with_its_kafkafmt_error(spark, brokers, tmp_path):
    from kafkafmt.spark.audit import audit_partitions
    bad = tmp_path / "broken" / "accounts-0"
    shutil.copytree(brokers[0] / "accounts-0", bad)
    seg = sorted(bad.glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    data[40] ^= 0xFF
    seg.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError, match=seg.name):
        audit_partitions(spark, bad.parent, now_ms=NOW)
