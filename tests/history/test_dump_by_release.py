"""``kafkafmt dump --deep --print-data-log --kafka-line X`` against what release X's own DumpLogSegments printed.

Offline: the segments and the lines each release printed for them were measured by the live checks
(tests/history/test_old_releases_live.py, ``make history-record``) and kept in data/dump_by_release.json;
the line format of each release is row ``dump.format`` of kafkafmt.kafka_lines (kafkafmt.records.dump_legacy).
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
