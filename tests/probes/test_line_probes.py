"""The probes of the Kafka lines (kafkafmt.probes): typed outcomes, verdicts from kinds and rows (never from
the text), any two lines, and what `kafkafmt clean` says about the other lines' cleaners."""
from __future__ import annotations

from collections import Counter

import pytest

from kafkafmt import kafka_lines
from kafkafmt.line_verdicts import Outcome, OutcomeKind, Verdict, verdict
from kafkafmt.probes import cleaner_line_notes, explain_on_lines, partition_magics, seed_outcomes


def test_outcomes_are_typed():
    done, refused = Outcome.done("stored as v2 (in place)"), Outcome.refused("UnsupportedVersionException")
    assert (done.kind, refused.kind) == (OutcomeKind.DONE, OutcomeKind.REFUSED)
    assert refused.is_refused and not done.is_refused and refused.refused_by == "broker"
    assert str(refused) == "refused: UnsupportedVersionException"
    by_producer = Outcome.refused("IllegalArgumentException", by="producer")
    assert by_producer.is_refused and by_producer.text == "refused by the producer: IllegalArgumentException"


def test_verdict_reads_kinds_and_rows_not_text():
    kept = verdict(Outcome.done("stored as v2"), Outcome.done("stored as v2"))
    removed = verdict(Outcome.done("stored as v1"), Outcome.refused("X"), ("produce.min_version",))
    bound = verdict(Outcome.done("accepted"), Outcome.refused("X"), ("topic.check.segment.bytes",))
    changed = verdict(Outcome.refused("A"), Outcome.done("stored as v2"), ("produce.record_version",))
    assert (kept, removed, bound, changed) == (Verdict.KEPT, Verdict.REMOVED, Verdict.CHANGED, Verdict.CHANGED)
    # a text that merely looks like a refusal is not one
    assert verdict(Outcome.done("refused: A"), Outcome.done("refused: B"), ("produce.min_version",)) == \
        Verdict.CHANGED
    # what the older line lacked altogether (row value False there) and the newer one does: added
    assert verdict(Outcome.refused("no such thing"), Outcome.done("indexed"), ("log.time_index",), "0.10.0") == \
        Verdict.ADDED
    assert verdict(Outcome.refused("no such thing"), Outcome.done("indexed"), ("log.time_index",), "0.10.1") == \
        Verdict.CHANGED


def _row(rows, start):
    (r,) = [r for r in rows if r["behaviour"].startswith(start)]
    return r


def test_probes_compare_any_two_lines():
    rows = seed_outcomes("001", older="0.10.0", newer="0.10.1")
    ti = _row(rows, "the time index")
    assert ti["older"] == Outcome.done("no time index (it came in 0.10.1 with KIP-33)")
    assert " entries, sha256 " in ti["newer"].text and ti["verdict"] is Verdict.CHANGED
    assert [c.key for c in ti["rows"]] == ["log.time_index"]
    # 0.9 → 0.10.0: a 0.10 producer's v1 messages (Produce v2) were not answered by 0.9 (KIP-32 came in 0.10.0)
    r = _row(seed_outcomes("000", older="0.9", newer="0.10.0"), "a 0.10 producer")
    assert r["older"] == Outcome.refused("UnsupportedVersionException") and r["newer"].text == "stored as v1 (in place)"
    # 0.10.2 → 0.11: 0.10.2 reads an idempotent v2 batch (in Produce v2, its newest) as a legacy message whose CRC
    # fails (CORRUPT_MESSAGE, as 0.10.2.2 answered kafka-python 0.11 live); 0.11 refuses it for a v1 topic (KIP-98)
    r = _row(seed_outcomes("003", older="0.10.2", newer="0.11"), "an idempotent")
    assert (r["older"].text, r["newer"].text) == ("refused: CorruptRecordException",
                                                  "refused: UnsupportedForMessageFormatException")
    with pytest.raises(Exception, match="unknown Kafka line '5.1'"):
        seed_outcomes(older="5.1")


def test_explain_on_lines_any_lines():
    d = explain_on_lines("fetch", "0.9", lines=("0.10.0", "1.1", "2.0", "4.4"))
    assert d["lines"] == ["0.10.0", "1.1", "2.0", "4.4"]
    assert "fetch.down_conversion_mode" in d["1.1"]["rows"]  # eager before KIP-283
    assert "fetch.down_conversion_mode" not in d["2.0"]["rows"]
    assert d["1.1"]["outcome"] == d["2.0"]["outcome"] == "↓ converted to v0, 7 records read"
    assert d["4.4"]["outcome"].startswith("✗ no response")


def test_cleaner_line_notes_name_the_rows_for_this_data():
    legacy = cleaner_line_notes("3.9", Counter({1: 12, 2: 3}))
    assert legacy[0] == ("on Kafka 4.4: the 12 v0/v1 batch(es) here are rewritten as v2 batches "
                         "(cleaner.legacy_to_v2: KAFKA-13093)")
    assert any(n.startswith("on Kafka 0.9 … 2.8: an emptied batch is removed") for n in legacy)
    only_v2 = cleaner_line_notes("3.9", Counter({2: 3}))
    assert not any("v0/v1" in n for n in only_v2)  # nothing to rewrite: not mentioned
    on44 = cleaner_line_notes("4.4", Counter({0: 2}))
    assert on44[0] == "on Kafka 0.9 … 3.9: the 2 v0/v1 batch(es) here are kept as v0/v1 (cleaner.legacy_to_v2: KAFKA-13093)"
    assert all(kafka_lines.change(n.split("(")[-1].split(":")[0]) for n in on44)


def test_partition_magics_reads_the_segments(tmp_path):
    from kafkafmt.config import BrokerConfig, LogConfig
    from kafkafmt.log import Log, SimulatedClock
    from kafkafmt.records.sample_sets import build, sample_records
    log = Log(tmp_path / "t-0", LogConfig(broker=BrokerConfig(), message_format_version="0.10.0"),
              SimulatedClock(1_700_000_000_000))
    for i in range(3):
        log.append_as_follower(build(1, "none", sample_records(2, seed=i), base_offset=2 * i))
    log.append_as_follower(build(2, "none", sample_records(2, seed=9), base_offset=6))
    log.close()
    assert partition_magics(tmp_path / "t-0") == Counter({1: 6, 2: 1})
