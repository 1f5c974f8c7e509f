"""`kafkafmt gen` for compacted topics: tombstones, transactions with aborts, the cleaner running on the
broker's schedule; workloads without them generate the very bytes they did before."""
from __future__ import annotations

import hashlib
import shutil
import warnings
from pathlib import Path

import pytest

from kafkafmt.errors import ConfigError
from kafkafmt.gen.generator import generate_logs
from kafkafmt.gen.workload_file import load_workload, parse_workload
from kafkafmt.log import Log, SimulatedClock
from kafkafmt.log.cleaner.offset_map import CleanerConfig
from kafkafmt.log.clock import mtime_ms
from kafkafmt.records import MemoryRecords
from test_log_generator import TINY

COMPACTED = {
    "name": "small-compacted", "seed": 5, "duration_ms": 60000,
    "broker": {"inter.broker.protocol.version": "2.8", "log.cleaner.backoff.ms": 10000,
               "log.cleaner.dedupe.buffer.size": 4096},
    "topics": [
        {"name": "users", "partitions": 1,
         "config": {"cleanup.policy": "compact", "segment.bytes": 8192, "min.cleanable.dirty.ratio": 0.1,
                    "delete.retention.ms": 20000, "min.compaction.lag.ms": 5000},
         "producers": [{"name": "p", "rate": 60, "keys": 40, "value_bytes": [20, 60], "tombstones": 0.1,
                        "codec": "lz4"}]},
        {"name": "orders", "partitions": 1,
         "config": {"cleanup.policy": "compact", "segment.bytes": 8192, "min.cleanable.dirty.ratio": 0.05,
                    "delete.retention.ms": 10000},
         "producers": [{"name": "t", "rate": 50, "keys": 60, "value_bytes": [20, 60],
                        "transactions": {"batches": [1, 3], "abort": 0.3}}]},
        {"name": "legacy", "partitions": 1,
         "config": {"cleanup.policy": "compact", "message.format.version": "0.10.2", "segment.bytes": 4096,
                    "min.cleanable.dirty.ratio": 0.05},
         "producers": [{"name": "s", "rate": 40, "keys": 30, "codec": "gzip", "idempotent": False, "magic": 1}]},
    ]}


def _gen(tmp_path, doc, name="out"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return generate_logs(parse_workload(doc), tmp_path / name, jobs=1, progress=False)


def _tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def test_existing_workloads_generate_the_same_bytes(tmp_path):
    """TINY (no compacted topic, no tombstones, no transactions) as generated before compaction came to
    `kafkafmt gen`: every file, manifest included, hashed.  (Since the log directory took Kafka's layout, the
    per-partition checkpoints and markers are gone and the log directory holds LogManager's files; every
    segment, index and leader-epoch file kept its bytes.)"""
    _gen(tmp_path, TINY)
    assert _tree_hash(tmp_path / "out") == "afff024a3a5fc6ef750f7adf6c691b096a39031d455b138a299e0d1487a06161"


@pytest.mark.parametrize("patch,words", [
    ({"tombstones": 0.1, "keys": 0}, "tombstones must be a share"),
    ({"tombstones": 2}, "tombstones must be a share"),
    ({"transactions": {"batches": [1, 2]}, "idempotent": False}, "transactions need an idempotent producer"),
    ({"transactions": {"batches": [1, 2]}, "magic": 1}, "transactions need an idempotent producer"),
    ({"transactions": {"abort": 2}}, "abort must be <= 1"),
    ({"transactions": {"abrt": 0.1}}, "unknown key(s) abrt"),
])
def test_bad_compaction_keys_are_refused(patch, words):
    doc = {**TINY, "topics": [{"name": "t", "producers": [{"name": "p", "keys": 10, **patch}]}]}
    with pytest.raises(ConfigError) as e:
        parse_workload(doc)
    assert words in e.value.reason


@pytest.fixture(scope="module")
def compacted(tmp_path_factory):
    root = tmp_path_factory.mktemp("compacted")
    return root / "out", _gen(root, COMPACTED)


def test_compacted_topics_are_cleaned_while_written(compacted):
    out, m = compacted
    parts = {p["topic"]: p for p in m["partitions"]}
    assert all(p["cleaner"]["passes"] > 0 and p["cleaner"]["records_removed"] > 0 for p in parts.values())
    assert parts["users"]["producers"][0]["tombstones"] > 0
    txn = parts["orders"]["producers"][0]["transactions"]
    assert txn["aborted"] > 0 and txn["committed"] > 0
    assert (out / "cleaner-offset-checkpoint").exists() and not (out / ".cleaner.lock").exists()
    records = sum(1 for s in sorted((out / "users-0").glob("*.log"))
                  for _ in MemoryRecords(s.read_bytes()).records())
    assert records < parts["users"]["log_end_offset"]  # compaction removed records
    magics = {b.magic for s in (out / "legacy-0").glob("*.log") for b in MemoryRecords(s.read_bytes()).batches()}
    assert magics == {1}
    markers = [b for s in (out / "orders-0").glob("*.log") for b in MemoryRecords(s.read_bytes()).batches()
               if b.is_control]
    assert markers  # the coordinator's COMMIT/ABORT markers (those inside the delete horizon)


def test_shipped_compacted_workload_parses():
    w = load_workload("compacted")
    assert w.cleaner_config().dedupe_buffer_size == 4096 and w.cleaner_config().backoff_ms == 15000
    assert any(g.transactions for t in w.topics for g in t.producers)


def test_generated_partitions_clean_as_kafka_cleans_them(tmp_path):
    """The workload generated with the cleaner off, then one pass by kafkafmt and one by Kafka 3.9.2's
    cleaner on copies: byte-identical segments, indexes, mtimes and checkpoints (tombstones, aborted
    transactions and their markers, v1 wrappers)."""
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    oracle = cleaner_oracle_or_skip()
    doc = {**COMPACTED, "broker": {**COMPACTED["broker"], "log.cleaner.enable": "false"}}
    m = _gen(tmp_path, doc, "raw")
    raw = tmp_path / "raw"
    now = m["start_ms"] + m["duration_ms"] + 1000
    for t in COMPACTED["topics"]:
        props = {k: str(v) for k, v in t["config"].items()}
        name = f"{t['name']}-0"
        kafka, fmt = tmp_path / "kafka" / t["name"], tmp_path / "fmt" / t["name"]
        for d in (kafka, fmt):
            d.mkdir(parents=True)
            shutil.copytree(raw / name, d / name)
        k = oracle.clean(kafka / name, now=now, config=props, cleaner={"dedupeBufferSize": 4096})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from kafkafmt.gen.workload_file import log_config
            log = Log(fmt / name, log_config(t["config"], {"inter.broker.protocol.version": "2.8"}),
                      SimulatedClock(now), clean_shutdown=True)
        r = log.clean(now=now, cleaner=CleanerConfig(dedupe_buffer_size=4096))
        log.close()
        assert r.cleaned and k["cleaned"], t["name"]
        suffixes = (".log", ".index", ".timeindex", ".txnindex")
        names = sorted(p.name for p in (kafka / name).iterdir() if p.suffix in suffixes)
        assert names == sorted(p.name for p in (fmt / name).iterdir() if p.suffix in suffixes)
        for n in names:
            assert (kafka / name / n).read_bytes() == (fmt / name / n).read_bytes(), (t["name"], n)
            if n.endswith(".log"):
                assert mtime_ms(kafka / name / n) == mtime_ms(fmt / name / n)
        assert (kafka / "cleaner-offset-checkpoint").read_text() == (fmt / "cleaner-offset-checkpoint").read_text()
