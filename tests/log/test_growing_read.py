"""Reading a log a broker is appending to: ``dump``, ``audit`` and the Spark reader read a consistent prefix, as
Kafka's ``FileRecords`` does (the size taken once; a last batch whose bytes are not all there yet is not there
yet, ``FileLogInputStream.nextBatch``), so repeated reads never fail, never go backwards and never count a record
whose batch is not whole.  A torn tail is still reported where Kafka reports it (kafka-dump-log's "Found N
invalid bytes at the end", ``dump --strict``), and damage before the end stays an error.

The writer here is a thread writing a segment file in pieces that cut batches anywhere; the live broker of
tests/conformance/test_live_dir_safety.py is the real one.
"""
from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import threading
import time
from pathlib import Path

import pytest

from kafkafmt import cli
from kafkafmt.audit import audit_log_dirs
from kafkafmt.audit.render import render_json
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.errors import CorruptRecordError
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder

NOW = 1_700_000_000_000
RECORDS_PER_BATCH = 4


def _source_segment(tmp_path: Path, batches: int) -> bytes:
    """The bytes of one segment holding ``batches`` v2 batches of RECORDS_PER_BATCH records (written by Log)."""
    log = Log(tmp_path / "src" / "s-0", LogConfig(), SimulatedClock(NOW))
    for i in range(batches):
        b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
        for j in range(RECORDS_PER_BATCH):
            b.append(NOW + i, b"key-%d" % (j % 3), b"value-%06d" % (i * RECORDS_PER_BATCH + j) * 8)
        log.append_as_leader(b.build())
    data = log.segments[0].log.path.read_bytes()
    log.close()
    return data


def _dump_records(path: Path) -> tuple[int, int]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(["dump", "--deep", str(path)])
    return rc, sum(1 for line in out.getvalue().splitlines() if line.startswith("| offset: "))


def _audit_records(log_dir: Path) -> int:
    rows = [json.loads(line) for line in render_json(audit_log_dirs([log_dir], "3.9", NOW)).splitlines()]
    return sum(m["records"] for r in rows for m in r["magics"].values())


def _spark_records(part: Path) -> int:
    import kafkafmt.spark as ks
    return ks.read_all(ks.plan({"path": str(part)})).num_rows


def test_reads_of_a_segment_being_written_never_fail_nor_go_backwards(tmp_path):
    data = _source_segment(tmp_path, 60)
    batch_ends = [b.end for b in MemoryRecords(data).batches()]
    part = tmp_path / "logs" / "t-0"
    part.mkdir(parents=True)
    seg = part / "00000000000000000000.log"
    seg.write_bytes(b"")
    written = [0]  # bytes on disk so far
    reads_begun = [0]

    def writer():
        rng = random.Random(7)
        with open(seg, "ab") as f:
            while written[0] < len(data):
                n = rng.randint(1, 300)  # pieces cut batches anywhere, headers included
                if written[0] + n >= len(data):  # the last piece waits for reads begun during the writes
                    deadline = time.monotonic() + 120
                    while reads_begun[0] < 4 and time.monotonic() < deadline:
                        time.sleep(0.01)
                f.write(data[written[0]:written[0] + n])
                f.flush()
                written[0] = min(len(data), written[0] + n)
                time.sleep(0.01)

    def whole_records() -> int:
        return sum(RECORDS_PER_BATCH for e in batch_ends if e <= written[0])

    t = threading.Thread(target=writer)
    t.start()
    last = {"dump": 0, "audit": 0, "spark": 0}
    during = 0  # reads that began while the writer was writing
    try:
        while True:
            done = not t.is_alive()  # the writer had finished before this read began
            reads_begun[0] += 1
            rc, n = _dump_records(seg)
            counts = {"dump": n, "audit": _audit_records(part.parent), "spark": _spark_records(part)}
            assert rc == 0
            bound = whole_records()  # read after the reads: whatever they counted was whole by then
            for k, v in counts.items():
                assert last[k] <= v <= bound, (k, last[k], v, bound)
            last = counts
            during += not done
            if done:
                break
    finally:
        t.join()
    assert during >= 3, "the reads did not overlap the writes"
    assert last == dict.fromkeys(last, 60 * RECORDS_PER_BATCH)  # the last read, after the writer: everything


def test_a_torn_tail_is_reported_where_kafka_reports_it(tmp_path):
    data = _source_segment(tmp_path, 5)
    part = tmp_path / "logs" / "t-0"
    part.mkdir(parents=True)
    seg = part / "00000000000000000000.log"
    seg.write_bytes(data[:-7])  # a stopped log whose last batch was cut (a crash while appending)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert cli.main(["dump", "--deep", str(seg)]) == 0  # kafka-dump-log: reported, exit 0
        assert cli.main(["dump", "--strict", str(seg)]) == 1
    last_size = len(data) - list(MemoryRecords(data).batches())[-1].position
    assert f"Found {last_size - 7} invalid bytes at the end of {seg.name}" in out.getvalue()
    assert "--strict: 0 invalid batch(es)" in err.getvalue()
    # audit counts the four whole batches (LogSegment.read); the Spark reader sees the tail does not grow:
    # FAILFAST names it, PERMISSIVE keeps the four batches and one error row
    import kafkafmt.spark as ks
    assert _audit_records(part.parent) == 4 * RECORDS_PER_BATCH
    with pytest.raises(CorruptRecordError, match=f"{seg.name}: corrupt batch at byte position"):
        ks.read_all(ks.plan({"path": str(part)}))
    rows = ks.read_all(ks.plan({"path": str(part), "mode": "PERMISSIVE"}))
    assert rows.num_rows == 4 * RECORDS_PER_BATCH + 1 and rows.column("error").null_count == 4 * RECORDS_PER_BATCH
    # recovery of a writable open truncates the fifth
    log = Log.open(part, LogConfig(), SimulatedClock(NOW), clean_shutdown=False)
    assert log.log_end_offset == 4 * RECORDS_PER_BATCH and log.events[0]["recovered"][0]["truncated_bytes"] > 0
    log.close()


def test_a_cut_batch_in_an_older_segment_is_still_corruption_for_spark(tmp_path):
    data = _source_segment(tmp_path, 5)
    part = tmp_path / "logs" / "t-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(data[:-7])  # not the last segment: never written again
    shutil.copy(tmp_path / "src" / "s-0" / "00000000000000000000.log", part / "00000000000000000020.log")
    import kafkafmt.spark as ks
    with pytest.raises(CorruptRecordError, match="00000000000000000000.log"):
        ks.read_all(ks.plan({"path": str(part)}))
