"""LogSegment rules: appends and indexing (kafka-rules §6.5), rolling (§7.3), reads (§7.7), lookups (§6.6),
recovery (§7.5), truncation (§7.6), and file handling.  Several cases restate Kafka's own
LogSegmentTest expectations (named in the test docstrings)."""
from __future__ import annotations

import random

import pytest

from kafkafmt.errors import LogSegmentOffsetOverflowError
from kafkafmt.log import LogConfig, LogSegment, RollParams
from kafkafmt.log.files import DELETED_FILE_SUFFIX
from kafkafmt.log.index import OffsetPosition, TimestampOffset
from kafkafmt.log.segment import LogOffsetMetadata
from kafkafmt.records import MemoryRecords
from log_helpers import batch, one

INT_MAX = 2**31 - 1


def seg_at(tmp_path, clock, base=0, *, granularity="batch", **cfg):
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = LogConfig(**{"segment_index_bytes": 1000, "index_interval_bytes": 10, **cfg})
    return LogSegment.open(tmp_path, base, config, clock, index_granularity=granularity)


def append_batches(seg, data: bytes, largest_ts=None, shallow=None):
    bs = list(MemoryRecords(data).batches())
    last = bs[-1].last_offset
    mts = max(b.max_timestamp for b in bs) if largest_ts is None else largest_ts
    if shallow is None:
        shallow = next(b.last_offset for b in bs if b.max_timestamp == mts) if largest_ts is None else last
    seg.append(last, mts, shallow, data)


# --- the index.interval.bytes rule (§6.5) -----------------------------------------------------------
@pytest.mark.parametrize("granularity", ["batch", "append"])
@pytest.mark.parametrize("interval_delta, expected_slots", [
    (0, [2, 4]),            # interval = S: the test "bytes > interval" passes only once 2S have accumulated
    (-1, [1, 2, 3, 4, 5]),  # interval = S - 1: every append but the first
])
def test_interval_rule_is_tested_before_counting_the_append(tmp_path, clock, granularity, interval_delta,
                                                             expected_slots):
    size = len(one(0, 1000))
    seg = seg_at(tmp_path, clock, index_interval_bytes=size + interval_delta, granularity=granularity)
    for off in range(6):
        append_batches(seg, one(off, 1000 + off))
    # key = the LAST offset of the append, value = the START position of the append
    assert seg.offset_index.all_entries() == [OffsetPosition(k, k * size) for k in expected_slots]
    assert seg.time_index.all_entries() == [TimestampOffset(1000 + k, k) for k in expected_slots]


@pytest.mark.parametrize("granularity", ["batch", "append"])
def test_first_append_is_never_indexed_even_with_interval_zero(tmp_path, clock, granularity):
    seg = seg_at(tmp_path, clock, index_interval_bytes=0, granularity=granularity)
    append_batches(seg, batch(0, [(5, b"a", b"1"), (6, b"b", b"2"), (7, b"c", b"3")]))
    assert seg.offset_index.entries == 0 and seg.time_index.entries == 0
    first = len(batch(0, [(5, b"a", b"1"), (6, b"b", b"2"), (7, b"c", b"3")]))
    append_batches(seg, batch(3, [(8, b"d", b"4"), (9, b"e", b"5")]))
    assert seg.offset_index.all_entries() == [OffsetPosition(4, first)]  # last offset 4 of the append → its start
    assert seg.time_index.all_entries() == [TimestampOffset(9, 4)]


def test_multi_batch_append_per_append_vs_per_batch(tmp_path, clock):
    """KAFKA-806 (Kafka 3.9.1+): the rule is applied per batch; before, once per append."""
    b1, b2, b3 = one(0, 100), one(1, 300), one(2, 200)
    data = b1 + b2 + b3
    old = seg_at(tmp_path / "a", clock, index_interval_bytes=0, granularity="append")
    new = seg_at(tmp_path / "b", clock, index_interval_bytes=0, granularity="batch")
    append_batches(old, data)
    append_batches(new, data)
    # per append: the first append is not indexed at all
    assert old.offset_index.entries == 0
    # per batch: batch 1 is not indexed (0 bytes before it), batches 2 and 3 are
    assert new.offset_index.all_entries() == [OffsetPosition(1, len(b1)), OffsetPosition(2, len(b1) + len(b2))]
    # the time index holds (max so far, offset of the batch holding it)
    assert new.time_index.all_entries() == [TimestampOffset(300, 1)]  # 300 again at batch 3: not strictly greater
    # a second multi-batch append: per append → one entry, key = last offset, value = start of the append
    more = one(3, 400) + one(4, 500)
    append_batches(old, more)
    assert old.offset_index.all_entries() == [OffsetPosition(4, len(data))]
    assert old.time_index.all_entries() == [TimestampOffset(500, 4)]


def test_rolling_timestamp_per_append_vs_per_batch(tmp_path, clock):
    """Kafka ≤ 3.9.0: the largest timestamp of the first append; 3.9.1+: the first batch's maxTimestamp."""
    data = one(0, 100) + one(1, 900)
    old = seg_at(tmp_path / "a", clock, granularity="append")
    new = seg_at(tmp_path / "b", clock, granularity="batch")
    append_batches(old, data)
    append_batches(new, data)
    assert old.get_first_batch_timestamp() == 900
    assert new.get_first_batch_timestamp() == 100
    # LogSegmentTest.testGetFirstBatchTimestamp: a batch without timestamps appended with largestTimestamp 1000
    s1 = seg_at(tmp_path / "c", clock, 1, granularity="append")
    s2 = seg_at(tmp_path / "d", clock, 1, granularity="batch")
    for s in (s1, s2):
        assert s.get_first_batch_timestamp() == 2**63 - 1
        s.append(1, 1000, 1, batch(1, [(-1, None, b"one")]))
    assert s1.get_first_batch_timestamp() == 1000
    assert s2.get_first_batch_timestamp() == 2**63 - 1


def test_time_index_only_grows_with_the_max_timestamp(tmp_path, clock):
    seg = seg_at(tmp_path, clock, index_interval_bytes=0)
    for off, ts in enumerate([100, 500, 300, 200, 700, 600]):
        append_batches(seg, one(off, ts))
    # entries at offsets 1..5 with the running max: 500@1, (500), (500), 700@4, (700)
    assert seg.time_index.all_entries() == [TimestampOffset(500, 1), TimestampOffset(700, 4)]
    assert seg.read_max_timestamp_and_offset_so_far() == TimestampOffset(700, 4)


def test_offset_overflow_on_append(tmp_path, clock):
    """LogSegmentTest.testAppendForLogSegmentOffsetOverflowException."""
    seg = seg_at(tmp_path, clock, 100)
    with pytest.raises(LogSegmentOffsetOverflowError, match="Detected offset overflow at offset"):
        seg.append(100 + INT_MAX + 1, 1, 100, one(100 + INT_MAX + 1, 1))
    with pytest.raises(LogSegmentOffsetOverflowError):
        seg.append(99, 1, 99, one(99, 1))
    assert seg.size == 0


# --- becoming inactive, closing, preallocation (§6.2, §7.2) ----------------------------------------
def test_on_become_inactive_writes_final_time_entry_and_trims(tmp_path, clock):
    size = len(one(0, 0))
    seg = seg_at(tmp_path, clock, index_interval_bytes=size, segment_index_bytes=120)
    for off, ts in enumerate([10, 20, 30, 40]):
        append_batches(seg, one(off, ts))
    assert seg.time_index.all_entries() == [TimestampOffset(30, 2)]  # indexed at append 3 only
    assert seg.offset_index.length == 120 and seg.time_index.length == 120
    seg.on_become_inactive()
    assert seg.time_index.all_entries() == [TimestampOffset(30, 2), TimestampOffset(40, 3)]
    assert (tmp_path / "00000000000000000000.index").stat().st_size == 8
    assert (tmp_path / "00000000000000000000.timeindex").stat().st_size == 24


def test_final_time_entry_is_written_into_a_full_index(tmp_path, clock):
    # time index of 2 slots: full at 1 entry; the roll entry may still take the reserved slot
    seg = seg_at(tmp_path, clock, index_interval_bytes=0, segment_index_bytes=24)
    append_batches(seg, one(0, 10))
    append_batches(seg, one(1, 20))
    assert seg.time_index.all_entries() == [TimestampOffset(20, 1)] and seg.time_index.is_full()
    seg._max_ts_and_offset = TimestampOffset(30, 2)  # as if offset 2 (ts 30) had been appended unindexed
    seg.on_become_inactive()
    assert seg.time_index.all_entries() == [TimestampOffset(20, 1), TimestampOffset(30, 2)]


def test_preallocated_log_is_trimmed_on_close_and_reopened_at_its_size(tmp_path, clock):
    """LogSegmentTest.testCreateWithInitFileSizeClearShutdown."""
    config = LogConfig(index_interval_bytes=10, segment_index_bytes=1000, preallocate=True)
    seg = LogSegment.open(tmp_path, 40, config, clock, init_file_size=512 * 1024, preallocate=True)
    ms, ms2 = batch(50, [(1, None, b"hello"), (2, None, b"there")]), batch(60, [(3, None, b"alpha"), (4, None, b"beta")])
    seg.append(51, 2, 51, ms)
    seg.append(61, 4, 61, ms2)
    log_path = tmp_path / "00000000000000000040.log"
    assert log_path.stat().st_size == 512 * 1024 and seg.size == len(ms) + len(ms2)
    assert seg.read(55, 200).records == ms2
    seg.close()
    assert log_path.stat().st_size == len(ms) + len(ms2)
    again = LogSegment.open(tmp_path, 40, config, clock, file_already_exists=True, init_file_size=512 * 1024,
                            preallocate=True)
    assert again.size == len(ms) + len(ms2) and again.read(55, 200).records == ms2


def test_index_files_are_created_lazily_and_renamed_with_the_segment(tmp_path, clock):
    """LogSegmentTest.testChangeFileSuffixes."""
    seg = seg_at(tmp_path, clock, 40)
    idx, tidx = tmp_path / "00000000000000000040.index", tmp_path / "00000000000000000040.timeindex"
    assert not idx.exists() and not tidx.exists()
    seg.change_file_suffixes("", DELETED_FILE_SUFFIX)
    assert not idx.exists() and not tidx.exists()
    assert seg.log_file.name == "00000000000000000040.log.deleted" and seg.log_file.exists()
    assert seg.offset_index_file.name == "00000000000000000040.index.deleted"
    seg.offset_index  # noqa: B018 -- opening it creates it
    seg.time_index  # noqa: B018
    assert seg.offset_index_file.exists() and seg.time_index_file.exists()
    assert seg.has_suffix(DELETED_FILE_SUFFIX)
    seg.delete_if_exists()
    assert seg.deleted()


# --- rolling (§7.3) -------------------------------------------------------------------------------
def _params(max_ts, now, *, segment_ms=100, segment_bytes=10**6, size=50, last_offset=10):
    return RollParams(segment_ms, segment_bytes, max_ts, last_offset, size, now)


def test_time_roll_uses_message_time_of_the_first_batch(tmp_path, clock):
    seg = seg_at(tmp_path, clock)
    assert not seg.should_roll(_params(10**12, clock.now() + 10**9))  # an empty segment never rolls on time
    append_batches(seg, one(0, 1000))
    append_batches(seg, one(1, 5000))  # later timestamps do not move the rolling timestamp
    assert not seg.should_roll(_params(1100, 0))  # 1100 - 1000 = 100, not > 100
    assert seg.roll_reasons(_params(1101, 0)) == ["segment.ms"]
    assert not seg.should_roll(_params(900, 10**15))  # message time, not the wall clock


def test_time_roll_falls_back_to_wall_clock_without_timestamps(tmp_path, clock):
    seg = seg_at(tmp_path, clock)
    created = clock.now()
    append_batches(seg, batch(0, [(-1, b"k", b"v")]))  # maxTimestamp -1
    assert not seg.should_roll(_params(10**12, created + 100))
    assert seg.should_roll(_params(-1, created + 101))


def test_roll_jitter_is_subtracted_from_segment_ms(tmp_path, clock):
    config = LogConfig(segment_index_bytes=1000, index_interval_bytes=10, segment_ms=100, segment_jitter_ms=1000)
    rng = random.Random(7)
    seg = LogSegment.open(tmp_path, 0, config, clock, rng=rng)
    # randomSegmentJitter: abs(nextInt) % min(segment.jitter.ms, segment.ms), one draw per segment
    n = random.Random(7).getrandbits(32)
    n = n - 2**32 if n >= 2**31 else n
    assert seg.roll_jitter_ms == abs(n) % 100
    append_batches(seg, one(0, 1000))
    j = seg.roll_jitter_ms
    assert not seg.should_roll(_params(1000 + 100 - j, 0))
    assert seg.should_roll(_params(1000 + 100 - j + 1, 0))


def test_jitter_of_integer_min_value_is_zero():
    class FakeRng:
        def getrandbits(self, k):
            return 2**31  # = Integer.MIN_VALUE as a signed int; Utils.abs maps it to 0

    assert LogConfig(segment_jitter_ms=50, segment_ms=100).random_segment_jitter(FakeRng()) == 0
    assert LogConfig(segment_jitter_ms=0).random_segment_jitter(FakeRng()) == 0


def test_size_roll_boundary(tmp_path, clock):
    seg = seg_at(tmp_path, clock)
    append_batches(seg, one(0, 1))
    s = seg.size
    assert not seg.should_roll(_params(1, 0, segment_bytes=s + 50, size=50))  # size + incoming == segment.bytes
    assert seg.roll_reasons(_params(1, 0, segment_bytes=s + 49, size=50)) == ["segment.bytes"]


def test_truncated_empty_segment_rolls_only_on_offset_overflow(tmp_path, clock):
    """LogSegmentTest.testTruncateEmptySegment (with a time index reopened at size 0)."""
    seg = seg_at(tmp_path, clock)
    seg.time_index  # noqa: B018
    seg.offset_index  # noqa: B018
    seg.close()
    reopened = seg_at(tmp_path, clock)
    assert reopened.time_index.size_in_bytes == 0 and reopened.offset_index.size_in_bytes == 0
    clock.advance(500)
    reopened.truncate_to(57)
    assert reopened.time_waited_for_roll(clock.now(), -1) == 0  # created reset by the truncation to empty
    assert not reopened.time_index.is_full() and not reopened.offset_index.is_full()
    assert not reopened.should_roll(RollParams(300000, INT_MAX, -1, 100, 1024, clock.now()))
    clock.advance(300001)
    assert reopened.time_waited_for_roll(clock.now(), -1) == 300001
    assert not reopened.should_roll(RollParams(300000, INT_MAX, -1, 100, 1024, clock.now()))
    assert reopened.should_roll(RollParams(300000, INT_MAX, -1, INT_MAX + 200, 1024, clock.now()))


# --- reads (§7.7) ---------------------------------------------------------------------------------
def test_reads_return_whole_batches(tmp_path, clock):
    """LogSegmentTest.testReadOnEmptySegment / BeforeFirstOffset / AfterLast / FromGap / WhenNoMaxPosition."""
    seg = seg_at(tmp_path, clock, 40)
    assert seg.read(40, 300) is None
    ms = batch(50, [(1, None, b"hello"), (2, None, b"there")])
    seg.append(51, 2, 51, ms)
    assert seg.read(41, 300).records == ms  # before the first offset: from the first batch
    assert seg.read(51, 300).records == ms  # inside a batch: the whole batch
    assert seg.read(52, 300) is None
    ms2 = batch(60, [(3, None, b"alpha"), (4, None, b"beta")])
    seg.append(61, 4, 61, ms2)
    assert seg.read(55, 200).records == ms2  # a gap: the next batch
    r = seg.read(48, 1, None, True)
    assert r.fetch_offset_metadata == LogOffsetMetadata(48, 40, 0) and r.records == b""
    r = seg.read(51, 1, None, False)
    assert r.fetch_offset_metadata == LogOffsetMetadata(51, 40, 0) and r.records == b""
    r = seg.read(60, 1, None, False)
    assert r.fetch_offset_metadata == LogOffsetMetadata(60, 40, len(ms)) and r.records == b""
    # maxSize below the first batch: min_one_message returns it whole, otherwise a partial slice
    r = seg.read(50, 10, min_one_message=True)
    assert r.records == ms and not r.first_entry_incomplete
    r = seg.read(50, 10)
    assert r.records == ms[:10] and r.first_entry_incomplete
    r = seg.read(50, 10**6, len(ms))  # maxPosition stops before the second batch
    assert r.records == ms


def test_find_offset_by_timestamp_mirrors_logsegmenttest(tmp_path, clock):
    """LogSegmentTest.testFindOffsetByTimestamp: v1 messages at offsets 40..49 with timestamps offset*10,
    indexInterval = 2*messageSize - 1."""
    msg_size = len(batch(0, [(0, None, b"msg00")], magic=1))
    seg = seg_at(tmp_path, clock, 40, index_interval_bytes=msg_size * 2 - 1)
    for i in range(40, 50):
        seg.append(i, i * 10, i, batch(i, [(i * 10, None, f"msg{i}".encode())], magic=1))
    assert seg.largest_timestamp() == 490
    assert seg.find_offset_by_timestamp(420, 0).offset == 42
    assert seg.find_offset_by_timestamp(421, 0).offset == 43
    assert seg.find_offset_by_timestamp(430, 0).offset == 43
    assert seg.find_offset_by_timestamp(431, 0).offset == 44
    assert seg.find_offset_by_timestamp(491, 0) is None
    assert seg.find_offset_by_timestamp(401, 0).offset == 41
    r = seg.find_offset_by_timestamp(399, 0)
    assert (r.offset, r.timestamp) == (40, 400)  # the real timestamp, not NoTimestamp
    assert seg.find_offset_by_timestamp(399, 45).offset == 45  # starting offset


def test_next_offset_calculation(tmp_path, clock):
    """LogSegmentTest.testNextOffsetCalculation."""
    seg = seg_at(tmp_path, clock, 40)
    assert seg.read_next_offset() == 40
    seg.append(52, -1, -1, batch(50, [(-1, None, b"hello"), (-1, None, b"there"), (-1, None, b"you")]))
    assert seg.read_next_offset() == 53


# --- truncation (§7.6) ----------------------------------------------------------------------------
def test_truncate_removes_the_whole_batch_containing_the_offset(tmp_path, clock):
    """LogSegmentTest.shouldTruncateEvenIfOffsetPointsToAGapInTheLog."""
    seg = seg_at(tmp_path, clock, 40)
    seg.append(40, 40000, 40, batch(40, [(40000, None, b"first message")]))
    seg.append(43, 43000, 43, batch(43, [(43000, None, b"message after gap")]))
    seg.truncate_to(41)
    batches = list(MemoryRecords(seg.read(40, 10000).records).batches())
    assert [b.base_offset for b in batches] == [40]
    multi = seg_at(tmp_path / "m", clock, 0)
    five = batch(0, [(i, None, b"x") for i in range(5)])
    multi.append(4, 4, 4, five)
    assert multi.truncate_to(2) == len(five)  # batches are never split: the whole batch 0..4 goes
    assert multi.size == 0 and multi.read_next_offset() == 0


def test_truncate_reloads_largest_timestamp_and_next_offset(tmp_path, clock):
    """LogSegmentTest.testReloadLargestTimestampAndNextOffsetAfterTruncation."""
    size = len(batch(0, [(0, None, b"hello")], magic=1))
    seg = seg_at(tmp_path, clock, 40, index_interval_bytes=2 * size - 1)
    for off in range(40, 70):
        seg.append(off, off, off, batch(off, [(off * 10, None, b"hello")], magic=1))
    assert seg.read_next_offset() == 70
    assert seg.time_index.entries == 30 // 2 - 1
    seg.truncate_to(41)
    assert seg.time_index.entries == 0
    assert seg.largest_timestamp() == 400
    assert seg.read_next_offset() == 41


def test_truncate_to_empty_resets_created_and_rolling_timestamp(tmp_path, clock):
    """LogSegmentTest.testTruncateFull (message-time variant)."""
    seg = seg_at(tmp_path, clock, 40)
    seg.append(41, 400, 41, batch(40, [(400, None, b"hello"), (400, None, b"there")]))
    assert seg.time_waited_for_roll(clock.now(), 1000) == 600  # message time since the first batch
    clock.advance(500)
    seg.truncate_to(0)
    assert seg.time_waited_for_roll(clock.now(), -1) == 0
    assert not seg.time_index.is_full() and not seg.offset_index.is_full()
    assert seg.read(0, 1024) is None
    seg.append(41, 400, 41, batch(40, [(400, None, b"hello"), (400, None, b"there")]))


# --- recovery (§7.5) ------------------------------------------------------------------------------
def test_recovery_fixes_a_corrupt_offset_index(tmp_path, clock):
    """LogSegmentTest.testRecoveryFixesCorruptIndex / CorruptTimeIndex."""
    seg = seg_at(tmp_path, clock, segment_index_bytes=10 * 1024)
    for i in range(100):
        seg.append(i, i * 10, i, batch(i, [(i * 10, None, str(i).encode())], magic=1))
    rng = random.Random(0)
    for p in (seg.offset_index_file, seg.time_index_file):
        raw = bytearray(p.read_bytes())
        for k in range(5, len(raw)):
            raw[k] = rng.randrange(255)
        p.write_bytes(bytes(raw))
    seg = seg_at(tmp_path, clock, segment_index_bytes=10 * 1024)  # reopen the corrupt files
    assert seg.recover() == 0
    for i in range(100):
        first = next(MemoryRecords(seg.read(i, 1, seg.size, True).records).records())
        assert first.offset == i
        assert seg.find_offset_by_timestamp(i * 10, 0).offset == i
        if i < 99:
            assert seg.find_offset_by_timestamp(i * 10 + 1, 0).offset == i + 1


def test_recovery_with_corrupt_message_truncates_from_it(tmp_path, clock):
    """LogSegmentTest.testRecoveryWithCorruptMessage (deterministic positions)."""
    rng = random.Random(1)
    for attempt in range(10):
        d = tmp_path / str(attempt)
        d.mkdir()
        seg = seg_at(d, clock)
        for i in range(20):
            seg.append(i, -1, -1, batch(i, [(-1, None, str(i).encode())], magic=1))
        start = rng.randrange(20)
        pos = seg.log.search_for_offset_with_size(start, 0).position + rng.randrange(15)
        raw = bytearray(seg.log_file.read_bytes())
        for k in range(pos, len(raw)):
            raw[k] = rng.randrange(255)
        seg.log_file.write_bytes(bytes(raw))
        seg = seg_at(d, clock)
        seg.recover()
        assert [b.last_offset for b in seg.log.batches()] == list(range(start))


def test_recover_rebuilds_indexes_per_batch(tmp_path, clock):
    """§6.5: recovery indexes a batch when batchStart - lastIndexedPosition > index.interval.bytes."""
    size = len(one(0, 0))
    seg = seg_at(tmp_path, clock, index_interval_bytes=size, granularity="append")
    append_batches(seg, one(0, 10) + one(1, 20) + one(2, 30))  # one append: not indexed
    append_batches(seg, one(3, 40) + one(4, 50))               # indexed at its start, key 4
    assert seg.offset_index.all_entries() == [OffsetPosition(4, 3 * size)]
    seg.recover()
    # per batch: positions 0 (no: 0 - 0), S (no: S > S false), 2S (yes), 3S (no), 4S (yes)
    assert seg.offset_index.all_entries() == [OffsetPosition(2, 2 * size), OffsetPosition(4, 4 * size)]
    assert seg.time_index.all_entries() == [TimestampOffset(30, 2), TimestampOffset(50, 4)]


def test_index_byte_counter_restarts_after_a_reopen_so_recovery_indexes_more(tmp_path, clock):
    """bytesSinceLastIndexEntry starts at 0 in every LogSegment instance: the first append after a reopen is
    not indexed, while recover() (positions since the last indexed batch) indexes it (§6.5, §7.5)."""
    size = len(one(0, 0))
    seg = seg_at(tmp_path, clock, index_interval_bytes=size - 1)
    append_batches(seg, one(0, 10))
    append_batches(seg, one(1, 20))
    assert [e.offset for e in seg.offset_index] == [1]
    seg.close()
    seg = LogSegment.open(tmp_path, 0, LogConfig(segment_index_bytes=1000, index_interval_bytes=size - 1), clock,
                          file_already_exists=True)
    seg.resize_indexes(1000)
    append_batches(seg, one(2, 30))
    assert [e.offset for e in seg.offset_index] == [1]  # not indexed: 0 bytes counted since the reopen
    seg.recover()
    assert seg.offset_index.all_entries() == [OffsetPosition(1, size), OffsetPosition(2, 2 * size)]
