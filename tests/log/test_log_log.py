"""Log-level rules: appends and rolls (kafka-rules §7.3), retention (§7.4), loading and recovery (§7.5),
truncation (§7.6), reads (§7.7), ListOffsets (§6.6), checkpoints, atomic file operations, config."""
from __future__ import annotations

import pytest

from kafkafmt.errors import (
    ConfigError,
    InvalidRecordError,
    OffsetOutOfRangeError,
    OffsetsOutOfOrderError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnexpectedAppendOffsetError,
    UnsupportedForMessageFormatError,
)
from kafkafmt.log import Log, LogConfig, SimulatedClock, SystemClock
from kafkafmt.log.clock import mtime_ms
from kafkafmt.log.files import filename_prefix_from_offset, offset_from_file_name, parse_topic_partition_name
from kafkafmt.log.index import OffsetPosition, TimestampOffset
from kafkafmt.records import MemoryRecords
from log_helpers import batch, one

INT_MAX = 2**31 - 1


def raft(log, data):
    return log.append_as_leader(data, origin="RAFT_LEADER")


def fill(log, clock, n, *, size=20, step=10, ts=None):
    """n one-record appends; returns the batch size."""
    for _ in range(n):
        clock.advance(step)
        raft(log, one(log.log_end_offset, clock.now() if ts is None else ts, size))
    return len(one(0, 0, size))


# --- names, config, clock -------------------------------------------------------------------------
def test_file_names_are_20_digit_offsets():
    assert filename_prefix_from_offset(0) == "00000000000000000000"
    assert filename_prefix_from_offset(1234) == "00000000000000001234"
    assert filename_prefix_from_offset(2**63 - 1) == "09223372036854775807"
    assert offset_from_file_name("00000000000000001234.timeindex.deleted") == 1234
    assert parse_topic_partition_name("/x/my-topic-12") == ("my-topic", 12)
    with pytest.raises(ValueError):
        parse_topic_partition_name("/x/notopic")


def test_log_config_defaults_and_properties():
    c = LogConfig()
    assert (c.segment_bytes, c.segment_ms, c.segment_jitter_ms, c.segment_index_bytes, c.index_interval_bytes,
            c.retention_ms, c.retention_bytes, c.cleanup_policy, c.preallocate, c.max_message_bytes) == \
        (1073741824, 604800000, 0, 10485760, 4096, 604800000, -1, ("delete",), False, 1048588)
    p = LogConfig.from_properties({"segment.bytes": "1024", "cleanup.policy": "compact,delete", "preallocate": "true",
                                   "retention.ms": "-1", "message.timestamp.type": "LogAppendTime"})
    assert p.segment_bytes == 1024 and p.compact and p.delete and p.preallocate and p.retention_ms == -1
    assert p.timestamp_type.kafka_name == "LogAppendTime"  # one configuration: never filed away unused
    assert LogConfig.from_properties(p.to_properties()) == p
    assert LogConfig(cleanup_policy="compact", segment_ms=1000, max_compaction_lag_ms=10).max_segment_ms == 10
    assert LogConfig(preallocate=True, segment_bytes=5000).init_file_size == 5000
    for bad in ({"segment.bytes": "13"}, {"segment.ms": "0"}, {"segment.index.bytes": "3"},
                {"retention.ms": "-2"}, {"cleanup.policy": "forever"}, {"preallocate": "yes"}):
        with pytest.raises(ConfigError):
            LogConfig.from_properties(bad)


def test_clocks():
    c = SimulatedClock(5)
    assert c.advance(10) == 15 and c.now() == 15 and c.set(3) == 3
    with pytest.raises(ValueError):
        c.advance(-1)
    assert abs(SystemClock().now() - __import__("time").time() * 1000) < 5000


# --- a new log on disk ----------------------------------------------------------------------------
def test_new_log_directory_layout(make_log, tmp_path):
    log = make_log(LogConfig(segment_index_bytes=100))
    files = {p.name: p.stat().st_size for p in (tmp_path / "t-0").iterdir()}
    # LogLoader resizes the active segment's indexes to max: both files exist, preallocated; the partition
    # directory holds only Kafka's per-partition files
    assert files == {"00000000000000000000.log": 0, "00000000000000000000.index": 96,
                     "00000000000000000000.timeindex": 96, "leader-epoch-checkpoint": 0}
    # LogManager's files live in the log directory: the lock while open, one checkpoint line per partition
    # (a log start offset only above the first segment's base offset)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "log-start-offset-checkpoint",
                                                           "recovery-point-offset-checkpoint", "t-0"]
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 0\n"
    assert (tmp_path / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (0, 0, 0)


def test_segment_mtimes_come_from_the_clock(make_log, clock, tmp_path):
    log = make_log()
    clock.set(1_234_567_000)
    raft(log, one(0, 5))
    assert mtime_ms(tmp_path / "t-0" / "00000000000000000000.log") == 1_234_567_000
    assert log.active_segment.last_modified() == 1_234_567_000


# --- rolling (§7.3) -------------------------------------------------------------------------------
def test_roll_on_segment_bytes_and_trim_of_the_old_segment(make_log, clock, tmp_path):
    s = len(one(0, 0))
    log = make_log(LogConfig(segment_bytes=3 * s, segment_index_bytes=96, index_interval_bytes=0))
    fill(log, clock, 7)
    # size + incoming > segment.bytes ⇔ a 4th batch does not fit: segments of 3 batches at 0, 3, 6
    assert [seg.base_offset for seg in log.segments] == [0, 3, 6]
    assert [seg.size for seg in log.segments] == [3 * s, 3 * s, s]
    d = tmp_path / "t-0"
    # the rolled segments' indexes are trimmed: offset entries for batches 2 and 3 (not the first)
    assert (d / "00000000000000000000.index").stat().st_size == 2 * 8
    assert (d / "00000000000000000000.timeindex").stat().st_size == 2 * 12
    assert (d / "00000000000000000006.index").stat().st_size == 96  # the active one stays preallocated
    rolls = [e for e in log.events if e["type"] == "roll"]
    assert [(e["from"], e["to"], e["reasons"]) for e in rolls] == [(0, 3, ["segment.bytes"]), (3, 6, ["segment.bytes"])]
    # the recovery point follows each roll (flushUptoOffsetExclusive(newSegment.baseOffset))
    assert log.recovery_point == 6
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 6\n"


def test_batch_larger_than_a_segment_is_rejected(make_log):
    log = make_log(LogConfig(segment_bytes=100))
    with pytest.raises(RecordBatchTooLargeError, match="exceeds the maximum configured segment size of 100"):
        raft(log, one(0, 1, size=200))
    assert log.log_end_offset == 0


def test_record_too_large_on_leader_not_on_follower(make_log):
    log = make_log(LogConfig(max_message_bytes=50))
    with pytest.raises(RecordTooLargeError, match="exceeds the maximum configured value of 50"):
        raft(log, one(0, 1))
    log.append_as_follower(one(0, 1))  # ignoreRecordSize: the leader accepted it
    assert log.log_end_offset == 1


def test_roll_on_message_time_with_seeded_jitter(make_log, clock):
    config = LogConfig(segment_ms=1000, segment_jitter_ms=400)
    log = make_log(config, seed=42)
    jitter = log.active_segment.roll_jitter_ms
    assert 0 <= jitter < 400
    t0 = 5_000_000
    raft(log, one(0, t0))
    raft(log, one(1, t0 + 1000 - jitter))  # not > segment.ms - jitter: stays
    assert log.number_of_segments == 1
    info = raft(log, one(2, t0 + 1000 - jitter + 1))
    assert info.roll_reasons == ["segment.ms"] and log.active_segment.base_offset == 2
    again = make_log(config, name="u-0", seed=42)
    assert again.active_segment.roll_jitter_ms == jitter  # same seed, same draw


def test_roll_when_the_time_index_is_full(make_log, clock):
    # segment.index.bytes 36: time index 3 slots → full at 2 entries; offset index 4 slots
    log = make_log(LogConfig(segment_index_bytes=36, index_interval_bytes=0))
    for i in range(4):
        raft(log, one(i, 100 + i))
    # appends 1 and 2 add time entries (101@1, 102@2): full; append 3 rolls first
    assert [s.base_offset for s in log.segments] == [0, 3]
    assert log.events[-1]["reasons"] == ["time index full"]
    first = log.segments[0]
    assert first.time_index.all_entries() == [TimestampOffset(101, 1), TimestampOffset(102, 2)]
    assert first.offset_index.all_entries() == [OffsetPosition(1, len(one(0, 0))), OffsetPosition(2, 2 * len(one(0, 0)))]


def test_empty_segment_with_full_index_is_recreated_at_the_same_offset(make_log, tmp_path):
    """KAFKA-6388: segment.index.bytes = 12 gives a 1-slot time index that is always "full"."""
    log = make_log(LogConfig(segment_index_bytes=12, index_interval_bytes=10**6))
    raft(log, one(0, 1))
    assert log.events[-1] == {**log.events[-1], "type": "roll", "from": 0, "to": 0, "recreated": True}
    assert [s.base_offset for s in log.segments] == [0] and log.log_end_offset == 1
    raft(log, one(1, 2))
    assert [s.base_offset for s in log.segments] == [0, 1]
    assert not [p for p in (tmp_path / "t-0").iterdir() if p.name.endswith(".deleted")]


def test_roll_on_offset_overflow(make_log):
    log = make_log()
    log.append_as_follower(one(0, 1))
    far = 10 + INT_MAX
    info = log.append_as_follower(one(far, 2))
    # v2: the first offset is known → the new segment starts at it
    assert "offset overflow" in info.roll_reasons and [s.base_offset for s in log.segments] == [0, far]
    log2 = make_log(name="u-0")
    log2.append_as_follower(batch(0, [(1, b"k", b"v")], magic=1))
    last = 5 + INT_MAX
    log2.append_as_follower(batch(last, [(2, b"k", b"v")], magic=1))
    # v0/v1: unknown first offset → max(lastOffset - Integer.MAX_VALUE, LEO)
    assert [s.base_offset for s in log2.segments] == [0, max(last - INT_MAX, 1)]


# --- appends: follower and leader rules -----------------------------------------------------------
def test_follower_append_offset_checks(make_log):
    log = make_log()
    log.append_as_follower(batch(0, [(1, b"a", b"1"), (2, b"b", b"2")]))
    with pytest.raises(UnexpectedAppendOffsetError, match=r"First offset 1 is less than the next offset 2"):
        log.append_as_follower(one(1, 3))
    with pytest.raises(OffsetsOutOfOrderError, match=r"Out of order offsets found in append to t-0: List\(5, 3\)"):
        log.append_as_follower(one(5, 1) + one(3, 1))
    with pytest.raises(InvalidRecordError, match="expected 0 but the batch has 3"):
        log.append_as_leader(one(2, 1, ple=3), origin="RAFT_LEADER")


def test_follower_skips_batches_from_a_newer_leader_epoch(make_log):
    """Kafka 3.9.2: batches from the first one with a partition leader epoch above the follower's are skipped."""
    log = make_log()
    info = log.append_as_follower(one(0, 1, ple=0) + one(1, 1, ple=5) + one(2, 1, ple=0), leader_epoch=2)
    assert log.log_end_offset == 1 and info.valid_bytes == len(one(0, 1))


def test_follower_max_timestamp_is_first_batch_with_strictly_greater_max(make_log):
    log = make_log(index_granularity="append")
    info = log.append_as_follower(one(0, 50) + one(1, 90) + one(2, 90) + one(3, 10))
    # §6.5: follower = max over batch.maxTimestamp, shallow = that batch's lastOffset (first strictly greater wins)
    assert (info.max_timestamp, info.shallow_offset_of_max_timestamp) == (90, 1)
    assert log.active_segment.read_max_timestamp_and_offset_so_far() == TimestampOffset(90, 1)


def test_partial_trailing_batch_is_dropped(make_log):
    log = make_log()
    data = one(0, 1) + one(1, 2)
    info = log.append_as_follower(data[:-5])
    assert info.valid_bytes == len(one(0, 1)) and log.log_end_offset == 1 and log.size == len(one(0, 1))


def test_leader_append_through_the_broker_validator(make_log, clock):
    from kafkafmt.errors import KafkaFmtError
    from kafkafmt.gen.workloads import client_batch
    log = make_log(LogConfig.from_properties({"message.timestamp.type": "LogAppendTime"}))
    info = log.append_as_leader(client_batch([(5, b"k", b"v"), (6, b"k", b"w")]))
    assert (info.first_offset, info.last_offset, info.max_timestamp, info.log_append_time) == \
        (0, 1, clock.now(), clock.now())
    b = next(MemoryRecords(log.read(0, 10**6).records).batches())
    assert b.timestamp_type.kafka_name == "LogAppendTime" and b.partition_leader_epoch == 0
    strict = make_log(LogConfig.from_properties({"message.timestamp.after.max.ms": "1000"}), name="c-0")
    with pytest.raises(KafkaFmtError) as e:
        strict.append_as_leader(client_batch([(clock.now() + 10**9, b"k", b"v")]))
    assert e.value.kafka_exception == "InvalidTimestampException"
    assert strict.log_end_offset == 0 and strict.size == 0
    with pytest.raises(InvalidRecordError, match="should be 0, but it is 7"):
        log.append_as_leader(one(7, 1))


# --- retention (§7.4) -----------------------------------------------------------------------------
def _three_segments(make_log, clock, **cfg):
    s = len(one(0, 0))
    log = make_log(LogConfig(segment_bytes=2 * s, **cfg))
    for off, ts in enumerate([1000, 2000, 3000, 4000, 5000, 6000]):
        raft(log, one(off, ts))
    assert [x.base_offset for x in log.segments] == [0, 2, 4]
    return log, s


def test_time_retention_uses_largest_timestamp_strictly(make_log, clock):
    log, _ = _three_segments(make_log, clock, retention_ms=10_000)
    clock.set(2000 + 10_000)  # segment 0's largest is 2000: now - 2000 = retention, not >
    assert log.delete_old_segments() == 0
    clock.set(2000 + 10_001)
    assert log.delete_old_segments() == 1
    assert [x.base_offset for x in log.segments] == [2, 4] and log.log_start_offset == 2
    assert (log.dir.parent / "log-start-offset-checkpoint").read_text() == "0\n1\nt 0 2\n"
    assert not [p for p in log.dir.iterdir() if p.name.startswith(filename_prefix_from_offset(0))]
    clock.set(10**6)  # everything expired: the active segment is rolled first, then all old ones go
    assert log.delete_old_segments() == 2
    assert [x.base_offset for x in log.segments] == [6] and log.log_start_offset == 6 and log.size == 0
    assert log.delete_old_segments() == 0  # an empty last segment is never deleted


def test_time_deletion_times_is_when_the_log_deletes_each_segment(make_log, clock):
    """The vectorised rule the pipeline and the notebooks use (``time_deletion_times``) says when
    ``delete_old_segments`` removes each segment, also when a later segment has an older timestamp."""
    from kafkafmt.log.retention import time_deletion_times

    s = len(one(0, 0))
    log = make_log(LogConfig(segment_bytes=2 * s, retention_ms=1000))
    stamps = [5000, 5100, 1000, 1200, 9000, 9100, 2000, 2100, 3000]       # segments 0, 2, 4, 6, 8 (active)
    for off, ts in enumerate(stamps):
        raft(log, one(off, ts))
    log.set_high_watermark(len(stamps))
    bases = [x.base_offset for x in log.segments]       # the active one too: when all expire, it rolls and goes
    expected = dict(zip(bases, time_deletion_times([max(stamps[b:b + 2]) for b in bases], 1000).tolist()))
    deleted_at = {}
    for now in range(0, 10_200, 50):
        clock.set(now)
        before = {x.base_offset for x in log.segments}
        log.delete_old_segments()
        for b in before - {x.base_offset for x in log.segments}:
            deleted_at[b] = now
    # the log deletes at the first step of 50 ms at or after the rule's instant
    assert deleted_at == {b: -(-t // 50) * 50 for b, t in expected.items()}
    assert expected[0] == expected[2] == 6101                                # segment 2 waits for segment 0


def test_retention_never_passes_the_high_watermark(make_log, clock):
    log, _ = _three_segments(make_log, clock, retention_ms=10)
    log.set_high_watermark(3)
    clock.set(10**7)
    assert log.delete_old_segments() == 1  # segment [2,4) has upper bound 4 > HW 3
    assert log.log_start_offset == 2
    with pytest.raises(OffsetOutOfRangeError, match="larger than the high watermark 3"):
        log.maybe_increment_log_start_offset(4)


def test_size_retention(make_log, clock):
    s = len(one(0, 0))
    log, _ = _three_segments(make_log, clock, retention_bytes=3 * s, retention_ms=-1)
    # size 6s - 3s = 3s to free: segment 0 (2s) fits, segment 1 (2s) would overshoot (s - 2s < 0)
    assert log.delete_old_segments() == 1 and [x.base_offset for x in log.segments] == [2, 4]
    assert log.delete_old_segments() == 0  # 4s - 3s = s < 2s


def test_log_start_offset_retention_runs_even_without_delete_policy(make_log, clock):
    log, _ = _three_segments(make_log, clock, cleanup_policy="compact", retention_ms=1)
    clock.set(10**9)
    assert log.delete_old_segments() == 0  # compact: no time/size retention
    assert log.maybe_increment_log_start_offset(3) is True
    assert log.delete_old_segments() == 1  # segment 2's next base (4) > 3: only segment 0 goes
    assert [x.base_offset for x in log.segments] == [2, 4] and log.log_start_offset == 3
    with pytest.raises(OffsetOutOfRangeError, match="only have log segments starting from offset: 3"):
        log.read(2, 100)


def test_retention_falls_back_to_mtime_without_timestamps(make_log, clock):
    s = len(batch(0, [(-1, b"k", b"v" * 20)], magic=0))
    log = make_log(LogConfig(segment_bytes=2 * s, retention_ms=1000))
    clock.set(50_000)
    log.append_as_follower(batch(0, [(-1, b"k", b"v" * 20)], magic=0))
    log.append_as_follower(batch(1, [(-1, b"k", b"v" * 20)], magic=0))
    clock.set(60_000)
    log.append_as_follower(batch(2, [(-1, b"k", b"v" * 20)], magic=0))
    assert log.segments[0].largest_timestamp() == 50_000  # the .log mtime, set from the clock
    clock.set(51_000)
    assert log.delete_old_segments() == 0
    clock.set(51_001)
    assert log.delete_old_segments() == 1


def test_a_crash_between_rename_and_unlink_leaves_only_deleted_files(make_log, clock, tmp_path):
    log, _ = _three_segments(make_log, clock)
    seg = log.segments[0]
    log.close_handlers()
    seg.change_file_suffixes("", ".deleted")  # the rename happened, the unlink did not
    (tmp_path / "t-0" / "00000000000000000099.index").write_bytes(b"")  # an orphan index
    (tmp_path / "t-0" / "00000000000000000002.log.tmp").write_bytes(b"x")  # an interrupted atomic create
    again = Log.open(tmp_path / "t-0", log.config, clock, clean_shutdown=False)
    names = sorted(p.name for p in (tmp_path / "t-0").iterdir())
    assert not [n for n in names if n.endswith((".deleted", ".tmp")) or n.startswith("00000000000000000099")]
    assert [x.base_offset for x in again.segments] == [2, 4] and again.log_start_offset == 2
    again.close()


# --- ListOffsets (§6.6) ---------------------------------------------------------------------------
def test_list_offsets_special_targets(make_log, clock):
    log, _ = _three_segments(make_log, clock)
    raft(log, batch(6, [(9000, b"a", b"1"), (9999, b"b", b"2"), (9999, b"c", b"3")]))
    r = log.fetch_offset_by_timestamp(-2)
    assert (r.timestamp, r.offset, r.leader_epoch) == (-1, 0, 0)
    r = log.fetch_offset_by_timestamp(-1)
    assert (r.timestamp, r.offset, r.leader_epoch) == (-1, 9, 0)
    r = log.fetch_offset_by_timestamp(-3)  # first record holding the max timestamp
    assert (r.timestamp, r.offset, r.leader_epoch) == (9999, 7, 0)
    assert log.fetch_offset_by_timestamp(-4).offset == 0
    r = log.fetch_offset_by_timestamp(-5)
    assert (r.timestamp, r.offset, r.leader_epoch) == (-1, -1, -1)
    assert log.fetch_offset_by_timestamp(10_000) is None
    assert log.fetch_offset_by_timestamp(2500).offset == 2
    assert log.fetch_offset_by_timestamp(3000).offset == 2


def test_list_offsets_needs_message_format_0_10(make_log):
    log = make_log(LogConfig.from_properties({"message.format.version": "0.9.0"}))
    assert log.fetch_offset_by_timestamp(-2).offset == 0
    with pytest.raises(UnsupportedForMessageFormatError):
        log.fetch_offset_by_timestamp(100)


# --- reads (§7.7) ---------------------------------------------------------------------------------
def test_log_read_bounds(make_log, clock):
    log, s = _three_segments(make_log, clock)
    r = log.read(2, 10**6)
    assert [b.base_offset for b in MemoryRecords(r.records).batches()] == [2, 3]  # batches of one segment only
    assert r.fetch_offset_metadata.segment_base_offset == 2
    raft(log, batch(6, [(7000, b"a", b"1"), (7001, b"b", b"2"), (7002, b"c", b"3")]))
    r = log.read(8, 10**6)  # the whole batch holding offset 8, so records 6 and 7 come too
    assert [rec.offset for rec in MemoryRecords(r.records).records()] == [6, 7, 8]
    log.truncate_to(6)
    assert log.read(6, 100).records == b""  # at the LEO: empty
    with pytest.raises(OffsetOutOfRangeError, match="we only have log segments upto 6"):
        log.read(7, 100)
    log.set_high_watermark(5)
    assert [b.base_offset for b in MemoryRecords(log.read(4, 10**6).records).batches()] == [4]
    assert len(log.read(4, 10**6, isolation="log_end").records) == 2 * s
    assert log.read(5, 10**6).records == b""
    r = log.read(0, 1, min_one_message=True)
    assert len(r.records) == s


# --- truncation (§7.6) ----------------------------------------------------------------------------
def test_truncate_to(make_log, clock):
    log, s = _three_segments(make_log, clock)
    log.set_high_watermark(6)
    assert log.truncate_to(6) is False
    assert log.truncate_to(3) is True
    assert [x.base_offset for x in log.segments] == [0, 2] and log.log_end_offset == 3
    assert log.high_watermark == 3 and log.recovery_point <= 3
    assert log.active_segment.offset_index.length == log.config.max_index_size // 8 * 8  # resized to max
    raft(log, one(3, 7000))
    assert log.log_end_offset == 4
    with pytest.raises(Exception, match="negative offset"):
        log.truncate_to(-1)


def test_truncate_below_first_segment_starts_over(make_log, clock):
    log, _ = _three_segments(make_log, clock, retention_ms=10)
    clock.set(10**9)
    log.delete_old_segments()
    base = log.segments[0].base_offset
    log.truncate_to(base - 1)
    assert [x.base_offset for x in log.segments] == [base - 1]
    assert (log.log_start_offset, log.log_end_offset) == (base - 1, base - 1)


# --- close, reopen, recovery (§7.5) ---------------------------------------------------------------
def test_clean_reopen_skips_recovery_and_reloads_state(make_log, clock, tmp_path):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=3 * s, segment_index_bytes=120, index_interval_bytes=0)
    log = make_log(cfg)
    for off, ts in enumerate([10, 30, 20, 40, 50]):
        raft(log, one(off, ts))
    log.close()
    # LogManager.shutdown's marker (CleanShutdownFileHandler) and checkpoint, in the log directory; the lock gone
    assert (tmp_path / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":-1}'
    assert not (tmp_path / ".lock").exists() and not (tmp_path / "t-0" / ".kafka_cleanshutdown").exists()
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 5\n"
    # close appended the final time entry of the active segment and trimmed its indexes
    assert (tmp_path / "t-0" / "00000000000000000003.timeindex").stat().st_size == 12
    again = Log.open(tmp_path / "t-0", cfg, clock)
    assert again.events[0]["clean_shutdown"] is True and again.events[0]["recovered"] == []
    assert not (tmp_path / ".kafka_cleanshutdown").exists()  # LogManager.loadLogs deletes it once seen
    assert (again.log_end_offset, again.recovery_point) == (5, 5)
    active = again.active_segment
    assert active.offset_index.length == 120 and active.time_index.length == 120  # resized for appends
    assert active.read_max_timestamp_and_offset_so_far() == TimestampOffset(50, 4)
    assert active.rolling_based_timestamp is None and active.get_first_batch_timestamp() == 40
    assert again.segments[0].time_index.all_entries() == [TimestampOffset(30, 1)]
    again.close()


def test_unclean_reopen_recovers_from_the_segment_holding_the_recovery_point(make_log, clock, tmp_path):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s)
    log = make_log(cfg)
    for off in range(5):
        raft(log, one(off, 100 + off))
    assert log.recovery_point == 4  # flushed up to the last roll
    log.crash()
    d = tmp_path / "t-0"
    # damage an old segment (below the recovery point) and the active one
    seg0 = d / "00000000000000000000.log"
    raw = bytearray(seg0.read_bytes())
    raw[-1] ^= 0xFF
    seg0.write_bytes(bytes(raw))
    (d / "00000000000000000004.log").write_bytes((d / "00000000000000000004.log").read_bytes()[:-3])
    again = Log.open(d, cfg, clock, clean_shutdown=False)
    assert [r["base_offset"] for r in again.events[0]["recovered"]] == [4]  # only from floor(recovery point)
    assert again.events[0]["recovered"][0]["truncated_bytes"] == s - 3
    assert again.log_end_offset == 4
    assert seg0.stat().st_size == 2 * s  # the damaged old segment was not looked at
    again.close()


def test_corruption_deletes_all_later_segments(make_log, clock, tmp_path):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s)
    log = make_log(cfg)
    for off in range(6):
        raft(log, one(off, 100 + off))
    log.crash()
    d = tmp_path / "t-0"
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\nt 0 0\n")
    seg2 = d / "00000000000000000002.log"
    raw = bytearray(seg2.read_bytes())
    raw[s + 30] ^= 1  # inside the CRC-covered part of the second batch of segment 2
    seg2.write_bytes(bytes(raw))
    again = Log.open(d, cfg, clock, clean_shutdown=False)
    assert [x.base_offset for x in again.segments] == [0, 2] and again.log_end_offset == 3
    assert not (d / "00000000000000000004.log").exists()
    again.close()


def test_missing_offset_index_is_rebuilt_even_after_clean_shutdown(make_log, clock, tmp_path):
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s, index_interval_bytes=0)
    log = make_log(cfg)
    for off in range(4):
        raft(log, one(off, 100 + off))
    log.close()
    d = tmp_path / "t-0"
    (d / "00000000000000000000.index").unlink()
    (d / "00000000000000000000.timeindex").unlink()
    again = Log.open(d, cfg, clock)
    assert again.events[0]["recovered"] == [{"base_offset": 0, "truncated_bytes": 0, "why": "missing .index"}]
    assert again.segments[0].offset_index.all_entries() == [OffsetPosition(1, s)]
    assert again.segments[0].time_index.all_entries() == [TimestampOffset(101, 1)]
    again.close()


def test_missing_time_index_below_recovery_point_is_left_empty(make_log, clock, tmp_path):
    """LogSegment.sanityCheck: a newly created time index is resized to 0; no recovery (KAFKA-7283)."""
    s = len(one(0, 0))
    cfg = LogConfig(segment_bytes=2 * s, index_interval_bytes=0)
    log = make_log(cfg)
    for off in range(4):
        raft(log, one(off, 100 + off))
    log.close()
    d = tmp_path / "t-0"
    (d / "00000000000000000000.timeindex").unlink()
    again = Log.open(d, cfg, clock)
    assert again.events[0]["recovered"] == []
    assert (d / "00000000000000000000.timeindex").stat().st_size == 0
    assert again.segments[0].max_timestamp_so_far == -1  # largest timestamp now falls back to the mtime
    again.close()


def test_log_end_below_log_start_checkpoint_deletes_everything(make_log, clock, tmp_path):
    log = make_log()
    for off in range(3):
        raft(log, one(off, 1))
    log.close()
    d = tmp_path / "t-0"
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\nt 0 50\n")
    again = Log.open(d, log.config, clock)
    assert [x.base_offset for x in again.segments] == [50]
    assert (again.log_start_offset, again.log_end_offset) == (50, 50)
    again.close()


def test_leader_epoch_checkpoint(make_log, clock, tmp_path):
    log = make_log()
    raft(log, one(0, 1))
    log.leader_epoch = 3
    log.append_as_leader(one(1, 1, ple=3), origin="RAFT_LEADER")
    assert (tmp_path / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n3 1\n"
    log.truncate_to(1)
    assert (tmp_path / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    log.append_as_follower(batch(1, [(1, b"k", b"v")], magic=1))  # an old format clears the cache
    assert log.epoch_entries() == []
