"""kafkafmt.viz.broker_price: notebook 05's measured tables and its consumer-mix panel, on a fixed cost table (no
broker, no timing: the predictions are checked against sums done by hand and against the rules they follow)."""
import json
import re
from pathlib import Path

import pytest

from kafkafmt.costs import CostTable, ReleaseCosts
from kafkafmt.errors import ConfigError
from kafkafmt.viz import broker_price as bp

#: seconds per log byte read (zero-copy), per record and per byte re-encoded, per codec byte
Z = 1e-9
TABLE = CostTable({v: ReleaseCosts(v, zero_copy_s_per_byte=Z, reencode_s_per_record=2e-7, reencode_s_per_byte=4e-9,
                                   codec_s_per_byte={"lz4": 6e-9, "gzip": 2e-8, "snappy": 5e-9})
                   for v in ("0.10.2.2", "1.1.1", "2.8.2", "3.9.2", "4.4.0")},
                  machine="test machine, 2 cores", load="0.5", date="2026-01-01")


def _row(rows, consumers):
    return next(r for r in rows if r["consumers"] == consumers)


def test_each_generation_sends_the_fetch_version_its_clients_have_and_the_broker_answers():
    assert [bp.fetch_version_of(g, "2.8") for g in ("0.9", "0.10", "0.11+")] == [1, 3, 12]
    assert [bp.fetch_version_of(g, "1.1") for g in ("0.9", "0.10", "0.11+")] == [1, 3, 7]
    assert bp.fetch_version_of("0.11+", "0.10.2") == 3  # a newer client negotiates down (KIP-35)
    assert [bp.fetch_version_of(g, "4.4") for g in ("0.9", "0.10", "0.11+")] == [None, None, 18]  # KIP-896


def test_zero_copy_consumers_cost_only_the_bytes_read():
    rows = bp.mix_costs(0.3, 0.2, "2.8.2", 100, "lz4", TABLE)
    new = _row(rows, "0.11+")
    assert new["share"] == pytest.approx(0.5) and new["served"] == "zero-copy" and new["fetch_version"] == 12
    assert new["cpu_cores"] == pytest.approx(Z * 50e6) and new["conversion_cores"] == 0
    assert new["held_per_fetch_bytes"] == 0 and new["converted_mb_per_s"] == 0
    assert sum(r["mb_per_s"] for r in rows) == pytest.approx(100)


def test_old_consumers_add_conversion_cpu_that_scales_with_their_share_and_the_throughput():
    a = _row(bp.mix_costs(0.3, 0.2, "1.1.1", 100, "lz4", TABLE), "0.9")
    b = _row(bp.mix_costs(0.6, 0.2, "1.1.1", 200, "lz4", TABLE), "0.9")
    assert a["served"] == "down-converted to v0 (eager)"
    assert a["conversion_cores"] > 10 * (a["cpu_cores"] - a["conversion_cores"])  # converting dwarfs the read
    assert b["cpu_cores"] == pytest.approx(4 * a["cpu_cores"]) and b["held_per_fetch_bytes"] == a["held_per_fetch_bytes"]


def test_a_lazy_broker_holds_one_chunk_an_eager_one_the_whole_response():
    eager = _row(bp.mix_costs(0.5, 0, "1.1.1", 100, "lz4", TABLE), "0.9")
    lazy = _row(bp.mix_costs(0.5, 0, "2.8.2", 100, "lz4", TABLE), "0.9")
    assert lazy["served"].endswith("(lazy)") and eager["served"].endswith("(eager)")
    read = bp.consumer_read("1.1", "lz4", 1)
    assert eager["held_per_fetch_bytes"] == round(read.counts.converted_bytes / read.requests)
    assert lazy["held_per_fetch_bytes"] < eager["held_per_fetch_bytes"] / 3  # 128 KiB of source, not 1 MiB


def test_kafka_4_refuses_the_old_consumers():
    rows = bp.mix_costs(0.3, 0.2, "4.4.0", 100, "lz4", TABLE)
    for gen in ("0.9", "0.10"):
        r = _row(rows, gen)
        assert r["served"] == "refused: Kafka 4.4 answers Fetch v4+ only" and r["cpu_cores"] == 0
    assert "0.9, 0.10 consumers are refused (KIP-896)" in bp.mix_caption(
        bp.mix_table(0.3, 0.2, "4.4.0", 100, "lz4", TABLE), {"release": "4.4.0", "mb_per_s": 100, "codec": "lz4"})


@pytest.mark.parametrize("shares", [(0.7, 0.4), (-0.1, 0.2), (0.2, 1.1)])
def test_shares_that_do_not_make_a_mix_are_refused(shares):
    with pytest.raises(ValueError, match="add up to at most 1"):
        bp.mix_costs(*shares, "2.8.2", 100, "lz4", TABLE)


def test_the_panel_offers_only_shares_that_add_up_and_recomputes():
    p = bp.mix_panel(TABLE)
    assert p.error is None and p.controls["release"].options == ("0.10.2.2", "1.1.1", "2.8.2", "3.9.2", "4.4.0")
    cpu = p.data["cpu_cores"].sum()
    p.set(share_09=0.9)
    assert p.controls["share_010"].max == pytest.approx(0.1) and p.values["share_010"] <= 0.1 + 1e-9
    assert p.error is None and p.data["share"].sum() == pytest.approx(1)
    p.set(share_09=0, share_010=0)
    assert p.data["cpu_cores"].sum() < cpu
    assert "every consumer read is zero-copy" in re.sub(r"<[^>]+>", "", p.caption_html)
    p.set(share_09=0.5, release="1.1.1")
    text = re.sub(r"<[^>]+>", "", p.caption_html)
    assert "(eager)" in text and "Costs measured on Kafka 1.1.1" in text


def _checkout(tmp_path, tables):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "kafkafmt").mkdir(exist_ok=True)
    d = tmp_path / "docs" / "_data" / "bench"
    d.mkdir(parents=True, exist_ok=True)
    for name, doc in tables.items():
        (d / f"{name}.json").write_text(json.dumps(doc))
    return tmp_path


def test_a_measured_table_carries_the_run_s_record(tmp_path):
    doc = {"title": "Fetch", "command": "make bench-conversion", "machine": {"cpu": "Xeon", "cores": 2},
           "load": "0.4", "date": "2026-12-02", "columns": ["release", "x zero-copy", "x zero-copy"],
           "rows": [["1.1.1", 5.1, 6.2]], "note": "n"}
    root = _checkout(tmp_path, {"conversion_fetch": doc})
    m = bp.measured("conversion_fetch", root / "notebooks")
    assert m.record == "make bench-conversion on Xeon, 2 cores, load 0.4, 2026-12-02"
    assert list(m.frame().columns) == ["release", "x zero-copy", "x zero-copy (2)"]
    assert m.frame().iloc[0].tolist() == ["1.1.1", 5.1, 6.2]
    assert "Measured</b> by make bench-conversion on Xeon" in bp.show_measured("conversion_fetch", root).data


def test_a_table_wider_than_a_page_is_shown_in_parts_with_its_keys(tmp_path):
    """conversion_fetch's twelve columns (cut at the page's edge in the presentation) come in two parts, each led
    by release, conversion and codec; a narrow table stays whole."""
    cols = ["release", "conversion", "codec"] + [f"n{i}" for i in range(9)]
    doc = {"title": "Fetch", **FACTS, "note": "", "columns": cols, "rows": [["1.1.1", "eager", "lz4", *range(9)]]}
    from kafkafmt.viz.tables import column_parts
    m = bp.measured("conversion_fetch", _checkout(tmp_path, {"conversion_fetch": doc}))
    parts = column_parts(m.frame())
    assert [list(p.columns) for p in parts] == [cols[:3] + cols[3:9], cols[:3] + cols[9:]]
    assert [p.iloc[0].tolist() for p in parts] == [["1.1.1", "eager", "lz4", 0, 1, 2, 3, 4, 5],
                                                   ["1.1.1", "eager", "lz4", 6, 7, 8]]
    assert len(column_parts(m.frame(), max_columns=12)) == 1
    html = bp.show_measured("conversion_fetch", tmp_path).data
    assert html.count("<table") == 2 and html.count(">lz4<") == 2


def test_a_missing_or_unknown_measured_table_is_one_clear_error(tmp_path):
    root = _checkout(tmp_path, {})
    with pytest.raises(ConfigError, match="run make bench-conversion"):
        bp.measured("conversion_heap", root)
    with pytest.raises(ConfigError, match="no benchmark table 'heap'"):
        bp.measured("heap", root)


FACTS = {"command": "make bench-conversion", "machine": {"cpu": "Xeon", "cores": 2}, "load": "0.4", "date": "2026-12-02"}
#: tables shaped as benchmarks/conversion.py's docs_tables writes them
FETCH = {"title": "Fetch", **FACTS, "note": "",
         "columns": ["release", "conversion", "codec", "zero-copy CPU s/GB", "zero-copy MB/s", "to magic 1 CPU s/GB",
                     "x zero-copy", "to magic 0 CPU s/GB", "x zero-copy"],
         "rows": [["1.1.1", "eager", "lz4", 1.0, 500, 6.0, 6.04, 7.0, 7.0], ["1.1.1", "eager", "none", 1.0, 500, 2.0,
                  2.0, 3.0, 3.0], ["2.8.2", "lazy", "lz4", 1.0, 500, 5.0, 5.0, 5.5, 5.55],
                  ["4.4.0", "none", "lz4", 1.0, 500, None, None, None, None]]}
HEAP = {"title": "Heap", **FACTS, "note": "", "columns": ["release", "conversion", "response MB", "allocated MB",
                                                          "held while in flight MB", "still live once read MB"],
        "rows": [["1.1.1", "eager", 40.0, 90.0, 41.5, 0.1], ["2.8.2", "lazy", 40.0, 60.0, -0.12, 0.1]]}
PRODUCE = {"title": "Produce", **FACTS, "note": "",
           "columns": ["codec", "0.9.0.1 magic 0 producer", "0.10.2.2 magic 1 producer",
                       "0.9 / 0.10 (magic 0 into 0.9 / magic 1 into 0.10)"],
           "rows": [["gzip", 30.0, 3.0, 10.0], ["none", 2.0, 2.0, None]]}


def test_the_findings_read_the_measured_ratios(tmp_path):
    root = _checkout(tmp_path, {"conversion_fetch": FETCH, "conversion_heap": HEAP, "conversion_produce": PRODUCE})
    assert bp.fetch_finding("lz4", root).endswith("(a 0.9 consumer / a 0.10 consumer):\n  1.1.1 (eager) 7.0× / 6.0×\n"
                                                  "  2.8.2 (lazy) 5.5× / 5.0×")  # 4.4.0 converts nothing: left out
    assert bp.heap_finding(root).endswith(":\n  1.1.1 (eager) 41.5 MB for a 40.0 MB response\n  2.8.2 (lazy) under 0.5 MB "
                                          "(the method's noise) for a 40.0 MB response")
    assert bp.produce_finding(root).endswith("(KIP-31): gzip 10.0×.")
    with pytest.raises(ConfigError, match="no down-converted zstd fetch"):
        bp.fetch_finding("zstd", root)
    bad = dict(FETCH, columns=["release", "conversion", "codec"], rows=[])
    with pytest.raises(ConfigError, match="has no column 'x zero-copy \\(2\\)'"):
        bp.fetch_finding("lz4", _checkout(tmp_path, {"conversion_fetch": bad}))


def test_a_notebook_copy_outside_the_checkout_reads_the_tables_it_links(tmp_path, monkeypatch):
    """A copy of the notebooks (JupyterLab's in the browser test) links docs/_data/bench to the checkout's; without
    the link, one clear error naming where it looked and what to run (never the package's own folders)."""
    monkeypatch.chdir(tmp_path)  # no checkout above
    with pytest.raises(ConfigError, match=f"no measured table at {re.escape(str(tmp_path))}.*make bench-conversion"):
        bp.measured("conversion_fetch")
    checkout = Path(__file__).resolve().parents[2] / "docs" / "_data" / "bench"
    (tmp_path / "docs" / "_data").mkdir(parents=True)
    (tmp_path / "docs" / "_data" / "bench").symlink_to(checkout, target_is_directory=True)
    assert bp.measured("conversion_fetch").rows == json.loads((checkout / "conversion_fetch.json").read_text())["rows"]
