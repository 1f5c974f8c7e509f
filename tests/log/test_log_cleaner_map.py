"""The cleaner's settings and offset map (CleanerConfig, SkimpyOffsetMap): Kafka's names, defaults and capacity."""
from __future__ import annotations

import pytest

from kafkafmt.errors import ConfigError, IllegalArgumentError
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner.filter import LastRecord
from kafkafmt.log.cleaner.offset_map import CleanerConfig, OffsetMap


def test_defaults_are_a_brokers():
    c = CleanerConfig()
    assert (c.num_threads, c.dedupe_buffer_size, c.load_factor, c.io_buffer_size) == (1, 128 << 20, 0.9, 512 << 10)
    assert c.io_buffer_per_thread == 256 << 10


def test_capacity_rule():
    """24 bytes per entry (MD5 + offset), per thread, at most Int.MaxValue bytes."""
    c = CleanerConfig.from_properties({"log.cleaner.dedupe.buffer.size": "1000", "log.cleaner.threads": "2"})
    assert c.memory_per_thread == 500 and c.offset_map().slots == 20
    assert CleanerConfig(dedupe_buffer_size=10 << 30).memory_per_thread == 2**31 - 1


def test_map_keeps_latest_offset_and_counts_distinct_keys():
    m = OffsetMap(24 * 10)
    m.put(b"a", 1)
    m.put(b"b", 2)
    m.put(b"a", 5)
    assert (m.size, m.get(b"a"), m.get(b"b"), m.get(b"c"), m.latest_offset) == (2, 5, 2, -1, 5)


def test_bad_settings():
    with pytest.raises(ConfigError, match="Unknown cleaner configuration"):
        CleanerConfig.from_properties({"log.cleaner.nope": "1"})
    with pytest.raises(ConfigError, match="not a int"):
        CleanerConfig.from_properties({"log.cleaner.threads": "x"})


def test_a_map_too_small_for_one_key_is_refused(tmp_path):
    log = Log(tmp_path / "t-0", LogConfig.from_properties({"cleanup.policy": "compact"}), SimulatedClock(0))
    with pytest.raises(IllegalArgumentError, match="offset map is too small"):
        log.clean(now=0, cleaner=CleanerConfig(dedupe_buffer_size=24))
    log.close()


def test_the_map_is_the_dedupe_buffer_whatever_the_keys():
    """SkimpyOffsetMap's memory: slots x (16-byte MD5 + 8-byte offset), allocated once, not grown per key."""
    m = OffsetMap(24 * 1000 + 7)
    assert m.slots == 1000 and m.hashes.nbytes + m.offsets.nbytes == 24 * 1000
    for i in range(900):  # Kafka's load factor 0.9: as full as the cleaner lets it get
        m.put(b"key-%d" % i, 10 * i)
    m.put(b"key-3", 7)
    assert m.size == 900 and m.hashes.nbytes + m.offsets.nbytes == 24 * 1000
    assert [m.get(b"key-%d" % i) for i in range(900)] == [7 if i == 3 else 10 * i for i in range(900)]
    assert m.get(b"absent") == -1 and m.latest_offset == 7
    m.clear()
    assert (m.size, m.latest_offset, m.get(b"key-1")) == (0, -1, -1)
    assert not m.hashes.any() and not m.offsets.any()  # every slot empty again, not just forgotten
    m.put(b"key-5", 1)
    assert (m.size, m.get(b"key-5"), m.get(b"key-3")) == (1, 1, -1)


def test_a_thread_keeps_its_map_between_passes():
    """CleanerThread's Cleaner allocates its SkimpyOffsetMap once: one map per thread and size."""
    import threading
    a, b = CleanerConfig(dedupe_buffer_size=24 * 100), CleanerConfig(dedupe_buffer_size=24 * 200)
    first = a.offset_map()
    assert a.offset_map() is first and CleanerConfig(dedupe_buffer_size=24 * 100).offset_map() is first
    other = []
    t = threading.Thread(target=lambda: other.append(a.offset_map()))
    t.start()
    t.join()
    assert other[0] is not first and other[0].slots == 100
    assert b.offset_map() is not first and b.offset_map().slots == 200
    from kafkafmt.log.cleaner.offset_map import release_offset_map
    kept = b.offset_map()
    assert release_offset_map() and not release_offset_map()
    assert b.offset_map() is not kept and b.offset_map().slots == 200


def test_a_full_map_still_finds_every_key_and_misses_the_rest():
    """Probing runs on past the 12th digest byte linearly (positionOf), and get gives up after
    slots + 12 attempts: every slot taken, each key is still found and an absent one gives -1."""
    m = OffsetMap(24 * 64)
    for i in range(64):
        m.put(b"k%d" % i, i)
    assert m.size == 64 and all(m.get(b"k%d" % i) == i for i in range(64)) and m.get(b"other") == -1


def test_probe_positions_follow_kafka():
    """positionOf(hash, attempt): the big-endian int at byte min(attempt, 12), plus attempt - 12 beyond,
    Utils.abs (Integer.MIN_VALUE -> 0), modulo the slots."""
    import numpy as np

    from kafkafmt.log.cleaner.table import _slot
    dig = np.array([0x80, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF] + [0] * 4 + [0, 0, 0, 9], np.uint8)
    assert _slot.py_func(dig, 0, 7) == 0  # Integer.MIN_VALUE
    assert _slot.py_func(dig, 4, 7) == 1  # -1 -> abs 1
    assert _slot.py_func(dig, 12, 7) == 9 % 7 and _slot.py_func(dig, 15, 7) == (9 + 3) % 7


def test_producer_state_replays_epochs_markers_and_open_transactions(tmp_path):
    """ProducerStateManager's replay: an idempotent producer's last data batch; a transaction committed then
    another left open (the first unstable offset); a marker of a newer epoch forgets the last data offset;
    an idle producer expires."""
    from kafkafmt.constants import CompressionType, ControlRecordType, TimestampType
    from kafkafmt.log.cleaner import producer_state
    from kafkafmt.records import MemoryRecordsBuilder
    from kafkafmt.records.builder import end_txn_marker
    log = Log(tmp_path / "t-0", LogConfig.from_properties({"cleanup.policy": "compact"}), SimulatedClock(0))
    off = 0

    def data(pid, epoch, ts, txn=False):
        nonlocal off
        b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, off, producer_id=pid,
                                 producer_epoch=epoch, base_sequence=off, is_transactional=txn,
                                 partition_leader_epoch=0)
        b.append(ts, b"k", b"v")
        b.append(ts, b"k", b"w")
        log.append_as_follower(b.build())
        off += 2
        return off - 1

    def marker(pid, epoch, ts, kind):
        nonlocal off
        log.append_as_follower(end_txn_marker(base_offset=off, timestamp=ts, partition_leader_epoch=0, producer_id=pid,
                                              producer_epoch=epoch, coordinator_epoch=0, control_type=kind))
        off += 1

    data(1, 0, 1000)
    last_idempotent = data(1, 0, 5000)
    data(2, 0, 5000, txn=True)
    marker(2, 0, 5000, ControlRecordType.COMMIT)
    open_txn = off
    data(2, 0, 6000, txn=True)
    data(3, 0, 6000)
    marker(3, 1, 6000, ControlRecordType.ABORT)  # a newer epoch's marker: producer 3's data offset is forgotten
    data(4, 0, 10)  # idle since 10
    last, unstable = producer_state(log, now=6000, expiration_ms=5000)
    assert unstable == open_txn
    assert last == {1: LastRecord(last_idempotent, 0), 2: LastRecord(open_txn + 1, 0), 3: LastRecord(None, 1)}
    log.close()
