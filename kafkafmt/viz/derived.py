"""The Spark pipeline's tables for notebooks 04 and 05, and what those notebooks compute from them.

:func:`load_derived` returns the tables ``kafkafmt pipeline`` writes (``segments``, ``producer_skew``,
``offsets_for_times``, ``conversion_costs``): from ``data/derived/<name>/`` when ``make pipeline`` made
them, otherwise it generates the shipped scenario itself (:func:`kafkafmt.gen.generator.generate_logs`)
and runs the pipeline through :func:`kafkafmt.spark.session` into a cache under
``build/derived/<name>/`` (built in a temporary directory, then renamed), which later notebooks reuse.
Both paths run the same seeded scenario, so they give identical tables; measured timings
(``conversion_timings``, ``timings.json``) are never loaded.

Retention (notebook 04): :func:`segment_deadlines` recomputes, for any ``retention.ms``, when each
segment is deleted by time from its largest timestamp and when it would be under LogAppendTime
(``UnifiedLog.deleteRetentionMsBreachedSegments``: a segment is eligible once ``now -
largestTimestamp > retention.ms``, and ``deletableSegments`` deletes a prefix, so the deletion time
is the running maximum); :func:`retention_finding` quantifies the bytes kept longer or deleted early.
Fetch costs (notebook 05): :func:`fetch_costs` sums ``conversion_costs`` per fetch version;
:func:`conversion_finding` quantifies what the oldest fetch version costs against the newest.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..log.retention import time_deletion_times

#: the computed tables loaded (the pipeline's measured ``conversion_timings`` is left out on purpose)
TABLES = ("segments", "producer_skew", "offsets_for_times", "conversion_costs")
MINUTE_MS = 60_000


@dataclass
class Derived:
    """The pipeline's computed tables (name → DataFrame) and where they were read from."""

    tables: Mapping[str, pd.DataFrame]
    source: Path = field(compare=False)

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The kafkafmt checkout above ``start`` (default: the working directory, e.g. ``notebooks/``):
    the first ancestor holding ``pyproject.toml`` and ``kafkafmt/``; else ``start`` itself."""
    here = Path(start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file() and (d / "kafkafmt").is_dir():
            return d
    return here


def _complete(directory: Path) -> bool:
    return all((directory / f"{t}.parquet").is_file() for t in TABLES)


def java_home() -> str:
    """Where Spark will find Java (``JAVA_HOME`` or ``java`` on PATH); a :class:`NoSuchFileError` naming
    what to do when there is none (Spark cannot start, so the sample cannot be built here)."""
    found = os.environ.get("JAVA_HOME") or shutil.which("java")
    if not found:
        from ..errors import NoSuchFileError
        raise NoSuchFileError("no Java (JAVA_HOME unset, no java on PATH): Spark cannot build the pipeline's tables; "
                              "install Java 17, or run `make pipeline` where it is and copy data/derived/")
    return found


@contextlib.contextmanager
def _building(cache: Path):
    """An exclusive lock for ``cache`` over the block (``flock`` on a file of the temp dir named by the cache's
    path; released when the process ends, whatever happens): one process at a time builds ``cache`` or looks
    whether it is complete."""
    import fcntl
    import hashlib

    key = hashlib.sha256(str(cache.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"kafkafmt-derived-{key}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build_derived(name: str, cache: Path, *, root: Path, bar=None) -> Path:
    """Generate the shipped scenario ``name`` and run the pipeline over it into ``cache`` (atomically:
    a temporary sibling directory renamed at the end).  Returns ``cache``."""
    java_home()
    from ..gen import generate_logs, load_workload
    from ..spark import session
    from ..spark.pipeline import run_pipeline

    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{cache.name}.tmp-", dir=cache.parent))
    try:
        generate_logs(load_workload(name), tmp / "logs", progress=False)
        if bar is not None:
            bar.update(1)
        spark = session(log_dir=root / "build" / "spark")
        try:
            run_pipeline(tmp / "logs", tmp, spark=spark, progress=False)
        finally:
            spark.stop()
        if bar is not None:
            bar.update(1)
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide the cache from other users of the checkout
        if cache.exists():
            shutil.rmtree(cache)
        os.replace(tmp, cache)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return cache


def read_tables(directory: str | os.PathLike) -> dict[str, pd.DataFrame]:
    """The computed tables of a pipeline output directory, sorted, with segment paths made relative
    (``<topic>-<partition>/<base offset>.log``) so that where the logs lived does not show."""
    out = {}
    for t in TABLES:
        df = pd.read_parquet(Path(directory) / f"{t}.parquet")
        if "path" in df.columns:
            df["path"] = df["path"].map(lambda p: "/".join(Path(p).parts[-2:]))
        out[t] = df.reset_index(drop=True)
    return out


def load_derived(name: str = "default", *, root: str | os.PathLike | None = None, progress: bool = True) -> Derived:
    """The pipeline's tables for scenario ``name``: ``<root>/data/derived/<name>/`` if complete, else the
    cache ``<root>/build/derived/<name>/``, built first (:func:`build_derived`) when missing.

    One tqdm bar of three steps (logs, pipeline, tables) shows on both paths, so a notebook's output
    is the same whichever path ran.
    """
    from tqdm.auto import tqdm

    base = Path(root) if root is not None else project_root()
    data, cache = base / "data" / "derived" / name, base / "build" / "derived" / name
    bar = tqdm(total=3, desc=f"derived tables ({name})", disable=not progress)
    try:
        if _complete(data):
            source = data
            bar.update(2)
        else:
            with _building(cache):  # notebooks run side by side build it once: the others wait, then read it
                if not _complete(cache):
                    build_derived(name, cache, root=base, bar=bar)
                else:
                    bar.update(2)
            source = cache
        tables = read_tables(source)
        bar.update(1)
    finally:
        bar.close()
    return Derived(tables, source)


# ================================================================================================
# notebook 04: retention over the pipeline's segments
def partitions(segments: pd.DataFrame) -> list[str]:
    """``topic-partition`` labels present in a segments table, sorted."""
    return sorted({f"{t}-{p}" for t, p in zip(segments["topic"], segments["partition"])})


def _select(frame: pd.DataFrame, partition: str) -> pd.DataFrame:
    topic, _, part = partition.rpartition("-")
    sel = frame[(frame["topic"] == topic) & (frame["partition"] == int(part))]
    if sel.empty:
        raise ValueError(f"no topic-partition {partition!r} in the pipeline's tables")
    return sel


def segment_deadlines(segments: pd.DataFrame, partition: str, *, retention_ms: int) -> pd.DataFrame:
    """One partition's segments with, for ``retention_ms``: when retention deletes each by time from its
    largest timestamp (``deleted_ms``), when it would under LogAppendTime (``lat_deleted_ms``: from the
    segment's last append, its ``.log`` mtime), and ``outlives_ms`` = the difference (> 0: kept longer
    than the broker's clock says; < 0: deleted early).  Times are ms after the partition's first append."""
    if retention_ms < 1:
        raise ValueError("retention.ms must be at least 1 ms here (-1 never deletes by time)")
    s = _select(segments, partition).sort_values("base_offset")
    start = int(s["last_modified_ms"].min())
    deleted = time_deletion_times(s["largest_timestamp"], retention_ms) - start
    lat = time_deletion_times(s["last_modified_ms"], retention_ms) - start
    return pd.DataFrame({"base_offset": s["base_offset"].to_numpy(), "records": s["records"].to_numpy(),
                         "size_bytes": s["size_bytes"].to_numpy(),
                         "last_append_ms": (s["last_modified_ms"] - start).to_numpy(),
                         "largest_timestamp_ms": (s["largest_timestamp"] - start).to_numpy(),
                         "deleted_ms": deleted, "lat_deleted_ms": lat, "outlives_ms": deleted - lat})


def retention_finding(segments: pd.DataFrame, *, retention_ms: int) -> pd.DataFrame:
    """Per topic-partition: bytes (and segments) retention by largest timestamp keeps longer than
    LogAppendTime would, bytes it deletes early, and the largest overshoot and undershoot in seconds."""
    rows = []
    for tp in partitions(segments):
        d = segment_deadlines(segments, tp, retention_ms=retention_ms)
        late, early = d[d["outlives_ms"] > 0], d[d["outlives_ms"] < 0]
        rows.append({"partition": tp, "segments": len(d), "bytes": int(d["size_bytes"].sum()),
                     "bytes_kept_longer": int(late["size_bytes"].sum()),
                     "bytes_deleted_early": int(early["size_bytes"].sum()),
                     "max_kept_longer_s": max(0.0, d["outlives_ms"].max() / 1000),
                     "max_deleted_early_s": max(0.0, -d["outlives_ms"].min() / 1000)})
    return pd.DataFrame(rows)


# ================================================================================================
# notebook 05: fetch costs over the pipeline's conversion_costs
COST_COLUMNS = ("bytes_read", "bytes_out", "records_touched", "batches_rebuilt", "batches_copied",
                "decompressions", "compressions")
#: the pipeline's prediction of each row's broker cost (:func:`kafkafmt.spark.pipeline.conversion_costs`, priced by
#: :func:`kafkafmt.costs.predict` with the measured table): null where the table cannot price it
PREDICTED_COLUMNS = ("predicted_cpu_s", "predicted_memory_bytes", "cost_measured_on")


def _measured_on(values: pd.Series):
    names = sorted(set(values.dropna()))
    return ", ".join(names) if names else None


def fetch_costs(costs: pd.DataFrame, topic: str | None = None) -> pd.DataFrame:
    """Per fetch version (over every segment of ``topic``, or of all topics): the cost counts summed,
    the segments served zero-copy, those answered with an error (e.g. ``UNSUPPORTED_COMPRESSION_TYPE``)
    and the bytes sent per byte read; then, where the pipeline priced them (:data:`PREDICTED_COLUMNS`), the
    predicted broker CPU summed (null when no segment was priced), the most memory one request holds and the
    releases whose measured costs priced them."""
    c = costs if topic is None else costs[costs["topic"] == topic]
    if c.empty:
        raise ValueError(f"no topic {topic!r} in the pipeline's conversion costs")
    g = c.groupby("fetch_version", sort=True)
    out = g[list(COST_COLUMNS)].sum()
    out.insert(0, "segments", g.size())
    out.insert(1, "zero_copy_segments", g["zero_copy"].sum().astype("int64"))
    out.insert(2, "error_segments", g["error"].count())
    out["out_per_read"] = (out["bytes_out"] / out["bytes_read"]).round(3)
    if set(PREDICTED_COLUMNS) <= set(c.columns):
        out["predicted_cpu_s"] = g["predicted_cpu_s"].sum(min_count=1)
        out["predicted_memory_bytes"] = g["predicted_memory_bytes"].max().astype("Int64")
        out["cost_measured_on"] = g["cost_measured_on"].agg(_measured_on)
    return out.reset_index()


def conversion_finding(costs: pd.DataFrame) -> pd.DataFrame:
    """Per topic: the oldest fetch version's records re-encoded, recompressions and bytes sent per byte
    read, against the newest version's (which needs no conversion for a log at its format)."""
    rows = []
    for topic in sorted(costs["topic"].unique()):
        f = fetch_costs(costs, topic)
        old, new = f.iloc[0], f.iloc[-1]
        row = {"topic": topic, "oldest_fetch": int(old["fetch_version"]),
               "records_touched_oldest": int(old["records_touched"]),
               "compressions_oldest": int(old["compressions"]), "out_per_read_oldest": float(old["out_per_read"]),
               "newest_fetch": int(new["fetch_version"]), "records_touched_newest": int(new["records_touched"]),
               "zero_copy_newest": f"{int(new['zero_copy_segments'])}/{int(new['segments'])}"}
        if "predicted_cpu_s" in f.columns:
            row.update(predicted_cpu_s_oldest=_float(old["predicted_cpu_s"]),
                       predicted_memory_bytes_oldest=_int(old["predicted_memory_bytes"]),
                       predicted_cpu_s_newest=_float(new["predicted_cpu_s"]),
                       cost_measured_on=_measured_on(f["cost_measured_on"]))
        rows.append(row)
    return pd.DataFrame(rows)


def _float(v):
    return None if pd.isna(v) else float(v)


def _int(v):
    return None if pd.isna(v) else int(v)


#: the predicted columns of :func:`conversion_finding` and :func:`fetch_costs` for people (labels, units)
PREDICTED_LABELS = {"predicted_cpu_s_oldest": "predicted broker CPU (oldest)",
                    "predicted_memory_bytes_oldest": "predicted memory per request (oldest)",
                    "predicted_cpu_s_newest": "predicted broker CPU (newest)",
                    "predicted_cpu_s": "predicted broker CPU", "predicted_memory_bytes": "predicted memory per request",
                    "cost_measured_on": "costs measured on Kafka"}
PREDICTED_UNITS = {"predicted_cpu_s_oldest": "s", "predicted_cpu_s_newest": "s", "predicted_cpu_s": "s",
                   "predicted_memory_bytes_oldest": "bytes", "predicted_memory_bytes": "bytes"}


def conversion_finding_table(costs: pd.DataFrame):
    """:func:`conversion_finding` as a table for people (a cell's output): counts, then the pipeline's predicted broker CPU and
    memory (:data:`PREDICTED_COLUMNS`) and the release whose measured costs priced them."""
    from .tables import show
    return show(conversion_finding(costs), labels={
        "oldest_fetch": "oldest fetch version", "records_touched_oldest": "records re-encoded (oldest)",
        "compressions_oldest": "recompressions (oldest)", "out_per_read_oldest": "bytes sent per byte read (oldest)",
        "newest_fetch": "newest fetch version", "records_touched_newest": "records re-encoded (newest)",
        "zero_copy_newest": "segments zero-copy (newest)", **PREDICTED_LABELS}, units=PREDICTED_UNITS)


# ================================================================================================
# the notebooks' panels over the pipeline's tables
def deadlines_caption(df: pd.DataFrame, values: dict) -> str:
    """How many segments of the partition are deleted early or kept longer than under LogAppendTime."""
    from .tables import duration
    early, late = df[df["outlives_ms"] < 0], df[df["outlives_ms"] > 0]
    head = (f"{values['partition']}: <b>{len(early)} of {len(df)} segments deleted early</b>"
            + (f" (the worst {duration(-early['outlives_ms'].min())} early)" if len(early) else "")
            + f", {len(late)} kept longer than under LogAppendTime"
            + (f" (up to {duration(late['outlives_ms'].max())})" if len(late) else "") + ".")
    return (head + f" retention.ms = {values['retention_min']:g} min moves every deadline by the same amount; "
            "whether a segment goes early or late depends only on the clocks that wrote it.")


def deadlines_view(df: pd.DataFrame):
    """Per segment, deleted by largest timestamp minus deleted under LogAppendTime (s), and the table."""
    from . import plots, tables
    secs = df["outlives_ms"] / 1000
    small = secs[secs != 0].abs()
    wide = len(small) > 1 and small.max() / small.min() > 100  # hours beside milliseconds: a symmetric log scale
    fig = plots.bar_plot([str(b) for b in df["base_offset"]], secs,
                         bar_text=[tables.duration(x, signed=True) for x in df["outlives_ms"]],
                         colors=[plots.RED if x < 0 else plots.GREEN if x > 0 else plots.GREY
                                 for x in df["outlives_ms"]],
                         legend=[(plots.RED, "deleted early"), (plots.GREEN, "kept longer")],
                         title="deleted by largest timestamp − deleted under LogAppendTime",
                         xlabel="segment (base offset)",
                         ylabel=("longer (+) / early (−), s, symlog" if wide else
                                 "kept longer (+) / deleted early (−), s"))
    if wide:
        fig.axes[0].set_yscale("symlog", linthresh=0.1)
        fig.axes[0].set_ylim(min(secs.min() * 20, -1), max(secs.max() * 20, 1))
    return fig, tables.table_html(
        df, units={"size_bytes": "bytes", "last_append_ms": "ms", "largest_timestamp_ms": "±ms", "deleted_ms": "ms",
                   "lat_deleted_ms": "ms", "outlives_ms": "±ms"},
        labels={"last_append_ms": "last append (after the first)", "largest_timestamp_ms": "largest timestamp",
                "deleted_ms": "deleted at", "lat_deleted_ms": "deleted at under LogAppendTime",
                "outlives_ms": "kept longer (+) / early (−)"})


def deadlines_panel(segments: pd.DataFrame, *, partition: str = "clicks-0"):
    """Notebook 04's per-segment deadlines over the pipeline's ``segments`` (retention ≥ 1 min)."""
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"partition": w.Dropdown(options=partitions(segments), value=partition, description="partition"),
                  "retention_min": w.FloatSlider(value=10, min=1, max=60, step=1, description="retention min")},
                 lambda partition, retention_min: segment_deadlines(segments, partition,
                                                                    retention_ms=int(retention_min * MINUTE_MS)),
                 deadlines_view, caption=deadlines_caption,
                 title="When each segment of the sample is deleted (time after the partition's first append)")


def fetch_caption(d: dict, values: dict) -> str:
    """The oldest and newest fetch versions of the topic, in words."""
    from .tables import WORDS, number
    t = d["table"]
    old, new = t.iloc[0], t.iloc[-1]
    metric = WORDS.get(d["metric"], d["metric"])
    if old["error_segments"] == old["segments"]:
        first = f"a fetch v{int(old['fetch_version'])} is answered with an error for every segment (nothing sent)"
    else:
        first = (f"a fetch v{int(old['fetch_version'])} re-encodes {number(old['records_touched'])} records with "
                 f"{number(old['compressions'])} recompressions")
    return (f"{values['topic']}: {first}; a fetch v{int(new['fetch_version'])} serves "
            f"<b>{int(new['zero_copy_segments'])} of {int(new['segments'])} segments zero-copy</b>. "
            f"Plotted: {metric}, summed over the topic's segments.")


def fetch_view(d: dict):
    """Bars per fetch version (zero bars labelled, errors named), and the table."""
    from . import plots, tables
    t, m = d["table"], d["metric"]
    err = t["error_segments"] == t["segments"]
    zc = t["zero_copy_segments"] == t["segments"]
    text = ["✗ error" if e else ("0 · zero-copy" if z and v == 0 else tables.number(v))
            for e, z, v in zip(err, zc, t[m])]
    fig = plots.bar_plot([f"fetch v{v}" for v in t["fetch_version"]], t[m], bar_text=text,
                         colors=[plots.GREY if e else plots.GREEN if z else plots.AMBER for e, z in zip(err, zc)],
                         legend=[(plots.GREEN, "all segments zero-copy"), (plots.AMBER, "converted"),
                                 (plots.GREY, "answered with an error")],
                         title=f"{tables.WORDS.get(m, m)} over the sample", xlabel="fetch request version",
                         ylabel=tables.metric_axis(m))
    return fig, tables.table_html(t, units={"bytes_read": "bytes", "bytes_out": "bytes", **PREDICTED_UNITS},
                                  labels=PREDICTED_LABELS)


def fetch_panel(conversions: pd.DataFrame, *, topic: str = "clicks"):
    """Notebook 05's fetch costs over the pipeline's ``conversion_costs``: a topic and a metric (in words)."""
    import ipywidgets as w

    from .tables import WORDS
    from .widgets import Panel
    return Panel({"topic": w.Dropdown(options=sorted(conversions["topic"].unique()), value=topic, description="topic"),
                  "metric": w.Dropdown(options=[(WORDS.get(c, c), c) for c in COST_COLUMNS], value="records_touched",
                                       description="cost", layout=w.Layout(width="330px"))},
                 lambda topic, metric: {"metric": metric, "table": fetch_costs(conversions, topic)}, fetch_view,
                 title="Fetch costs over the sample logs", caption=fetch_caption)


__all__ = ["deadlines_panel", "deadlines_view", "deadlines_caption", "fetch_panel", "fetch_view", "fetch_caption",
           "Derived", "TABLES", "MINUTE_MS", "load_derived", "build_derived", "java_home", "read_tables",
           "project_root", "partitions", "segment_deadlines", "retention_finding", "COST_COLUMNS", "fetch_costs",
           "conversion_finding", "conversion_finding_table", "PREDICTED_COLUMNS", "PREDICTED_LABELS",
           "PREDICTED_UNITS"]
