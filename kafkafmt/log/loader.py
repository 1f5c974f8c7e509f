"""Loading a partition directory: ``LogLoader.load`` / ``recoverLog`` (kafka-rules §7.5), as a mixin of
:class:`~kafkafmt.log.log.Log`.

1. delete ``*.deleted``, ``*.cleaned`` and interrupted ``*.tmp`` files; put ``*.swap`` files back;
2. delete index files without a ``.log``; open every segment; a missing ``.index`` means that segment
   is recovered whatever the shutdown was (``LogSegment.sanityCheck``);
3. after an unclean shutdown, recover every segment from the one HOLDING the recovery point; if bytes
   had to be cut, delete every later segment; an invalid offset empties the segment;
4. a segment whose offsets overflow 32 bits relative to its base is split (``splitOverflowedSegment``),
   and loading starts again; Kafka refuses (IllegalArgumentException) when the overflow is not at the
   end of the segment;
5. the log end offset is the last segment's next offset; if it is below the log-start checkpoint every
   segment is deleted; the active segment's indexes are resized to ``segment.index.bytes``.
"""
from __future__ import annotations

import os

from ..errors import (
    CheckpointError,
    IllegalArgumentError,
    InvalidOffsetError,
    KafkaStorageError,
    LogSegmentOffsetOverflowError,
    NoSuchFileError,
)
from . import logdir
from .file_records import FileRecords
from .files import (
    CLEAN_SHUTDOWN_FILE,
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    SWAP_FILE_SUFFIX,
    TEMP_FILE_SUFFIX,
    checkpoint_offset,
    delete_if_exists,
    is_index_file,
    is_log_file,
    log_file,
    offset_from_file_name,
    time_index_file,
)
from .segment import LogOffsetMetadata, LogSegment


class LogLoading:
    """``LogLoader`` steps and the checkpoint files, mixed into :class:`~kafkafmt.log.log.Log`."""

    def _read_offset_checkpoint(self, name: str) -> int | None:
        """This partition's entry in one of the log directory's offset checkpoints.  A malformed file counts
        as absent, with a warning event, as ``LogManager.loadLogs`` does ("Error occurred while reading ...
        resetting")."""
        try:
            return checkpoint_offset(self.dir.parent / name, self.topic, self.partition)
        except CheckpointError as e:
            self.events.append({"type": "warning", "time": self.clock.now(), "checkpoint": name,
                                "reason": f"{e.reason}; ignored, as Kafka's LogManager.loadLogs does"})
        return None

    def _write_checkpoints(self) -> None:
        """This partition's lines of the log directory's recovery-point and log-start checkpoints
        (:func:`kafkafmt.log.logdir.checkpoint`); nothing when the caller owns the log directory."""
        if self._log_dir is None:
            return
        first = self._bases[0] if self._bases else self.log_start_offset
        logdir.checkpoint(self._log_dir, self.topic, self.partition, self.recovery_point, self.log_start_offset,
                          first, fsync=self.durable)

    def _load(self, clean_shutdown: bool | None, recovery_point: int | None = None,
              log_start_offset: int | None = None) -> None:
        """``UnifiedLog.apply`` + ``LogLoader.load``: the arguments Kafka's LogManager passes (the
        clean-shutdown state, the recovery point and log start offset from its checkpoints) or, when
        None, what the log directory says (its marker file, as seen when the first log there was opened,
        and its checkpoint files)."""
        if clean_shutdown is not None:
            had_clean = clean_shutdown
        elif self._log_dir is not None:
            had_clean = self._log_dir.had_clean_shutdown
        else:
            had_clean = (self.dir.parent / CLEAN_SHUTDOWN_FILE).exists()
        recovery_point_ckpt = (self._read_offset_checkpoint(RECOVERY_POINT_CHECKPOINT) or 0
                               if recovery_point is None else int(recovery_point))
        log_start_ckpt = (self._read_offset_checkpoint(LOG_START_OFFSET_CHECKPOINT) or 0
                          if log_start_offset is None else int(log_start_offset))
        self._epoch_cache.on_record_version_change(self.config.to_magic, self.config.broker.kafka_line)
        self.recovery_point = recovery_point_ckpt
        self.log_start_offset = log_start_ckpt
        self._recovery_report: list[dict] = []
        self._remove_temp_files_and_collect_swap_files()

        def load_segments():
            for seg in self.segments:
                seg.close_handlers()
            self._bases.clear()
            self._segments.clear()
            self._load_segment_files(had_clean, recovery_point_ckpt)
        self._retry_on_offset_overflow(load_segments)
        new_recovery_point, next_offset = self._retry_on_offset_overflow(
            lambda: self._recover_log(had_clean, recovery_point_ckpt, log_start_ckpt))
        self.active_segment.resize_indexes(self.config.max_index_size)
        self._epoch_cache.truncate_from_end(next_offset)
        self.log_start_offset = max(log_start_ckpt, self.segments[0].base_offset)
        self._epoch_cache.truncate_from_start(log_start_ckpt)
        self.recovery_point = new_recovery_point
        active = self.active_segment
        self._next_offset_metadata = LogOffsetMetadata(next_offset, active.base_offset, active.size)
        self.events.append({"type": "load", "time": self.clock.now(), "clean_shutdown": had_clean,
                            "recovered": self._recovery_report, "log_end_offset": next_offset,
                            "recovery_point": new_recovery_point, "log_start_offset": self.log_start_offset})
        self._write_checkpoints()

    def _retry_on_offset_overflow(self, fn):
        """``LogLoader.retryOnOffsetOverflow``: split a segment whose offsets overflow, then try again."""
        while True:
            try:
                return fn()
            except LogSegmentOffsetOverflowError as e:
                seg = getattr(e, "segment", None)
                if seg is None:
                    raise
                self._split_overflowed_segment(seg)

    def _split_overflowed_segment(self, segment: LogSegment) -> None:
        """``LocalLog.splitOverflowedSegment``: rewrite a segment whose offsets do not fit 32 bits relative
        to its base into several segments (``.cleaned`` → ``.swap`` → final names, crash-safe)."""
        if not segment.has_overflow():
            raise IllegalArgumentError(f"requirement failed: Split operation is only permitted for segments with "
                                       f"overflow, and the problem path is {segment.log.path.absolute()}")
        new_segments: list[LogSegment] = []
        position = 0
        source = segment.log
        try:
            while position < source.size:
                first = next(source.batches_from(position), None)
                if first is None:  # Kafka: NoSuchElementException from batchesFrom(position).iterator().next()
                    raise KafkaStorageError(f"Failed to split {segment}: no whole batch at position {position}",
                                            position=position)
                if first.base_offset < 0:  # Kafka would name a segment file after it; kafkafmt refuses
                    raise KafkaStorageError(f"Failed to split {segment}: the batch at position {position} has a "
                                            f"negative base offset {first.base_offset}", position=position)
                ns = self.create_cleaned_segment(first.base_offset)
                new_segments.append(ns)
                appended = ns.append_from_file(source, position)
                if appended == 0:
                    raise KafkaStorageError(f"Failed to append records from position {position} in {segment}")
                position += appended
            for ns in new_segments:
                ns.on_become_inactive()
                ns.set_last_modified(segment.last_modified())
        except Exception:
            for ns in new_segments:
                ns.close_handlers()
                ns.delete_if_exists()
            raise
        # LocalLog.replaceSegments: .cleaned -> .swap (highest first), swap in, delete the old, drop .swap
        for ns in sorted(new_segments, key=lambda x: -x.base_offset):
            ns.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        for ns in new_segments:
            self.add_segment(ns)
        if segment.base_offset != min(ns.base_offset for ns in new_segments):
            self.remove_segment(segment.base_offset)
        segment.mark_deleted_and_delete()
        for ns in new_segments:
            ns.change_file_suffixes(SWAP_FILE_SUFFIX, "")
        self._recovery_report.append({"base_offset": segment.base_offset, "truncated_bytes": 0,
                                      "why": "offset overflow: split into "
                                             + ", ".join(str(ns.base_offset) for ns in new_segments)})

    def _remove_temp_files_and_collect_swap_files(self) -> None:
        """Delete ``*.deleted``, ``*.cleaned`` and interrupted ``*.tmp`` files; finish interrupted swaps.

        A ``.swap`` at or above the lowest ``.cleaned`` offset belongs to an unfinished swap and goes.
        The others finish a compaction or a split (``LogLoader.load``): every file whose offset lies in
        [lowest swap base, highest swap next offset) was replaced and is deleted, then the ``.swap``
        files are renamed into place.
        """
        swap, cleaned_min = [], None
        for name in sorted(os.listdir(self.dir)):
            path = self.dir / name
            if not path.is_file():
                continue
            if name.endswith(DELETED_FILE_SUFFIX) or name.endswith(TEMP_FILE_SUFFIX):
                delete_if_exists(path)
            elif name.endswith(CLEANED_FILE_SUFFIX):
                off = offset_from_file_name(name)
                cleaned_min = off if cleaned_min is None else min(cleaned_min, off)
                delete_if_exists(path)
            elif name.endswith(SWAP_FILE_SUFFIX):
                swap.append(path)
        valid = []
        for path in swap:
            if cleaned_min is not None and offset_from_file_name(path.name) >= cleaned_min:
                delete_if_exists(path)
            else:
                valid.append(path)
        self._complete_swaps(valid)

    def _complete_swaps(self, swap: list) -> None:
        lo, hi = None, None
        for path in swap:
            if path.name.endswith(LOG_FILE_SUFFIX + SWAP_FILE_SUFFIX):
                base = offset_from_file_name(path.name)
                nxt = base
                records = FileRecords(path, file_already_exists=True, mutable=False)
                try:
                    for b in records.batches():  # readNextOffset
                        nxt = b.next_offset
                finally:
                    records.close_handlers()
                lo = base if lo is None else min(lo, base)
                hi = nxt if hi is None else max(hi, nxt)
        if lo is not None:
            for name in sorted(os.listdir(self.dir)):
                if name.endswith(SWAP_FILE_SUFFIX) or not (self.dir / name).is_file():
                    continue
                try:
                    offset = offset_from_file_name(name)
                except ValueError:
                    continue
                if lo <= offset < hi:
                    delete_if_exists(self.dir / name)
        for path in swap:
            os.replace(path, path.with_name(path.name[:-len(SWAP_FILE_SUFFIX)]))

    def _load_segment_files(self, had_clean: bool, recovery_point: int) -> None:
        for name in sorted(os.listdir(self.dir)):
            path = self.dir / name
            if not path.is_file():
                continue
            if is_index_file(name):
                offset = offset_from_file_name(name)
                if not log_file(self.dir, offset).exists():
                    delete_if_exists(path)
            elif is_log_file(name):
                base = offset_from_file_name(name)
                time_index_newly_created = not time_index_file(self.dir, base).exists()
                seg = self._open_segment(base, file_already_exists=True, init_file_size=0, preallocate=False)
                try:
                    seg.sanity_check(time_index_newly_created)
                except NoSuchFileError:
                    self._recover_segment(seg, why="missing .index")
                self.add_segment(seg)

    def _recover_segment(self, seg: LogSegment, why: str) -> int:
        truncated = seg.recover(epoch_cache=self._epoch_cache)
        self._recovery_report.append({"base_offset": seg.base_offset, "truncated_bytes": truncated, "why": why})
        return truncated

    def _recover_log(self, had_clean: bool, recovery_point: int, log_start_ckpt: int) -> tuple[int, int]:
        if not had_clean:
            unflushed = self._segments_from(recovery_point) if self._bases else []
            for i, seg in enumerate(unflushed):
                try:
                    truncated = self._recover_segment(seg, why="unclean shutdown")
                except InvalidOffsetError:
                    truncated = seg.truncate_to(seg.base_offset)
                    self._recovery_report.append({"base_offset": seg.base_offset, "truncated_bytes": truncated,
                                                  "why": "invalid offset: segment emptied"})
                if truncated > 0:
                    self._remove_and_delete_segments(unflushed[i + 1:], reason="recovery")
                    break
        log_end_opt = None
        if self._bases:
            leo = self.active_segment.read_next_offset()
            if leo >= log_start_ckpt:
                log_end_opt = leo
            else:
                self._remove_and_delete_segments(self.segments, reason="log end below log start")
                self._epoch_cache.clear()
        if not self._bases:
            self.add_segment(self._open_segment(log_start_ckpt))
        if had_clean and log_end_opt is not None:
            return log_end_opt, log_end_opt
        leo = log_end_opt if log_end_opt is not None else self.active_segment.read_next_offset()
        return min(recovery_point, leo), leo
