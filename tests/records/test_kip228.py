"""KIP-228 (seed 002) as an opt-in experimental extension: the bit, Long.MIN_VALUE, the matrices."""
from __future__ import annotations

import pytest

from kafkafmt import kip228
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.errors import IllegalArgumentError
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder

MIN = -(2**63)


def _batch(ts_list, extended):
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0, timestamp_extended=extended)
    for ts in ts_list:
        b.append(ts, None, b"v")
    return b.build()


def test_bit_is_never_set_unless_asked():
    data = _batch([5, -1], extended=False)
    (batch,) = MemoryRecords(data).batches()
    assert not batch.is_timestamp_extended and batch.attributes & 0x80 == 0


def test_negative_timestamps_need_the_opt_in():
    with pytest.raises(IllegalArgumentError, match="Invalid negative timestamp"):
        _batch([-86_400_000], extended=False)
    with pytest.raises(IllegalArgumentError, match="magic v2"):
        MemoryRecordsBuilder(1, CompressionType.NONE, TimestampType.CREATE_TIME, 0, timestamp_extended=True)


def test_extended_batch_layout():
    data = _batch([-86_400_000, -1, MIN], extended=True)
    (batch,) = MemoryRecords(data).batches()
    assert batch.is_timestamp_extended and batch.attributes == 0x80  # seed 002: bit after isControlBatch
    assert batch.is_valid()
    assert [r.timestamp for r in batch.records()] == [-86_400_000, -1, MIN]
    assert batch.max_timestamp == -1  # -1 is a real time here, the largest of the three


@pytest.mark.parametrize("ts,ext,aware,value,meaning", [
    (-1, False, False, -1, "NO_TIMESTAMP"), (-1, False, True, MIN, "NO_TIMESTAMP"),
    (-1, True, False, -1, "NO_TIMESTAMP"), (-1, True, True, -1, "time"),
    (MIN, True, False, MIN, "time"), (MIN, True, True, MIN, "NO_TIMESTAMP"),
    (-86_400_000, True, True, -86_400_000, "time"), (5, False, False, 5, "time"),
])
def test_reading_rule_of_old_and_new_consumers(ts, ext, aware, value, meaning):
    """Seed 002's new consumer ("Interpret as NO_TIMESTAMP (Long.MIN_VALUE)", "Interpret as -1L ms") and
    Kafka's consumer (ConsumerRecord.NO_TIMESTAMP = -1, no bit).  The matrices built from this rule on real
    bytes are tested in tests/scenarios/test_matrices.py."""
    assert kip228.interpret_timestamp(ts, ext, aware=aware) == (value, meaning)


def test_new_broker_converts_old_no_timestamp_to_long_min():
    old = _batch([-1, 42], extended=False)
    new = kip228.convert_to_extended(old)
    (batch,) = MemoryRecords(new).batches()
    assert batch.is_timestamp_extended
    assert [r.timestamp for r in batch.records()] == [MIN, 42]
    assert kip228.convert_to_extended(new) == new  # already extended: kept


@pytest.mark.java
def test_what_a_real_kafka_3_9_broker_does_with_an_extended_batch(kafka_oracle):
    """The seed predicts "Error or records as -1" for an old broker.  Kafka 3.9's LogValidator
    (default timestamp limits, v2 topic) accepts the batch in place and keeps the bit and
    Long.MIN_VALUE untouched: the producer's maxTimestamp (-1) equals the recomputed one, so
    setMaxTimestamp is a no-op.  Rebuilding it (a v1 topic) fails in MemoryRecordsBuilder."""
    data = _batch([-86_400_000, -1, MIN], extended=True)
    res = kafka_oracle.validate(data, toMagic=2, sourceCompression="none", targetCompression="none",
                                timestampType="CreateTime", now=1_700_000_000_000, offset=0, origin="CLIENT",
                                interBrokerProtocolVersion="3.9", partitionLeaderEpoch=0)
    stored = bytes.fromhex(res["validatedBytes"])
    (batch,) = MemoryRecords(stored).batches()
    assert batch.is_timestamp_extended
    assert [r.timestamp for r in batch.records()] == [-86_400_000, -1, MIN]
    down = kafka_oracle.request("validate", bytes=data.hex(), toMagic=1, sourceCompression="none",
                                targetCompression="none", timestampType="CreateTime", now=1_700_000_000_000,
                                offset=0, origin="CLIENT", interBrokerProtocolVersion="2.8", partitionLeaderEpoch=0)
    assert down["ok"] is False and "negative timestamp" in down["message"].lower()
