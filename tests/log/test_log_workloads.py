"""Reproducible workloads and their replay against a Log."""
from __future__ import annotations

import pytest

from kafkafmt.gen.workloads import Producer, Workload, generate, generate_mixed, make_producers, run_workload
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.records import MemoryRecords

T0 = 1_700_000_000_000


def test_same_seed_same_workload_and_json_round_trip():
    a = generate(7, num_events=50, max_skew_ms=30_000, num_producers=3, burst_probability=0.2)
    b = generate(7, num_events=50, max_skew_ms=30_000, num_producers=3, burst_probability=0.2)
    c = generate(8, num_events=50, max_skew_ms=30_000, num_producers=3, burst_probability=0.2)
    assert a.events == b.events and a.events != c.events
    assert Workload.from_json(a.to_json()).events == a.events


def test_skew_bursts_and_far_future_records():
    producers = [Producer("fast", skew_ms=5000), Producer("slow", skew_ms=-7000, jitter_ms=10)]
    wl = generate(3, num_events=300, producers=producers, burst_probability=0.1, burst_size=(5, 5),
                  burst_interval_ms=2, far_future_probability=0.02, far_future_ms=10**9)
    times = [e.append_time for e in wl.events]
    assert times == sorted(times)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert gaps.count(2) >= 20  # bursts
    for e in wl.events:
        for ct, _, _ in e.records:
            if ct - e.append_time == 10**9:
                continue
            skew = 5000 if e.producer == "fast" else -7000
            jitter = 0 if e.producer == "fast" else 10
            assert abs(ct - e.append_time - skew) <= jitter
    assert any(ct - e.append_time == 10**9 for e in wl.events for ct, _, _ in e.records)
    assert [p.skew_ms for p in make_producers(4, seed=1, max_skew_ms=100)] == \
        [p.skew_ms for p in make_producers(4, seed=1, max_skew_ms=100)]


def test_mixed_topics():
    wls = generate_mixed(2, num_events=20)
    assert {w.timestamp_type for w in wls.values()} == {"CreateTime", "LogAppendTime"}


@pytest.mark.parametrize("ts_type", ["CreateTime", "LogAppendTime"])
def test_replay_assigns_offsets_and_timestamps(tmp_path, ts_type):
    wl = generate(5, num_events=40, max_skew_ms=60_000, num_producers=2, timestamp_type=ts_type, start_ms=T0)
    clock = SimulatedClock(T0)
    log = Log(tmp_path / "w-0", LogConfig(segment_bytes=2000), clock)
    trace = run_workload(log, wl)
    recs = trace["records"]
    assert [r["offset"] for r in recs] == list(range(wl.num_records)) == list(range(log.log_end_offset))
    stored = {r.offset: r.timestamp for seg in log.segments
              for r in MemoryRecords(seg.log.read_all()).records()}
    for r in recs:
        assert stored[r["offset"]] == (r["append_time"] if ts_type == "LogAppendTime" else r["create_time"])
        assert r["stored_timestamp"] == stored[r["offset"]]


@pytest.mark.parametrize("ts_type", ["CreateTime", "LogAppendTime"])
def test_replay_through_the_broker_validator_writes_the_same_bytes(tmp_path, ts_type):
    """stored_batch (via="raft") must be exactly what LogValidator's in-place path makes of a client batch."""
    wl = generate(9, num_events=30, max_skew_ms=10_000, num_producers=2, timestamp_type=ts_type, start_ms=T0)
    cfg = LogConfig(segment_bytes=1500, index_interval_bytes=100)
    a = Log(tmp_path / "a-0", cfg, SimulatedClock(T0))
    b = Log(tmp_path / "b-0", cfg.replace(timestamp_type=ts_type), SimulatedClock(T0))
    run_workload(a, wl, via="raft")
    run_workload(b, wl, via="leader")
    for sa, sb in zip(a.segments, b.segments):
        assert sa.log.read_all() == sb.log.read_all()
        assert sa.offset_index.to_bytes() == sb.offset_index.to_bytes()
        assert sa.time_index.to_bytes() == sb.time_index.to_bytes()
    assert len(a.segments) == len(b.segments) > 1
