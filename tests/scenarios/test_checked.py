"""kafkafmt.scenarios.checked: the labels a page shows beside a modelled outcome, read from a live-run record.

Two records: a small fixture written here (every kind of verdict: checked, a release that did otherwise with
its bytes, a step after a refusal, a scenario that cannot run live, a bad file), and the committed record of
the last live run (``kafkafmt/scenarios/record/last-live-run.json``), whose facts were measured on real brokers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkafmt.scenarios import load_scenario
from kafkafmt.scenarios.checked import LiveRecord, RecordError, load_record, seed_vs_release

COMMITTED = Path(__file__).resolve().parents[2] / "kafkafmt" / "scenarios" / "record" / "last-live-run.json"


def _check(release, check, agree, expected="0a0b", real="= expected"):
    return {"release": release, "check": check, "client": "kafkafmt raw client", "request": "Produce v2",
            "expected": expected, "real": real, "agree": agree, "detail": "" if agree else "first difference at byte 1",
            "model_rule": "assignOffsetsNonCompressed", "extra": {}}


def _row(what, agree, real="3 bytes", real_hex=""):
    r = {"what": what, "model": "3 bytes", "real": real, "agree": agree}
    if real_hex:
        r["real_hex"] = real_hex
    return r


FIXTURE = {
    "schema": 2, "recorded": "2026-11-27",
    "releases": {
        "0.10.2.2": {"checks": [_check("0.10.2.2", "produce/raw/magic1-gzip", True),
                                _check("0.10.2.2", "fetch/raw/v1", False, "0a0b", "0a0c")]},
        "0.10.0.1": {"checks": [_check("0.10.0.1", "produce/raw/magic1-gzip", True)]},
    },
    "seed000": {"cluster": "0.9.0.1+0.10.2.2", "phases": {"rollback": {"checks": [
        _check("0.9.0.1+0.10.2.2", "seed000/rollback/consume/java-0.9.0.1/p1", True,
               [{"stalls": "no record, no error"}])]}}},
    "scenarios": {
        "seed004-migration": {"status": "ran", "ok": False, "releases": {"A": "0.9.0.1→0.10.0.1"},
                              "not_run": ["3. plan 2.1: ..."], "steps": [
            {"step": 1, "name": "plan 1", "brokers": {"A": "0.9.0.1", "B": "0.9.0.1"}, "seed_vs_kafka": False,
             "rows": [_row("replica A p0", True), _row("Fetch v1 p0 from 0: the bytes returned by A", True,
                                                        real_hex="000102")]},
            {"step": 2, "name": "plan 2", "brokers": {"A": "0.10.0.1", "B": "0.9.0.1"}, "seed_vs_kafka": False,
             "rows": [_row("replica A p0", True),
                      _row("broker B bounced", False, "Kafka 0.10.0.1 refused to start: no"),
                      _row("replica B p0", False, "4 bytes", "00010203")]}]},
        "seed002-upgrade-order": {"status": "not live", "why": "broker A: kip228 is a proposal no release shipped"},
    },
    "seconds": {"releases": {}, "seed000": {}, "scenarios": {}},
}


@pytest.fixture
def rec(tmp_path) -> LiveRecord:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(FIXTURE))
    return load_record(path)


def test_a_check_the_release_confirmed_is_labelled_with_the_release(rec):
    v = rec.release_check("0.10.2.2", "produce/raw/magic1-gzip")
    assert (v.state, v.label, v.releases) == ("checked", "checked on 0.10.2.2", ("0.10.2.2",))
    assert rec.check_across("produce/raw/magic1-gzip").label == "checked on 0.10.0.1 + 0.10.2.2"


def test_a_check_the_release_did_otherwise_says_what_and_shows_the_bytes(rec):
    v = rec.release_check("0.10.2.2", "fetch/raw/v1")
    assert v.state == "differs" and v.real_bytes == b"\x0a\x0c"
    assert v.label == "0.10.2.2 did otherwise: fetch/raw/v1 on 0.10.2.2: 2 bytes (bytes 2 bytes: 0a 0c)"
    assert v.detail == "first difference at byte 1"
    assert rec.check_across("fetch/raw/v1").state == "differs"


def test_what_no_release_ran_is_said_so(rec):
    assert rec.release_check("0.11.0.3", "fetch/raw/v4").label == \
        "not run live: no check fetch/raw/v4 on 0.11.0.3 in the record"
    assert rec.check_across("produce/raw/magic2-lz4").label == \
        "not run live: no release in the record ran produce/raw/magic2-lz4"


def test_a_scenario_step_is_labelled_with_the_releases_its_brokers_ran(rec):
    assert rec.step("seed004-migration", 1).label == "checked on 0.9.0.1"
    v = rec.step("seed004-migration", 2)
    assert v.state == "differs" and v.releases == ("0.10.0.1", "0.9.0.1")
    assert v.label == ("0.9.0.1 + 0.10.0.1 did otherwise: broker B bounced: Kafka 0.10.0.1 refused to start: no "
                       "(1 more comparison differ)")
    assert rec.row("seed004-migration", 2, "replica B").real_hex == "00010203"
    assert rec.row("seed004-migration", 1, "Fetch v1 p0").label == "checked on 0.9.0.1"


def test_a_seeds_proposal_beside_the_release_is_shown_not_counted():
    rows = [_row("p-off → p0", True), dict(_row("p-safe → p0", False, "stored v1"), model="downgraded",
                                         proposal="enable.idempotence=safe")]
    data = dict(FIXTURE, scenarios={"seed003-upgrade-path": {"status": "ran", "ok": True, "releases": {},
                                                             "not_run": [], "steps": [
        {"step": 1, "name": "s", "brokers": {"S": "0.11.0.3"}, "seed_vs_kafka": True, "rows": rows}]}})
    rec = LiveRecord.from_dict(data)
    assert rec.step("seed003-upgrade-path", 1).label == "checked on 0.11.0.3"
    (d,) = seed_vs_release(rec, "seed003-upgrade-path")
    assert ("p-safe → p0", "stored v1 (the seed's enable.idempotence=safe: downgraded)") in d["did"]


def test_a_step_after_a_refusal_and_a_scenario_no_release_can_run_say_why(rec):
    assert rec.step("seed004-migration", 3).label == "not run live: a release refused step 2 (its row says why)"
    assert rec.step("seed002-upgrade-order", 1).label == \
        "not run live: broker A: kip228 is a proposal no release shipped"
    assert rec.step("kafka4-upgrade", 1).label == "not run live: kafka4-upgrade is not in the record of 2026-11-27"


def test_the_steps_table_lists_every_step_of_the_shipped_scenario(rec):
    names = [s.name for s in load_scenario("seed004-migration").steps]
    table = rec.steps_table("seed004-migration", names)
    assert [r["step"] for r in table] == list(range(1, len(names) + 1))
    assert table[0] == {"step": 1, "name": names[0], "brokers": "0.9.0.1", "agree": "2 of 2",
                        "live": "✓ checked on 0.9.0.1"}
    assert table[1]["live"].startswith("✗ 0.9.0.1 + 0.10.0.1 did otherwise")
    assert table[-1]["brokers"] == "—" and table[-1]["live"].startswith("not run live")


def test_seed_000s_mixed_cluster_phases(rec):
    assert rec.seed000_phase("rollback").label == "checked on 0.9.0.1 + 0.10.2.2"
    assert rec.describe([{"stalls": "no record, no error"}]) == "stalls: no record, no error"
    assert rec.describe([{"offset": 0, "key": "k", "value": "v"}, {"offset": 1, "key": None, "value": None},
                         {"error": "CorruptRecordException"}]) == \
        "2 records (1 of them, offsets 1-1, with neither key nor value), then CorruptRecordException"


def test_seed_vs_release_quotes_the_seed_beside_the_release(rec):
    out = seed_vs_release(rec, "seed004-migration")
    steps = [i for i, s in enumerate(load_scenario("seed004-migration").steps, 1) if s.seed_vs_kafka]
    assert [d["step"] for d in out] == steps and all(d["seed"] and d["kafka"] for d in out)
    assert all(d["seed"][0].startswith('seed 004: "') for d in out)


def test_a_note_that_says_kafka_agrees_with_the_seed_is_no_disagreement(rec):
    steps = load_scenario("seed000-rolling-upgrade").steps
    agreeing = [i for i, s in enumerate(steps, 1) if (s.seed_vs_kafka or "").startswith("Kafka 3.9 agrees")]
    assert agreeing and not {d["step"] for d in seed_vs_release(rec, "seed000-rolling-upgrade")} & set(agreeing)


def test_a_release_check_shows_the_request_the_release_answered(tmp_path):
    payload = "000000000000000000000067ffffffff02"
    data = dict(FIXTURE, releases={"0.11.0.3": {"checks": [dict(
        _check("0.11.0.3", "produce/raw-v1/magic2-none-idempotent", True, ""), request="Produce v3, magic 2 none",
        model_rule="UnsupportedForMessageFormatError", extra={"payload": payload, "error_code": 43})]}})
    (d,) = seed_vs_release(LiveRecord.from_dict(data), "seed003-upgrade-path",
                           {1: ("0.11.0.3", "produce/raw-v1/magic2-none-idempotent")})
    assert d["step"] == 1 and d["release"] == "not run live: seed003-upgrade-path is not in the record of 2026-11-27"
    assert d["check"] == ("Produce v3, magic 2 none sent to 0.11.0.3: it answered error code 43, as the model says "
                          "(UnsupportedForMessageFormatError): checked on 0.11.0.3")
    assert d["bytes"] == [("the request's records (produce/raw-v1/magic2-none-idempotent)", payload)]


def test_a_record_that_cannot_be_read_is_one_line(tmp_path):
    with pytest.raises(RecordError, match=r"missing\.json: cannot read the live-run record"):
        load_record(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(RecordError, match=r"bad\.json: not JSON"):
        load_record(tmp_path / "bad.json")
    (tmp_path / "old.json").write_text(json.dumps({"releases": {}}))
    with pytest.raises(RecordError, match=r"old\.json: not a live-run record of schema 2 \(found None\); "
                                          "regenerate it with make history-record"):
        load_record(tmp_path / "old.json")


# ----------------------------------------------------------------------------- the committed record's facts
@pytest.fixture(scope="module")
def committed() -> LiveRecord:
    return load_record(COMMITTED)


def test_the_committed_record_ran_every_release_of_the_rig(committed):
    assert committed.releases == ["0.9.0.1", "0.10.0.1", "0.10.1.1", "0.10.2.2", "0.11.0.3", "1.0.2", "1.1.1", "2.0.1",
                                  "2.1.1", "2.8.2"]


def test_an_idempotent_batch_on_a_v1_topic_was_refused_by_0_11_0_3_as_the_model_says(committed):
    v = committed.release_check("0.11.0.3", "produce/raw-v1/magic2-none-idempotent")
    assert v.label == "checked on 0.11.0.3"
    (c,) = [c for c in committed.checks("0.11.0.3") if c["check"] == "produce/raw-v1/magic2-none-idempotent"]
    assert c["extra"]["error_code"] == 43 and c["model_rule"] == "UnsupportedForMessageFormatError"


def test_after_the_rollback_the_0_9_consumer_stalls_on_the_0_10_2_2_leader(committed):
    v = committed.seed000_check("rollback", "seed000/rollback/consume/java-0.9.0.1/p1")
    assert v.label == "checked on 0.9.0.1 + 0.10.2.2"
    (c,) = [c for c in committed.seed000_checks("rollback") if c["check"].endswith("java-0.9.0.1/p1")]
    assert committed.describe(c["expected"]) == "stalls: no record, no error"


def test_every_refusal_in_the_committed_record_is_the_broker_s_own_answer(committed):
    """The strict rig (kafkarig.history.real_refusal): a client a release refuses agrees only with the broker's
    answer, never with a client timeout: 0.9.0.1 logs that it cannot read ApiVersions (API key 18, KIP-35) from
    the 0.10.2+ Java clients and kafka-python pinned to 0.10/0.11; 0.10.x answers kafka-python 0.11's v2 batch
    in Produce v2 with CORRUPT_MESSAGE (2)."""
    refusals = {(r, c["check"]): (c["expected"], c["real"], c["agree"]) for r in committed.releases
                for c in committed.checks(r) if c["check"].startswith("client-") and isinstance(c["expected"], str)}
    unreadable = ("no response: the broker logs that it cannot read API key 18", "= expected", True)
    corrupt = ("error code 2 in the broker's response", "= expected", True)
    assert refusals == {
        **{("0.9.0.1", f"client-produce/{n}"): unreadable for n in (
            "java-0.10.2.2-gzip", "java-0.11.0.3-gzip", "python-0.10-none", "python-0.11-none")},
        **{("0.9.0.1", f"client-consume/{n}"): unreadable for n in (
            "java-0.10.2.2", "java-0.11.0.3", "python-0.10", "python-0.11")},
        **{(r, "client-produce/python-0.11-none"): corrupt for r in ("0.10.0.1", "0.10.1.1", "0.10.2.2")}}


def test_after_the_rollback_the_0_9_consumer_reads_the_0_9_0_1_leader_of_partition_0(committed):
    """Seed 000's rollback with the preferred leaders elected again (kafkarig.seed000): broker 1, back on 0.9.0.1,
    leads partition 0 and serves its v0 and v1 entries as stored."""
    (c,) = [c for c in committed.seed000_checks("rollback") if c["check"].endswith("java-0.9.0.1/p0")]
    assert c["request"] == "6 records from broker 1 (0.9.0.1), fetch v1" and c["agree"]
    assert c["extra"]["segment_magics"] == [0, 1]


def test_every_shipped_scenario_is_in_the_committed_record():
    from kafkafmt.scenarios import shipped_scenarios
    rec = json.loads(COMMITTED.read_text())
    assert set(shipped_scenarios()) <= set(rec["scenarios"])
    assert all(s["status"] in ("ran", "not live", "failed") for s in rec["scenarios"].values())


def test_seed_004s_step_5_was_checked_on_0_10_0_1_with_151_bytes(committed):
    """0.10.0.1's FileMessageSet.toMessageFormat: the whole slice down-converted into one gzip v0 message set."""
    v = committed.row("seed004-migration", 5, "Fetch v1 p0 from 0")
    assert v.label == "checked on 0.10.0.1"
    (row,) = v.rows
    assert row["real"].startswith("151 bytes, ") and len(bytes.fromhex(row["real_hex"])) == 151


# ------------------------------------------------------------------- the time index's upgrade (KIP-33)
def _ti_check(check, client, expected, real="= expected", agree=True):
    return {"release": "0.10.0.1 -> 0.10.1.1", "check": check, "client": client, "request": "…",
            "expected": expected, "real": real, "agree": agree, "detail": "" if agree else "target 5: …",
            "model_rule": "Log.fetch_offset_by_timestamp", "extra": {}}


def _ti_record(tmp_path, offsets_real="= expected", agree=True):
    files = {"00000000000000000000.log": {"size": 611, "hex": "00"},
             "00000000000000000000.timeindex": {"size": 1200, "hex": ""}}
    data = {**FIXTURE, "time_index_upgrade": {"cluster": "0.10.0.1 -> 0.10.1.1", "phases": {
        "0.10.0": {"checks": [_ti_check("0.10.0/files/ti-clean", "broker 1 (0.10.0.1)", {})]},
        "binaries": {"checks": [_ti_check("binaries/files/ti-clean", "broker 1 (0.10.1.1)", files)]},
        "written": {"checks": [_ti_check("written/list-offsets/ti-clean", "broker 1 (0.10.1.1)",
                                         [[-2, 0, -1, 0], [5, 0, 5, 36]], offsets_real, agree)]}}}}
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data))
    return load_record(path)


def test_a_time_index_check_is_labelled_with_the_release_its_broker_ran(tmp_path):
    rec = _ti_record(tmp_path)
    assert rec.time_index_phases == ["0.10.0", "binaries", "written"]
    assert rec.time_index_check("0.10.0/files/ti-clean").label == "checked on 0.10.0.1"
    v = rec.time_index_check("binaries/files/ti-clean")
    assert v.label == "checked on 0.10.1.1" and v.rows[0]["real"] == "1 segment, .timeindex sizes 1200"
    assert rec.time_index_real("binaries/files/ti-clean")["00000000000000000000.timeindex"]["size"] == 1200
    assert rec.time_index_phase("written").label == "checked on 0.10.1.1"


def test_a_time_index_check_the_release_did_otherwise_says_what(tmp_path):
    rec = _ti_record(tmp_path, [[-2, 0, -1, 0], [5, 0, -1, -1]], agree=False)
    v = rec.time_index_check("written/list-offsets/ti-clean")
    assert v.state == "differs"
    assert v.label == "0.10.1.1 did otherwise: written/list-offsets/ti-clean: offsets 0, -1"
    assert v.model == "offsets 0, 36" and rec.time_index_model("written/list-offsets/ti-clean")[1][3] == 36
    assert rec.time_index_check("stopped/files/ti-clean").label.startswith("not run live: no check stopped/")
    assert rec.time_index_phase("protocol").state == "not run"


def test_the_committed_time_index_upgrade_agrees_with_the_model_in_every_phase(committed):
    assert committed.time_index_phases == ["0.10.0", "binaries", "protocol", "written", "stopped"]
    assert committed.time_index_phase("0.10.0").label == "checked on 0.10.0.1"
    for phase in committed.time_index_phases[1:]:
        assert committed.time_index_phase(phase).label == "checked on 0.10.1.1"


def test_0_10_1_1_preallocates_an_empty_time_index_for_a_cleanly_stopped_segment_and_rebuilds_a_killed_ones(
        committed):
    """0.10.1.1's LogSegment opens a missing .timeindex preallocated (segment.index.bytes = 1200) with no entry;
    a killed broker's segments are recovered, their indexes rebuilt (three 12-byte entries)."""
    seg = "00000000000000000000.timeindex"
    clean, killed = (committed.time_index_real(f"binaries/files/{t}") for t in ("ti-clean", "ti-crash"))
    assert clean[seg] == {"size": 1200, "hex": ""}
    assert killed[seg]["size"] == 36
    assert committed.time_index_real("protocol/files/ti-clean")[seg]["size"] == 0, "trimmed once closed"
    assert not any(n.endswith(".timeindex") for n in committed.time_index_real("0.10.0/files/ti-clean"))


def test_0_10_1_1_retention_keeps_the_clean_brokers_old_segments_and_deletes_the_killed_ones(committed):
    old = {n for n in committed.time_index_real("0.10.0/files/ti-clean") if n.endswith(".log")}
    assert old == {"00000000000000000000.log", "00000000000000000015.log"}
    assert old <= set(committed.time_index_real("written/files/ti-clean"))
    assert not old & set(committed.time_index_real("written/files/ti-crash"))


def test_list_offsets_v1_answers_minus_1_on_the_clean_broker_and_the_offset_on_the_killed_one(committed):
    clean = committed.time_index_real("written/list-offsets/ti-clean")
    killed = committed.time_index_real("written/list-offsets/ti-crash")
    assert [a[0] for a in clean] == [a[0] for a in killed]
    differ = [(c[0], c[3], k[3]) for c, k in zip(clean, killed) if c[3] != k[3] and c[0] >= 0]
    assert (differ[-1][1], differ[-1][2]) == (-1, 36)
