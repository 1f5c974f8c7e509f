"""The notebooks' panels, driven as a reader would drive them: set a control, assert what the view shows.

These are the checks that used to sit between the notebooks' paragraphs ("Checked:" cells); each
finding keeps its check here, on the same panel the notebook displays."""
import re

import pytest
from traitlets import TraitError

from kafkafmt.viz import anatomy, costs, idempotence, negative, retention, timeindex, timestamps, upgrade


def _text(panel):
    return re.sub(r"<[^>]+>", "", panel.caption_html)


# ---------------------------------------------------------------------------------------------- 01
def test_01_byte_panel_offers_headers_and_zstd_only_for_v2():
    p = anatomy.byte_panel()
    before = p.data
    p.set(count=4)
    assert p.error is None and len(p.data) > len(before)
    p.set(magic=0)
    assert p.error is None and p.controls["headers"].disabled and p.values["headers"] == 0
    assert "zstd" not in p.controls["codec"].options
    assert p.data[16] == 0  # byte 16: the magic byte of a v0 message
    assert "message format v0" in p.view.value and "headers control is off" in _text(p)
    with pytest.raises(TraitError):
        p.set(codec="zstd")
    p.set(headers=2)  # a disabled control moved by code is put back: the view never shows a v0 "with headers"
    assert p.values["headers"] == 0 and p.error is None
    p.set(magic=2, headers=1, codec="zstd")
    assert not p.controls["headers"].disabled and p.error is None and p.values["codec"] == "zstd"


def test_01_byte_panel_caption_counts_the_bytes_shown():
    p = anatomy.byte_panel()
    assert _text(p).startswith(f"{len(p.data)} bytes for 2 records")
    assert "from 3 records on" in _text(p)  # v2_break_even for 4-byte keys and 12-byte values


def test_01_overhead_panel_codec_changes_the_data_and_zstd_is_v2_only():
    p = anatomy.overhead_panel()
    plain = p.data
    p.set(codec="gzip")
    assert not plain["size"].equals(p.data["size"])
    big = p.data.query("magic == 2 and records == 200")["overhead_per_record"].item()
    assert big < plain.query("magic == 2 and records == 200")["overhead_per_record"].item() and big < 0
    p.set(codec="zstd")
    assert set(p.data["magic"]) == {2} and "zstd exists for v2 only" in _text(p)
    p.set(codec="none")
    assert f"from {anatomy.v2_break_even()} records per batch on" in _text(p)


# ---------------------------------------------------------------------------------------------- 02
def test_02_skew_panel_bounds_and_their_window():
    p = timestamps.skew_panel()
    n = timestamps.rejected_count(p.data)
    assert n == 4 and _text(p).startswith("4 of 9 producers rejected: 2 with clocks more than 1 h behind")
    p.set(before_h=3)
    assert timestamps.rejected_count(p.data) == 2 < n
    assert p.controls["after_h"].min == 0 and p.controls["before_h"].min == 0  # no negative bound on offer
    p.set(timestamp_type="LogAppendTime")
    assert p.controls["before_h"].disabled and p.controls["after_h"].disabled
    assert timestamps.rejected_count(p.data) == 0 and _text(p).startswith("0 of 9 producers rejected")
    p.set(timestamp_type="CreateTime")
    assert not p.controls["before_h"].disabled


def test_02_negative_bound_is_kafkas_config_error():
    from kafkafmt.errors import ConfigError
    with pytest.raises(ConfigError):
        timestamps.skew_table(2, after_h=-1)


def test_02_readers_panel_logappendtime_means_the_brokers_time():
    p = timestamps.readers_panel()
    create = p.data
    p.set(timestamp_type="LogAppendTime")
    assert not create.equals(p.data)
    current = p.data[p.data["where"] == "consumer 3.9 (latest fetch)"]["record timestamps"].item()
    old = p.data[p.data["where"] == "consumer 0.9 (fetch v1)"]["record timestamps"].item()
    assert set(current) == {timestamps.NOW_MS} and set(old) == {-1}
    assert "the broker's append time" in _text(p) and "no timestamp (-1)" in _text(p)


# ---------------------------------------------------------------------------------------------- 03
def test_03_lookups_panel_skew_turns_the_comparison_over():
    p = timeindex.lookups_panel()
    assert (p.data["missed"] == 0).all()
    m = p.data.groupby("policy")["earlier_seen"].max()
    assert m["kip33-variant"] > m["kafka"]  # at ±30 s the variant re-reads more
    p.set(max_skew_s=0)
    assert p.data[p.data["policy"] == "kafka"]["earlier_seen"].max() == 0
    p.set(max_skew_s=120)
    m = p.data.groupby("policy")["earlier_seen"].max()
    assert m["kafka"] == 39 > m["kip33-variant"] and "(Kafka's index more)" in _text(p)
    assert timeindex.turnover_skew(1) == 40
    assert timeindex.skew_ranges(1) == {"variant": ["0-30 s", "70 s"], "kafka": ["40-60 s", "80-120 s"], "tie": []}
    assert ("the KIP-33 variant re-reads more at 0-30 s and 70 s of skew; Kafka's index re-reads more at 40-60 s "
            "and 80-120 s of skew") in _text(p)
    for skew, ranges in ((30, "0-30 s"), (70, "70 s"), (80, "80-120 s")):  # the ranges say what each skew shows
        m = timeindex.max_earlier_seen(1, skew)
        who = "variant" if m["kip33-variant"] > m["kafka"] else "kafka"
        assert ranges in timeindex.skew_ranges(1)[who]
    assert p.controls["num_events"].min >= 1  # an empty workload is not on offer


def test_03_the_finding_never_misses_a_message():
    result = timeindex.compare(timeindex.workload(seed=1), timeindex.log_config())
    assert all(s["max_missed"] == 0 for s in timeindex.guarantee_summary(result).values())


# ---------------------------------------------------------------------------------------------- 04
def test_04_one_panel_opens_where_early_deletion_shows():
    p = retention.one_panel()
    s = retention.summary(p.data.to_dict("records"))
    assert s["early_fraction"] > 0.5 and all(k < 0 for k in p.data.attrs["skews_ms"])
    assert "all behind the broker" in _text(p)
    p.set(max_skew_s=0)
    assert retention.summary(p.data.to_dict("records"))["early_fraction"] == 0
    p.set(max_skew_s=180, seed=3)
    skewed = p.data
    p.set(timestamp_type="LogAppendTime")
    assert not skewed.equals(p.data) and retention.summary(p.data.to_dict("records"))["early_fraction"] == 0
    assert p.controls["retention_min"].min > 0  # retention 0 is not on offer
    with pytest.raises(ValueError):
        retention.lifetimes(retention.workload(0), retention_ms=0)


def test_04_caption_names_the_seeds_with_early_deletion():
    early = [s for s in range(12)
             if retention.summary(retention.lifetimes(retention.workload(s, max_skew_s=60)))["early_fraction"] > 0]
    assert early == [4, 7, 8]
    assert "seeds 4, 7 and 8 of 0-11" in _text(retention.one_panel())


# ---------------------------------------------------------------------------------------------- 05
def test_05_costs_panel_zstd_only_for_v2_and_batches_scale_the_work():
    p = costs.costs_panel()
    touched = p.data["records_touched"].sum()
    p.set(records_per_batch=200)
    assert p.data["records_touched"].sum() == 2 * touched
    p.set(codec="zstd", magic=1)
    assert p.error is None and "zstd" not in p.controls["codec"].options and p.values["codec"] == "none"
    with pytest.raises(TraitError):
        p.set(codec="zstd")
    assert "re-encodes" in _text(p)


def test_05_measured_time_is_drawn_apart_from_the_computed_counts():
    p = costs.costs_panel()
    view = p.view.value
    counts, measured = view.index("computed: records re-encoded"), view.index("Measured, not computed")
    assert view.count("<img") == 2 and counts < measured
    assert "CPU time" not in view[:measured].split("<table")[1]  # the table holds no measured column


# ---------------------------------------------------------------------------------------------- 06
def test_06_stepper_phase_2_down_converts_for_the_old_consumer():
    p = upgrade.stepper_panel()
    assert all(f["zero copy"] for f in p.data["fetch"])
    p.set(upto=2)
    old = p.data["fetch"][0]
    assert not old["zero copy"] and old["converted to"] == "v0"
    p.set(upto=3)
    assert "0.9 consumer (fetch v1) cannot read the log" in _text(p)


def test_06_scenario_step_slider_spans_the_scenarios_steps():
    p = upgrade.scenario_panel()
    assert p.controls["step"].max == upgrade.scenario_steps("seed000-rolling-upgrade") == 17
    p.set(step=11)
    assert p.data["hops"][0]["conversion"] == "refused to start"
    assert "A broker refused to start: 6 step(s) not run." in _text(p)
    p.set(name="seed000-rolling-upgrade-ibp-0.10.0")
    assert p.controls["step"].max == 17
    p.set(step=14)
    hop = p.data["hops"][0]
    assert hop["conversion"] == "converted down v1→v0" and hop["actor"] == "c-straggler"
    p.set(name="seed000-trial-rollback-ibp-0.10.0")
    assert p.controls["step"].max == 6 and p.values["step"] == 6 and p.error is None
    assert _text(p).startswith("Step 6 of 6")
    p.set(name="seed000-trial-rollback")  # the seed's plan stops at step 1: its range is still the plan's 6 steps
    assert p.controls["step"].max == 6 and p.error is None and "A broker refused to start: 5 step(s) not run." in _text(p)


# ---------------------------------------------------------------------------------------------- 07
def test_07_grid_panel_safe_mode_in_the_two_designs():
    p = idempotence.grid_panel()
    seed = p.data
    assert seed.loc["v1", "safe"] == "↓ v1, idempotence lost (broker)"
    p.set(variant="kafka")
    assert p.data.loc["v1", "safe"] == "✗ ConfigException (client)"
    assert p.data.loc["v1", "true"] == "✗ UnsupportedForMessageFormatException (broker)"
    assert "11 of 15 end differently in the seed design" in _text(p)


def test_07_the_two_counts_add_up():
    r = idempotence.reconciliation()
    assert (r["combinations"], r["differ"], r["cells"]) == (60, 26, 30)
    assert r["reproduced"] == r["cells"]
    assert r["differ_client"] - r["error_name_only"] == r["kafka_differs"]


def test_07_downgrade_to_v0_also_loses_the_timestamps():
    p = idempotence.downgrade_panel()
    assert "timestamps" not in p.data["lost"]
    p.set(to_magic=0)
    assert "timestamps" in p.data["lost"] and p.data["bytes_after"] < idempotence.downgrade(1)["bytes_after"]


# ---------------------------------------------------------------------------------------------- 08
def test_08_bits_panel_a_1969_timestamp_needs_the_bit():
    p = negative.bits_panel()
    extended = p.data["bytes"]
    assert p.error is None and "stored -86400000" in _text(p) and "1969-12-31" in _text(p)
    p.set(extended=False)
    assert p.error == "IllegalArgumentError: Invalid negative timestamp -86400000" and p.data is None
    assert "<table" not in p.view.value and "stored" not in p.view.value  # no stale bytes beside the error
    p.set(timestamp=-1)
    assert p.error is None and p.data["bytes"][22] == extended[22] & 0x7F  # attributes, low byte
    assert "changes 5 bytes" in _text(p)
