"""Retention: ``UnifiedLog.deleteOldSegments`` and ``deletableSegments`` (kafka-rules §7.4), as a mixin of
:class:`~kafkafmt.log.log.Log`.

* the log-start-offset rule always runs first; the size rule, then the time rule, only when
  ``cleanup.policy`` contains ``delete``;
* only the longest run of OLDEST segments for which the rule holds goes, and only below the high
  watermark (upper bound = next segment's base offset, or the LEO for the last segment); an empty last
  segment is never deleted; if every segment would go, the log rolls first;
* time: ``now - segment.largest_timestamp > retention.ms`` (max record timestamp, else the ``.log``
  mtime; before KIP-33, 0.10.1, the ``.log`` mtime alone: row ``log.retention_time`` of
  :mod:`kafkafmt.kafka_lines`); size: walk oldest first while ``diff - segment.size >= 0``;
* files are renamed to ``.deleted`` first and unlinked after (``LocalLog.deleteSegmentFiles``; the
  ``file.delete.delay.ms`` wait is not simulated); the log start offset moves to the next segment.
"""
from __future__ import annotations

import numpy as np

from .. import kafka_lines
from ..errors import OffsetOutOfRangeError
from .files import DELETED_FILE_SUFFIX
from .segment import LogSegment


def time_deletion_times(largest_timestamps, retention_ms: int) -> np.ndarray:
    """When retention by time deletes each segment of a partition (oldest first, ``retention_ms >= 0``)
    for a broker clock that passes every instant: a segment is eligible once ``now - largestTimestamp >
    retention.ms`` (at ``largestTimestamp + retention.ms + 1``), and ``deletableSegments`` only takes a
    prefix of eligible segments, so each goes at the running maximum of those times."""
    return np.maximum.accumulate(np.asarray(largest_timestamps, dtype=np.int64) + (int(retention_ms) + 1))


class LogRetention:
    """Retention and log-start-offset moves, mixed into :class:`~kafkafmt.log.log.Log`."""

    def delete_old_segments(self) -> int:
        """``UnifiedLog.deleteOldSegments``: log start offset rule, then (cleanup.policy=delete) size, time."""
        self._check_open()
        self._check_writable("delete_old_segments")
        n = self._delete_log_start_offset_breached_segments()
        if self.config.delete:
            n += self._delete_retention_size_breached_segments()
            n += self._delete_retention_ms_breached_segments()
        return n

    def _delete_retention_ms_breached_segments(self) -> int:
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return 0
        start_ms = self.clock.now()
        if kafka_lines.value("log.retention_time", self.config.broker.kafka_line) == "largest timestamp":
            return self._delete_old_segments(
                lambda seg, nxt: start_ms - seg.largest_timestamp() > retention_ms, "retention.ms")
        return self._delete_old_segments(  # before KIP-33: LogManager.cleanupExpiredSegments, by mtime
            lambda seg, nxt: start_ms - seg.last_modified() > retention_ms, "retention.ms")

    def _delete_retention_size_breached_segments(self) -> int:
        retention_size = self.config.retention_bytes
        size = self.size
        if retention_size < 0 or size < retention_size:
            return 0
        diff = [size - retention_size]

        def should_delete(seg, nxt):
            if diff[0] - seg.size >= 0:
                diff[0] -= seg.size
                return True
            return False
        return self._delete_old_segments(should_delete, "retention.bytes")

    def _delete_log_start_offset_breached_segments(self) -> int:
        return self._delete_old_segments(
            lambda seg, nxt: nxt is not None and nxt.base_offset <= self.log_start_offset, "log start offset")

    def deletable_segments(self, predicate) -> list[LogSegment]:
        """``deletableSegments``: the longest run of oldest segments below the HW for which ``predicate`` holds."""
        deletable = []
        segs = self.segments
        for i, seg in enumerate(segs):
            nxt = segs[i + 1] if i + 1 < len(segs) else None
            is_last_and_empty = nxt is None and seg.size == 0
            upper = nxt.base_offset if nxt is not None else self.log_end_offset
            ok = self.high_watermark >= upper and predicate(seg, nxt)
            if ok and not is_last_and_empty:
                deletable.append(seg)
            else:
                break
        return deletable

    def _delete_old_segments(self, predicate, reason: str) -> int:
        deletable = self.deletable_segments(predicate)
        if not deletable:
            return 0
        return self._delete_segments(deletable, reason)

    def _delete_segments(self, deletable: list[LogSegment], reason: str) -> int:
        num = len(deletable)
        to_delete = deletable
        if self.number_of_segments == num:
            new_segment = self.roll(reasons=[f"all segments deleted ({reason})"])
            if deletable[-1].base_offset == new_segment.base_offset:
                to_delete = deletable[:-1]
        if to_delete:
            new_start = self._higher_segment(to_delete[-1].base_offset).base_offset
            self.maybe_increment_log_start_offset(new_start, "segment deletion")
            info = [{"base_offset": s.base_offset, "size": s.size, "largest_timestamp": s.largest_timestamp(),
                     "next_offset": (self._higher_segment(s.base_offset).base_offset)} for s in to_delete]
            self._remove_and_delete_segments(to_delete, reason)
            self.events.append({"type": "delete", "time": self.clock.now(), "reason": reason, "segments": info,
                                "log_start_offset": self.log_start_offset})
        return num

    def _remove_and_delete_segments(self, segments: list[LogSegment], reason: str) -> None:
        """Remove from the map, rename every file to ``.deleted``, then unlink (``deleteSegmentFiles``)."""
        segments = list(segments)
        for seg in segments:
            self.remove_segment(seg.base_offset)
        for seg in segments:
            if not seg.has_suffix(DELETED_FILE_SUFFIX):
                seg.change_file_suffixes("", DELETED_FILE_SUFFIX)
        for seg in segments:
            seg.delete_if_exists()

    def maybe_increment_log_start_offset(self, new_log_start_offset: int, reason: str = "client delete records") -> bool:
        """``maybeIncrementLogStartOffset`` (also DeleteRecords): never beyond the high watermark."""
        self._check_open()
        self._check_writable("maybe_increment_log_start_offset")
        if new_log_start_offset > self.high_watermark:
            raise OffsetOutOfRangeError(
                f"Cannot increment the log start offset to {new_log_start_offset} of partition "
                f"{self.topic_partition} since it is larger than the high watermark {self.high_watermark}")
        if new_log_start_offset > self.log_start_offset:
            self.log_start_offset = new_log_start_offset
            if self._hw is not None and self._hw < new_log_start_offset:
                self._hw = new_log_start_offset
            if self.recovery_point < new_log_start_offset:
                self.recovery_point = new_log_start_offset
            self._epoch_cache.truncate_from_start(new_log_start_offset)
            self._write_checkpoints()
            return True
        return False
