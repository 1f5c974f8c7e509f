"""Notebook 03 (KIP-33 time index): the index growing with appends, ``offsetsForTimes`` and its
guarantee measured, and seed 001's rejected variant on the same workload.

Runs the real log (:class:`kafkafmt.log.Log`, simulated clock) under both time-index policies
through :func:`kafkafmt.gen.compare.compare_policies` and :func:`kafkafmt.gen.workloads.run_workload`.
"""
from __future__ import annotations

import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from ..gen import compare_policies, generate, run_workload
from ..log import Log, LogConfig, SimulatedClock, companion_partition

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
    """:func:`kafkafmt.gen.compare.compare_policies` with a lookup grid over the workload's span."""
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


# ------------------------------------------------------------------------------------------------
# the notebook's panels
#: the skews the lookup panel's caption scans to say where the comparison turns over
SKEW_GRID_S = tuple(range(0, 121, 10))


@lru_cache(maxsize=64)
def max_earlier_seen(seed: int, max_skew_s: float, num_events: int = 120) -> dict:
    """Per policy, the most earlier messages a lookup re-reads on :func:`workload` ``(seed, max_skew_s)``."""
    res = compare(workload(seed, max_skew_s=max_skew_s, num_events=num_events), log_config())
    return {p: v["max_earlier_seen"] for p, v in guarantee_summary(res).items()}


def turnover_skew(seed: int, num_events: int = 120) -> int | None:
    """The smallest skew of :data:`SKEW_GRID_S` at which Kafka's index re-reads at least as many earlier
    messages as the KIP-33 variant (None: the variant re-reads more over the whole grid)."""
    for s in SKEW_GRID_S:
        m = max_earlier_seen(seed, s, num_events)
        if m["kafka"] >= m["kip33-variant"]:
            return s
    return None


def skew_ranges(seed: int, num_events: int = 120) -> dict:
    """Over :data:`SKEW_GRID_S`: the skew ranges (``"0-30 s"``) where each design re-reads more earlier
    messages (``variant``, ``kafka``, ``tie``): where the comparison turns over, which need not be once."""
    out: dict[str, list[str]] = {"variant": [], "kafka": [], "tie": []}
    run: list[int] = []
    last = None
    for s in SKEW_GRID_S + (None,):
        if s is not None:
            m = max_earlier_seen(seed, s, num_events)
            who = "kafka" if m["kafka"] > m["kip33-variant"] else "variant" if m["kip33-variant"] > m["kafka"] else "tie"
        if run and (s is None or who != last):
            out[last].append(f"{run[0]}-{run[-1]} s" if len(run) > 1 else f"{run[0]} s")
            run = []
        if s is not None:
            run.append(s)
            last = who
    return out


def turnover_text(seed: int, num_events: int = 120) -> str:
    """:func:`skew_ranges` in words."""
    r = skew_ranges(seed, num_events)
    parts = [f"{who} at {' and '.join(r[key])} of skew" for key, who in
             (("variant", "the KIP-33 variant re-reads more"), ("kafka", "Kafka's index re-reads more"),
              ("tie", "both re-read as many")) if r[key]]
    return "; ".join(parts)


def lookups(max_skew_s: float, seed: int, num_events: int):
    """Every lookup of both policies on one workload, as a DataFrame (``policy`` column)."""
    import pandas as pd
    res = compare(workload(seed, max_skew_s=max_skew_s, num_events=num_events), log_config())
    return pd.concat([pd.DataFrame(guarantee(res, p)).assign(policy=p) for p in POLICIES], ignore_index=True)


def lookups_caption(df, values: dict) -> str:
    """The most earlier messages each design re-reads, nothing missed, and the skew where the comparison turns."""
    m = df.groupby("policy")["earlier_seen"].max()
    missed = int(df["missed"].max())
    more = "the KIP-33 variant" if m["kip33-variant"] > m["kafka"] else "Kafka's index" if m["kafka"] > m[
        "kip33-variant"] else "neither"
    where = (turnover_text(values["seed"], values["num_events"])
             + " (Kafka's entries follow the producers' clocks, the variant's the broker's)")
    return (f"At ±{values['max_skew_s']} s: after offsetsForTimes a consumer re-reads at most "
            f"<b>{m['kafka']} earlier messages with Kafka's index</b> and <b>{m['kip33-variant']} with the KIP-33 "
            f"variant</b> ({more} more); messages missed: {missed}. For seed {values['seed']}, {where}.")


def lookups_panel():
    """Notebook 03's lookups under skew: one point per lookup target and policy."""
    import ipywidgets as w

    from . import plots
    from .widgets import Panel

    def render(df):
        first = df["target"].min()
        return plots.points_plot(df.assign(minutes=(df["target"] - first) / 60000), x="minutes", y="earlier_seen",
                                 hue="policy", hue_label="index design",
                                 title="earlier messages seen again after offsetsForTimes(target)",
                                 xlabel="lookup target (minutes into the workload)",
                                 ylabel="earlier messages re-read (count)")
    return Panel({"max_skew_s": w.IntSlider(value=30, min=0, max=120, step=10, description="skew s"),
                  "seed": w.IntSlider(value=1, min=0, max=9, description="seed"),
                  "num_events": w.IntSlider(value=120, min=20, max=200, step=20, description="requests")},
                 lookups, render, title="offsetsForTimes under skew", caption=lookups_caption)


def segments_table(result: dict):
    """:func:`segments_side_by_side` for people: index entries as ``time → offset``."""
    from . import tables

    def entry(e):
        return tables.MISSING if e is None else f"{tables.iso_time(e[0])} → offset {e[1]}"
    rows = [{**r, "first_entry": entry(r["first_entry"]), "last_entry": entry(r["last_entry"])}
            for r in segments_side_by_side(result)]
    return tables.show(rows, labels={"policy": "index design", "first_entry": "first index entry (time → offset)",
                                     "last_entry": "last index entry (time → offset)"})


def growth_figure(wl, config: LogConfig):
    """Time-index entries after each produce request, per policy (a cumulative count: a line)."""
    import pandas as pd

    from . import plots
    growth = pd.concat([pd.DataFrame(index_growth(wl, config, p)).assign(policy=p) for p in POLICIES])
    return plots.line_plot(growth, x="append", y="time_index_entries", hue="policy", hue_label="index design",
                           marker="", title="time-index entries after each produce request",
                           xlabel="produce requests appended (count)", ylabel="time-index entries, all segments")


#: the live record's checks about the timestamps a time index indexes: a v1 batch on a CreateTime topic (the
#: producer's timestamps kept) and on a LogAppendTime topic (the broker's clock stamped, KIP-32)
LIVE_TIME_CHECKS = {"CreateTime kept (v1)": "produce/raw/magic1-none",
                    "LogAppendTime stamped by the broker (v1)": "produce/rawlat/magic1-none"}


def time_index_scenarios(rec) -> list[str]:
    """The scenarios of the record (or shipped) about the time index (their name says ``time-index`` or
    ``timeindex``): the upgrade from 0.10.0 to 0.10.1, where the time index appears."""
    from ..scenarios import shipped_scenarios
    names = set(rec.scenario_names) | set(shipped_scenarios())
    return sorted(n for n in names if "time-index" in n or "timeindex" in n)


def live_rows(rec) -> list[dict]:
    """Per release run live: whether its line keeps a time index (row ``log.time_index`` of
    :mod:`kafkafmt.kafka_lines`) and which timestamps the release stored as the model says."""
    from ..kafka_lines import change, check_line, value
    from .live_record import mark
    row = change("log.time_index")
    out = []
    for r in rec.releases:
        line = check_line(r)
        d = {"release": r, "time index (kafka_lines)": f"yes ({row.source})" if value("log.time_index", line)
             else f"no (before {row.since})"}
        for label, check in LIVE_TIME_CHECKS.items():
            v = rec.release_check(r, check)
            d[label] = mark(v) if v.state != "not run" else "— (no timestamps before 0.10.0, KIP-32)"
        out.append(d)
    return out


def live_html(rec) -> str:
    """:func:`live_rows` as a table, and each time-index scenario's steps as the live run left them."""
    from . import tables
    from .live_record import steps_html
    html_ = tables.table_html(live_rows(rec), title=f"The releases run live (record of {rec.recorded})",
                              max_cell_em=30)
    names = time_index_scenarios(rec)
    if not names:
        compared = ("the index files themselves are compared with the releases' in the live run of the upgrade "
                    "(time_index_upgrade.upgrade_html)" if rec.time_index_phases else
                    "the index files themselves are not yet compared with a release's")
        return html_ + f"<p>No scenario of the time index upgrade (0.10.0 → 0.10.1) is shipped yet: {compared}.</p>"
    return html_ + "".join(steps_html(rec, n) for n in names)


__all__ = ["LIVE_TIME_CHECKS", "time_index_scenarios", "live_rows", "live_html",
           "skew_ranges", "turnover_text", "segments_table", "lookups", "lookups_panel", "lookups_caption",
           "turnover_skew", "max_earlier_seen", "growth_figure", "SKEW_GRID_S", "workload", "log_config",
           "index_growth", "compare", "guarantee", "guarantee_summary", "segments_side_by_side", "POLICIES"]
