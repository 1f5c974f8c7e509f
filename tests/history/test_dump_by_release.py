"""``kafkafmt dump --deep --print-data-log --kafka-line X`` against what release X's own DumpLogSegments printed.

Offline: the segments and the lines each release printed for them were measured by the live checks
(tests/history/test_old_releases_live.py, ``make history-record``) and kept in data/dump_by_release.json;
the line format of each release is row ``dump.format`` of kafkafmt.kafka_lines (kafkafmt.records.dump_legacy).
Without ``--deep``, ``--print-data-log`` alone, the stderr reports and the offset indexes: data/dump_shallow_by_release.json
(kafkarig.dump_releases; tests/history/test_dump_releases_live.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkafmt import kafka_lines
from kafkafmt.records.dump_log import dump_log

DATA = json.loads((Path(__file__).parent / "data" / "dump_by_release.json").read_text())
PATH = "<root>/broker-1/data/raw-0/00000000000000000000.log"


def kafkafmt_lines(segment: bytes, line: str, *, deep: bool = True, print_data: bool = True) -> list[str]:
    out = [f"Dumping {PATH}"]
    dump_log(segment, filename=PATH.rsplit("/", 1)[1], abspath=PATH, deep=deep, print_data=print_data,
             start_offset=0, emit=out.append, kafka_line=line)
    return out


@pytest.mark.parametrize("release", sorted(DATA["releases"], key=kafka_lines.order))
def test_dump_prints_what_the_release_printed(release):
    d = DATA["releases"][release]
    assert kafkafmt_lines(bytes.fromhex(d["segment"]), kafka_lines.check_line(release)) == d["lines"]


def test_each_format_is_one_row_per_change():
    formats = [kafka_lines.value("dump.format", line) for line in kafka_lines.KAFKA_LINES]
    assert formats == ["0.9", "0.9", "0.10.1", "0.10.2", "0.11", "0.11", "0.11", "2.0", "2.0", "2.8", "3.9", "3.9"]


def test_shallow_lines_of_the_message_formats():
    """Without --deep, a release before 0.11 prints each shallow message: a gzip wrapper as it is."""
    seg = bytes.fromhex(DATA["releases"]["0.10.2.2"]["segment"])
    lines = kafkafmt_lines(seg, "0.10.2", deep=False, print_data=False)
    wrappers = [x for x in lines if "compresscodec: GZIP" in x]
    assert wrappers and all(" keysize: " not in x and " payload: " not in x for x in wrappers)
    assert len(lines) < len(kafkafmt_lines(seg, "0.10.2", print_data=False))


def test_a_v2_batch_is_refused_before_0_11():
    seg = bytes.fromhex(DATA["releases"]["1.1.1"]["segment"])
    out: list[str] = []
    res = dump_log(seg, filename="x.log", deep=True, emit=out.append, kafka_line="0.10.2")
    assert res.error is not None and "magic 2" in str(res.error) and out == []


# --------------------------------------------------------------------------- without --deep, and the gap reports
#: what each release's own DumpLogSegments printed for kafkafmt-built segments with holes, shallow and deep
#: (conformance/kafkarig/dump_releases.py; tests/history/test_dump_releases_live.py runs the tools again)
SHALLOW = json.loads((Path(__file__).parent / "data" / "dump_shallow_by_release.json").read_text())["releases"]
#: the flag sets of each release's .log files; "index": the offset indexes of kafkarig.dump_releases.indexes
FLAGS = {"shallow": [], "print-data-log": ["--print-data-log"], "deep-iteration": ["--deep-iteration"], "index": []}


def kafkafmt_cli(tmp_path, release: str, flags: str) -> tuple[list[str], list[list[str]]]:
    """``kafkafmt dump <the release's segments, or their indexes> FLAGS --kafka-line <its line>``: stdout lines,
    stderr reports."""
    import contextlib
    import io

    from kafkafmt import cli
    from kafkarig.dump_releases import indexes, reports
    files, index_files = [], []
    for name, hexdata in SHALLOW[release]["segments"].items():
        data = bytes.fromhex(hexdata)
        (tmp_path / name).mkdir()
        f = tmp_path / name / f"{0:020d}.log"
        f.write_bytes(data)
        files.append(str(f))
        for key, index in indexes(data).items():
            (tmp_path / f"{name}-{key}").mkdir()
            (tmp_path / f"{name}-{key}" / f.name).write_bytes(data)
            (tmp_path / f"{name}-{key}" / f"{0:020d}.index").write_bytes(index)
            index_files.append(str(tmp_path / f"{name}-{key}" / f"{0:020d}.index"))
    if flags == "index":
        files = index_files
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert cli.main(["dump", *files, *FLAGS[flags], "--kafka-line", release]) == 0
    stdout = out.getvalue().replace(str(tmp_path), "<root>").split("\n")
    return stdout, reports([ln for ln in err.getvalue().replace(str(tmp_path), "<root>").split("\n") if ln])


@pytest.mark.parametrize("release,flags", [(r, f) for r in sorted(SHALLOW, key=kafka_lines.order) for f in FLAGS])
def test_dump_and_its_gap_report_as_the_release_printed_them(tmp_path, release, flags):
    stdout, reports = kafkafmt_cli(tmp_path, release, flags)
    real = SHALLOW[release]["flags"][flags]
    assert stdout == real["stdout"]
    assert reports == real["reports"]


def test_before_0_11_a_shallow_dump_checks_only_the_uncompressed_messages():
    """0.9.0.1 … 0.10.2.2 iterate the shallow entries and skip the gzip wrapper (holding 4 and 6) in the check: its
    jump from 3 and its hole go unreported shallowly; deep, the hole is reported (row dump.non_consecutive_scope)."""
    shallow = SHALLOW["0.10.2.2"]["flags"]["shallow"]["reports"]
    deep = SHALLOW["0.10.2.2"]["flags"]["deep-iteration"]["reports"]
    assert [r[1:] for r in shallow] == [["  7 is followed by 9", "  1 is followed by 3"]] * 2
    assert [r[1:] for r in deep] == [["  7 is followed by 9", "  4 is followed by 6", "  1 is followed by 3"]] * 2
    assert shallow[0][0].startswith("Non-secutive offsets in :<root>/")
    assert SHALLOW["0.11.0.3"]["flags"]["shallow"]["reports"] == []  # 0.11 on: deep iteration only


def test_print_data_log_alone_is_shallow_before_1_1():
    """1.0.2 prints batch lines for --print-data-log alone, 1.1.1 record lines (row dump.print_data_deep)."""
    assert SHALLOW["1.0.2"]["flags"]["print-data-log"]["stdout"] == SHALLOW["1.0.2"]["flags"]["shallow"]["stdout"]
    assert SHALLOW["1.1.1"]["flags"]["print-data-log"]["stdout"] != SHALLOW["1.1.1"]["flags"]["shallow"]["stdout"]
    assert [kafka_lines.value("dump.print_data_deep", line) for line in ("1.0", "1.1")] == [False, True]
    wrapper = [x for x in SHALLOW["0.9.0.1"]["flags"]["print-data-log"]["stdout"] if "GZIPCompressionCodec" in x]
    assert len(wrapper) == 1 and " payload: \x1f\ufffd\x08" in wrapper[0]  # the gzip bytes read as UTF-8


def test_the_gap_report_headers_are_rows():
    assert [kafka_lines.value("dump.non_consecutive_header", line) for line in ("0.10.2", "0.11", "2.1", "2.8")] == [
        "Non-secutive offsets in :", "Non-consecutive offsets in :", "Non-consecutive offsets in :",
        "Non-consecutive offsets in "]


def test_2_0_and_2_1_report_their_own_brokers_indexes_as_mismatched():
    """KAFKA-6264 (2.0) keys an index entry by the batch's last offset; the DumpLogSegments of 2.0.1 and 2.1.1 still
    compare it with the first record (KAFKA-7487, fixed in 2.3): rows log.offset_index_key, dump.index_entry_check."""
    def last_index_reports(release):
        return [r for r in SHALLOW[release]["flags"]["index"]["reports"] if r[0].endswith("-last/00000000000000000000.index")]
    assert last_index_reports("2.1.1")[-1][1:] == ["  Index offset: 9, log offset: 8", "  Index offset: 6, log offset: 4"]
    assert last_index_reports("2.8.2") == []
    assert kafka_lines.value("log.offset_index_key", "2.0") == "last offset"
    assert [kafka_lines.value("dump.index_entry_check", line) for line in ("2.1", "2.8")] == [
        "first record", "batch last offset"]
