"""Smoke tests of the Apache Kafka oracle itself (conformance/oracle/KafkaOracle.java).

They check that the oracle really runs Kafka 3.9's classes and that its JSON protocol carries
bytes faithfully. Locally they are skipped when the oracle is not built (`make oracle`); with
CI=true they fail instead.
"""
from __future__ import annotations

import struct

import crc32c
import pytest

from kafkarig.oracle import OracleError, from_hex

pytestmark = pytest.mark.java


def _v2_batch(oracle, **extra):
    req = dict(
        magic=2,
        compression="none",
        timestampType="CreateTime",
        baseOffset=0,
        records=[
            {"timestamp": 1_700_000_000_000, "key": b"k1", "value": b"v1",
             "headers": [{"key": "h", "value": b"\x01\x02"}]},
            {"timestamp": 1_700_000_000_005, "key": None, "value": b"value-2",
             "headers": [{"key": "empty", "value": None}]},
        ],
    )
    req.update(extra)
    return oracle.build(**req)


def test_ping_reports_kafka_3_9(kafka_oracle):
    resp = kafka_oracle.ping()
    assert resp["ok"] is True
    assert resp["kafkaVersion"].startswith("3.9."), resp


def test_v2_build_crc32c_covers_attributes_to_end(kafka_oracle):
    resp = _v2_batch(kafka_oracle)
    data = from_hex(resp["bytes"])
    assert len(data) == resp["sizeInBytes"]
    assert data[16] == 2  # magic
    (length,) = struct.unpack_from(">i", data, 8)
    assert length == len(data) - 12
    (stored_crc,) = struct.unpack_from(">I", data, 17)
    assert crc32c.crc32c(data[21:]) == stored_crc
    assert resp["maxTimestamp"] == 1_700_000_000_005
    assert resp["shallowOffsetOfMaxTimestamp"] == 1  # v2: the batch's last offset

    (batch,) = kafka_oracle.read(data)["batches"]
    assert batch["checksum"] == stored_crc and batch["isValid"] is True
    assert (batch["baseOffset"], batch["lastOffset"], batch["count"]) == (0, 1, 2)
    r0, r1 = batch["records"]
    assert r0["headers"] == [{"key": "h", "value": "0102"}]
    assert r1["key"] is None and r1["value"] == b"value-2".hex()
    assert r1["headers"] == [{"key": "empty", "value": None}]
    assert batch["deleteHorizonMs"] is None


def test_v1_gzip_wrapper_offset_is_last_inner_offset(kafka_oracle):
    resp = kafka_oracle.build(
        magic=1, compression="gzip", timestampType="CreateTime", baseOffset=10,
        records=[{"timestamp": 1000 + i, "key": None, "value": f"m{i}".encode()} for i in range(3)],
    )
    data = from_hex(resp["bytes"])
    wrapper_offset, size = struct.unpack_from(">qi", data, 0)
    assert wrapper_offset == 12
    assert size == len(data) - 12
    assert data[16] == 1 and data[17] & 0x07 == 1  # magic 1, codec gzip
    # wrapper value = gzip of the inner message set, whose v1 offsets are relative (0, 1, 2)
    (ts,) = struct.unpack_from(">q", data, 18)
    assert ts == 1002
    (key_len,) = struct.unpack_from(">i", data, 26)
    assert key_len == -1
    (value_len,) = struct.unpack_from(">i", data, 30)
    inner = kafka_oracle.decompress("gzip", data[34:34 + value_len], magic=1)
    offsets, pos = [], 0
    while pos < len(inner):
        off, sz = struct.unpack_from(">qi", inner, pos)
        offsets.append(off)
        pos += 12 + sz
    assert offsets == [0, 1, 2]

    (batch,) = kafka_oracle.read(data)["batches"]
    assert batch["magic"] == 1 and batch["compression"] == "gzip"
    assert (batch["baseOffset"], batch["lastOffset"]) == (10, 12)
    assert batch["count"] is None
    assert [r["offset"] for r in batch["records"]] == [10, 11, 12]


@pytest.mark.parametrize("magic, header", [(0, "04224d1860401a"), (1, "04224d18604082"), (2, "04224d18604082")])
def test_lz4_frame_header_checksum_depends_on_magic(kafka_oracle, magic, header):
    out = kafka_oracle.compress("lz4", b"hello kafka " * 4, magic=magic)
    assert out.hex().startswith(header)
    assert kafka_oracle.decompress("lz4", out, magic=magic) == b"hello kafka " * 4


def test_validate_assigns_offsets_from_counter(kafka_oracle):
    built = _v2_batch(kafka_oracle)
    resp = kafka_oracle.validate(
        from_hex(built["bytes"]), toMagic=2, sourceCompression="none", targetCompression="none",
        timestampType="CreateTime", partitionLeaderEpoch=7, origin="CLIENT",
        interBrokerProtocolVersion="3.9", now=1_700_000_000_100, offset=100,
    )
    assert resp["nextOffset"] == 102
    assert resp["messageSizeMaybeChanged"] is False
    assert resp["maxTimestampMs"] == 1_700_000_000_005
    (batch,) = kafka_oracle.read(from_hex(resp["validatedBytes"]))["batches"]
    assert (batch["baseOffset"], batch["lastOffset"]) == (100, 101)
    assert batch["partitionLeaderEpoch"] == 7
    assert [r["offset"] for r in batch["records"]] == [100, 101]


def test_validate_reports_record_errors(kafka_oracle):
    built = _v2_batch(kafka_oracle)  # second record has a null key
    with pytest.raises(OracleError) as info:
        kafka_oracle.validate(from_hex(built["bytes"]), compactedTopic=True, now=1_700_000_000_100, offset=0)
    resp = info.value.response
    assert resp["error"] == "RecordValidationException"
    assert resp["invalidException"] == "InvalidRecordException"
    assert [e["batchIndex"] for e in resp["recordErrors"]] == [1]
    assert "Compacted topic cannot accept message without key" in resp["recordErrors"][0]["message"]
    assert resp["metrics"]["noKeyCompactedTopic"] == 1


def test_down_convert_v2_to_v1(kafka_oracle):
    built = kafka_oracle.build(
        magic=2, baseOffset=5,
        records=[{"timestamp": 2000 + i, "key": b"k", "value": f"v{i}".encode()} for i in range(3)],
    )
    resp = kafka_oracle.down_convert(from_hex(built["bytes"]), to_magic=1, first_offset=0)
    assert resp["recordConversionStats"]["numRecordsConverted"] == 3
    batches = kafka_oracle.read(from_hex(resp["bytes"]))["batches"]
    assert [b["magic"] for b in batches] == [1, 1, 1]  # uncompressed v1: one entry per message
    assert [b["lastOffset"] for b in batches] == [5, 6, 7]
    assert [b["records"][0]["timestamp"] for b in batches] == [2000, 2001, 2002]


def test_errors_are_reported_and_the_oracle_survives(kafka_oracle):
    resp = kafka_oracle.request(
        "build", magic=1, records=[{"timestamp": 1, "key": None, "value": "00",
                                    "headers": [{"key": "h", "value": None}]}])
    assert resp["ok"] is False
    assert resp["error"] == "IllegalArgumentException"
    assert resp["message"] == "Magic v1 does not support record headers"
    garbage = kafka_oracle.request("read", bytes="00" * 12 + "0000000d")
    assert garbage["ok"] is False and garbage["error"] in {"CorruptRecordException", "InvalidRecordException"}
    assert kafka_oracle.request("no-such-op")["ok"] is False
    assert kafka_oracle.ping()["kafkaVersion"].startswith("3.9.")
