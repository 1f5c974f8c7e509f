"""kafka-dump-log's output for .index and .timeindex files (DumpLogSegments.dumpIndex / dumpTimeIndex;
kafka-rules §8.2).  The same files are dumped by the real tool in test_log_vs_kafka.py."""
from __future__ import annotations

import os

import pytest

from kafkafmt.errors import CorruptIndexError, DumpToolError
from kafkafmt.layout import OFFSET_INDEX_ENTRY, TIME_INDEX_ENTRY
from kafkafmt.log import DumpErrors, Log, LogConfig, dump_index, dump_time_index
from log_helpers import one

T0 = 1_700_000_000_000


@pytest.fixture
def segment_files(tmp_path, clock):
    """One rolled segment (offsets 0-5) and an active one left preallocated by a crash."""
    s = len(one(0, 0))
    log = Log(tmp_path / "t-0", LogConfig(segment_bytes=6 * s, index_interval_bytes=s, segment_index_bytes=96),
              clock)
    for off, ts in enumerate([T0 + 5, T0 + 1, T0 + 9, T0 + 3, T0 + 20, T0 + 7, T0 + 30, T0 + 40, T0 + 50]):
        log.append_as_leader(one(off, ts), origin="RAFT_LEADER")
    log.crash()
    return tmp_path / "t-0", s


def test_dump_index_lines(segment_files):
    d, s = segment_files
    # §6.5 with interval = one batch: appends 3 and 5 (offsets 2, 4) are indexed at their start positions
    out, err = dump_index(d / "00000000000000000000.index")
    assert out == [f"offset: 2 position: {2 * s}", f"offset: 4 position: {4 * s}"] and err == []
    out, err = dump_time_index(d / "00000000000000000000.timeindex")
    # (max so far, its offset): 9@2 and 20@4, then the roll entry: the max is still 20 → nothing new
    assert out == [f"timestamp: {T0 + 9} offset: 2", f"timestamp: {T0 + 20} offset: 4"] and err == []


def test_zero_filled_tail_stops_the_dump(segment_files):
    d, s = segment_files
    # the crashed active index keeps its preallocated zero slots; every slot counts as an entry, and the
    # dump stops at the first one (after the first) whose offset equals the base offset
    assert (d / "00000000000000000006.index").stat().st_size == 96
    out, _ = dump_index(d / "00000000000000000006.index")
    assert out == [f"offset: 8 position: {2 * s}"]
    out, _ = dump_time_index(d / "00000000000000000006.timeindex")
    assert out == [f"timestamp: {T0 + 50} offset: 8"]


def test_empty_files_and_sanity_checks(segment_files, tmp_path):
    d, _ = segment_files
    (d / "00000000000000000099.log").write_bytes(b"")
    (d / "00000000000000000099.index").write_bytes(b"")
    (d / "00000000000000000099.timeindex").write_bytes(b"")
    p = str(d / "00000000000000000099.index")
    assert dump_index(p) == ([f"{p} is empty."], [])
    assert dump_index(p, sanity_check_only=True) == ([f"{p} is empty."], [])  # the empty check comes first
    tp = str(d / "00000000000000000099.timeindex")
    assert dump_time_index(tp) == ([], [])  # no "is empty" line for a time index
    assert dump_time_index(tp, sanity_check_only=True) == ([f"{tp} passed sanity check."], [])
    ok = str(d / "00000000000000000000.index")
    assert dump_index(ok, sanity_check_only=True) == ([f"{ok} passed sanity check."], [])
    with pytest.raises(CorruptIndexError, match="last timestamp is 0 which is less than the first timestamp"):
        dump_time_index(d / "00000000000000000006.timeindex", sanity_check_only=True)


def test_index_mismatches_are_reported_last_first(segment_files):
    d, s = segment_files
    p = d / "00000000000000000000.index"
    p.write_bytes(OFFSET_INDEX_ENTRY.pack(3, 2 * s) + OFFSET_INDEX_ENTRY.pack(5, 4 * s) + OFFSET_INDEX_ENTRY.pack(5, 5 * s))
    out, err = dump_index(p)
    assert out == [f"offset: 3 position: {2 * s}", f"offset: 5 position: {4 * s}", f"offset: 5 position: {5 * s}"]
    # Scala prepends to the list: the mismatches come out in reverse order
    assert err == [f"Mismatches in :{p}", "  Index offset: 5, log offset: 4", "  Index offset: 3, log offset: 2"]
    out, err2 = dump_index(p, verify_only=True)
    assert out == [] and err2 == err


def test_time_index_reports(segment_files):
    d, s = segment_files
    p = d / "00000000000000000000.timeindex"
    p.write_bytes(TIME_INDEX_ENTRY.pack(T0 + 9, 2) + TIME_INDEX_ENTRY.pack(T0 + 8, 4) + TIME_INDEX_ENTRY.pack(T0 + 99, 3)
                  + TIME_INDEX_ENTRY.pack(T0 + 100, 77))
    out, err = dump_time_index(p)
    assert out == [f"timestamp: {T0 + 9} offset: 2", f"timestamp: {T0 + 8} offset: 4",
                   f"timestamp: {T0 + 99} offset: 3", f"timestamp: {T0 + 100} offset: 77"]
    assert err == [f"Found timestamp mismatch in :{p}",
                   f"  Index timestamp: {T0 + 8}, log timestamp: {T0 + 20}",
                   f"  Index timestamp: {T0 + 99}, log timestamp: {T0 + 3}",
                   f"Found out of order timestamp in :{p}",
                   f"  Index timestamp: {T0 + 8}, Previously indexed timestamp: {T0 + 9}",
                   "The following indexed offsets are not found in the log.",
                   "Indexed offset: 77, found log offset: -1"]


def test_errors_across_files_come_at_the_end_in_kafkas_order(segment_files):
    d, s = segment_files
    ip, tp = d / "00000000000000000000.index", d / "00000000000000000000.timeindex"
    ip.write_bytes(OFFSET_INDEX_ENTRY.pack(3, 2 * s))
    tp.write_bytes(TIME_INDEX_ENTRY.pack(T0 + 1, 2))
    errors = DumpErrors()
    out_t, err_t = dump_time_index(tp, errors=errors)
    out_i, err_i = dump_index(ip, errors=errors)
    assert err_t == err_i == []  # deferred to the end of the run
    assert errors.render() == [f"Mismatches in :{ip}", "  Index offset: 3, log offset: 2",
                               f"Found timestamp mismatch in :{tp}", f"  Index timestamp: {T0 + 1}, log timestamp: {T0 + 9}"]


def test_paths_are_shown_as_given_and_absolute_in_reports(segment_files, monkeypatch):
    d, s = segment_files
    monkeypatch.chdir(d.parent)
    rel = "./t-0//00000000000000000000.index"
    (d / "00000000000000000000.index").write_bytes(OFFSET_INDEX_ENTRY.pack(3, 2 * s))
    out, err = dump_index(rel)
    # java.io.File collapses '//' but keeps './'; getAbsolutePath prefixes the working directory
    assert err[0] == f"Mismatches in :{os.getcwd()}/./t-0/00000000000000000000.index"
    (d / "00000000000000000007.index").write_bytes(b"")
    (d / "00000000000000000007.log").write_bytes(b"")
    assert dump_index("./t-0//00000000000000000007.index")[0] == ["./t-0/00000000000000000007.index is empty."]


def test_the_tool_dies_without_its_log_file(tmp_path):
    (tmp_path / "00000000000000000000.index").write_bytes(bytes(8))
    with pytest.raises(DumpToolError) as e:
        dump_index(tmp_path / "00000000000000000000.index")
    assert e.value.kafka_exception == "java.nio.file.NoSuchFileException"
