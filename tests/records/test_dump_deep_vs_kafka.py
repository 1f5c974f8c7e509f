"""``kafkafmt dump --deep`` through the columnar reading core, line for line against Kafka 3.9.2's
``kafka-dump-log --deep-iteration`` (``kafka.tools.DumpLogSegments`` from the jars, one JVM).

The segment mixes what the record lines carry: headers (several keys, none, non-ASCII),
CreateTime and LogAppendTime, producer ids and sequences, every
codec, a transaction marker and a v1 batch (reference path) between v2 groups, an offset gap (the
"Non-consecutive offsets" report) and a batch whose CRC is wrong (``isvalid: false``)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ci_mode import skip_or_fail
from kafkafmt import cli
from kafkafmt.constants import CompressionType, ControlRecordType, TimestampType
from kafkafmt.layout import DEFAULT_BATCH
from kafkafmt.records import MemoryRecordsBuilder, end_txn_marker
from kafkafmt.records import dump_log as dump_module
from kafkarig.oracle import LIB_DIR

T0 = 1_700_000_000_000
DEFAULT_BATCH_CRC_OFFSET = DEFAULT_BATCH.offset_of("crc")


def _batch(base: int, n: int, codec="none", *, ts_type=TimestampType.CREATE_TIME, headers=(), **kw) -> bytes:
    b = MemoryRecordsBuilder(2, CompressionType.from_name(codec), ts_type, base, **kw)
    for i in range(n):
        b.append(T0 + base + i, None if i % 3 == 0 else b"k%d" % i, None if i % 5 == 4 else b"v" * i,
                 headers if i % 2 else ())
    return b.build()


def _v1(base: int) -> bytes:
    b = MemoryRecordsBuilder(1, CompressionType.NONE, TimestampType.CREATE_TIME, base)
    b.append(T0, b"old", b"v1")
    return b.build()


def _segment() -> bytes:
    parts = [_batch(0, 5, headers=(("trace", b"1"), ("span", None))),
             _batch(5, 7, "lz4", producer_id=7, producer_epoch=1, base_sequence=3),
             _batch(12, 4, "gzip", ts_type=TimestampType.LOG_APPEND_TIME, log_append_time=T0 + 99),
             _batch(16, 3, "snappy", producer_id=9, producer_epoch=0, base_sequence=0, is_transactional=True),
             end_txn_marker(base_offset=19, timestamp=T0 + 20, partition_leader_epoch=0, producer_id=9,
                            producer_epoch=0, control_type=ControlRecordType.COMMIT, coordinator_epoch=2),
             _batch(20, 6, "zstd", headers=(("k\u00e9y", b"x"),)),
             _v1(26),
             _batch(40, 3, headers=(("a", b"v"), ("b", b"w"))),  # a gap: 26 is followed by 40
             _batch(43, 4)]
    bad = bytearray(_batch(47, 2, "lz4"))
    bad[DEFAULT_BATCH_CRC_OFFSET] ^= 1  # a flipped stored CRC: the batch no longer matches it
    return b"".join(parts) + bytes(bad)


def _kafka_dump(path) -> list[str]:
    if shutil.which("java") is None or not any(LIB_DIR.glob("kafka_2.13-*.jar")):
        skip_or_fail("Java or Kafka 3.9.2's jars missing: run `make -C conformance jars`")
    p = subprocess.run(["java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", f"{LIB_DIR}{os.sep}*",
                        "kafka.tools.DumpLogSegments", "--deep-iteration", "--files", str(path)],
                       capture_output=True, text=True, timeout=120)
    return p.stdout.splitlines() + [line for line in p.stderr.splitlines() if not line.startswith(("SLF4J", "log4j:"))]


@pytest.mark.parametrize("group_bytes", [8 << 20, 200])
def test_deep_dump_through_the_columnar_core_is_kafkas(tmp_path, capsys, monkeypatch, group_bytes):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_segment())
    monkeypatch.setattr(dump_module, "_COLUMNAR_GROUP_BYTES", group_bytes)
    monkeypatch.setattr(dump_module, "COLUMNAR_MIN_BYTES", 0)  # this small file too
    calls = []
    real = dump_module._columnar_lines
    monkeypatch.setattr(dump_module, "_columnar_lines", lambda buf, held: calls.append(r := real(buf, held)) or r)
    assert cli.main(["dump", "--deep", str(path)]) == 0
    out = capsys.readouterr()
    ours = out.out.splitlines() + out.err.splitlines()
    assert any(c is not None for c in calls), "no v2 group went through the columnar core"
    assert ours == _kafka_dump(path)


def test_a_small_file_is_dumped_without_the_columnar_core_as_kafka_does(tmp_path, capsys, monkeypatch):
    """Below ``COLUMNAR_MIN_BYTES`` the reference decoder prints every line: the core (numba, pyarrow) is
    never loaded for a small file, and the lines are still kafka-dump-log's."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_segment())
    assert path.stat().st_size < dump_module.COLUMNAR_MIN_BYTES
    monkeypatch.setattr(dump_module, "_columnar_lines", lambda buf, held: pytest.fail("the columnar core was used"))
    assert cli.main(["dump", "--deep", str(path)]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines() + out.err.splitlines() == _kafka_dump(path)
