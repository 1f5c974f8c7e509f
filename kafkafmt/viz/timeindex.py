"""Notebook 03 (KIP-33 time index): the index growing with appends, ``offsetsForTimes`` and its
guarantee measured, and seed 001's rejected variant on the same workload.

Runs the real log (:class:`kafkafmt.log.Log`, simulated clock) under both time-index policies
through :func:`kafkafmt.log.kip33.compare_policies` and :func:`kafkafmt.log.workloads.run_workload`.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..log import Log, LogConfig, SimulatedClock, compare_policies, companion_partition, run_workload
from ..log.workloads import generate

POLICIES = ("kafka", "kip33-variant")


def workload(seed: int = 0, *, num_events: int = 120, max_skew_s: float = 30, num_producers: int = 3,
             mean_interval_ms: int = 5000):
    """The notebook's workload: ``num_producers`` producers with clocks within ``±max_skew_s``."""
    if num_events < 1:
        raise ValueError("the workload needs at least one produce request")
    return generate(seed, num_events=num_events, mean_interval_ms=mean_interval_ms, num_producers=num_producers,
                    max_skew_ms=int(max_skew_s * 1000))


def log_config(*, segment_bytes: int = 2000, index_interval_bytes: int = 0, retention_ms: int = -1) -> LogConfig:
    """Small segments, an index entry per batch (``index.interval.bytes=0``), no retention unless asked."""
    return LogConfig(segment_bytes=segment_bytes, index_interval_bytes=index_interval_bytes, retention_ms=retention_ms)


def index_growth(wl, config: LogConfig, policy: str = "kafka") -> list[dict]:
    """After every append: the log end offset and the number of time-index entries over all segments."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    tmp = Path(tempfile.mkdtemp(prefix="kafkafmt-growth-"))
    rows: list[dict] = []
    try:
        clock = SimulatedClock(wl.events[0].append_time)
        log = Log(tmp / "growth-0", config, clock, time_index_policy=policy)

        def count(ev, info):
            rows.append({"append": len(rows) + 1, "time": ev.append_time, "log_end_offset": log.log_end_offset,
                         "segments": log.number_of_segments,
                         "time_index_entries": sum(len(s.time_index) for s in log.segments)})
        run_workload(log, wl, clock=clock, on_event=count)
        log.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def compare(wl, config: LogConfig) -> dict:
    """:func:`kafkafmt.log.kip33.compare_policies` with a lookup grid over the workload's span."""
    return compare_policies(wl, config)


def guarantee(result: dict, policy: str) -> list[dict]:
    """For every lookup target: the offset ``offsetsForTimes`` returned, and, consuming from there,
    how many messages at or after the target were **missed** (before the offset) and how many
    **earlier** messages are seen again (at or after the offset).

    Time is the policy's own: the stored message timestamp for Kafka, the LogAppendTime for the
    seed-001 variant (whose index holds append times only).
    """
    res = result["policies"][policy]
    time_of = "stored_timestamp" if policy == "kafka" else "append_time"
    kept = [r for r in result["records"] if r["offset"] >= res["log_start_offset"]]
    rows = []
    for look in res["lookups"]:
        t, off = look["target"], look["offset"]
        if off < 0:
            off = res["log_end_offset"]
        missed = sum(1 for r in kept if r["offset"] < off and r[time_of] >= t)
        earlier = sum(1 for r in kept if r["offset"] >= off and r[time_of] < t)
        rows.append({"target": t, "offset": look["offset"], "missed": missed, "earlier_seen": earlier})
    return rows


def guarantee_summary(result: dict) -> dict:
    """Per policy: the most messages ever missed, the most earlier messages seen, and the mean."""
    out = {}
    for p in POLICIES:
        g = guarantee(result, p)
        out[p] = {"max_missed": max(r["missed"] for r in g), "max_earlier_seen": max(r["earlier_seen"] for r in g),
                  "mean_earlier_seen": sum(r["earlier_seen"] for r in g) / len(g)}
    return out


def segments_side_by_side(result: dict, partition: int = 0) -> list[dict]:
    """Per segment of each policy: offsets, time-index entries, and where the entries live."""
    rows = []
    for p in POLICIES:
        for s in result["policies"][p]["segments"]:
            rows.append({"policy": p, "base_offset": s["base_offset"], "next_offset": s["next_offset"],
                         "time_index_entries": len(s["time_index_entries"]),
                         "first_entry": s["time_index_entries"][0] if s["time_index_entries"] else None,
                         "last_entry": s["time_index_entries"][-1] if s["time_index_entries"] else None,
                         "replicated_as": (f"partition {partition}'s own .timeindex, rebuilt by each follower"
                                           if p == "kafka" else
                                           f"companion partition {companion_partition(partition)} (~{partition})")})
    return rows


__all__ = ["workload", "log_config", "index_growth", "compare", "guarantee", "guarantee_summary",
           "segments_side_by_side", "POLICIES"]
