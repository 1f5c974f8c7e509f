"""The cleaner's settings and offset map (CleanerConfig, SkimpyOffsetMap): Kafka's names, defaults and capacity."""
from __future__ import annotations

import pytest

from kafkafmt.errors import ConfigError, IllegalArgumentError
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner_map import CleanerConfig, OffsetMap


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
