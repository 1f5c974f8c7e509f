"""``kafkafmt clean``: one pass of Kafka's log cleaner (3.9.2's, or another line's with ``--kafka-line``) over a
partition directory; it first prints the line it applies and what the cleaner of the other lines would do
differently with this directory's data (:func:`kafkafmt.probes.cleaner_line_notes`)."""
from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path

from ..config import CLEANER_KEYS
from ..errors import ConfigError, NoSuchFileError
from . import add_format, add_kafka_line, choose_kernels


def register(sub) -> None:
    p = sub.add_parser(
        "clean", help="compact a partition as Kafka's log cleaner does (one cleaner-thread pass)",
        description="Clean PARTITION_DIR (<topic>-<partition>) as a Kafka 3.9.2 broker's cleaner thread would "
                    "when this partition is the filthiest: the range from cleaner-offset-checkpoint (in the "
                    "log directory holding the partition), the offset map, .cleaned -> .swap -> rename, the "
                    "checkpoint advanced; with cleanup.policy=compact,delete retention runs after. Topic "
                    "settings and the broker's cleaner settings (" + ", ".join(CLEANER_KEYS) + ") go by their "
                    "Kafka names through -c; --kafka-line 4.4 cleans as Kafka 4.4.0 does (v0/v1 data "
                    "rewritten as v2, KAFKA-13093). The line applied, and what the other lines' cleaners would do "
                    "differently with this directory's data, are printed first. The pass takes the log "
                    "directory's .lock as a broker does and refuses, changing nothing, while a broker (or anything "
                    "else) holds it; the broker's recovery-point and log-start checkpoints and clean-shutdown "
                    "marker are read from the log directory, and only cleaner-offset-checkpoint is written there.")
    p.add_argument("partition_dir", metavar="PARTITION_DIR")
    p.add_argument("--now", type=int, metavar="MS", help="the cleaner's clock in epoch ms (default: the wall clock)")
    p.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a topic or broker cleaner setting by its Kafka name (repeatable)")
    add_kafka_line(p, what="clean as")
    p.add_argument("--dry-run", action="store_true", help="clean a private copy; change no byte and no mtime")
    p.add_argument("--tombstones", action="store_true",
                   help="list every tombstone kept (by default: how many, grouped by when they may go)")
    add_format(p, json_help="one object: the line applied, the other lines' notes, the range cleaned, records and "
               "bytes read and written, the tombstones kept, the checkpoint")
    p.set_defaults(func=run)


def _split(pairs: list[str]) -> tuple[list[str], dict]:
    """``-c`` pairs: the broker's cleaner settings apart; the rest (topic keys, the broker's ``log.*``
    topic defaults, ``inter.broker.protocol.version``) as ``explain`` takes them.  ``message.max.bytes``
    is both (the default ``max.message.bytes`` and the cleaner's largest I/O buffer)."""
    topic, cleaner = [], {}
    for kv in pairs:
        if "=" not in kv:
            raise ConfigError(f"-c takes KEY=VALUE, got '{kv}'")
        k, v = (x.strip() for x in kv.split("=", 1))
        if k in CLEANER_KEYS:
            cleaner[k] = v
        if k not in CLEANER_KEYS or k == "message.max.bytes":
            topic.append(f"{k}={v}")
    return topic, cleaner


def _until(horizon: int | None) -> str:
    from ..viz.tables import iso_time
    return (f"until {horizon} ({iso_time(horizon)} UTC, the batch's deleteHorizonMs)" if horizon is not None
            else "until their segment's mtime + delete.retention.ms (v0/v1)")


def tombstone_lines(kept: list, every: bool = False) -> list[str]:
    """The tombstones a pass kept, by the time they may go: one line per delete horizon (v2, KIP-534) and
    one for the v0/v1 ones (their segment's mtime); with ``every``, one line per tombstone after."""
    if not kept:
        return []
    groups: dict = {}
    for offset, horizon in kept:
        groups.setdefault(horizon, []).append(offset)
    lines = [f"{len(kept)} tombstone(s) kept:"]
    for horizon in sorted(groups, key=lambda h: (h is None, h or 0)):
        offsets = groups[horizon]
        where = f"offset {offsets[0]}" if len(offsets) == 1 else f"offsets {min(offsets)} to {max(offsets)}"
        lines.append(f"  {len(offsets)} {_until(horizon)}: {where}")
    if every:
        lines += [f"  tombstone at offset {offset} kept {_until(horizon)}" for offset, horizon in kept]
    return lines


def _report(result, dry: bool, every: bool = False) -> None:
    s = result.stats
    verb = "would remove" if dry else "removed"
    if result.first_dirty_offset is None:
        print("nothing to clean: cleanup.policy does not include compact (-c cleanup.policy=compact)"
              if not result.compact else "nothing to clean: the log is empty")
    elif not result.cleaned:
        print(f"nothing to clean: dirty ratio {result.cleanable_ratio:.3f} from offset {result.first_dirty_offset} "
              f"(min.cleanable.dirty.ratio not exceeded, max.compaction.lag.ms not passed)")
    else:
        print(f"cleaned offsets [{result.first_dirty_offset}, {result.end_offset}) in "
              f"{len(result.groups)} group(s): {verb} {s.messages_read - s.messages_written} of {s.messages_read} "
              f"records, {s.bytes_read - s.bytes_written} of {s.bytes_read} bytes")
        for line in tombstone_lines(s.tombstones_kept, every):
            print(line)
        print(f"cleaner-offset-checkpoint: {result.checkpoint}")
        if result.deleted_files:
            print(f"{len(result.deleted_files)} replaced file(s) {'would wait' if dry else 'wait'} as .deleted; "
                  "Kafka deletes them after file.delete.delay.ms (the next open here removes them)")
    if result.deleted_segments:
        print(f"retention {verb} {result.deleted_segments} segment(s)")


class _ProgressBar:
    """A tqdm bar per phase of the pass (the offset map, then the filter), in bytes of segment data, on
    stderr and only on a terminal."""

    def __init__(self):
        self.bar, self.phase = None, None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase:
            self.close()
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=phase, unit="B", unit_scale=True, unit_divisor=1024, leave=False,
                            disable=None)
            self.phase = phase
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _print_line(partition_dir: Path, line: str, show: bool = True) -> list[str]:
    """The Kafka line the pass applies, and where the other lines' cleaners differ for this data (the notes)."""
    from ..kafka_lines import DEFAULT_LINE
    from ..probes import cleaner_line_notes, partition_magics
    notes = list(cleaner_line_notes(line, partition_magics(partition_dir)))
    if show:
        how = "the default" if line == DEFAULT_LINE else "--kafka-line"
        print(f"Kafka line {line} ({how}): the cleaner of Kafka {line}; on the other lines, for this data:")
        for note in notes:
            print(f"  {note}")
    return notes


def json_report(result, partition_dir: Path, line: str, notes: list[str], dry: bool) -> dict:
    """``kafkafmt clean --format json``'s object (docs/reference/cli-json.md)."""
    s = result.stats
    return {"partition_dir": str(partition_dir), "kafka_line": line, "other_lines": notes, "dry_run": dry,
            "compact": result.compact, "cleaned": result.cleaned, "first_dirty_offset": result.first_dirty_offset,
            "end_offset": result.end_offset, "cleanable_ratio": result.cleanable_ratio,
            "groups": [list(g) for g in result.groups], "records_read": s.messages_read,
            "records_written": s.messages_written, "bytes_read": s.bytes_read, "bytes_written": s.bytes_written,
            "tombstones_kept": [{"offset": o, "delete_horizon_ms": h} for o, h in s.tombstones_kept],
            "checkpoint": result.checkpoint, "deleted_files": [str(f) for f in result.deleted_files],
            "deleted_segments": result.deleted_segments}


#: what a cleaner pass writes: a partition's segments and their indexes (``.deleted``, ``.cleaned``, ``.swap``
#: on the way)
_CLEANER_FILES = ([".log"], [".index"], [".timeindex"], [".txnindex"])


@contextmanager
def _only_the_cleaners_files_change(partition_dir: Path):
    """Every other file of the log directory and of the partition as it was, its modification time
    included, when its bytes come back unchanged: the broker's (``.kafka_cleanshutdown``, the
    recovery-point and log-start checkpoints: ``LogManager``'s) and the partition's own
    (``leader-epoch-checkpoint``, ``partition.metadata``, producer snapshots).  Opening the partition here
    deletes the clean-shutdown marker and closing it writes it back, as ``LogManager``'s startup and
    shutdown do, and loading rewrites the epoch checkpoint (``truncateFromStart``); a cleaner thread
    touches none of them with the same bytes.  ``cleaner-offset-checkpoint`` and the segments keep what
    the pass gave them (a cleaned segment takes its last source segment's modification time)."""
    from ..log.cleaner import CLEANER_OFFSET_CHECKPOINT
    before = {}
    for folder in (partition_dir.parent, partition_dir):
        for p in folder.iterdir():
            name = p.name
            if not p.is_file() or name in (CLEANER_OFFSET_CHECKPOINT, ".lock") or p.suffixes[:1] in _CLEANER_FILES:
                continue
            before[p] = (p.read_bytes(), p.stat())
    try:
        yield
    finally:
        for p, (data, st) in before.items():
            if p.is_file() and p.read_bytes() == data:
                os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


def run(args) -> int:
    choose_kernels([args.partition_dir], "the cleaner", "kafkafmt.log.cleaner.kernels")  # a small partition: no compile, no numba
    from ..log import Log, SimulatedClock, SystemClock
    from ..log.cleaner import CLEANER_OFFSET_CHECKPOINT
    from ..log.cleaner.offset_map import CleanerConfig
    from ..log.readonly import LOG_DIR_STATE_FILES
    src = Path(args.partition_dir)
    if not src.is_dir():
        raise NoSuchFileError(f"{src} is not a partition directory")
    topic, broker = _split(args.config)
    cleaner = CleanerConfig.from_properties(broker)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from .explain import parse_topic_config
        config = parse_topic_config(topic, args.kafka_line)
    notes = _print_line(src, config.broker.kafka_line, show=args.format != "json")
    clock = SimulatedClock(args.now) if args.now is not None else SystemClock()
    work = src
    tmp = None
    if args.dry_run:  # a private copy (copy2 keeps the mtimes the legacy tombstone rule reads)
        tmp = Path(tempfile.mkdtemp(prefix="kafkafmt-clean-"))
        work = tmp / src.name
        shutil.copytree(src, work)
        for name in (CLEANER_OFFSET_CHECKPOINT, *LOG_DIR_STATE_FILES):  # the log directory's files a pass reads
            if (src.parent / name).is_file():
                shutil.copy2(src.parent / name, tmp / name)
    try:
        # takes the log directory's .lock for the whole pass: LogDirLockedError while a broker runs there
        with _only_the_cleaners_files_change(work):
            log = Log.open(work, config, clock)
            bar = _ProgressBar()
            try:
                result = log.clean(now=args.now, cleaner=cleaner, progress=bar)
            finally:
                bar.close()
                log.close()
        if args.format == "json":
            import json
            print(json.dumps(json_report(result, src, config.broker.kafka_line, notes, args.dry_run), indent=1))
        else:
            _report(result, args.dry_run, args.tombstones)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0
