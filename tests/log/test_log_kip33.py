"""Seed 001 (the rejected KIP-33 variant) as a selectable time-index policy, and the same workloads under
both designs.  Expected values come from the seed's rules (quoted in kafkafmt/log/kip33.py) and, for
the shipped design, from kafka-rules §6-§7."""
from __future__ import annotations

import pytest

from kafkafmt.gen import compare_policies
from kafkafmt.gen.workloads import Workload
from kafkafmt.layout import TIME_INDEX_ENTRY
from kafkafmt.log import Log, LogConfig, SimulatedClock, companion_partition
from kafkafmt.log.kip33 import fetch, partition_of_companion, replicate
from kafkafmt.records import MemoryRecords
from log_helpers import one

M = 60_000
DAY = 24 * 3600 * 1000
T0 = 1_700_000_000_000 // M * M  # a minute boundary


def raft(log, data):
    return log.append_as_leader(data, origin="RAFT_LEADER")


def entries(seg):
    return [(e.timestamp - T0, e.offset) for e in seg.time_index]


def test_companion_partition_numbers():
    assert companion_partition(0) == 0xFFFFFFFF
    assert companion_partition(1) == 0xFFFFFFFE
    assert companion_partition(2**31 - 1) == 0x80000000
    assert all(partition_of_companion(companion_partition(p)) == p for p in (0, 1, 7, 2**31 - 1))
    with pytest.raises(ValueError):
        companion_partition(-1)


def test_entries_for_first_message_first_of_each_minute_and_last_message(tmp_path):
    clock = SimulatedClock(T0)
    s = len(one(0, 0))
    log = Log(tmp_path / "t-0", LogConfig(segment_bytes=6 * s, segment_index_bytes=120), clock,
              time_index_policy="kip33-variant")
    appends = [10_000, 20_000, 50_000, M + 5_000, M + 30_000, 2 * M + 59_000,  # segment 0 (6 batches)
               3 * M, 3 * M + 1, 5 * M, 5 * M + 2]                            # segment 6
    for i, dt in enumerate(appends):
        clock.set(T0 + dt)
        raft(log, one(i, 12345))  # the message timestamps play no part
    seg0, seg6 = log.segments
    # first message (0), first of minute 1 (3), first of minute 2 (5) -- 5 is also the last message
    assert entries(seg0) == [(10_000, 0), (M + 5_000, 3), (2 * M + 59_000, 5)]
    assert entries(seg6) == [(3 * M, 6), (5 * M, 8)]
    assert seg6.largest_timestamp() == T0 + 5 * M + 2  # the in-memory LogAppendTime of the last message
    log.close()  # the last message of the active segment gets its entry
    raw = (tmp_path / "t-0" / "00000000000000000006.timeindex").read_bytes()
    assert [TIME_INDEX_ENTRY.unpack_from(raw, i) for i in range(0, len(raw), 12)] == \
        [(T0 + 3 * M, 0), (T0 + 5 * M, 2), (T0 + 5 * M + 2, 3)]  # same 12-byte layout, relative offsets


def test_messages_keep_create_time_even_on_a_log_append_time_topic(tmp_path):
    from kafkafmt.gen.workloads import client_batch
    clock = SimulatedClock(T0 + 30_000)
    topic = LogConfig.from_properties({"message.timestamp.type": "LogAppendTime"})
    shipped = Log(tmp_path / "a-0", topic, clock)
    variant = Log(tmp_path / "b-0", topic, clock, time_index_policy="kip33-variant")
    for log in (shipped, variant):
        log.append_as_leader(client_batch([(T0 - DAY, b"k", b"v")]))
    b1 = next(MemoryRecords(shipped.read(0, 10**6).records).batches())
    b2 = next(MemoryRecords(variant.read(0, 10**6).records).batches())
    assert (b1.timestamp_type.kafka_name, b1.max_timestamp) == ("LogAppendTime", T0 + 30_000)
    assert (b2.timestamp_type.kafka_name, b2.max_timestamp) == ("CreateTime", T0 - DAY)
    assert entries(variant.active_segment) == [(30_000, 0)]  # LogAppendTime only in the index


def test_retention_and_rolling_use_log_append_time(tmp_path):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s, retention_ms=DAY, segment_ms=7 * DAY)
    clock = SimulatedClock(T0)
    kafka = Log(tmp_path / "k-0", cfg, clock)
    kip = Log(tmp_path / "v-0", cfg, clock, time_index_policy="kip33-variant")
    # one producer a month ahead, then one two days behind; all appended at T0 + 1 minute steps
    stamps = [T0 + 30 * DAY, T0 + 30 * DAY, T0 - 2 * DAY, T0 - 2 * DAY, T0, T0]
    for i, ts in enumerate(stamps):
        clock.set(T0 + i * M)
        for log in (kafka, kip):
            raft(log, one(i, ts))
    assert [x.base_offset for x in kafka.segments] == [x.base_offset for x in kip.segments] == [0, 2, 4]
    clock.set(T0 + 5 * M)
    # shipped: segment 2 (stamped two days ago) is "expired" but sits behind segment 0 (a month ahead)
    assert kafka.delete_old_segments() == 0
    assert kip.delete_old_segments() == 0  # variant: nothing was appended more than a day ago
    clock.set(T0 + 1 * M + DAY + 1)
    assert kip.delete_old_segments() == 1  # LogAppendTime of segment 0's last message + retention
    assert kafka.delete_old_segments() == 0
    clock.set(T0 + 30 * DAY + DAY + 1)
    assert kafka.delete_old_segments() == 3  # finally, everything at once
    # rolling: a first message a month ahead blocks message-time rolls in the shipped design only
    k2 = Log(tmp_path / "k2-0", LogConfig(segment_ms=10 * M), SimulatedClock(T0))
    v2 = Log(tmp_path / "v2-0", LogConfig(segment_ms=10 * M), SimulatedClock(T0), time_index_policy="kip33-variant")
    for log in (k2, v2):
        raft(log, one(0, T0 + 30 * DAY))
        log.clock.set(T0 + 10 * M + 1)
        raft(log, one(1, T0 + 10 * M + 1))
    assert k2.number_of_segments == 1 and v2.number_of_segments == 2


def test_lookup_by_log_append_time_is_conservative_to_the_minute(tmp_path):
    clock = SimulatedClock(T0)
    log = Log(tmp_path / "t-0", LogConfig(), clock, time_index_policy="kip33-variant")
    appended = {}
    for i, dt in enumerate([0, 10_000, 40_000, M + 1000, M + 2000, 2 * M + 500]):
        clock.set(T0 + dt)
        raft(log, one(i, 5))  # message timestamps are all 5: useless for a lookup
        appended[i] = T0 + dt
    for target in range(T0 - 1000, T0 + 3 * M, 2500):
        r = log.fetch_offset_by_timestamp(target)
        later = [o for o, t in appended.items() if t >= target]
        if not later:
            assert r is None
            continue
        assert r.offset <= min(later)  # nothing appended at or after the target is skipped
        # ...but up to a minute of earlier messages may come back: the answer is an indexed offset
        assert appended[r.offset] >= target - M
    r = log.fetch_offset_by_timestamp(T0 + 30_000)
    assert r.offset == 0  # the minute's first entry (offset 0 at T0), although offset 2 arrived at T0+40s
    shipped = Log(tmp_path / "s-0", LogConfig(), clock)
    raft(shipped, one(0, 5))
    assert shipped.fetch_offset_by_timestamp(T0 + 30_000) is None  # by message time: nothing that late


def test_followers_copy_the_leaders_entries_instead_of_rebuilding(tmp_path):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=4 * s, segment_index_bytes=120)
    # the follower's clock is 30 days ahead: it must neither stamp nor roll by it
    lclock, fclock = SimulatedClock(T0), SimulatedClock(T0 + 30 * DAY)
    leader = Log(tmp_path / "l" / "t-3", cfg, lclock, time_index_policy="kip33-variant")
    follower = Log(tmp_path / "f" / "t-3", cfg, fclock, time_index_policy="kip33-variant")
    for i in range(10):
        lclock.set(T0 + i * 45_000)
        raft(leader, one(i, 1))
        if i % 3 == 1:
            resp = fetch(leader, follower)
            assert resp["companion"]["partition"] == companion_partition(3) == 0xFFFFFFFC
            assert all(off < leader.log_end_offset for _, off in resp["companion"]["entries"])
            follower.append_as_follower(resp["records"], companion_entries=resp["companion"]["entries"])
    replicate(leader, follower)
    assert [entries(x) for x in follower.segments] == [entries(x) for x in leader.segments]
    leader.close()
    follower.close()
    for name in ("00000000000000000000.timeindex", "00000000000000000004.timeindex"):
        assert (tmp_path / "f" / "t-3" / name).read_bytes() == (tmp_path / "l" / "t-3" / name).read_bytes()


def test_truncation_truncates_the_index_with_the_log(tmp_path):
    clock = SimulatedClock(T0)
    log = Log(tmp_path / "t-0", LogConfig(), clock, time_index_policy="kip33-variant")
    for i in range(6):
        clock.set(T0 + i * M)
        raft(log, one(i, 1))
    assert [o for _, o in entries(log.active_segment)] == [0, 1, 2, 3, 4, 5]
    log.truncate_to(3)
    assert [o for _, o in entries(log.active_segment)] == [0, 1, 2]
    clock.set(T0 + 10 * M)
    raft(log, one(3, 1))
    assert entries(log.active_segment)[-1] == (10 * M, 3)


@pytest.mark.parametrize("mode", ["keep", "rebuild"])
def test_crash_recovery_keeps_or_restamps_the_index(tmp_path, mode):
    clock = SimulatedClock(T0)
    d = tmp_path / "t-0"
    log = Log(d, LogConfig(), clock, time_index_policy="kip33-variant", kip33_recovery=mode)
    for i in range(4):
        clock.set(T0 + i * M)
        raft(log, one(i, 1))
    log.crash()
    data = (d / "00000000000000000000.log").read_bytes()
    (d / "00000000000000000000.log").write_bytes(data[:3 * len(one(0, 1))])  # lose offset 3
    clock.set(T0 + DAY)
    again = Log.open(d, LogConfig(), clock, clean_shutdown=False, time_index_policy="kip33-variant",
                     kip33_recovery=mode)
    if mode == "keep":  # not rebuilt from the log: the leader's original LogAppendTimes survive
        assert entries(again.active_segment) == [(0, 0), (M, 1), (2 * M, 2)]
    else:  # rebuilt: "the LogAppendTime in the time index will be almost the same" (the recovery time)
        assert entries(again.active_segment) == [(DAY, 0), (DAY, 2)]
    again.close()


def _skewed_events():
    """A minute-spaced workload; one producer a month ahead at offset 4, one two days behind at offsets 8-9."""
    ev = []
    for i in range(14):
        t = T0 + i * 10 * M
        ts = t + 30 * DAY if i == 4 else (t - 2 * DAY if i in (8, 9) else t)
        ev.append((t, [(ts, f"k{i}".encode(), b"v" * 30)]))
    return ev


def test_compare_policies_on_a_skewed_workload(tmp_path):
    s = len(one(0, 0, size=30))
    cfg = LogConfig(segment_bytes=2 * s + 10, retention_ms=DAY // 2, segment_ms=7 * DAY)
    lookups = [T0 + 35 * M, T0 + 85 * M, T0 + 125 * M]
    res = compare_policies(_skewed_events(), cfg, base_dir=tmp_path, lookups=lookups,
                           retention_check_interval_ms=30 * M)
    k, v = res["policies"]["kafka"], res["policies"]["kip33-variant"]
    # the same bytes were appended, so both logs rolled at the same offsets (every 2 batches)
    assert [x["base_offset"] for x in k["segments"]] == [x["base_offset"] for x in v["segments"]]
    # shipped: segment [8, 10) holds messages stamped 2 days ago, so it is "expired" at once -- but segment
    # [4, 6) holds the month-ahead message and retention only deletes a prefix: nothing goes at all
    assert k["deletions"] == []
    assert v["deletions"] == []  # the variant: nothing is older than 12 hours by LogAppendTime
    # lookups: by message timestamp the month-ahead segment answers early targets with offset 4 and
    # the two-days-behind offsets are skipped; by LogAppendTime the answer is the append order
    k_ans = [x["offset"] for x in k["lookups"]]
    v_ans = [x["offset"] for x in v["lookups"]]
    assert k_ans == [4, 4, 4]
    assert v_ans == [4, 8, 12]  # 8 and 12 arrived 5 minutes before the target: an earlier message comes back
    assert res["differences"]["lookups"] == [
        {"target": t, "kafka": a, "kip33-variant": b} for t, a, b in zip(lookups, k_ans, v_ans) if a != b]
    truth = v["lookup_truth"]
    assert [x["by_append_time"] for x in truth] == [4, 9, 13]
    assert all(a <= b for a, b in zip(v_ans, [x["by_append_time"] for x in truth]))
    assert [x["by_message_timestamp"] for x in k["lookup_truth"]] == k_ans


def test_compare_policies_deletion_times_differ(tmp_path):
    s = len(one(0, 0, size=30))
    cfg = LogConfig(segment_bytes=2 * s + 10, retention_ms=DAY, segment_ms=7 * DAY)
    events = _skewed_events() + [(T0 + 2 * DAY, [(T0 + 2 * DAY, b"late", b"v" * 30)])]
    res = compare_policies(events, cfg, base_dir=tmp_path, lookups=[], retention_check_interval_ms=6 * 3600 * 1000)
    d = {x["offset"]: (x["kafka"], x["kip33-variant"]) for x in res["differences"]["deleted_at"]}
    # variant: every segment whose last message was appended > 1 day ago is gone by T0 + 2 days;
    # shipped: the month-ahead message (offset 4) pins offsets 4.. until T0 + 31 days (never, here)
    assert all(kafka is None and variant is not None for off, (kafka, variant) in d.items() if off >= 4)
    assert res["policies"]["kafka"]["log_start_offset"] == 4
    assert res["policies"]["kip33-variant"]["log_start_offset"] == 14
    assert isinstance(Workload.from_events(events).to_json(), str)
