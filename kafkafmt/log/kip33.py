"""Seed 001: the rejected KIP-33 variant, as a second, selectable time-index policy.

In this variant (``Log(..., time_index_policy="kip33-variant")``):

* messages keep their CreateTime; the broker's LogAppendTime exists ONLY in the time index
  (the leader validates with ``message.timestamp.type=CreateTime`` whatever the topic says);
* the time index gets an entry ``(LogAppendTime, offset)`` for the first message of a segment, for
  the first message appended in each new minute, and for the last message of a segment (written on
  roll and on close).  Entries keep Kafka's 12-byte layout (:data:`~kafkafmt.layout.TIME_INDEX_ENTRY`)
  and the ``.timeindex`` file name; equal timestamps are allowed (offsets must still increase);
* retention and time-based rolling use these LogAppendTimes: a segment expires when
  ``now - LogAppendTime(last message) > retention.ms``; it rolls when
  ``now - LogAppendTime(first message) > segment.ms - jitter``;
* a timestamp lookup answers with a LogAppendTime bound: the offset of the last index entry whose
  time is < target (else the segment's first message), so no message appended at or after the
  target is skipped, but up to a minute of earlier messages can be returned;
* followers do not rebuild the index: they receive the leader's entries up to their log end offset
  in the fetch response, as data of a companion partition numbered ``~partition``
  (:func:`companion_partition`; :func:`replicate`); truncating the log truncates the index;
* after an unclean shutdown the index is NOT rebuilt from the log (``kip33_recovery="keep"``: entries
  beyond the recovered log are dropped, the rest kept); ``"rebuild"`` shows the seed's objection: the
  recovered segment's first and last messages are stamped with the recovery time.

:func:`kafkafmt.gen.compare.compare_policies` runs the same workload through both policies and returns
plain data.
"""
from __future__ import annotations

from typing import Iterable

from ..constants import INT32_MAX, NO_TIMESTAMP, TimestampType
from ..errors import IllegalStateError, IndexFullError, InvalidOffsetError
from .file_records import TimestampAndOffset
from .index import TimeIndex, TimestampOffset
from .segment import LogSegment

MINUTE_MS = 60_000


def companion_partition(partition: int) -> int:
    """The time-index companion partition of ``partition``: ``~partition`` as an unsigned 32-bit number.

    >>> hex(companion_partition(0)), hex(companion_partition(1))
    ('0xffffffff', '0xfffffffe')
    """
    if not 0 <= partition <= INT32_MAX:
        raise ValueError(f"partition numbers are 0..{INT32_MAX} (got {partition})")
    return (~partition) & 0xFFFFFFFF


def partition_of_companion(companion: int) -> int:
    """The data partition of a companion partition number (the inverse of :func:`companion_partition`)."""
    return (~companion) & 0xFFFFFFFF


def minute_of(ts: int) -> int:
    return ts // MINUTE_MS


class LatTimeIndex(TimeIndex):
    """A ``.timeindex`` holding LogAppendTimes: same layout, entries appended by the variant's rules."""

    def append_lat(self, timestamp: int, offset: int, skip_full_check: bool = False) -> bool:
        """Append ``(timestamp, offset)``; timestamps may repeat, offsets must increase."""
        if not skip_full_check and self.is_full():
            raise IndexFullError(f"Attempt to append to a full time index (size = {self.entries}).")
        last = self.last_entry
        if self.entries != 0:
            if offset <= last.offset:
                if offset == last.offset:
                    return False
                raise InvalidOffsetError(f"Attempt to append an offset ({offset}) to slot {self.entries} no larger "
                                         f"than the last offset appended ({last.offset}) to {self._where()}")
            if timestamp < last.timestamp:
                raise IllegalStateError(f"Attempt to append a timestamp ({timestamp}) to slot {self.entries} no "
                                        f"larger than the last timestamp appended ({last.timestamp}) to "
                                        f"{self._where()}")
        self._write_entry(timestamp, offset)
        return True

    def lookup_lat(self, target: int) -> TimestampOffset | None:
        """The last entry with time < ``target``, or None (then the segment's first message is the answer)."""
        # entries are sorted by time (non-decreasing) -> binary search for the last one below target
        lo, hi = 0, self.entries
        while lo < hi:
            mid = (lo + hi) // 2
            if self.parse_entry(mid).timestamp < target:
                lo = mid + 1
            else:
                hi = mid
        return self.parse_entry(lo - 1) if lo else None


class Kip33LogSegment(LogSegment):
    """A segment whose time index holds LogAppendTimes (seed 001)."""

    def __init__(self, *args, recovery_mode: str = "keep", **kwargs):
        super().__init__(*args, **kwargs)
        if recovery_mode not in ("keep", "rebuild"):
            raise ValueError(f"kip33_recovery must be 'keep' or 'rebuild' (got {recovery_mode!r})")
        self.recovery_mode = recovery_mode
        #: LogAppendTime and offset of the last message appended (in memory, like Kafka's max timestamp)
        self.last_append_time: int | None = None
        self.last_appended_offset: int | None = None

    @property
    def time_index(self) -> LatTimeIndex:
        if self._time_index is None:
            self._time_index = LatTimeIndex(self._time_index_path, self.base_offset, self.max_index_size)
        return self._time_index

    # --- message max timestamp (not in the index here) ------------------------------------------
    def read_max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        if self._max_ts_and_offset is None:
            after = self.log.largest_timestamp_after(0)
            self._max_ts_and_offset = (TimestampOffset(after.timestamp, after.offset) if after.timestamp >= 0
                                       else TimestampOffset(NO_TIMESTAMP, self.base_offset))
        return self._max_ts_and_offset

    def _read_largest_timestamp(self) -> TimestampOffset:
        self._max_ts_and_offset = None
        return self.read_max_timestamp_and_offset_so_far()

    # --- LogAppendTime bookkeeping --------------------------------------------------------------
    def _last_known_append(self) -> tuple[int, int] | None:
        ti = self.time_index
        best = None
        if ti.entries:
            e = ti.last_entry
            best = (e.timestamp, e.offset)
        if self.last_append_time is not None and self.last_appended_offset is not None:
            if best is None or self.last_appended_offset >= best[1]:
                best = (max(self.last_append_time, best[0] if best else self.last_append_time),
                        self.last_appended_offset)
        return best

    def first_append_time(self) -> int | None:
        ti = self.time_index
        return ti.parse_entry(0).timestamp if ti.entries else None

    def largest_append_time(self) -> int | None:
        known = self._last_known_append()
        return None if known is None else known[0]

    def append(self, largest_offset: int, largest_timestamp_ms: int, shallow_offset_of_max_timestamp: int,
               records, *, first_offset: int | None = None, append_time: int | None = None,
               companion_entries: Iterable[tuple[int, int]] | None = None, batches: list | None = None) -> None:
        was_empty = self.size == 0
        super().append(largest_offset, largest_timestamp_ms, shallow_offset_of_max_timestamp, records,
                       batches=batches)
        first = first_offset if first_offset is not None and first_offset >= 0 else \
            (self.base_offset if was_empty else largest_offset)
        ti = self.time_index
        if companion_entries is not None:  # follower: the leader's entries, never our own clock
            self.apply_entries(companion_entries, upto=largest_offset)
        elif append_time is not None:  # leader
            last_ts = ti.last_entry.timestamp if ti.entries else None
            t = append_time if last_ts is None else max(append_time, last_ts)  # keep the index sorted
            if was_empty or ti.entries == 0 or minute_of(t) > minute_of(ti.last_entry.timestamp):
                ti.append_lat(t, first)
            self.last_append_time = t
        self.last_appended_offset = largest_offset

    def apply_entries(self, entries: Iterable[tuple[int, int]], *, upto: int) -> None:
        """Write the leader's entries that fall in this segment (offsets base..upto) and are new here."""
        ti = self.time_index
        for ts, off in sorted(entries, key=lambda e: e[1]):
            if off < self.base_offset or off > upto:
                continue
            if ti.entries and off <= ti.last_entry.offset:
                continue
            ti.append_lat(ts, off, skip_full_check=True)
            if self.last_append_time is None or ts >= self.last_append_time:
                self.last_append_time = ts

    # --- hooks ----------------------------------------------------------------------------------
    def _time_index_on_offset_entry(self) -> None:
        pass  # the offset index interval does not drive this index

    def _time_index_final_entry(self) -> None:
        """The entry for the last message of the segment (roll, close)."""
        if self.last_append_time is None or self.last_appended_offset is None:
            return
        ti = self.time_index
        if ti.entries and self.last_appended_offset <= ti.last_entry.offset:
            return
        t = self.last_append_time if not ti.entries else max(self.last_append_time, ti.last_entry.timestamp)
        ti.append_lat(t, self.last_appended_offset, skip_full_check=True)

    def _time_index_recover_begin(self) -> None:
        if self.recovery_mode == "rebuild":
            self.time_index.reset()
        else:
            # grow back to max so that a trimmed index can take new entries after recovery
            self.time_index.resize(self.max_index_size)

    def _time_index_recover_end(self) -> None:
        last = None
        for b in self.log.batches():
            last = b
        next_offset = self.base_offset if last is None else last.next_offset
        ti = self.time_index
        if self.recovery_mode == "rebuild":
            if last is not None:
                now = self.clock.now()
                ti.append_lat(now, self.base_offset, skip_full_check=True)
                ti.append_lat(now, next_offset - 1, skip_full_check=True)
                self.last_append_time, self.last_appended_offset = now, next_offset - 1
        else:
            # a crashed active index counts its zero-filled slots as entries: keep the longest prefix of
            # entries whose offsets increase (and times do not decrease), then drop those beyond the log
            good, prev = 0, None
            for n in range(ti.entries):
                e = ti.parse_entry(n)
                if prev is not None and (e.offset <= prev.offset or e.timestamp < prev.timestamp):
                    break
                good, prev = n + 1, e
            ti.truncate_to_entries(good)
            ti.truncate_to(next_offset)
            if ti.entries:
                e = ti.last_entry
                self.last_append_time, self.last_appended_offset = e.timestamp, e.offset
        ti.trim_to_valid_size()

    def _time_index_truncate_to(self, offset: int) -> None:
        self.time_index.truncate_to(offset)
        ti = self.time_index
        if ti.entries:
            e = ti.last_entry
            self.last_append_time, self.last_appended_offset = e.timestamp, e.offset
        else:
            self.last_append_time = self.last_appended_offset = None

    # --- decisions that use LogAppendTime -------------------------------------------------------
    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        first = self.first_append_time()
        if first is not None:
            return now - first
        return now - self.created

    def largest_timestamp(self) -> int:
        """LogAppendTime of the last message (last index entry, or the in-memory value); mtime fallback."""
        t = self.largest_append_time()
        return t if t is not None else self.last_modified()

    def find_offset_by_timestamp(self, timestamp_ms: int, starting_offset: int = 0) -> TimestampAndOffset | None:
        ti = self.time_index
        e = ti.lookup_lat(timestamp_ms)
        if e is None:
            if ti.entries:
                first = ti.parse_entry(0)
                ts, off = first.timestamp, first.offset
            else:
                ts, off = NO_TIMESTAMP, self.base_offset
        else:
            ts, off = e.timestamp, e.offset
        off = max(off, starting_offset)
        found = self.log.search_for_offset_with_size(off, self.offset_index.lookup(off).position)
        if found is None:
            return None
        epoch = None
        for b in self.log.batches_from(found.position):
            ple = b.partition_leader_epoch
            epoch = None if ple < 0 else ple
            if off < b.base_offset:
                off = b.base_offset
            break
        return TimestampAndOffset(ts, off, epoch)


class Kip33TimeIndexPolicy:
    """The ``time_index_policy="kip33-variant"`` plug-in for :class:`~kafkafmt.log.log.Log`."""

    name = "kip33-variant"
    segment_class = Kip33LogSegment

    def segment_options(self, log) -> dict:
        return {"recovery_mode": log.kip33_recovery}

    def validator_topic_config(self, topic_config):
        """Messages keep CreateTime: the broker never writes LogAppendTime into them."""
        try:
            return topic_config.replace(timestamp_type=TimestampType.CREATE_TIME)
        except (TypeError, ValueError):
            return topic_config

    def append(self, log, segment: Kip33LogSegment, info, records: bytes, *, leader: bool,
               companion_entries=None) -> None:
        first = info.first_offset if info.first_offset >= 0 else None
        if leader:
            segment.append(info.last_offset, info.max_timestamp, info.shallow_offset_of_max_timestamp, records,
                           first_offset=first, append_time=log.clock.now())
        else:
            segment.append(info.last_offset, info.max_timestamp, info.shallow_offset_of_max_timestamp, records,
                           first_offset=first, companion_entries=list(companion_entries or ()))

    def roll_now(self, log, info, *, leader: bool, companion_entries=None) -> int:
        """Leader: its clock (the LogAppendTime it is about to assign).  Follower: the leader's LogAppendTime
        of these records as far as the companion entries tell -- the entry at the append's first offset,
        else the latest entry at or before its last offset (a lower bound) -- else its own clock.  Rolls
        then agree with the leader's only where entries exist: seed 001's unsolved "log rolling issue"."""
        if leader or not companion_entries:
            return log.clock.now()
        first = info.first_offset if info.first_offset >= 0 else info.last_offset_of_first_batch
        exact = [ts for ts, off in companion_entries if off == first]
        if exact:
            return exact[0]
        before = [ts for ts, off in companion_entries if off <= info.last_offset]
        return max(before) if before else log.clock.now()

    def before_roll(self, log, old_segment: Kip33LogSegment, new_base_offset: int, companion_entries=None) -> None:
        if companion_entries:
            old_segment.apply_entries([e for e in companion_entries if e[1] < new_base_offset],
                                      upto=new_base_offset - 1)


# ------------------------------------------------------------------------------------------------
# replication of the companion partition
def leader_time_index_entries(leader, from_offset: int, up_to_offset: int) -> list[tuple[int, int]]:
    """The leader's time index entries with ``from_offset <= offset < up_to_offset``."""
    out = []
    for seg in leader.segments:
        for e in seg.time_index:
            if from_offset <= e.offset < up_to_offset:
                out.append((e.timestamp, e.offset))
    return out


def fetch(leader, follower, *, max_bytes: int = 1 << 20) -> dict | None:
    """One follower fetch from ``leader``: records from the follower's LEO, plus the companion partition.

    Returns a fetch-response-like dict, or None when there is nothing new::

        {"topic": "t", "partition": 0, "fetch_offset": 10, "records": b"...",
         "companion": {"partition": 4294967295, "entries": [(lat, offset), ...]}}

    The entries cover the follower's active segment up to its log end offset after this fetch
    (seed 001: "The TimeIndexEntry will contain the entry up to the follower's LEO").
    """
    fetch_offset = follower.log_end_offset
    data = leader.read(fetch_offset, max_bytes, isolation="log_end", min_one_message=True)
    if not data.records:
        return None
    from ..records import MemoryRecords
    last = None
    for b in MemoryRecords(data.records).batches():
        last = b
    new_leo = last.last_offset + 1
    entries = leader_time_index_entries(leader, follower.active_segment.base_offset, new_leo)
    return {"topic": leader.topic, "partition": leader.partition, "fetch_offset": fetch_offset,
            "records": data.records,
            "companion": {"partition": companion_partition(leader.partition), "entries": entries}}


def replicate(leader, follower, *, max_bytes: int = 1 << 20) -> list[dict]:
    """Fetch until the follower has everything the leader has; returns the fetch responses."""
    responses = []
    while follower.log_end_offset < leader.log_end_offset:
        resp = fetch(leader, follower, max_bytes=max_bytes)
        if resp is None:
            break
        entries = resp["companion"]["entries"] if follower.time_index_policy == "kip33-variant" else None
        follower.append_as_follower(resp["records"], companion_entries=entries)
        responses.append(resp)
    return responses
