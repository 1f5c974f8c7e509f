"""Issue 12, item 2: every bad input is a documented KafkaFmtError (library) or one line and a
non-zero exit (CLI), whether it is found inside a mapped file or not.  Each test is a failure
that was found by fuzzing or by hand and fixed."""
from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest

from kafkafmt.broker import validate_messages_and_assign_offsets
from kafkafmt.cli import main
from kafkafmt.errors import (
    CheckpointError,
    IllegalArgumentError,
    InvalidRecordError,
    KafkaFmtError,
    NoSuchFileError,
    SpecError,
)
from kafkafmt.io import open_readonly
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.records import MemoryRecords
from kafkafmt.samples import sample_record_sets

SAMPLES = sample_record_sets()
V2 = SAMPLES["v2-headers.bin"][1]


def _count_lie(data: bytes = V2, count: int = 5) -> bytes:
    """A v2 batch whose recordsCount says more records than it holds (the CRC then fails too)."""
    bad = bytearray(data)
    struct.pack_into(">i", bad, 57, count)
    return bytes(bad)


# ---- errors inside a mapped file ----------------------------------------------------------------
def test_error_inside_a_mapped_file_is_the_documented_error_not_buffererror(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(_count_lie())
    with pytest.raises(InvalidRecordError, match="premature EOF"):
        with open_readonly(path) as buf:
            list(MemoryRecords(buf).records())


def test_a_view_kept_by_the_caller_does_not_turn_into_buffererror(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(V2)
    with open_readonly(path) as buf:
        kept = memoryview(buf)[:4]
    assert bytes(kept) == V2[:4]  # still readable: the map closes when the last view goes


@pytest.mark.parametrize("argv", [["dump", "--deep"], ["dump", "--deep", "--print-data-log"], ["annotate"]])
def test_cli_reports_an_error_found_inside_a_mapped_file_in_one_line(tmp_path, capsys, argv):
    path = tmp_path / "x.bin"
    path.write_bytes(_count_lie())
    rc = main(argv + [str(path)])
    err = capsys.readouterr().err
    if argv[0] == "annotate":  # annotate labels bytes, it does not validate counts
        assert rc == 0
        return
    assert rc == 1
    assert [ln for ln in err.splitlines() if ln.startswith("kafkafmt: error:")] == \
        [f"kafkafmt: error: {path}: InvalidRecordError: [at byte position 0] "
         "Incorrect declared batch size, premature EOF reached"]


def test_dump_json_keeps_a_record_error_in_the_batch_object(tmp_path, capsys):
    path = tmp_path / "x.bin"
    path.write_bytes(_count_lie())
    assert main(["dump", "--json", str(path)]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["error"] == "InvalidRecordError: [at byte position 0] Incorrect declared batch size, premature EOF reached"


def test_cli_subprocess_prints_no_traceback_for_an_error_inside_a_mapped_file(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(_count_lie())
    p = subprocess.run([sys.executable, "-m", "kafkafmt", "dump", "--deep", str(path)], capture_output=True, text=True)
    assert p.returncode == 1
    assert "Traceback" not in p.stderr and "BufferError" not in p.stderr
    assert p.stderr.count("kafkafmt: error:") == 1


def test_produce_path_with_trailing_bytes_trims_them_instead_of_buffererror():
    legacy = SAMPLES["v1-uncompressed.bin"][1]  # legacy batches hold views into the payload
    res = validate_messages_and_assign_offsets(legacy + b"\x00" * 5, offset=10, now=1)
    assert [r.offset for r in MemoryRecords(res.records).records()][0] == 10
    assert MemoryRecords(res.records).trailing is None


# ---- the CLI: one line and a non-zero status for every bad input ------------------------------------
@pytest.mark.parametrize("cmd", ["dump", "annotate"])
def test_missing_file_and_directory_are_one_line_errors(tmp_path, capsys, cmd):
    for target in (tmp_path / "missing.log", tmp_path):
        rc = main([cmd, str(target)])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 1
        assert len(err) == 1 and err[0].startswith("kafkafmt: error:") and "NoSuchFileError" in err[0]


def test_dump_continues_with_the_next_file_after_a_bad_one(tmp_path, capsys):
    good = tmp_path / "good.bin"
    good.write_bytes(V2)
    assert main(["dump", str(tmp_path), str(good)]) == 1
    out = capsys.readouterr().out
    assert f"Dumping {good}" in out and "baseOffset: 0 lastOffset: 3" in out


def test_dump_strict_makes_reported_invalid_batches_an_error(tmp_path, capsys):
    bad = bytearray(V2)
    bad[70] ^= 1  # CRC no longer matches; kafka-dump-log prints isvalid: false and exits 0
    path = tmp_path / "bad.bin"
    path.write_bytes(bytes(bad) + b"\x00\x01")
    assert main(["dump", str(path)]) == 0
    assert "isvalid: false" in capsys.readouterr().out
    assert main(["dump", "--strict", str(path)]) == 1
    err = capsys.readouterr().err
    assert "--strict: 1 invalid batch(es), 2 invalid trailing byte(s)" in err
    path.write_bytes(V2)
    assert main(["dump", "--strict", str(path)]) == 0


_BAD_SPECS = [
    '{"magic": "2"}',
    '{"magic": 2, "records": [{"key": 5}]}',
    '{"magic": 2, "records": [{"key": {"utf8": 5}}]}',
    '{"magic": 2, "records": [5]}',
    '{"magic": 2, "records": "abc"}',
    '{"magic": 2, "records": [{"headers": [{"value": null}]}]}',
    '{"magic": 2, "records": [{"headers": [5]}]}',
    '{"magic": 2, "baseOffset": "x"}',
    '{"magic": 2, "baseOffset": 18446744073709551616}',
    '{"magic": 2, "partitionLeaderEpoch": 4294967296}',
    '{"magic": 2, "attributes": [1]}',
    '{"magic": 1, "compresscodec": "gzip", "records": [{"offset": "a"}]}',
    '{"magic": 1, "records": [{"key": {"hex": "zz"}}]}',
    '{"magic": 0, "records": [{"storedOffset": 1.5}]}',
    '{"magic": 2, "compresscodec": 7}',
    '{"magic": 2, "timestampType": []}',
    '{"batches": 5}',
    '"just a string"',
    '[1, 2]',
    "[" * 100_000 + "]" * 100_000,
]


@pytest.mark.parametrize("spec", _BAD_SPECS, ids=range(len(_BAD_SPECS)))
def test_build_with_a_wrong_json_type_is_a_spec_error(tmp_path, capsys, spec):
    path = tmp_path / "spec.json"
    path.write_text(spec)
    out = tmp_path / "out.bin"
    rc = main(["build", str(path), "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and err[0].startswith("kafkafmt: error: SpecError:"), err
    assert not out.exists()


def test_build_of_a_file_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "spec.json"
    path.write_bytes(b'{"magic": 2, "records": [{"key": "\xff"}]}')
    assert main(["build", str(path), "-o", str(tmp_path / "o.bin")]) == 1
    assert capsys.readouterr().err.strip() == \
        "kafkafmt: error: SpecError: [at byte position 34] the spec is not UTF-8 text (invalid start byte)"


def test_build_of_a_missing_spec_or_an_unwritable_output(tmp_path, capsys):
    assert main(["build", str(tmp_path / "nope.json"), "-o", str(tmp_path / "o.bin")]) == 1
    assert "NoSuchFileError" in capsys.readouterr().err
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"magic": 2, "records": [{"value": "v"}]}))
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    assert main(["build", str(spec), "-o", str(blocker / "o.bin")]) == 1
    assert capsys.readouterr().err.strip().startswith("kafkafmt: error:")


# ---- the log directory ----------------------------------------------------------------------------
def _log_dir(tmp_path):
    d = tmp_path / "t-0"
    log = Log(d, LogConfig(), SimulatedClock(1000))
    log.append_as_leader(V2)
    log.close()
    return d


@pytest.mark.parametrize("content", [b"0\nx\n", b"1\n1\nt 0 5\n", b"0\n2\nt 0 5\n", b"\xff\xfe\n",
                                     b"0\n1\nt zero 5\n", b"0\n"])
@pytest.mark.parametrize("name", ["recovery-point-offset-checkpoint", "log-start-offset-checkpoint"])
def test_a_malformed_offset_checkpoint_is_ignored_as_kafka_does(tmp_path, name, content):
    d = _log_dir(tmp_path)
    (d.parent / name).write_bytes(content)  # LogManager's file, in the log directory
    with Log.open(d, LogConfig(), SimulatedClock(2000), clean_shutdown=False) as log:
        assert log.log_end_offset == 4
        warnings = [e for e in log.events if e["type"] == "warning"]
        assert len(warnings) == 1 and warnings[0]["checkpoint"] == name


@pytest.mark.parametrize("content", [b"0\nx\n", b"0\n1\n0\n", b"0\n1\na b\n", b"\xff\n1\n"])
def test_a_malformed_leader_epoch_checkpoint_is_a_checkpoint_error(tmp_path, content):
    d = _log_dir(tmp_path)
    (d / "leader-epoch-checkpoint").write_bytes(content)
    with pytest.raises(CheckpointError) as ei:
        Log.open(d, LogConfig(), SimulatedClock(2000))
    assert ei.value.kafka_exception == "IOException" and "checkpoint file" in ei.value.reason


def test_a_negative_position_from_a_corrupt_index_is_an_error_not_oserror(tmp_path):
    d = _log_dir(tmp_path)
    with Log.open(d, LogConfig(), SimulatedClock(2000)) as log:
        seg = log.active_segment
        with pytest.raises(IllegalArgumentError, match="Negative position"):
            seg.log.search_for_timestamp(0, -8, 0)
        with pytest.raises(IllegalArgumentError, match="Negative position"):
            seg.log.read(-1, 10)


def test_a_timestamp_lookup_through_a_mutated_index_is_an_error_not_oserror(tmp_path):
    d = _log_dir(tmp_path)  # cleanly closed: the indexes are trusted as they are
    (d / "00000000000000000000.index").write_bytes(struct.pack(">ii", 1, -8))
    (d / "00000000000000000000.timeindex").write_bytes(struct.pack(">qi", 1699999999000, 1))
    with Log.open(d, LogConfig(), SimulatedClock(2000)) as log:
        with pytest.raises(IllegalArgumentError, match="Negative position") as ei:
            log.fetch_offset_by_timestamp(1699999999000)
    assert ei.value.position == -8


def test_split_of_an_overflowed_segment_without_a_batch_is_an_error_not_stopiteration(tmp_path):
    from kafkafmt.errors import KafkaStorageError
    d = _log_dir(tmp_path)
    with Log.open(d, LogConfig(), SimulatedClock(2000)) as log:
        seg = log.active_segment
        seg.has_overflow = lambda: True
        seg.log.batches_from = lambda position: iter(())
        with pytest.raises(KafkaStorageError, match="no whole batch at position 0"):
            log._split_overflowed_segment(seg)


def test_every_error_class_is_documented_in_the_hierarchy():
    import kafkafmt.errors as errors
    doc = errors.__doc__
    for name, cls in vars(errors).items():
        if isinstance(cls, type) and issubclass(cls, KafkaFmtError) and cls is not KafkaFmtError:
            assert name in doc, f"{name} missing from the kafkafmt.errors hierarchy"
    assert issubclass(NoSuchFileError, KafkaFmtError) and issubclass(SpecError, KafkaFmtError)
