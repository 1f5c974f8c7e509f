"""Notebook 02's data: LogValidator's timestamp bounds against skewed clocks, and who sees which timestamp."""
import pytest

from kafkafmt.errors import ConfigError
from kafkafmt.viz import timestamps as ts

H = ts.HOUR_MS


def test_bounds_reject_exactly_the_clocks_beyond_them():
    df = ts.skew_table(2, difference_h=1)  # skews -2, -1.5, ..., +2 h
    rejected = set(df[df["outcome"] == "rejected"]["skew_h"])
    assert rejected == {-2.0, -1.5, 1.5, 2.0}  # |skew| == bound is accepted: LogValidator rejects only diff > bound
    assert set(df[df["outcome"] == "rejected"]["error"]) == {"InvalidTimestampException"}
    assert ts.rejected_count(df) == 4


def test_before_and_after_bounds_are_independent_and_override_the_old_threshold():
    df = ts.skew_table(2, difference_h=0, before_h=2, after_h=0.5)  # KIP-937: before/after win over difference
    rejected = sorted(df[df["outcome"] == "rejected"]["skew_h"])
    assert rejected == [1.0, 1.5, 2.0]


def test_threshold_extremes():
    assert ts.rejected_count(ts.skew_table(2)) == 0  # Long.MAX_VALUE
    assert ts.rejected_count(ts.skew_table(2, difference_h=0)) == 8  # every skewed clock
    lat = ts.skew_table(2, difference_h=0, timestamp_type="LogAppendTime")
    assert ts.rejected_count(lat) == 0 and set(lat["stored_timestamp"]) == {ts.NOW_MS}


def test_invalid_settings_raise_kafkas_config_error():
    with pytest.raises(ConfigError, match="message.timestamp.after.max.ms"):
        ts.skew_table(1, after_h=-1)
    with pytest.raises(ValueError):
        ts.skew_table(1, producers=1)


def test_reader_views_per_generation():
    rows = {r["where"]: r for r in ts.reader_views(timestamp_type="CreateTime", skew_ms=-5000, n=2)}
    sent = [ts.NOW_MS - 5000, ts.NOW_MS - 4999]
    assert rows["leader (stored)"]["record timestamps"] == sent
    assert rows["follower (copied)"]["record timestamps"] == sent
    assert rows["leader (stored)"]["wrapper/batch timestamp"] == max(sent)  # wrapper = max inner (CreateTime)
    assert rows["consumer 0.9 (fetch v1)"]["record timestamps"] == [-1, -1]  # v0 has no timestamp
    assert rows["consumer 0.10 (fetch v3)"]["record timestamps"] == sent
    lat = {r["where"]: r for r in ts.reader_views(timestamp_type="LogAppendTime", n=2)}
    assert lat["consumer 3.9 (latest fetch)"]["record timestamps"] == [ts.NOW_MS] * 2
    assert lat["leader (stored)"]["wrapper/batch timestamp"] == ts.NOW_MS
