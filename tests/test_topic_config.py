"""The one topic configuration (issue 13): Kafka's names, parsing, messages, round trips, broker apart."""
from __future__ import annotations

import warnings

import pytest

from kafkafmt.config import (
    KEYS_BY_NAME,
    TOPIC_KEYS,
    BrokerConfig,
    ConfigError,
    LogConfig,
    NotModelledConfigWarning,
    format_value,
)
from kafkafmt.constants import TimestampType

#: a non-default, canonical value for every modelled key (as a .properties file would hold it)
NON_DEFAULT = {
    "segment.bytes": "1024", "segment.ms": "60000", "segment.jitter.ms": "7", "segment.index.bytes": "4096",
    "retention.bytes": "123456", "retention.ms": "-1", "max.message.bytes": "2000", "index.interval.bytes": "100",
    "max.compaction.lag.ms": "5000", "file.delete.delay.ms": "0", "cleanup.policy": "compact,delete",
    "compression.type": "zstd", "compression.gzip.level": "5", "compression.lz4.level": "1",
    "compression.zstd.level": "-5", "preallocate": "true", "message.format.version": "0.10.0",
    "message.timestamp.type": "LogAppendTime", "message.timestamp.difference.max.ms": "1000",
    "message.timestamp.before.max.ms": "2000", "message.timestamp.after.max.ms": "3000",
    "message.downconversion.enable": "false", "delete.retention.ms": "100", "min.compaction.lag.ms": "10",
    "min.cleanable.dirty.ratio": "0.01",
}


def test_every_modelled_key_round_trips_losslessly():
    assert set(NON_DEFAULT) == {k.name for k in TOPIC_KEYS if k.modelled}
    cfg = LogConfig.from_properties(NON_DEFAULT)
    assert cfg.to_properties() == NON_DEFAULT
    assert LogConfig.from_properties(cfg.to_properties()) == cfg
    for name, value in NON_DEFAULT.items():  # one at a time: only that key is written back
        one = LogConfig.from_properties({name: value})
        assert one.to_properties() == {name: value}
        assert one != LogConfig()


def test_python_values_and_strings_give_the_same_configuration():
    a = LogConfig.from_properties({"segment.bytes": 1024, "preallocate": True, "cleanup.policy": ["compact"],
                                   "message.timestamp.type": TimestampType.LOG_APPEND_TIME})
    b = LogConfig.from_properties({"segment.bytes": " 1024 ", "preallocate": "TRUE", "cleanup.policy": "compact",
                                   "message.timestamp.type": "LogAppendTime"})
    assert a == b == LogConfig(segment_bytes=1024, preallocate=True, cleanup_policy=("compact",),
                               timestamp_type="LogAppendTime")


def test_defaults_written_back_on_request():
    props = LogConfig().to_properties(defaults=True)
    assert set(props) == {k.name for k in TOPIC_KEYS}
    assert props["segment.bytes"] == "1073741824" and props["message.format.version"] == "3.0-IV1"
    assert LogConfig().to_properties() == {}


def test_unknown_key_is_an_error_naming_it_with_a_suggestion():
    with pytest.raises(ConfigError, match=r"^Unknown topic config name: segmnt\.bytes \(did you mean segment\.bytes"):
        LogConfig.from_properties({"segmnt.bytes": "1"})
    with pytest.raises(ConfigError, match="a broker setting"):
        LogConfig.from_properties({"inter.broker.protocol.version": "2.8"})
    with pytest.raises(ConfigError, match="Unknown topic config name: retention.mss"):
        LogConfig().with_properties({"retention.mss": "1"})


def test_known_but_not_modelled_keys_are_kept_and_announced_once():
    props = {"min.insync.replicas": "2", "flush.messages": "10", "segment.bytes": "2048"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = LogConfig.from_properties(props)
        LogConfig.from_properties(props)  # the same keys again: no second announcement
    msgs = [str(w.message) for w in caught if issubclass(w.category, NotModelledConfigWarning)]
    assert len(msgs) <= 1 and all("flush.messages" in m and "min.insync.replicas" in m for m in msgs)
    assert cfg.not_modelled == {"min.insync.replicas": "2", "flush.messages": "10"}
    assert cfg.to_properties() == props
    assert "flush.messages" in cfg.describe()["not modelled"]
    with pytest.raises(ConfigError, match="Invalid value 0 for configuration min.insync.replicas: "
                                          "Value must be at least 1"):
        LogConfig.from_properties({"min.insync.replicas": "0"})


def test_kafka_messages_for_bad_values():
    cases = {
        ("segment.bytes", "abc"): "Invalid value abc for configuration segment.bytes: Not a number of type INT",
        ("segment.bytes", "5"): "Invalid value 5 for configuration segment.bytes: Value must be at least 14",
        ("cleanup.policy", "delete,foo"): "Invalid value foo for configuration cleanup.policy: "
                                          "String must be one of: compact, delete",
        ("compression.gzip.level", "0"): "Invalid value 0 for configuration compression.gzip.level: "
                                         "Value must be between 1 and 9 or equal to -1",
        ("message.format.version", "0.7"): "Invalid value 0.7 for configuration message.format.version: "
                                           "Version 0.7 is not a valid version",
        ("preallocate", "yes"): "Invalid value yes for configuration preallocate: "
                                "Expected value to be either true or false",
    }
    for (k, v), msg in cases.items():
        with pytest.raises(ConfigError) as e:
            LogConfig.from_properties({k: v})
        assert str(e.value) == msg


def test_a_log_append_time_topic_from_properties_alone(tmp_path):
    from kafkafmt.gen.workloads import client_batch
    from kafkafmt.log import Log, SimulatedClock
    from kafkafmt.records import MemoryRecords
    clock = SimulatedClock(1_700_000_000_000)
    log = Log(tmp_path / "t-0", {"message.timestamp.type": "LogAppendTime", "segment.bytes": "4096"}, clock)
    log.append_as_leader(client_batch([(5, b"k", b"v")]))
    b = next(MemoryRecords(log.read(0, 10**6).records).batches())
    assert b.timestamp_type == TimestampType.LOG_APPEND_TIME and b.max_timestamp == clock.now()
    log.close()


def test_broker_settings_live_apart_and_supply_topic_defaults():
    b = BrokerConfig.from_properties({"inter.broker.protocol.version": "3.9", "log.segment.bytes": "4096",
                                      "log.message.format.version": "0.10.0"})
    cfg = LogConfig.from_properties({"segment.bytes": "8192"}, broker=b)
    assert cfg.segment_bytes == 8192  # the topic override wins over the broker default
    assert cfg.message_format_version == "0.10.0" and cfg.to_magic == 2  # IBP 3.9 ignores it (KIP-724)
    assert LogConfig.from_properties({}, broker=b.replace(inter_broker_protocol_version="2.8")).to_magic == 1
    assert "kafkafmt's default" in BrokerConfig().describe() and BrokerConfig().inter_broker_protocol_version == "2.8"
    with pytest.raises(ConfigError, match="Unknown broker config name: inter.broker.protocl.version"):
        BrokerConfig.from_properties({"inter.broker.protocl.version": "2.8"})


def test_format_value_matches_the_key_types():
    assert format_value(KEYS_BY_NAME["cleanup.policy"], ("compact", "delete")) == "compact,delete"
    assert format_value(KEYS_BY_NAME["preallocate"], True) == "true"
    assert format_value(KEYS_BY_NAME["min.cleanable.dirty.ratio"], 0.5) == "0.5"


def test_explain_starts_with_the_broker_and_its_ibp_default():
    from kafkafmt.broker import fetch, validate_messages_and_assign_offsets
    from kafkafmt.gen.workloads import client_batch
    data = client_batch([(1000, b"k", b"v")])
    for tr in (validate_messages_and_assign_offsets(data, LogConfig(), now=2000).trace,
               fetch(data, topic_config=LogConfig(), fetch_version=3).trace):
        first = tr.steps[0]
        assert first.rule == "broker configuration" and "2.8" in first.decision and "KIP-724" in first.decision


def test_kip228_broker_option_stores_extended_batches():
    """kafkafmt.kip228.enable (seed 002's new broker): -1 becomes Long.MIN_VALUE, the bit is set."""
    from kafkafmt.broker import validate_messages_and_assign_offsets
    from kafkafmt.constants import NO_TIMESTAMP_EXTENDED
    from kafkafmt.gen.workloads import client_batch
    from kafkafmt.kip228 import is_extended
    from kafkafmt.records import MemoryRecords
    data = client_batch([(-1, b"a", b"1"), (5, b"b", b"2")])
    plain = validate_messages_and_assign_offsets(data, LogConfig(), now=10)
    new = validate_messages_and_assign_offsets(
        data, LogConfig(broker=BrokerConfig.from_properties({"kafkafmt.kip228.enable": "true"})), now=10)
    (pb,), (nb,) = MemoryRecords(plain.records).batches(), MemoryRecords(new.records).batches()
    assert not is_extended(pb) and [r.timestamp for r in pb.records()] == [-1, 5]
    assert is_extended(nb) and [r.timestamp for r in nb.records()] == [NO_TIMESTAMP_EXTENDED, 5]
    assert any(s.rule.startswith("KIP-228") for s in new.trace.steps)
