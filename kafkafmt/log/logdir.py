"""What Kafka's ``LogManager`` keeps per log directory, for the partitions a process opens there.

A broker's ``log.dirs`` entry holds, beside the ``<topic>-<partition>`` directories, files that belong to
the whole directory (Kafka 3.9; each written by one component):

``.lock``
    ``LogManager.lockLogDirs``: held while the broker runs, deleted at shutdown (:mod:`kafkafmt.log.lock`).
``.kafka_cleanshutdown``
    ``CleanShutdownFileHandler``: ``{"version":0,"brokerEpoch":N}``, written (and fsynced) by
    ``LogManager.shutdown`` when every log of the directory was loaded, deleted by ``LogManager.loadLogs``
    as soon as it has been seen (KAFKA-10471); present at load = no recovery for any log there.
``recovery-point-offset-checkpoint``
    ``LogManager.checkpointRecoveryOffsetsInDir``: one line per log, its recovery point.
``log-start-offset-checkpoint``
    ``LogManager.checkpointLogStartOffsetsInDir``: one line per log whose log start offset is above its
    first segment's base offset (the others have none).
``cleaner-offset-checkpoint``
    ``LogCleanerManager.updateCheckpoints``: written by the cleaner only (:mod:`kafkafmt.log.cleaner`).
``replication-offset-checkpoint``
    ``ReplicaManager``'s high watermarks (``kafkafmt gen`` writes it; a :class:`~kafkafmt.log.Log` has no
    replica manager).

All the checkpoints are ``OffsetCheckpointFile`` files (:func:`~kafkafmt.log.files.write_checkpoint`).

A :class:`~kafkafmt.log.Log` plays the ``LogManager`` for its own partition: :func:`attach` takes the
directory's lock (shared by every log of this process in that directory) and notes whether the directory
was cleanly shut down (deleting the marker, as ``loadLogs`` does); the log reads its recovery point and
log start offset from the directory's checkpoints and writes its own line into them whenever they move
(Kafka writes every ``log.flush.offset.checkpoint.interval.ms``; on every change keeps crash experiments
deterministic), leaving the other partitions' lines as they are; :func:`detach` after the last log writes
the clean-shutdown marker when every partition directory there was loaded cleanly or the directory was
clean to start with (``LogManager.shutdown``), then releases the lock.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

from ..errors import CheckpointError
from . import lock as dirlock
from .files import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    checkpoint_ints,
    fsync_dir,
    parse_topic_partition_name,
    read_checkpoint,
    write_checkpoint,
    write_synced,
)

__all__ = ["LogDirState", "attach", "detach", "read_offsets", "merge_offsets", "write_clean_shutdown",
           "CLEAN_SHUTDOWN_CONTENT"]

#: what ``CleanShutdownFileHandler.write(-1)`` writes (a ZooKeeper-mode broker passes no broker epoch)
CLEAN_SHUTDOWN_CONTENT = b'{"version":0,"brokerEpoch":-1}'


def read_offsets(path: str | os.PathLike) -> dict[tuple[str, int], int]:
    """An ``OffsetCheckpointFile``: (topic, partition) -> offset; {} when absent; CheckpointError when malformed."""
    out: dict[tuple[str, int], int] = {}
    for row in read_checkpoint(path) or []:
        if len(row) != 3:
            raise CheckpointError(f"Malformed line in checkpoint file ({path}): '{' '.join(row)}'")
        partition, offset = checkpoint_ints(path, row, slice(1, 3))
        out[(row[0], partition)] = offset
    return out


def merge_offsets(path: str | os.PathLike, updates: dict[tuple[str, int], int | None], *, fsync: bool) -> None:
    """Set (or, with None, remove) some partitions' lines of an offset checkpoint, keeping the others' lines
    in their order; written as ``CheckpointFile.write`` does (tmp, flush, rename).  A malformed file is
    replaced by the updates alone (``LogManager`` ignores such a file when it loads and overwrites it)."""
    try:
        entries = read_offsets(path)
    except CheckpointError:
        entries = {}
    before = dict(entries)
    for tp, offset in updates.items():
        if offset is None:
            entries.pop(tp, None)
        else:
            entries[tp] = offset
    if entries == before and Path(path).exists():
        return
    write_checkpoint(path, [(t, p, o) for (t, p), o in entries.items()], fsync=fsync)


def write_clean_shutdown(log_dir: str | os.PathLike, content: bytes = CLEAN_SHUTDOWN_CONTENT,
                         *, fsync: bool = True) -> None:
    """``CleanShutdownFileHandler.write``: the marker, written in place and synced."""
    write_synced(Path(log_dir) / CLEAN_SHUTDOWN_FILE, content, fsync=fsync)
    if fsync:
        fsync_dir(log_dir)


class LogDirState:
    """One log directory as seen by the logs this process has open there (see the module doc)."""

    def __init__(self, path: Path, locked: bool):
        self.path = path
        self.locked = locked
        marker = path / CLEAN_SHUTDOWN_FILE
        try:
            self.marker_content: bytes | None = marker.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            self.marker_content = None
        self.had_clean_shutdown = self.marker_content is not None
        self.holders = 0
        self.loaded: set[str] = set()  #: partition directories loaded here
        self.unclean = False  #: a log was dropped without a clean close

    def delete_marker(self) -> None:
        try:
            os.unlink(self.path / CLEAN_SHUTDOWN_FILE)
        except FileNotFoundError:
            pass

    def all_loaded(self) -> bool:
        """Whether every partition directory here was loaded by this process (``loadLogsCompletedFlags``)."""
        for p in self.path.iterdir():
            if p.is_dir() and p.name not in self.loaded:
                try:
                    parse_topic_partition_name(p.name)
                except ValueError:
                    continue
                return False
        return True


_mutex = threading.Lock()
_states: dict[str, LogDirState] = {}


def attach(log_dir: str | os.PathLike, partition_dir_name: str, *, lock: bool = True) -> LogDirState:
    """A log about to load ``log_dir / partition_dir_name``: take the directory's lock (``lock``), read and
    delete the clean-shutdown marker if this is the first log here.  Raises
    :class:`~kafkafmt.errors.LogDirLockedError` before changing anything when another process holds the lock."""
    path = Path(log_dir)
    path.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(path)
    with _mutex:
        state = _states.get(key)
        if state is None:
            if lock:
                dirlock.acquire(path)
            state = _states[key] = LogDirState(path, lock)
            state.delete_marker()
        state.holders += 1
        state.loaded.add(partition_dir_name)
        return state


def detach(state: LogDirState, clean: bool, *, fsync: bool = False) -> None:
    """A log closed (``clean``) or dropped; after the last one, the marker (``LogManager.shutdown``) and the lock."""
    with _mutex:
        state.holders -= 1
        state.unclean |= not clean
        if state.holders > 0:
            return
        _states.pop(os.path.realpath(state.path), None)
        try:
            if not state.unclean and state.path.is_dir() and (state.had_clean_shutdown or state.all_loaded()):
                write_clean_shutdown(state.path, state.marker_content or CLEAN_SHUTDOWN_CONTENT, fsync=fsync)
        finally:
            if state.locked:
                dirlock.release(state.path)


def checkpoint(state: LogDirState, topic: str, partition: int, recovery_point: int, log_start_offset: int,
               first_segment_base: int, *, fsync: bool) -> None:
    """This partition's lines of the directory's recovery-point and log-start checkpoints
    (``checkpointRecoveryOffsetsInDir``, ``checkpointLogStartOffsetsInDir``: a log start offset only when it
    is above the first segment's base offset)."""
    tp = (topic, partition)
    merge_offsets(state.path / RECOVERY_POINT_CHECKPOINT, {tp: recovery_point}, fsync=fsync)
    merge_offsets(state.path / LOG_START_OFFSET_CHECKPOINT,
                  {tp: log_start_offset if log_start_offset > first_segment_base else None}, fsync=fsync)
