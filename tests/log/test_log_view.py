"""The one read-only view of a partition (:mod:`kafkafmt.log.view`): the same lookups whether it is
read straight from the files (``PartitionView.open``, the Spark planner's), from a live log
(``Log.view()``) or from a read-only log (``Log.open(read_only=True)``), and it never writes."""
from __future__ import annotations

from pathlib import Path

import pytest

from kafkafmt.log import Log, LogConfig, LogSegment, PartitionView, SegmentReads, SegmentView, SimulatedClock
from kafkafmt.log.log import MAX_TIMESTAMP
from kafkafmt.log.readonly import file_states
from kafkafmt.log.view import OPENED, discover
from log_helpers import batch

T0 = 1_700_000_000_000


def _closed_log(root: Path, *, magic: int = 2) -> tuple[Path, list[int]]:
    """A cleanly closed partition of several segments, timestamps out of order (so the max timestamp
    is not the last record's), with sparse index entries."""
    d = root / "events-2"
    stamps = [T0 + (i * 37) % 11 * 1000 for i in range(30)]
    with Log(d, LogConfig(segment_bytes=600, index_interval_bytes=100, message_format_version="0.10.0"
                          if magic == 1 else "3.0"), SimulatedClock(T0)) as log:
        for i, ts in enumerate(stamps):
            log.append_as_leader(batch(0, [(ts, b"k%d" % i, b"v" * 30)], magic=magic))
        assert log.number_of_segments > 2
    return d, stamps


@pytest.mark.parametrize("magic", [1, 2])
def test_files_live_and_read_only_views_answer_alike(tmp_path, magic):
    d, stamps = _closed_log(tmp_path, magic=magic)
    before = file_states(d)
    files = PartitionView.open(d)
    assert all(isinstance(s, SegmentView) for s in files.segments)
    with Log.open(d, LogConfig(), SimulatedClock(T0 + 10**6), read_only=True) as ro:
        live = ro.view()
        assert all(isinstance(s, LogSegment) for s in live.segments)
        assert ro.source_view.path == files.path and len(ro.source_view.segments) == len(files.segments)
        for view in (files, ro.source_view):
            assert (view.topic, view.partition) == ("events", 2)
            assert view.log_start_offset == live.log_start_offset == ro.log_start_offset == 0
            assert view.log_end_offset() == live.log_end_offset() == ro.log_end_offset == len(stamps)
            assert [s.base_offset for s in view.segments] == [s.base_offset for s in live.segments]
            for mine, theirs in zip(view.segments, live.segments):
                assert mine.largest_timestamp() == theirs.largest_timestamp()
                assert mine.read_max_timestamp_and_offset_so_far() == theirs.read_max_timestamp_and_offset_so_far()
                assert mine.read_next_offset() == theirs.read_next_offset()
                assert mine.size == theirs.size
                for off in range(mine.base_offset, mine.read_next_offset() + 1):
                    assert mine.translate_offset(off) == theirs.translate_offset(off)
                assert [b.position for b in mine.batches()] == [b.position for b in theirs.batches()]
            for target in sorted(set(stamps)) + [T0 - 1, max(stamps) + 1]:
                expected = ro.fetch_offset_by_timestamp(target)
                assert view.search_offset_by_timestamp(target) == live.search_offset_by_timestamp(target) == expected
                if expected is not None:  # the first record at or after the target, as Kafka finds it
                    assert stamps[expected.offset] >= target
            assert view.max_timestamp_offset() == ro.fetch_offset_by_timestamp(MAX_TIMESTAMP)
            assert stamps[view.max_timestamp_offset().offset] == max(stamps)
    assert file_states(d) == before  # nothing written, renamed or touched


def test_a_v0_segment_has_no_timestamp_and_falls_back_to_the_file_time(tmp_path):
    d = tmp_path / "old-0"
    with Log(d, LogConfig(message_format_version="0.9.0"), SimulatedClock(T0)) as log:
        log.append_as_leader(batch(0, [(T0, b"k", b"v")], magic=0))
        mtime = log.segments[0].last_modified()
    seg = PartitionView.open(d).segments[0]
    assert seg.largest_record_timestamp() is None and seg.largest_timestamp() == mtime


def test_lookups_by_offset_read_indexes_only_and_open_no_log(tmp_path):
    d, _ = _closed_log(tmp_path)
    (view,) = discover([d])
    with OPENED.recording():
        for s in view.segments:
            assert s.start_position(s.base_offset) == 0
            assert s.end_position(10**9) == s.size
            bounds = s.batch_boundaries(0, s.size)
            assert bounds == sorted(bounds) and all(0 < b < s.size for b in bounds)
        assert OPENED.logs() == []
        view.log_end_offset()
        assert OPENED.logs() == [str(view.segments[-1].log_path)]


def test_the_live_log_and_the_view_share_one_implementation():
    for name in ("largest_timestamp", "translate_offset", "find_offset_by_timestamp", "read_next_offset",
                 "max_timestamp_offset", "batches", "start_position", "end_position"):
        assert getattr(LogSegment, name) is getattr(SegmentReads, name) is getattr(SegmentView, name)


def test_a_read_only_log_views_the_directory_as_it_is_and_as_recovery_leaves_it(tmp_path):
    """After a crash with a torn write: ``source_view`` reads the files as they are (the partial batch is
    still there, the walker stops before it), ``view()`` the recovered copy (cut at the last whole batch);
    both give the same offsets, and the directory is never written."""
    from test_log_readonly import T0 as RO_T0
    from test_log_readonly import _broker_like_dir
    d = _broker_like_dir(tmp_path / "src")
    before = file_states(d)
    with Log.open(d, LogConfig(segment_bytes=400), SimulatedClock(RO_T0 + 5), read_only=True) as ro:
        as_is, recovered = ro.source_view.segments[-1], ro.view().segments[-1]
        assert as_is.base_offset == recovered.base_offset
        assert as_is.size > recovered.size == ro.active_segment.size
        assert [c["change"] for c in ro.recovery_changes if c["file"] == as_is.log_path.name] == ["truncated"]
        assert as_is.read_next_offset() == recovered.read_next_offset() == ro.log_end_offset
        assert [b.position for b in as_is.batches()] == [b.position for b in recovered.batches()]
        for ts in (RO_T0, RO_T0 + 7, RO_T0 + 99):
            assert ro.source_view.search_offset_by_timestamp(ts) == ro.fetch_offset_by_timestamp(ts)
    assert file_states(d) == before
