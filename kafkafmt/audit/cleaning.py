"""What a Kafka line's cleaner makes of a compacted partition, measured by cleaning a temporary copy.

The audit never writes into what it reads: the partition's files are copied (``shutil.copy2``: the
``.log`` modification times the v0/v1 tombstone rule reads come along) into a temporary directory,
the copy is opened with the topic's settings on the target line (``BrokerConfig.kafka_line``) and
cleaned by :func:`kafkafmt.log.cleaner.clean_log` -- Kafka's cleaner as it runs on that line, byte for
byte: on 4.4 retained v0/v1 entries become v2 batches (KAFKA-13093) *and* superseded keys, keyless
records and expired tombstones go -- pass after pass until the cleaner has nothing left it may clean
(``LogCleanerManager``: never the active segment; a full dedupe buffer cleans a prefix per pass).
The copy is then read and deleted.

The cleaning starts from the log start offset (no ``cleaner-offset-checkpoint``: the whole log is
dirty) at the audit's clock, with ``min.cleanable.dirty.ratio=0`` (the partition is taken as soon as
anything is dirty) and the topic's other settings.  The target line's topic rules apply: keys it
removed are dropped (KIP-724), and a ``segment.bytes`` below its minimum (KIP-1030) is raised to it.
"""
from __future__ import annotations

import bisect
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from .. import kafka_lines
from ..config import BrokerConfig, LogConfig, keys_by_name
from ..log.cleaner import clean_log
from ..log.clock import SimulatedClock
from ..log.log import Log
from ..records.memory import MemoryRecords
from .scan import MagicCounts, segment_paths

__all__ = ["CleanedCopy", "clean_a_copy", "target_config", "MAX_PASSES"]

#: passes of the cleaner at most (a dedupe buffer too small for the keys cleans a prefix per pass)
MAX_PASSES = 64


@dataclass
class CleanedCopy:
    """The partition after the target's cleaner: per magic, and what became of the v0/v1 offset runs."""

    passes: int = 0
    cleaned_to: int | None = None  #: the cleaner-offset-checkpoint after the last pass
    magics: dict[int, MagicCounts] = field(default_factory=dict)  #: the whole partition after cleaning
    legacy: MagicCounts = field(default_factory=MagicCounts)  #: batches holding offsets of former v0/v1 entries
    legacy_left: int = 0  #: of those, batches still v0/v1 (the active segment, or past the cleaned range)

    def to_dict(self) -> dict:
        return {"passes": self.passes, "cleaned_to": self.cleaned_to,
                "magics": {f"v{m}": c.to_dict() for m, c in sorted(self.magics.items())},
                "legacy_batches_left": self.legacy_left}


def target_config(config: LogConfig, target: str) -> LogConfig:
    """``config`` (a topic's settings) on the line ``target``, as the audit's cleaning uses it."""
    known = keys_by_name(target)
    removed = kafka_lines.removed_topic_keys(target)
    with warnings.catch_warnings():  # the settings kafkafmt keeps without modelling them: announced once already
        warnings.simplefilter("ignore")
        return _target_config(config, target, known, removed)


def _target_config(config: LogConfig, target: str, known, removed) -> LogConfig:
    props = {k: v for k, v in config.to_properties(defaults=True).items() if k in known and k not in removed}
    floor = int(kafka_lines.value("topic.check.segment.bytes", target))
    props["segment.bytes"] = str(max(int(props.get("segment.bytes", floor)), floor))
    props["min.cleanable.dirty.ratio"] = "0"
    return LogConfig.from_properties(props, broker=BrokerConfig(kafka_line=target))


def _legacy_runs(segments: list[Path]) -> list[tuple[int, int]]:
    """The offset runs [first, last] of consecutive v0/v1 entries in ``segments`` (copies)."""
    runs: list[list[int]] = []
    prev_legacy = False
    for p in segments:
        for b in MemoryRecords(p.read_bytes()).batches():
            legacy = b.magic < 2
            if legacy:
                first = b.base_offset if b.magic >= 2 else next(iter(b.records())).offset
                if prev_legacy:
                    runs[-1][1] = b.last_offset
                else:
                    runs.append([first, b.last_offset])
            prev_legacy = legacy
    return [(a, z) for a, z in runs]


def _in_runs(runs: list[tuple[int, int]], first: int, last: int) -> bool:
    i = bisect.bisect_right(runs, (first, float("inf"))) - 1
    return i >= 0 and runs[i][0] <= first and last <= runs[i][1]


def _count(out: CleanedCopy, segments: list[Path], runs: list[tuple[int, int]]) -> None:
    for p in segments:
        for b in MemoryRecords(p.read_bytes()).batches():
            records = sum(1 for _ in b.records())
            for counts, take in ((out.magics.setdefault(min(b.magic, 2), MagicCounts()), True),
                                 (out.legacy, _in_runs(runs, b.base_offset, b.last_offset))):
                if take:
                    counts.batches += 1
                    counts.records += records
                    counts.bytes += b.size_in_bytes
                    codec = b.compression.kafka_name
                    counts.codecs[codec] = counts.codecs.get(codec, 0) + 1
            if b.magic < 2 and _in_runs(runs, b.base_offset, b.last_offset):
                out.legacy_left += 1


def clean_a_copy(partition_dir: str | Path, config: LogConfig, target: str, now_ms: int) -> CleanedCopy:
    """Copy ``partition_dir``, clean the copy with ``target``'s cleaner at ``now_ms`` until nothing is left to
    clean, count it and delete it; ``partition_dir`` is only read."""
    src = Path(partition_dir)
    scratch = Path(tempfile.mkdtemp(prefix="kafkafmt-audit-clean-"))
    try:
        work = scratch / src.name
        work.mkdir()
        for p in sorted(src.iterdir()):
            if p.is_file() and p.suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot"):
                shutil.copy2(p, work / p.name)
        runs = _legacy_runs(segment_paths(work))
        log = Log(work, target_config(config, target), SimulatedClock(now_ms), clean_shutdown=True)
        out = CleanedCopy()
        try:
            while out.passes < MAX_PASSES:
                r = clean_log(log, now=now_ms)
                if not r.cleaned:
                    break
                out.passes += 1
                out.cleaned_to = r.checkpoint
                if r.end_offset >= r.first_uncleanable_offset:
                    break
        finally:
            log.close()
        _count(out, segment_paths(work), runs)
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
