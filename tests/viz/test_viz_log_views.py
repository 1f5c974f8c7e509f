"""Notebooks 04, 05, 06: retention lifetimes, fetch costs and the upgrade stepper, on the real log and broker rules."""
import pytest

from kafkafmt.records import MemoryRecords
from kafkafmt.viz import costs, retention, upgrade


def test_lifetimes_follow_the_largest_timestamp_rule():
    rows = retention.lifetimes(retention.workload(3, max_skew_s=0), retention_ms=60_000)
    s = retention.summary(rows)
    assert s["deleted"] == s["records"] and s["early_fraction"] == 0  # no skew: nothing goes early
    # a segment is deleted at the first check after its largest timestamp is retention.ms old, so no record
    # outlives retention.ms by more than the segment's time span plus one check interval
    assert all(r["deleted_at"] - r["append_time"] >= 60_000 for r in rows)


def test_skew_deletes_early_under_createtime_only():
    ct = retention.monte_carlo(range(4), max_skew_s=90, progress=False)
    lat = retention.monte_carlo(range(4), max_skew_s=90, timestamp_type="LogAppendTime", progress=False)
    assert retention.summary(ct)["early_fraction"] > 0
    assert retention.summary(lat)["early_fraction"] == 0
    assert {r["seed"] for r in ct} == {0, 1, 2, 3}


def test_retention_refuses_nonsense():
    with pytest.raises(ValueError):
        retention.lifetimes(retention.workload(0), retention_ms=0)
    with pytest.raises(ValueError):
        retention.workload(0, timestamp_type="Wallclock")


def test_sample_log_is_contiguous():
    log = costs.sample_log(magic=2, codec="gzip", batches=3, records_per_batch=7)
    assert [r.offset for r in MemoryRecords(log).records()] == list(range(21))


def test_zero_copy_only_when_the_client_reads_the_topic_format():
    rows = {r["fetch_version"]: r for r in costs.fetch_costs(costs.sample_log(batches=2, records_per_batch=5))}
    assert not rows[1]["zero_copy"] and rows[1]["to_magic"] == "v0"
    assert not rows[3]["zero_copy"] and rows[3]["to_magic"] == "v1"
    assert rows[4]["zero_copy"] and rows[4]["records_touched"] == 0 and rows[4]["bytes_out"] == rows[4]["bytes_read"]
    assert rows[3]["records_touched"] == 10 and rows[3]["decompressions"] == rows[3]["compressions"] == 2


def test_relative_offsets_avoid_recompression():
    paths = {r["topic_format"]: r for r in costs.produce_paths(codec="gzip", records=10)}
    assert not paths["v1"]["recompressed"] and paths["v1"]["bytes_stored"] == paths["v1"]["bytes_in"]
    assert paths["v0"]["recompressed"] and paths["v2"]["converted"]
    assert all(p["first_offset"] == 1000 and p["last_offset"] == 1009 for p in paths.values())


def test_upgrade_steps_and_the_rollback_hazard():
    per = upgrade.conversions_per_step()
    assert [p["converted_on_produce"] for p in per] == [False, True, False, True, False]
    assert per[2]["zero_copy_consumers"] == 2 and per[2]["records_re_encoded"] == 20
    assert per[3]["consumers_failing"] == 1  # topic back on 0.9.0: phase-2 v1 data reaches a 0.9 consumer as is
    rb = upgrade.run(3)["fetch"][0]
    assert rb["zero copy"] and rb["reads"].startswith("✗")
    with pytest.raises(ValueError):
        upgrade.run(len(upgrade.STEPS))


def test_scenario_stepper_reads_the_shipped_scenarios():
    d = upgrade.scenario_step("seed000-rolling-upgrade-ibp-0.10.0", 14)
    assert d["steps"] == 17 and d["ok"] and d["stopped"] is None and d["not_run"] == []
    (hop,) = d["hops"]
    assert hop["conversion"] == "converted down v1→v0" and hop["magic_in"] == 1 and hop["magic_out"] == 0
    assert any("zero-copy" in w for w in d["warnings"])
    with pytest.raises(ValueError, match="steps 1..6"):
        upgrade.scenario_step("seed000-trial-rollback-ibp-0.10.0", 7)
    with pytest.raises(ValueError):
        upgrade.scenario_step("nope", 1)


def test_scenario_stepper_ends_the_seeds_plan_at_the_refused_bounce():
    """Seed 000's own plan on 0.10.0 brokers: the format bump under ApiVersion 0.9.0-1 is refused (KAFKA-6238)."""
    d = upgrade.scenario_step("seed000-rolling-upgrade", 11)
    assert d["steps"] == 17 and not d["ok"]  # the whole plan: 11 run, 6 left unrun by the refusal
    (hop,) = d["hops"]
    assert (hop["conversion"], hop["actor"]) == ("refused to start", "A")
    assert hop["error"].endswith("log.message.format.version 0.10.0 cannot be used when "
                                 "inter.broker.protocol.version is set to 0.10.0-IV0")
    assert d["stopped"].startswith("broker A (Kafka 0.10.0) refused to start: ") and len(d["not_run"]) == 6
    head, _ = upgrade.scenario_view(d)
    assert "The run stops here:" in head and "12. phase 2.2.1" in head
    assert upgrade.scenario_step("seed000-rolling-upgrade", 10)["stopped"] is None
    after = upgrade.scenario_step("seed000-rolling-upgrade", 12)
    assert after["name"].startswith("12. phase 2.2.1") and after["name"].endswith("(not run)") and after["hops"] == []
    assert "Not run: the run stopped earlier:" in upgrade.scenario_view(after)[0]
