"""Seed inputs for every fuzz target: valid bytes of each kind, so mutations start from real structure."""
from __future__ import annotations

import contextlib
import functools
import tempfile
from pathlib import Path

from kafkafmt.compression import compress
from kafkafmt.constants import CompressionType
from kafkafmt.errors import KafkaFmtError
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.records import MemoryRecords
from kafkafmt.samples import sample_record_sets
from kafkafmt.spec import dump_json_lines


@functools.lru_cache(maxsize=None)
def record_sets() -> tuple[bytes, ...]:
    """Every sample record set (v0, v1, v2, each codec, wrappers, transactions, mixed magics)."""
    return tuple(data for _, (_, data) in sorted(sample_record_sets().items()))


@functools.lru_cache(maxsize=None)
def _segment_and_indexes() -> tuple[bytes, bytes, bytes]:
    """A real segment written by kafkafmt's Log (offsets assigned, an index entry per batch)."""
    with tempfile.TemporaryDirectory(prefix="kafkafmt-fuzz-seed-") as d:
        log = Log(Path(d) / "t-0", LogConfig(index_interval_bytes=1), SimulatedClock(1_700_000_000_000))
        for data in record_sets():
            with contextlib.suppress(KafkaFmtError):  # some samples are not a valid produce payload
                log.append_as_leader(data)
        log.close()
        seg = Path(d) / "t-0" / "00000000000000000000"
        return tuple(Path(f"{seg}.{ext}").read_bytes() for ext in ("log", "index", "timeindex"))


def segment_bytes() -> bytes:
    return _segment_and_indexes()[0]


def seeds_for(target: str) -> list[bytes]:
    """Seed inputs for ``target`` (see ``targets.TARGETS``)."""
    if target.startswith("codec_"):
        codec = CompressionType.from_name(target[len("codec_"):])
        out = []
        for i, data in enumerate(record_sets()[:4]):
            magic = 2 if codec == CompressionType.ZSTD else i % 3
            out.append(bytes([magic]) + compress(codec, data, magic=magic))
        return out
    if target == "index":
        _, index, timeindex = _segment_and_indexes()
        return [b"\x00" + index, b"\x01" + timeindex]
    if target == "build":
        return ["\n".join(dump_json_lines(MemoryRecords(d).batches())).encode() for d in record_sets()]
    if target == "recovery":
        return [segment_bytes()] + list(record_sets()[:3])
    return list(record_sets())
