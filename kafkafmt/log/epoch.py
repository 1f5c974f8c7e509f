"""The leader epoch cache (``LeaderEpochFileCache``) and its ``leader-epoch-checkpoint`` file.

Only what the log layer needs: ``assign`` on v2 appends (and during recovery), truncation from the
end (log truncation) and from the start (log start offset moves), and the epochs ListOffsets
reports for EARLIEST / LATEST.  The file format is Kafka's: ``0``, the count, then
``epoch startOffset`` per line.
"""
from __future__ import annotations

import os
from pathlib import Path

from .. import kafka_lines
from ..errors import CheckpointError, IllegalArgumentError
from .files import LEADER_EPOCH_CHECKPOINT, checkpoint_ints, read_checkpoint, write_checkpoint


class LeaderEpochCache:
    """Epoch → start offset, kept monotonic in both (``LeaderEpochFileCache``)."""

    def __init__(self, dir: str | os.PathLike | None = None, *, fsync: bool = True):
        self.fsync = fsync
        self.enabled = True  #: False while the topic's record version is below v2 (no cache in Kafka)
        self._entries: list[tuple[int, int]] = []  # ascending epoch and start offset
        self._path = None if dir is None else Path(dir) / LEADER_EPOCH_CHECKPOINT
        if self._path is not None:
            if not self._path.exists() and self._path.parent.exists():
                self._path.touch()  # CheckpointFile creates the file, empty, when it is missing
            rows = read_checkpoint(self._path)
            for row in rows or []:
                if len(row) != 2:
                    raise CheckpointError(f"Malformed line in checkpoint file ({self._path}): '{' '.join(row)}'")
                epoch, start = checkpoint_ints(self._path, row, slice(0, 2))
                self._assign(epoch, start)

    @property
    def entries(self) -> list[tuple[int, int]]:
        return list(self._entries)

    @property
    def latest_entry(self) -> tuple[int, int] | None:
        return self._entries[-1] if self._entries else None

    @property
    def latest_epoch(self) -> int | None:
        return self._entries[-1][0] if self._entries else None

    @property
    def earliest_entry(self) -> tuple[int, int] | None:
        return self._entries[0] if self._entries else None

    def is_empty(self) -> bool:
        return not self._entries

    def _update_needed(self, epoch: int, start: int) -> bool:
        latest = self.latest_entry
        return latest is None or epoch != latest[0] or start < latest[1]

    def _assign(self, epoch: int, start: int) -> bool:
        if epoch < 0 or start < 0:
            raise IllegalArgumentError(f"Received invalid partition leader epoch entry "
                                       f"EpochEntry(epoch={epoch}, startOffset={start})")
        if not self._update_needed(epoch, start):
            return False
        while self._entries and (self._entries[-1][0] >= epoch or self._entries[-1][1] >= start):
            self._entries.pop()
        self._entries.append((epoch, start))
        return True

    def on_record_version_change(self, record_version: int, line: str | None = None) -> None:
        """``UnifiedLog.maybeCreateLeaderEpochCache``: below v2 there is no cache and its file is
        deleted; at v2 a cache exists (its file created empty when missing).  On a ``line`` whose row
        ``log.leader_epoch_cache`` says ``always`` (0.11 … 2.1) the cache exists whatever the format."""
        if line is not None and kafka_lines.value("log.leader_epoch_cache", line) == "always":
            record_version = 2
        if record_version < 2:
            self.enabled = False
            self._entries.clear()
            if self._path is not None and self._path.exists():
                self._path.unlink()
        elif not self.enabled:
            self.enabled = True
            if self._path is not None and not self._path.exists() and self._path.parent.exists():
                self._path.touch()

    def assign(self, epoch: int, start_offset: int) -> None:
        if not self.enabled:
            return
        if self._assign(epoch, start_offset):
            self.flush()

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop entries starting at or after ``end_offset``."""
        latest = self.latest_entry
        if end_offset >= 0 and latest is not None and latest[1] >= end_offset:
            while self._entries and self._entries[-1][1] >= end_offset:
                self._entries.pop()
            self.flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop entries starting at or before ``start_offset``; the last of them restarts at it."""
        removed = []
        while self._entries and self._entries[0][1] <= start_offset:
            removed.append(self._entries.pop(0))
        if removed:
            self._entries.insert(0, (removed[-1][0], start_offset))
            self.flush()

    def epoch_for_offset(self, offset: int) -> int | None:
        found = None
        for epoch, start in self._entries:
            if start <= offset:
                found = epoch
            else:
                break
        return found

    def clear(self) -> None:
        if self._entries:
            self._entries.clear()
        self.flush()

    def flush(self) -> None:
        if self.enabled and self._path is not None and self._path.parent.exists():
            write_checkpoint(self._path, list(self._entries), fsync=self.fsync)
