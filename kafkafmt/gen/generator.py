"""The sample-log generator behind ``kafkafmt gen``: a workload file becomes a broker's log directory.

Each partition of each topic is simulated on its own (:func:`generate_partition`): producers send
batches at Poisson times (with bursts), their clocks skewed as their :class:`~kafkafmt.gen.workloads.ClockModel`
says, and every batch goes through :meth:`kafkafmt.log.Log.append_as_leader`, i.e. the broker's
LogValidator (offsets, LogAppendTime, timestamp bounds, format conversion, recompression), roll and
index rules, with retention run every ``log.retention.check.interval.ms`` of simulated time.  A
batch the broker refuses (a timestamp out of bounds ...) is counted as rejected, as the producer
would see it.  Keys go to ``toPositive(murmur2(key)) % partitions`` (Kafka's default partitioner),
so partitions are independent and are generated in a process pool.

The result is written into a temporary directory beside ``out`` and renamed into place; on any
failure nothing is left behind.  The log directory then holds what a broker's ``log.dirs`` entry
holds after a clean shutdown: ``<topic>-<partition>/`` directories (segments, ``.index``, ``.timeindex``,
``leader-epoch-checkpoint``, nothing else) and, at the top, ``recovery-point-offset-checkpoint``,
``log-start-offset-checkpoint`` (a line only for a partition whose log start offset is above its first
segment's base offset) and ``replication-offset-checkpoint`` (``LogManager`` / ``ReplicaManager``'s files),
``.kafka_cleanshutdown`` (``LogManager.shutdown``'s marker), plus ``kafkafmt-gen.json``, the run's manifest.

Replacing an existing ``out`` (``force``) takes its ``.lock`` first, as a broker would
(:mod:`kafkafmt.log.lock`): a directory a running broker holds is refused, untouched.
"""
from __future__ import annotations

import contextlib
import heapq
import json
import multiprocessing
import os
import random
import shutil
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from ..constants import CompressionType, ControlRecordType, TimestampType
from ..errors import KafkaFmtError
from ..kafka_lines import DEFAULT_LINE
from ..log import lock as dirlock
from ..log.clock import SimulatedClock
from ..log.files import (
    LOG_FILE_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT,
    MANIFEST,
    RECOVERY_POINT_CHECKPOINT,
    offset_from_file_name,
    write_checkpoint,
)
from ..log.log import Log
from ..log.logdir import write_clean_shutdown
from ..records import MemoryRecordsBuilder, end_txn_marker
from .workload_file import TopicSpec, WorkloadError, WorkloadSpec, log_config
from .workloads import partition_for_key

__all__ = ["generate_logs", "generate_partition", "parse_size", "MANIFEST", "REPLICATION_OFFSET_CHECKPOINT",
           "FIRST_PRODUCER_ID"]

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
FIRST_PRODUCER_ID = 1000
_PROGRESS_STEP = 1 << 20  # report progress every MiB appended


def parse_size(text: str | int) -> int:
    """``"1GB"`` / ``"200MiB"`` / ``"64k"`` / ``1048576`` → bytes (KB, MB, GB are powers of 1024, as Kafka's sizes)."""
    if isinstance(text, int):
        return text
    s = str(text).strip().upper().replace("IB", "B")
    for suffix, mult in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20),
                         ("K", 1 << 10), ("B", 1)):
        if s.endswith(suffix):
            s, m = s[:-len(suffix)], mult
            break
    else:
        m = 1
    try:
        value = float(s)
    except ValueError:
        raise WorkloadError(f"not a size: {text!r} (use e.g. 200MB or 1GB)") from None
    return int(value * m)


def _producer_instances(workload: WorkloadSpec, topic: TopicSpec):
    """``(group, index, name, producer id)`` of every producer of ``topic``; ids are numbered over the workload."""
    pid = FIRST_PRODUCER_ID
    for t in workload.topics:
        for g in t.producers:
            for i in range(g.count):
                if t is topic:
                    yield g, i, f"{g.name}-{i}" if g.count > 1 else g.name, pid
                pid += 1


def generate_partition(workload: WorkloadSpec, topic_name: str, partition: int, root: str | os.PathLike, *,
                       rate_factor: float = 1.0, target_bytes: int | None = None,
                       progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Simulate one partition into ``root/<topic>-<partition>`` and return its summary.

    ``rate_factor`` multiplies every producer's rate; with ``target_bytes`` the run stops once that
    many bytes were appended (instead of at the workload's end).  ``progress(n)`` is called with
    the bytes appended since its last call.
    """
    topic = next(t for t in workload.topics if t.name == topic_name)
    start, end = workload.start_ms, workload.start_ms + workload.duration_ms
    rng = random.Random(f"{workload.seed}:{topic.name}:{partition}")
    clock = SimulatedClock(start)
    # the private directory is written as a whole: the log-directory files come at the end (_write_log_dir_files)
    log = Log(Path(root) / f"{topic.name}-{partition}",
              log_config(topic.config, workload.broker, workload.kafka_line), clock, seed=rng.getrandbits(32),
              leader_epoch=topic.leader_epoch, log_dir_files=False)
    broker = _BrokerTimeline(log, clock, list(topic.changes), start, workload.retention_check_interval_ms)
    if workload.cleaner_enabled and log.config.compact:
        broker.enable_cleaner(workload.cleaner_config(), Path(root))
    inst, heap = _producers(workload, topic, partition, rng, rate_factor, start)
    appended = unreported = 0
    while heap:
        t_float, k = heapq.heappop(heap)
        t = int(t_float)
        if (target_bytes is None and t >= end) or (target_bytes is not None and appended >= target_bytes):
            break
        p = inst[k]
        broker.advance_to(t)
        size = _send(log, rng, p, t, start)
        appended += size
        unreported += size
        if progress is not None and unreported >= _PROGRESS_STEP:
            progress(unreported)
            unreported = 0
        heapq.heappush(heap, (_next_send(rng, p, t_float), k))
    clock.set(max(clock.now(), end if target_bytes is None else clock.now()))
    broker.advance_to(clock.now())
    log.delete_old_segments()
    if progress is not None and unreported:
        progress(unreported)
    return _summary(log, clock, topic, partition, inst, appended, broker.cleaner_summary())


def _producers(workload: WorkloadSpec, topic: TopicSpec, partition: int, rng: random.Random, rate_factor: float,
               start: int) -> tuple[list[dict], list[tuple[float, int]]]:
    """The producers sending to this partition (their keys here, rates, sequences) and the heap of their
    first send times."""
    inst, heap = [], []
    for g, i, name, pid in _producer_instances(workload, topic):
        keys = [k for k in (b"key-%07d" % j for j in range(g.keys)) if partition_for_key(k, topic.partitions) == partition]
        share = len(keys) / g.keys if g.keys else 1.0 / topic.partitions
        rate = g.rate * rate_factor * share / g.count  # records per second from this producer to this partition
        mean_batch = (g.batch_records[0] + g.batch_records[1]) / 2
        inst.append({"group": g, "name": name, "pid": pid if g.idempotent else -1, "keys": keys,
                     "batch_interval_ms": 1000.0 * mean_batch / rate if rate > 0 else None, "seq": 0,
                     "burst_left": 0, "records": 0, "batches": 0, "rejected": {}})
        if g.tombstones:
            inst[-1]["tombstones"] = 0
        if g.transactions is not None:
            inst[-1].update(txn_left=0, transactions={"committed": 0, "aborted": 0})
        if rate > 0:
            heapq.heappush(heap, (start + rng.expovariate(1.0 / inst[-1]["batch_interval_ms"]), len(inst) - 1))
    return inst, heap


class _BrokerTimeline:
    """The broker's clock: retention checks (every ``log.retention.check.interval.ms``) and topic config
    changes due before a request arrives."""

    def __init__(self, log: Log, clock: SimulatedClock, changes: list, start: int, check_every: int):
        self.log, self.clock, self.changes, self.start = log, clock, changes, start
        self.check_every = check_every
        self.next_check = start + check_every
        self.cleaner = self.next_clean = self.root = None
        self.cleaned = {"passes": 0, "records_removed": 0, "bytes_removed": 0}

    def enable_cleaner(self, cleaner, root: Path) -> None:
        """Clean this (compacted) log every ``log.cleaner.backoff.ms``, as an idle cleaner thread would."""
        self.cleaner, self.root = cleaner, root
        self.next_clean = self.start + cleaner.backoff_ms

    def cleaner_summary(self) -> dict | None:
        return dict(self.cleaned) if self.cleaner is not None else None

    def _clean(self, now: int) -> None:
        """One cleaner pass; the log directory's ``cleaner-offset-checkpoint`` is shared by the worker
        processes, so a pass holds a lock on it (one cleaner thread at a time, as with
        ``log.cleaner.threads=1``)."""
        import fcntl
        with open(self.root / ".cleaner.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = self.log.clean(now=now, cleaner=self.cleaner)
        if r.cleaned:
            self.cleaned["passes"] += 1
            self.cleaned["records_removed"] += r.stats.messages_read - r.stats.messages_written
            self.cleaned["bytes_removed"] += r.stats.bytes_read - r.stats.bytes_written

    def advance_to(self, t: int) -> None:
        while self.next_check <= t or (self.next_clean is not None and self.next_clean <= t):
            if self.next_clean is not None and self.next_clean <= t and (self.next_clean < self.next_check
                                                                         or self.next_check > t):
                self.clock.set(max(self.clock.now(), self.next_clean))
                self._clean(self.next_clean)
                self.next_clean += self.cleaner.backoff_ms
                continue
            self.clock.set(max(self.clock.now(), self.next_check))
            self.log.delete_old_segments()
            self.next_check += self.check_every
        while self.changes and self.start + self.changes[0][0] <= t:
            self.log.update_config(self.changes.pop(0)[1])  # kafka-configs --alter: from the next append on
        self.clock.set(max(self.clock.now(), t))


def _send(log: Log, rng: random.Random, p: dict, t: int, start: int) -> int:
    """One produce request of producer ``p`` at ``t`` through the broker; the bytes appended (0: refused, the
    producer gets an error response and its sequence does not advance)."""
    data, n = _client_batch(rng, p, p["group"], t, start)
    try:
        log.append_as_leader(data)
    except KafkaFmtError as e:
        p["rejected"][type(e).__name__] = p["rejected"].get(type(e).__name__, 0) + 1
        return 0
    p["seq"] += n
    p["records"] += n
    p["batches"] += 1
    if p["group"].transactions is not None:
        return len(data) + _end_transaction(log, rng, p, t)
    return len(data)


def _end_transaction(log: Log, rng: random.Random, p: dict, t: int) -> int:
    """After a transactional batch: when the transaction has all its batches, the coordinator writes its
    marker (``WriteTxnMarkers``: COMMIT, or ABORT with the group's probability; KIP-98)."""
    abort, bmin, bmax = p["group"].transactions
    if p["txn_left"] <= 0:
        p["txn_left"] = rng.randint(bmin, bmax)
    p["txn_left"] -= 1
    if p["txn_left"] > 0:
        return 0
    kind = ControlRecordType.ABORT if rng.random() < abort else ControlRecordType.COMMIT
    marker = end_txn_marker(base_offset=0, timestamp=t, partition_leader_epoch=log.leader_epoch, producer_id=p["pid"],
                            producer_epoch=0, control_type=kind, coordinator_epoch=0)
    log.append_as_leader(marker, origin="COORDINATOR")
    p["transactions"]["aborted" if kind == ControlRecordType.ABORT else "committed"] += 1
    return len(marker)


def _next_send(rng: random.Random, p: dict, t_float: float) -> float:
    """The next send of ``p``: a burst continues, or a new Poisson gap (maybe starting a burst)."""
    prob, bmin, bmax, bint = p["group"].bursts
    if p["burst_left"] > 0:
        p["burst_left"] -= 1
        return t_float + bint
    nxt = t_float + rng.expovariate(1.0 / p["batch_interval_ms"])
    if prob and rng.random() < prob:
        p["burst_left"] = rng.randint(bmin, bmax) - 1
    return nxt


def _summary(log: Log, clock: SimulatedClock, topic: TopicSpec, partition: int, inst: list[dict],
             appended: int, cleaner: dict | None = None) -> dict[str, Any]:
    """The partition's summary (closes the log: its recovery point is the one written at close)."""
    summary = {"topic": topic.name, "partition": partition, "log_start_offset": log.log_start_offset,
               "log_end_offset": log.log_end_offset, "high_watermark": log.high_watermark,
               "segments": log.number_of_segments, "size": log.size, "appended_bytes": appended,
               "end_ms": clock.now(), "leader_epochs": log.epoch_entries(),
               "producers": [{"name": p["name"], "group": p["group"].name, "producer_id": p["pid"],
                              "records": p["records"], "batches": p["batches"], "rejected": p["rejected"],
                              **{k: p[k] for k in ("tombstones", "transactions") if k in p}}
                             for p in inst]}
    if cleaner is not None:
        summary["cleaner"] = cleaner
    log.close()
    summary["recovery_point"] = log.recovery_point
    return summary


def _client_batch(rng: random.Random, p: dict, g, t: int, start: int) -> tuple[bytes, int]:
    """The produce batch a client sends at true time ``t``: its clock, its magic, its codec."""
    magic = g.magic_at(t - start)
    n = rng.randint(*g.batch_records)
    negative = g.clock.model == "negative"
    idempotent = magic >= 2 and p["pid"] >= 0
    b = MemoryRecordsBuilder(magic, CompressionType.from_name(g.codec),
                             TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME, 0,
                             producer_id=p["pid"] if idempotent else -1, producer_epoch=0 if idempotent else -1,
                             base_sequence=p["seq"] if idempotent else -1, timestamp_extended=negative,
                             is_transactional=g.transactions is not None)
    for _ in range(n):
        ts = -1 if magic == 0 else t + g.clock.skew(rng, t, start)
        if ts < 0 and not negative and magic > 0:
            ts = 0  # a clock so far behind it would read before 1970: Kafka's producer refuses those
        key = rng.choice(p["keys"]) if p["keys"] else None
        size = rng.randint(*g.value_bytes)
        value = rng.randbytes((size + 1) // 2).hex()[:size].encode()
        headers = [(f"h{i}", rng.randbytes(8)) for i in range(g.headers)] if magic >= 2 else ()
        if g.tombstones and key is not None and rng.random() < g.tombstones:
            value = None  # a delete: the key with a null value (a tombstone once compacted)
            p["tombstones"] += 1
        b.append(ts, key, value, headers)
    return b.build(), n


# ------------------------------------------------------------------------------------------------
_QUEUE = None


def _init_worker(queue) -> None:
    global _QUEUE
    _QUEUE = queue


def _worker(workload, topic_name, partition, root, rate_factor, target_bytes):
    return generate_partition(workload, topic_name, partition, root, rate_factor=rate_factor,
                              target_bytes=target_bytes, progress=_QUEUE.put if _QUEUE is not None else None)


def generate_logs(workload: WorkloadSpec, out: str | os.PathLike, *, size: int | str | None = None,
                  jobs: int | None = None, progress: bool = True, force: bool = False) -> dict[str, Any]:
    """Generate ``workload`` into the log directory ``out`` (created atomically) and return the manifest.

    ``size``: total bytes to append (``"1GB"``): every producer's rate is scaled so that the
    workload's span holds about that much, and each partition stops at its share.  ``jobs``:
    worker processes (default: one per core, at most one per partition; 1 = in this process).
    ``force`` replaces an existing ``out``.  A tqdm bar shows the bytes appended.
    """
    out = Path(out)
    if out.exists() and not force:
        raise WorkloadError(f"{out} exists; pass force=True (--force) to replace it")
    with contextlib.ExitStack() as stack:
        if out.is_dir():  # a broker's log directory is never replaced under it
            stack.enter_context(dirlock.hold(out))
        return _generate(workload, out, size=size, jobs=jobs, progress=progress)


def _generate(workload: WorkloadSpec, out: Path, *, size, jobs, progress) -> dict[str, Any]:
    parts = workload.partitions
    target = parse_size(size) if size is not None else None
    weights = {(t.name, p): _partition_weight(t, p) for t, p in parts}
    total_w = sum(weights.values()) or 1.0
    rate_factor = 1.0 if target is None else target / max(workload.expected_bytes(), 1.0)
    targets = {k: (None if target is None else max(1, int(target * w / total_w))) for k, w in weights.items()}
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(parts)))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    t0 = time.perf_counter()
    try:
        summaries = _run(workload, parts, tmp, rate_factor, targets, jobs, progress,
                         total=target or int(workload.expected_bytes()))
        (tmp / ".cleaner.lock").unlink(missing_ok=True)  # the compacting workers' lock (see _BrokerTimeline)
        _write_log_dir_files(tmp, workload, summaries, size=target, rate_factor=rate_factor)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / out.name)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["elapsed_s"] = time.perf_counter() - t0  # a measurement: returned, never written to the logs
    return manifest


def _partition_weight(topic: TopicSpec, partition: int) -> float:
    w = 0.0
    for g in topic.producers:
        if g.keys:
            share = sum(1 for j in range(g.keys) if partition_for_key(b"key-%07d" % j, topic.partitions) == partition) / g.keys
        else:
            share = 1.0 / topic.partitions
        w += g.rate * g.mean_record_bytes * share
    return w


def _run(workload, parts, root, rate_factor, targets, jobs, show, total) -> list[dict]:
    from tqdm.auto import tqdm
    bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=f"gen {workload.name}",
               disable=not show)
    try:
        if jobs == 1:
            return [generate_partition(workload, t.name, p, root, rate_factor=rate_factor,
                                       target_bytes=targets[(t.name, p)], progress=bar.update) for t, p in parts]
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker, initargs=(queue,)) as pool:
            futures = [pool.submit(_worker, workload, t.name, p, str(root), rate_factor, targets[(t.name, p)])
                       for t, p in parts]
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                while not queue.empty():
                    bar.update(queue.get())
            return [f.result() for f in futures]
    finally:
        bar.close()


#: producer-group keys left out of the manifest while at their default (older manifests stay as they were)
_QUIET_DEFAULTS = {"tombstones": 0.0, "transactions": None}


def _group_entry(g) -> dict:
    entry = {**asdict(g), "clock": asdict(g.clock)}
    return {k: v for k, v in entry.items() if k not in _QUIET_DEFAULTS or v != _QUIET_DEFAULTS[k]}


def _write_log_dir_files(root: Path, workload: WorkloadSpec, summaries: list[dict], **run) -> None:
    """The log-dir checkpoints (``LogManager``: recovery point, log start offset where it is above the first
    segment's base offset; ``ReplicaManager``: high watermark), one line per partition, the clean-shutdown
    marker, and the manifest."""
    def entries(key):
        return [(s["topic"], s["partition"], s[key]) for s in summaries]

    def first_base(s) -> int:
        d = root / f"{s['topic']}-{s['partition']}"
        return min(offset_from_file_name(p.name) for p in d.iterdir() if p.name.endswith(LOG_FILE_SUFFIX))
    write_checkpoint(root / RECOVERY_POINT_CHECKPOINT, entries("recovery_point"), fsync=False)
    write_checkpoint(root / LOG_START_OFFSET_CHECKPOINT,
                     [e for e, s in zip(entries("log_start_offset"), summaries) if e[2] > first_base(s)], fsync=False)
    write_checkpoint(root / REPLICATION_OFFSET_CHECKPOINT, entries("high_watermark"), fsync=False)
    write_clean_shutdown(root, fsync=False)
    manifest = {"scenario": workload.name, "seed": workload.seed, "start_ms": workload.start_ms,
                "duration_ms": workload.duration_ms, "broker": dict(workload.broker),
                **({"kafka_line": workload.kafka_line} if workload.kafka_line != DEFAULT_LINE else {}), **run,
                "topics": [{"name": t.name, "partitions": t.partitions, "config": dict(t.config),
                            "changes": [{"at_ms": a, "config": dict(c)} for a, c in t.changes],
                            "producers": [_group_entry(g) for g in t.producers]}
                           for t in workload.topics],
                "partitions": summaries}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n")
