"""The audit (:mod:`kafkafmt.audit`) as a Spark job over many brokers' ``log.dirs``.

The driver lists the partition directories (:func:`kafkafmt.audit.plan_audit`: names and sizes only)
and settles each topic's configuration (:func:`kafkafmt.audit.topic_setting`: the manifest beside the
partitions, then the overrides); one Spark task per partition directory runs
:func:`kafkafmt.audit.audit_partition` where the files are, read-only, and returns its
``to_dict()`` as JSON.  So each row is exactly what ``audit_log_dirs`` reports for that partition,
and :func:`audit_frame` puts the rows in a DataFrame (``topic``, ``partition``, ``dir``, the main
counts as columns, the whole object in ``audit``) for SQL or Parquet.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..audit import audit_partition, plan_audit, topic_setting
from ..kafka_lines import check_line
from ..log.files import parse_topic_partition_name
from .failures import kafkafmt_errors

__all__ = ["audit_partitions", "audit_frame", "AUDIT_COLUMNS"]

#: the DataFrame's columns besides the JSON object (Spark SQL types)
AUDIT_COLUMNS = {"topic": "string", "partition": "int", "dir": "string", "target": "string", "segments": "int",
                 "bytes": "long", "v0_batches": "long", "v1_batches": "long", "v2_batches": "long",
                 "legacy_records": "long", "legacy_bytes": "long", "records_without_timestamp": "long",
                 "compacted": "boolean", "legacy_deleted_at_ms": "long", "cleaner_bytes_after": "long",
                 "audit": "string"}


def _tasks(paths, target: str, now_ms: int, topic_config) -> list[tuple]:
    settings: dict = {}
    tasks = []
    for d, segments in plan_audit(paths):
        topic = parse_topic_partition_name(d.name)[0]
        key = (str(d.parent), topic)
        if key not in settings:
            settings[key] = topic_setting(topic, d.parent, topic_config)
        tasks.append((str(d), [str(s) for s in segments], settings[key], target, now_ms))
    return tasks


def _run_task(task: tuple) -> str:
    d, segments, setting, target, now_ms = task
    return json.dumps(audit_partition(Path(d), [Path(s) for s in segments], setting, target, now_ms).to_dict())


def audit_partitions(spark, paths: str | os.PathLike | Iterable[str | os.PathLike], target: str = "4.4",
                     now_ms: int | None = None, *,
                     topic_config: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict]:
    """Every partition's audit (``PartitionAudit.to_dict()``), computed by Spark tasks, in
    ``audit_log_dirs``' order; a kafkafmt error in a task is raised here as that error."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    target = check_line(target)
    now_ms = int(time.time() * 1000) if now_ms is None else int(now_ms)
    tasks = _tasks(paths, target, now_ms, topic_config)
    if not tasks:
        return []
    rdd = spark.sparkContext.parallelize(list(enumerate(tasks)), min(len(tasks), 64))
    with kafkafmt_errors():
        rows = rdd.map(lambda it: (it[0], _run_task(it[1]))).collect()
    return [json.loads(s) for _, s in sorted(rows)]


def _row(p: dict) -> dict:
    m = p["magics"]
    return {"topic": p["topic"], "partition": p["partition"], "dir": p["dir"], "target": p["target"],
            "segments": p["segments"], "bytes": p["bytes"],
            **{f"{v}_batches": m.get(v, {}).get("batches", 0) for v in ("v0", "v1", "v2")},
            "legacy_records": p["legacy"]["records"], "legacy_bytes": p["legacy"]["bytes"],
            "records_without_timestamp": p["records_without_timestamp"], "compacted": p["compacted"],
            "legacy_deleted_at_ms": p["retention"]["legacy_deleted_at_ms"],
            "cleaner_bytes_after": p["cleaner"]["bytes_after"], "audit": json.dumps(p, sort_keys=True)}


def audit_frame(spark, paths, target: str = "4.4", now_ms: int | None = None, *,
                topic_config: Mapping[str, Mapping[str, Any]] | None = None):
    """:func:`audit_partitions` as a DataFrame (:data:`AUDIT_COLUMNS`), one row per partition directory."""
    rows = [_row(p) for p in audit_partitions(spark, paths, target, now_ms, topic_config=topic_config)]
    schema = ", ".join(f"`{k}` {v}" for k, v in AUDIT_COLUMNS.items())
    return spark.createDataFrame([tuple(r[k] for k in AUDIT_COLUMNS) for r in rows], schema)
