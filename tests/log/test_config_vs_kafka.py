"""The one topic configuration next to Kafka 3.9.2's own ``LogConfig`` and ``UnifiedLog.updateConfig``.

Every topic setting's name, type, default, validator and broker-default name is compared with
``LogConfig.configKeys()`` from the jars; bad values must get Kafka's own message; changing a running
log's configuration must leave the same files as Kafka's ``UnifiedLog`` after ``updateConfig``.
Needs Java 17 and the jars of ``make oracle`` (skipped without them, a failure in CI).
"""
from __future__ import annotations

import os

import pytest

from kafkafmt.config import KEYS_BY_NAME, TOPIC_KEYS, ConfigError, LogConfig, format_value
from kafkafmt.gen.workloads import client_batch
from test_log_vs_kafka import T0, Pair

pytestmark = pytest.mark.java


def _validator_text(key) -> str | None:
    """How Kafka's ``Validator.toString`` prints kafkafmt's check of ``key``."""
    c = key.check
    if c is None:
        return None
    kind = c[0]
    if kind == "at_least":
        return f"[{c[1]},...]"
    if kind == "between":
        return f"[{c[1]},...,{c[2]}]"
    if kind in ("in", "list_in"):
        return "[" + ", ".join(c[1]) + "]"
    if kind == "gzip_level":
        return "[1,...,9] or -1"
    if kind == "throttled":
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
    return kind


def test_every_topic_key_matches_kafka_3_9_2(log_oracle):
    theirs = {k["name"]: k for k in log_oracle.call("configKeys")["keys"]}
    assert [k.name for k in TOPIC_KEYS] == list(theirs)  # the same keys, in Kafka's order
    for key in TOPIC_KEYS:
        k = theirs[key.name]
        assert key.type == k["type"], key.name
        assert format_value(key, key.default) == (k["default"] or ""), key.name
        assert key.server_name == k["serverName"], key.name
        if key.check and key.check[0] != "version":
            assert _validator_text(key) == k["validator"], key.name
    # the defaults of a LogConfig() are Kafka's
    assert LogConfig().to_properties(defaults=True) == {n: (k["default"] or "") for n, k in theirs.items()}


BAD = [{"segment.bytes": "abc"}, {"segment.bytes": "5"}, {"segment.bytes": "99999999999"}, {"retention.ms": "-5"},
       {"cleanup.policy": "delete,foo"}, {"compression.type": "brotli"}, {"compression.type": "GZIP"},
       {"message.format.version": "0.7"}, {"message.timestamp.type": "logappendtime"},
       {"compression.gzip.level": "0"}, {"compression.lz4.level": "20"}, {"compression.zstd.level": "23"},
       {"compression.zstd.level": "-131073"}, {"preallocate": "yes"}, {"min.cleanable.dirty.ratio": "2"},
       {"min.cleanable.dirty.ratio": "x"}, {"message.timestamp.difference.max.ms": "-1"}, {"segment.ms": "0"},
       {"leader.replication.throttled.replicas": "x"}, {"min.insync.replicas": "0"}, {"local.retention.ms": "-3"},
       {"segmnt.bytes": "1"}, {"message.downconversion.enable": "1"}]


@pytest.mark.parametrize("props", BAD, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_bad_values_get_kafkas_message(log_oracle, props):
    resp = log_oracle.request("validateConfig", config=props)
    assert not resp["ok"], props
    with pytest.raises(ConfigError) as e:
        LogConfig.from_properties(props)
    # unknown names: Kafka's sentence, then kafkafmt's suggestion
    assert str(e.value) == resp["message"] or str(e.value).startswith(resp["message"] + " ("), (e.value, resp)


@pytest.mark.parametrize("props", [{"message.format.version": "0.10.0"}, {"message.format.version": "0.9.0.1"},
                                   {"message.timestamp.difference.max.ms": "100",
                                    "message.timestamp.after.max.ms": "7"},
                                   {"cleanup.policy": "compact", "segment.ms": "1000", "max.compaction.lag.ms": "10"},
                                   {"preallocate": "true", "segment.bytes": "5000"}])
def test_derived_values_match_kafka(log_oracle, props):
    k = log_oracle.call("validateConfig", config=props)
    c = LogConfig.from_properties(props)
    assert (c.to_magic, c.timestamp_type.kafka_name, c.effective_before_max_ms, c.effective_after_max_ms,
            c.max_segment_ms, c.init_file_size, c.compact, c.delete) == \
        (k["recordVersion"], k["messageTimestampType"], k["messageTimestampBeforeMaxMs"],
         k["messageTimestampAfterMaxMs"], k["maxSegmentMs"], k["initFileSize"], k["compact"], k["delete"])


def test_update_config_mid_log_gives_kafkas_files(log_oracle, fast_dir):
    """``kafka-configs --alter`` on a running log: message.format.version 0.10.0 then back to 2.8,
    LogAppendTime, a smaller segment.bytes; every client append validated by both brokers."""
    props = {"segment.bytes": "1200", "index.interval.bytes": "50", "segment.index.bytes": "600"}
    t = T0
    p = Pair(log_oracle, fast_dir / "cfg", props, t)

    def client(n, size=30):
        nonlocal t
        t += 100
        p.set_time(t)
        data = client_batch([(t - 5 * i, b"k%d" % i, b"v" * size) for i in range(n)])
        p.both("appendLeader", lambda: p.log.append_as_leader(data), records=data.hex(), origin="CLIENT", epoch=0)
        p.hw_to_leo()

    def alter(changes):
        p.props.update(changes)
        p.both("updateConfig", lambda: p.log.update_config(changes), config=p.props)
        p.compare(f"after {changes}")

    client(3)
    client(2)
    p.compare("v2")
    assert os.path.exists(p.pd / "leader-epoch-checkpoint")
    alter({"message.format.version": "0.10.0"})  # v1 from now on: the epoch cache goes (its file too)
    assert not os.path.exists(p.pd / "leader-epoch-checkpoint")
    for _ in range(4):
        client(3)
    p.compare("v1 appends")
    alter({"message.timestamp.type": "LogAppendTime", "segment.bytes": "800"})
    for _ in range(4):
        client(2)
    p.compare("LogAppendTime v1")
    alter({"message.format.version": "2.8"})
    for _ in range(3):
        client(2)
    p.compare("back to v2")
    assert [e["changed"] for e in p.log.events if e["type"] == "config"][0] == {"message.format.version": "0.10.0"}
    p.close()
    p.compare("closed")


def test_recovery_point_is_an_argument_as_in_kafkas_loader(log_oracle, fast_dir):
    """UnifiedLog.apply(..., recoveryPoint, ...): an unclean open recovers from the given point."""
    props = {"segment.bytes": "400"}
    p = Pair(log_oracle, fast_dir / "rp", props, T0)
    for i in range(12):
        data = client_batch([(T0 + i, b"k", b"v" * 40)])
        p.both("appendLeader", lambda: p.log.append_as_leader(data), records=data.hex(), origin="CLIENT", epoch=0)
    p.hw_to_leo()
    p.o.call("closeHandlers", log=p.key)
    p.log.crash()
    with open(p.pd / "00000000000000000000.log", "r+b") as f:  # the same damage on both sides
        f.truncate(os.path.getsize(p.pd / "00000000000000000000.log") - 3)
    with open(p.kd / "00000000000000000000.log", "r+b") as f:
        f.truncate(os.path.getsize(p.kd / "00000000000000000000.log") - 3)
    p.o.call("open", log=p.key, dir=str(p.kd), config=p.props, clean=False, recoveryPoint=0)
    from kafkafmt.log import Log
    p.log = Log.open(p.pd, p.cfg, p.clock, clean_shutdown=False, recovery_point=0)
    assert p.log.events[-1]["recovered"], "the damaged first segment was recovered from recovery point 0"
    p.hw_to_leo()
    p.compare("recovered")
    p.close()


def test_kafka_names_only(log_oracle):
    """Sanity: the oracle rejects what kafkafmt rejects as unknown (a broker key is not a topic key)."""
    resp = log_oracle.request("validateConfig", config={"inter.broker.protocol.version": "2.8"})
    assert resp["message"] == "Unknown topic config name: inter.broker.protocol.version"
    assert "inter.broker.protocol.version" not in KEYS_BY_NAME
