"""``df.write.format("kafkafmt")``: rows with the Kafka sink's columns become Kafka log directories.

Columns (as Spark's Kafka sink, ``KafkaWriter``): ``value`` (required, binary or string), ``key``,
``topic`` (or the ``topic`` option, which wins as in Spark), ``partition`` (default 0),
``timestamp`` and ``headers`` (``array<struct<key string, value binary>>``), all optional.

Each task stages its rows as an Arrow IPC file under ``<path>/.kafkafmt-staging-<job>/``; the
driver's commit then appends them per topic-partition, in task order, through
:class:`kafkafmt.log.Log` (as a leader stores them: offsets from 0, CreateTime, leader epoch 0)
into ``<path>/.kafkafmt-tmp-<job>/<topic>-<partition>``, closes each log, and renames every
directory into place; nothing is visible under ``<path>`` before the renames, and an aborted job
leaves nothing behind.  The path must be on a file system that every executor and the driver share
(as for Spark's file sinks).

Options: :data:`kafkafmt.spark.options.WRITE_OPTIONS` (``magic``, ``codec``, ``batchSize``, ``segmentBytes``,
``topic``, ``defaultTimestamp``).

Save modes (a Python data source is written with ``append`` or ``overwrite``): ``append`` adds the rows
to an existing ``topic-partition`` directory, offsets continuing from its log end offset (as a
producer's records would: the existing log is copied, loaded as a broker loads it, appended to, and
swapped into place); ``overwrite`` replaces each partition the job writes.  Partitions the job does not
write are left alone in both modes.
"""
from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from ..constants import CompressionType, TimestampType
from ..errors import ConfigError
from ..log import Log, LogConfig, SimulatedClock, SystemClock
from ..log import lock as dirlock
from ..log.files import CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT
from ..log.logdir import merge_offsets, read_offsets, write_clean_shutdown
from ..records.builder import MemoryRecordsBuilder
from .options import WRITE_OPTIONS, default

STAGING_PREFIX = ".kafkafmt-staging-"
TMP_PREFIX = ".kafkafmt-tmp-"
DEFAULT_BATCH_SIZE = int(default(WRITE_OPTIONS, "batchSize"))


@dataclass(frozen=True)
class WriteOptions:
    """The writer's options (:data:`kafkafmt.spark.options.WRITE_OPTIONS`)."""

    path: str
    magic: int = 2
    codec: str = "none"
    batch_size: int = DEFAULT_BATCH_SIZE
    segment_bytes: int = LogConfig().segment_bytes
    topic: str | None = None
    default_timestamp: int | None = None
    overwrite: bool = False
    job: str = ""

    @classmethod
    def parse(cls, options: Mapping[str, str], *, overwrite: bool = False) -> "WriteOptions":
        o = {k.lower(): v for k, v in options.items()}
        if "path" not in o:
            raise ConfigError("no output: use .save(path) or .option('path', ...)")
        try:
            magic = int(o.get("magic", default(WRITE_OPTIONS, "magic")))
            batch_size = int(o.get("batchsize", DEFAULT_BATCH_SIZE))
            segment_bytes = int(o.get("segmentbytes", LogConfig().segment_bytes))
            default_ts = int(o["defaulttimestamp"]) if o.get("defaulttimestamp") else None
        except ValueError as e:
            raise ConfigError(f"writer option is not an integer: {e}") from None
        if magic not in (0, 1, 2):
            raise ConfigError(f"magic must be 0, 1 or 2, not {magic}")
        codec = str(o.get("codec", default(WRITE_OPTIONS, "codec"))).lower()
        try:
            CompressionType.from_name(codec)
        except ValueError:
            raise ConfigError(f"codec must be one of none, gzip, snappy, lz4, zstd, not {codec!r}") from None
        if codec == "zstd" and magic < 2:
            raise ConfigError("zstd needs magic 2 (KIP-110)")
        if batch_size <= 0:
            raise ConfigError(f"batchSize must be positive, not {batch_size}")
        LogConfig(segment_bytes=segment_bytes)  # Kafka's limits on segment.bytes
        return cls(o["path"], magic, codec, batch_size, segment_bytes, o.get("topic") or None, default_ts,
                   overwrite, uuid.uuid4().hex)

    @property
    def staging(self) -> Path:
        return Path(self.path) / f"{STAGING_PREFIX}{self.job}"


def stage(batches: Iterable[pa.RecordBatch], options: WriteOptions, task: str) -> dict:
    """Write one task's rows to an Arrow IPC file under the staging directory; the commit message."""
    options.staging.mkdir(parents=True, exist_ok=True)
    path = options.staging / f"{task}.arrow"
    tmp = path.with_suffix(".arrow.tmp")
    rows, writer = 0, None
    with pa.OSFile(str(tmp), "wb") as sink:
        for b in batches:
            if writer is None:
                writer = pa.ipc.new_stream(sink, b.schema)
            writer.write_batch(b)
            rows += b.num_rows
        if writer is not None:
            writer.close()
    os.replace(tmp, path)
    return {"file": str(path), "rows": rows, "task": task}


def _column(batch: pa.RecordBatch, name: str):
    i = batch.schema.get_field_index(name)
    return None if i < 0 else batch.column(i)


def _records(batch: pa.RecordBatch, options: WriteOptions, default_ts: int) -> Iterator[tuple]:
    """``(topic, partition, timestamp, key, value, headers)`` of each row, in order."""
    n = batch.num_rows
    value = _column(batch, "value")
    if value is None:
        raise ConfigError("Required attribute 'value' not found (the Kafka sink's columns: key, value, topic, "
                          "partition, timestamp, headers)")

    def as_bytes(col):
        if col is None:
            return [None] * n
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = col.cast(pa.binary())
        return col.to_pylist()

    topic = _column(batch, "topic")
    if options.topic is not None:
        topics = [options.topic] * n
    elif topic is None:
        raise ConfigError("topic option required when no 'topic' attribute is present")
    else:
        topics = topic.to_pylist()
    part = _column(batch, "partition")
    parts = [0] * n if part is None else part.to_pylist()
    ts = _column(batch, "timestamp")
    if ts is None:
        stamps = [None] * n
    elif pa.types.is_timestamp(ts.type):
        stamps = [None if v is None else v // 1000 for v in pc.cast(ts.cast(pa.timestamp("us")), pa.int64()).to_pylist()]
    else:
        stamps = pc.cast(ts, pa.int64()).to_pylist()
    hdr = _column(batch, "headers")
    headers = [()] * n if hdr is None else [tuple((h["key"], h["value"]) for h in (v or ())) for v in hdr.to_pylist()]
    for t, p, s, k, v, h in zip(topics, parts, stamps, as_bytes(_column(batch, "key")), as_bytes(value), headers):
        if t is None:
            raise ConfigError("null topic encountered while writing (set the topic option or fill the column)")
        yield t, 0 if p is None else int(p), default_ts if s is None else s, k, v, h


class _PartitionLog:
    """One topic-partition being written: a :class:`~kafkafmt.log.Log` and the batch being filled."""

    def __init__(self, root: Path, topic: str, partition: int, options: WriteOptions, first_ts: int,
                 existing: Path | None = None):
        self.dir = root / f"{topic}-{partition}"
        self.clock = SimulatedClock(max(0, first_ts))
        if existing is not None:  # append: a copy of the existing partition, loaded as a broker loads it
            shutil.copytree(existing, self.dir)
        self.log = Log(self.dir, LogConfig(segment_bytes=options.segment_bytes), self.clock,
                       topic_partition=(topic, partition))
        self.options = options
        self.next_offset = self.log.log_end_offset
        self.builder: MemoryRecordsBuilder | None = None

    def add(self, ts: int, key, value, headers) -> None:
        o = self.options
        if self.builder is None:
            self.builder = MemoryRecordsBuilder(o.magic, o.codec, TimestampType.CREATE_TIME, self.next_offset,
                                                partition_leader_epoch=0 if o.magic >= 2 else -1)
        self.builder.append(ts, key, value, headers)
        if self.builder.uncompressed_bytes >= o.batch_size:
            self.flush()

    def flush(self) -> None:
        b = self.builder
        if b is None:
            return
        self.builder = None
        if b.max_timestamp > self.clock.now():
            self.clock.set(b.max_timestamp)
        self.log.append_as_follower(b.build())
        self.next_offset = b.last_offset + 1

    def close(self) -> None:
        self.flush()
        self.log.close()


def build_logs(staged: list[dict], options: WriteOptions) -> list[Path]:
    """Append the staged rows (in task order) into log directories and rename them into place, holding the
    log directory's ``.lock`` (:mod:`kafkafmt.log.lock`): a running broker's directory is refused unchanged.
    The partitions' lines of the log directory's recovery-point and log-start checkpoints are merged into
    the directory's (the other partitions' lines kept), as the broker that wrote them would have left them."""
    root = Path(options.path)
    root.mkdir(parents=True, exist_ok=True)
    with dirlock.hold(root):
        return _build_logs(staged, options, root)


def _merge_log_dir_files(tmp_root: Path, root: Path, names: list[tuple[str, int]], fresh: bool) -> None:
    for name in (RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT):
        ours = read_offsets(tmp_root / name)
        merge_offsets(root / name, {tp: ours.get(tp) for tp in names}, fsync=False)
    if fresh and (tmp_root / CLEAN_SHUTDOWN_FILE).exists():  # every log here was written by this job, cleanly
        write_clean_shutdown(root, fsync=False)


def _build_logs(staged: list[dict], options: WriteOptions, root: Path) -> list[Path]:
    tmp_root = root / f"{TMP_PREFIX}{options.job}"
    default_ts = options.default_timestamp if options.default_timestamp is not None else SystemClock().now()
    logs: dict[tuple[str, int], _PartitionLog] = {}
    try:
        for msg in sorted(staged, key=lambda m: m["task"]):
            with pa.OSFile(msg["file"], "rb") as src:
                for batch in pa.ipc.open_stream(src):
                    for topic, partition, ts, key, value, headers in _records(batch, options, default_ts):
                        pl = logs.get((topic, partition))
                        if pl is None:
                            existing = root / f"{topic}-{partition}"
                            append = existing.is_dir() and not options.overwrite
                            pl = logs[(topic, partition)] = _PartitionLog(tmp_root, topic, partition, options, ts,
                                                                          existing if append else None)
                        pl.add(ts, key, value, headers)
        for pl in logs.values():
            pl.close()
        names = sorted(logs)
        ours = {f"{t}-{p}" for t, p in names}
        fresh = all(d.name in ours for d in root.iterdir() if d.is_dir() and not d.name.startswith("."))
        moved = _move_into_place(tmp_root, root, names)
        _merge_log_dir_files(tmp_root, root, names, fresh)
        return moved
    finally:
        for pl in logs.values():
            if not pl.log.closed:
                pl.log.close_handlers()
        shutil.rmtree(tmp_root, ignore_errors=True)
        shutil.rmtree(options.staging, ignore_errors=True)


def _move_into_place(tmp_root: Path, root: Path, names: list[tuple[str, int]]) -> list[Path]:
    """Rename every built partition into place; one that exists (replaced, or appended to in its copy)
    is first moved aside, so each partition directory is either the old one or the new one."""
    targets = [(tmp_root / f"{t}-{p}", root / f"{t}-{p}") for t, p in names]
    trash = tmp_root / ".replaced"
    for _, dst in targets:
        if dst.exists():
            trash.mkdir(exist_ok=True)
            os.rename(dst, trash / dst.name)
    for src, dst in targets:
        os.rename(src, dst)
    return [dst for _, dst in targets]


def abort(options: WriteOptions) -> None:
    """Remove everything the job staged."""
    shutil.rmtree(options.staging, ignore_errors=True)
    shutil.rmtree(Path(options.path) / f"{TMP_PREFIX}{options.job}", ignore_errors=True)


__all__ = ["WriteOptions", "stage", "build_logs", "abort"]
