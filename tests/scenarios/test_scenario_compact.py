"""The scenario action ``compact``: one pass of the log cleaner over a broker's replica at the scenario's
clock, checked against Kafka 3.9.2's cleaner on a copy of the same replica."""
from __future__ import annotations

import shutil

import pytest

from kafkafmt.log.clock import mtime_ms
from kafkafmt.scenarios import ScenarioError, parse_scenario, run_scenario

PROPS = {"cleanup.policy": "compact", "segment.bytes": 150, "min.cleanable.dirty.ratio": "0.01",
         "delete.retention.ms": 60000, "file.delete.delay.ms": 0}


def _scenario(compact: str = "      - compact: {broker: A, partition: 0}\n") -> str:
    props = ", ".join(f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {v}" for k, v in PROPS.items())
    return f"""name: compact-test
brokers:
  - {{name: A, version: "3.9"}}
partitions:
  - {{leader: A, replicas: [A]}}
producers:
  - {{name: p, version: "3.9", compression: none}}
consumers:
  - {{name: c, version: "3.9"}}
steps:
  - name: before - a compacted topic, three batches over the same keys
    do:
      - configure: {{broker: A, properties: {{{props}}}}}
      - produce: {{producer: p, records: 3}}
      - produce: {{producer: p, records: 3}}
      - produce: {{producer: p, records: 2}}
      - advance_clock: {{ms: 30000}}
{compact}"""


def test_compact_action_cleans_the_replica():
    result = run_scenario(parse_scenario(_scenario()))
    row = [r for r in result.steps[0].rows if r.request == "log cleaner pass"][0]
    assert row.path == "disk" and row.detail["compact"] and row.detail["cleaned"]
    # k0, k1 of the first batches are replaced by the third; k2 of the second batch is the latest k2
    assert row.detail["records_removed"] == 3 and row.records == 5
    assert row.bytes_out < row.bytes_in and row.detail["checkpoint"] == 6


def test_compact_action_errors_are_one_line():
    with pytest.raises(ScenarioError, match="unknown broker 'Z'"):
        parse_scenario(_scenario("      - compact: {broker: Z}\n"))
    with pytest.raises(ScenarioError, match="Unknown cleaner configuration 'log.cleaner.nope'"):
        run_scenario(parse_scenario(_scenario("      - compact: {broker: A, cleaner: {log.cleaner.nope: 1}}\n")))


def test_compact_action_is_kafkas_pass(tmp_path):
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    oracle = cleaner_oracle_or_skip()
    result, cluster = run_scenario(parse_scenario(_scenario("")), keep_cluster=True)
    try:
        src = cluster.log_dir("A", 0)
        cluster.logs[("A", 0)].flush()
        copy = tmp_path / "kafka" / src.name
        shutil.copytree(src, copy)
        k = oracle.clean(copy, now=cluster.clock.now(), config={k: str(v) for k, v in PROPS.items()})
        row = cluster.compact("A", 0)
        assert k["cleaned"] and row.detail["cleaned"]
        for p in sorted(copy.glob("*.log")) + sorted(copy.glob("*.index")) + sorted(copy.glob("*.timeindex")):
            assert p.read_bytes() == (src / p.name).read_bytes(), p.name
            if p.suffix == ".log":
                assert mtime_ms(p) == mtime_ms(src / p.name)
        assert sorted(p.name for p in copy.glob("*.log")) == sorted(p.name for p in src.glob("*.log"))
        assert (copy.parent / "cleaner-offset-checkpoint").read_text() == \
            (src.parent / "cleaner-offset-checkpoint").read_text()
    finally:
        cluster.close()
