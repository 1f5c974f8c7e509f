"""kafkafmt.audit on the mixed sample: its counts against a full decode with the pure-Python readers, its
retention prediction against kafkafmt's retention (Kafka's deleteOldSegments), its read-only promise,
the client generations, the topic settings and the errors."""
from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from kafkafmt import kafka_lines
from kafkafmt.audit import audit_log_dirs, parse_topic_options
from kafkafmt.constants import NO_TIMESTAMP
from kafkafmt.errors import ConfigError, CorruptRecordError, NoSuchFileError
from kafkafmt.gen.workload_file import log_config
from kafkafmt.log import Log, SimulatedClock
from kafkafmt.log.readonly import file_states
from kafkafmt.records import MemoryRecords
from mixed_sample import MIXED, START_MS

HOUR = 3600000


def _full_decode(partition_dir: Path) -> dict:
    """Every record of every segment decoded with MemoryRecords (the reference readers), counted here."""
    magics: dict[str, Counter] = {}
    ts_types, no_ts = Counter(), 0
    legacy_offsets = []
    for seg in sorted(partition_dir.glob("*.log")):
        for b in MemoryRecords(seg.read_bytes()).batches():
            c = magics.setdefault(f"v{b.magic}", Counter())
            c["batches"] += 1
            c["bytes"] += b.size_in_bytes
            c["codec:" + b.compression.kafka_name] += 1
            for r in b.records():
                c["records"] += 1
                ts_types[r.timestamp_type.kafka_name] += 1
                no_ts += r.timestamp == NO_TIMESTAMP
                if b.magic < 2:
                    legacy_offsets.append(r.offset)
    return {"magics": magics, "ts_types": dict(ts_types), "no_ts": no_ts, "legacy_offsets": legacy_offsets}


def _as_counter(m: dict) -> Counter:
    return Counter({"batches": m["batches"], "records": m["records"], "bytes": m["bytes"],
                    **{f"codec:{k}": v for k, v in m["codecs"].items()}})


def test_counts_equal_a_full_decode(mixed):
    report = audit_log_dirs(mixed, now_ms=START_MS).to_dict()
    assert {(p["topic"], p["partition"]) for p in report["partitions"]} == {
        ("accounts", 0), ("accounts", 1), ("clicks", 0), ("modern", 0)}
    seen_magics = set()
    for p in report["partitions"]:
        ref = _full_decode(Path(p["dir"]))
        assert {k: _as_counter(v) for k, v in p["magics"].items()} == ref["magics"], p["dir"]
        assert p["timestamp_types"] == ref["ts_types"]
        assert p["records_without_timestamp"] == ref["no_ts"]
        legacy = sum((ref["magics"].get(k, Counter()) for k in ("v0", "v1")), Counter())
        assert (p["legacy"]["batches"], p["legacy"]["records"], p["legacy"]["bytes"]) == \
            (legacy["batches"], legacy["records"], legacy["bytes"])
        if ref["legacy_offsets"]:
            assert (p["legacy"]["first_offset"], p["legacy"]["last_offset"]) == \
                (min(ref["legacy_offsets"]), max(ref["legacy_offsets"]))
        seen_magics |= set(ref["magics"])
    # the sample has what it claims: every magic, compressed and plain legacy entries, v0 without timestamps
    assert seen_magics == {"v0", "v1", "v2"}
    acc = next(p for p in report["partitions"] if p["topic"] == "accounts")
    assert acc["magics"]["v0"]["codecs"].keys() == {"gzip", "none"} == acc["magics"]["v1"]["codecs"].keys()
    assert acc["records_without_timestamp"] == acc["magics"]["v0"]["records"] > 0
    clicks = next(p for p in report["partitions"] if p["topic"] == "clicks")
    assert clicks["timestamp_types"].keys() == {"LogAppendTime"}
    totals = report["totals"]["magics"]
    assert sum(t["records"] for t in totals.values()) == sum(
        m["records"] for p in report["partitions"] for m in p["magics"].values())


def test_reading_changes_no_file(mixed):
    dirs = [mixed, *sorted(p for p in mixed.iterdir() if p.is_dir())]
    before = {d: file_states(d) for d in dirs}
    names = sorted(str(p) for p in mixed.rglob("*"))
    audit_log_dirs(mixed, now_ms=START_MS)
    audit_log_dirs(mixed / "accounts-0", target="3.9", now_ms=START_MS)
    assert {d: file_states(d) for d in dirs} == before  # sizes, digests and mtimes (ns)
    assert sorted(str(p) for p in mixed.rglob("*")) == names


def test_compacted_topic_never_ages_out_and_the_cleaner_rewrites_it(mixed):
    report = audit_log_dirs(mixed, now_ms=START_MS + 10**12)
    for p in report.partitions:
        d = p.to_dict()
        assert d["compacted"] is (p.topic == "accounts")
        assert d["config_source"] == "kafkafmt-gen.json"
        if p.topic == "accounts":
            assert d["retention"]["legacy_deleted_at_ms"] is None
            assert d["retention"]["legacy_batches_left_at_now"] == d["legacy"]["batches"] > 0
            assert d["cleaner"]["applies"] and d["legacy_status"] == "rewritten as v2 by the cleaner"
            # KAFKA-13093: the format rewrite alone makes one v2 batch per v0/v1 entry (plain message or wrapper)
            assert d["cleaner"]["rewrite_only"]["batches"] == d["cleaner"]["batches_before"] == d["legacy"]["batches"]
            assert d["cleaner"]["records"] == d["legacy"]["records"]
            # the cleaner itself (a cleaned copy) also drops the superseded keys: here every legacy record
            # has a later v2 value, so nothing of the v0/v1 data is left
            copy = d["cleaner"]["cleaned_copy"]
            assert copy["passes"] >= 1 and set(copy["magics"]) == {"v2"}
            assert d["cleaner"]["records_after"] < d["cleaner"]["records"]
    on39 = audit_log_dirs(mixed / "accounts-0", target="3.9", now_ms=START_MS).partitions[0].to_dict()
    assert not on39["cleaner"]["applies"] and on39["legacy_status"] == "kept as v0/v1 by the cleaner"
    assert on39["clients_refused"] == []


def test_retention_prediction_matches_kafkas_delete_old_segments(mixed, tmp_path):
    """The audit says when time retention removes clicks-0's last v0/v1 segment; kafkafmt's Log (checked
    against Kafka's UnifiedLog) deletes it exactly then, not a millisecond before."""
    p = audit_log_dirs(mixed / "clicks-0", now_ms=START_MS).partitions[0]
    at = p.retention()["legacy_deleted_at_ms"]
    assert at is not None and p.legacy.batches
    topic = next(t for t in MIXED["topics"] if t["name"] == "clicks")
    props = {**topic["config"], **topic["changes"][-1]["config"]}
    config = log_config(props, MIXED["broker"])
    for now, left in ((at - 1, True), (at, False)):
        copy = tmp_path / f"{now}" / "clicks-0"
        shutil.copytree(mixed / "clicks-0", copy)
        log = Log.open(copy, config, SimulatedClock(now))
        log.delete_old_segments()
        legacy_left = any(b.magic < 2 for s in log.segments for b in s.log.batches())
        log.close()
        assert legacy_left is left, now
        after = audit_log_dirs(copy, now_ms=now).partitions[0]
        assert (after.legacy.batches > 0) is left


def test_client_generations_against_the_line_rows(mixed):
    from kafkafmt.scenarios.versions import client_api_versions
    # ApiKeys of 0.8.2, 0.9, 0.10.0, 0.10.1, 0.11 and 1.0: the newest Produce / Fetch each generation sends
    assert [(g.produce_max, g.fetch_max) for g in kafka_lines.CLIENT_GENERATIONS] == \
        [(0, 0), (1, 1), (2, 2), (2, 3), (3, 5), (5, 6)]
    assert client_api_versions("0.10.2") == (2, 3) and client_api_versions("2.0") == (6, 8)  # the releases between
    clients = {c["name"]: c for c in audit_log_dirs(mixed, now_ms=0).to_dict()["clients"]}
    refused = {n for n, c in clients.items() if not c["can_fetch"]}
    assert refused == {"0.8", "0.9", "0.10.0", "0.10.1-0.10.2"}  # Fetch < v4 (KIP-896)
    assert {n for n, c in clients.items() if not c["can_produce"]} == refused  # Produce < v3 as well
    assert "KIP-724" in clients["0.11"]["reads"]
    assert all(c["can_fetch"] and c["can_produce"] for c in audit_log_dirs(mixed, "3.9", 0).to_dict()["clients"])


def test_topic_settings_from_options(mixed):
    opts = parse_topic_options(["clicks:cleanup.policy=compact,delete", "*:retention.ms=1000"], ["modern"])
    assert opts == {"clicks": {"cleanup.policy": "compact,delete"}, "*": {"retention.ms": "1000"},
                    "modern": {"cleanup.policy": "compact"}}
    by = {p.topic: p for p in audit_log_dirs(mixed, now_ms=START_MS, topic_config=opts).partitions}
    assert by["clicks"].compacted and by["clicks"].setting.source == "kafkafmt-gen.json + option"
    assert by["clicks"].setting.config.retention_ms == 1000
    assert by["clicks"].retention()["legacy_deleted_at_ms"] is not None  # compact,delete: both
    assert by["modern"].compacted and not by["accounts"].to_dict()["retention"]["segment_deleted_at_ms"]
    for bad in ("clicks", "clicks:retention.ms", ":a=b"):
        with pytest.raises(ConfigError):
            parse_topic_options([bad])
    with pytest.raises(ConfigError, match="topic clicks"):
        audit_log_dirs(mixed, now_ms=0, topic_config={"clicks": {"retention.ms": "soon"}})


def test_without_a_manifest_topics_take_kafkas_defaults(mixed, tmp_path):
    shutil.copytree(mixed / "accounts-1", tmp_path / "accounts-1")
    p = audit_log_dirs(tmp_path, now_ms=START_MS).partitions[0]
    assert p.setting.source == "default" and not p.compacted
    assert p.retention()["legacy_deleted_at_ms"] is not None  # delete, 7 days: v0 segments age by mtime


def test_bad_inputs_are_one_kafkafmt_error(mixed, tmp_path):
    with pytest.raises(NoSuchFileError):
        audit_log_dirs(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoSuchFileError, match="no <topic>-<partition>"):
        audit_log_dirs(tmp_path / "empty")
    with pytest.raises(ConfigError):
        audit_log_dirs(mixed, target="5.0")
    bad = tmp_path / "broken" / "accounts-0"
    shutil.copytree(mixed / "accounts-0", bad)
    seg = sorted(bad.glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    data[40] ^= 0xFF  # inside the first entry: its CRC no longer matches
    seg.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError, match=seg.name):
        audit_log_dirs(bad.parent, now_ms=0)


def test_progress_empty_partitions_and_a_partial_last_batch(mixed, tmp_path):
    seen = []
    audit_log_dirs(mixed, now_ms=START_MS, progress=seen.append)
    assert sum(seen) == sum(p.stat().st_size for p in mixed.glob("*/*.log")) and len(seen) > 4
    (tmp_path / "logs" / "empty-0").mkdir(parents=True)
    copy = tmp_path / "logs" / "accounts-0"
    shutil.copytree(mixed / "accounts-0", copy)
    last = sorted(copy.glob("*.log"))[-1]
    whole = last.read_bytes()
    last.write_bytes(whole + whole[:30])  # a batch cut short, as a crash mid-append leaves it: not data (Kafka's reader)
    by = {p.topic: p.to_dict() for p in audit_log_dirs(tmp_path / "logs", now_ms=START_MS).partitions}
    assert by["empty"]["segments"] == 0 and by["empty"]["magics"] == {} and by["empty"]["legacy_status"] == "no v0/v1 data"
    assert by["empty"]["next_offset"] is None and by["empty"]["retention"]["legacy_deleted_at_ms"] is None
    ref = audit_log_dirs(mixed / "accounts-0", now_ms=START_MS).partitions[0].to_dict()
    assert {k: by["accounts"][k] for k in ("magics", "legacy", "next_offset")} == \
        {k: ref[k] for k in ("magics", "legacy", "next_offset")}
