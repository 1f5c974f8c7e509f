"""Reading a partition directory for the audit, without changing a byte of it.

A segment's ``.log`` is walked by :class:`~kafkafmt.log.file_records.FileRecords` opened read-only
(``FileLogInputStream``'s rules: a partial batch at the end is not data), then mapped read-only
(:func:`kafkafmt.io.open_readonly`) and read up to the end of its last whole batch:

* batch headers (magic, codec, size, max timestamp) are read from the batch views, shallow;
* records (their magic, timestamp type and timestamp) come from the columnar decoder
  (:func:`~kafkafmt.records.columnar.records_table`, keys and values left out), CRCs checked;
* every v0/v1 entry is rewritten with :func:`kafkafmt.log.cleaner.legacy_to_v2.rewrite_as_v2`, to count what
  Kafka 4.x's cleaner would write for it.

Nothing else is opened: no index is read (the audit needs none) and no loader runs (Kafka's
``LogLoader`` may truncate, rebuild or delete files; see :mod:`kafkafmt.log.readonly`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..constants import NO_TIMESTAMP, TimestampType
from ..errors import KafkaFmtError, NoSuchFileError
from ..io import open_readonly
from ..log.cleaner.legacy_to_v2 import rewrite_as_v2
from ..log.clock import mtime_ms
from ..log.file_records import FileRecords
from ..log.files import parse_topic_partition_name
from ..records.memory import MemoryRecords, batch_view

__all__ = ["MagicCounts", "SegmentScan", "scan_segment", "partition_dirs", "segment_paths", "SEGMENT_NAME"]

#: a segment's ``.log`` (``.deleted`` / ``.cleaned`` / ``.swap`` leftovers are not part of the log)
SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
#: partition directories that are not (or no longer) the partition's data: KIP-113 / deletion suffixes
_SKIPPED_SUFFIXES = ("-delete", "-stray", "-future")


@dataclass
class MagicCounts:
    """Batches, records and bytes of one magic, and its batches per codec."""

    batches: int = 0
    records: int = 0
    bytes: int = 0
    codecs: dict[str, int] = field(default_factory=dict)

    def add(self, other: "MagicCounts") -> None:
        self.batches += other.batches
        self.records += other.records
        self.bytes += other.bytes
        for k, v in other.codecs.items():
            self.codecs[k] = self.codecs.get(k, 0) + v

    def to_dict(self) -> dict:
        return {"batches": self.batches, "records": self.records, "bytes": self.bytes,
                "codecs": dict(sorted(self.codecs.items()))}


@dataclass
class SegmentScan:
    """What one segment holds."""

    base_offset: int
    path: str
    size: int  #: bytes of whole batches (a partial batch at the end is left out, as Kafka reads)
    mtime_ms: int  #: the ``.log`` file's modification time
    max_timestamp: int = NO_TIMESTAMP  #: the largest batch max timestamp (-1: none, e.g. only v0)
    next_offset: int | None = None  #: the last batch's last offset + 1
    magics: dict[int, MagicCounts] = field(default_factory=dict)
    timestamp_types: dict[str, int] = field(default_factory=dict)  #: records per timestamp type
    records_without_timestamp: int = 0  #: records whose timestamp is -1 (every v0 record)
    legacy_first_offset: int | None = None  #: offset of the first v0/v1 record
    legacy_last_offset: int | None = None  #: offset of the last v0/v1 record (the last entry's header offset)
    rewritten_batches: int = 0  #: v2 batches :func:`rewrite_as_v2` makes of the v0/v1 entries
    rewritten_bytes: int = 0

    @property
    def largest_timestamp(self) -> int:
        """``LogSegment.largestTimestamp``: the max record timestamp, else the ``.log`` mtime."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.mtime_ms

    @property
    def legacy(self) -> MagicCounts:
        out = MagicCounts()
        for m, c in self.magics.items():
            if m < 2:
                out.add(c)
        return out


def partition_dirs(path: str | os.PathLike) -> list[Path]:
    """The partition directories ``path`` stands for: itself when it is a ``<topic>-<partition>``
    directory holding segments (or no sub-directory), else its ``<topic>-<partition>`` children
    (a broker's ``log.dirs`` entry; ``-delete``/``-stray``/``-future`` directories left out)."""
    root = Path(path)
    if not root.is_dir():
        raise NoSuchFileError(f"{path}: not a directory (give a broker's log.dirs entry or a partition directory)")
    if _is_partition_dir(root) and (any(_segments(root)) or not any(p.is_dir() for p in root.iterdir())):
        return [root]
    dirs = sorted(p for p in root.iterdir() if p.is_dir() and _is_partition_dir(p)
                  and not p.name.endswith(_SKIPPED_SUFFIXES))
    if not dirs:
        raise NoSuchFileError(f"{path}: no <topic>-<partition> directory in it (is it a broker's log.dirs entry?)")
    return dirs


def _is_partition_dir(p: Path) -> bool:
    try:
        parse_topic_partition_name(p.name)
    except ValueError:
        return False
    return True


def _segments(d: Path):
    return (p for p in d.iterdir() if SEGMENT_NAME.match(p.name))


def segment_paths(partition_dir: Path) -> list[Path]:
    """A partition's ``.log`` files, oldest (lowest base offset) first."""
    return sorted(_segments(partition_dir), key=lambda p: int(SEGMENT_NAME.match(p.name).group(1)))


def scan_segment(path: Path, delete_horizon_ms: int) -> SegmentScan:
    """Read one ``.log`` (read-only) into a :class:`SegmentScan`; an error names the file.
    ``delete_horizon_ms``: what a cleaning at this moment would set on rewritten batches holding a
    tombstone (:func:`~kafkafmt.log.cleaner.legacy_to_v2.rewrite_as_v2`)."""
    seg = SegmentScan(int(SEGMENT_NAME.match(path.name).group(1)), str(path), 0, mtime_ms(path))
    fr = FileRecords(path, file_already_exists=True, mutable=False)
    try:
        spans = [(b.position, b.size_in_bytes, b.magic) for b in fr.batches()]
    except KafkaFmtError as e:
        raise _in_file(e, path) from None
    finally:
        fr.close()
    if not spans:
        return seg
    seg.size = spans[-1][0] + spans[-1][1]
    with open_readonly(path) as mm:  # the file's edge: mapped read-only (kafkafmt.io)
        try:
            _scan_batches(seg, mm, spans, delete_horizon_ms)
            _scan_records(seg, MemoryRecords(mm, end=seg.size))
        except KafkaFmtError as e:
            raise _in_file(e, path) from None
    return seg


def _in_file(e: KafkaFmtError, path: Path) -> KafkaFmtError:
    e.args = (f"{path}: {e}",)
    return e


def _scan_batches(seg: SegmentScan, mm, spans, delete_horizon_ms: int) -> None:
    for pos, size, magic in spans:
        b = batch_view(mm, pos, pos + size, magic)
        c = seg.magics.setdefault(magic if magic < 2 else 2, MagicCounts())
        c.batches += 1
        c.bytes += size
        codec = b.compression.kafka_name
        c.codecs[codec] = c.codecs.get(codec, 0) + 1
        seg.max_timestamp = max(seg.max_timestamp, b.max_timestamp if magic > 0 else NO_TIMESTAMP)
        seg.next_offset = b.last_offset + 1
        if magic < 2:
            records = list(b.records())
            if seg.legacy_first_offset is None:
                seg.legacy_first_offset = records[0].offset if records else b.last_offset
            seg.legacy_last_offset = b.last_offset
            v2 = rewrite_as_v2(b, records, delete_horizon_ms=delete_horizon_ms)
            seg.rewritten_batches += 1 if v2 else 0
            seg.rewritten_bytes += len(v2)


def _scan_records(seg: SegmentScan, records: MemoryRecords) -> None:
    from ..kernel_mode import interpreted
    if interpreted():  # small log directories (kafkafmt.tools.choose_kernels): no pyarrow, no numba
        return _scan_records_reference(seg, records)
    from ..records.columnar import records_table  # pyarrow + numba: loaded on first use
    t = records_table(records, include_data=False)
    magic = t.column("magic").to_numpy(zero_copy_only=False)
    ts_type = t.column("timestamp_type").to_numpy(zero_copy_only=False)
    ts = t.column("timestamp_ms").to_numpy(zero_copy_only=False)
    for m, n in zip(*np.unique(np.minimum(magic, 2), return_counts=True)):
        seg.magics.setdefault(int(m), MagicCounts()).records += int(n)
    for k, n in zip(*np.unique(ts_type, return_counts=True)):
        name = TimestampType(int(k)).kafka_name
        seg.timestamp_types[name] = seg.timestamp_types.get(name, 0) + int(n)
    seg.records_without_timestamp = int(np.count_nonzero(ts == NO_TIMESTAMP))


def _scan_records_reference(seg: SegmentScan, records: MemoryRecords) -> None:
    """:func:`_scan_records` by the reference decoder, record by record: the same counts (a record counts
    under its batch's magic, as the ``magic`` column has it), the same error on the first invalid batch."""
    for b in records.batches():
        if not b.is_valid():
            b.ensure_valid()
        counts = seg.magics.setdefault(min(b.magic, 2), MagicCounts())
        for r in b.records():
            counts.records += 1
            name = r.timestamp_type.kafka_name
            seg.timestamp_types[name] = seg.timestamp_types.get(name, 0) + 1
            seg.records_without_timestamp += r.timestamp == NO_TIMESTAMP
