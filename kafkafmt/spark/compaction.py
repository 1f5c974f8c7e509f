"""The ``compaction`` pipeline job: per compacted topic-partition, what Kafka 3.9's log cleaner would make of
it, computed on a COPY of its segment files (``kafkafmt.log.Log.clean``, the cleaner thread's passes at
the partition's last append, until a pass finds nothing to clean).  The log directory is never written.

One row per partition: records, distinct keys and bytes before and after; tombstones before, removed and
still waiting with the earliest time one of them may go (v2: the ``deleteHorizonMs`` the pass wrote,
KIP-534; v0/v1: the segment's modification time plus ``delete.retention.ms``, the legacy horizon); the
oldest retained record, its timestamp and the magic of its batch (a compacted topic keeps old formats
for as long as their keys are not written again).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

__all__ = ["partition_compaction", "COMPACTION_SCHEMA", "MAX_PASSES"]

#: a pass that cleans a prefix (a dedupe buffer too small) is followed by another, up to this many
MAX_PASSES = 20
CHECKPOINT = "cleaner-offset-checkpoint"
COMPACTION_SCHEMA = {
    "topic": "string", "partition": "int", "clean_at_ms": "long", "passes": "int",
    "records_before": "long", "records_after": "long", "keys_before": "long", "keys_after": "long",
    "bytes_before": "long", "bytes_after": "long", "tombstones_before": "long", "tombstones_after": "long",
    "tombstones_waiting_until_ms": "long", "oldest_offset": "long", "oldest_timestamp": "long", "oldest_magic": "int"}


def _scan(d: Path, delete_retention_ms: int) -> dict:
    """Records, keys, bytes, tombstones and the oldest record of the partition directory ``d``."""
    from ..log.clock import mtime_ms
    from ..records import MemoryRecords
    out = {"records": 0, "bytes": 0, "tombstones": 0, "keys": set(), "oldest": None, "horizons": []}
    for seg in sorted(d.glob("*.log")):
        data = seg.read_bytes()
        out["bytes"] += len(data)
        for b in MemoryRecords(data).batches():
            if b.is_control:
                continue
            for r in b.records():
                out["records"] += 1
                if out["oldest"] is None:
                    out["oldest"] = (r.offset, r.timestamp, b.magic)
                if r.key is None:
                    continue
                out["keys"].add(bytes(r.key))
                if r.value is None:
                    out["tombstones"] += 1
                    legacy = mtime_ms(seg) + delete_retention_ms
                    out["horizons"].append(b.delete_horizon_ms if b.magic >= 2 else legacy)
    return out


def _copy(partition_dir: Path, into: Path) -> Path:
    """The partition directory and its log directory's cleaner checkpoint, modification times kept."""
    dest = into / partition_dir.name
    shutil.copytree(partition_dir, dest)
    ckpt = partition_dir.parent / CHECKPOINT
    if ckpt.exists():
        shutil.copy2(ckpt, into / CHECKPOINT)
    return dest


def _clean_until_done(d: Path, config, now: int, cleaner) -> int:
    import warnings

    from ..log import Log, SimulatedClock
    passes = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = Log(d, config, SimulatedClock(now), clean_shutdown=True)
    try:
        while passes < MAX_PASSES and log.clean(now=now, cleaner=cleaner).cleaned:
            passes += 1
    finally:
        log.close()
    return passes


def partition_compaction(partition_dir: str | os.PathLike, config, *, clean_at_ms: int | None = None,
                         cleaner=None) -> dict | None:
    """The job's row for one partition (None when its topic does not compact).  ``clean_at_ms``: the
    cleaner's clock (default: the latest segment modification time, the partition's last append);
    ``cleaner``: a :class:`~kafkafmt.log.cleaner.offset_map.CleanerConfig` (Kafka's defaults)."""
    from ..log.clock import mtime_ms
    if not config.compact:
        return None
    src = Path(partition_dir)
    segs = sorted(src.glob("*.log"))
    if not segs:
        return None
    now = int(clean_at_ms) if clean_at_ms is not None else max(mtime_ms(s) for s in segs)
    drm = config.delete_retention_ms
    topic, _, part = src.name.rpartition("-")
    before = _scan(src, drm)
    with tempfile.TemporaryDirectory(prefix="kafkafmt-compaction-") as tmp:
        d = _copy(src, Path(tmp))
        passes = _clean_until_done(d, config, now, cleaner)
        after = _scan(d, drm)
    oldest = after["oldest"] or (None, None, None)
    waiting = [h for h in after["horizons"] if h is not None]
    return {"topic": topic, "partition": int(part), "clean_at_ms": now, "passes": passes,
            "records_before": before["records"], "records_after": after["records"],
            "keys_before": len(before["keys"]), "keys_after": len(after["keys"]),
            "bytes_before": before["bytes"], "bytes_after": after["bytes"],
            "tombstones_before": before["tombstones"], "tombstones_after": after["tombstones"],
            "tombstones_waiting_until_ms": min(waiting) if waiting else None,
            "oldest_offset": oldest[0], "oldest_timestamp": oldest[1], "oldest_magic": oldest[2]}


def compaction_frame(rows: list[dict | None]) -> pd.DataFrame:
    """The job's table from :func:`partition_compaction` rows (None rows dropped), in schema order."""
    return pd.DataFrame([r for r in rows if r is not None], columns=list(COMPACTION_SCHEMA))
