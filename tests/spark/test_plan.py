"""The read plan and the in-process reader (no Spark): offsets, timestamps, pruning, splitting, errors.

References: the direct decode of every ``.log`` (record objects, not the columnar path) and
``kafkafmt.log.Log.fetch_offset_by_timestamp`` (UnifiedLog.fetchOffsetByTimestamp) run on a copy
of the directory, since opening a Log may write.
"""
from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest

import kafkafmt.spark as ks
from kafkafmt.errors import ConfigError, CorruptRecordError, KafkaFmtError
from kafkafmt.log import Log
from kafkafmt.log.view import OPENED
from spark_logs import build_partition, direct_decode, fingerprint, snapshot


def rows_of(table, topic=None, partition=None):
    out = []
    for r in table.to_pylist():
        if topic is not None and (r["topic"], r["partition"]) != (topic, partition):
            continue
        ts = r["timestamp"]
        ms = None if ts is None else round(ts.timestamp() * 1000)
        out.append((r["offset"], ms, r["timestampType"], r["key"], r["value"],
                    tuple((h["key"], h["value"]) for h in r["headers"] or ()), r["isControl"]))
    return out


@pytest.fixture(scope="module")
def big_partition(tmp_path_factory):
    """One v2 partition with several segments, many index entries and varied timestamps."""
    return build_partition(tmp_path_factory.mktemp("big") / "big-0", [(2, "none"), (2, "lz4")], seed=7,
                           batches_per_step=60)


def test_full_read_equals_direct_decode_for_every_partition(sample_logs):
    before = snapshot(sample_logs)
    table = ks.read_all(ks.plan({"path": str(sample_logs)}))
    parts = sorted(p for p in sample_logs.iterdir() if p.is_dir())
    assert len(parts) == 16
    for d in parts:
        topic, partition = d.name.rsplit("-", 1)
        expected = direct_decode(d)
        got = rows_of(table, topic, int(partition))
        assert len(got) == len(expected) > 0
        assert [r[:3] for r in got] == [r[:3] for r in expected]        # offsets, timestamps, types
        assert [r[6] for r in got] == [r[6] for r in expected]          # control records flagged
        assert fingerprint(got) == fingerprint(expected)                # keys, values, headers
    assert snapshot(sample_logs) == before


def test_batch_level_and_include_data(sample_logs):
    d = sample_logs / "upgrade-0"
    batches = ks.read_all(ks.plan({"path": str(d), "level": "batch"}))
    records = ks.read_all(ks.plan({"path": str(d), "includeData": "false"}))
    assert set(batches.column("magic").to_pylist()) == {0, 1, 2}
    assert set(batches.column("codec").to_pylist()) == {"gzip", "none", "lz4", "zstd"}
    assert all(batches.column("crcValid").to_pylist())
    assert records.num_rows == len(direct_decode(d))
    assert records.column("key").null_count == records.num_rows
    assert records.column("headers").null_count == records.num_rows
    # every record lies in the batch whose offsets the batch row gives
    spans = set(zip(batches.column("baseOffset").to_pylist(), batches.column("lastOffset").to_pylist()))
    for base, last, off in zip(records.column("batchBaseOffset").to_pylist(),
                               records.column("batchLastOffset").to_pylist(), records.column("offset").to_pylist()):
        assert base <= off <= last or base == last  # v0/v1 wrappers carry their last offset
        assert (base, last) in spans


def test_offset_options_equal_filtering_and_prune_segments(big_partition):
    full = rows_of(ks.read_all(ks.plan({"path": str(big_partition)})))
    segments = sorted(big_partition.glob("*.log"))
    assert len(segments) >= 4
    lo, hi = full[len(full) // 3][0] + 1, full[len(full) // 2][0]
    spec = lambda off: json.dumps({"big": {"0": off}})  # noqa: E731
    with OPENED.recording():
        p = ks.plan({"path": str(big_partition), "startingOffsets": spec(lo), "endingOffsets": spec(hi)})
        assert OPENED.logs() == []                   # planning an offset range reads indexes only
        got = rows_of(ks.read_all(p))
    assert got == [r for r in full if lo <= r[0] < hi]
    opened = set(OPENED.logs())
    assert 0 < len(opened) < len(segments)
    assert opened == {s.segment for s in p.splits}
    # -2 / -1 mean earliest / latest; "latest" cannot start a batch read, "earliest" cannot end one
    assert rows_of(ks.read_all(ks.plan({"path": str(big_partition), "startingOffsets": spec(-2),
                                        "endingOffsets": spec(-1)}))) == full
    with pytest.raises(ConfigError):
        ks.plan({"path": str(big_partition), "startingOffsets": "latest"})
    with pytest.raises(ConfigError):
        ks.plan({"path": str(big_partition), "endingOffsets": spec(-2)})
    with pytest.raises(ConfigError):
        ks.plan({"path": str(big_partition), "startingOffsets": json.dumps({"other": {"0": 1}})})


def test_timestamp_options_answer_like_offsets_for_times(big_partition, tmp_path):
    full = rows_of(ks.read_all(ks.plan({"path": str(big_partition)})))
    copy = tmp_path / "big-0"
    shutil.copytree(big_partition, copy)
    with Log.open(copy) as reference:                      # kafkafmt.log's UnifiedLog.fetchOffsetByTimestamp
        stamps = sorted({r[1] for r in full})
        bases = [int(f.name[:20]) for f in sorted(big_partition.glob("*.log"))]
        # a start target answered well inside a segment (not its first index interval)
        start_ts = next(t - 1 for t in stamps[len(stamps) // 3:]
                        if reference.fetch_offset_by_timestamp(t - 1).offset - max(
                            b for b in bases if b <= reference.fetch_offset_by_timestamp(t - 1).offset) > 25)
        end_ts = stamps[3 * len(stamps) // 4] + 1
        start = reference.fetch_offset_by_timestamp(start_ts).offset
        end = reference.fetch_offset_by_timestamp(end_ts).offset
        assert reference.fetch_offset_by_timestamp(stamps[-1] + 1) is None
    # offsetsForTimes: the first record (in offset order) with a timestamp >= the target
    assert start == next(r[0] for r in full if r[1] >= start_ts)
    assert end == next(r[0] for r in full if r[1] >= end_ts)
    with OPENED.recording():
        p = ks.plan({"path": str(big_partition), "startingTimestamp": str(start_ts), "endingTimestamp": str(end_ts)})
    planned_logs = OPENED.logs()
    assert p.offset_ranges == {("big", 0): (start, end)}
    assert len(set(planned_logs)) <= 2 < len(list(big_partition.glob("*.log")))   # only the answering segments
    with OPENED.recording():
        got = rows_of(ks.read_all(p))
    assert set(OPENED.logs()) == {s.segment for s in p.splits}
    assert len(set(OPENED.logs())) < len(list(big_partition.glob("*.log")))   # earlier/later segments never opened
    assert got == [r for r in full if start <= r[0] < end]
    # reads start mid-segment: the first split does not start at byte 0 of its segment
    assert p.splits[0].start > 0
    # no record at or after the target: an empty read (the log end offset)
    late = ks.plan({"path": str(big_partition), "startingTimestamp": str(stamps[-1] + 1)})
    assert ks.read_all(late).num_rows == 0


def test_max_bytes_per_partition_splits_at_batch_boundaries(big_partition):
    whole = ks.plan({"path": str(big_partition)})
    full = rows_of(ks.read_all(whole))
    small = ks.plan({"path": str(big_partition), "maxBytesPerPartition": "700"})
    assert len(small.partitions) > 3 * len(whole.partitions)
    assert max(sum(s.size for s in p) for p in small.partitions) <= max(700, max(s.size for s in small.splits))
    got = rows_of(ks.read_all(small))
    assert got == full                                    # nothing lost, nothing repeated
    seg = small.splits[0].segment
    starts = {s.start for s in small.splits if s.segment == seg}
    boundaries = {b.position for b in __import__("kafkafmt").log.FileRecords(seg, file_already_exists=True,
                                                                              mutable=False).batches()}
    assert starts <= boundaries                           # every cut is a batch boundary
    assert len(ks.plan({"path": str(big_partition), "minPartitions": "5"}).partitions) >= 5


def corrupt_copy(src, dst, how):
    shutil.copytree(src, dst)
    seg = sorted(dst.glob("*.log"))[1]
    data = bytearray(seg.read_bytes())
    if how == "flip":
        pos = len(data) // 2
        data[pos] ^= 0xFF
    else:
        pos = len(data) - 7
        del data[pos:]
    seg.write_bytes(bytes(data))
    return seg


@pytest.mark.parametrize("how", ["flip", "truncate"])
def test_failfast_names_file_and_position_permissive_keeps_prefix(big_partition, tmp_path, how):
    bad = tmp_path / "big-0"
    seg = corrupt_copy(big_partition, bad, how)
    before = snapshot(bad)
    with pytest.raises(CorruptRecordError) as e:
        ks.read_all(ks.plan({"path": str(bad)}))
    assert str(seg) in str(e.value) and e.value.position is not None
    assert f"byte position {e.value.position}" in str(e.value)
    t = ks.read_all(ks.plan({"path": str(bad), "mode": "PERMISSIVE"}))
    errors = [r for r in t.to_pylist() if r["error"] is not None]
    assert len(errors) == 1 and errors[0]["segment"] == str(seg) and errors[0]["position"] == e.value.position
    good = rows_of(t.filter(t.column("error").is_null()))
    full = rows_of(ks.read_all(ks.plan({"path": str(big_partition)})))
    bases = sorted(int(f.name[:20]) for f in bad.glob("*.log"))
    lo, hi = int(seg.name[:20]), bases[bases.index(int(seg.name[:20])) + 1]
    inside = [r for r in full if lo <= r[0] < hi]
    kept = [r for r in good if lo <= r[0] < hi]
    assert kept == inside[:len(kept)] and len(kept) < len(inside)     # that segment: the rows before the damage
    assert [r for r in good if not lo <= r[0] < hi] == [r for r in full if not lo <= r[0] < hi]  # others: all
    assert snapshot(bad) == before


def test_bad_options_and_paths_are_kafkafmt_errors(tmp_path, big_partition):
    for options in ({}, {"path": str(tmp_path / "missing")}, {"path": str(big_partition), "mode": "LENIENT"},
                    {"path": str(big_partition), "level": "message"},
                    {"path": str(big_partition), "startingOffsets": "{not json"},
                    {"path": str(big_partition), "maxBytesPerPartition": "0"}):
        with pytest.raises(KafkaFmtError):
            ks.plan(options)


def test_paths_globs_and_segment_files(sample_logs):
    all_parts = ks.plan({"path": str(sample_logs)})
    by_glob = ks.plan({"path": str(sample_logs / "magic2-*")})
    assert {(s.topic) for s in by_glob.splits} == {f"magic2-{c}" for c in ("none", "gzip", "snappy", "lz4", "zstd")}
    listed = ks.plan({"paths": json.dumps([str(sample_logs / "txn-0"), str(sample_logs / "txn-1")])})
    assert {(s.topic, s.partition) for s in listed.splits} == {("txn", 0), ("txn", 1)}
    one = sorted((sample_logs / "txn-0").glob("*.log"))[-1]
    seg = ks.plan({"path": str(one)})
    assert {s.segment for s in seg.splits} == {str(one)}
    assert len(all_parts.offset_ranges) == 16
    assert len(all_parts.partitions) >= 16          # one Spark partition per topic-partition at least


def test_writer_builds_logs_for_every_magic_and_codec_without_spark(sample_logs, tmp_path):
    """The writer's staging and commit (what Spark's tasks and driver call), in this process."""
    from kafkafmt.spark.write import WriteOptions, build_logs, stage

    src = ks.read_all(ks.plan({"path": str(sample_logs / "magic2-none-0")}))
    expected = rows_of(src)
    half = src.num_rows // 2
    for magic, codecs in ((0, ("none", "snappy")), (1, ("gzip", "lz4")), (2, ("zstd", "none"))):
        for codec in codecs:
            out = tmp_path / f"w{magic}{codec}"
            cols = ["key", "value", "timestamp", "partition"] + (["headers"] if magic == 2 else [])
            opts = WriteOptions.parse({"path": str(out), "topic": "w", "magic": str(magic), "codec": codec,
                                       "batchSize": "300", "segmentBytes": "2000"})
            staged = [stage(src.select(cols).slice(half).to_batches(), opts, "000001-0"),   # task order wins
                      stage(src.select(cols).slice(0, half).to_batches(), opts, "000000-0")]
            build_logs(staged, opts)
            # the partition and LogManager's files of a cleanly shut down log directory; nothing staged
            assert sorted(p.name for p in out.iterdir()) == [".kafka_cleanshutdown", "log-start-offset-checkpoint",
                                                             "recovery-point-offset-checkpoint", "w-0"]
            written = direct_decode(out / "w-0")
            assert len(list((out / "w-0").glob("*.log"))) > 1
            assert [r[0] for r in written] == list(range(len(expected)))
            assert [(r[3], r[4]) for r in written] == [(r[3], r[4]) for r in expected]
            assert [r[1] for r in written] == ([-1] * len(expected) if magic == 0 else [r[1] for r in expected])
            if magic == 2:
                assert fingerprint(written) == fingerprint(expected)
            back = ks.read_all(ks.plan({"path": str(out), "level": "batch"}))
            assert set(back.column("codec").to_pylist()) == {codec} and set(back.column("magic").to_pylist()) == {magic}
            # the written directory loads as a clean Kafka log (no recovery needed)
            with Log.open(out / "w-0") as log:
                assert log.log_end_offset == len(expected)
    with pytest.raises(ConfigError):
        WriteOptions.parse({"path": str(tmp_path), "magic": "1", "codec": "zstd"})


def test_writer_appends_to_an_existing_partition_and_a_failed_append_changes_nothing(sample_logs, tmp_path):
    from kafkafmt.spark.write import WriteOptions, build_logs, stage

    src = ks.read_all(ks.plan({"path": str(sample_logs / "magic2-none-0")})).select(["key", "value", "timestamp"])
    out = tmp_path / "app"

    def write(table, overwrite=False):
        opts = WriteOptions.parse({"path": str(out), "topic": "a", "segmentBytes": "3000"}, overwrite=overwrite)
        build_logs([stage(table.to_batches(), opts, "000000-0")], opts)

    write(src.slice(0, 40))
    first = direct_decode(out / "a-0")
    write(src.slice(40))                                           # append: offsets continue
    both = direct_decode(out / "a-0")
    assert [r[0] for r in both] == list(range(src.num_rows))
    assert both[:40] == first
    assert [(r[3], r[4]) for r in both[40:]] == list(zip(src.column("key").to_pylist()[40:],
                                                         src.column("value").to_pylist()[40:]))
    with Log.open(out / "a-0") as log:
        assert log.log_end_offset == src.num_rows
    before = snapshot(out)
    bad = pa.table({"value": [b"x", b"y"], "topic": pa.array(["a", None], pa.string())})   # fails after the copy
    with pytest.raises(ConfigError, match="null topic"):
        opts = WriteOptions.parse({"path": str(out)})
        build_logs([stage(bad.to_batches(), opts, "000000-0")], opts)
    assert snapshot(out) == before                                 # nothing staged or half-appended is left
    write(src.slice(0, 10), overwrite=True)                        # overwrite replaces the partition
    assert [r[0] for r in direct_decode(out / "a-0")] == list(range(10))


def test_a_batch_that_passes_its_crc_but_does_not_decompress(tmp_path):
    """Garbage inside a gzip batch with a recomputed (valid) v2 CRC: the decoder, not the CRC, finds it."""
    from kafkafmt.crc import crc32c
    from kafkafmt.records import MemoryRecords

    d = build_partition(tmp_path / "gz-0", [(2, "gzip")], seed=11, batches_per_step=6)
    seg = sorted(d.glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    victim = list(MemoryRecords(bytes(data)).batches())[3]
    start = victim.position
    crc_at, covered_from = start + 17, start + 21        # v2: CRC-32C over attributes..end (kafka-rules §1)
    for i in range(start + 61, victim.end):               # the compressed records area
        data[i] = 0x5A
    data[crc_at:crc_at + 4] = crc32c(bytes(data[covered_from:victim.end])).to_bytes(4, "big")
    seg.write_bytes(bytes(data))
    with pytest.raises(KafkaFmtError) as e:
        ks.read_all(ks.plan({"path": str(d)}))
    assert str(seg) in str(e.value) and start <= e.value.position < victim.end
    t = ks.read_all(ks.plan({"path": str(d), "mode": "PERMISSIVE"}))
    errors = t.filter(t.column("error").is_valid())
    assert errors.num_rows == 1 and errors.column("position")[0].as_py() == start
    kept = t.filter(t.column("error").is_null()).column("offset").to_pylist()
    assert kept == [r[0] for r in direct_decode_prefix(d, start)]


def direct_decode_prefix(d, end_position):
    from kafkafmt.records import MemoryRecords

    seg = sorted(d.glob("*.log"))[0]
    return [(r.offset,) for b in MemoryRecords(seg.read_bytes()[:end_position]).batches() for r in b.records()]


def test_earliest_follows_the_log_start_checkpoint(tmp_path):
    """``Log.maybe_increment_log_start_offset`` (DeleteRecords) writes the partition's line of the log
    directory's checkpoint, as a broker does; the reader's ``earliest`` then starts there (the live broker is
    in test_log_start_vs_kafka.py)."""
    d = build_partition(tmp_path / "ls-0", [(2, "none")], seed=3)
    full = rows_of(ks.read_all(ks.plan({"path": str(d)})))
    cut = full[len(full) // 2][0]
    with Log.open(d) as log:
        assert log.maybe_increment_log_start_offset(cut)
    assert (d.parent / "log-start-offset-checkpoint").read_text() == f"0\n1\nls 0 {cut}\n"
    assert not (d / "log-start-offset-checkpoint").exists()
    p = ks.plan({"path": str(d)})
    assert p.offset_ranges[("ls", 0)] == (cut, full[-1][0] + 1)
    assert rows_of(ks.read_all(p)) == [r for r in full if r[0] >= cut]
    # a checkpoint below the first segment does not move earliest back; a malformed one is ignored
    (d.parent / "log-start-offset-checkpoint").write_text("0\n1\nls 0 -5\n")
    assert ks.plan({"path": str(d)}).offset_ranges[("ls", 0)][0] == full[0][0]
    (d.parent / "log-start-offset-checkpoint").write_text("0\n2\nls 0 7\n")
    with pytest.warns(RuntimeWarning, match="Expected 2 entries"):
        assert ks.plan({"path": str(d)}).offset_ranges[("ls", 0)][0] == full[0][0]


def test_batch_level_offset_range_keeps_a_legacy_wrapper_that_straddles_the_end(tmp_path):
    """A compressed v0/v1 wrapper's header gives only its last offset; a range ending inside it keeps it."""
    d = build_partition(tmp_path / "wrap-0", [(1, "gzip"), (0, "snappy"), (2, "lz4")], seed=11)
    records = ks.read_all(ks.plan({"path": str(d), "includeData": "false"}))
    spans: dict[tuple, list[int]] = {}
    for seg, pos, off in zip(records.column("segment").to_pylist(), records.column("position").to_pylist(),
                             records.column("offset").to_pylist()):
        spans.setdefault((seg, pos), []).append(off)
    wrappers = [v for v in spans.values() if len(v) > 2 and v[-1] < 40]      # legacy, several messages
    assert wrappers
    checked = 0
    for inner in wrappers[:6]:
        for lo, hi in ((0, inner[1]), (inner[1], inner[-1] + 5)):              # the end falls inside `inner`
            spec = lambda off: json.dumps({"wrap": {"0": off}})  # noqa: E731
            got = ks.read_all(ks.plan({"path": str(d), "level": "batch", "startingOffsets": spec(lo),
                                       "endingOffsets": spec(hi)}))
            want = sorted(k for k, offs in spans.items() if any(lo <= o < hi for o in offs))
            assert sorted(zip(got.column("segment").to_pylist(), got.column("position").to_pylist())) == want
            checked += 1
    assert checked >= 4


def test_kafkafmt_error_from_a_worker_traceback():
    from kafkafmt.errors import DumpToolError, TruncatedRecordError
    from kafkafmt.spark.failures import kafkafmt_error_from

    text = ("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n  File \"x.py\"\n"
            "kafkafmt.errors.TruncatedRecordError: [at byte position 12, record offset 7] seg.log: cut short\n")
    err = kafkafmt_error_from(RuntimeError(text))
    assert type(err) is TruncatedRecordError and (err.position, err.offset, err.reason) == (12, 7, "seg.log: cut short")
    odd = kafkafmt_error_from(RuntimeError("kafkafmt.errors.DumpToolError: no position here"))
    assert type(odd) is DumpToolError and odd.position is None and odd.reason == "no position here"
    assert kafkafmt_error_from(RuntimeError("java.lang.OutOfMemoryError: heap")) is None
    assert kafkafmt_error_from(RuntimeError("kafkafmt.errors.NotAnError: x")) is None
