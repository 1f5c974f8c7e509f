"""Notebooks 07 and 08: the idempotence grids and the KIP-228 tables, next to Kafka 3.9.2."""
import crc32c
import pytest

from kafkafmt.constants import NO_TIMESTAMP_EXTENDED
from kafkafmt.errors import IllegalArgumentError
from kafkafmt.records import MemoryRecords
from kafkafmt.viz import idempotence as idem
from kafkafmt.viz import negative as neg


def test_grid_shape_and_the_seeds_safe_mode():
    g = idem.outcome_grid("seed", "1.0.0", "1.0.0")
    assert list(g.index) == ["v0", "v1", "v2"] and list(g.columns) == list(idem.MODES)
    assert g.loc["v1", "safe"].startswith("↓ v1") and g.loc["v1", "required"].startswith("✗")
    assert g.loc["v2", "safe"] == "✓ v2 idempotent"


def test_kafka_rejects_idempotence_below_v2_on_the_broker():
    g = idem.outcome_grid("kafka", "1.0.0", "1.0.0")
    assert g.loc["v0", "true"] == "✗ UnsupportedForMessageFormatException (broker)"  # LogValidator.validateBatch
    assert g.loc["v2", "true"] == "✓ v2 idempotent"
    assert all(v.startswith("✗ ConfigException") for v in g.loc["v2", ["off", "safe", "required"]])


def test_disagreements_are_exactly_the_differing_cells():
    d = idem.disagreements("seed", "kafka")
    manual = 0
    for c in idem.CLIENTS:
        for b in idem.BROKERS:
            s, k = idem.outcome_grid("seed", c, b), idem.outcome_grid("kafka", c, b)
            manual += int((s != k).sum().sum())
    assert len(d) == manual > 0
    assert all(row["seed"] != row["kafka"] for row in d)
    with pytest.raises(ValueError):
        idem.outcome_grid("nope")


def test_downgrade_loses_the_producer_state():
    d = idem.downgrade(1)
    assert d["lost"]["producer_id"] == [4242] and d["lost"]["sequences"] == [0, 1, 2]
    after = list(MemoryRecords(d["after"]).batches())
    assert {b.magic for b in after} == {1}
    assert "timestamps" in idem.downgrade(0)["lost"]
    with pytest.raises(ValueError):
        idem.downgrade(2)


def test_the_bit_changes_only_attributes_and_crc_and_the_crc_is_right():
    assert neg.changed_fields(-1) == ["batch[0].crc", "batch[0].attributes"]
    ext = neg.batch(-1, extended=True)
    assert int.from_bytes(ext[17:21], "big") == crc32c.crc32c(ext[21:])  # CRC32C over attributes..end
    assert ext[22] & 0x80 and not neg.batch(-1, extended=False)[22] & 0x80


def test_plain_encoding_refuses_negative_timestamps():
    with pytest.raises(IllegalArgumentError, match="negative timestamp"):
        neg.batch(-5, extended=False)


def test_scenario_matrices_agree_with_a_direct_run_through_the_validator():
    """Two independent paths to Kafka 3.9.2's cell: the scenario cluster and one validator call."""
    p = neg.producer_table()
    assert {"seed", "computed", "Kafka 3.9.2"} <= set(p.columns)
    cell = p[(p["producer"] == "new") & (p["sends"] == "-1L") & (p["broker"] == "old")]["Kafka 3.9.2"].item()
    direct = neg.kafka_broker(-1, True)
    assert cell == "stored -1L, isTimestampExtended=1" and direct["stored"] == -1 and direct["bit kept"]
    c = neg.consumer_table()
    old = c[(c["consumer"] == "old") & (c["record timestamp"] == "-1L") & (c["isTimestampExtended"] == "0")]
    assert old["Kafka 3.9.2"].item().startswith("NO_TIMESTAMP (-1L)")
    assert neg.kafka_consumer(-1, False) == "timestamp -1 (CreateTime)"
    with pytest.raises(ValueError):
        neg.matrix("seed003")


def test_seed003_computed_table_covers_modes_brokers_and_formats():
    t = idem.computed_table()
    assert len(t) == 30 and "Kafka 3.9.2" in t.columns


@pytest.mark.java
@pytest.mark.parametrize("timestamp,extended", [(r[1], r[2]) for r in neg.PRODUCER_ROWS])
def test_kafka_column_is_what_kafkas_log_validator_does(kafka_oracle, timestamp, extended):
    res = kafka_oracle.validate(neg.batch(timestamp, extended=extended), toMagic=2, sourceCompression="none",
                                targetCompression="none", timestampType="CreateTime", now=neg.NOW_MS, offset=0,
                                origin="CLIENT", interBrokerProtocolVersion="3.9", partitionLeaderEpoch=0)
    (batch,) = MemoryRecords(bytes.fromhex(res["validatedBytes"])).batches()
    ours = neg.kafka_broker(timestamp, extended)
    assert ours["accepted"] and ours["stored"] == next(batch.records()).timestamp
    assert ours["bit kept"] == bool(batch.attributes & 0x80)
    assert timestamp != NO_TIMESTAMP_EXTENDED or ours["stored"] == NO_TIMESTAMP_EXTENDED
