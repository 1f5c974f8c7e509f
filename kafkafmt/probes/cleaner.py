"""What a cleaner pass over a partition would do differently on other Kafka lines (``kafkafmt clean``).

The rows of area ``cleaner`` of :mod:`kafkafmt.kafka_lines` (and ``log.leader_epoch_cache``) that matter for
the partition's data: the v0/v1 batches a 4.x cleaner rewrites as v2 (KAFKA-13093), whether a wrapper kept
whole is recompressed (0.9, before the KIP-31/KIP-32 follow-up), the magic a rebuilt wrapper takes
(KAFKA-4298) and whether an empty ``leader-epoch-checkpoint`` stays (KIP-101, KAFKA-7897) only where there
are v0/v1 batches; how v2 tombstones expire (KIP-534) only where there are v2 batches; how far
one pass reaches (KAFKA-3587, KAFKA-3894) and which emptied batch is kept (KAFKA-17076, KAFKA-20452) on any
compacted partition.  Read-only: the segments are only read.
"""
from __future__ import annotations

import os
from collections import Counter

from .. import kafka_lines
from ..log.cleaner.kernels import Spans
from ..log.view import PartitionView
from ..records.walker import magic_at

__all__ = ["partition_magics", "cleaner_line_notes"]


def partition_magics(partition_dir: str | os.PathLike) -> Counter:
    """``{magic: batches}`` of a partition directory's segments, as they are on disk: the walker's
    :func:`~kafkafmt.records.walker.magic_at` of every whole batch the compiled walk
    (:class:`~kafkafmt.log.cleaner.kernels.Spans`) finds in the mapped segment, so a large partition costs a
    header walk, not a batch object per batch."""
    out: Counter = Counter()
    for seg in PartitionView.of_files(partition_dir).segments:
        with seg.reading() as records, records.mapped() as data:
            spans = Spans(data)
            out.update(magic_at(data, int(p)) for p in spans.pos)
            del spans, data
    return out


def _ranges(lines: list[str]) -> str:
    """Consecutive lines of :data:`KAFKA_LINES` as ranges: ``0.9 … 3.9, 4.4``."""
    runs: list[list[str]] = []
    for ln in lines:
        if runs and kafka_lines.KAFKA_LINES.index(ln) == kafka_lines.KAFKA_LINES.index(runs[-1][-1]) + 1:
            runs[-1].append(ln)
        else:
            runs.append([ln])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]} … {r[-1]}" for r in runs)


def _legacy_note(value, legacy: int) -> str:
    return (f"the {legacy} v0/v1 batch(es) here are rewritten as v2 batches" if value
            else f"the {legacy} v0/v1 batch(es) here are kept as v0/v1")


def _retain_note(value) -> str:
    return {None: "an emptied batch is removed, even the last one of the round",
            "first uncleanable offset": "an emptied batch ending at the end of the cleaning round is kept",
            "high watermark": "an emptied batch is kept only when it ends at the high watermark"}[value]


def _reach_note(value) -> str:
    return {"whole segments": "a pass maps only whole segments while their offsets fit the offset map (and refuses "
                              "a segment of more offsets than the map holds)",
            "fully mapped segments": "a pass ends after the last segment the offset map holds in full",
            "record that fills the map": "a pass ends at the record that fills the offset map"}[value]


def _horizon_note(value, v2: int) -> str:
    return (f"tombstones in the {v2} v2 batch(es) here get a delete horizon in their batch header (deleteHorizonMs)"
            if value else f"tombstones in the {v2} v2 batch(es) here live by their segment's modification time, the "
            "batch bytes untouched")


def _whole_note(value) -> str:
    return ("a compressed v0/v1 wrapper whose messages are all kept is written back as it was" if value else
            "every compressed v0/v1 wrapper with a message kept is recompressed, even one kept whole")


def _rebuild_note(value) -> str:
    return ("a rebuilt compressed v0/v1 wrapper keeps its own magic" if value == "wrapper's own" else
            "a rebuilt compressed v0/v1 wrapper takes the topic's message format: one of another magic fails the pass")


def _epoch_note(value) -> str:
    return {"none": "no leader-epoch-checkpoint", "always": "an empty leader-epoch-checkpoint stays beside v0/v1 data",
            "v2 only": "below message format v2 the leader-epoch-checkpoint is deleted"}[value]


def cleaner_line_notes(line: str, magics: Counter) -> list[str]:
    """What the cleaner of ``line`` does with this data where other lines differ, one sentence per group of
    lines, each naming the row and its KIP or JIRA."""
    line = kafka_lines.check_line(line)
    legacy = magics.get(0, 0) + magics.get(1, 0)
    notes = []
    v2 = sum(n for m, n in magics.items() if m >= 2)
    keys = [("cleaner.legacy_to_v2", lambda v: _legacy_note(v, legacy)),
            ("cleaner.keep_whole_wrapper", _whole_note),
            ("cleaner.legacy_rebuild_magic", _rebuild_note),
            ("log.leader_epoch_cache", _epoch_note)] if legacy else []
    if v2:
        keys.append(("cleaner.delete_horizon", lambda v: _horizon_note(v, v2)))
    keys += [("cleaner.map_reach", _reach_note), ("cleaner.retain_last_batch", _retain_note)]
    for key, say in keys:
        mine = kafka_lines.value(key, line)
        others: dict = {}
        for other in kafka_lines.KAFKA_LINES:
            v = kafka_lines.value(key, other)
            if v != mine:
                others.setdefault(v, []).append(other)
        for v, lines in others.items():
            sources = []
            for other in lines:
                for r in kafka_lines.rows_between(line, other):
                    if r.key == key and r.source not in sources:
                        sources.append(r.source)
            notes.append(f"on Kafka {_ranges(lines)}: {say(v)} ({key}: {', '.join(sources)})")
    return notes
