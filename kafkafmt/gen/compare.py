"""The KIP-33 policy comparison: the same workload through Kafka's time index and the seed-001 variant.

:func:`compare_policies` runs a :class:`~kafkafmt.gen.workloads.Workload` through
``Log(time_index_policy="kafka")`` and ``Log(time_index_policy="kip33-variant")``
(:mod:`kafkafmt.log.kip33`) on simulated clocks and returns plain data: rolls, deletions, segments,
ListOffsets answers against the truth, and where the two differ.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable

from ..log.clock import SimulatedClock
from ..log.log import Log
from .workloads import Workload, run_workload

__all__ = ["compare_policies"]


def compare_policies(workload, config, *, seed: int = 0, base_dir: str | os.PathLike | None = None,
                     lookups: Iterable[int] | None = None, retention_check_interval_ms: int | None = 300_000,
                     topic: str = "compare", partition: int = 0, keep_dirs: bool = False, via: str = "raft",
                     index_granularity: str = "batch") -> dict[str, Any]:
    """Run ``workload`` through ``Log(time_index_policy="kafka")`` and ``"kip33-variant"``; compare.

    ``workload``: a :class:`kafkafmt.gen.workloads.Workload` or a list of ``(append_time, records)``
    with ``records`` a list of ``(create_time, key, value)``.  Retention runs every
    ``retention_check_interval_ms`` of simulated time (Kafka's ``log.retention.check.interval.ms``)
    and after the last event.  ``via="leader"`` sends client batches through the broker's LogValidator
    (the topic's timestamp type is the workload's); ``via="raft"`` appends what it would store.  ``lookups`` are the
    target timestamps for ListOffsets (default: a grid
    over the workload's span).

    Returns plain data::

        {"config": {...}, "timestamp_type": "CreateTime",
         "records": [{"offset", "create_time", "append_time", "stored_timestamp"}...],
         "policies": {"kafka": {...}, "kip33-variant": {...}},
         "differences": {"lookups": [...], "deleted_at": [...], "rolls": {...}}}

    where each policy has ``rolls`` (time, from, to, reasons), ``deletions`` (time, reason, base
    offsets, offset range), ``deleted_at`` ({offset: time}), ``lookups`` ({target, offset,
    timestamp}), ``lookup_truth`` (first offset with message ts >= target / append time >= target,
    among retained records) and ``segments`` (final segment info).
    """
    wl = workload if isinstance(workload, Workload) else Workload.from_events(workload)
    events = wl.events
    if not events:
        raise ValueError("empty workload")
    start = events[0].append_time
    end = events[-1].append_time
    if lookups is None:
        step = max(1, (end - start) // 20)
        lookups = list(range(start - step, end + 2 * step, step))
    lookups = list(lookups)
    tmp = Path(base_dir) if base_dir is not None else Path(tempfile.mkdtemp(prefix="kafkafmt-compare-"))
    out: dict[str, Any] = {"config": config.to_properties(), "timestamp_type": wl.timestamp_type,
                           "lookups": lookups, "policies": {}}
    try:
        for policy in ("kafka", "kip33-variant"):
            cfg = config.replace(timestamp_type=wl.timestamp_type) if via == "leader" else config
            res, records = _run_policy(policy, wl, cfg, tmp / policy / f"{topic}-{partition}", lookups, seed=seed,
                                       retention_check_interval_ms=retention_check_interval_ms, via=via,
                                       index_granularity=index_granularity)
            out["policies"][policy] = res
            if policy == "kafka":
                out["records"] = records
    finally:
        if base_dir is None and not keep_dirs:
            shutil.rmtree(tmp, ignore_errors=True)
    out["differences"] = _differences(out["policies"]["kafka"], out["policies"]["kip33-variant"])
    return out


def _run_policy(policy: str, wl, config, d: Path, lookups: list[int], *, seed: int,
                retention_check_interval_ms: int | None, via: str, index_granularity: str) -> tuple[dict, list]:
    """One policy's run of ``wl`` in the fresh directory ``d``: its rolls, deletions, segments and lookups,
    and the records the workload appended."""
    clock = SimulatedClock(wl.events[0].append_time)
    if d.exists():
        shutil.rmtree(d)
    log = Log(d, config, clock, time_index_policy=policy, seed=seed, index_granularity=index_granularity)
    trace = run_workload(log, wl, clock=clock, retention_check_interval_ms=retention_check_interval_ms, via=via)
    records = trace["records"]
    res: dict[str, Any] = {
        "rolls": [e for e in log.events if e["type"] == "roll"],
        "deletions": [e for e in log.events if e["type"] == "delete"],
        "segments": log.segment_info(),
        "log_start_offset": log.log_start_offset,
        "log_end_offset": log.log_end_offset,
    }
    deleted_at: dict[int, int] = {}
    for e in res["deletions"]:
        for s in e["segments"]:
            for off in range(s["base_offset"], s["next_offset"]):
                deleted_at.setdefault(off, e["time"])
    res["deleted_at"] = deleted_at
    res["lookups"], res["lookup_truth"] = _lookups(log, records, lookups)
    log.close()
    return res, records


def _lookups(log, records: list[dict], lookups: list[int]) -> tuple[list[dict], list[dict]]:
    """ListOffsets for each target, and the truth among the retained records (by message timestamp, by
    append time)."""
    answers, truth = [], []
    retained = [r for r in records if r["offset"] >= log.log_start_offset]
    for t in lookups:
        r = log.fetch_offset_by_timestamp(t)
        answers.append({"target": t, "offset": -1 if r is None else r.offset,
                        "timestamp": -1 if r is None else r.timestamp})
        by_msg = [x["offset"] for x in retained if x["stored_timestamp"] >= t]
        by_lat = [x["offset"] for x in retained if x["append_time"] >= t]
        truth.append({"target": t, "by_message_timestamp": min(by_msg) if by_msg else -1,
                      "by_append_time": min(by_lat) if by_lat else -1})
    return answers, truth


def _differences(k: dict, v: dict) -> dict[str, Any]:
    """Where the two policies' runs differ: lookups, deletion times, rolls."""
    return {
        "lookups": [{"target": a["target"], "kafka": a["offset"], "kip33-variant": b["offset"]}
                    for a, b in zip(k["lookups"], v["lookups"]) if a["offset"] != b["offset"]],
        "deleted_at": [{"offset": off, "kafka": k["deleted_at"].get(off), "kip33-variant": v["deleted_at"].get(off)}
                       for off in sorted(set(k["deleted_at"]) | set(v["deleted_at"]))
                       if k["deleted_at"].get(off) != v["deleted_at"].get(off)],
        "rolls": {"kafka": [(e["time"], e["to"]) for e in k["rolls"]],
                  "kip33-variant": [(e["time"], e["to"]) for e in v["rolls"]]},
    }
