"""Recovery of a damaged active segment (kafka-rules §7.5, LogSegment.recover; FileLogInputStream rules §0).

For a truncation or a one-byte corruption at every byte position of the active segment, recovery must
keep exactly the valid prefix and rebuild indexes equal to (a) the ones derived from the per-batch rule
of §6.5 and (b) the ones obtained by recovering a clean copy of that prefix.

Which prefix is valid follows from the formats: a v2 batch's CRC32C covers bytes 21.. (attributes to the
end); baseOffset (0-7), partitionLeaderEpoch (12-15) and magic (16) are outside it (§11.1), so flipping
the leader epoch or turning magic 2 into another value >= 2 leaves the batch valid (FileLogInputStream
has no upper bound on the magic).  A v0/v1 message's CRC32 covers magic to the end.  Flips of the offset
fields change offsets instead of invalidating the batch; those are compared with Kafka itself in
test_log_vs_kafka.py.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafkafmt.log import Log, LogConfig, LogSegment, SimulatedClock
from kafkafmt.log.index import OffsetPosition, TimestampOffset
from kafkafmt.records import MemoryRecords
from log_helpers import batch

T0 = 1_700_000_000_000
INTERVAL = 150


def _payload():
    """A mixed active segment: v2 (one and many records, LogAppendTime, gzip), v1 and v0 messages."""
    parts = []
    off = 0

    def add(data):
        nonlocal off
        parts.append(data)
        off = list(MemoryRecords(data).batches())[-1].last_offset + 1

    add(batch(off, [(T0 + 5, b"a", b"x" * 30)]))
    add(batch(off, [(T0 + 1, b"b", b"y" * 10), (T0 + 9, b"c", b"z" * 40), (T0 + 3, None, b"w")]))
    add(batch(off, [(T0 + 2, b"d", b"q" * 25)], lat=T0 + 50))
    add(batch(off, [(T0 + 60, b"e", b"r" * 20)], magic=1))
    add(batch(off, [(-1, b"f", b"s" * 20)], magic=0))
    add(batch(off, [(T0 + 40, b"g", b"t" * 60), (T0 + 70, b"h", b"u" * 60)], compression="gzip"))
    add(batch(off, [(T0 + 65, b"i", b"v" * 15)], magic=1, compression="gzip"))
    add(batch(off, [(T0 + 80, None, b"z" * 35)]))
    return b"".join(parts)


PAYLOAD = _payload()
BATCHES = [(b.position, b.size_in_bytes, b.last_offset, b.max_timestamp, b.magic)
           for b in MemoryRecords(PAYLOAD).batches()]


def expected_indexes(valid: int):
    """§6.5 recover(): per batch, an entry when position - lastIndexedPosition > index.interval.bytes;
    time entries carry (running max of batch.maxTimestamp, its batch's last offset), plus a final one."""
    offsets, times = [], []
    last_indexed, max_ts, shallow = 0, -1, 0
    for pos, size, last, mts, _ in BATCHES:
        if pos + size > valid:
            break
        if mts > max_ts:
            max_ts, shallow = mts, last
        if pos - last_indexed > INTERVAL:
            offsets.append(OffsetPosition(last, pos))
            if max_ts > (times[-1].timestamp if times else -1):
                times.append(TimestampOffset(max_ts, shallow))
            last_indexed = pos
    if max_ts > (times[-1].timestamp if times else -1):
        times.append(TimestampOffset(max_ts, shallow))
    return offsets, times


def _recover(dir: Path, data: bytes, clock):
    """Put ``data`` as the .log of a fresh one-segment directory and recover it; return (segment, truncated)."""
    for p in dir.iterdir():
        p.unlink()
    (dir / "00000000000000000000.log").write_bytes(data)
    cfg = LogConfig(index_interval_bytes=INTERVAL, segment_index_bytes=240)
    seg = LogSegment.open(dir, 0, cfg, clock, file_already_exists=True, durable=False)
    truncated = seg.recover()
    seg.close()
    return truncated


def _files(dir: Path):
    return {p.name: p.read_bytes() for p in dir.iterdir() if p.name.endswith((".log", ".index", ".timeindex"))}


def _valid_prefix_after_flip(k: int) -> int:
    for pos, size, _, _, magic in BATCHES:
        if pos <= k < pos + size:
            r = k - pos
            if magic >= 2 and (12 <= r < 16 or (r == 16 and (PAYLOAD[k] ^ 0x5A) < 128 and (PAYLOAD[k] ^ 0x5A) >= 2)):
                return len(PAYLOAD)  # outside the v2 CRC: the batch stays valid
            return pos
    return len(PAYLOAD)


def _offset_field(k: int) -> bool:
    return any(pos <= k < pos + 8 for pos, *_ in BATCHES)


@pytest.fixture
def scratch(tmp_path):
    a, b = tmp_path / "damaged", tmp_path / "clean"
    a.mkdir()
    b.mkdir()
    return a, b


def test_payload_has_entries_to_rebuild():
    offsets, times = expected_indexes(len(PAYLOAD))
    assert len(offsets) >= 3 and len(times) >= 3 and len(BATCHES) == 8


@pytest.mark.parametrize("mode", ["truncate", "flip"])
def test_recovery_keeps_the_valid_prefix_and_rebuilds_indexes(scratch, mode):
    damaged, clean = scratch
    clock = SimulatedClock(T0)
    boundaries = [0] + [pos + size for pos, size, *_ in BATCHES]
    checked = 0
    for k in range(len(PAYLOAD) + (1 if mode == "truncate" else 0)):
        if mode == "truncate":
            data = PAYLOAD[:k]
            valid = max(b for b in boundaries if b <= k)  # a partial batch ends the walk
        else:
            if _offset_field(k):
                continue
            raw = bytearray(PAYLOAD)
            raw[k] ^= 0x5A
            data = bytes(raw)
            valid = _valid_prefix_after_flip(k)
        truncated = _recover(damaged, data, clock)
        got = _files(damaged)
        assert truncated == len(data) - valid, k
        assert got["00000000000000000000.log"] == data[:valid], k
        # (a) the rule
        seg = LogSegment.open(damaged, 0, LogConfig(index_interval_bytes=INTERVAL, segment_index_bytes=240), clock,
                              file_already_exists=True)
        offsets, times = expected_indexes(valid)
        assert seg.offset_index.all_entries() == offsets, k
        assert seg.time_index.all_entries() == times, k
        seg.close_handlers()
        # (b) a clean copy of the prefix, recovered
        _recover(clean, data[:valid], clock)
        assert got == _files(clean), k
        checked += 1
    assert checked > 500


def test_log_level_recovery_deletes_later_segments_and_sets_the_log_end_offset(tmp_path):
    """§7.5: recover from the segment holding the recovery point; if bytes were cut, later segments go."""
    clock = SimulatedClock(T0)
    cfg = LogConfig(segment_bytes=len(PAYLOAD), index_interval_bytes=INTERVAL, segment_index_bytes=240)
    src = tmp_path / "src" / "t-0"
    log = Log(src, cfg, clock)
    log.append_as_follower(PAYLOAD)  # segment 0: the whole payload
    nxt = BATCHES[-1][2] + 1
    log.append_as_follower(batch(nxt, [(T0 + 90, b"k", b"v")]))  # rolls: segment at nxt
    log.append_as_follower(batch(nxt + 1, [(T0 + 91, b"k", b"v")]))
    rp = log.recovery_point
    assert rp == nxt and [s.base_offset for s in log.segments] == [0, nxt]
    log.crash()
    ks = sorted(set(range(0, len(PAYLOAD), 23)) | {p for p, *_ in BATCHES})
    assert any(k in {p for p, *_ in BATCHES} for k in ks)
    for k in ks:
        d = tmp_path / f"k{k}" / "t-0"
        shutil.copytree(src, d)
        (d.parent / "recovery-point-offset-checkpoint").write_text("0\n1\nt 0 0\n")  # as if never flushed
        (d / "00000000000000000000.log").write_bytes(PAYLOAD[:k])
        again = Log.open(d, cfg, clock, clean_shutdown=False)
        valid = max(b for b in [0] + [p + s for p, s, *_ in BATCHES] if b <= k)
        last = max([lo for p, s, lo, *_ in BATCHES if p + s <= valid], default=-1)
        if valid < k:  # bytes were cut by recovery: every later segment is deleted
            assert [s.base_offset for s in again.segments] == [0] and again.log_end_offset == last + 1
            assert not (d / f"{nxt:020d}.log").exists()
        else:  # the damage ended on a batch boundary: nothing to cut, the later segment stays
            assert [s.base_offset for s in again.segments] == [0, nxt] and again.log_end_offset == nxt + 2
        assert again.recovery_point == min(0, again.log_end_offset)
        again.close()
        shutil.rmtree(tmp_path / f"k{k}")
