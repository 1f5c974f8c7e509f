"""The 4.4 line (``BrokerConfig(kafka_line="4.4")``, ``--kafka-line 4.4``) against Kafka 4.4.0's own classes, as the 3.9 line is
checked against 3.9.2's: LogValidator (toMagic 2, as 4.x's UnifiedLog always passes), the topic keys of
``LogConfig.configKeys()`` and their validation messages, and ``DumpLogSegments`` output.

Needs Java 17 and ``make -C conformance oracle-4.4``: skipped locally without them, a failure in CI.
"""
from __future__ import annotations

import pytest

from broker_helpers import LAT, NOW, R, build, legacy_msg, legacy_wrapper, read, source_compression, v2
from kafkafmt.broker import BrokerConfig, LogConfig
from kafkafmt.broker import validate_messages_and_assign_offsets as validate
from kafkafmt.config import ConfigError, format_value, topic_keys
from kafkafmt.constants import CompressionType
from kafkafmt.dump import dump_log
from kafkafmt.errors import KafkaFmtError
from kafkafmt.records import MemoryRecords

pytestmark = pytest.mark.java

B44 = BrokerConfig(kafka_line="4.4")
V2 = LogConfig(broker=B44)
RS = [R(NOW - 3, b"a", b"1"), R(NOW - 1, b"b", b"2"), R(NOW - 2, None, b"3")]
TS = [R(NOW - 10_000), R(NOW + 10_000), R(NOW), R(-1), R(NOW + 7_200_000)]
W3 = [legacy_msg(i, NOW - i) for i in range(3)]


def _cases():
    cases = []
    for magic in (0, 1, 2):
        for codec in ("none", "gzip", "lz4", "snappy") + (("zstd",) if magic == 2 else ()):
            for tt in ("CreateTime", "LogAppendTime"):
                for ct in ("producer", "uncompressed", "zstd"):
                    cases.append((f"m{magic}-{codec}-{tt}-{ct}", build(RS, magic=magic, compression_=codec),
                                  V2.replace(timestamp_type=tt, compression_type=ct)))
    cases += [
        ("after.max.ms default: 2 h ahead rejected", build(TS), V2),
        ("after.max.ms default, gzip", build(TS, compression_="gzip"), V2),
        ("after.max.ms default, v1 wrapper", build(TS, magic=1, compression_="gzip"), V2),
        ("before.max.ms", build(TS), V2.replace(timestamp_before_max_ms=1000)),
        ("null keys compacted", build([R(NOW, None)] * 3), V2.replace(cleanup_policy="compact")),
        ("null keys compacted v1 gzip", build([R(NOW, None)] * 3, magic=1, compression_="gzip"),
         V2.replace(cleanup_policy="compact")),
        ("inconsistent count", v2(RS, count=2), V2),
        ("two compressed v2 batches", build(RS, compression_="gzip") * 2, V2),
        ("several uncompressed v1", build(RS, magic=1) * 2, V2),
        ("several uncompressed v0", build(RS, magic=0) * 2, V2),
        ("mixed magic", build(RS, magic=0) + build(RS, magic=1), V2),
        ("transactional", v2(RS, pid=7, epoch=1, seq=0, txn=True), V2),
        ("idempotent gzip", v2(RS, pid=7, epoch=1, seq=0, compression_="gzip"), V2),
        ("KAFKA-9669 holes v1", build(RS, magic=1, compression_="gzip", offsets=[0, 2, 5]), V2),
        ("wrapper offset 0", legacy_wrapper(W3, wrapper_offset=0), V2),
        ("wrapper offset < last inner", legacy_wrapper(W3, wrapper_offset=1), V2),
        ("producer LAT wrapper", legacy_wrapper(W3, ts_type=LAT, ts=NOW - 100), V2),
        ("quirk b uncompressed", v2(RS, ts_type=LAT, max_ts=NOW - 50), V2),
        ("gzip level differs", build(RS, compression_="gzip"), V2.replace(compression_type="gzip", gzip_level=1)),
    ]
    return cases


CASES = _cases()


@pytest.mark.parametrize("name, data, cfg", CASES, ids=[c[0] for c in CASES])
def test_log_validator_matches_kafka_4_4_0(oracle44, name, data, cfg):
    src = source_compression(data)
    tgt = cfg.target_compression(src)
    assert cfg.to_magic == 2
    resp = oracle44.request(
        "validate", bytes=data, toMagic=2, sourceCompression=src.kafka_name, targetCompression=tgt.kafka_name,
        targetLevel=cfg.target_level(src), timestampType=cfg.timestamp_type.kafka_name,
        timestampBeforeMaxMs=cfg.effective_before_max_ms, timestampAfterMaxMs=cfg.effective_after_max_ms,
        partitionLeaderEpoch=5, origin="CLIENT", now=NOW, offset=100, compactedTopic=cfg.compacted)
    try:
        res = validate(data, cfg, offset=100, now=NOW, partition_leader_epoch=5, pre_checks=False)
    except KafkaFmtError as e:
        assert not resp["ok"], f"kafkafmt raised {e.kafka_exception}: {e.reason}; Kafka 4.4.0 accepted"
        assert (e.kafka_exception, e.reason) == (resp.get("invalidException") or resp["error"],
                                                 resp.get("invalidExceptionMessage") or resp["message"])
        mine = [(i, m) for _, i, m in getattr(e, "record_errors", [])]
        assert mine == [(r["batchIndex"], r["message"]) for r in resp.get("recordErrors", [])]
        assert resp["metrics"] == e.metrics
        return
    assert resp["ok"], f"Kafka 4.4.0 raised {resp.get('error')}: {resp.get('message')}; kafkafmt took {res.path}"
    theirs = bytes.fromhex(resp["validatedBytes"])
    if any(b.compression == CompressionType.SNAPPY for b in MemoryRecords(theirs).batches()):
        assert read(res.records) == read(theirs)  # snappy-java and the Python encoder pick other matches
    else:
        assert res.records.hex() == theirs.hex()
    assert (res.max_timestamp, res.next_offset, res.log_append_time_ms, res.message_size_maybe_changed) == \
           (resp["maxTimestampMs"], resp["nextOffset"], resp["logAppendTimeMs"], resp["messageSizeMaybeChanged"])
    stats = resp["recordValidationStats"]
    assert (res.stats.temporary_memory_bytes, res.stats.num_converted_records) == \
           (stats["temporaryMemoryBytes"], stats["numRecordsConverted"])
    assert res.metrics == resp["metrics"]


def _validator_text(key) -> str | None:
    c = key.check
    if c is None:
        return None
    if c[0] == "at_least":
        return f"[{c[1]},...]"
    if c[0] == "between":
        return f"[{c[1]},...,{c[2]}]"
    if c[0] in ("in", "list_in"):
        return "[" + ", ".join(c[1]) + "]"
    if c[0] == "gzip_level":
        return "[1,...,9] or -1"
    if c[0] == "throttled":
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
    return c[0]


def test_topic_keys_match_kafka_4_4_0(oracle44):
    theirs = {k["name"]: k for k in oracle44.call("configKeys")["keys"] if not k["name"].startswith("internal.")}
    mine = topic_keys("4.4")
    assert sorted(k.name for k in mine) == sorted(theirs)
    for key in mine:
        k = theirs[key.name]
        assert key.type == k["type"], key.name
        assert format_value(key, key.default) == (k["default"] or ""), key.name
        assert key.server_name == k["serverName"], key.name
        assert _validator_text(key) == k["validator"], key.name
    defaults = LogConfig(broker=B44).to_properties(defaults=True)
    assert defaults == {n: (k["default"] or "") for n, k in theirs.items()}


BAD = [{"segment.bytes": "1048575"}, {"segment.bytes": "14"}, {"message.timestamp.after.max.ms": "-1"},
       {"max.decompressed.message.bytes": "0"}, {"compression.type": "brotli"}]


@pytest.mark.parametrize("props", BAD, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_bad_values_get_kafka_4_4_0s_message(oracle44, props):
    resp = oracle44.request("validateConfig", config=props)
    assert not resp["ok"], props
    with pytest.raises(ConfigError) as e:
        LogConfig.from_properties(props, broker=B44)
    assert str(e.value) == resp["message"]


@pytest.mark.parametrize("name", ["message.format.version", "message.downconversion.enable",
                                  "message.timestamp.difference.max.ms"])
def test_removed_keys_unknown_to_kafka_4_4_0(oracle44, name):
    resp = oracle44.request("validateConfig", config={name: "1"})
    assert not resp["ok"] and name in resp["message"], resp
    with pytest.raises(ConfigError, match=rf"Unknown topic config name: {name} \(removed in Kafka 4\.0 by KIP-"):
        LogConfig.from_properties({name: "1"}, broker=B44)


def test_derived_values_match_kafka_4_4_0(oracle44):
    for props in ({}, {"message.timestamp.after.max.ms": "7", "message.timestamp.before.max.ms": "9"},
                  {"cleanup.policy": "compact,delete"}):
        k = oracle44.call("validateConfig", config=props)
        c = LogConfig.from_properties(props, broker=B44)
        assert (c.effective_before_max_ms, c.effective_after_max_ms, c.compact, c.delete, c.segment_bytes) == \
               (k["messageTimestampBeforeMaxMs"], k["messageTimestampAfterMaxMs"], k["compact"], k["delete"],
                k["segmentSize"])


def _segment() -> bytes:
    """v0, v1 (plain and gzip wrapper) and v2 entries one after the other, as an upgraded log holds them."""
    parts = [build([R(-1, b"k0", b"v0")], magic=0, base_offset=0),
             build([R(NOW, b"k1", b"v1")], magic=1, base_offset=1),
             build([R(NOW, b"k2", b"v2"), R(NOW + 1, None, b"v3")], magic=1, compression_="gzip", base_offset=2),
             build([R(NOW + 2, b"k4", b"v4")], magic=2, base_offset=4)]
    return b"".join(parts)


@pytest.mark.parametrize("flags", [["--deep-iteration"], ["--print-data-log"], []], ids=lambda f: " ".join(f) or "-")
def test_dump_log_matches_kafka_4_4_0(oracle44, tmp_path, flags):
    path = tmp_path / "00000000000000000000.log"
    data = _segment()
    path.write_bytes(data)
    resp = oracle44.call("dump", args=["--files", str(path), *flags])
    assert resp["exception"] is None and resp["status"] == 0, resp
    res = dump_log(data, filename=path.name, abspath=str(path), deep="--deep-iteration" in flags,
                   print_data="--print-data-log" in flags, start_offset=0, kafka_line="4.4")
    assert [f"Dumping {path}", *res.stdout] == resp["stdout"].splitlines()
    legacy = [ln for ln in res.stdout if "isValid:" in ln]
    assert all("}" not in ln for ln in legacy)
    if flags:
        assert legacy  # the 3.9 tool would end these lines with '}'
