"""Notebook 03's data: the time index under Kafka's policy and seed 001's variant."""
import pytest

from kafkafmt.viz import timeindex as ti


@pytest.fixture(scope="module")
def result():
    return ti.compare(ti.workload(1, num_events=60), ti.log_config())


def test_growth_counts_the_real_index_entries():
    wl = ti.workload(2, num_events=40)
    cfg = ti.log_config()
    kafka = ti.index_growth(wl, cfg, "kafka")
    assert [r["append"] for r in kafka] == list(range(1, 41))
    final = ti.compare(wl, cfg)["policies"]["kafka"]["segments"]
    assert kafka[-1]["time_index_entries"] == sum(len(s["time_index_entries"]) for s in final)
    assert kafka[-1]["segments"] == len(final)
    with pytest.raises(ValueError):
        ti.index_growth(wl, cfg, "nope")


def test_lookups_never_miss_a_message_at_or_after_the_target(result):
    s = ti.guarantee_summary(result)
    assert s["kafka"]["max_missed"] == 0 and s["kip33-variant"]["max_missed"] == 0
    # minute-granular append-time entries make the variant return earlier offsets, so more is re-read
    assert s["kip33-variant"]["mean_earlier_seen"] >= s["kafka"]["mean_earlier_seen"]


def test_guarantee_counts_by_hand(result):
    recs = result["records"]
    for row in ti.guarantee(result, "kafka"):
        if row["offset"] < 0:
            continue
        before = [r for r in recs if r["offset"] < row["offset"]]
        after = [r for r in recs if r["offset"] >= row["offset"]]
        assert row["missed"] == sum(r["stored_timestamp"] >= row["target"] for r in before)
        assert row["earlier_seen"] == sum(r["stored_timestamp"] < row["target"] for r in after)


def test_no_skew_means_nothing_earlier_is_seen_under_kafkas_policy():
    res = ti.compare(ti.workload(3, num_events=40, max_skew_s=0), ti.log_config())
    assert ti.guarantee_summary(res)["kafka"]["max_earlier_seen"] == 0


def test_side_by_side_names_the_companion_partition(result):
    rows = ti.segments_side_by_side(result, partition=0)
    variant = [r for r in rows if r["policy"] == "kip33-variant"]
    assert variant and all("4294967295" in r["replicated_as"] for r in variant)  # ~0 as an unsigned int32
    assert all(r["time_index_entries"] >= 1 for r in variant)  # first message of each segment


def test_empty_workload_is_refused():
    with pytest.raises(ValueError):
        ti.workload(0, num_events=0)
