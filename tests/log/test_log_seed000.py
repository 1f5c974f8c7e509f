"""Seed 000 (KIP-32) §6 and §7 as checks on the log, each with a workload that shows the effect.

§6.1  a timestamp search: every message at or after the timestamp is consumed; earlier ones may be seen.
§6.2  retention looks at the last time index entry (the segment's largest timestamp).
§6.3  rolling depends on the segment's first timestamp (the KIP says "earliest"; Kafka uses the FIRST
      batch's), which is re-read from the active segment after a restart.
§7.1  timestamps are not monotonic.
§7.2  retention is non-deterministic: when a message is deleted depends on the other messages' timestamps.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkafmt.layout import TIME_INDEX_ENTRY
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.index import TimestampOffset
from kafkafmt.records import MemoryRecords
from log_helpers import batch, one

DAY = 24 * 3600 * 1000
T0 = 1_700_000_000_000


def raft(log, data):
    return log.append_as_leader(data, origin="RAFT_LEADER")


def _consume_from(log, offset):
    return [(r.offset, r.timestamp) for r in MemoryRecords(log.read(offset, 10**9, isolation="log_end").records).records()
            if r.offset >= offset] + _rest(log, offset)


def _rest(log, offset):
    out, nxt = [], None
    r = log.read(offset, 10**9, isolation="log_end")
    recs = list(MemoryRecords(r.records).records())
    if recs:
        nxt = recs[-1].offset + 1
    while nxt is not None and nxt < log.log_end_offset:
        recs = list(MemoryRecords(log.read(nxt, 10**9, isolation="log_end").records).records())
        out += [(x.offset, x.timestamp) for x in recs if x.offset >= nxt]
        nxt = recs[-1].offset + 1 if recs else None
    return out


# --- §6.1 ----------------------------------------------------------------------------------------
def test_6_1_search_consumes_everything_after_and_may_show_earlier(make_log, clock):
    log = make_log(LogConfig(index_interval_bytes=0))
    stamps = [100, 300, 200, 400, 250, 500]  # producers' CreateTime, out of order
    for off, ts in enumerate(stamps):
        raft(log, one(off, ts))
    r = log.fetch_offset_by_timestamp(250)
    assert (r.offset, r.timestamp) == (1, 300)  # the first offset whose timestamp >= 250
    seen = _consume_from(log, r.offset)
    assert {o for o, ts in enumerate(stamps) if ts >= 250} <= {o for o, _ in seen}  # nothing at/after 250 missed
    assert (2, 200) in seen  # ...but an earlier message (200 < 250) is seen too


def test_6_1_a_far_future_message_makes_a_search_start_in_an_old_segment(make_log, clock):
    s = len(one(0, 0))
    log = make_log(LogConfig(segment_bytes=3 * s, retention_ms=-1))
    stamps = [T0, T0 + 3 * DAY, T0 + 2, T0 + 3, T0 + 4, T0 + 5, T0 + 6, T0 + 7, T0 + 8]  # offset 1: clock 3 days fast
    for off, ts in enumerate(stamps):
        raft(log, one(off, ts))
    assert [x.base_offset for x in log.segments] == [0, 3, 6]
    r = log.fetch_offset_by_timestamp(T0 + 7)
    # segment 0's largest timestamp (T0+3d) is >= target, so the search stops there: offset 1
    assert r.offset == 1
    seen = {o for o, _ in _consume_from(log, r.offset)}
    assert {7, 8} <= seen and {2, 3, 4, 5, 6} <= seen  # correct, but five earlier messages are re-read


# --- §6.2 ----------------------------------------------------------------------------------------
def test_6_2_retention_follows_the_last_time_index_entry(make_log, clock, tmp_path):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s, retention_ms=DAY)
    log = make_log(cfg)
    for off, ts in enumerate([T0, T0 + 5, T0 + 10 * DAY, T0 + 10 * DAY + 1]):
        raft(log, one(off, ts))
    log.close()
    seg0 = tmp_path / "t-0" / "00000000000000000000.timeindex"
    # the roll wrote the segment's largest timestamp as the last entry (LogSegment.onBecomeInactiveSegment)
    assert TIME_INDEX_ENTRY.unpack_from(seg0.read_bytes(), len(seg0.read_bytes()) - 12) == (T0 + 5, 1)
    # after a restart the segment's largest timestamp IS that entry: move it 2 days ahead on disk...
    raw = bytearray(seg0.read_bytes())
    TIME_INDEX_ENTRY.pack_into(raw, len(raw) - 12, T0 + 2 * DAY, 1)
    seg0.write_bytes(bytes(raw))
    log = Log.open(tmp_path / "t-0", cfg, clock)
    assert log.segments[0].largest_timestamp() == T0 + 2 * DAY
    clock.set(T0 + 5 + DAY + 1)  # the messages are expired, the entry is not
    assert log.delete_old_segments() == 0
    clock.set(T0 + 2 * DAY + DAY + 1)
    assert log.delete_old_segments() == 1  # deleted when the last entry expires
    log.close()


# --- §6.3 ----------------------------------------------------------------------------------------
def test_6_3_rolling_uses_the_first_timestamp_and_survives_a_restart(make_log, clock, tmp_path):
    cfg = LogConfig(segment_ms=1000)
    log = make_log(cfg)
    raft(log, one(0, T0))
    raft(log, one(1, T0 - 500))  # an EARLIER timestamp than the first: not the reference for rolling
    raft(log, one(2, T0 + 1000))  # first + segment.ms: no roll (earliest + 1000 would have rolled)
    assert log.number_of_segments == 1
    log.crash()
    again = Log.open(tmp_path / "t-0", cfg, clock, clean_shutdown=False)
    assert again.active_segment.rolling_based_timestamp is None  # not kept across the restart...
    info = again.append_as_leader(one(3, T0 + 1001), origin="RAFT_LEADER")
    assert info.roll_reasons == ["segment.ms"]  # ...re-read from the active segment's first batch
    assert again.segments[0].rolling_based_timestamp == T0
    again.close()


def test_6_3_a_bad_first_timestamp_decides_the_whole_segment(make_log, clock):
    cfg = LogConfig(segment_ms=1000, segment_bytes=10**6)
    future = make_log(cfg, name="future-0")
    raft(future, one(0, T0 + 365 * DAY))  # first message a year ahead: message time never reaches first + 1s
    for off in range(1, 50):
        raft(future, one(off, T0 + off * 10_000))
    assert future.number_of_segments == 1
    past = make_log(cfg, name="past-0")
    raft(past, one(0, T0 - 365 * DAY))  # first message a year behind: the next append rolls at once
    info = past.append_as_leader(one(1, T0), origin="RAFT_LEADER")
    assert info.roll_reasons == ["segment.ms"] and past.number_of_segments == 2


# --- §7.1 ----------------------------------------------------------------------------------------
def test_7_1_timestamps_are_not_monotonic_and_the_index_keeps_the_running_max(make_log, clock):
    log = make_log(LogConfig(index_interval_bytes=0))
    stamps = [T0 + 50, T0 + 10, T0 + 60, T0 + 20, T0 + 30, T0 + 70, T0 + 65]
    for off, ts in enumerate(stamps):
        raft(log, one(off, ts))
    entries = log.active_segment.time_index.all_entries()
    # each entry is (max so far, the offset that set it), written at the offset-index moments (every append
    # but the first) only when the max has grown: at append 1 the max is still offset 0's T0+50
    assert entries == [TimestampOffset(T0 + 50, 0), TimestampOffset(T0 + 60, 2), TimestampOffset(T0 + 70, 5)]
    assert [e.timestamp for e in entries] == sorted(e.timestamp for e in entries)
    for target in range(T0, T0 + 75, 5):
        r = log.fetch_offset_by_timestamp(target)
        expected = min((o for o, ts in enumerate(stamps) if ts >= target), default=None)
        assert (r.offset if r else None) == expected


# --- §7.2 ----------------------------------------------------------------------------------------
def test_7_2_one_far_future_message_keeps_its_segment_and_all_later_ones(make_log, clock):
    s = len(one(0, 0))
    # (a long segment.ms: with the default 7 days the far-future message would itself roll a segment, §6.3)
    cfg = LogConfig(segment_bytes=2 * s, retention_ms=DAY, segment_ms=365 * DAY)
    log = make_log(cfg)
    stamps = [T0, T0 + 1, T0 + 2, T0 + 30 * DAY, T0 + 4, T0 + 5, T0 + 6]  # offset 3: a broken producer clock
    for off, ts in enumerate(stamps):
        raft(log, one(off, ts))
    assert [x.base_offset for x in log.segments] == [0, 2, 4, 6]
    clock.set(T0 + 10 * DAY)  # every message but offset 3 is 10 days old
    assert log.delete_old_segments() == 1  # only segment 0: segment 2 holds the far-future message...
    assert [x.base_offset for x in log.segments] == [2, 4, 6]  # ...and retention deletes a prefix only
    clock.set(T0 + 31 * DAY + 1)
    assert log.delete_old_segments() == 3 and log.log_start_offset == 7


def test_7_2_a_slow_producer_clock_gets_its_data_deleted_right_after_the_roll(make_log, clock):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s, retention_ms=DAY)
    log = make_log(cfg)
    clock.set(T0)
    raft(log, one(0, T0 - 2 * DAY))  # written now, stamped two days ago
    raft(log, one(1, T0 - 2 * DAY))
    raft(log, one(2, T0))  # rolls
    assert log.delete_old_segments() == 1  # just written, already "expired"
    assert log.log_start_offset == 2


def test_7_2_the_same_message_lives_longer_next_to_a_newer_one(make_log, clock):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s, retention_ms=DAY)
    alone, shared = make_log(cfg, name="a-0"), make_log(cfg, name="b-0")
    raft(alone, one(0, T0))
    raft(alone, one(1, T0))
    raft(shared, one(0, T0))
    raft(shared, one(1, T0 + DAY // 2))  # a neighbour stamped 12 hours later
    for log in (alone, shared):
        raft(log, one(2, T0 + DAY))  # roll both
    clock.set(T0 + DAY + 1)
    assert alone.delete_old_segments() == 1 and shared.delete_old_segments() == 0
    clock.set(T0 + DAY // 2 + DAY + 1)
    assert shared.delete_old_segments() == 1  # offset 0 outlived its twin by 12 hours


# --- property: a timestamp lookup never skips a message at or after the target --------------------
@st.composite
def skewed_workload(draw):
    skews = draw(st.lists(st.integers(-60_000, 60_000), min_size=1, max_size=4))
    events = []
    t = T0
    for _ in range(draw(st.integers(1, 40))):
        t += draw(st.integers(0, 20_000))
        p = draw(st.integers(0, len(skews) - 1))
        n = draw(st.integers(1, 3))
        events.append((t, [max(0, t + skews[p] + draw(st.integers(-500, 500))) for _ in range(n)]))
    return events


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=skewed_workload(), seg_batches=st.integers(1, 4), interval=st.sampled_from([0, 100, 4096]),
       retention=st.sampled_from([-1, 60_000, 300_000]), reopen=st.sampled_from([None, "clean", "crash"]),
       granularity=st.sampled_from(["batch", "append"]),
       targets=st.lists(st.integers(T0 - 120_000, T0 + 900_000), min_size=1, max_size=12))
def test_timestamp_lookup_never_skips_a_message_at_or_after_the_target(workload, seg_batches, interval, retention,
                                                                       reopen, granularity, targets):
    d = Path(tempfile.mkdtemp(prefix="kafkafmt-prop-"))
    try:
        clock = SimulatedClock(T0)
        size1 = len(one(0, 0, size=8))
        cfg = LogConfig(segment_bytes=seg_batches * 3 * size1, index_interval_bytes=interval, retention_ms=retention,
                        segment_index_bytes=240)
        log = Log(d / "p-0", cfg, clock, index_granularity=granularity)
        stamps = {}
        for t, tss in workload:
            clock.set(t)
            data = batch(log.log_end_offset, [(ts, b"k", b"v" * 8) for ts in tss])
            info = raft(log, data)
            for i, ts in enumerate(tss):
                stamps[info.first_offset + i] = ts
            log.delete_old_segments()
        if reopen == "clean":
            log.close()
            log = Log.open(d / "p-0", cfg, clock)
        elif reopen == "crash":
            log.crash()
            log = Log.open(d / "p-0", cfg, clock, clean_shutdown=False)
        retained = {o: ts for o, ts in stamps.items() if o >= log.log_start_offset}
        for target in targets:
            r = log.fetch_offset_by_timestamp(target)
            at_or_after = [o for o, ts in retained.items() if ts >= target]
            if not at_or_after:
                assert r is None
                continue
            assert r is not None
            assert r.offset <= min(at_or_after)  # nothing at/after the target is skipped
            assert retained[r.offset] >= target and r.timestamp == retained[r.offset]
            assert r.offset == min(at_or_after)  # and Kafka's answer is exactly the first such offset
        log.close()
    finally:
        shutil.rmtree(d, ignore_errors=True)
