"""consumer_view, the Trace object, and the ``kafkafmt explain`` command."""
from __future__ import annotations

import io
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import LAT, NOW, R, batches, build, legacy_msg, legacy_wrapper  # noqa: E402
from kafkafmt.broker import Trace  # noqa: E402
from kafkafmt.broker.consumer import consumer_view  # noqa: E402
from kafkafmt.constants import ControlRecordType  # noqa: E402
from kafkafmt.records import end_txn_marker  # noqa: E402
from kafkafmt.tools.explain import main, make_parser, parse_topic_config  # noqa: E402


# consumer_view -------------------------------------------------------------------------------------
def test_consumer_skips_control_records_and_records_below_the_fetch_offset():
    data = build([R(NOW)] * 3, base_offset=0, producer_id=1, producer_epoch=0, base_sequence=0, is_transactional=True)
    marker = end_txn_marker(base_offset=3, timestamp=NOW, partition_leader_epoch=0, producer_id=1, producer_epoch=0,
                            control_type=ControlRecordType.COMMIT, coordinator_epoch=0)
    view = consumer_view(data + marker, fetch_offset=1)
    assert view.offsets == [1, 2]
    assert view.skipped == [(0, "below the fetch offset 1"), (3, "control record")]


def test_consumer_derivations_are_explained():
    v = consumer_view(build([R(NOW - 2), R(NOW)], base_offset=10))
    assert v.records[1].derivation == f"offset: baseOffset 10 + delta 1; timestamp: baseTimestamp {NOW - 2} + delta 2"
    lat = consumer_view(build([R(NOW - 2)], ts_type=LAT, log_append_time=NOW + 1))
    assert "batch maxTimestamp" in lat.records[0].derivation and lat.timestamps == [NOW + 1]
    zero = consumer_view(legacy_wrapper([legacy_msg(i, NOW) for i in range(2)], wrapper_offset=0))
    assert zero.offsets == [0, 1] and "KAFKA-5365" in zero.records[0].derivation
    v0 = consumer_view(build([R(NOW)], magic=0))
    assert v0.timestamps == [-1] and v0.records[0].timestamp_type.kafka_name == "NoTimestampType"


def test_old_client_reads_v0_fine_and_trailing_bytes_are_ignored():
    data = build([R(-1)] * 2, magic=0) + b"\x00" * 7
    v = consumer_view(data, client_magic=0)
    assert v.error is None and v.offsets == [0, 1]
    assert v.trace.find("trailing bytes")


def test_consumer_view_records_to_dict():
    d = consumer_view(build([R(NOW, b"k", b"v")])).records[0].to_dict()
    assert d["offset"] == 0 and d["timestamp_type"] == "CreateTime" and d["key"] == b"k"


# Trace ---------------------------------------------------------------------------------------------
def test_trace_render_and_dicts():
    t = Trace("title")
    t.add("rule one", "decided", "LogValidator.validateBatch", note="a note", x=1, b=b"\x01\x02")
    t.add("rule two", "done", "seed 000 §2.1.1")
    text = t.render()
    assert text.splitlines()[0] == "title"
    assert "  1. rule one: decided" in text and "x=1 b=0102" in text and "[LogValidator.validateBatch]" in text
    assert "note: a note" in text
    d = t.to_dicts()
    assert d[1] == {"step": 2, "rule": "rule two", "decision": "done", "values": {}, "source": "seed 000 §2.1.1",
                    "note": ""}
    assert json.loads(t.to_json())["steps"][0]["values"]["b"] == "0102"
    assert [s.rule for s in t.find("seed 000")] == ["rule two"] and len(t) == 2


# CLI -----------------------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path):
    p = tmp_path / "v1gzip.bin"
    p.write_bytes(build([R(NOW - 3), R(NOW - 1)], magic=1, compression_="gzip"))
    log = tmp_path / "v2.log"
    log.write_bytes(build([R(NOW)] * 3, compression_="lz4"))
    return p, log


def run(argv):
    parser = make_parser()
    args = parser.parse_args(argv)
    out = io.StringIO()
    rc = args.func(args, out=out)
    return rc, out.getvalue()


@pytest.mark.parametrize("argv", [["explain", "--help"], ["explain", "produce", "--help"],
                                  ["explain", "fetch", "--help"]])
def test_every_command_has_help(argv, capsys):
    with pytest.raises(SystemExit) as e:
        make_parser().parse_args(argv)
    assert e.value.code == 0
    assert "usage: kafkafmt explain" in capsys.readouterr().out


def test_explain_produce_text_and_output_file(files, tmp_path):
    p, _ = files
    out_file = tmp_path / "out.bin"
    rc, text = run(["explain", "produce", str(p), "--topic-config", "message.format.version=0.10.0",
                    "-c", "message.timestamp.type=LogAppendTime", "--offset", "100", "--now", str(NOW),
                    "--output", str(out_file)])
    assert rc == 0
    assert "outcome: APPENDED via validateMessagesAndAssignOffsetsCompressed(in place)" in text
    assert "[RecordBatch.setMaxTimestamp]" in text and "first_offset                       100" in text
    (b,) = batches(out_file.read_bytes())
    assert b.last_offset == 101 and b.max_timestamp == NOW


def test_explain_produce_rejection_and_json(files):
    p, _ = files
    rc, text = run(["explain", "produce", str(p), "-c", "message.timestamp.difference.max.ms=0", "--now", str(NOW),
                    "--json"])
    assert rc == 1
    obj = json.loads(text)
    assert obj["outcome"] == "rejected" and obj["error"] == "InvalidTimestampException" and obj["error_code"] == 32
    assert [e[1] for e in obj["record_errors"]] == [0, 1] and obj["trace"][-1]["decision"].startswith("rejected")
    rc, text = run(["explain", "produce", str(p), "-c", "message.timestamp.difference.max.ms=0", "--now", str(NOW)])
    assert "outcome: REJECTED with InvalidTimestampException (error code 32)" in text
    assert "record error: batch 0 record 1" in text


def test_explain_fetch_cost_table_and_json(files, tmp_path):
    _, log = files
    rc, text = run(["explain", "fetch", str(log), "--fetch-version", "3"])
    assert rc == 0 and "outcome: DOWN-CONVERTED to v1" in text
    assert "decompressions                   1" in text and "compressions                     1" in text
    rc, text = run(["explain", "fetch", str(log), "--client-magic", "2", "--json"])
    obj = json.loads(text)
    assert obj["zero_copy"] and obj["decompressions"] == 0 and obj["trace"]
    rc, text = run(["explain", "fetch", str(log), "--fetch-version", "3", "-c", "message.downconversion.enable=false"])
    assert rc == 1 and "outcome: ERROR UNSUPPORTED_VERSION" in text
    out_file = tmp_path / "f.bin"
    run(["explain", "fetch", str(log), "--fetch-version", "1", "-o", str(out_file)])
    assert {b.magic for b in batches(out_file.read_bytes())} == {0}


def test_main_reports_bad_config(files, capsys):
    p, _ = files
    assert main(["explain", "produce", str(p), "-c", "message.timestamp.type=Bogus"]) == 1
    assert "ConfigError" in capsys.readouterr().err
    assert parse_topic_config(["cleanup.policy=compact"]).compacted
