"""Notebook 04 (retention): when each segment becomes deletable as producer clocks skew, how long data
outlives or undershoots ``retention.ms``, over many seeds; LogAppendTime for contrast.

Runs the real log (:class:`kafkafmt.log.Log`: time-based retention by each segment's largest
timestamp, ``UnifiedLog.deleteRetentionMsBreachedSegments``) on seeded workloads under a simulated
clock, and keeps running the retention check after the last produce until everything expired.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..log import Log, LogConfig, SimulatedClock, run_workload
from ..log.workloads import CREATE_TIME, LOG_APPEND_TIME, generate

MINUTE_MS = 60_000
CHECK_INTERVAL_MS = 5_000  #: log.retention.check.interval.ms of the simulation (Kafka's default is 5 min)


def workload(seed: int = 0, *, max_skew_s: float = 60, timestamp_type: str = CREATE_TIME, num_events: int = 150,
             mean_interval_ms: int = 2000):
    """Three producers whose clocks are within ``±max_skew_s``; a CreateTime or LogAppendTime topic."""
    if timestamp_type not in (CREATE_TIME, LOG_APPEND_TIME):
        raise ValueError(f"timestamp type must be {CREATE_TIME} or {LOG_APPEND_TIME}")
    if num_events < 1:
        raise ValueError("the workload needs at least one produce request")
    return generate(seed, num_events=num_events, mean_interval_ms=mean_interval_ms, num_producers=3,
                    max_skew_ms=int(max_skew_s * 1000), timestamp_type=timestamp_type)


def lifetimes(wl, *, retention_ms: int = 2 * MINUTE_MS, segment_bytes: int = 1500) -> list[dict]:
    """Per record: when it was appended, when retention deleted it, and ``age_at_deletion - retention.ms``.

    Negative: deleted before it was ``retention.ms`` old by the broker's clock (undershoot); positive:
    kept longer (overshoot).  The simulation keeps checking after the last append until the log is empty
    or every record has been retained ``retention.ms`` plus the largest skew and one check interval.
    """
    if retention_ms < 1:
        raise ValueError("retention.ms must be at least 1 ms here (-1 keeps data forever)")
    tmp = Path(tempfile.mkdtemp(prefix="kafkafmt-retention-"))
    try:
        clock = SimulatedClock(wl.events[0].append_time)
        log = Log(tmp / "retention-0", LogConfig(segment_bytes=segment_bytes, retention_ms=retention_ms), clock)
        trace = run_workload(log, wl, clock=clock, retention_check_interval_ms=CHECK_INTERVAL_MS)
        records = trace["records"]
        skew = max(abs(r["stored_timestamp"] - r["append_time"]) for r in records)
        end = wl.events[-1].append_time + retention_ms + skew + 2 * CHECK_INTERVAL_MS
        t = clock.now()
        while t < end and log.log_start_offset < log.log_end_offset:
            t += CHECK_INTERVAL_MS
            clock.set(t)
            log.delete_old_segments()
        deleted_at: dict[int, int] = {}
        for e in log.events:
            if e["type"] == "delete":
                for s in e["segments"]:
                    for off in range(s["base_offset"], s["next_offset"]):
                        deleted_at.setdefault(off, e["time"])
        log.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = []
    for r in records:
        gone = deleted_at.get(r["offset"])
        out.append({"offset": r["offset"], "producer": r["producer"], "append_time": r["append_time"],
                    "timestamp": r["stored_timestamp"], "deleted_at": gone,
                    "excess_ms": None if gone is None else gone - r["append_time"] - retention_ms})
    return out


def summary(rows: list[dict]) -> dict:
    """Fraction deleted early (undershoot), the largest undershoot and overshoot in seconds."""
    gone = [r["excess_ms"] for r in rows if r["excess_ms"] is not None]
    if not gone:
        return {"records": len(rows), "deleted": 0, "early_fraction": 0.0, "max_early_s": 0.0, "max_late_s": 0.0}
    return {"records": len(rows), "deleted": len(gone),
            "early_fraction": sum(1 for x in gone if x < 0) / len(gone),
            "max_early_s": max(0, -min(gone)) / 1000, "max_late_s": max(0, max(gone)) / 1000}


def monte_carlo(seeds=range(12), *, max_skew_s: float = 60, timestamp_type: str = CREATE_TIME,
                retention_ms: int = 2 * MINUTE_MS, progress: bool = True) -> list[dict]:
    """:func:`lifetimes` over many seeds (a progress bar while it runs): every record's excess, with its seed."""
    from tqdm.auto import tqdm
    out = []
    for seed in tqdm(list(seeds), desc="seeds", disable=not progress, leave=False):
        for r in lifetimes(workload(seed, max_skew_s=max_skew_s, timestamp_type=timestamp_type),
                           retention_ms=retention_ms):
            out.append({"seed": seed, **r})
    return out


__all__ = ["workload", "lifetimes", "summary", "monte_carlo", "MINUTE_MS", "CHECK_INTERVAL_MS"]
