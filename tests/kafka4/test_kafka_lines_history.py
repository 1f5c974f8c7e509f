"""Every release line 0.9 … 4.4 (kafkafmt.kafka_lines): the rows chain by release, the rules consult them,
and one ``--kafka-line`` on every verb whose answer depends on the release.

The rows' facts were read in Apache Kafka's source at each release's tag (each row's ``where``); what the
running releases do byte for byte is the live-broker suite's to check.  Here: that the rules follow the
rows, and that the 3.9 and 4.4 lines are what they were (test_kafka_lines.py)."""
from __future__ import annotations

import pytest

from broker_helpers import NOW, R, build
from kafkafmt import kafka_lines
from kafkafmt.broker.fetch import fetch
from kafkafmt.broker.validator import validate_messages_and_assign_offsets as validate
from kafkafmt.cli import main, make_parser
from kafkafmt.config import BrokerConfig, LogConfig, topic_keys
from kafkafmt.errors import ConfigError, UnsupportedVersionError
from kafkafmt.records import MemoryRecords
from kafkafmt.records.dump_log import dump_log


def _topic(line, **kw):
    return LogConfig(broker=BrokerConfig(kafka_line=line), **kw)


# ------------------------------------------------------------------------------------- the table
def test_lines_are_compared_by_order():
    assert kafka_lines.KAFKA_LINES == tuple(sorted(kafka_lines.KAFKA_LINES, key=kafka_lines.order))
    assert kafka_lines.order("0.10.1") > kafka_lines.order("0.9") and kafka_lines.order("0.11") == (0, 11, 0)
    assert [kafka_lines.check_line(v) for v in ("0.9.0.1", "0.10.0.1", "0.10.2.2", "0.11.0.3", "1.1.1", "2.8.2",
                                                "4.4.0")] == ["0.9", "0.10.0", "0.10.2", "0.11", "1.1", "2.8", "4.4"]
    with pytest.raises(ConfigError, match=r"^unknown Kafka line '0\.10': kafkafmt models 0\.9, 0\.10\.0, 0\.10\.1, "
                                          r"0\.10\.2, 0\.11, 1\.0, 1\.1, 2\.0, 2\.1, 2\.8, 3\.9, 4\.4$"):
        kafka_lines.check_line("0.10")


def test_each_keys_rows_chain_oldest_first():
    for key in {c.key for c in kafka_lines.CHANGES}:
        rows = kafka_lines.rows(key)
        for a, b in zip(rows, rows[1:]):
            assert kafka_lines.order(a.since) < kafka_lines.order(b.since) and a.after == b.before, (a, b)
        for line in kafka_lines.KAFKA_LINES:
            in_effect = [r for r in rows if kafka_lines.line_at_least(line, r.since)]
            assert kafka_lines.value(key, line) == (in_effect[-1].after if in_effect else rows[0].before)


@pytest.mark.parametrize("key, values", [
    # formats (Message.CurrentMagicValue 0.9.0.1 / 0.10.0.1, DefaultRecordBatch 0.11.0.2)
    ("produce.max_magic", {"0.9": 0, "0.10.0": 1, "0.10.2": 1, "0.11": 2, "4.4": 2}),
    # request versions (Protocol.java / the request JSON schemas at each tag)
    ("produce.max_version", {"0.9": 1, "0.10.0": 2, "0.10.2": 2, "0.11": 3, "1.1": 5, "2.1": 7, "2.8": 9,
                             "3.9": 11, "4.4": 13}),
    ("fetch.max_version", {"0.9": 1, "0.10.0": 2, "0.10.1": 3, "0.11": 5, "1.1": 7, "2.0": 8, "2.1": 10,
                           "2.8": 12, "3.9": 17, "4.4": 18}),
    ("protocol.api_versions", {"0.9": False, "0.10.0": True}),                   # KIP-35
    ("log.time_index", {"0.10.0": False, "0.10.1": True, "4.4": True}),         # KIP-33
    ("fetch.down_conversion", {"0.9": False, "0.10.0": True, "3.9": True, "4.4": False}),
    ("fetch.down_conversion_mode", {"1.1": "eager", "2.0": "lazy"}),            # KIP-283
    ("produce.zstd", {"2.0": False, "2.1": True}),                              # KIP-110
    ("produce.timestamp_bounds", {"2.8": "difference.max.ms", "3.9": "before/after.max.ms"}),  # KIP-937
    ("cleaner.legacy_to_v2", {"2.8": False, "3.9": False, "4.4": True}),        # KAFKA-13093
    ("log.leader_epoch_cache", {"0.10.2": "none", "0.11": "always", "2.0": "always", "2.1": "v2 only"}),
    ("cleaner.delete_horizon", {"0.11": False, "2.8": False, "3.9": True}),  # KIP-534 (3.1)
    ("cleaner.map_reach", {"0.9": "whole segments", "0.10.0": "fully mapped segments",  # KAFKA-3587
                           "0.10.1": "record that fills the map", "3.9": "record that fills the map"}),  # KAFKA-3894
])
def test_the_rows_say_what_each_release_did(key, values):
    assert {line: kafka_lines.value(key, line) for line in values} == values


def test_rows_between_two_lines():
    keys = {c.key for c in kafka_lines.rows_between("0.10.0", "0.10.1")}
    assert keys == {"log.time_index", "log.retention_time", "log.roll_time", "dump.format", "fetch.max_version",
                    "cleaner.map_reach", "cleaner.legacy_rebuild_magic", "topic.added.min.compaction.lag.ms",
                    "topic.added.leader.replication.throttled.replicas",
                    "topic.added.follower.replication.throttled.replicas"}
    assert kafka_lines.rows_between("4.4", "3.9") == kafka_lines.rows_between("3.9", "4.4")


def test_topic_keys_per_line():
    names = {line: {k.name for k in topic_keys(line)} for line in ("0.9", "0.10.0", "2.0", "3.6", "3.9")
             if line in kafka_lines.KAFKA_LINES}
    assert "message.format.version" not in names["0.9"] and "message.format.version" in names["0.10.0"]
    assert "message.downconversion.enable" in names["2.0"] and "max.compaction.lag.ms" not in names["2.0"]
    assert "message.timestamp.after.max.ms" in names["3.9"]
    with pytest.raises(ConfigError, match=r"message.timestamp.after.max.ms \(added in Kafka 3.6 by KIP-937; "
                                          r"Kafka line 2.8\)"):
        LogConfig.from_properties({"message.timestamp.after.max.ms": "1000"}, broker=BrokerConfig(kafka_line="2.8"))
    with pytest.raises(ConfigError, match="compression.type: String must be one of: uncompressed, lz4, snappy"):
        LogConfig.from_properties({"compression.type": "zstd"}, broker=BrokerConfig(kafka_line="2.0"))


def test_broker_defaults_follow_the_line():
    assert [BrokerConfig(kafka_line=ln).inter_broker_protocol_version for ln in ("0.9", "0.10.1", "0.11", "2.8", "3.9")] \
        == ["0.9.0", "0.10.1-IV2", "0.11.0-IV2", "2.8", "2.8"]  # ApiVersion.latestVersion; kafkafmt's 2.8 after
    assert _topic("0.10.2").message_format_version == "0.10.2-IV0"  # log.message.format.version = the IBP (KIP-32)
    assert [_topic(ln).to_magic for ln in ("0.9", "0.10.0", "0.10.2", "0.11", "3.9", "4.4")] == [0, 1, 1, 2, 2, 2]
    with pytest.raises(ConfigError, match=r"Version 0.11.0 is not a valid version \(Kafka 0.10.2 knows versions up to"):
        _topic("0.10.2", message_format_version="0.11.0")
    with pytest.raises(ConfigError, match="inter.broker.protocol.version: Version 2.8 is not a valid version"):
        BrokerConfig(kafka_line="1.1", inter_broker_protocol_version="2.8")
    assert BrokerConfig().replace(kafka_line="0.10.0").inter_broker_protocol_version == "0.10.0-IV1"


# ------------------------------------------------------------------------------ the rules read the rows
@pytest.fixture
def consulted(monkeypatch):
    """The row keys the rules consult (every lookup goes through ``kafka_lines.row``)."""
    seen = []
    real = kafka_lines.row

    def row(key, line):
        seen.append(key)
        return real(key, line)
    monkeypatch.setattr(kafka_lines, "row", row)
    return seen


def test_the_validator_reads_the_rows(consulted):
    v1 = build([R(NOW, b"k", b"v")], magic=1)
    with pytest.raises(UnsupportedVersionError, match=r"message format v1 is not known to Kafka 0.9 \(newest v0; "
                                                      r"v1 came in 0.10.0 with KIP-32\)"):
        validate(v1, _topic("0.9"), now=NOW)
    assert "produce.max_magic" in consulted
    res = validate(build([R(-1, b"k", b"v")], magic=0), _topic("0.9"), now=NOW, produce_version=1)
    assert res.to_magic == 0 and "produce.record_version" in kafka_lines.rows_applied(res.trace)
    with pytest.raises(UnsupportedVersionError, match=r"Produce v3 is not known to Kafka 0.10.2 \(newest v2\)"):
        validate(build([R(NOW, b"k", b"v")]), _topic("0.10.2"), now=NOW, produce_version=3)
    assert validate(v1, _topic("0.10.2"), now=NOW, produce_version=2).to_magic == 1
    assert {"produce.max_version", "produce.min_version", "produce.record_version"} <= set(consulted)


def test_fetch_reads_the_rows(consulted):
    v1_log = b"".join(build([R(NOW + i, b"k%d" % i, b"v" * 40)], magic=1, base_offset=i) for i in range(3))
    res = fetch(v1_log, topic_config=_topic("0.10.1"))
    assert res.fetch_version == 3 and res.zero_copy  # the newest the line answers (KIP-74)
    res = fetch(v1_log, topic_config=_topic("0.10.1"), fetch_version=4)
    assert res.connection_closed and kafka_lines.rows_applied(res.trace) == ["fetch.max_version"]
    eager = fetch(v1_log, topic_config=_topic("1.1"), fetch_version=1)
    lazy = fetch(v1_log, topic_config=_topic("2.0"), fetch_version=1)
    assert eager.records == lazy.records and {b.magic for b in MemoryRecords(eager.records).batches()} == {0}
    assert eager.wire_size == len(eager.records)  # no chunks, no overflow batch: what was converted is sent
    assert "fetch.down_conversion_mode" in kafka_lines.rows_applied(eager.trace)
    assert "fetch.down_conversion_mode" not in kafka_lines.rows_applied(lazy.trace)
    assert fetch(v1_log, topic_config=_topic("0.9"), fetch_version=0).zero_copy  # one format, nothing converted
    assert {"fetch.max_version", "fetch.down_conversion", "fetch.down_conversion_mode"} <= set(consulted)


def test_dump_reads_the_row():
    data = build([R(NOW, b"k", b"v")], magic=1)
    lines = {ln: [x for x in dump_log(data, filename="x.log", deep=True, kafka_line=ln).stdout if x.startswith("|")]
             for ln in ("0.10.2", "3.9", "4.4")}
    assert lines["3.9"][0].endswith("}") and not lines["4.4"][0].endswith("}")
    # 0.10.2's DumpLogSegments prints one line per message, no batch line, no '|' (row dump.format)
    old = dump_log(data, filename="x.log", deep=True, kafka_line="0.10.2").stdout
    assert lines["0.10.2"] == [] and len(old) == 1 and old[0].startswith("offset: 0 position: 0 CreateTime: ")


# ------------------------------------------------------------------------------------- the CLI
VERBS = (["dump", "x"], ["clean", "x"], ["audit", "x"], ["explain", "produce", "x"], ["explain", "fetch", "x"],
         ["gen"])


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_one_flag_on_every_verb_that_depends_on_the_release(verb):
    args = make_parser(verb[0]).parse_args([*verb, "--kafka-line", "0.10.2.2"])
    assert args.kafka_line == "0.10.2.2"


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_an_unknown_line_is_one_clear_line(verb, capsys):
    assert main([*verb, "--kafka-line", "5.0"]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines() == ["kafkafmt: error: ConfigError: unknown Kafka line '5.0': kafkafmt models "
                                + ", ".join(kafka_lines.KAFKA_LINES)] and out == ""


@pytest.mark.parametrize("old", [["dump", "x", "--kafka-version", "4.4"], ["audit", "x", "--target", "4.4"]])
def test_the_old_spellings_are_gone(old, capsys):
    with pytest.raises(SystemExit):
        make_parser(old[0]).parse_args(old)
    assert "unrecognized arguments" in capsys.readouterr().err


def test_explain_on_an_old_line(tmp_path, capsys):
    f = tmp_path / "v1.bin"
    f.write_bytes(build([R(NOW, b"k", b"v")], magic=1))
    assert main(["explain", "produce", str(f), "--kafka-line", "0.9", "--now", str(NOW)]) == 1
    out = capsys.readouterr().out
    assert "message format v1 is not known to Kafka 0.9" in out and "produce.max_magic" in out
    assert main(["explain", "fetch", str(f), "--kafka-line", "1.1", "--fetch-version", "1"]) == 0
    out = capsys.readouterr().out
    assert "DOWN-CONVERTED to v0" in out and "converted at once before the response is sent (eager)" in out


def test_the_log_reads_the_time_index_row(tmp_path):
    """Row ``log.time_index`` (KIP-33, 0.10.1): 30 v1 records (record i: offset i, timestamp NOW + i, 95 bytes) in
    1 KB segments are three segments on both lines; only 0.10.1 writes a ``.timeindex`` beside each, holding one
    entry (the segment's largest timestamp and its offset relative to the base) written when it was rolled or
    closed (``LogSegment.close``: ``timeIndex.maybeAppend(maxTimestampSoFar, ..., skipFullCheck = true)``)."""
    import struct

    from kafkafmt.log import Log, SimulatedClock
    bases = ("00000000000000000000", "00000000000000000013", "00000000000000000026")
    for line in ("0.10.0", "0.10.1"):
        log = Log(tmp_path / line / "t-0", _topic(line, segment_bytes=1024), SimulatedClock(NOW))
        for i in range(30):
            log.append_as_leader(build([R(NOW + i, b"k%d" % i, b"v" * 40)], magic=1))
        first = log.segments[0]
        assert first.max_timestamp_so_far == NOW + 12  # kept in memory on both lines
        log.close()
        files = {p.name: p.read_bytes() for p in (tmp_path / line / "t-0").iterdir()}
        suffixes = (".index", ".log", ".timeindex") if line == "0.10.1" else (".index", ".log")
        assert sorted(files) == sorted(b + s for b in bases for s in suffixes), (line, sorted(files))
        if line == "0.10.1":
            entries = {b: [struct.unpack_from(">qi", files[b + ".timeindex"], i)
                           for i in range(0, len(files[b + ".timeindex"]), 12)] for b in bases}
            assert entries == {bases[0]: [(NOW + 12, 12)], bases[1]: [(NOW + 25, 12)], bases[2]: [(NOW + 29, 3)]}


def test_gen_writes_as_the_line(tmp_path):
    """`kafkafmt gen --kafka-line`: the broker of that line writes the logs (0.9 refuses v1 producers, 0.10.0
    writes v1 and no time index) and the manifest names the line."""
    import json
    w = tmp_path / "w.yaml"
    w.write_text("name: tiny\nseed: 1\nduration_ms: 5000\ntopics:\n  - name: t\n    partitions: 1\n"
                 "    producers:\n      - {name: p, rate: 20, magic: 1}\n")
    for line in ("0.9", "0.10.0"):
        out = tmp_path / line
        assert main(["gen", "--workload", str(w), "--out", str(out), "--jobs", "1", "--quiet", "--kafka-line", line]) == 0
        manifest = json.loads(next(out.glob("*.json")).read_text())
        assert manifest["kafka_line"] == line
        names = {p.suffix for p in (out / "t-0").iterdir()}
        assert ".timeindex" not in names
        data = (out / "t-0" / "00000000000000000000.log").read_bytes()
        magics = {b.magic for b in MemoryRecords(data).batches()}
        assert magics == (set() if line == "0.9" else {1}), (line, magics)


def test_retention_reads_the_row(tmp_path):
    """Before KIP-33 (0.10.1) retention.ms measured a segment's age from its .log mtime
    (LogManager.cleanupExpiredSegments), from 0.10.1 on from its largest record timestamp."""
    from kafkafmt.log import Log, SimulatedClock
    day = 86_400_000
    deleted = {}
    for line in ("0.10.0", "0.10.1"):
        log = Log(tmp_path / line / "t-0", _topic(line, segment_bytes=200, retention_ms=day), SimulatedClock(NOW))
        for i in range(4):  # records stamped ten days ago, written now: old by timestamp, new by mtime
            log.append_as_leader(build([R(NOW - 10 * day + i, b"k%d" % i, b"v" * 120)], magic=1))
        log.set_high_watermark(log.log_end_offset)
        deleted[line] = log.delete_old_segments()
        log.close()
    assert deleted["0.10.0"] == 0 and deleted["0.10.1"] >= 3


def test_old_down_conversion_rules_read_the_rows():
    """0.10.x merged every entry into one message set with the first entry's codec (AbstractRecords
    .toMessageFormat); 0.10.0 … 2.8 sent a slice already at or below the client's format unconverted
    (hasMatchingShallowMagic / hasCompatibleMagic, gone in 3.0 with KAFKA-12944)."""
    plain_v0 = build([R(-1, b"a", b"1")], magic=0)
    gzip_v1 = build([R(NOW, b"b", b"2"), R(NOW + 1, b"c", b"3")], magic=1, compression_="gzip", base_offset=1)
    merged = fetch(gzip_v1 + build([R(NOW, b"d", b"4")], magic=1, base_offset=3),
                   topic_config=_topic("0.10.2"), fetch_version=1)
    [batch] = list(MemoryRecords(merged.records).batches())  # one gzip v0 wrapper: the first entry's codec
    assert (batch.magic, batch.compression.name, [r.offset for r in batch.records()]) == (0, "GZIP", [1, 2, 3])
    assert "fetch.down_conversion_output" in kafka_lines.rows_applied(merged.trace)
    per_batch = fetch(gzip_v1 + build([R(NOW, b"d", b"4")], magic=1, base_offset=3), topic_config=_topic("1.1"),
                      fetch_version=1)
    assert [b.compression.name for b in MemoryRecords(per_batch.records).batches()] == ["GZIP", "NONE"]
    on28 = fetch(plain_v0, topic_config=_topic("2.8"), fetch_version=1)  # a v1 topic, a v0 slice
    on39 = fetch(plain_v0, topic_config=_topic("3.9", message_format_version="0.10.0"), fetch_version=1)
    assert on28.zero_copy and "fetch.skip_compatible" in kafka_lines.rows_applied(on28.trace)
    assert not on39.zero_copy and on39.records == plain_v0  # converted: the batch copied as it is
