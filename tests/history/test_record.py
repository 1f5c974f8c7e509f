"""``conformance/history/record.py``'s shaping of the live record (no broker runs here): what a check, a live
scenario's row and a whole live report become in ``last-live-run.json``, the schema upgrade, the order and the
atomic write.  The live run itself is ``make history-record``; the committed record is read by
``tests/scenarios/test_checked.py``."""
from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path

import pytest

from kafkafmt.scenarios import load_scenario
from kafkafmt.scenarios.live import LiveReport, LiveRow

ROOT = Path(__file__).resolve().parents[2]


def _record_module():
    spec = importlib.util.spec_from_file_location("history_record", ROOT / "conformance" / "history" / "record.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


R = _record_module()


def _check(expected, real, agree, **extra):
    return {"release": "0.10.0.1", "check": "fetch/raw/v1", "client": "kafkafmt raw client", "request": "Fetch v1",
            "expected": expected, "real": real, "agree": agree, "detail": "" if agree else "differs",
            "model_rule": "zero-copy", "extra": {"segment": "00" * 900, "real_records": [1], "expected_records": [1],
                                                 **extra}}


def test_an_agreeing_check_keeps_small_bytes_and_says_real_equals_expected():
    c = _check("0a0b", "0a0b", True, payload="01")
    out = R.slim_check(c)
    assert out["expected"] == "0a0b" and out["real"] == "= expected"
    assert out["extra"] == {"payload": "01"}
    assert c["real"] == "0a0b" and "segment" in c["extra"], "the input is not changed"


def test_an_agreeing_check_records_large_bytes_as_length_and_crc():
    big = bytes(range(256)) * 2
    out = R.slim_check(_check(big.hex(), big.hex(), True, payload=big.hex()))
    assert out["expected"] == "512 bytes, crc32 " + f"{__import__('zlib').crc32(big):08x}"
    assert out["real"] == "= expected"
    assert out["extra"]["payload"].startswith("512 bytes, crc32 ")


def test_a_disagreeing_check_keeps_both_sides_whole():
    big = bytes(600)
    out = R.slim_check(_check(big.hex(), (big + b"\x01").hex(), False))
    assert out["expected"] == big.hex() and out["real"] == (big + b"\x01").hex()
    assert out["extra"]["real_records"] == [1] and "segment" not in out["extra"]


def test_a_live_row_keeps_the_bytes_of_a_fetch_a_difference_or_a_seed_step_only():
    data = b"\x00\x01" * 10
    replica = LiveRow("replica B p0", "20 bytes", "20 bytes", True, real_bytes=data)
    fetch = LiveRow("Fetch v1 p0 from 0: the bytes returned by A", "20 bytes", "20 bytes", True, real_bytes=data)
    differ = LiveRow("replica C p0", "20 bytes", "19 bytes", False, "first difference at byte 3", real_bytes=data[:19])
    assert "real_hex" not in R.shape_row(replica, keep_bytes=False)
    assert R.shape_row(replica, keep_bytes=True)["real_hex"] == data.hex()
    assert R.shape_row(fetch, keep_bytes=False)["real_hex"] == data.hex()
    assert R.shape_row(differ, keep_bytes=False) == {"what": "replica C p0", "model": "20 bytes", "real": "19 bytes",
                                                     "agree": False, "detail": "first difference at byte 3",
                                                     "real_hex": data[:19].hex()}
    seed = LiveRow("p-safe → p0", "stored v1, downgraded", "stored v1", False, proposal="enable.idempotence=safe")
    assert R.shape_row(seed, keep_bytes=False) == {"what": "p-safe → p0", "model": "stored v1, downgraded",
                                                   "real": "stored v1", "agree": False,
                                                   "proposal": "enable.idempotence=safe"}
    big = LiveRow("Fetch v1 p0 from 0", "x", "x", True, real_bytes=bytes(R.FETCH_HEX_LIMIT + 1))
    assert "real_hex" not in R.shape_row(big, keep_bytes=False)


def test_a_report_is_recorded_per_step_with_the_releases_each_step_ran():
    sc = load_scenario("seed004-migration")
    seed_step = next(i for i, s in enumerate(sc.steps, 1) if s.seed_vs_kafka)
    plain_step = next(i for i, s in enumerate(sc.steps, 1) if not s.seed_vs_kafka)
    disk = LiveRow("disk A p0 (.log)", "8 bytes", "8 bytes", True, real_bytes=b"\x07" * 8)
    report = LiveReport(steps=[(plain_step, sc.steps[plain_step - 1].name, [disk]),
                               (seed_step, sc.steps[seed_step - 1].name, [disk])],
                        releases={"A": "0.9.0.1→0.10.1.1", "B": "0.9.0.1"}, seconds=12.5,
                        brokers_at={plain_step: {"A": "0.9.0.1", "B": "0.9.0.1"},
                                    seed_step: {"A": "0.10.1.1", "B": "0.9.0.1"}})
    out = R.shape_report(report, sc)
    assert out["status"] == "ran" and out["ok"] is True and out["not_run"] == []
    assert out["releases"] == {"A": "0.9.0.1→0.10.1.1", "B": "0.9.0.1"}
    first, second = out["steps"]
    assert (first["step"], first["seed_vs_kafka"], first["brokers"]) == (plain_step, False,
                                                                          {"A": "0.9.0.1", "B": "0.9.0.1"})
    assert "real_hex" not in first["rows"][0]
    assert second["seed_vs_kafka"] is True and second["rows"][0]["real_hex"] == "07" * 8
    assert "seconds" not in json.dumps(out), "durations are kept apart from the rows"
    report.not_run = ["11. later"]
    assert R.shape_report(report, sc)["ok"] is False


def test_a_schema_1_record_is_upgraded_with_its_durations_moved_apart():
    old = {"releases": {"0.9.0.1": {"seconds": 40.0, "checks": [_check("00", "00", True)]}},
           "seed000": {"cluster": "0.9.0.1+0.10.2.2", "seconds": 80.0,
                       "phases": {"mixed": {"seconds": 7.5, "checks": [_check("00", "01", False)]}}}}
    rec, seconds = R.upgrade(old)
    assert seconds == {"releases": {"0.9.0.1": 40.0}, "seed000": {"mixed": 7.5}, "time_index_upgrade": {},
                       "scenarios": {}}
    assert rec["releases"]["0.9.0.1"] == {"checks": [R.slim_check(_check("00", "00", True))]}
    assert rec["seed000"] == {"cluster": "0.9.0.1+0.10.2.2", "phases": {"mixed": {"checks": [
        R.slim_check(_check("00", "01", False))]}}}
    again, seconds2 = R.upgrade(R.finish(rec, seconds, dt.date(2026, 11, 27)))
    assert again["releases"] == rec["releases"] and seconds2["releases"] == {"0.9.0.1": 40.0}


def test_the_record_is_written_in_release_order_with_the_date_and_durations_last(tmp_path):
    rec = {"releases": {"2.8.2": {"checks": []}, "0.9.0.1": {"checks": []}}, "scenarios": {"b": {}, "a": {}}}
    seconds = {"releases": {"2.8.2": 1.0, "0.9.0.1": 2.0}, "seed000": {}, "scenarios": {}}
    out = R.finish(rec, seconds, dt.date(2026, 11, 27))
    assert list(out) == ["schema", "recorded", "releases", "scenarios", "seconds"]
    assert out["recorded"] == "2026-11-27" and out["schema"] == R.SCHEMA
    assert list(out["releases"]) == ["0.9.0.1", "2.8.2"] and list(out["scenarios"]) == ["a", "b"]
    path = tmp_path / "last-live-run.json"
    R.write(out, path)
    assert json.loads(path.read_text()) == out and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_the_arguments_name_releases_seed000_and_scenarios():
    shipped = ["seed000-rolling-upgrade", "seed004-migration"]
    everything = R.parse_args([], shipped)
    assert everything["seed000"] and everything["scenarios"] == shipped and not everything["partial"]
    assert everything["releases"][0] == "0.9.0.1"
    some = R.parse_args(["0.10.2.2", "seed004-migration"], shipped)
    assert some == {"releases": ["0.10.2.2"], "seed000": False, "time_index": False,
                    "scenarios": ["seed004-migration"], "partial": True}
    assert R.parse_args(["scenarios", "seed000"], shipped)["scenarios"] == shipped
    assert everything["time_index"]
    alone = R.parse_args(["time-index"], shipped)
    assert alone["time_index"] and alone["partial"] and not alone["seed000"] and not alone["releases"]
    with pytest.raises(ValueError, match="^0.12: not a release, 'seed000', 'time-index', 'scenarios' nor a shipped"):
        R.parse_args(["0.12"], shipped)


def _files(**sizes):
    return {name: {"size": size, "hex": "00" * 4} for name, size in sizes.items()}


def _time_index_run():
    same = _files(**{"00000000000000000000.log": 4, "00000000000000000000.timeindex": 1200})
    files = {"release": "0.10.0.1 -> 0.10.1.1", "check": "binaries/files/ti-clean", "client": "broker 1 (0.10.1.1)",
             "request": "just started", "expected": same, "real": dict(same), "agree": True, "detail": "",
             "model_rule": "kafkafmt Log, --kafka-line 0.10.1", "extra": {"segments": ["00000000000000000000.log"]}}
    offsets = {**files, "check": "written/list-offsets/ti-clean", "request": "ListOffsets v1",
               "expected": [[5, 0, 5, 36]], "real": [[5, 0, -1, -1]], "agree": False, "detail": "target 5: ...",
               "extra": {}}
    return {"cluster": "0.10.0.1 -> 0.10.1.1", "seconds": 91.5,
            "phases": {"binaries": {"seconds": 12.0, "checks": [files]},
                       "written": {"seconds": 40.1, "checks": [offsets]}}}


def test_the_time_index_run_is_recorded_per_phase_with_its_durations_apart():
    run = _time_index_run()
    part, seconds = R.shape_time_index(run)
    assert seconds == {"total": 91.5, "binaries": 12.0, "written": 40.1}
    assert part["cluster"] == "0.10.0.1 -> 0.10.1.1" and list(part["phases"]) == ["binaries", "written"]
    files = part["phases"]["binaries"]["checks"][0]
    assert files["real"] == "= expected" and files["expected"]["00000000000000000000.timeindex"]["size"] == 1200
    assert files["extra"] == {"segments": ["00000000000000000000.log"]}, "the segment list is kept"
    offsets = part["phases"]["written"]["checks"][0]
    assert offsets["expected"] == [[5, 0, 5, 36]] and offsets["real"] == [[5, 0, -1, -1]], "a difference stays whole"
    assert "seconds" not in json.dumps(part)


def test_the_time_index_part_is_kept_by_a_partial_run_and_written_before_the_scenarios():
    part, secs = R.shape_time_index(_time_index_run())
    rec = {"releases": {}, "scenarios": {"a": {}}, R.TIME_INDEX: part}
    out = R.finish(rec, {"releases": {}, "seed000": {}, R.TIME_INDEX: secs, "scenarios": {}}, dt.date(2026, 11, 27))
    assert list(out) == ["schema", "recorded", "releases", "time_index_upgrade", "scenarios", "seconds"]
    assert out["seconds"]["time_index_upgrade"]["total"] == 91.5
    again, seconds = R.upgrade(out)
    assert again[R.TIME_INDEX] == part and seconds[R.TIME_INDEX] == secs


def test_the_committed_record_is_of_the_schema_the_product_reads():
    from kafkafmt.scenarios.checked import SCHEMA
    rec = json.loads((ROOT / "kafkafmt" / "scenarios" / "record" / "last-live-run.json").read_text())
    assert rec["schema"] == R.SCHEMA == SCHEMA
    assert list(rec)[-1] == "seconds" and "seconds" not in json.dumps(rec["releases"])
