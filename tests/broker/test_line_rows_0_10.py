"""Two rows of kafkafmt.kafka_lines that tell 0.10.x from later lines, read by the broker model.

``produce.rebuilt_legacy_inner`` (KIP-98's LogValidator rewrite, 0.11): a gzip v0 message set produced to a
v1 LogAppendTime topic is rebuilt; before 0.11 each inner message keeps CreateTime and -1, only the wrapper
gets LogAppendTime (measured on 0.10.0.1, 0.10.1.1, 0.10.2.2 by tests/history/test_old_releases_live.py).
``broker.message_format_check`` (KAFKA-6238, 1.0.1): KafkaConfig compares log.message.format.version with
inter.broker.protocol.version as ApiVersions before, by record version after.
"""
from __future__ import annotations

import pytest

from kafkafmt import kafka_lines
from kafkafmt.broker.validator import validate_messages_and_assign_offsets
from kafkafmt.config import BrokerConfig, LogConfig
from kafkafmt.errors import ConfigError
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from kafkafmt.records.batch import CompressionType

NOW = 1_700_000_000_000


def _gzip_v0(n: int = 2) -> bytes:
    b = MemoryRecordsBuilder(0, CompressionType.GZIP)
    for i in range(n):
        b.append(-1, b"k%d" % i, b"value-%d" % i)
    return b.build()


def _stored(line: str) -> bytes:
    broker = BrokerConfig.from_properties({"inter.broker.protocol.version": "0.10.0"}, kafka_line=line)
    cfg = LogConfig.from_properties({"message.format.version": "0.10.0", "message.timestamp.type": "LogAppendTime"},
                                    broker=broker)
    return validate_messages_and_assign_offsets(_gzip_v0(), cfg, now=NOW).records


def test_rebuilt_inner_row_values():
    assert [kafka_lines.value("produce.rebuilt_legacy_inner", ln) for ln in ("0.10.0", "0.10.2", "0.11", "3.9")] \
        == ["converted", "converted", "rewritten", "rewritten"]


@pytest.mark.parametrize("line", ["0.10.0", "0.10.1", "0.10.2"])
def test_0_10_keeps_inner_create_time_minus_one(line):
    data = _stored(line)
    assert len(list(MemoryRecords(data).batches())) == 1
    assert data[16:17] == b"\x01" and data[17] == 0x09  # v1 wrapper: gzip + LogAppendTime
    assert int.from_bytes(data[18:26], "big") == NOW
    # inner message header: offset(8) size(4) crc(4) magic attributes timestamp
    inner = _decompressed_inner(data)
    assert [inner[i + 16:i + 18] for i in _starts(inner)] == [b"\x01\x00"] * 2
    assert [inner[i + 18:i + 26] for i in _starts(inner)] == [b"\xff" * 8] * 2


@pytest.mark.parametrize("line", ["0.11", "3.9"])
def test_0_11_on_rewrites_inner_log_append_time(line):
    data = _stored(line)
    assert data[16:18] == b"\x01\x09" and int.from_bytes(data[18:26], "big") == NOW
    inner = _decompressed_inner(data)
    assert [inner[i + 16:i + 18] for i in _starts(inner)] == [b"\x01\x08"] * 2
    assert [int.from_bytes(inner[i + 18:i + 26], "big") for i in _starts(inner)] == [NOW] * 2


def _starts(inner: bytes) -> list[int]:
    """Where each inner message (offset, size, message) starts."""
    out, i = [], 0
    while i < len(inner):
        out.append(i)
        i += 12 + int.from_bytes(inner[i + 8:i + 12], "big")
    return out


def _decompressed_inner(data: bytes) -> bytes:
    import gzip
    value_len = int.from_bytes(data[30:34], "big")  # wrapper: key -1 (26:30), then the value
    return gzip.decompress(data[34:34 + value_len])


@pytest.mark.parametrize("line", ["0.10.0", "0.10.1", "0.10.2", "0.11"])
def test_format_above_ibp_refused_before_kafka_6238(line):
    with pytest.raises(ConfigError, match="^log.message.format.version 0.10.0 cannot be used when "
                                          "inter.broker.protocol.version is set to 0.10.0-IV0$"):
        BrokerConfig.from_properties({"inter.broker.protocol.version": "0.10.0-IV0",
                                      "log.message.format.version": "0.10.0"}, kafka_line=line)


@pytest.mark.parametrize("line", ["1.0", "1.1", "2.8", "3.9"])
def test_same_record_version_accepted_from_kafka_6238(line):
    cfg = BrokerConfig.from_properties({"inter.broker.protocol.version": "0.10.0-IV0",
                                        "log.message.format.version": "0.10.0"}, kafka_line=line)
    assert cfg.topic_defaults["log.message.format.version"] == "0.10.0"
    assert kafka_lines.value("broker.message_format_check", line) == "record version"


@pytest.mark.parametrize("line", ["1.1", "3.9"])
def test_newer_record_version_refused_after_kafka_6238(line):
    with pytest.raises(ConfigError, match="^log.message.format.version 0.11.0 can only be used when "
                                          "inter.broker.protocol.version is set to version 0.11.0 or higher$"):
        BrokerConfig.from_properties({"inter.broker.protocol.version": "0.10.2",
                                      "log.message.format.version": "0.11.0"}, kafka_line=line)


@pytest.mark.parametrize("line", ["0.10.0", "0.10.1", "0.10.2"])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
def test_a_v2_batch_in_produce_v2_is_a_corrupt_legacy_message_on_0_10(line, codec):
    """kafka-python pinned to (0, 11) sends its v2 batch in Produce v2 to a 0.10 broker, which reads it as a
    legacy message whose CRC is the batch's leader-epoch bytes: CORRUPT_MESSAGE (error 2), as 0.10.0.1, 0.10.1.1
    and 0.10.2.2 answered live (tests/history/test_old_releases_live.py, client-produce/python-0.11)."""
    from kafkafmt.errors import CorruptRecordError
    b = MemoryRecordsBuilder(2, codec)
    b.append(NOW, b"k0", b"value-0")
    data = b.build()
    cfg = LogConfig.from_properties({}, broker=BrokerConfig.from_properties({}, kafka_line=line))
    with pytest.raises(CorruptRecordError, match=r"^Message is corrupt \(stored crc = 4294967295, computed crc = "
                                                  rf"{__import__('zlib').crc32(data[16:])}\)") as e:
        validate_messages_and_assign_offsets(data, cfg, now=NOW, produce_version=2)
    assert e.value.error_code == 2
