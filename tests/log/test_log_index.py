"""OffsetIndex / TimeIndex rules (kafka-rules §6.1-§6.4; AbstractIndex, OffsetIndex, TimeIndex).

Every expected value is derived from the rule cited next to it, not from kafkafmt's output.
"""
from __future__ import annotations

import pytest

from kafkafmt.errors import (
    CorruptIndexError,
    IllegalArgumentError,
    IllegalStateError,
    IndexFullError,
    IndexOffsetOverflowError,
    InvalidOffsetError,
)
from kafkafmt.layout import OFFSET_INDEX_ENTRY, TIME_INDEX_ENTRY
from kafkafmt.log.index import OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset


@pytest.fixture(params=["file", "memory"])
def where(request, tmp_path):
    """Each test runs on a file-backed index and on an in-memory one (the sans-I/O core)."""
    return None if request.param == "memory" else tmp_path


def _oi(where, base=0, size=100, name="00000000000000000000.index"):
    return OffsetIndex(None if where is None else where / name, base, size)


def _ti(where, base=0, size=100, name="00000000000000000000.timeindex"):
    return TimeIndex(None if where is None else where / name, base, size)


# --- creation (§6.2) ------------------------------------------------------------------------------
@pytest.mark.parametrize("max_size, length", [(100, 96), (8, 8), (15, 8), (10 * 1024 * 1024, 10 * 1024 * 1024)])
def test_new_offset_index_is_preallocated_to_whole_entries(where, max_size, length):
    idx = _oi(where, size=max_size)
    assert (idx.length, idx.entries, idx.max_entries) == (length, 0, length // 8)
    if where is not None:
        data = (where / "00000000000000000000.index").read_bytes()
        assert data == bytes(length)  # setLength zero-fills


@pytest.mark.parametrize("max_size, length", [(100, 96), (12, 12), (10 * 1024 * 1024, 10485756)])
def test_new_time_index_is_preallocated_to_whole_entries(where, max_size, length):
    # 10 MiB → 873,813 time entries (kafka-rules §7.2)
    idx = _ti(where, size=max_size)
    assert (idx.length, idx.entries, idx.max_entries) == (length, 0, length // 12)
    if max_size == 10 * 1024 * 1024:
        assert idx.max_entries == 873813


@pytest.mark.parametrize("cls, size", [(OffsetIndex, 7), (TimeIndex, 11), (TimeIndex, 8)])
def test_max_index_size_below_one_entry_is_rejected(tmp_path, cls, size):
    with pytest.raises(IllegalArgumentError, match=f"Invalid max index size: {size}"):
        cls(tmp_path / "00000000000000000000.x", 0, size)
    with pytest.raises(IllegalArgumentError):
        cls(None, 0, size)


def test_existing_file_counts_every_slot_including_zero_filled_ones(tmp_path):
    # createMappedBuffer: an existing index is assumed full; entries = len / entrySize
    p = tmp_path / "00000000000000000010.index"
    p.write_bytes(OFFSET_INDEX_ENTRY.pack(3, 77) + bytes(8 * 4) + b"\x00\x00")  # 1 entry + 4 zero slots + 2 bytes
    idx = OffsetIndex(p, 10, 1000)
    assert idx.entries == 5 and idx.max_entries == 5 and idx.length == 42
    assert idx.last_offset == 10  # the last (zero) slot = relative offset 0
    assert idx.is_full()
    t = tmp_path / "00000000000000000010.timeindex"
    t.write_bytes(bytes(36))
    ti = TimeIndex(t, 10, 1000)
    assert ti.entries == 3 and ti.last_entry == TimestampOffset(0, 10)


def test_in_memory_index_with_existing_content_behaves_like_an_existing_file():
    data = OFFSET_INDEX_ENTRY.pack(1, 10) + OFFSET_INDEX_ENTRY.pack(4, 50)
    idx = OffsetIndex(None, 100, 1000, data=data)
    assert idx.entries == 2 and idx.last_offset == 104
    assert idx.lookup(103) == OffsetPosition(101, 10)


# --- size changes (§6.2) --------------------------------------------------------------------------
def test_trim_resize_and_reset(where):
    idx = _oi(where)
    for off, pos in [(1, 10), (2, 20), (5, 30)]:
        idx.append(off, pos)
    idx.trim_to_valid_size()
    assert (idx.length, idx.max_entries, idx.entries) == (24, 3, 3)
    assert idx.is_full()
    if where is not None:
        assert (where / "00000000000000000000.index").stat().st_size == 24
    assert idx.resize(100) is True and idx.length == 96 and idx.entries == 3
    assert idx.resize(99) is False  # rounds down to 96: unchanged
    assert idx.lookup(4) == OffsetPosition(2, 20)
    idx.reset()
    assert (idx.entries, idx.length) == (0, 96)
    assert idx.lookup(4) == OffsetPosition(0, 0)


def test_reopen_after_trim_sees_exactly_the_entries(tmp_path):
    idx = OffsetIndex(tmp_path / "00000000000000000000.index", 0, 800)
    for i in range(1, 6):
        idx.append(i, i * 100)
    idx.close()  # close = trimToValidSize
    again = OffsetIndex(tmp_path / "00000000000000000000.index", 0, 800)
    assert again.entries == 5 and again.length == 40 and again.last_offset == 5
    assert again.all_entries() == [OffsetPosition(i, i * 100) for i in range(1, 6)]


def test_entries_are_written_in_place_with_the_layout(tmp_path):
    p = tmp_path / "00000000000000000100.index"
    idx = OffsetIndex(p, 100, 80)
    idx.append(105, 1234)
    idx.append(110, 5678)
    raw = p.read_bytes()
    assert len(raw) == 80  # still preallocated
    assert raw[:16] == OFFSET_INDEX_ENTRY.pack(5, 1234) + OFFSET_INDEX_ENTRY.pack(10, 5678)
    assert raw == idx.to_bytes()
    tp = tmp_path / "00000000000000000100.timeindex"
    ti = TimeIndex(tp, 100, 36)
    ti.maybe_append(1000, 105)
    assert tp.read_bytes()[:12] == TIME_INDEX_ENTRY.pack(1000, 5)


# --- OffsetIndex (§6.3) ---------------------------------------------------------------------------
def test_offset_index_append_rules(where):
    idx = _oi(where, base=50, size=24)
    idx.append(55, 900)
    with pytest.raises(InvalidOffsetError, match="no larger than the last offset appended"):
        idx.append(55, 1000)
    with pytest.raises(InvalidOffsetError):
        idx.append(54, 1000)
    idx.append(56, 10)  # the position is not checked
    idx.append(60, 5)
    with pytest.raises(IndexFullError, match=r"Attempt to append to a full index \(size = 3\)\."):
        idx.append(61, 1)


def test_offset_index_relative_offset_must_fit_31_bits(where):
    idx = _oi(where, base=10)
    with pytest.raises(IndexOffsetOverflowError, match="Integer overflow for offset"):
        idx.append(10 + 2**31, 0)
    assert idx.can_append_offset(10 + 2**31 - 1) and not idx.can_append_offset(9)


def test_offset_index_lookup_is_largest_lower_bound(where):
    idx = _oi(where, base=100)
    assert idx.lookup(5000) == OffsetPosition(100, 0)  # empty → (baseOffset, 0)
    for off, pos in [(103, 30), (107, 70), (110, 100)]:
        idx.append(off, pos)
    assert idx.lookup(99) == OffsetPosition(100, 0)
    assert idx.lookup(102) == OffsetPosition(100, 0)
    assert idx.lookup(103) == OffsetPosition(103, 30)
    assert idx.lookup(109) == OffsetPosition(107, 70)
    assert idx.lookup(10**9) == OffsetPosition(110, 100)


@pytest.mark.parametrize("target, remaining", [
    (107, [103]),            # an entry for exactly the target offset is removed too
    (108, [103, 107]),       # otherwise keep the largest entry below it
    (103, []),
    (50, []),                # nothing <= target: everything goes
    (500, [103, 107, 110]),  # beyond the last entry: no change
])
def test_offset_index_truncate_to(where, target, remaining):
    idx = _oi(where, base=100)
    for off, pos in [(103, 30), (107, 70), (110, 100)]:
        idx.append(off, pos)
    idx.truncate_to(target)
    assert [e.offset for e in idx] == remaining
    assert idx.last_offset == (remaining[-1] if remaining else 100)


def test_fetch_upper_bound_offset(where):
    idx = _oi(where)
    for off, pos in [(3, 100), (7, 200), (9, 300)]:
        idx.append(off, pos)
    # smallest entry whose position >= start position + size
    assert idx.fetch_upper_bound_offset(OffsetPosition(0, 0), 150) == OffsetPosition(7, 200)
    assert idx.fetch_upper_bound_offset(OffsetPosition(0, 0), 200) == OffsetPosition(7, 200)
    assert idx.fetch_upper_bound_offset(OffsetPosition(0, 50), 10) == OffsetPosition(3, 100)
    assert idx.fetch_upper_bound_offset(OffsetPosition(0, 250), 100) is None


def test_offset_index_sanity_check(tmp_path):
    ok = OffsetIndex(tmp_path / "00000000000000000020.index", 20, 64)
    ok.append(20, 0)  # lastOffset == baseOffset passes (OffsetIndexTest.testSanityLastOffsetEqualToBaseOffset)
    ok.sanity_check()
    bad = tmp_path / "00000000000000000020.bad.index"
    bad.write_bytes(OFFSET_INDEX_ENTRY.pack(-5, 0))  # last offset 15 < base 20
    with pytest.raises(CorruptIndexError, match="last offset is 15 which is less than the base offset 20"):
        OffsetIndex(bad, 20, 64).sanity_check()
    odd = tmp_path / "00000000000000000000.odd.index"
    odd.write_bytes(bytes(10))
    with pytest.raises(CorruptIndexError, match="found 10 bytes which is neither positive nor a multiple of 8"):
        OffsetIndex(odd, 0, 64).sanity_check()


def test_lookup_uses_kafkas_search_on_a_zero_tailed_index():
    # a crashed active index: 2 real entries, then zero slots that count as entries (offset = base).
    # indexSlotRangeFor: entries <= 1025, so the "warm" section starts at slot 0; entry 0 < target, so a
    # binary search over [0, 3]: mid 2 (base < 109) → lo 2, mid 3 (base < 109) → lo 3 → slot 3 = (base, 0).
    data = OFFSET_INDEX_ENTRY.pack(5, 100) + OFFSET_INDEX_ENTRY.pack(9, 200) + bytes(16)
    idx = OffsetIndex(None, 100, -1, data=data)
    assert idx.lookup(109) == OffsetPosition(100, 0)
    assert idx.lookup(104) == OffsetPosition(100, 0)  # entry 0 (105) > 104: no lower bound → (base, 0)


def test_warm_section_search_equals_plain_search_on_sorted_entries():
    idx = OffsetIndex(None, 0, 8 * 3000)
    for i in range(2500):  # more than the 1024 warm entries
        idx.append(3 * i + 1, 10 * i)
    for target in [0, 1, 2, 4, 3000, 3 * 1475, 3 * 1476 + 2, 7499, 7500, 10**6]:
        expected = max((e for e in ((3 * i + 1, 10 * i) for i in range(2500)) if e[0] <= target), default=(0, 0))
        assert idx.lookup(target) == OffsetPosition(*expected)


# --- TimeIndex (§6.4) -----------------------------------------------------------------------------
def test_time_index_appends_only_strictly_increasing_timestamps(where):
    ti = _ti(where, base=10, size=120)
    assert ti.lookup(5) == TimestampOffset(-1, 10)  # empty → (-1, baseOffset)
    assert ti.maybe_append(-1, 10) is False  # -1 is never indexed (empty last entry is (-1, base))
    assert ti.maybe_append(100, 12) is True
    assert ti.maybe_append(100, 14) is False  # equal timestamp: ignored
    with pytest.raises(IllegalStateError, match="no larger than the last timestamp appended"):
        ti.maybe_append(99, 15)
    with pytest.raises(InvalidOffsetError, match="no larger than the last offset appended"):
        ti.maybe_append(200, 11)
    assert ti.maybe_append(200, 12) is True  # same offset, larger timestamp: allowed
    assert ti.all_entries() == [TimestampOffset(100, 12), TimestampOffset(200, 12)]
    assert ti.lookup(150) == TimestampOffset(100, 12) and ti.lookup(99) == TimestampOffset(-1, 10)


def test_time_index_is_full_one_slot_early(where):
    ti = _ti(where, size=60)  # 5 slots
    for i in range(4):
        ti.maybe_append(100 + i, i)
    assert ti.entries == 4 and ti.max_entries == 5 and ti.is_full()  # entries >= maxEntries - 1
    with pytest.raises(IndexFullError, match=r"Attempt to append to a full time index \(size = 4\)\."):
        ti.maybe_append(200, 10)
    assert ti.maybe_append(200, 10, skip_full_check=True)  # the roll/close entry takes the last slot
    oi = _oi(where, size=40)
    for i in range(4):
        oi.append(i, i)
    assert not oi.is_full()  # the offset index is full only at maxEntries


def test_time_index_truncate_to_searches_the_offset_field(where):
    ti = _ti(where)
    for ts, off in [(10, 3), (20, 6), (30, 9)]:
        ti.maybe_append(ts, off)
    ti.truncate_to(6)
    assert ti.all_entries() == [TimestampOffset(10, 3)] and ti.last_entry == TimestampOffset(10, 3)
    ti.truncate_to(0)
    assert ti.entries == 0 and ti.last_entry == TimestampOffset(-1, 0)


def test_time_index_sanity_check(tmp_path):
    p = tmp_path / "00000000000000000000.timeindex"
    p.write_bytes(TIME_INDEX_ENTRY.pack(500, 1) + TIME_INDEX_ENTRY.pack(400, 2))
    with pytest.raises(CorruptIndexError, match="last timestamp is 400 which is less than the first timestamp 500"):
        TimeIndex(p, 0, 120).sanity_check()
    p2 = tmp_path / "00000000000000000009.timeindex"
    p2.write_bytes(TIME_INDEX_ENTRY.pack(1, -1))
    with pytest.raises(CorruptIndexError, match="last offset is 8 which is less than the first offset 9"):
        TimeIndex(p2, 9, 120).sanity_check()
    p3 = tmp_path / "00000000000000000001.timeindex"
    p3.write_bytes(bytes(13))
    with pytest.raises(CorruptIndexError, match="found 13 bytes which is neither positive nor a multiple of 12"):
        TimeIndex(p3, 1, 120).sanity_check()


def test_time_index_resize_rereads_the_last_entry(where):
    ti = _ti(where)
    ti.maybe_append(10, 1)
    ti.maybe_append(20, 2)
    ti.truncate_to(2)
    ti.trim_to_valid_size()
    assert ti.length == 12 and ti.last_entry == TimestampOffset(10, 1)
    ti.resize(0 + 12 * 5)
    assert ti.last_entry == TimestampOffset(10, 1) and ti.max_entries == 5
