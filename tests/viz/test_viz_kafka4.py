"""Notebook 10 (Kafka 4): every finding it states, and its panels driven as a reader would drive them.

The rules themselves are checked against Kafka's jars and live brokers elsewhere (tests/conformance/
test_kafka44_broker.py, tests/audit); here: that the notebook's computations apply them as stated, and
that what the notebook says about a seed is what the produce/fetch/config/log/cleaner paths return."""
import re

import pytest

from kafkafmt import kafka_lines
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.records import MemoryRecords
from kafkafmt.records.sample_sets import build, sample_records
from kafkafmt.viz import kafka4, tables


def _text(panel):
    return re.sub(r"<[^>]+>", "", panel.caption_html)


def _probe(seed, start):
    (row,) = [r for r in kafka4.seed_outcomes(seed) if r["behaviour"].startswith(start)]
    return row


# ------------------------------------------------------------------------------------------- rows
def test_line_rows_are_the_kafka_lines_rows_between_39_and_44():
    rows = kafka4.line_rows()
    assert [r["key"] for r in rows] == [c.key for c in kafka_lines.rows_between("3.9", "4.4")]
    assert "log.time_index" not in {r["key"] for r in rows}  # a 0.10.1 row: the same on both lines
    fetch_min = next(r for r in rows if r["key"] == "fetch.min_version")
    assert (fetch_min["3.9"], fetch_min["4.4"], fetch_min["source"]) == ("0", "4", "KIP-896")
    after = next(r for r in rows if r["key"] == "topic.default.message.timestamp.after.max.ms")
    assert (after["3.9"], after["4.4"]) == ("Long.MAX_VALUE", "3600000")
    assert all(r["area"] == "cleaner" for r in kafka4.line_rows("cleaner"))


# ------------------------------------------------------------------------------------------ seeds
def test_the_finding_counts():
    assert kafka4.verdict_counts() == {"000": {"kept": 2, "changed": 1, "removed": 3},
                                       "001": {"kept": 1, "changed": 1, "removed": 1},
                                       "002": {"kept": 2, "changed": 0, "removed": 0},
                                       "003": {"kept": 0, "changed": 1, "removed": 0},
                                       "004": {"kept": 0, "changed": 1, "removed": 2}}


def test_every_difference_names_a_row_and_nothing_kept_does():
    for r in kafka4.seed_outcomes():
        if r["verdict"] == "kept":
            assert r["why (kafka_lines)"] == "-" and r["Kafka 3.9"] == r["Kafka 4.4"]
        else:
            keys = re.findall(r"([a-z0-9_.]+) \(", r["why (kafka_lines)"])
            assert keys and all(kafka_lines.change(k) for k in keys), r


def test_seed000_old_produce_and_fetch_are_gone_the_bytes_stay():
    assert _probe("000", "a 0.10 producer") == {**_probe("000", "a 0.10 producer"), "Kafka 3.9": "stored as v1 (in place)",
                                                 "Kafka 4.4": "refused: UnsupportedVersionException"}
    old = _probe("000", "a 0.9 consumer")
    assert old["Kafka 3.9"] == "down-converted to v0: 7 records in v0"
    assert old["Kafka 4.4"] == "refused: UNSUPPORTED_VERSION, the broker closes the connection"
    current = _probe("000", "a current consumer")
    assert current["Kafka 3.9"] == current["Kafka 4.4"] == "zero-copy: 7 records in v0+v1+v2"
    future = _probe("000", "a record 2 h ahead")
    assert (future["Kafka 3.9"], future["Kafka 4.4"], future["verdict"]) == (
        "stored as v2 (in place)", "refused: InvalidTimestampException", "changed")  # KIP-1030's 1 h default
    assert _probe("000", "topic key message.format.version")["Kafka 4.4"] == "refused: ConfigError"


def test_seed001_time_index_bytes_are_identical_list_offsets_v0_is_gone():
    ti = _probe("001", "the time index")
    assert ti["verdict"] == "kept" and ti["Kafka 3.9"].startswith("11 entries")  # 12 batches: none before the first
    assert _probe("001", "ListOffsets v0")["Kafka 4.4"] == "refused: UnsupportedVersionException (oldest v1)"
    assert _probe("001", "segment.bytes=2000")["verdict"] == "changed"


def test_seed002_negative_timestamps_mean_what_they_meant():
    assert _probe("002", "a v2 record with timestamp -1")["verdict"] == "kept"
    assert _probe("002", "a producer asked")["Kafka 4.4"] == "refused by the producer: IllegalArgumentException"


def test_seed003_the_idempotent_old_format_case_cannot_arise_on_44():
    r = _probe("003", "an idempotent v2 batch")
    assert (r["Kafka 3.9"], r["Kafka 4.4"]) == ("refused: UnsupportedForMessageFormatException", "stored as v2 (in place)")


def test_seed004_wrappers_the_cleaner_rewrites():
    r = _probe("004", "the cleaner meets")
    v1 = build(1, "gzip", sample_records(5, seed=4))
    assert r["Kafka 3.9"] == f"kept as v1 ({len(v1)} bytes)"
    assert r["Kafka 4.4"] == f"rewritten as v2 ({len(kafka4.rewrite(v1))} bytes)"
    assert "recompression" in _probe("004", "a 0.9 consumer")["Kafka 3.9"]


def test_seed_outcomes_rejects_an_unknown_seed():
    with pytest.raises(ValueError):
        kafka4.seed_outcomes("005")


# ---------------------------------------------------------------------------------------- explain
def test_explain_both_0_10_consumer():
    d = kafka4.explain_both("fetch", "0.10.0", "3.0")
    assert d["version"] == 2
    assert d["3.9"]["outcome"] == "↓ converted to v1, 7 records read"
    assert d["4.4"]["outcome"] == "✗ no response, connection closed (UNSUPPORTED_VERSION)"
    assert d["4.4"]["rows"] == ["fetch.min_version"] and not d["3.9"]["rows"]
    assert any(s["row"] == "fetch.min_version" for s in d["4.4"]["steps"])


def test_explain_both_produce_by_generation():
    for gen in ("0.8", "0.9", "0.10.0", "0.10.1-0.10.2"):
        assert kafka4.explain_both("produce", gen)["4.4"]["outcome"] == "✗ rejected: UnsupportedVersionException"
    d = kafka4.explain_both("produce", "0.11", "0.10.0")
    assert d["3.9"]["outcome"].startswith("✓ appended as v1 (converted")  # IBP 2.8 honours the topic's format
    assert d["4.4"]["outcome"] == "✓ appended as v2 (in place)"
    with pytest.raises(ValueError):
        kafka4.explain_both("metadata")


# --------------------------------------------------------------------------------------- scenario
def test_upgrade_steps_after_the_roll():
    assert kafka4.upgrade_steps() == 8
    closed = kafka4.upgrade_step(6)
    (hop,) = closed["hops"]
    assert hop["error"].startswith("UNSUPPORTED_VERSION") and hop["records"] == 0
    current = kafka4.upgrade_step(7)
    assert [h["conversion"] for h in current["hops"]] == ["zero-copy", "zero-copy"]
    assert [h["records"] for h in current["hops"]] == [7, 7]
    with pytest.raises(ValueError):
        kafka4.upgrade_step(9)


# ---------------------------------------------------------------------------------------- cleaner
@pytest.mark.parametrize("magic,codec,n", [(1, "gzip", 3), (1, "none", 3), (0, "none", 2), (0, "snappy", 4)])
def test_cleaner_rewrite_keeps_every_record_as_v2(magic, codec, n):
    d = kafka4.cleaner_rewrite(magic, codec, n)
    before, after = list(MemoryRecords(d["before"]).batches()), list(MemoryRecords(d["after"]).batches())
    assert len(after) == d["batches_after"] == (1 if codec != "none" else n) and d["entries_before"] == len(before)
    assert all(b.magic == 2 and b.compression == CompressionType.from_name(codec) for b in after)
    old = [(r.offset, r.key, r.value) for b in before for r in b.records()]
    new = [(r.offset, r.key, r.value) for b in after for r in b.records()]
    assert old == new
    if magic == 0:  # v0 has no timestamp: CreateTime with -1
        assert all(b.timestamp_type == TimestampType.CREATE_TIME for b in after)
        assert {r.timestamp for b in after for r in b.records()} == {-1}
    if codec == "none":  # each plain message pays a v2 batch header
        assert len(d["after"]) > len(d["before"])


def test_cleaner_rewrite_matches_kafka_44():
    from audit.test_legacy_to_v2 import _kafka44  # Kafka 4.4.0's MemoryRecords.filterTo (skips without its jars)
    cases = [kafka4.cleaner_rewrite(m, "none", 3) for m in (0, 1)]
    assert _kafka44([(d["before"], []) for d in cases]) == [d["after"] for d in cases]


def test_cleaner_rewrite_takes_only_old_formats():
    with pytest.raises(ValueError):
        kafka4.cleaner_rewrite(2)


# ------------------------------------------------------------------------------------------ audit
@pytest.fixture(scope="module")
def report():
    return kafka4.sample_audit("4.4")


def test_sample_audit_finding(report):
    f = kafka4.audit_finding(report)
    assert (f["legacy_partitions"], f["partitions"]) == (3, 6)
    v1 = sum(b.size_in_bytes for p in report.partitions for s in p.segments for b in _batches(s.path) if b.magic == 1)
    assert f["legacy_bytes"] == v1 and 0.3 < f["legacy_share"] < 0.4
    assert f["clients_refused"] == ["0.8", "0.9", "0.10.0", "0.10.1-0.10.2"]
    assert f["cleaner_bytes_before"] == 0  # nothing compacted in the sample: retention removes the v1 data
    assert kafka4.legacy_deleted_at(report) == max(p.retention()["legacy_deleted_at_ms"] for p in report.partitions
                                                   if p.legacy.batches)
    assert kafka4.legacy_deleted_at(kafka4.sample_audit("4.4", ("clicks",))) is None


def _batches(path):
    return list(MemoryRecords(open(path, "rb").read()).batches())


def test_sample_audit_compacted_cleaner_bytes_are_the_rewrite(report):
    """The format rewrite alone is each old batch rewritten as v2; cleaning the copy (superseded keys
    dropped too) leaves no more than that."""
    compacted = kafka4.sample_audit("4.4", ("clicks",))
    (p,) = [p for p in compacted.partitions if (p.topic, p.partition) == ("clicks", 0)]
    legacy = [b for s in p.segments for b in _batches(s.path) if b.magic < 2]
    assert p.cleaner()["applies"]
    assert p.cleaner()["rewrite_only"]["bytes"] == sum(len(kafka4.rewrite(bytes(b.raw))) for b in legacy)
    assert 0 < p.cleaner()["bytes_after"] < p.cleaner()["rewrite_only"]["bytes"]
    rows = {r["partition"]: r for r in kafka4.audit_rows(compacted)}
    assert rows["clicks-0"]["v0/v1 bytes after the cleaner"] == p.cleaner()["bytes_after"]
    assert rows["audit-0"]["v0/v1 bytes after the cleaner"] is None
    assert kafka4.sample_audit("3.9", ("clicks",)).to_dict()["partitions"][2]["cleaner"]["applies"] is False


def test_audit_rows_add_up_to_the_totals(report):
    rows = kafka4.audit_rows(report)
    totals = report.totals()["magics"]
    assert sum(r["v1 bytes"] for r in rows) == totals["v1"]["bytes"]
    assert sum(r["v2 bytes"] for r in rows) == totals["v2"]["bytes"]


# ----------------------------------------------------------------------------------------- panels
def test_seeds_panel_filters_by_seed():
    p = kafka4.seeds_panel()
    assert len(p.data) == 15 and _text(p).startswith("every seed: of 15 behaviours")
    p.set(seed="003")
    assert [r["seed"] for r in p.data] == ["003"] and "changed 1" in _text(p)
    assert "⚠ changed" in p.view.value


def test_explain_panel_redraws_both_traces():
    p = kafka4.explain_panel()
    assert "Kafka 4.4:</b> ✗ no response" in p.caption_html and "fetch.min_version (KIP-896)" in _text(p)
    p.set(client="1.0 and later")
    assert p.data["3.9"]["outcome"] == p.data["4.4"]["outcome"] == "✓ zero-copy, 7 records read"
    p.set(request="produce")
    assert p.error is None and p.data["4.4"]["outcome"] == "✓ appended as v2 (in place)"
    assert p.view.value.count("<table class='kf-table'") == 2


def test_upgrade_panel_opens_on_the_refused_consumer():
    p = kafka4.upgrade_panel()
    assert p.values["step"] == 6 and p.controls["step"].max == 8
    assert _text(p).startswith("Step 6 of 8") and "1 with an error" in _text(p)


def test_cleaner_panel_caption_counts_the_bytes():
    p = kafka4.cleaner_panel()
    b, a = len(p.data["before"]), len(p.data["after"])
    assert a < b  # the notebook's word: a compressed wrapper shrinks a little
    assert _text(p).startswith(f"1 v1 compressed wrapper(s), {b} bytes → 1 v2 batch(es), {a} bytes")
    p.set(codec="none", records=4)
    assert p.data["batches_after"] == 4 and "+" in _text(p)
    assert p.view.value.count("kf-bytes-title") == 2


def test_audit_panel_target_and_compaction():
    p = kafka4.audit_panel()
    assert "Client generations a Kafka 4.4 broker refuses: 0.8, 0.9, 0.10.0, 0.10.1-0.10.2" in _text(p)
    assert "only retention removes it" in _text(p)
    p.set(compacted="clicks")
    f = kafka4.audit_finding(p.data)
    assert f"as {tables.size(f['cleaner_bytes_after'])} of v2" in _text(p)
    p.set(target="3.9")
    assert "refuses: none" in _text(p) and "The Kafka 3.9 cleaner keeps" in _text(p) and "KAFKA-13093" in _text(p)


def test_the_notebooks_audit_is_kafkafmt_audit(tmp_path):
    """The notebook's target toggle and compacted-topic control are `kafkafmt audit`'s --target and -c: the
    CLI's JSON Lines over the sample logs are the panel's partitions, object for object."""
    import json

    from kafkafmt.cli import main
    out = tmp_path / "audit.jsonl"
    args = ["audit", str(kafka4.sample_logs()), "--kafka-line", "4.4", "--now-ms", str(kafka4.sample_now_ms()),
            "-c", "clicks:cleanup.policy=compact", "--format", "json", "-o", str(out), "--quiet"]
    assert main(args) == 0
    got = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    expected = kafka4.sample_audit("4.4", ("clicks",)).to_dict()["partitions"]
    assert {g.pop("now_ms") for g in got} == {kafka4.sample_now_ms()}
    assert got == expected
