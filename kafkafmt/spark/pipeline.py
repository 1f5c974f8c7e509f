"""Pipeline jobs over log directories (``kafkafmt pipeline``): Parquet tables under ``data/derived/`` for the notebooks.

The computations are plain functions over one topic-partition's records (a pandas DataFrame ordered
by offset), so they are unit-tested without Spark; :func:`run_pipeline` reads the log directory
with the ``kafkafmt`` data source and runs them in one Spark pass (``groupBy(topic,
partition).applyInPandas``; :func:`partition_tables` per group, which also reads that partition's
segment files for the fetch costs).

``segments``
    per segment: records, size, first / last / max timestamp, Kafka's ``largestTimestamp``,
    when retention deletes it by time (from its largest timestamp, and under
    LogAppendTime from its last append) and by size (:func:`segment_retention`)
``producer_skew``
    per producer (producer id; -1 for v0/v1 batches, which carry none): skew against the
    partition's rolling median timestamp, out-of-order records and lateness
    (:func:`producer_skew`)
``offsets_for_times``
    per target timestamp: the ListOffsets answer and the earlier records a consumer
    starting there still sees (KIP-32's "might see earlier messages"; :func:`offsets_for_times`)
``conversion_costs``
    per segment and fetch version: the fetch path's cost model
    (:func:`kafkafmt.broker.fetch.fetch`): bytes, records rebuilt, recompressions, and the broker CPU and
    memory :mod:`kafkafmt.costs` predicts for that request from costs measured on real brokers
``compaction``
    per compacted partition: records, keys, bytes and tombstones before and after the
    cleaner's passes on a copy, tombstones waiting and their horizon, the oldest retained
    record and its magic (:func:`kafkafmt.spark.compaction.partition_compaction`)
``conversion_timings``
    measured, kept apart: kafkafmt's own down-conversion timed on a sample, the
    resulting ns per record, and the time the whole log's conversions would take
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ..log.retention import time_deletion_times
from .failures import kafkafmt_errors

__all__ = ["segment_retention", "producer_skew", "offsets_for_times", "conversion_costs", "fetch_version_classes",
           "run_pipeline", "partition_dirs", "segment_files", "topic_settings", "OUTPUTS", "RECORD_COLUMNS"]

#: the columns the jobs read, as the kafkafmt data source names them (Spark's Kafka source + batch metadata)
RECORD_COLUMNS = ("topic", "partition", "offset", "timestamp", "timestampType", "producerId", "segment", "position")
OUTPUTS = ("segments", "producer_skew", "offsets_for_times", "conversion_costs", "compaction", "conversion_timings")
WEEK_MS = 7 * 24 * 3600 * 1000
_SEGMENT_NAME = re.compile(r"(\d{20})\.log$")


# ================================================================================================
# per-partition computations (pandas)
def _segment_base(path: str) -> int:
    m = _SEGMENT_NAME.search(str(path))
    if m is None:
        raise ValueError(f"not a segment file name: {path}")
    return int(m.group(1))


def segment_retention(records: pd.DataFrame, files: pd.DataFrame, *, retention_ms: int = WEEK_MS,
                      retention_bytes: int = -1) -> pd.DataFrame:
    """Per segment of one partition, what the broker's retention would do (``UnifiedLog.deleteOldSegments``).

    ``records``: ``offset``, ``timestamp`` (ms), ``segment`` (base offset), ``position`` (batch position).
    ``files``: ``segment`` (base offset), ``size`` (bytes), ``last_modified_ms`` (the ``.log`` mtime:
    the broker time of the segment's last append).

    * ``largest_timestamp``: ``LogSegment.largestTimestamp``: the max timestamp, or the mtime when the
      segment holds none (v0, or only negative timestamps).
    * By time, a segment is *eligible* once ``now - largestTimestamp > retention.ms``; retention deletes
      a *prefix* of eligible segments (``deletableSegments`` stops at the first that is not), so it is
      *deleted* at the running maximum of the eligibility times (``time_deleted_at_ms``).  The same
      under LogAppendTime, where the largest timestamp is the last append time (``lat_deleted_at_ms``).
    * By size, the prefix up to a segment goes once the bytes after it reach ``retention.bytes``
      (``diff - segment.size >= 0``): ``size_deleted_at_offset`` is the log end offset at that moment
      (null if the sample never gets there), ``size_deleted_at_timestamp`` the max timestamp of the batch
      that got it there.
    """
    r = records.sort_values("offset")
    f = files.sort_values("segment").reset_index(drop=True)
    g = r.groupby("segment", sort=True)
    per = pd.DataFrame({"records": g["offset"].size(), "first_offset": g["offset"].first(),
                        "last_offset": g["offset"].last(), "first_timestamp": g["timestamp"].first(),
                        "last_timestamp": g["timestamp"].last(), "max_timestamp": g["timestamp"].max()})
    out = f.merge(per, left_on="segment", right_index=True, how="left")
    out["records"] = out["records"].fillna(0).astype("int64")
    max_ts = out["max_timestamp"].astype("float64")
    out["largest_timestamp"] = np.where(max_ts.notna() & (max_ts >= 0), max_ts, out["last_modified_ms"]).astype("int64")
    if retention_ms >= 0:
        out["time_eligible_at_ms"] = out["largest_timestamp"] + retention_ms + 1
        out["time_deleted_at_ms"] = time_deletion_times(out["largest_timestamp"], retention_ms)
        out["lat_deleted_at_ms"] = time_deletion_times(out["last_modified_ms"], retention_ms)
        out["delay_vs_lat_ms"] = out["time_deleted_at_ms"] - out["lat_deleted_at_ms"]
    else:  # retention.ms = -1: never by time
        for c in ("time_eligible_at_ms", "time_deleted_at_ms", "lat_deleted_at_ms", "delay_vs_lat_ms"):
            out[c] = pd.array([pd.NA] * len(out), dtype="Int64")
    out["size_deleted_at_offset"] = pd.array([pd.NA] * len(out), dtype="Int64")
    out["size_deleted_at_timestamp"] = pd.array([pd.NA] * len(out), dtype="Int64")
    if retention_bytes >= 0 and len(out):
        # every batch's end, in bytes from the start of the first segment, with the log end offset after it
        b = r.groupby(["segment", "position"], sort=True).agg(last_offset=("offset", "max"),
                                                             max_ts=("timestamp", "max")).reset_index()
        seg_start = dict(zip(out["segment"], out["size"].cumsum() - out["size"]))
        seg_size = dict(zip(out["segment"], out["size"]))
        nxt = b.groupby("segment")["position"].shift(-1)
        end_in_seg = nxt.fillna(b["segment"].map(seg_size)).astype("int64")
        b["end"] = b["segment"].map(seg_start) + end_in_seg
        seg_end = (out["size"].cumsum()).to_numpy()
        ends = b["end"].to_numpy()
        for i, e in enumerate(seg_end):
            j = int(np.searchsorted(ends, e + retention_bytes, side="left"))
            if j < len(b) and retention_bytes + e <= ends[-1]:
                out.loc[i, "size_deleted_at_offset"] = int(b["last_offset"].iloc[j]) + 1
                out.loc[i, "size_deleted_at_timestamp"] = int(b["max_ts"].iloc[j])
    return out.rename(columns={"segment": "base_offset", "size": "size_bytes"})


def producer_skew(records: pd.DataFrame, *, window: int = 101) -> pd.DataFrame:
    """Per producer of one partition: timestamp skew and out-of-order statistics.

    ``records``: ``offset``, ``timestamp`` (ms), ``producerId``.  Records without a timestamp (< 0:
    v0, or KIP-228's pre-1970 times) are left out.  A record is *out of order* when its timestamp is
    below the largest timestamp before it in the partition (what ``maxTimestamp`` / the time index
    keep); its *lateness* is that difference.  *Skew* is the timestamp minus the partition's centred
    rolling median over ``window`` records (a consensus clock: robust to a few wrong clocks).
    """
    r = records[records["timestamp"] >= 0].sort_values("offset")
    ts = r["timestamp"].astype("int64")
    prev_max = ts.cummax().shift(1)
    late = (prev_max - ts).where(ts < prev_max)
    skew = ts - ts.rolling(window, center=True, min_periods=1).median()
    frame = pd.DataFrame({"producerId": r["producerId"].to_numpy(), "offset": r["offset"].to_numpy(),
                          "late": late.to_numpy(), "skew": skew.to_numpy()})
    g = frame.groupby("producerId", sort=True)
    out = pd.DataFrame({
        "records": g["offset"].size(), "first_offset": g["offset"].min(), "last_offset": g["offset"].max(),
        "out_of_order": g["late"].count(), "max_lateness_ms": g["late"].max(), "mean_lateness_ms": g["late"].mean(),
        "skew_median_ms": g["skew"].median(), "skew_mean_ms": g["skew"].mean(), "skew_std_ms": g["skew"].std(ddof=0),
        "skew_p01_ms": g["skew"].quantile(0.01), "skew_p99_ms": g["skew"].quantile(0.99),
        "skew_max_abs_ms": g["skew"].apply(lambda s: s.abs().max())}).reset_index()
    out["out_of_order_fraction"] = out["out_of_order"] / out["records"]
    out["max_lateness_ms"] = out["max_lateness_ms"].fillna(0)
    return out


def default_targets(timestamps: pd.Series, n: int = 50) -> np.ndarray:
    """``n`` target timestamps: quantiles 1 %..99 % of the partition's non-negative timestamps."""
    ts = timestamps[timestamps >= 0]
    if ts.empty:
        return np.array([], dtype="int64")
    return np.unique(np.quantile(ts.to_numpy(), np.linspace(0.01, 0.99, n)).astype("int64"))


def offsets_for_times(records: pd.DataFrame, segments: pd.DataFrame, targets: Iterable[int]) -> pd.DataFrame:
    """For each target: the ListOffsets answer (``UnifiedLog.fetchOffsetByTimestamp``) and what a consumer
    seeking there sees before the target (KIP-32, seed 000: "the user might see earlier messages").

    The broker searches the first segment whose ``largestTimestamp`` (``segments``: ``base_offset``,
    ``largest_timestamp``, as :func:`segment_retention` gives) is >= target and answers its first
    record with timestamp >= target (null if that segment has none, e.g. a v0 segment whose mtime
    is recent).  From that offset on, ``earlier_records`` records still carry a timestamp < target, the
    last of them at ``last_earlier_offset`` (``offset_span`` records after the answer) and the
    earliest ``max_early_ms`` before the target.
    """
    r = records.sort_values("offset")
    off, ts = r["offset"].to_numpy(), r["timestamp"].to_numpy()
    seg = r["segment"].to_numpy()
    segs = segments.sort_values("base_offset")
    bases, largest = segs["base_offset"].to_numpy(), segs["largest_timestamp"].to_numpy()
    rows = []
    for t in targets:
        t = int(t)
        row: dict[str, Any] = {"target": t, "answer_offset": None, "answer_timestamp": None, "earlier_records": 0,
                               "last_earlier_offset": None, "offset_span": 0, "max_early_ms": 0}
        hit = np.nonzero(largest >= t)[0]
        if len(hit):
            in_seg = np.nonzero((seg == bases[hit[0]]) & (ts >= t))[0]
            if len(in_seg):
                i = in_seg[0]
                row["answer_offset"], row["answer_timestamp"] = int(off[i]), int(ts[i])
                after = ts[i:]
                early = np.nonzero((after < t) & (after >= 0))[0]
                if len(early):
                    row["earlier_records"] = int(len(early))
                    row["last_earlier_offset"] = int(off[i + early[-1]])
                    row["offset_span"] = int(off[i + early[-1]] - off[i])
                    row["max_early_ms"] = int(t - after[early].min())
        rows.append(row)
    out = pd.DataFrame(rows, columns=["target", "answer_offset", "answer_timestamp", "earlier_records",
                                      "last_earlier_offset", "offset_span", "max_early_ms"])
    for c in ("answer_offset", "answer_timestamp", "last_earlier_offset"):
        out[c] = out[c].astype("Int64")
    return out


def fetch_version_classes() -> dict[int, list[int]]:
    """Representative fetch version → the versions that behave the same on the fetch path: the target
    magic (v0-1 → v0, v2-3 → v1, v4+ → v2) and the zstd rule (< v10 cannot carry zstd)."""
    from ..broker.fetch import LATEST_FETCH_VERSION
    return {1: [0, 1], 3: [2, 3], 9: list(range(4, 10)), LATEST_FETCH_VERSION: list(range(10, LATEST_FETCH_VERSION + 1))}


_COST_FIELDS = ("bytes_read", "bytes_out", "bytes_decompressed", "bytes_compressed", "records_touched",
                "batches_rebuilt", "batches_copied", "batches_dropped", "decompressions", "compressions")


def conversion_costs(data: bytes, topic_config, *, versions: Iterable[int] | None = None,
                     timed: bool = False, table=None) -> list[dict]:
    """Per fetch version, what serving ``data`` (one segment, from its first offset) costs the broker,
    from :func:`kafkafmt.broker.fetch.fetch`'s cost model.  With ``timed`` each row also has
    ``cpu_time_ns`` (a measurement: keep it apart from the counts).

    Each row also carries the broker's predicted cost of that request on the topic's Kafka line
    (:func:`kafkafmt.costs.predict` with ``table``, default the measured :func:`kafkafmt.costs.load_table`):
    ``predicted_cpu_s``, ``predicted_memory_bytes`` (the whole converted response when eager, one chunk when
    lazy, KIP-283; 0 for zero-copy) and ``cost_measured_on``, the release whose measured costs priced it.  They
    are null when the fetch answered an error or the table cannot price it (no table, a codec it lacks)."""
    from ..broker.fetch import fetch
    from ..costs import Counts, load_table, predict
    from ..errors import ConfigError
    line = topic_config.broker.kafka_line
    if table is None:
        try:
            table = load_table()
        except ConfigError:
            table = None
    out = []
    for v in (versions if versions is not None else fetch_version_classes()):
        res = fetch(data, topic_config=topic_config, fetch_version=v)
        c = res.cost.to_dict()
        row = {"fetch_version": v, "to_magic": res.to_magic, "zero_copy": res.zero_copy, "error": res.error,
               **{k: int(c[k]) for k in _COST_FIELDS},
               "predicted_cpu_s": None, "predicted_memory_bytes": None, "cost_measured_on": None}
        if table is not None and not res.error and not res.connection_closed:
            try:
                p = predict(Counts.from_fetch_result(res, line), line, table)
            except ConfigError:  # a codec the measured table does not price
                p = None
            if p is not None:
                row.update(predicted_cpu_s=p.cpu_s, predicted_memory_bytes=int(p.memory_bytes),
                           cost_measured_on=p.measured_on)
        if timed:
            row["cpu_time_ns"] = int(c["cpu_time_ns"])
        out.append(row)
    return out


# ================================================================================================
# log directories
def partition_dirs(log_dir: str | os.PathLike) -> list[Path]:
    """The ``<topic>-<partition>`` directories of a log directory (or ``log_dir`` itself if it is one)."""
    from ..log.files import parse_topic_partition_name
    root = Path(log_dir)
    if any(root.glob("*.log")):
        return [root]
    dirs = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            parse_topic_partition_name(d.name)
        except ValueError:
            continue
        dirs.append(d)
    return dirs


def segment_files(log_dir: str | os.PathLike) -> pd.DataFrame:
    """One row per segment: topic, partition, segment (base offset), path, size, last_modified_ms."""
    from ..log.clock import mtime_ms
    from ..log.files import parse_topic_partition_name
    rows = []
    for d in partition_dirs(log_dir):
        topic, part = parse_topic_partition_name(d.name)
        for f in sorted(d.glob("*.log")):
            rows.append({"topic": topic, "partition": part, "segment": _segment_base(f.name), "path": str(f),
                         "size": f.stat().st_size, "last_modified_ms": mtime_ms(f)})
    return pd.DataFrame(rows, columns=["topic", "partition", "segment", "path", "size", "last_modified_ms"])


def topic_settings(log_dir: str | os.PathLike, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Topic → :class:`kafkafmt.config.LogConfig`: from the generator's manifest (the configuration in
    force at the end, on its broker), else Kafka's defaults; ``overrides`` (Kafka properties) win."""
    from ..gen.workload_file import log_config
    from ..log.files import manifest_topic_properties
    props, broker = manifest_topic_properties(log_dir) or ({}, {})
    topics = {d.name.rsplit("-", 1)[0] for d in partition_dirs(log_dir)}
    return {t: log_config({**props.get(t, {}), **dict(overrides or {})}, broker) for t in sorted(topics)}


# ================================================================================================
# Spark
def _records_frame(spark, log_dir):
    """The records of every partition of ``log_dir`` through the kafkafmt data source (keys and values
    left out), in :data:`RECORD_COLUMNS` with ``timestamp`` in ms."""
    from pyspark.sql import functions as F

    from . import register
    register(spark)
    dirs = [str(d) for d in partition_dirs(log_dir)]
    df = spark.read.format("kafkafmt").option("includeData", "false").load(dirs)
    return df.select("topic", "partition", "offset", F.unix_millis("timestamp").alias("timestamp"),
                     "timestampType", "producerId", "segment", "position")


def session(master: str | None = None):
    """:func:`kafkafmt.spark.session` (quiet, the data source registered) on ``master`` (default local[2])."""
    from . import session as spark_session
    return spark_session(master or "local[2]")


#: column order of each computed table
_SEGMENT_SCHEMA = {"topic": "string", "partition": "int", "base_offset": "long", "path": "string", "size_bytes": "long",
                   "last_modified_ms": "long", "records": "long", "first_offset": "long", "last_offset": "long",
                   "first_timestamp": "long", "last_timestamp": "long", "max_timestamp": "long",
                   "largest_timestamp": "long", "retention_ms": "long", "retention_bytes": "long",
                   "time_eligible_at_ms": "long", "time_deleted_at_ms": "long", "lat_deleted_at_ms": "long",
                   "delay_vs_lat_ms": "long", "size_deleted_at_offset": "long", "size_deleted_at_timestamp": "long"}
_SKEW_SCHEMA = {"topic": "string", "partition": "int", "producerId": "long", "records": "long", "first_offset": "long",
                "last_offset": "long", "out_of_order": "long", "out_of_order_fraction": "double",
                "max_lateness_ms": "double", "mean_lateness_ms": "double", "skew_median_ms": "double",
                "skew_mean_ms": "double", "skew_std_ms": "double", "skew_p01_ms": "double", "skew_p99_ms": "double",
                "skew_max_abs_ms": "double"}
_OFT_SCHEMA = {"topic": "string", "partition": "int", "target": "long", "answer_offset": "long",
               "answer_timestamp": "long", "earlier_records": "long", "last_earlier_offset": "long",
               "offset_span": "long", "max_early_ms": "long"}
_COST_SCHEMA = {"topic": "string", "partition": "int", "base_offset": "long", "fetch_version": "int", "to_magic": "int",
                "zero_copy": "boolean", "error": "string", **{k: "long" for k in _COST_FIELDS},
                "predicted_cpu_s": "double", "predicted_memory_bytes": "long", "cost_measured_on": "string"}


def _retention(config) -> tuple[int, int]:
    return int(config.retention_ms), int(config.retention_bytes)


def partition_tables(records: pd.DataFrame, files: pd.DataFrame, config, *, targets: int = 50,
                     window: int = 101) -> dict[str, pd.DataFrame]:
    """Every computed table for one topic-partition: ``records`` (:data:`RECORD_COLUMNS`, ``segment`` as
    base offset, ``timestamp`` in ms), ``files`` (:func:`segment_files` rows of that partition), ``config``
    (the topic's :class:`kafkafmt.config.LogConfig`).  The conversion costs read the segment files themselves."""
    topic, part = str(records["topic"].iloc[0]), int(records["partition"].iloc[0])
    ms, by = _retention(config)
    files = files.drop(columns=[c for c in ("topic", "partition") if c in files.columns])
    seg = segment_retention(records, files, retention_ms=ms, retention_bytes=by)
    seg["retention_ms"], seg["retention_bytes"] = ms, by
    oft = offsets_for_times(records, seg, default_targets(records["timestamp"], targets))
    skew = producer_skew(records, window=window)
    costs = pd.DataFrame([{"base_offset": int(r.segment), **row} for r in files.itertuples()
                          for row in conversion_costs(Path(r.path).read_bytes(), config)])
    from .compaction import COMPACTION_SCHEMA, compaction_frame, partition_compaction
    compaction = compaction_frame([partition_compaction(Path(files["path"].iloc[0]).parent, config)
                                   if len(files) else None])
    out = {}
    for name, frame, schema in (("segments", seg, _SEGMENT_SCHEMA), ("producer_skew", skew, _SKEW_SCHEMA),
                                ("offsets_for_times", oft, _OFT_SCHEMA), ("conversion_costs", costs, _COST_SCHEMA),
                                ("compaction", compaction, COMPACTION_SCHEMA)):
        frame = frame.drop(columns=[c for c in ("topic", "partition") if c in frame.columns])
        frame.insert(0, "topic", topic)
        frame.insert(1, "partition", part)
        out[name] = frame[[c for c in schema if c in frame.columns]]
    return out


def run_pipeline(log_dir: str | os.PathLike, out_dir: str | os.PathLike, *, spark=None, targets: int = 50,
                 window: int = 101, sample_segments: int = 2, overrides: Mapping[str, Any] | None = None,
                 progress: bool = True) -> dict[str, Any]:
    """Run every job over ``log_dir`` and write ``<out_dir>/<job>.parquet`` (atomically, each file).

    One Spark job: the records are grouped by topic-partition (``applyInPandas``) and each group
    computes all its tables (:func:`partition_tables`), returned to the driver as Arrow IPC blobs
    (the tables are small: one row per segment, producer or target).  Then the conversion timings
    are measured on the driver.  Returns ``{"outputs": {job: path}, "timings": {...}}``; measured
    durations go to ``timings.json`` and ``conversion_timings.parquet``, never into the computed tables.
    """
    from pyspark.sql import functions as F
    from tqdm.auto import tqdm
    spark = spark if spark is not None else session()
    files = segment_files(log_dir)
    if files.empty:
        from ..errors import NoSuchFileError
        raise NoSuchFileError(f"no segment files under {log_dir}")
    settings = topic_settings(log_dir, overrides)
    files_by_tp = {k: g for k, g in files.groupby(["topic", "partition"])}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    bar = tqdm(total=3, desc="pipeline", disable=not progress)
    t0 = time.perf_counter()
    records = _records_frame(spark, log_dir)
    records = records.withColumn("segment", F.regexp_extract("segment", _SEGMENT_NAME.pattern, 1).cast("long"))

    def job(pdf: pd.DataFrame) -> pd.DataFrame:
        key = (str(pdf["topic"].iloc[0]), int(pdf["partition"].iloc[0]))
        tables = partition_tables(pdf, files_by_tp[key], settings[key[0]], targets=targets, window=window)
        return pd.DataFrame({"name": list(tables), "data": [_to_ipc(t) for t in tables.values()]})

    with kafkafmt_errors():
        blobs = records.groupBy("topic", "partition").applyInPandas(job, "name string, data binary").collect()
    timings["spark_jobs"] = round(time.perf_counter() - t0, 3)
    bar.update(1)
    sort_keys = {"segments": ["base_offset"], "producer_skew": ["producerId"], "offsets_for_times": ["target"],
                 "conversion_costs": ["base_offset", "fetch_version"], "compaction": []}
    results = {}
    for name, keys in sort_keys.items():
        parts = [_from_ipc(b["data"]) for b in blobs if b["name"] == name]
        if name in _EMPTY:  # partitions without a row (topics that do not compact) add nothing
            parts = [f for f in parts if len(f)]
        frame = pd.concat(parts, ignore_index=True) if parts else _EMPTY.get(name, pd.DataFrame)()
        results[name] = frame.sort_values(["topic", "partition", *keys], ignore_index=True) if len(frame) else frame
    bar.update(1)
    t1 = time.perf_counter()
    results["conversion_timings"] = calibrate_conversion(files, settings, results["conversion_costs"],
                                                         sample_segments=sample_segments)
    timings["conversion_timings"] = round(time.perf_counter() - t1, 3)
    written = {name: str(_write_parquet(frame, out_dir / f"{name}.parquet")) for name, frame in results.items()}
    timings["total"] = round(time.perf_counter() - t0, 3)
    bar.update(1)
    bar.close()
    (out_dir / "timings.json").write_text(json.dumps({"seconds": timings, "log_dir": str(log_dir)}, indent=1) + "\n")
    return {"outputs": written, "timings": timings}


def _empty_compaction() -> pd.DataFrame:
    from .compaction import compaction_frame
    return compaction_frame([])


#: a job's table when no partition produced a row (no compacted topic: the columns, no rows)
_EMPTY = {"compaction": _empty_compaction}


def _to_ipc(frame: pd.DataFrame) -> bytes:
    import pyarrow as pa
    table = pa.Table.from_pandas(frame, preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(data: bytes) -> pd.DataFrame:
    import pyarrow as pa
    return pa.ipc.open_stream(pa.py_buffer(bytes(data))).read_all().to_pandas()


def calibrate_conversion(files: pd.DataFrame, settings: Mapping[str, Mapping], costs: pd.DataFrame, *,
                         sample_segments: int = 2, repeat: int = 3) -> pd.DataFrame:
    """Time kafkafmt's own down-conversion (the fetch path) on the first ``sample_segments`` segments of
    each topic (best of ``repeat``), per fetch version: ns per record touched, and what converting the
    whole log (``costs``) would take at that rate.  Measurements only."""
    rows = []
    sample = files.sort_values(["topic", "partition", "segment"]).groupby("topic").head(sample_segments)
    totals = costs.groupby("fetch_version")["records_touched"].sum() if not costs.empty else pd.Series(dtype="int64")
    for v in fetch_version_classes():
        cpu = records = nbytes = 0
        for r in sample.itertuples():
            tc = settings[r.topic]
            data = Path(r.path).read_bytes()
            best = min((conversion_costs(data, tc, versions=[v], timed=True)[0] for _ in range(repeat)),
                       key=lambda row: row["cpu_time_ns"])
            cpu += best["cpu_time_ns"]
            records += best["records_touched"]
            nbytes += best["bytes_read"]
        ns_per_record = cpu / records if records else None
        rows.append({"fetch_version": v, "sample_segments": len(sample), "sample_records": records,
                     "sample_bytes": nbytes, "sample_cpu_ns": cpu, "ns_per_record": ns_per_record,
                     "estimated_log_cpu_s": (ns_per_record * int(totals.get(v, 0)) / 1e9) if ns_per_record else 0.0,
                     "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    return pd.DataFrame(rows)


def _write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` to ``path`` atomically (temp file in the same directory, then rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
