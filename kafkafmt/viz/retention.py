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

from ..gen.workloads import CREATE_TIME, LOG_APPEND_TIME, generate, run_workload
from ..log import Log, LogConfig, SimulatedClock

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


# ------------------------------------------------------------------------------------------------
# the notebook's panels
def one_workload(max_skew_s: float, seed: int, timestamp_type: str, retention_min: float):
    """:func:`lifetimes` of one workload as a DataFrame; its producers' clock skews in ``attrs``."""
    import pandas as pd
    wl = workload(seed, max_skew_s=max_skew_s, timestamp_type=timestamp_type)
    df = pd.DataFrame(lifetimes(wl, retention_ms=round(retention_min * MINUTE_MS)))
    df.attrs["skews_ms"] = [p.skew_ms for p in wl.producers]
    return df


def one_caption(df, values: dict) -> str:
    """Early deletions of this workload and why: only when every producer writing a segment runs behind."""
    s = summary(df.to_dict("records"))
    skews = ", ".join(f"{k / 1000:+.0f} s" for k in df.attrs.get("skews_ms", []))
    head = (f"<b>{s['early_fraction']:.0%} of {s['deleted']} records deleted before they were "
            f"{values['retention_min']:g} min old</b> (up to {s['max_early_s']:.0f} s early); the latest deletion "
            f"came {s['max_late_s']:.0f} s after retention.ms.")
    if values["timestamp_type"] == "LogAppendTime":
        return head + " Under LogAppendTime the producers' clocks play no part: nothing is deleted early."
    all_behind = all(k < 0 for k in df.attrs.get("skews_ms", []))
    why = ("all behind the broker, so a segment's largest timestamp can be older than its last append: "
           "it becomes deletable early" if all_behind else
           "at least one ahead of the broker, and a segment's largest timestamp is the newest clock's: "
           "segments are kept longer, none deleted early" if s["early_fraction"] == 0 else
           "mixed; segments holding only the clocks behind are deleted early")
    return (f"{head} Producer clocks {skews}: {why}. Early deletion needs every producer of a segment behind "
            "(at ±60 s, seeds 4, 7 and 8 of 0-11).")


def one_view(df):
    """Each record a point: when it was appended, how far from retention.ms its deletion came."""
    from . import plots
    start = df["append_time"].min()
    fig = plots.points_plot(df.assign(appended_s=(df["append_time"] - start) / 1000, excess_s=df["excess_ms"] / 1000),
                            x="appended_s", y="excess_s", hue="producer", hue_label="producer", hline=0,
                            hline_label="deleted exactly at retention.ms", size=10,
                            title="age at deletion − retention.ms, one point per record",
                            xlabel="appended at (s into the workload)", ylabel="deleted late (+) / early (−), s")
    return fig


def one_panel():
    """Notebook 04's one workload: skew, seed, timestamp type, retention (≥ 0.5 min); it opens where early
    deletion shows (seed 4: every producer's clock behind the broker)."""
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"max_skew_s": w.IntSlider(value=60, min=0, max=180, step=15, description="skew s"),
                  "seed": w.IntSlider(value=4, min=0, max=11, description="seed"),
                  "timestamp_type": w.Dropdown(options=[CREATE_TIME, LOG_APPEND_TIME], description="type"),
                  "retention_min": w.FloatSlider(value=2, min=0.5, max=10, step=0.5, description="retention min")},
                 one_workload, one_view, title="Retention of one workload", caption=one_caption)


def monte_carlo_figure(create):
    """The Monte Carlo histogram of ``age at deletion − retention.ms`` (a DataFrame of :func:`monte_carlo`)."""
    from . import plots
    return plots.histogram(create["excess_ms"] / 1000, bins=30, vline=0, vline_label="exactly retention.ms",
                           title=f"CreateTime: age at deletion − retention.ms ({create['seed'].nunique()} seeds)",
                           xlabel="deleted late (+) / early (−), s", ylabel="records")


__all__ = ["one_workload", "one_caption", "one_view", "one_panel", "monte_carlo_figure", "workload", "lifetimes",
           "summary", "monte_carlo", "MINUTE_MS", "CHECK_INTERVAL_MS"]
