"""``kafkafmt explain fetch`` prints the broker CPU and memory kafkafmt.costs predicts for the request, from a cost
table (here a fixed one: no broker, no timing), and says so in one line when no table is shipped."""
from __future__ import annotations

import contextlib
import io
import json

import pytest

import kafkafmt.costs.model as cost_model
from kafkafmt.costs import CostTable, ReleaseCosts
from kafkafmt.records.builder import build_records
from kafkafmt.tools.explain import main

#: seconds per log byte read, per record re-encoded (no per-byte or codec term: the sums are checkable by hand)
Z, R = 2e-9, 3e-7
TABLE = CostTable({v: ReleaseCosts(v, zero_copy_s_per_byte=Z, reencode_s_per_record=R) for v in ("1.1.1", "2.8.2")},
                  machine="test machine", load="0.1", date="2026-01-01", source="fixed")


@pytest.fixture
def log(tmp_path):
    rows = [(1_700_000_000_000 + i, b"k%d" % i, b"v" * 50) for i in range(10)]
    path = tmp_path / "log.bin"
    path.write_bytes(build_records(rows, magic=2, compression="none", base_offset=0))
    return path


@pytest.fixture
def table(tmp_path, monkeypatch):
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(TABLE.to_dict()))
    monkeypatch.setattr(cost_model, "TABLE_PATH", path)
    return path


def _explain(*argv) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["explain", "fetch", *map(str, argv)])
    return rc, buf.getvalue()


@pytest.mark.parametrize("line, held", [("1.1", "eager"), ("2.8", "lazy")])
def test_a_down_converted_fetch_costs_the_read_and_each_record_and_holds_the_converted_bytes(
        log, table, tmp_path, line, held):
    rc, out = _explain(log, "--fetch-version", 1, "--kafka-line", line, "--json", "-o", tmp_path / "sent.bin")
    d = json.loads(out)
    assert rc == 0 and not d["zero_copy"] and d["records_touched"] == 10 and d["bytes_read"] == log.stat().st_size
    p = d["predicted"]
    assert p["cpu_s"] == pytest.approx(Z * log.stat().st_size + R * 10)
    # a 651-byte log is one chunk: eager (1.1) and lazy (2.8) both hold the whole converted response
    assert p["memory_bytes"] == (tmp_path / "sent.bin").stat().st_size
    assert p["measured_on"] == {"1.1": "1.1.1", "2.8": "2.8.2"}[line] and "test machine" in p["table"]
    _, text = _explain(log, "--fetch-version", 1, "--kafka-line", line)
    assert f"CPU {(Z * log.stat().st_size + R * 10) * 1e6:,.1f} µs" in text and f"({held}" in text


def test_a_zero_copy_fetch_costs_only_the_read(log, table):
    rc, out = _explain(log, "--kafka-line", "2.8", "--json")
    p = json.loads(out)["predicted"]
    assert p["cpu_s"] == pytest.approx(Z * log.stat().st_size) and p["memory_bytes"] == 0
    _, text = _explain(log, "--kafka-line", "2.8")
    assert "memory held 0 bytes: none (zero-copy)" in text


def test_without_a_cost_table_one_line_says_so(log, tmp_path, monkeypatch):
    monkeypatch.setattr(cost_model, "TABLE_PATH", tmp_path / "absent.json")
    rc, text = _explain(log, "--fetch-version", 1, "--kafka-line", "2.8")
    line = next(x for x in text.splitlines() if x.startswith("predicted broker cost"))
    assert rc == 0 and "no cost table" in line and "Traceback" not in text
    rc, out = _explain(log, "--fetch-version", 1, "--kafka-line", "2.8", "--json")
    assert rc == 0 and json.loads(out)["predicted"] is None
