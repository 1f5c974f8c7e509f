"""lz4 wrappers cleaned by the release's own cleaner and by ``kafkafmt clean --kafka-line X``: the rebuilt
wrappers' blocks are those of the release's lz4-java (row ``codec.lz4_java``: liblz4 r100 on 0.9, r123 from
0.10.0 to 2.0).

Each release's own ``kafka.log.Log`` writes a partition of lz4 message sets (v0 on 0.9.0.1, v1 on 0.10.0.1 and
0.10.2.2, v2 batches on 1.1.1) whose keys repeat, so cleaning leaves holes and every set is rebuilt from its
retained records; one pass of the release's cleaner thread cleans it (:mod:`kafkarig.old_cleaner`) and
``kafkafmt clean`` a copy; every ``.log`` (bytes and modification time), ``.index``, ``.timeindex``,
``leader-epoch-checkpoint`` and ``cleaner-offset-checkpoint`` must be byte-identical.  Kept honest: some rebuilt
block of each release before 2.1 is one liblz4 1.10 would not write.
"""
from __future__ import annotations

import gzip
import random
import shutil
from pathlib import Path

import pytest

from kafkafmt import kafka_lines
from kafkafmt.cli import main
from kafkafmt.compression import compress, decompress, kafka_line_codecs
from kafkafmt.constants import RECORD_BATCH_OVERHEAD, CompressionType, TimestampType
from kafkafmt.log.cleaner import compared
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from kafkafmt.records.legacy import encode_legacy_entry
from old_release_fixtures import releases_or_skip

pytestmark = [pytest.mark.java]

T0 = 1_700_000_000_000
NOW = T0 + 5_000
PROPS = {"cleanup.policy": "compact", "segment.bytes": "4096", "min.cleanable.dirty.ratio": "0.01",
         "file.delete.delay.ms": "0", "delete.retention.ms": "100"}
MAX_MESSAGE = 1000012
#: release → (line, record version written)
RELEASES = compared.LZ4_RELEASES


#: every value ends with these 12 bytes after a random one: a set's last 12 bytes repeat the previous value's, a
#: match liblz4 1.8.3 and later start 12 bytes before the end and r100/r123 do not look for (MFLIMIT)
TAIL = b"-tail-tail-t"


def workload(line: str, magic: int, seed: int = 1) -> list[tuple[int, bytes]]:
    """30 lz4 sets of 8 records, keys from 200 (most sets keep most of theirs, with holes), each value ending with
    :data:`TAIL`, 10 ms apart: ``(append time, bytes)`` with consecutive offsets; compressed as a producer of the
    release's line compresses them (0.9.0.1's cleaner recompresses even a set it keeps whole: LogCleaner.cleanInto,
    which only 0.10.0 taught to write the original set back)."""
    with kafka_line_codecs(line):
        return _workload(magic, seed)


def _workload(magic: int, seed: int) -> list[tuple[int, bytes]]:
    rnd, out, offset = random.Random(seed), [], 0
    for i in range(30):
        ts = T0 + i * 10
        b = MemoryRecordsBuilder(magic, CompressionType.LZ4, TimestampType.CREATE_TIME, offset,
                                 partition_leader_epoch=0 if magic >= 2 else -1)
        for _ in range(8):
            b.append(ts, b"k%d" % rnd.randrange(200), rnd.randbytes(rnd.randrange(0, 6)) +
                     b"value-%d" % rnd.randrange(1000) + rnd.randbytes(1) + TAIL)
        out.append((ts, b.build()))
        offset += 8
    return out


def state(root: Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and (p.suffix in (".log", ".index", ".timeindex")
                            or p.name in ("leader-epoch-checkpoint", "cleaner-offset-checkpoint")):
            out[str(p.relative_to(root))] = (p.read_bytes(), p.stat().st_mtime_ns // 1_000_000 if p.suffix == ".log"
                                             else None)
    return out


@pytest.fixture(scope="module", params=list(RELEASES))
def cleaned(request, tmp_path_factory):
    version = request.param
    releases_or_skip(version)
    from kafkarig.old_cleaner import OldCleaner
    line, magic = RELEASES[version]
    root = tmp_path_factory.mktemp(f"old-cleaner-lz4-{version}")
    a, b = root / "kafka", root / "kafkafmt"
    with OldCleaner(version) as kafka:
        end = kafka.write(a / "t-0", PROPS, workload(line, magic))
        shutil.copytree(a, b, copy_function=shutil.copy2)
        kafka.clean(a / "t-0", now=NOW, props=PROPS, recovery_point=end, dedupe_buffer_size=1 << 20,
                    max_message_size=MAX_MESSAGE)
    return version, line, a, b


def test_kafkafmt_cleans_lz4_as_the_release(cleaned, capsys):
    version, line, theirs, copy = cleaned
    args = ["clean", str(copy / "t-0"), "--now", str(NOW), "--kafka-line", line,
            "-c", "log.cleaner.dedupe.buffer.size=1048576", "-c", f"message.max.bytes={MAX_MESSAGE}"]
    for k, v in PROPS.items():
        args += ["-c", f"{k}={v}"]
    assert main(args) == 0, capsys.readouterr().err
    mine, real = state(copy), state(theirs)
    assert sorted(n for n in set(mine) | set(real) if mine.get(n) != real.get(n)) == []


def test_the_rebuilt_blocks_are_the_release_s_lz4(cleaned):
    """Kept honest: the sets the release's cleaner rebuilt (records removed) hold lz4 blocks liblz4 1.10 would
    not write, so a model compressing with it fails above."""
    version, _, theirs, _ = cleaned
    differ = 0
    for log in sorted((theirs / "t-0").glob("*.log")):
        data = log.read_bytes()
        for bt in MemoryRecords(data).batches():
            if bt.compression_id != CompressionType.LZ4 or len(list(bt.records())) == 8:
                continue  # a set kept whole may be the producer's own bytes: only the rebuilt ones count
            payload = bytes(bt.message.value) if bt.magic < 2 else data[bt.position + RECORD_BATCH_OVERHEAD:bt.end]
            inner = decompress(CompressionType.LZ4, payload, magic=bt.magic)
            differ += compress(CompressionType.LZ4, inner, magic=bt.magic, line="3.9") != payload
    assert differ > 0, version


# --------------------------------------------- a set kept whole: 0.9.0.1 recompresses it, 0.10.0 writes it back
FOREIGN_PROPS = {**PROPS, "segment.bytes": "1024"}


def foreign_gzip_sets(n: int = 12, per: int = 4, keys: int = compared.WORKLOADS["foreign-gzip"][2],
                      seed: int = 5) -> list[tuple[int, bytes]]:
    """``n`` v0 gzip sets of ``per`` messages (absolute inner offsets, as a 0.9 leader stores them) whose value
    is Python's gzip at level 9 (header XFL 2, OS 255), not the JDK's GZIPOutputStream: bytes no release writes
    itself, so a set a cleaner recompresses changes even when it keeps every message."""
    rnd, out, off = random.Random(seed), [], 0
    for i in range(n):
        inner = b"".join(encode_legacy_entry(off + j, 0, 0, -1, b"k%d" % rnd.randrange(keys), b"v%d" % (off + j))
                         for j in range(per))
        payload = gzip.compress(inner, compresslevel=9, mtime=0)
        out.append((T0 + i * 10, encode_legacy_entry(off + per - 1, 0, int(CompressionType.GZIP), -1, None, payload)))
        off += per
    return out


@pytest.fixture(scope="module", params=list(compared.FOREIGN_GZIP_RELEASES))
def foreign_cleaned(request, tmp_path_factory):
    version = request.param
    releases_or_skip(version)
    from kafkarig.old_cleaner import OldCleaner
    line = compared.FOREIGN_GZIP_RELEASES[version]
    props = FOREIGN_PROPS if line == "0.9" else {**FOREIGN_PROPS, "message.format.version": "0.9.0"}  # KAFKA-4298
    root = tmp_path_factory.mktemp(f"old-cleaner-foreign-{version}")
    a, b = root / "kafka", root / "kafkafmt"
    with OldCleaner(version) as kafka:
        end = kafka.write(a / "t-0", props, foreign_gzip_sets())
        shutil.copytree(a, b, copy_function=shutil.copy2)
        before = {bt.last_offset: bytes(bt.raw) for p in sorted((a / "t-0").glob("*.log"))
                  for bt in MemoryRecords(p.read_bytes()).batches()}
        kafka.clean(a / "t-0", now=NOW, props=props, recovery_point=end, dedupe_buffer_size=1 << 20,
                    max_message_size=MAX_MESSAGE)
    return version, line, props, a, b, before


def test_kafkafmt_cleans_foreign_gzip_sets_as_the_release(foreign_cleaned, capsys):
    """Row cleaner.keep_whole_wrapper: 0.9's cleanInto recompresses every set with a retained message, 0.10.0's
    writes a set kept whole back as it was; ``kafkafmt clean --kafka-line`` leaves the release's bytes."""
    version, line, props, theirs, copy, _ = foreign_cleaned
    args = ["clean", str(copy / "t-0"), "--now", str(NOW), "--kafka-line", line,
            "-c", "log.cleaner.dedupe.buffer.size=1048576", "-c", f"message.max.bytes={MAX_MESSAGE}"]
    for k, v in props.items():
        args += ["-c", f"{k}={v}"]
    assert main(args) == 0, capsys.readouterr().err
    mine, real = state(copy), state(theirs)
    assert sorted(n for n in set(mine) | set(real) if mine.get(n) != real.get(n)) == []


def test_a_set_kept_whole_is_recompressed_only_by_0_9(foreign_cleaned):
    """Kept honest: the release's own cleaner kept some sets whole; 0.9.0.1 gave those new bytes, 0.10.0.1 none."""
    version, line, _, theirs, _, before = foreign_cleaned
    whole = {}
    for log in sorted((theirs / "t-0").glob("*.log")):
        if int(log.stem) >= max(int(p.stem) for p in (theirs / "t-0").glob("*.log")):
            continue  # the active segment is never cleaned
        for bt in MemoryRecords(log.read_bytes()).batches():
            if len(list(bt.records())) == 4:
                whole[bt.last_offset] = bytes(bt.raw) != before[bt.last_offset]
    assert whole, "no set kept whole in the cleaned range: the workload misses its point"
    rewritten = not kafka_lines.value("cleaner.keep_whole_wrapper", line)
    assert set(whole.values()) == {rewritten}, (version, whole)
