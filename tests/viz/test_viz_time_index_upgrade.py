"""kafkafmt.viz.time_index_upgrade: the tables of the time index's upgrade from 0.10.0.1 to 0.10.1.1, from a
small record written here (what each column says, a release that did otherwise, a record without the run) and
from the committed record of the last live run."""
from __future__ import annotations

from pathlib import Path

import pytest

from kafkafmt.scenarios.checked import LiveRecord, load_record
from kafkafmt.viz import time_index_upgrade as T

COMMITTED = Path(__file__).resolve().parents[2] / "kafkafmt" / "scenarios" / "record" / "last-live-run.json"


def _files(**timeindex):
    out = {}
    for base, size in timeindex.items():
        name = f"{int(base[1:]):020d}"
        out[f"{name}.log"] = {"size": 100, "hex": "00"}
        if size is not None:
            out[f"{name}.timeindex"] = {"size": size, "hex": "00" * 12 if size and size != 1200 else ""}
    return out


def _check(check, release, expected, real="= expected", agree=True):
    return {"release": "0.10.0.1 -> 0.10.1.1", "check": check, "client": f"broker 1 ({release})", "request": "…",
            "expected": expected, "real": real, "agree": agree, "detail": "" if agree else "differs",
            "model_rule": "kafkafmt Log", "extra": {}}


def _record(offsets_real="= expected", agree=True) -> LiveRecord:
    phases = {
        "0.10.0": [_check("0.10.0/files/ti-clean", "0.10.0.1", _files(s0=None, s15=None)),
                   _check("0.10.0/files/ti-crash", "0.10.0.1", _files(s0=None, s15=None))],
        "binaries": [_check("binaries/files/ti-clean", "0.10.1.1", _files(s0=1200, s15=1200)),
                     _check("binaries/files/ti-crash", "0.10.1.1", _files(s0=36, s15=36))],
        "written": [_check("written/files/ti-clean", "0.10.1.1", _files(s0=0, s15=0, s30=1200)),
                    _check("written/files/ti-crash", "0.10.1.1", _files(s30=1200)),
                    _check("written/list-offsets/ti-clean", "0.10.1.1", [[-2, 0, -1, 0], [5000, 0, -1, -1]]),
                    _check("written/list-offsets/ti-crash", "0.10.1.1", [[-2, 0, -1, 30], [5000, 0, 5000, 36]],
                           offsets_real, agree)]}
    return LiveRecord.from_dict({"schema": 2, "recorded": "2026-11-27", "releases": {}, "scenarios": {},
                                 "time_index_upgrade": {"cluster": "0.10.0.1 -> 0.10.1.1", "phases": {
                                     p: {"checks": c} for p, c in phases.items()}}})


def test_the_sizes_table_gives_each_segments_time_index_per_phase_and_broker():
    rows = T.sizes_rows(_record())
    assert [r["phase"] for r in rows] == ["0.10.0", "binaries", "written"]
    assert rows[0]["stopped cleanly"] == "0: none · 15: none" and rows[0]["live run"] == "✓ checked on 0.10.0.1"
    assert rows[1]["stopped cleanly"] == "0: 1,200 B · 15: 1,200 B" and rows[1]["killed"] == "0: 36 B · 15: 36 B"
    assert rows[2]["killed"] == "30: 1,200 B" and rows[2]["live run"] == "✓ checked on 0.10.1.1"


def test_the_retention_table_says_which_old_segments_were_kept_and_whether_their_index_had_entries():
    clean, killed = T.retention_rows(_record())
    assert clean["after time retention on 0.10.1.1"] == "kept: 0, 15; deleted: none"
    assert clean[".timeindex at 0.10.1.1's start"] == "no entry"
    assert killed["after time retention on 0.10.1.1"] == "kept: none; deleted: 0, 15"
    assert killed[".timeindex at 0.10.1.1's start"] == "entries (rebuilt by recovery)"


def test_the_list_offsets_table_puts_each_brokers_answer_beside_the_model():
    rows = T.list_offsets_rows(_record([[-2, 0, -1, 30], [5000, 0, -1, -1]], agree=False))
    assert rows[0]["target (timestamp ms)"] == "-2 (earliest)"
    assert rows[1]["target (timestamp ms)"] == "5000 (1970-01-01 00:00:05.000 UTC)"
    assert (rows[1]["stopped cleanly: offset"], rows[1]["killed: offset"], rows[1]["killed: model"]) == (-1, -1, 36)
    html = T.upgrade_html(_record([[-2, 0, -1, 30], [5000, 0, -1, -1]], agree=False))
    assert "killed: ✗ 0.10.1.1 did otherwise: written/list-offsets/ti-crash: offsets 30, -1" in html
    assert "stopped cleanly: ✓ checked on 0.10.1.1" in html
    assert "(base offset: bytes), 0.10.0.1 → 0.10.1.1</caption>" in html


def test_a_record_without_the_run_says_so():
    rec = LiveRecord.from_dict({"schema": 2, "recorded": "2026-11-27", "releases": {}, "scenarios": {}})
    assert T.sizes_rows(rec) == [] and "no live run of the time index" in T.upgrade_html(rec)


@pytest.fixture(scope="module")
def committed() -> LiveRecord:
    return load_record(COMMITTED)


def test_the_committed_run_shows_the_preallocated_and_the_rebuilt_index_and_the_answers(committed):
    binaries = next(r for r in T.sizes_rows(committed) if r["phase"] == "binaries")
    assert binaries["stopped cleanly"].startswith("0: 1,200 B") and binaries["killed"].startswith("0: 36 B")
    assert binaries["live run"] == "✓ checked on 0.10.1.1"
    clean, killed = T.retention_rows(committed)
    assert clean["after time retention on 0.10.1.1"] == "kept: 0, 15; deleted: none"
    assert killed["after time retention on 0.10.1.1"] == "kept: none; deleted: 0, 15"
    assert any(r["stopped cleanly: offset"] == -1 and r["killed: offset"] == 36 for r in T.list_offsets_rows(committed))
