"""kafkafmt.viz.derived: loading the pipeline's tables (read path, cache path) and the retention and
fetch-cost findings of notebooks 04 and 05, on small tables whose answers are worked out by hand.

The build path (generator + Spark pipeline) runs for real in nbval on a fresh clone (no data/derived)."""
import re

import pandas as pd
import pytest

from kafkafmt.viz import derived

START = 1_700_000_000_000


def _segments(rows, topic="t", partition=0):
    """rows: (base_offset, size_bytes, last_modified_ms after START, largest_timestamp after START)."""
    return pd.DataFrame([{"topic": topic, "partition": partition, "base_offset": b, "size_bytes": size, "records": 10,
                          "last_modified_ms": START + lm, "largest_timestamp": START + lt,
                          "path": f"/somewhere/{topic}-{partition}/{b:020d}.log"}
                         for b, size, lm, lt in rows])


def test_deadlines_follow_the_largest_timestamp_and_delete_a_prefix():
    # segment 10's clock runs 5 s ahead: it is deleted 5 s late, and segment 20 (on time) must wait for it
    seg = _segments([(0, 100, 0, -2_000), (10, 200, 1_000, 6_000), (20, 300, 2_000, 2_000)])
    d = derived.segment_deadlines(seg, "t-0", retention_ms=60_000)
    assert d["deleted_ms"].tolist() == [58_001, 66_001, 66_001]
    assert d["lat_deleted_ms"].tolist() == [60_001, 61_001, 62_001]
    assert d["outlives_ms"].tolist() == [-2_000, 5_000, 4_000]


def test_retention_ms_shifts_every_deadline_but_not_the_skew():
    seg = _segments([(0, 100, 0, -2_000), (10, 200, 1_000, 6_000)])
    a = derived.segment_deadlines(seg, "t-0", retention_ms=60_000)
    b = derived.segment_deadlines(seg, "t-0", retention_ms=120_000)
    assert (b["deleted_ms"] - a["deleted_ms"]).tolist() == [60_000, 60_000]
    assert b["outlives_ms"].tolist() == a["outlives_ms"].tolist()


def test_bad_retention_and_unknown_partition_are_value_errors():
    seg = _segments([(0, 100, 0, 0)])
    with pytest.raises(ValueError, match="retention.ms"):
        derived.segment_deadlines(seg, "t-0", retention_ms=0)
    with pytest.raises(ValueError, match="no topic-partition"):
        derived.segment_deadlines(seg, "t-9", retention_ms=1_000)


def test_retention_finding_counts_bytes_kept_longer_and_deleted_early():
    seg = pd.concat([_segments([(0, 100, 0, -2_000), (10, 200, 1_000, 6_000), (20, 300, 2_000, 2_000)]),
                     _segments([(0, 50, 0, 0)], topic="lat", partition=1)])
    f = derived.retention_finding(seg, retention_ms=60_000).set_index("partition")
    assert f.loc["t-0"].to_dict() == {"segments": 3, "bytes": 600, "bytes_kept_longer": 500,
                                      "bytes_deleted_early": 100, "max_kept_longer_s": 5.0, "max_deleted_early_s": 2.0}
    assert f.loc["lat-1", "bytes_kept_longer"] == 0 and f.loc["lat-1", "bytes_deleted_early"] == 0
    assert derived.partitions(seg) == ["lat-1", "t-0"]


def _costs():
    rows = []
    for base in (0, 100):
        rows.append({"topic": "a", "partition": 0, "base_offset": base, "fetch_version": 3, "zero_copy": False,
                     "error": None, "bytes_read": 1000, "bytes_out": 1100, "records_touched": 100,
                     "batches_rebuilt": 10, "batches_copied": 0, "decompressions": 10, "compressions": 10})
        rows.append({"topic": "a", "partition": 0, "base_offset": base, "fetch_version": 17, "zero_copy": True,
                     "error": None, "bytes_read": 1000, "bytes_out": 1000, "records_touched": 0,
                     "batches_rebuilt": 0, "batches_copied": 0, "decompressions": 0, "compressions": 0})
    rows.append({"topic": "z", "partition": 0, "base_offset": 0, "fetch_version": 3, "zero_copy": False,
                 "error": "UNSUPPORTED_COMPRESSION_TYPE", "bytes_read": 500, "bytes_out": 0, "records_touched": 0,
                 "batches_rebuilt": 0, "batches_copied": 0, "decompressions": 0, "compressions": 0})
    rows.append({"topic": "z", "partition": 0, "base_offset": 0, "fetch_version": 17, "zero_copy": True,
                 "error": None, "bytes_read": 500, "bytes_out": 500, "records_touched": 0,
                 "batches_rebuilt": 0, "batches_copied": 0, "decompressions": 0, "compressions": 0})
    return pd.DataFrame(rows)


def test_fetch_costs_sum_per_version():
    f = derived.fetch_costs(_costs(), "a").set_index("fetch_version")
    assert f.loc[3, "records_touched"] == 200 and f.loc[3, "compressions"] == 20 and f.loc[3, "out_per_read"] == 1.1
    assert f.loc[17, "zero_copy_segments"] == 2 and f.loc[17, "records_touched"] == 0
    assert derived.fetch_costs(_costs()).set_index("fetch_version").loc[3, "error_segments"] == 1
    with pytest.raises(ValueError, match="no topic"):
        derived.fetch_costs(_costs(), "nope")


def test_conversion_finding_compares_oldest_and_newest_fetch():
    f = derived.conversion_finding(_costs()).set_index("topic")
    assert f.loc["a", "records_touched_oldest"] == 200 and f.loc["a", "compressions_oldest"] == 20
    assert f.loc["a", "zero_copy_newest"] == "2/2" and f.loc["a", "records_touched_newest"] == 0
    assert f.loc["z", "out_per_read_oldest"] == 0.0  # refused: nothing sent


def _priced(costs):
    """The pipeline's predicted columns on :func:`_costs` (topic a on 2.8: a lazy chunk; z's refused fetch unpriced)."""
    c = costs.copy()
    conv = ~c["zero_copy"] & c["error"].isna()
    c["predicted_cpu_s"] = [0.002 if v else (0.0005 if e is None else None) for v, e in zip(conv, c["error"])]
    c["predicted_memory_bytes"] = pd.array([1100 if v else (0 if e is None else None)
                                            for v, e in zip(conv, c["error"])], dtype="Int64")
    c["cost_measured_on"] = [None if e is not None else "2.8.2" for e in c["error"]]
    return c


def test_fetch_costs_and_the_finding_carry_the_pipelines_prediction():
    f = derived.fetch_costs(_priced(_costs()), "a").set_index("fetch_version")
    assert f.loc[3, "predicted_cpu_s"] == pytest.approx(0.004) and f.loc[17, "predicted_cpu_s"] == pytest.approx(0.001)
    assert f.loc[3, "predicted_memory_bytes"] == 1100 and f.loc[17, "predicted_memory_bytes"] == 0  # one request's
    assert set(f["cost_measured_on"]) == {"2.8.2"}
    z = derived.fetch_costs(_priced(_costs()), "z").set_index("fetch_version")
    assert pd.isna(z.loc[3, "predicted_cpu_s"]) and pd.isna(z.loc[3, "cost_measured_on"])  # refused: not priced
    found = derived.conversion_finding(_priced(_costs())).set_index("topic")
    assert found.loc["a", "predicted_cpu_s_oldest"] == pytest.approx(0.004)
    assert found.loc["a", "predicted_cpu_s_newest"] == pytest.approx(0.001)
    assert found.loc["a", "predicted_memory_bytes_oldest"] == 1100 and found.loc["a", "cost_measured_on"] == "2.8.2"
    assert pd.isna(found.loc["z", "predicted_cpu_s_oldest"])
    html = derived.conversion_finding_table(_priced(_costs())).data
    assert "predicted broker CPU (oldest)" in html and "costs measured on Kafka" in html
    assert "predicted_cpu_s" not in derived.fetch_costs(_costs(), "a").columns  # tables without a prediction


def _write(directory, segments):
    directory.mkdir(parents=True)
    for t in derived.TABLES:
        frame = segments if t == "segments" else (_costs() if t == "conversion_costs" else pd.DataFrame({"x": [1]}))
        frame.to_parquet(directory / f"{t}.parquet")


def test_load_reads_data_derived_first_and_hides_where_the_logs_were(tmp_path):
    seg = _segments([(0, 100, 0, 0)])
    _write(tmp_path / "data" / "derived" / "s", seg)
    _write(tmp_path / "build" / "derived" / "s", _segments([(5, 1, 0, 0)]))
    got = derived.load_derived("s", root=tmp_path, progress=False)
    assert got.source == tmp_path / "data" / "derived" / "s"
    assert got["segments"]["path"].tolist() == ["t-0/00000000000000000000.log"]
    assert set(got.tables) == set(derived.TABLES)


def test_load_uses_a_complete_cache_when_data_is_missing(tmp_path):
    _write(tmp_path / "build" / "derived" / "s", _segments([(5, 1, 0, 0)]))
    (tmp_path / "data" / "derived" / "s").mkdir(parents=True)  # incomplete: ignored
    got = derived.load_derived("s", root=tmp_path, progress=False)
    assert got.source == tmp_path / "build" / "derived" / "s"
    assert got["segments"]["base_offset"].tolist() == [5]


def test_project_root_is_found_from_the_notebooks_folder():
    root = derived.project_root()
    assert derived.project_root(root / "notebooks") == root
    assert (root / "pyproject.toml").is_file()


def test_without_java_the_build_stops_with_one_clear_error(tmp_path, monkeypatch):
    from kafkafmt.errors import NoSuchFileError
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(NoSuchFileError, match="no Java"):
        derived.load_derived("s", root=tmp_path, progress=False)
    assert not (tmp_path / "build" / "derived").exists()


# ------------------------------------------------------------------------------------------------
# the panels of notebooks 04 and 05, on the hand-made tables and on the pipeline's default scenario
def test_deadlines_panel_captions_early_and_late_segments():
    seg = _segments([(0, 100, 0, -7_200_000), (10, 100, 60_000, 90_000)], topic="clicks")
    p = derived.deadlines_panel(seg, partition="clicks-0")
    assert p.controls["retention_min"].min >= 1
    text = re.sub(r"<[^>]+>", "", p.caption_html)
    assert text.startswith("clicks-0: 1 of 2 segments deleted early (the worst 2.0 h early), 1 kept longer")


def test_fetch_panel_labels_errors_and_zero_copy():
    p = derived.fetch_panel(_costs(), topic="a")
    text = re.sub(r"<[^>]+>", "", p.caption_html)
    assert text.startswith("a: a fetch v3 re-encodes 200 records") and "serves 2 of 2 segments zero-copy" in text
    assert p.view.value.count("<img") == 1 and "✗" not in p.view.value
    p.set(topic="z")
    assert "answered with an error for every segment" in p.caption_html
    assert p.data["table"]["records_touched"].iloc[-1] == 0


@pytest.fixture(scope="module")
def default_scenario():
    from kafkafmt.errors import NoSuchFileError
    try:
        return derived.load_derived("default", progress=False)
    except NoSuchFileError as e:  # no Java: the pipeline cannot be built
        from tests.ci_mode import skip_or_fail
        skip_or_fail(f"the pipeline's tables cannot be built here: {e}")


def test_04_deadlines_over_the_default_scenario(default_scenario):
    p = derived.deadlines_panel(default_scenario["segments"])
    before = p.data
    p.set(retention_min=20)
    assert ((p.data["deleted_ms"] - before["deleted_ms"]) == 10 * derived.MINUTE_MS).all()
    assert p.data["outlives_ms"].equals(before["outlives_ms"])
    p.set(partition="audit-0")
    assert (p.data["outlives_ms"] == 0).all()
    p.set(partition="clicks-1")
    assert p.data["outlives_ms"].min() < -3_600_000 and "(the worst 2.0 h early)" in p.caption_html


def test_05_fetch_costs_over_the_default_scenario(default_scenario):
    conversions = default_scenario["conversion_costs"]
    p = derived.fetch_panel(conversions)
    t = p.data["table"].set_index("fetch_version")
    assert t["records_touched"].iloc[0] > 0 and t["records_touched"].iloc[-1] == 0
    p.set(topic="audit")
    a = p.data["table"].set_index("fetch_version")
    old = a[a.index < 4]
    assert (old["error_segments"] == old["segments"]).all() and (old["bytes_out"] == 0).all()
    assert "answered with an error for every segment" in p.caption_html
    errors = conversions.loc[conversions["topic"].eq("audit") & conversions["fetch_version"].lt(4), "error"]
    assert set(errors) == {"UNSUPPORTED_COMPRESSION_TYPE"}
    # the pipeline's predicted cost rides along: a down-conversion of clicks costs more than its zero-copy read,
    # priced with a measured release's costs; audit's refused fetches are not priced
    p.set(topic="clicks")
    c = p.data["table"].set_index("fetch_version")
    assert c["predicted_cpu_s"].iloc[0] > c["predicted_cpu_s"].iloc[-1] > 0
    assert c["predicted_memory_bytes"].iloc[0] > 0 and c["predicted_memory_bytes"].iloc[-1] == 0
    assert c["cost_measured_on"].str.match(r"\d+\.\d+\.\d+").all()
    assert old["predicted_cpu_s"].isna().all()
    assert "predicted broker CPU" in p.view_html()
