"""The Kafka line as data: the table of differences and the rules that read it (no Java needed).

What the rows say is checked against Kafka 4.4.0 in test_kafka44_vs_jars.py (jars) and
tests/conformance/test_kafka44_broker.py (a live broker); here: the table's shape, that every rule
follows the broker's ``kafka_line``, and that the 3.9 line is what it was.  The older lines' rows:
test_kafka_lines_history.py.
"""
from __future__ import annotations

import re

import pytest

from broker_helpers import NOW, R, build
from kafkafmt import kafka_lines
from kafkafmt.broker import BrokerConfig, LogConfig
from kafkafmt.broker import validate_messages_and_assign_offsets as validate
from kafkafmt.broker.fetch import fetch
from kafkafmt.config import INT64_MAX
from kafkafmt.dump import dump_log
from kafkafmt.errors import ConfigError, InvalidRecordError, RecordValidationError, UnsupportedVersionError
from kafkafmt.tools.explain import main as cli_main

B44 = BrokerConfig(kafka_line="4.4")
C44 = LogConfig(broker=B44)


def test_every_row_names_its_kip_or_jira_and_is_one_change():
    seen = set()
    for c in kafka_lines.CHANGES:
        assert re.search(r"KIP-\d+|KAFKA-\d+|apache/kafka PR \d+", c.source), c
        assert c.area in ("protocol", "produce", "fetch", "topic config", "broker config", "log", "dump", "consumer",
                          "producer", "cleaner", "metrics", "codec"), c
        assert c.before != c.after and c.where, c
        assert (c.key, c.since) not in seen, c  # one row per key and release
        seen.add((c.key, c.since))
    assert kafka_lines.value("produce.min_version", "4.4") == 3
    assert kafka_lines.value("fetch.min_version", "4.4") == 4
    assert kafka_lines.value("cleaner.legacy_to_v2", "4.4") is True and "KAFKA-13093" in \
        kafka_lines.change("cleaner.legacy_to_v2").source


def test_the_broker_setting():
    assert BrokerConfig().kafka_line == "3.9" and BrokerConfig().has_ibp and not B44.has_ibp
    assert BrokerConfig.from_properties({}, kafka_line="4.4") == B44
    assert BrokerConfig.from_properties({}).to_properties() == {"inter.broker.protocol.version": "2.8"}
    with pytest.raises(ConfigError, match="not a property: the Kafka line is chosen with --kafka-line"):
        BrokerConfig.from_properties({"kafkafmt.kafka.version": "4.4"})  # the old spelling is gone
    assert BrokerConfig(kafka_line="4.4.0").kafka_line == "4.4"
    with pytest.raises(ConfigError, match=r"unknown Kafka line '4\.0': kafkafmt models 0\.9, 0\.10\.0, .*, 3\.9, 4\.4$"):
        BrokerConfig(kafka_line="4.0")
    with pytest.raises(ConfigError, match=r"log.message.format.version \(removed in Kafka 4.0 .*KIP-724"):
        BrokerConfig(kafka_line="4.4", topic_defaults={"log.message.format.version": "0.10.0"})
    # KIP-724: 4.4 ignores the IBP: every topic is v2, zstd always allowed
    assert C44.to_magic == 2 and C44.ibp_supports_zstd
    assert LogConfig(message_format_version="0.10.0").to_magic == 1  # 3.9 with kafkafmt's IBP 2.8


def test_topic_keys_of_4_4():
    assert C44.timestamp_after_max_ms == 3_600_000 and "message.timestamp.after.max.ms" not in C44.overridden
    assert LogConfig().timestamp_after_max_ms == INT64_MAX
    assert LogConfig.from_properties({"message.timestamp.after.max.ms": "5"}, broker=B44).timestamp_after_max_ms == 5
    for name, kip in (("message.format.version", "KIP-724"), ("message.downconversion.enable", "KIP-724"),
                      ("message.timestamp.difference.max.ms", "KIP-937")):
        with pytest.raises(ConfigError, match=rf"{re.escape(name)} \(removed in Kafka 4\.0 by {kip}"):
            LogConfig.from_properties({name: "1"}, broker=B44)
        with pytest.raises(ConfigError, match="removed in Kafka 4.0"):
            LogConfig(broker=B44).with_properties({name: "1"})
    with pytest.raises(ConfigError, match="removed in Kafka 4.0 by KIP-724"):
        LogConfig(message_format_version="0.10.0", broker=B44)
    with pytest.raises(ConfigError, match="Value must be at least 1048576"):
        LogConfig(segment_bytes=1024, broker=B44)
    assert LogConfig(segment_bytes=1024).segment_bytes == 1024  # 3.9 unchanged
    with pytest.raises(ConfigError, match="Unknown topic config name: max.decompressed.message.bytes"):
        LogConfig.from_properties({"max.decompressed.message.bytes": "5"})
    kept = LogConfig.from_properties({"max.decompressed.message.bytes": "5"}, broker=B44)
    assert kept.to_properties() == {"max.decompressed.message.bytes": "5"}


def test_produce_on_4_4():
    v1 = build([R(NOW, b"k", b"v")], magic=1)
    for version in (0, 1, 2):
        with pytest.raises(UnsupportedVersionError) as e:
            validate(v1, C44, now=NOW, produce_version=version)
        assert kafka_lines.rows_applied(e.value.trace) == ["produce.record_version", "produce.min_version"]
    with pytest.raises(InvalidRecordError, match="only allowed to contain record batches with magic version 2"):
        validate(v1, C44, now=NOW, produce_version=3)
    # 3.9: Produce v2 carrying v1 is answered, stored in the topic's format
    assert validate(v1, LogConfig(message_format_version="0.10.0"), now=NOW, produce_version=2).to_magic == 1
    # after.max.ms default 1 h: a record 2 h ahead is INVALID_TIMESTAMP on 4.4 only
    ahead = build([R(NOW + 7_200_000)])
    with pytest.raises(RecordValidationError, match="invalid timestamp"):
        validate(ahead, C44, now=NOW, produce_version=9)
    assert validate(ahead, LogConfig(), now=NOW, produce_version=9).max_timestamp == NOW + 7_200_000


def test_fetch_on_4_4_serves_old_batches_as_they_are():
    log = build([R(-1, b"a", b"0")], magic=0) + build([R(NOW, b"b", b"1")], magic=1, base_offset=1) + \
        build([R(NOW, b"c", b"2")], base_offset=2)
    closed = fetch(log, topic_config=C44, fetch_version=3)
    assert closed.connection_closed and closed.error == "UNSUPPORTED_VERSION" and closed.records == b""
    for version in (4, 13, 17):
        res = fetch(log, topic_config=C44, fetch_version=version)
        assert res.zero_copy and res.records == log and res.to_magic is None
        assert kafka_lines.rows_applied(res.trace) == ["fetch.min_version", "fetch.down_conversion"]
    # 3.9 (IBP 3.9: v2 topic): fetch v3 down-converts the v2 batch, copies the v0/v1 ones
    c39 = LogConfig(broker=BrokerConfig(inter_broker_protocol_version="3.9"))
    old = fetch(log, topic_config=c39, fetch_version=3)
    assert not old.zero_copy and old.to_magic == 1 and old.records != log
    assert kafka_lines.rows_applied(old.trace) == []


def test_dump_record_lines_per_line():
    data = build([R(NOW, b"k", b"v")], magic=1)
    [l39] = [ln for ln in dump_log(data, filename="x.log", deep=True).stdout if ln.startswith("|")]
    [l44] = [ln for ln in dump_log(data, filename="x.log", deep=True, kafka_line="4.4").stdout if ln.startswith("|")]
    assert l39.endswith("}") and l39[:-1] == l44


def test_explain_lists_the_rows_applied(tmp_path, capsys):
    f = tmp_path / "v1.bin"
    f.write_bytes(build([R(NOW, b"k", b"v")], magic=1))
    assert cli_main(["explain", "fetch", str(f), "--kafka-line", "4.4", "--fetch-version", "2"]) == 1
    out = capsys.readouterr().out
    assert "NO RESPONSE: the broker closes the connection" in out and "fetch.min_version" in out and "KIP-896" in out
    assert cli_main(["explain", "produce", str(f), "--kafka-line", "4.4", "--now", str(NOW)]) == 0
    out = capsys.readouterr().out
    assert "produce.record_version" in out and "KIP-724" in out
    assert cli_main(["explain", "produce", str(f), "--now", str(NOW)]) == 0
    assert "difference(s) from 3.9" not in capsys.readouterr().out


def test_zstd_topic_and_fetch_below_v10():
    log = build([R(NOW, b"k", b"v")], compression_="zstd")
    assert fetch(log, topic_config=LogConfig(compression_type="zstd"), fetch_version=9).error == \
        "UNSUPPORTED_COMPRESSION_TYPE"  # 3.9 (KIP-110)
    res = fetch(log, topic_config=C44.replace(compression_type="zstd"), fetch_version=9)
    assert res.error is None and res.records == log
    assert "fetch.zstd_needs_v10" in kafka_lines.rows_applied(res.trace)


def test_explain_lines_lists_the_table(capsys):
    import json
    assert cli_main(["explain", "lines", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["key"] for r in rows] == [c.key for c in kafka_lines.CHANGES]
    removed = next(r for r in rows if r["key"] == "topic.removed.message.format.version")
    assert (removed["3.9"], removed["4.4"], removed["source"]) == \
        ("known (STRING, default 3.0-IV1)", "unknown key", "KIP-724")
    assert cli_main(["explain", "lines", "--area", "dump"]) == 0
    out = capsys.readouterr().out
    assert "dump.legacy_record_brace" in out and "KAFKA-14579" in out and "fetch." not in out
    assert cli_main(["explain", "lines", "--area", "log"]) == 0
    out = capsys.readouterr().out
    assert "log.time_index" in out and "Kafka 0.10.1" in out and "KIP-33" in out
