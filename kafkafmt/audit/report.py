"""The audit of one or more log directories: per topic-partition, what is on disk and what a Kafka line
(``target``) will do with it.  :func:`audit_log_dirs` is the entry point; :class:`AuditReport` /
:class:`PartitionAudit` the result (``to_dict`` for JSON).

What each partition says, and where the rule comes from:

* ``magics``: batches, records and bytes per message format (v0, v1, v2) and batches per codec;
  ``timestamp_types`` (records per ``TimestampType``) and ``records_without_timestamp`` (-1: every
  v0 record, and any record written with -1);
* ``compacted`` (``cleanup.policy`` contains ``compact``, from :mod:`kafkafmt.audit.topics`): a
  compacted topic's old batches never age out, only the cleaner rewrites them;
* ``retention``: when retention by time deletes the segments holding v0/v1 data, by
  :func:`kafkafmt.log.retention.time_deletion_times` over each segment's ``largestTimestamp`` (max
  record timestamp, else the ``.log`` mtime: v0 segments age by their file time); ``None`` = never
  (``cleanup.policy`` without ``delete``, or ``retention.ms=-1``);
* ``cleaner``: batches, records and bytes of the v0/v1 entries before, and after the target's cleaner has
  cleaned a temporary copy of a compacted partition (:mod:`kafkafmt.audit.cleaning`: Kafka's cleaner on
  that line, byte for byte; on 4.4 retained entries become v2, KAFKA-13093, and superseded keys go too):
  ``batches_after`` / ``records_after`` / ``bytes_after`` count the batches holding the former v0/v1
  offsets, ``cleaned_copy`` the whole partition after; ``rewrite_only`` is the format rewrite alone
  (:func:`kafkafmt.log.cleaner.legacy_to_v2.rewrite_as_v2` per entry, every record kept; a compressed batch's
  size is that of kafkafmt's codec, which may find other matches than Java's, e.g. snappy-java); and
  whether the target's cleaner rewrites legacy data (row ``cleaner.legacy_to_v2``) on this topic;
* ``clients``: the client generations a broker of the target no longer answers, and what the others
  read from this partition (:mod:`kafkafmt.audit.clients`).
"""
from __future__ import annotations

import datetime
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .. import kafka_lines
from ..log.files import parse_topic_partition_name
from ..log.retention import time_deletion_times
from .cleaning import CleanedCopy, clean_a_copy
from .clients import LINE_ROWS, client_verdicts
from .scan import MagicCounts, SegmentScan, partition_dirs, scan_segment, segment_paths
from .topics import TopicSetting, delete_retention_ms, topic_setting

__all__ = ["PartitionAudit", "AuditReport", "audit_log_dirs", "audit_partition", "plan_audit"]


@dataclass
class PartitionAudit:
    """One topic-partition directory: its segments and what the target line makes of them."""

    topic: str
    partition: int
    dir: str
    setting: TopicSetting
    segments: list[SegmentScan]
    target: str
    now_ms: int
    #: a compacted partition with v0/v1 data after the target's cleaner cleaned a copy (else None)
    cleaned: CleanedCopy | None = None

    # --- what is on disk ----------------------------------------------------------------------
    @property
    def magics(self) -> dict[int, MagicCounts]:
        out: dict[int, MagicCounts] = {}
        for s in self.segments:
            for m, c in s.magics.items():
                out.setdefault(m, MagicCounts()).add(c)
        return dict(sorted(out.items()))

    @property
    def legacy(self) -> MagicCounts:
        out = MagicCounts()
        for s in self.segments:
            out.add(s.legacy)
        return out

    @property
    def compacted(self) -> bool:
        return self.setting.config.compact

    def timestamp_types(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.segments:
            for k, v in s.timestamp_types.items():
                out[k] = out.get(k, 0) + v
        return dict(sorted(out.items()))

    # --- what the target line does with it -----------------------------------------------------
    def deletion_times(self) -> list[int] | None:
        """When retention by time deletes each segment (None: never by time)."""
        cfg = self.setting.config
        if not cfg.delete or cfg.retention_ms < 0 or not self.segments:
            return None
        return [int(t) for t in time_deletion_times([s.largest_timestamp for s in self.segments], cfg.retention_ms)]

    def retention(self) -> dict:
        times = self.deletion_times()
        legacy = [i for i, s in enumerate(self.segments) if s.legacy.batches]
        gone_at = max(times[i] for i in legacy) if times is not None and legacy else None
        left = [i for i in legacy if times is None or times[i] > self.now_ms]
        cfg = self.setting.config
        return {"cleanup_policy": ",".join(cfg.cleanup_policy), "retention_ms": cfg.retention_ms,
                "legacy_segments": len(legacy), "legacy_deleted_at_ms": gone_at,
                "legacy_segments_left_at_now": len(left),
                "legacy_batches_left_at_now": sum(self.segments[i].legacy.batches for i in left),
                "segment_deleted_at_ms": times}

    def cleaner(self) -> dict:
        legacy = self.legacy
        row = kafka_lines.change("cleaner.legacy_to_v2")
        rewrites = bool(row.value(self.target))
        rewrite = {"batches": sum(s.rewritten_batches for s in self.segments),
                   "bytes": sum(s.rewritten_bytes for s in self.segments)}
        after = self.cleaned.legacy if self.cleaned is not None else None
        return {"applies": self.compacted and rewrites and legacy.batches > 0, "target_rewrites_legacy": rewrites,
                "source": row.source, "records": legacy.records,
                "batches_before": legacy.batches, "bytes_before": legacy.bytes,
                "batches_after": after.batches if after else rewrite["batches"],
                "records_after": after.records if after else legacy.records,
                "bytes_after": after.bytes if after else rewrite["bytes"],
                "rewrite_only": rewrite,
                "cleaned_copy": self.cleaned.to_dict() if self.cleaned is not None else None}

    def legacy_status(self) -> str:
        """One phrase: what becomes of this partition's v0/v1 data under the target."""
        if not self.legacy.batches:
            return "no v0/v1 data"
        ret = self.retention()
        if self.compacted and self.cleaner()["target_rewrites_legacy"]:
            fate = "rewritten as v2 by the cleaner"
        elif self.compacted:
            fate = "kept as v0/v1 by the cleaner"
        else:
            fate = None
        if ret["legacy_deleted_at_ms"] is not None:
            at = ret["legacy_deleted_at_ms"]
            when = datetime.datetime.fromtimestamp(at / 1000, datetime.timezone.utc).isoformat(timespec="milliseconds")
            age = f"deleted by retention at {when} ({at})"
            return f"{fate}; else {age}" if fate else age
        return fate or "kept forever (never deleted by time)"

    def to_dict(self) -> dict:
        verdicts = client_verdicts(self.target)
        has_legacy = self.legacy.batches > 0
        first = next((s.legacy_first_offset for s in self.segments if s.legacy_first_offset is not None), None)
        last = next((s.legacy_last_offset for s in reversed(self.segments) if s.legacy_last_offset is not None), None)
        return {
            "topic": self.topic, "partition": self.partition, "dir": self.dir, "target": self.target,
            "segments": len(self.segments), "bytes": sum(s.size for s in self.segments),
            "first_segment_offset": self.segments[0].base_offset if self.segments else None,
            "next_offset": next((s.next_offset for s in reversed(self.segments) if s.next_offset is not None), None),
            "magics": {f"v{m}": c.to_dict() for m, c in self.magics.items()},
            "timestamp_types": self.timestamp_types(),
            "records_without_timestamp": sum(s.records_without_timestamp for s in self.segments),
            "legacy": {**self.legacy.to_dict(), "first_offset": first, "last_offset": last},
            "compacted": self.compacted, "config_source": self.setting.source,
            "legacy_status": self.legacy_status(), "retention": self.retention(), "cleaner": self.cleaner(),
            "clients_refused": [v["name"] for v in verdicts if not (v["can_produce"] and v["can_fetch"])],
            "clients_reading_legacy": [v["name"] for v in verdicts if v["can_fetch"]] if has_legacy else [],
        }


@dataclass
class AuditReport:
    """Every audited partition, the target line, the clock and the client generations' verdicts."""

    target: str
    now_ms: int
    inputs: list[str]
    partitions: list[PartitionAudit] = field(default_factory=list)

    @property
    def legacy_batches(self) -> int:
        return sum(p.legacy.batches for p in self.partitions)

    def totals(self) -> dict:
        magics: dict[int, MagicCounts] = {}
        for p in self.partitions:
            for m, c in p.magics.items():
                magics.setdefault(m, MagicCounts()).add(c)
        return {"partitions": len(self.partitions), "segments": sum(len(p.segments) for p in self.partitions),
                "magics": {f"v{m}": c.to_dict() for m, c in sorted(magics.items())},
                "legacy_partitions": sum(1 for p in self.partitions if p.legacy.batches),
                "compacted_legacy_partitions": sum(1 for p in self.partitions if p.legacy.batches and p.compacted)}

    def to_dict(self) -> dict:
        return {"target": self.target, "now_ms": self.now_ms, "inputs": self.inputs, "totals": self.totals(),
                "rows": [kafka_lines.change(k).to_dict() for k in LINE_ROWS],
                "clients": client_verdicts(self.target),
                "partitions": [p.to_dict() for p in self.partitions]}


def plan_audit(paths: Iterable[str | os.PathLike]) -> list[tuple[Path, list[Path]]]:
    """The partition directories of ``paths`` and their segments, and nothing read yet; a path that is
    neither a log directory nor a partition directory is a :class:`~kafkafmt.errors.NoSuchFileError`."""
    out = []
    for path in paths:
        for d in partition_dirs(path):
            out.append((d, segment_paths(d)))
    return out


def audit_partition(partition_dir: Path, segments: list[Path], setting: TopicSetting, target: str, now_ms: int,
                    progress: Callable[[int], Any] | None = None) -> PartitionAudit:
    """Scan one partition directory (its ``segments``, oldest first)."""
    topic, part = parse_topic_partition_name(partition_dir.name)
    scans = []
    horizon = now_ms + delete_retention_ms(setting.config)  # a cleaning now: currentTime + delete.retention.ms
    for p in segments:
        scans.append(scan_segment(p, horizon))
        if progress is not None:
            progress(p.stat().st_size)
    cleaned = None
    if setting.config.compact and any(s.legacy.batches for s in scans):
        cleaned = clean_a_copy(partition_dir, setting.config, target, now_ms)
    return PartitionAudit(topic, part, str(partition_dir), setting, scans, target, now_ms, cleaned)


def audit_log_dirs(paths: str | os.PathLike | Iterable[str | os.PathLike], target: str = "4.4",
                   now_ms: int | None = None, *, topic_config: Mapping[str, Mapping[str, Any]] | None = None,
                   progress: Callable[[int], Any] | None = None) -> AuditReport:
    """Audit one or more broker ``log.dirs`` entries (or partition directories) for the Kafka line
    ``target`` (``3.9`` or ``4.4``) at broker time ``now_ms`` (default: the wall clock).

    ``topic_config``: ``{topic: {Kafka property: value}}`` (topic ``*``: every topic), over what the
    directory holds (:mod:`kafkafmt.audit.topics`).  ``progress(n)`` is called with the bytes of each
    segment read.  Nothing is written: every file is opened read-only.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    target = kafka_lines.check_line(target)
    now_ms = int(time.time() * 1000) if now_ms is None else int(now_ms)
    report = AuditReport(target, now_ms, paths)
    settings: dict[tuple[str, str], TopicSetting] = {}
    for d, segments in plan_audit(paths):
        topic = parse_topic_partition_name(d.name)[0]
        key = (str(d.parent), topic)
        if key not in settings:
            settings[key] = topic_setting(topic, d.parent, topic_config)
        report.partitions.append(audit_partition(d, segments, settings[key], target, now_ms, progress))
    return report
