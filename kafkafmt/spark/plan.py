"""Options of the ``kafkafmt`` data source and the read plan: which byte ranges of which segments.

The options, their defaults and meanings (named as Spark's Kafka source and file sources name theirs) are
:data:`kafkafmt.spark.options.READ_OPTIONS`; :meth:`ReadOptions.parse` reads them from Spark's option map.
"""
from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass, field, replace
from typing import Mapping

from ..errors import ConfigError
from ..log.view import PartitionView, discover
from .options import READ_OPTIONS

EARLIEST, LATEST = -2, -1
#: each option's documented default, by its lower-case name (Spark's option map is case-insensitive)
_DEFAULTS = {o.name.lower(): o.default for o in READ_OPTIONS}
DEFAULT_MAX_BYTES = int(_DEFAULTS["maxbytesperpartition"])
MODES = ("FAILFAST", "PERMISSIVE")
LEVELS = ("record", "batch")


@dataclass(frozen=True)
class ReadOptions:
    """The parsed options (:data:`kafkafmt.spark.options.READ_OPTIONS`)."""

    paths: tuple[str, ...]
    starting_offsets: object = "earliest"   # "earliest" or {topic: {partition: offset}}
    ending_offsets: object = "latest"
    starting_timestamp: int | None = None
    ending_timestamp: int | None = None
    max_bytes_per_partition: int = DEFAULT_MAX_BYTES
    min_partitions: int | None = None
    level: str = "record"
    include_data: bool = True
    mode: str = "FAILFAST"

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> "ReadOptions":
        """From Spark's (case-insensitive) option map; ``path`` or ``paths`` (a JSON list) name the input."""
        o = {k.lower(): v for k, v in options.items()}
        paths = _paths(o)
        mode = o.get("mode", _DEFAULTS["mode"]).upper()
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        level = o.get("level", _DEFAULTS["level"]).lower()
        if level not in LEVELS:
            raise ConfigError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
        start = _offsets(o.get("startingoffsets", _DEFAULTS["startingoffsets"]), "startingOffsets")
        end = _offsets(o.get("endingoffsets", _DEFAULTS["endingoffsets"]), "endingOffsets")
        if start == "latest":
            raise ConfigError("starting offset can't be latest for batch queries on Kafka (as Spark's Kafka source)")
        if end == "earliest":
            raise ConfigError("ending offset can't be earliest for batch queries on Kafka (as Spark's Kafka source)")
        _no_sentinel(start, LATEST, "startingOffsets", "latest")
        _no_sentinel(end, EARLIEST, "endingOffsets", "earliest")
        max_bytes = _int(o, "maxbytesperpartition", DEFAULT_MAX_BYTES)
        if max_bytes <= 0:
            raise ConfigError(f"maxBytesPerPartition must be positive, not {max_bytes}")
        min_parts = _int(o, "minpartitions", None)
        if min_parts is not None and min_parts <= 0:
            raise ConfigError(f"minPartitions must be positive, not {min_parts}")
        return cls(paths, start, end, _int(o, "startingtimestamp", None), _int(o, "endingtimestamp", None),
                   max_bytes, min_parts, level, _bool(o.get("includedata", _DEFAULTS["includedata"]), "includeData"), mode)


def _paths(o: Mapping[str, str]) -> tuple[str, ...]:
    if "paths" in o:
        try:
            paths = json.loads(o["paths"])
        except ValueError:
            paths = [o["paths"]]
        if isinstance(paths, str):
            paths = [paths]
    elif "path" in o:
        paths = [o["path"]]
    else:
        raise ConfigError("no input: use .load(path), .load([paths]) or .option('path', ...)")
    if not paths:
        raise ConfigError("no input: the list of paths is empty")
    return tuple(str(p) for p in paths)


def _int(o: Mapping[str, str], key: str, default):
    if key not in o or o[key] in (None, ""):
        return default
    try:
        return int(o[key])
    except ValueError:
        raise ConfigError(f"option {key}: {o[key]!r} is not an integer") from None


def _bool(text: str, name: str) -> bool:
    t = str(text).strip().lower()
    if t not in ("true", "false"):
        raise ConfigError(f"option {name} must be true or false, not {text!r}")
    return t == "true"


def _offsets(text: str, name: str):
    t = str(text).strip()
    if t.lower() in ("earliest", "latest"):
        return t.lower()
    try:
        spec = json.loads(t)
    except ValueError:
        raise ConfigError(f"{name}: expected earliest, latest or JSON like {{\"topic\":{{\"0\":23}}}}, "
                          f"not {t!r}") from None
    if not isinstance(spec, dict) or not all(isinstance(v, dict) for v in spec.values()):
        raise ConfigError(f"{name}: the JSON must map topics to {{partition: offset}} objects, not {t!r}")
    try:
        return {topic: {int(p): int(off) for p, off in parts.items()} for topic, parts in spec.items()}
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: partitions and offsets must be integers in {t!r}") from None


def _no_sentinel(spec, sentinel: int, name: str, word: str) -> None:
    if isinstance(spec, dict):
        for topic, parts in spec.items():
            for p, off in parts.items():
                if off == sentinel:
                    raise ConfigError(f"{name}: {topic}-{p} uses {sentinel} ({word}), which a batch query "
                                      f"cannot use there (as Spark's Kafka source)")


@dataclass(frozen=True)
class Split:
    """A byte range ``[start, end)`` of one segment, and the offsets ``[first_offset, end_offset)`` to keep."""

    topic: str
    partition: int
    segment: str
    start: int
    end: int
    first_offset: int
    end_offset: int
    #: ``end`` is where the partition's last (active) segment ended when the plan was made (its size taken
    #: once, as ``FileRecords`` does): a live broker may have written only part of a batch there, and such a
    #: last batch is not there yet (``FileLogInputStream``), not corruption; in an older segment it is
    tail: bool = False

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class Plan:
    """The splits to read, packed into Spark partitions, and each topic-partition's offset range."""

    options: ReadOptions
    partitions: list[list[Split]]
    offset_ranges: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)

    @property
    def splits(self) -> list[Split]:
        return [s for p in self.partitions for s in p]


#: the end offset of a split read to the log end (``latest``): past any offset a segment can hold
TO_THE_END = 2**63 - 1


def _resolve(spec, timestamp: int | None, part: PartitionView, *, start: bool) -> int | None:
    """The offset ``spec`` / ``timestamp`` names in ``part``; None for the log end offset (``latest``, or a
    timestamp after every record)."""
    if timestamp is not None:
        found = part.search_offset_by_timestamp(timestamp)
        return None if found is None else found.offset
    if isinstance(spec, dict):
        if part.topic in spec and part.partition in spec[part.topic]:
            off = spec[part.topic][part.partition]
            if off == EARLIEST:
                return part.log_start_offset
            if off == LATEST:
                return None
            return off
        spec = "earliest" if start else "latest"
    return part.log_start_offset if spec == "earliest" else None


def _check_topics(spec, parts: list[PartitionView], name: str) -> None:
    if isinstance(spec, dict):
        known = {(p.topic, p.partition) for p in parts}
        for topic, ps in spec.items():
            for p in ps:
                if (topic, p) not in known:
                    raise ConfigError(f"{name} names {topic}-{p}, which is not among the input partitions")


def _partition_splits(part: PartitionView, first: int, end: int) -> list[Split]:
    """Splits of one partition covering offsets ``[first, end)``; segments outside are never opened."""
    out = []
    segs = part.segments
    for i, seg in enumerate(segs):
        next_base = segs[i + 1].base_offset if i + 1 < len(segs) else None
        if next_base is not None and next_base <= first:
            continue
        if seg.base_offset >= end:
            break
        size = seg.size  # taken once
        lo = seg.start_position(first) if first > seg.base_offset else 0
        hi = seg.end_position(end) if next_base is None or end < next_base else size
        if hi > lo:
            out.append(Split(part.topic, part.partition, str(seg.log_path), lo, hi, first, end,
                             tail=next_base is None and hi >= size))
    return out


def _cut(split: Split, limit: int, boundaries: list[int]) -> list[Split]:
    """``split`` cut at batch boundaries (sorted) into pieces of at most ``limit`` bytes where the index allows."""
    pieces, lo = [], split.start
    while split.end - lo > limit:
        i = bisect.bisect_right(boundaries, lo + limit) - 1      # the last boundary <= lo + limit
        if i >= 0 and boundaries[i] > lo:
            cut = boundaries[i]
        else:                                                     # one batch is bigger than the limit
            j = bisect.bisect_right(boundaries, lo)
            if j >= len(boundaries) or boundaries[j] >= split.end:
                break
            cut = boundaries[j]
        pieces.append(replace(split, start=lo, end=cut, tail=False))
        lo = cut
    pieces.append(replace(split, start=lo))
    return pieces


def _pack(splits: list[Split], limit: int) -> list[list[Split]]:
    """Consecutive splits of one topic-partition grouped into Spark partitions of at most ``limit`` bytes
    (one split may exceed it).  Topic-partitions are never packed together: as in Spark's Kafka source,
    each gets at least one Spark partition, so a read is spread over the cores."""
    groups: list[list[Split]] = []
    size = 0
    for s in splits:
        same = groups and (groups[-1][-1].topic, groups[-1][-1].partition) == (s.topic, s.partition)
        if same and size + s.size <= limit:
            groups[-1].append(s)
            size += s.size
        else:
            groups.append([s])
            size = s.size
    return groups


def plan(options: ReadOptions | Mapping[str, str]) -> Plan:
    """The read plan for ``options`` (a :class:`ReadOptions` or Spark's option map).

    Opens only index files and, for timestamp or ``latest`` lookups, the one segment per partition
    that answers; every other ``.log`` is opened by the reader of its split alone.
    """
    opts = options if isinstance(options, ReadOptions) else ReadOptions.parse(options)
    parts = discover(opts.paths)
    _check_topics(opts.starting_offsets, parts, "startingOffsets")
    _check_topics(opts.ending_offsets, parts, "endingOffsets")
    splits: list[tuple[Split, object]] = []
    ranges = {}
    for part in parts:
        first = _resolve(opts.starting_offsets, opts.starting_timestamp, part, start=True)
        end = _resolve(opts.ending_offsets, opts.ending_timestamp, part, start=False)
        leo = part.log_end_offset() if first is None or end is None else None   # walks the last segment once
        first = leo if first is None else first
        ranges[(part.topic, part.partition)] = (first, max(first, leo if end is None else end))
        # reading to the log end covers the last segment's every byte, whatever the walk to its end found:
        # damage there is then reported (FAILFAST) rather than taken for the end of the log
        by_path = {str(s.log_path): s for s in part.segments}
        for sp in _partition_splits(part, first, TO_THE_END if end is None else end):
            splits.append((sp, by_path[sp.segment]))
    total = sum(s.size for s, _ in splits)
    limit = opts.max_bytes_per_partition
    if opts.min_partitions and total:
        limit = max(1, min(limit, math.ceil(total / opts.min_partitions)))
    cut: list[Split] = []
    for s, seg in splits:
        cut.extend(_cut(s, limit, seg.batch_boundaries(s.start, s.end)) if s.size > limit else [s])
    return Plan(opts, _pack(cut, limit), ranges)
