"""The writer's log directories read by Apache Kafka 3.9.2 itself (kafka-dump-log in the log oracle's JVM):
Kafka sees the offsets, timestamps and sizes written, and finds the indexes consistent."""
from __future__ import annotations

import re

import pytest

import kafkafmt.spark as ks
from kafkafmt.spark.write import WriteOptions, build_logs, stage
from kafkarig.log_oracle import log_oracle_or_skip

RECORD = re.compile(r"\| offset: (\d+) (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+) keySize: (-?\d+) "
                    r"valueSize: (-?\d+)")


@pytest.mark.java
@pytest.mark.parametrize("magic,codec", [(2, "zstd"), (1, "snappy"), (0, "gzip")])
def test_kafka_reads_what_the_writer_wrote(sample_logs, tmp_path, magic, codec):
    oracle = log_oracle_or_skip()
    src = ks.read_all(ks.plan({"path": str(sample_logs / "magic2-none-0")}))
    cols = ["key", "value", "timestamp"] + (["headers"] if magic == 2 else [])
    opts = WriteOptions.parse({"path": str(tmp_path), "topic": "k", "magic": str(magic), "codec": codec,
                               "batchSize": "300", "segmentBytes": "1000"})
    build_logs([stage(src.select(cols).to_batches(), opts, "000000-0")], opts)
    seen = []
    segments = sorted((tmp_path / "k-0").glob("*.log"))
    assert len(segments) > 1
    for seg in segments:
        out, err, exc = oracle.dump("--files", str(seg), "--deep-iteration")
        assert exc is None and not err
        seen += [tuple(int(g) for g in m.groups()) for m in map(RECORD.search, out) if m]
        idx = str(seg)[:-4] + ".index"
        out, err, exc = oracle.dump("--files", idx, "--verify-index-only")
        assert exc is None and not err                    # Kafka finds no index mismatch
    rows = src.to_pylist()
    assert [s[0] for s in seen] == list(range(len(rows)))
    ms = [round(r["timestamp"].timestamp() * 1000) for r in rows]
    assert [s[1] for s in seen] == (ms if magic > 0 else [-1] * len(rows))
    assert [s[2] for s in seen] == [-1 if r["key"] is None else len(r["key"]) for r in rows]
    assert [s[3] for s in seen] == [-1 if r["value"] is None else len(r["value"]) for r in rows]


@pytest.mark.java
def test_kafka_loads_a_partition_the_writer_appended_to(sample_logs, tmp_path):
    """v1 rows, then v2 rows appended (a format upgrade): Kafka's dump-log reads every offset in order, and
    Kafka's UnifiedLog, recovering every segment (unclean load from 0), keeps them all."""
    import shutil

    oracle = log_oracle_or_skip()
    src = ks.read_all(ks.plan({"path": str(sample_logs / "magic2-none-0")})).select(["key", "value", "timestamp"])
    half = src.num_rows // 2
    for magic, part in ((1, src.slice(0, half)), (2, src.slice(half))):
        opts = WriteOptions.parse({"path": str(tmp_path / "out"), "topic": "k", "magic": str(magic), "codec": "lz4",
                                   "batchSize": "300", "segmentBytes": "1000"})
        build_logs([stage(part.to_batches(), opts, "000000-0")], opts)
    d = tmp_path / "out" / "k-0"
    seen = []
    for seg in sorted(d.glob("*.log")):
        out, err, exc = oracle.dump("--files", str(seg), "--deep-iteration")
        assert exc is None and not err
        seen += [(int(m.group(1)), int(m.group(2))) for m in map(RECORD.search, out) if m]
    ms = [round(t.timestamp() * 1000) for t in src.column("timestamp").to_pylist()]
    assert seen == list(zip(range(src.num_rows), ms))
    copy = tmp_path / "copy" / "k-0"
    shutil.copytree(d, copy)                      # Kafka's recovery may rewrite index files
    st = oracle.call("open", log="appended", dir=str(copy), config={"segment.bytes": "1000"}, clean=False,
                     recoveryPoint=0)
    try:
        assert (st["logStartOffset"], st["logEndOffset"]) == (0, src.num_rows)
        assert len(st["segments"]) == len(list(d.glob("*.log")))
    finally:
        oracle.call("closeHandlers", log="appended")
