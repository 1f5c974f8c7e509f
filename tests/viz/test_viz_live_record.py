"""The live record on the pages (kafkafmt.viz.live_record, arc, and the labels of notebooks 03, 06 and 07),
driven as the notebooks drive them, over the committed record of the last live run."""
from __future__ import annotations

from pathlib import Path

import pytest

from kafkafmt import kafka_lines
from kafkafmt.viz import arc, idempotence, live_record, timeindex, upgrade

RECORD = Path(__file__).resolve().parents[2] / "kafkafmt" / "scenarios" / "record" / "last-live-run.json"


@pytest.fixture(scope="module")
def rec():
    return live_record.record(RECORD)


def test_each_produce_of_the_upgrade_stepper_names_the_releases_that_stored_it_so(rec):
    r = upgrade.run_checked(4, codec="gzip", rec=rec)
    labels = [p["checked live"] for p in r["produce"]]
    assert labels[0] == "✓ checked on 0.9.0.1"
    assert labels[2] == "✓ checked on 0.10.0.1 + 0.10.1.1 + 0.10.2.2"
    assert labels[4] == "✓ checked on 0.11.0.3 + 1.0.2 + 1.1.1 + 2.0.1 + 2.1.1 + 2.8.2"
    lz4 = upgrade.run_checked(1, codec="lz4", rec=rec)["produce"][-1]["checked live"]
    assert lz4 == "not run live: no release in the record ran produce/raw-v0/magic1-lz4"
    assert "checked live" not in upgrade.run_checked(1)["produce"][0]


def test_the_rollback_on_the_real_mixed_cluster(rec):
    lines = upgrade.rollback_checked(rec)
    assert len(lines) == 2
    assert "from broker 1 (0.9.0.1)" in lines[0] and "with neither key nor value" in lines[0]
    assert "from broker 2 (0.10.2.2)" in lines[1] and "stalls: no record, no error" in lines[1]
    assert all(line.endswith("(✓ checked on 0.9.0.1 + 0.10.2.2)") for line in lines)


def test_the_scenario_panel_shows_the_live_step_below_the_hops(rec):
    panel = upgrade.scenario_panel(rec)
    assert "On real releases:" in panel.view_html()
    assert "On real releases:" not in upgrade.scenario_panel().view_html()


def test_seed_003s_table_names_the_release_of_each_of_kafkas_own_cells(rec):
    df = idempotence.computed_table_checked(rec)
    col = idempotence.LIVE_COLUMN
    cell = df[(df["mode"] == "true") & (df["broker"] == "0.11.0") & (df["topic format"] == "v1")][col]
    assert list(cell) == ["✓ checked on 0.11.0.3"]
    assert set(df[df["mode"].isin(["off", "safe", "required"])][col]) == {"— the seed's mode never shipped"}
    assert idempotence.checked_live(rec, "1.0", "v0", "true").label == \
        "not run live: the record has no true batch on a v0 topic"
    html = idempotence.seed_vs_release_html(rec)
    assert "answered error code 43" in html and "UnsupportedVersionException" in html


def test_notebook_03_says_which_releases_have_a_time_index(rec):
    rows = {r["release"]: r for r in timeindex.live_rows(rec)}
    assert rows["0.10.0.1"]["time index (kafka_lines)"] == "no (before 0.10.1)"
    assert rows["0.10.1.1"]["time index (kafka_lines)"] == "yes (KIP-33)"
    assert rows["0.10.1.1"]["LogAppendTime stamped by the broker (v1)"] == "✓ checked on 0.10.1.1"
    assert rows["0.9.0.1"]["CreateTime kept (v1)"].startswith("— (no timestamps before 0.10.0")


#: the scenarios of notebook 06's figure, each run live in the committed record
SCENARIOS = ["seed000-rolling-upgrade", "seed000-rolling-upgrade-ibp-0.10.0", "seed000-trial-rollback",
             "seed000-trial-rollback-ibp-0.10.0", "seed004-migration"]
#: the releases of the committed record, oldest first
RELEASES = ["0.9.0.1", "0.10.0.1", "0.10.1.1", "0.10.2.2", "0.11.0.3", "1.0.2", "1.1.1", "2.0.1", "2.1.1", "2.8.2"]


def test_the_steps_figure_has_one_row_per_scenario(rec):
    assert list(upgrade.SCENARIOS) == SCENARIOS
    fig = live_record.steps_figure(rec, upgrade.SCENARIOS)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == SCENARIOS
    html = live_record.scenarios_html(rec, upgrade.SCENARIOS)
    assert html.count("<table") == 5 and "<img" in html


def test_seed_vs_release_quotes_the_seed(rec):
    html = live_record.seed_vs_release_html(rec, upgrade.SCENARIOS)
    assert "seed004-migration, step 7." in html and "seed 004: &quot;" in html


def test_the_arc_covers_every_line_and_every_row(rec):
    releases = arc.arc_releases()
    assert set(kafka_lines.KAFKA_LINES) <= set(releases) and releases[0] == "0.9" and releases[-1] == "4.4"
    summary = {r["release"]: r for r in arc.line_summary(rec)}
    assert sum(r["changes"] for r in summary.values()) == len(kafka_lines.CHANGES) == len(arc.rows_table())
    assert "KIP-33" in summary["0.10.1"]["KIP / JIRA"].split(", ") and "time index" in summary["0.10.1"]["what changed"]
    assert summary["0.11"]["run live"].startswith("✓ 0.11.0.3: ")
    assert summary["4.4"]["run live"] == "—"


def test_the_arc_panel_follows_the_release(rec):
    panel = arc.arc_panel(rec)
    assert panel.error is None and "run live" in panel.caption_html
    panel.set(release="3.6")
    assert panel.error is None and "not run live" in panel.caption_html and "KIP-937" in panel.view_html()


def test_the_checks_figure_counts_the_record(rec):
    """The committed record (2026-12-02): 521 checks on 10 releases, all agreeing; per release, raw produces, raw
    fetches, client produces, client consumes and the dump (0.9.0.1: 2 topics × 2 produces and 2 Fetch versions;
    0.10.x: 3 topics more; 0.11 on: 4 topics, 4 codecs, idempotent batches)."""
    found = arc.arc_finding(rec)
    assert (found["live_releases"], found["checks"], found["agree"], found["differ"]) == (10, 521, 521, [])
    assert [(s["release"], s["checks"]) for s in rec.release_summary()] == list(zip(RELEASES, [20, 37, 40, 40, 64,
                                                                                               64, 64, 64, 64, 64]))
    fig = arc.checks_figure(rec)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == RELEASES
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        "raw produce", "raw fetch", "client produce", "client consume", "dump text (its own format)"]
    cells = [t.get_text() for t in fig.axes[0].texts]
    assert [cells[i:i + 5] for i in range(0, len(cells), 5)] == [
        ["4/4", "4/4", "6/6", "6/6", "1/1"], ["16/16", "9/9", "6/6", "6/6", "1/1"],
        ["16/16", "12/12", "6/6", "6/6", "1/1"], ["16/16", "12/12", "6/6", "6/6", "1/1"],
        *[["32/32", "20/20", "6/6", "6/6", "1/1"]] * 6]


def test_the_arc_figure_has_a_row_for_every_area_of_the_rows(rec):
    fig = arc.arc_figure(rec)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        "protocol", "producer", "produce", "fetch", "consumer", "log", "topic config", "broker config", "cleaner",
        "dump", "codec", "metrics"]
