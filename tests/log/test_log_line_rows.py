"""The log's rows of kafkafmt.kafka_lines, offline: what a Log of an old Kafka line writes and decides.

Each test drives a :class:`Log` configured with ``--kafka-line`` and checks one row's effect on the files or
decisions; the live comparison with 0.10.0.1 and 0.10.1.1 brokers is tests/history/test_time_index_live.py.
"""
from __future__ import annotations

from conftest import START
from kafkafmt import kafka_lines
from kafkafmt.config import BrokerConfig
from kafkafmt.constants import CompressionType
from kafkafmt.log import Log, LogConfig
from kafkafmt.records.builder import build_records

TOPIC = {"segment.bytes": "700", "index.interval.bytes": "100", "segment.index.bytes": "1200",
         "message.format.version": "0.10.0"}


def _config(line: str) -> LogConfig:
    return LogConfig.from_properties(TOPIC, broker=BrokerConfig.from_properties(
        {"inter.broker.protocol.version": "0.10.0"}, kafka_line=line))


def _v1(first: int, count: int, compression: str = "none") -> bytes:
    return build_records([(START + first + i, f"k{first + i}".encode(), f"value-{first + i}".encode())
                          for i in range(count)], magic=1, compression=CompressionType[compression.upper()])


def _write(log: Log) -> None:
    for i in range(4):
        log.append_as_leader(_v1(3 * i, 3))


def test_offset_index_maps_the_first_offset_of_an_append_before_2_0(tmp_path, clock):
    """Row log.offset_index_key (KAFKA-6264): 0.10 … 1.1 index an append by its first offset, 2.0+ by its last."""
    keys = {}
    for line in ("0.10.1", "1.1", "2.0", "2.8"):
        log = Log(tmp_path / line / "t-0", _config(line), clock)
        _write(log)
        keys[line] = [e.offset for e in log.active_segment.offset_index]
        log.close()
    assert keys["0.10.1"] == keys["1.1"] == [3, 6, 9] and keys["2.0"] == keys["2.8"] == [5, 8, 11]
    assert kafka_lines.value("log.offset_index_key", "1.1") == "first offset"


def test_recovery_indexes_the_first_offset_of_a_message_set_before_2_0(tmp_path, clock):
    keys = {}
    for line in ("0.10.1", "2.0"):
        d = tmp_path / line / "t-0"
        log = Log(d, _config(line), clock)
        for first in (0, 3, 6):
            log.append_as_leader(_v1(first, 3, "gzip"))
        log.crash()
        log = Log.open(d, _config(line), clock, clean_shutdown=False, recovery_point=0)
        keys[line] = [e.offset for e in log.active_segment.offset_index]
        log.close()
    assert keys == {"0.10.1": [3, 6], "2.0": [5, 8]}  # a gzip wrapper at offset 5 holds 3, 4, 5


def test_index_decided_per_append_before_3_9(tmp_path, clock):
    """Row log.index_granularity (KAFKA-806): one uncompressed v1 append of 9 messages, 43 bytes each."""
    entries = {}
    for line in ("2.8", "3.9"):
        log = Log(tmp_path / line / "t-0", _config(line), clock)
        log.append_as_leader(_v1(0, 9))
        entries[line] = len(log.active_segment.offset_index)
        assert log.index_granularity == kafka_lines.value("log.index_granularity", line)
        log.close()
    assert entries == {"2.8": 0, "3.9": 2}


def test_a_segment_without_time_index_gets_one_preallocated_on_0_10_1_empty_from_0_10_2(tmp_path, clock):
    """Row log.time_index_on_load (KAFKA-4734): a 0.10.0 segment loaded by 0.10.1 and by 0.10.2."""
    sizes = {}
    for line in ("0.10.1", "0.10.2"):
        d = tmp_path / line / "t-0"
        log = Log(d, _config("0.10.0"), clock)
        _write(log)
        log.roll()
        log.append_as_leader(_v1(12, 1))
        log.close()
        assert not list(d.glob("*.timeindex"))
        log = Log.open(d, _config(line), clock)
        sizes[line] = (d / "00000000000000000000.timeindex").stat().st_size
        log.close()
        assert (d / "00000000000000000000.timeindex").stat().st_size == 0  # closing trims it
    assert sizes == {"0.10.1": 1200, "0.10.2": 0}


def test_segment_ms_counts_from_creation_before_0_10_1(tmp_path, clock):
    """Row log.roll_time (KIP-33): a record 8 days newer than the first does not roll a 0.10.0 segment."""
    rolled = {}
    for line in ("0.10.0", "0.10.1"):
        log = Log(tmp_path / line / "t-0", _config(line), clock)
        log.append_as_leader(_v1(0, 1))
        log.append_as_leader(_v1(8 * 86_400_000, 1))
        rolled[line] = log.number_of_segments
        log.close()
    assert rolled == {"0.10.0": 1, "0.10.1": 2}
