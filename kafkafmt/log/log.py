"""``Log``: a topic-partition directory of segments (``UnifiedLog`` + ``LocalLog`` + ``LogLoader``).

A single-replica simulation of Kafka 3.9's local log, driven by a :class:`~kafkafmt.log.clock.Clock`:

* appends as leader (through the broker's LogValidator, or ``origin="RAFT_LEADER"`` which skips it,
  as Kafka does for KRaft) and as follower (pre-validated batches), with Kafka's checks and the
  roll decision before each append (kafka-rules §7.3);
* retention (``delete_old_segments``: log start offset, then size, then time; §7.4);
* timestamp lookup (``fetch_offset_by_timestamp``, ListOffsets semantics; §6.6), reads (§7.7),
  truncation (§7.6);
* close / reopen with recovery from the segment holding the recovery point (§7.5).

Files: the partition directory holds what Kafka keeps there and nothing else: the segments
(``.log``, ``.index``, ``.timeindex``) and ``leader-epoch-checkpoint`` (``0`` / count / ``<epoch> <start
offset>`` lines).  The log directory above it (the ``log.dirs`` entry) holds what Kafka's ``LogManager``
keeps per directory (:mod:`kafkafmt.log.logdir`): the lock ``.lock``, taken at open and released at close
(:mod:`kafkafmt.log.lock`; another process holding it, a running broker, makes the open fail with
:class:`~kafkafmt.errors.LogDirLockedError` before anything changes), ``.kafka_cleanshutdown`` (seen and
deleted at open, written at close when every log there closed cleanly), and this partition's line in
``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint``, rewritten (tmp + fsync + rename,
the other partitions' lines kept) whenever the recovery point or log start offset moves.  Kafka writes
those two every 60 s; on every change keeps crash experiments deterministic.

The high watermark is the log end offset unless :meth:`set_high_watermark` pins it (a follower or
an ISR that lags); retention never deletes at or beyond it.

Kafka version: the behaviour is that of the Kafka 3.9.2 jars the oracle runs.  Two changes since the
3.9 snapshot of the reference digest matter here: ``LogSegment.append`` indexes per batch
(KAFKA-806; ``index_granularity="append"`` gives the older per-append rule of kafka-rules §6.5), and
a follower skips batches whose partition leader epoch is above its own (``append_as_follower``).
"""
from __future__ import annotations

import bisect
import os
import random
import weakref
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import kafka_lines
from ..broker.append import UNKNOWN_OFFSET, AppendOrigin, LogAppendInfo, analyze_and_validate_records, scala_list
from ..broker.validator import validate_messages_and_assign_offsets
from ..config import LogConfig
from ..constants import INT32_MAX, NO_TIMESTAMP, CompressionType, TimestampType
from ..errors import (
    IllegalArgumentError,
    KafkaStorageError,
    NoSuchFileError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnexpectedAppendOffsetError,
    UnsupportedForMessageFormatError,
    UnsupportedOperationError,
)
from ..records import MemoryRecords
from . import logdir
from .clock import Clock, SystemClock
from .epoch import LeaderEpochCache
from .file_records import TimestampAndOffset
from .files import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    delete_if_exists,
    log_file,
    offset_index_file,
    parse_topic_partition_name,
    time_index_file,
    transaction_index_file,
)
from .loader import LogLoading
from .readonly import open_read_only
from .retention import LogRetention
from .segment import FetchDataInfo, LogOffsetMetadata, LogSegment, RollParams
from .view import PartitionView

__all__ = ["Log", "LogConfig", "LogAppendInfo", "EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "MAX_TIMESTAMP",
           "EARLIEST_LOCAL_TIMESTAMP", "LATEST_TIERED_TIMESTAMP", "KafkaTimeIndexPolicy"]

#: ListOffsetsRequest special target timestamps
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5



class KafkaTimeIndexPolicy:
    """The shipped design (KIP-33 as released): the time index holds message timestamps."""

    name = "kafka"
    segment_class = LogSegment

    def segment_options(self, log: "Log") -> dict:
        return {}

    def validator_topic_config(self, topic_config):
        return topic_config

    def append(self, log: "Log", segment: LogSegment, info: LogAppendInfo, records: bytes, *, leader: bool,
               companion_entries=None) -> None:
        segment.append(info.last_offset, info.max_timestamp, info.shallow_offset_of_max_timestamp, records,
                       first_offset=None if info.first_offset == UNKNOWN_OFFSET else info.first_offset)

    def before_roll(self, log: "Log", old_segment: LogSegment, new_base_offset: int, companion_entries=None) -> None:
        pass

    def roll_now(self, log: "Log", info: "LogAppendInfo", *, leader: bool, companion_entries=None) -> int:
        """The ``now`` of the roll decision (``time.milliseconds()`` in ``UnifiedLog.maybeRoll``)."""
        return log.clock.now()


def _policy_for(name: str):
    if name in ("kafka", None):
        return KafkaTimeIndexPolicy()
    if name in ("kip33-variant", "kip33"):
        from .kip33 import Kip33TimeIndexPolicy
        return Kip33TimeIndexPolicy()
    if hasattr(name, "segment_class"):
        return name
    raise ValueError(f"unknown time_index_policy {name!r}: use 'kafka' or 'kip33-variant'")


def _option(v) -> str:
    return "None" if v is None else f"Some({v})"


class Log(LogLoading, LogRetention):
    """A partition's log in ``dir`` (named ``<topic>-<partition>``), created or loaded.

    ``Log(dir, config, clock)`` takes the log directory's lock (``dir``'s parent; see
    :mod:`kafkafmt.log.lock`), creates ``dir`` if needed and loads whatever is in it (treating it as
    cleanly shut down iff the log directory holds ``.kafka_cleanshutdown``, unless ``clean_shutdown``
    says otherwise).  :meth:`open` is the same, spelled as a reopen.

    ``log_dir_files=False``: the caller owns the log directory as a whole (``kafkafmt gen``'s workers,
    writing partitions of a private directory in parallel): no lock, no clean-shutdown marker, no
    log-directory checkpoints are read or written; the caller writes them.

    ``time_index_policy``: ``"kafka"`` (the released design) or ``"kip33-variant"`` (seed 001:
    LogAppendTime kept only in the time index; see :mod:`kafkafmt.log.kip33`).
    ``seed`` seeds the RNG that draws each segment's roll jitter.
    """

    def __init__(self, dir: str | os.PathLike, config: LogConfig | None = None, clock: Clock | None = None,
                 *, time_index_policy: str = "kafka", seed: int = 0,
                 clean_shutdown: bool | None = None, recovery_point: int | None = None,
                 log_start_offset: int | None = None, topic_partition: tuple[str, int] | None = None,
                 leader_epoch: int = 0, durable: bool = False, kip33_recovery: str = "keep",
                 index_granularity: str | None = None, log_dir_files: bool = True):
        self.dir = Path(dir)
        self.config = _as_log_config(config)
        self.clock = clock if clock is not None else SystemClock()
        self.topic, self.partition = topic_partition or parse_topic_partition_name(str(self.dir))
        self.leader_epoch = leader_epoch
        self.durable = durable
        self.kip33_recovery = kip33_recovery
        #: per batch (Kafka 3.9.1+) or per append (before): row ``log.index_granularity`` unless given
        self.index_granularity = index_granularity or kafka_lines.value("log.index_granularity",
                                                                        self.config.broker.kafka_line)
        self._policy = _policy_for(time_index_policy)
        self.time_index_policy = self._policy.name
        self.rng = random.Random(seed)
        self.seed = seed
        self._bases: list[int] = []
        self._segments: dict[int, LogSegment] = {}
        self._hw: int | None = None
        self._closed = False
        #: a record of structural events (rolls, deletions, recovery, truncation) for notebooks
        self.events: list[dict[str, Any]] = []
        self._log_dir = logdir.attach(self.dir.parent, self.dir.name) if log_dir_files else None
        self._detach = (weakref.finalize(self, logdir.detach, self._log_dir, False) if self._log_dir is not None
                        else None)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._epoch_cache = LeaderEpochCache(self.dir, fsync=durable)
            self._load(clean_shutdown, recovery_point, log_start_offset)
        except BaseException:
            self._release_log_dir(clean=False)
            raise

    def _release_log_dir(self, clean: bool) -> None:
        """Leave the log directory (after the last log of this process there: marker, then the lock)."""
        if self._detach is not None and self._detach.detach() is not None:
            logdir.detach(self._log_dir, clean, fsync=self.durable)

    @classmethod
    def open(cls, dir: str | os.PathLike, config: LogConfig | None = None, clock: Clock | None = None,
             *, clean_shutdown: bool | None = None, recovery_point: int | None = None,
             log_start_offset: int | None = None, read_only: bool = False, **kwargs) -> "Log":
        """Reopen an existing partition directory, as ``UnifiedLog.apply`` / ``LogLoader`` do.

        ``clean_shutdown``: whether the broker shut down cleanly (None: the ``.kafka_cleanshutdown``
        marker decides); ``False`` forces recovery from ``recovery_point`` (§7.5).
        ``recovery_point`` / ``log_start_offset``: what Kafka's LogManager passes from its checkpoint
        files (None: read from this directory's checkpoints).
        ``read_only``: never write, rename, truncate or delete anything in ``dir``; the log answers as
        the recovered log would, and :attr:`recovery_changes` says what opening it for real would
        change (see :mod:`kafkafmt.log.readonly`).  Opening for writing changes the directory even
        when nothing is appended: leftovers are deleted, segments recovered, indexes resized,
        checkpoints rewritten, the clean-shutdown marker removed.
        """
        if not Path(dir).is_dir():
            raise NoSuchFileError(f"{dir} is not a log directory")
        if read_only:
            return open_read_only(cls, dir, config, clock, clean_shutdown=clean_shutdown,
                                  recovery_point=recovery_point, log_start_offset=log_start_offset, **kwargs)
        return cls(dir, config, clock, clean_shutdown=clean_shutdown, recovery_point=recovery_point,
                   log_start_offset=log_start_offset, **kwargs)

    # ============================================================================================
    # configuration
    def update_config(self, config: LogConfig | Mapping[str, Any] | None = None, **fields) -> LogConfig:
        """Change the topic configuration of this running log (``UnifiedLog.updateConfig``).

        ``config``: a whole :class:`~kafkafmt.config.LogConfig`, or Kafka properties to change
        (``{"message.format.version": "0.10.0"}``, what ``kafka-configs --alter --add-config`` sends);
        ``fields``: field names to change.  Validated before anything changes; effective from the next
        append and the next roll check, as in Kafka.  When the record version changes, the leader
        epoch cache is re-initialised: below v2 it is deleted (``UnifiedLog.initializeLeaderEpochCache``).
        The change is recorded in :attr:`events` (``type: "config"``).  Returns the old configuration.
        """
        self._check_open()
        old = self.config
        if isinstance(config, LogConfig):
            new = config.replace(**fields) if fields else config
        else:
            new = old.with_properties(dict(config or {}))
            new = new.replace(**fields) if fields else new
        self.config = new
        changed = {k: v for k, v in new.to_properties(defaults=True).items()
                   if old.to_properties(defaults=True).get(k) != v}
        if new.to_magic != old.to_magic:
            self._epoch_cache.on_record_version_change(new.to_magic, new.broker.kafka_line)
        self.events.append({"type": "config", "time": self.clock.now(), "changed": changed,
                            "record_version": new.to_magic, "log_end_offset": self.log_end_offset})
        return old

    # ============================================================================================
    # segments
    @property
    def topic_partition(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def segments(self) -> list[LogSegment]:
        return [self._segments[b] for b in self._bases]

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[self._bases[-1]]

    @property
    def number_of_segments(self) -> int:
        return len(self._bases)

    def add_segment(self, seg: LogSegment) -> None:
        """``LogSegments.add``: ``seg`` joins the segment table, replacing the one of its base offset (the
        cleaner's and the offset-overflow split's swap, ``LocalLog.replaceSegments``)."""
        if seg.base_offset not in self._segments:
            bisect.insort(self._bases, seg.base_offset)
        self._segments[seg.base_offset] = seg

    def remove_segment(self, base: int) -> None:
        """``LogSegments.remove``: the segment of base offset ``base`` leaves the table (its files stay)."""
        if base in self._segments:
            del self._segments[base]
            self._bases.remove(base)

    def _floor_segment(self, offset: int) -> LogSegment | None:
        i = bisect.bisect_right(self._bases, offset)
        return self._segments[self._bases[i - 1]] if i else None

    def _higher_segment(self, base: int) -> LogSegment | None:
        i = bisect.bisect_right(self._bases, base)
        return self._segments[self._bases[i]] if i < len(self._bases) else None

    def _segments_from(self, from_offset: int) -> list[LogSegment]:
        """``LogSegments.values(from, Long.MAX_VALUE)``: from the segment containing ``from_offset``."""
        i = bisect.bisect_right(self._bases, from_offset)
        start = i - 1 if i else 0
        return [self._segments[b] for b in self._bases[start:]]

    def _open_segment(self, base: int, *, file_already_exists: bool = False, init_file_size: int | None = None,
                      preallocate: bool | None = None, suffix: str = "") -> LogSegment:
        return self._policy.segment_class.open(
            self.dir, base, self.config, self.clock, file_already_exists=file_already_exists,
            init_file_size=self.config.init_file_size if init_file_size is None else init_file_size,
            preallocate=self.config.preallocate if preallocate is None else preallocate, suffix=suffix,
            rng=self.rng, index_granularity=self.index_granularity, durable=self.durable,
            **self._policy.segment_options(self))

    def create_cleaned_segment(self, base: int) -> LogSegment:
        """``LocalLog.createNewCleanedSegment``: a new segment of base offset ``base`` whose files carry the
        ``.cleaned`` suffix (leftover ``.cleaned`` files of that offset deleted first, as
        ``LogSegment.deleteIfExists`` does), for the cleaner and the offset-overflow split to fill."""
        for f in (log_file, offset_index_file, time_index_file, transaction_index_file):
            delete_if_exists(f(self.dir, base, CLEANED_FILE_SUFFIX))
        return self._open_segment(base, suffix=CLEANED_FILE_SUFFIX)

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)

    # ============================================================================================
    # offsets
    @property
    def log_end_offset(self) -> int:
        return self._next_offset_metadata.message_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self._next_offset_metadata

    def _update_log_end_offset(self, end_offset: int) -> None:
        """``LocalLog.updateLogEndOffset``: also pulls the recovery point back if it is beyond."""
        active = self.active_segment
        self._next_offset_metadata = LogOffsetMetadata(end_offset, active.base_offset, active.size)
        if self.recovery_point > end_offset:
            self.recovery_point = end_offset

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset if self._hw is None else self._hw

    def set_high_watermark(self, hw: int | None) -> int:
        """Pin the high watermark (clamped to [log start, LEO] as ``updateHighWatermark``); None = follow the LEO."""
        if hw is None:
            self._hw = None
            return self.high_watermark
        self._hw = max(self.log_start_offset, min(hw, self.log_end_offset))
        return self._hw

    update_high_watermark = set_high_watermark

    def _fetch_high_watermark_metadata(self) -> LogOffsetMetadata:
        hw = self.high_watermark
        if hw == self.log_end_offset:
            return self._next_offset_metadata
        return self._convert_to_offset_metadata_or_throw(hw)

    # ============================================================================================
    # appends
    def append_as_leader(self, records, *, leader_epoch: int | None = None, origin: str = "CLIENT") -> LogAppendInfo:
        """``UnifiedLog.appendAsLeader``: offsets assigned and timestamps set by the broker's LogValidator.

        ``origin="RAFT_LEADER"`` skips the validator (Kafka 2.8+, KAFKA-10636): the records are
        appended with the offsets, timestamps and leader epoch they carry, which must equal
        ``leader_epoch``.  Every other origin goes through :mod:`kafkafmt.broker.validator`.
        """
        origin = AppendOrigin.of(origin)
        self._check_writable("append_as_leader")
        epoch = self.leader_epoch if leader_epoch is None else leader_epoch
        return self._append(records, origin=origin, validate=origin is not AppendOrigin.RAFT_LEADER,
                            leader_epoch=epoch, ignore_record_size=False, leader=True)

    def append_as_follower(self, records, *, leader_epoch: int | None = None,
                           companion_entries=None) -> LogAppendInfo:
        """``UnifiedLog.appendAsFollower(records, leaderEpoch)``: batches as the leader wrote them; sizes
        are not re-checked.  As in Kafka 3.9.2, the first batch whose partition leader epoch is above
        ``leader_epoch`` (default: this log's ``leader_epoch``) and every batch after it are skipped.

        ``companion_entries`` (kip33-variant only): the leader's time index entries for these offsets.
        """
        self._check_writable("append_as_follower")
        epoch = self.leader_epoch if leader_epoch is None else leader_epoch
        return self._append(records, origin=AppendOrigin.REPLICATION, validate=False, leader_epoch=epoch,
                            ignore_record_size=True, leader=False, companion_entries=companion_entries)

    def _validate_as_leader(self, data: bytes, offset: int, leader_epoch: int, origin: str,
                            source_compression: CompressionType):
        """The broker's LogValidator (:mod:`kafkafmt.broker.validator`).

        UnifiedLog's own checks (baseOffset, CRC, sizes, trimming) have run already, so the
        validator runs alone (``pre_checks=False``), as ``new LogValidator(...)`` does in Kafka.
        """
        topic_config = self._policy.validator_topic_config(self.config)
        return validate_messages_and_assign_offsets(
            data, topic_config, offset=offset, now=self.clock.now(), origin=origin,
            partition_leader_epoch=leader_epoch, topic=self.topic, partition=self.partition, pre_checks=False,
            source_compression=source_compression)

    def _topic_timestamp_type(self) -> TimestampType:
        return self.config.timestamp_type

    def _append(self, records, *, origin: str, validate: bool, leader_epoch: int, ignore_record_size: bool,
                leader: bool, companion_entries=None) -> LogAppendInfo:
        self._check_open()
        data = bytes(records)
        info = analyze_and_validate_records(
            data, origin=origin, leader_epoch=leader_epoch, max_message_bytes=self.config.max_message_bytes,
            topic_partition=self.topic_partition, ignore_record_size=ignore_record_size,
            require_offsets_monotonic=not validate, log_start_offset=self.log_start_offset)
        if info.valid_bytes <= 0:
            return info
        valid = data[:info.valid_bytes]  # trimInvalidBytes: a partial trailing batch is dropped
        if validate:
            offset = self.log_end_offset
            info.first_offset = offset
            result = self._validate_as_leader(valid, offset, leader_epoch, origin, info.source_compression)
            valid = bytes(result.records)
            info.max_timestamp = result.max_timestamp
            info.shallow_offset_of_max_timestamp = result.shallow_offset_of_max_timestamp
            info.last_offset = result.next_offset - 1
            ts_type = getattr(result, "timestamp_type", self._topic_timestamp_type())
            if ts_type == TimestampType.LOG_APPEND_TIME:
                info.log_append_time = result.log_append_time_ms
            if getattr(result, "message_size_maybe_changed", True):
                for batch in MemoryRecords(valid).batches():
                    if batch.size_in_bytes > self.config.max_message_bytes:
                        # (sic) no space between "to" and "partition", as in UnifiedLog.append
                        raise RecordTooLargeError(
                            f"Message batch size is {batch.size_in_bytes} bytes in append to"
                            f"partition {self.topic_partition} which exceeds the maximum configured size of "
                            f"{self.config.max_message_bytes}.")
        elif info.first_or_last_offset_of_first_batch < self.log_end_offset:
            has_first = info.first_offset != UNKNOWN_OFFSET
            first = info.first_offset if has_first else next(MemoryRecords(data).batches()).base_offset
            which = "First offset" if has_first else "Last offset of the first batch"
            offsets = [r.offset for _, r in zip(range(10), MemoryRecords(data).records())]
            raise UnexpectedAppendOffsetError(
                f"Unexpected offset in append to {self.topic_partition}. {which} "
                f"{info.first_or_last_offset_of_first_batch} is less than the next offset {self.log_end_offset}. "
                f"First 10 offsets in append: {scala_list(offsets)}, last offset in append: {info.last_offset}. "
                f"Log start offset = {self.log_start_offset}", first, info.last_offset)
        for batch in MemoryRecords(valid).batches():
            if batch.magic >= 2:
                self._epoch_cache.assign(batch.partition_leader_epoch, batch.base_offset)
            elif not self._epoch_cache.is_empty() and kafka_lines.value(
                    "log.leader_epoch_cache", self.config.broker.kafka_line) == "v2 only":
                self._epoch_cache.clear()  # a regression to an old message format (KAFKA-7897)
        if len(valid) > self.config.segment_bytes:
            raise RecordBatchTooLargeError(
                f"Message batch size is {len(valid)} bytes in append to partition {self.topic_partition}, which "
                f"exceeds the maximum configured segment size of {self.config.segment_bytes}.")
        segment = self._maybe_roll(len(valid), info, companion_entries, leader=leader)
        info.segment_base_offset = segment.base_offset
        info.append_time = self.clock.now()
        self._policy.append(self, segment, info, valid, leader=leader, companion_entries=companion_entries)
        self._update_log_end_offset(info.last_offset + 1)
        if self._hw is not None and self._hw >= self.log_end_offset:
            self._hw = self.log_end_offset
        return info

    # ============================================================================================
    # rolling
    def _maybe_roll(self, messages_size: int, info: LogAppendInfo, companion_entries=None, *,
                    leader: bool = True) -> LogSegment:
        segment = self.active_segment
        now = self._policy.roll_now(self, info, leader=leader, companion_entries=companion_entries)
        params = RollParams(self.config.max_segment_ms, self.config.segment_bytes, info.max_timestamp,
                            info.last_offset, messages_size, now)
        reasons = segment.roll_reasons(params)
        if reasons:
            # maxOffsetInMessages - Integer.MAX_VALUE: a lower bound of the first offset when unknown (v0/v1)
            roll_offset = info.last_offset - INT32_MAX if info.first_offset == UNKNOWN_OFFSET else info.first_offset
            info.roll_reasons = reasons
            return self.roll(roll_offset, reasons=reasons, companion_entries=companion_entries)
        return segment

    def roll(self, expected_next_offset: int | None = None, *, reasons: Iterable[str] = ("explicit",),
             companion_entries=None) -> LogSegment:
        """``UnifiedLog.roll`` / ``LocalLog.roll``: a new active segment at max(expected, LEO)."""
        self._check_open()
        self._check_writable("roll")
        leo = self.log_end_offset
        new_offset = max(expected_next_offset if expected_next_offset is not None else 0, leo)
        active = self.active_segment
        old_base = active.base_offset
        if new_offset in self._segments:
            if active.base_offset == new_offset and active.size == 0:
                # KAFKA-6388: an empty active segment whose index is "full" is recreated
                new_segment = self._create_and_delete_segment(new_offset, active, reason="roll")
                self._update_log_end_offset(self.log_end_offset)
                self.events.append({"type": "roll", "time": self.clock.now(), "from": old_base, "to": new_offset,
                                    "reasons": list(reasons), "recreated": True})
                return new_segment
            raise KafkaStorageError(
                f"Trying to roll a new log segment for topic partition {self.topic_partition} with start offset "
                f"{new_offset} =max(provided offset = {_option(expected_next_offset)}, LEO = {leo}) while it "
                f"already exists. Existing segment is {self._segments[new_offset]}.")
        if self._bases and new_offset < active.base_offset:
            raise KafkaStorageError(
                f"Trying to roll a new log segment for topic partition {self.topic_partition} with start offset "
                f"{new_offset} =max(provided offset = {_option(expected_next_offset)}, LEO = {leo}) lower than "
                f"start offset of the active segment {active}")
        for f in (log_file(self.dir, new_offset), offset_index_file(self.dir, new_offset),
                  time_index_file(self.dir, new_offset), transaction_index_file(self.dir, new_offset)):
            delete_if_exists(f)
        self._policy.before_roll(self, active, new_offset, companion_entries)
        active.on_become_inactive()
        new_segment = self._open_segment(new_offset)
        self.add_segment(new_segment)
        self._update_log_end_offset(self.log_end_offset)
        # UnifiedLog.roll schedules flushUptoOffsetExclusive(newSegment.baseOffset); done at once here
        self._flush_up_to(new_segment.base_offset)
        self.events.append({"type": "roll", "time": self.clock.now(), "from": old_base, "to": new_offset,
                            "reasons": list(reasons)})
        return new_segment

    def _create_and_delete_segment(self, new_offset: int, to_delete: LogSegment, reason: str) -> LogSegment:
        """``LocalLog.createAndDeleteSegment``: never leaves the log without an active segment."""
        if new_offset == to_delete.base_offset:
            to_delete.change_file_suffixes("", DELETED_FILE_SUFFIX)
        new_segment = self._open_segment(new_offset)
        if new_offset != to_delete.base_offset:
            self.remove_segment(to_delete.base_offset)
        self.add_segment(new_segment)
        to_delete.mark_deleted_and_delete()
        return new_segment

    # ============================================================================================
    # flushing and checkpoints
    def _flush_up_to(self, offset: int) -> None:
        """``UnifiedLog.flush(offset, includingOffset=false)`` + ``markFlushed``: moves the recovery point."""
        if offset > self.recovery_point:
            if self.durable:
                for b in self._bases:
                    seg = self._segments[b]
                    nxt = self._higher_segment(b)
                    if (nxt is None or nxt.base_offset > self.recovery_point) and b < offset:
                        seg.flush()
            self.recovery_point = offset
            self._write_checkpoints()

    def flush(self) -> None:
        """Flush everything up to the log end offset (``flush(forceFlushActiveSegment=true)``)."""
        self._check_open()
        self._check_writable("flush")
        leo = self.log_end_offset
        if self.durable:
            for seg in self.segments:
                seg.flush()
        if leo > self.recovery_point:
            self.recovery_point = leo
        self._write_checkpoints()

    # ============================================================================================
    # compaction
    def clean(self, now: int | None = None, cleaner=None, **kwargs):
        """One pass of Kafka's log cleaner over this log (see :func:`kafkafmt.log.cleaner.clean_log`);
        ``cleaner`` is a :class:`~kafkafmt.log.cleaner.offset_map.CleanerConfig` (the broker's cleaner settings)."""
        self._check_open()
        self._check_writable("clean")
        from .cleaner import clean_log
        return clean_log(self, now=now, cleaner=cleaner, **kwargs)

    # ============================================================================================
    # timestamp lookup
    def _message_format_below_0_10(self) -> bool:
        """``config.messageFormatVersion.isLessThan(IBP_0_10_0_IV0)``, the format the log really uses."""
        return self.config.to_magic == 0

    def fetch_offset_by_timestamp(self, target_timestamp: int) -> TimestampAndOffset | None:
        """``UnifiedLog.fetchOffsetByTimestamp`` (ListOffsets; kafka-rules §6.6).

        -2 EARLIEST (and -4 EARLIEST_LOCAL): log start offset; -1 LATEST: log end offset; -3
        MAX_TIMESTAMP: the first record holding the largest timestamp; -5 LATEST_TIERED: (-1, -1, -1)
        without tiered storage.  Any other target: the first record with timestamp >= target,
        searched in the first segment whose largest timestamp >= target.  None = not found (the
        response would carry offset -1).
        """
        self._check_open()
        if (self._message_format_below_0_10() and target_timestamp != EARLIEST_TIMESTAMP
                and target_timestamp != LATEST_TIMESTAMP):
            raise UnsupportedForMessageFormatError(
                f"Cannot search offsets based on timestamp because message format version for partition "
                f"{self.topic_partition} is {self.config.message_format_version} which is earlier than the "
                f"minimum required version 0.10.0-IV0")
        if target_timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            e = self._epoch_cache.earliest_entry
            epoch = e[0] if e is not None and e[1] <= self.log_start_offset else None
            return TimestampAndOffset(NO_TIMESTAMP, self.log_start_offset, epoch)
        if target_timestamp == LATEST_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, self.log_end_offset, self._epoch_cache.latest_epoch)
        if target_timestamp == LATEST_TIERED_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, -1, -1)
        if target_timestamp == MAX_TIMESTAMP:
            return self.view().max_timestamp_offset()
        return self.view().search_offset_by_timestamp(target_timestamp, self.log_start_offset)

    def view(self) -> PartitionView:
        """The read-only view of this log's segments (:mod:`kafkafmt.log.view`): the lookups every reader shares."""
        return PartitionView(self.dir, self.topic, self.partition, self.segments, known_log_start=self.log_start_offset)

    # ============================================================================================
    # reads
    def read(self, start_offset: int, max_bytes: int, *, isolation: str = "high_watermark",
             min_one_message: bool = True) -> FetchDataInfo:
        """``UnifiedLog.read``: whole batches from the one holding ``start_offset``, up to ``max_bytes``
        (at least one batch with ``min_one_message``), never past the HW (or LEO with ``isolation="log_end"``)."""
        self._check_open()
        if start_offset < self.log_start_offset:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition {self.topic_partition}, but we only "
                f"have log segments starting from offset: {self.log_start_offset}.")
        if isolation == "log_end":
            max_meta = self._next_offset_metadata
        elif isolation in ("high_watermark", "txn_committed"):
            max_meta = self._fetch_high_watermark_metadata()
        else:
            raise ValueError(f"unknown isolation {isolation!r}")
        return self._local_read(start_offset, max_bytes, min_one_message, max_meta)

    def _local_read(self, start_offset: int, max_length: int, min_one_message: bool,
                    max_meta: LogOffsetMetadata) -> FetchDataInfo:
        end_offset = self.log_end_offset
        seg = self._floor_segment(start_offset)
        if start_offset > end_offset or seg is None:
            raise OffsetOutOfRangeError(f"Received request for offset {start_offset} for partition "
                                        f"{self.topic_partition}, but we only have log segments upto {end_offset}.")
        if start_offset == max_meta.message_offset:
            return FetchDataInfo(max_meta, b"")
        if start_offset > max_meta.message_offset:
            return FetchDataInfo(self._convert_to_offset_metadata_or_throw(start_offset), b"")
        while seg is not None:
            if seg.base_offset < max_meta.segment_base_offset:
                max_position = seg.size
            elif seg.base_offset == max_meta.segment_base_offset and not max_meta.message_offset_only():
                max_position = max_meta.relative_position_in_segment
            else:
                max_position = None
            fetched = seg.read(start_offset, max_length, max_position, min_one_message)
            if fetched is not None:
                return fetched
            seg = self._higher_segment(seg.base_offset)
        return FetchDataInfo(self._next_offset_metadata, b"")

    def _convert_to_offset_metadata_or_throw(self, offset: int) -> LogOffsetMetadata:
        return self._local_read(offset, 1, False, self._next_offset_metadata).fetch_offset_metadata

    # ============================================================================================
    # truncation
    def truncate_to(self, target_offset: int) -> bool:
        """``UnifiedLog.truncateTo``: drop offsets >= target (whole batches); True iff target < LEO."""
        self._check_open()
        self._check_writable("truncate_to")
        if target_offset < 0:
            raise IllegalArgumentError(f"Cannot truncate partition {self.topic_partition} to a negative offset "
                                       f"({target_offset}).")
        if target_offset >= self.log_end_offset:
            self._epoch_cache.truncate_from_end(self.log_end_offset)
            return False
        if self.segments[0].base_offset > target_offset:
            self.truncate_fully_and_start_at(target_offset)
        else:
            deletable = [s for s in self.segments if s.base_offset > target_offset]
            self._remove_and_delete_segments(deletable, "truncation")
            truncated = self.active_segment.truncate_to(target_offset)
            self._update_log_end_offset(target_offset)
            self._epoch_cache.truncate_from_end(target_offset)
            self.log_start_offset = min(target_offset, self.log_start_offset)
            if self._hw is not None and self._hw >= self.log_end_offset:
                self._hw = self.log_end_offset
            self.events.append({"type": "truncate", "time": self.clock.now(), "to": target_offset,
                                "deleted_segments": [s.base_offset for s in deletable],
                                "bytes_truncated": truncated})
        self._write_checkpoints()
        return True

    def truncate_fully_and_start_at(self, new_offset: int, log_start_offset: int | None = None) -> None:
        """Delete everything and start an empty log at ``new_offset``."""
        self._check_open()
        self._check_writable("truncate_fully_and_start_at")
        segs = self.segments
        if segs:
            self._remove_and_delete_segments(segs[:-1], "truncation")
            self._create_and_delete_segment(new_offset, segs[-1], reason="truncation")
        self._update_log_end_offset(new_offset)
        self._epoch_cache.clear()
        self.log_start_offset = new_offset if log_start_offset is None else log_start_offset
        self._hw = None if self._hw is None else self.log_end_offset
        self.events.append({"type": "truncate_fully", "time": self.clock.now(), "to": new_offset})
        self._write_checkpoints()

    # ============================================================================================
    # lifecycle
    def _check_open(self) -> None:
        if self._closed:
            raise KafkaStorageError(f"The memory mapped buffer for log of {self.topic_partition} is already closed")

    #: set by ``Log.open(..., read_only=True)``: the directory read, and what recovery changed in its copy
    read_only: bool = False
    source_dir: Path | None = None
    source_view: PartitionView | None = None
    recovery_changes: tuple[dict, ...] | list[dict] = ()
    #: set by ``Log.open(..., read_only=True)``: deletes the private copy (a ``weakref.finalize``, so the copy
    #: also goes when the log is dropped unclosed); :meth:`close` calls it
    scratch_cleanup: Any = None

    def _check_writable(self, operation: str) -> None:
        if self.read_only:
            raise UnsupportedOperationError(f"{operation} on a log opened read-only ({self.source_dir})")

    def close(self) -> None:
        """Clean shutdown: flush to the LEO, close every segment (final time index entries, trims),
        write the checkpoints and the clean-shutdown marker."""
        if self._closed:
            return
        if self.read_only:  # nothing to write: drop the private copy
            self.close_handlers()
            self.scratch_cleanup()
            return
        self.flush()
        for seg in self.segments:
            seg.close()
        self._write_checkpoints()
        self._closed = True
        self._release_log_dir(clean=True)

    def close_handlers(self) -> None:
        """Drop the log without writing anything more: the on-disk state of a crash at this instant."""
        if self._closed:
            return
        for seg in self.segments:
            seg.close_handlers()
        self._closed = True
        self._release_log_dir(clean=False)

    crash = close_handlers

    @property
    def closed(self) -> bool:
        return self._closed

    def delete(self) -> None:
        """Delete every file and the directory."""
        self._check_writable("delete")
        if not self._closed:
            self.close_handlers()
        for name in os.listdir(self.dir):
            p = self.dir / name
            if p.is_file():
                p.unlink()
        try:
            self.dir.rmdir()
        except OSError:
            pass

    def __enter__(self) -> "Log":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ============================================================================================
    # inspection
    def segment_info(self) -> list[dict]:
        """Plain data per segment (for notebooks and comparisons)."""
        out = []
        for i, seg in enumerate(self.segments):
            nxt = self._higher_segment(seg.base_offset)
            out.append({
                "base_offset": seg.base_offset,
                "next_offset": nxt.base_offset if nxt is not None else self.log_end_offset,
                "size": seg.size,
                "max_timestamp": seg.max_timestamp_so_far,
                "largest_timestamp": seg.largest_timestamp(),
                "rolling_based_timestamp": seg.rolling_based_timestamp,
                "created": seg.created,
                "roll_jitter_ms": seg.roll_jitter_ms,
                "offset_index_entries": seg.offset_index.entries,
                "time_index_entries": [(e.timestamp, e.offset) for e in seg.time_index],
            })
        return out

    def epoch_entries(self) -> list[tuple[int, int]]:
        return self._epoch_cache.entries

    def __repr__(self) -> str:
        return (f"Log({self.dir}, segments={self.number_of_segments}, logStartOffset={getattr(self, 'log_start_offset', '?')}, "
                f"logEndOffset={self.log_end_offset if hasattr(self, '_next_offset_metadata') else '?'}, "
                f"policy={self.time_index_policy})")


def config_with(config: LogConfig | None = None, **changes) -> LogConfig:
    """``LogConfig`` with some fields changed (a convenience for tests and notebooks)."""
    return (config or LogConfig()).replace(**changes)


def _as_log_config(config) -> LogConfig:
    """A :class:`LogConfig`, or Kafka topic properties (a mapping) turned into one."""
    if config is None:
        return LogConfig()
    if isinstance(config, LogConfig):
        return config
    if isinstance(config, Mapping):
        return LogConfig.from_properties(config)
    raise TypeError(f"config must be a LogConfig or a mapping of Kafka topic properties, not {type(config).__name__}")
