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

import random
import shutil
from pathlib import Path

import pytest

from kafkafmt.cli import main
from kafkafmt.compression import compress, decompress, kafka_line_codecs
from kafkafmt.constants import RECORD_BATCH_OVERHEAD, CompressionType, TimestampType
from kafkafmt.log.cleaner import compared
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
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
