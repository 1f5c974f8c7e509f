"""The broker's view of the one topic configuration: message.format.version, timestamps, compression (Kafka 3.9)."""
from __future__ import annotations

import pytest

from kafkafmt.config import BrokerConfig, ConfigError, LogConfig, metadata_version_index, record_version
from kafkafmt.constants import INT64_MAX, CompressionType, TimestampType


@pytest.mark.parametrize("version, magic", [
    ("0.8.2", 0), ("0.9.0", 0), ("0.9.0.1", 0),
    ("0.10.0-IV0", 1), ("0.10.0", 1), ("0.10.2", 1), ("0.10.2.1", 1),
    ("0.11.0-IV0", 2), ("0.11.0", 2), ("1.0", 2), ("2.8", 2), ("3.9", 2),
])
def test_record_version_follows_metadata_version_thresholds(version, magic):
    """MetadataVersion.highestSupportedRecordVersion: < IBP_0_10_0_IV0 → V0, < IBP_0_11_0_IV0 → V1, else V2."""
    assert record_version(version) == magic
    assert LogConfig(message_format_version=version).to_magic == magic


def test_version_strings_parse_like_from_version_string():
    """MetadataVersion.fromVersionString: 3 segments for 0.x, 2 after; a release means its latest IV."""
    assert metadata_version_index("0.10.0.1") == metadata_version_index("0.10.0") == metadata_version_index("0.10.0-IV1")
    assert metadata_version_index("2.8.2") == metadata_version_index("2.8-IV1")
    with pytest.raises(ConfigError, match="Version 0.7 is not a valid version"):
        metadata_version_index("0.7")


@pytest.mark.parametrize("ibp, ignored", [("2.8", False), ("3.0-IV0", False), ("3.0-IV1", True), ("3.0", True),
                                          ("3.9", True)])
def test_message_format_ignored_from_ibp_3_0_iv1(ibp, ignored):
    """LogConfig.shouldIgnoreMessageFormatVersion: IBP ≥ 3.0-IV1 → the topic is always v2 (KIP-724)."""
    cfg = LogConfig(message_format_version="0.10.0", broker=BrokerConfig(inter_broker_protocol_version=ibp))
    assert cfg.message_format_ignored is ignored
    assert cfg.to_magic == (2 if ignored else 1)


def test_default_ibp_is_2_8_so_that_old_formats_take_effect():
    """kafkafmt's documented default: IBP 2.8 (Kafka 3.9's own default IBP would ignore message.format.version)."""
    cfg = LogConfig()
    assert cfg.inter_broker_protocol_version == "2.8"
    assert cfg.message_format_version == "3.0-IV1" and cfg.to_magic == 2
    assert LogConfig(message_format_version="0.9.0").to_magic == 0


def test_kip937_before_after_fall_back_to_difference_when_left_at_long_max():
    """LogConfig.getMessageTimestampBeforeMaxMs / AfterMaxMs (Kafka 3.6, KIP-937)."""
    cfg = LogConfig(timestamp_difference_max_ms=5000)
    assert (cfg.effective_before_max_ms, cfg.effective_after_max_ms) == (5000, 5000)
    cfg = LogConfig(timestamp_difference_max_ms=5000, timestamp_before_max_ms=100)
    assert (cfg.effective_before_max_ms, cfg.effective_after_max_ms) == (100, 5000)
    cfg = LogConfig(timestamp_after_max_ms=7)
    assert (cfg.effective_before_max_ms, cfg.effective_after_max_ms) == (INT64_MAX, 7)


def test_seed000_5_timestamp_type_and_threshold_are_per_topic_properties():
    """seed 000 §5: message.timestamp.type and the threshold are per-topic configurations.

    KIP-32 names the threshold ``max.message.time.difference.ms``; Kafka ships it as
    ``message.timestamp.difference.max.ms`` (and, since 3.6, before/after.max.ms).
    """
    cfg = LogConfig.from_properties({"message.timestamp.type": "LogAppendTime",
                                       "message.timestamp.difference.max.ms": "60000",
                                       "cleanup.policy": "compact,delete", "compression.type": "lz4",
                                       "message.format.version": "0.10.2", "max.message.bytes": "2000",
                                       "message.downconversion.enable": "false", "retention.ms": "1"})
    assert cfg.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert cfg.effective_before_max_ms == cfg.effective_after_max_ms == 60000
    assert cfg.compacted and cfg.to_magic == 1 and cfg.max_message_bytes == 2000
    assert cfg.downconversion_enable is False
    assert cfg.target_compression(CompressionType.GZIP) == CompressionType.LZ4
    assert cfg.retention_ms == 1  # a log setting, in the same object
    assert LogConfig.from_properties(cfg.to_properties()).to_magic == 1


def test_broker_compression_type_targets():
    """BrokerCompressionType.targetCompression: producer keeps the source codec; uncompressed (alias none)."""
    assert LogConfig().target_compression(CompressionType.SNAPPY) == CompressionType.SNAPPY
    assert LogConfig(compression_type="uncompressed").target_compression(CompressionType.GZIP) == CompressionType.NONE
    assert LogConfig(compression_type="none").target_compression(CompressionType.GZIP) == CompressionType.NONE
    assert LogConfig(compression_type="gzip", gzip_level=1).target_level(CompressionType.NONE) == 1
    assert LogConfig(gzip_level=1).target_level(CompressionType.GZIP) is None  # producer: default level
    assert LogConfig(compression_type="lz4").target_level(CompressionType.NONE) is None  # Kafka's default 9


def test_zstd_needs_ibp_2_1():
    """LogValidator: zstd target with IBP < 2.1-IV0 is refused (KAFKA-7920)."""
    assert not LogConfig(broker=BrokerConfig(inter_broker_protocol_version="2.0")).ibp_supports_zstd
    assert LogConfig(broker=BrokerConfig(inter_broker_protocol_version="2.1-IV0")).ibp_supports_zstd


@pytest.mark.parametrize("kw", [{"timestamp_type": "Bogus"}, {"compression_type": "brotli"},
                                {"message_format_version": "9.9"}, {"timestamp_difference_max_ms": -1}])
def test_invalid_values_raise_config_error(kw):
    with pytest.raises(ConfigError):
        LogConfig(**kw)
