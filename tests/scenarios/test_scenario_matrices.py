"""Seed 002's producer and consumer matrices and seed 003's mode × format table, computed cell by cell by
running one-broker scenarios on real bytes, beside the seed's cell and Kafka 3.9.2 (kafkafmt.scenarios.matrices)."""
from __future__ import annotations

import pytest

from kafkafmt.broker.idempotence import produce_outcome
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder
from kafkafmt.scenarios.matrices import (
    ambiguous_cells,
    matrix_table,
    seed002_consumer_matrix,
    seed002_producer_matrix,
    seed003_matrix,
)

MIN = -(2**63)
N = "-86400000L"


@pytest.fixture(scope="module")
def producer():
    return {(r["producer"], r["sends"], r["broker"]): r for r in seed002_producer_matrix()}


@pytest.fixture(scope="module")
def consumer():
    return {(r["record timestamp"], r["isTimestampExtended"], r["consumer"]): r for r in seed002_consumer_matrix()}


# (producer, sends, broker) -> (computed outcome, stored, bit kept, seed reading it matches)
PRODUCER_CELLS = {
    ("old", "-1L", "old"): ("stored", -1, False, "records -1"),
    ("old", "-1L", "new"): ("stored", MIN, True, "records Long.MIN_VALUE"),       # "Broker should convert old ..."
    ("new", "Long.MIN_VALUE", "old"): ("stored", MIN, False, None),              # Kafka 3.9: neither reading
    ("new", "Long.MIN_VALUE", "new"): ("stored", MIN, True, "records Long.MIN_VALUE"),
    ("new", "-1L", "old"): ("stored", -1, True, "records -1 as NO_TIMESTAMP"),
    ("new", "-1L", "new"): ("stored", -1, True, "records -1 ms"),
    ("new", N, "old"): ("stored", -86_400_000, False, None),
    ("new", N, "new"): ("stored", -86_400_000, True, None),
    ("old", N, "old"): ("error", None, None, None),   # Kafka's builder: "Invalid negative timestamp"
    ("old", N, "new"): ("error", None, None, None),
    ("old", "Long.MIN_VALUE", "old"): ("error", None, None, None),
    ("old", "Long.MIN_VALUE", "new"): ("error", None, None, None),
}


@pytest.mark.parametrize("key", sorted(PRODUCER_CELLS))
def test_seed002_producer_matrix_cell(producer, key):
    outcome, stored, bit, agrees = PRODUCER_CELLS[key]
    cell = producer[key]
    c = cell["computed"]
    assert (c["outcome"], c["stored"], c["extended"]) == (outcome, stored, bit)
    assert cell["agrees_with"] == agrees
    if outcome == "error":
        assert c["side"] == "producer" and "Invalid negative timestamp" in c["error"]
    if key[2] == "old":  # Kafka 3.9 is the old broker
        assert cell["kafka"] == c
    else:
        assert cell["kafka"].startswith("n/a")


def test_seed002_producer_matrix_ambiguous_cells(producer):
    """The seed's "(error) Error or Records this as NO_TIMESTAMP (−1L)" cells, each with both readings."""
    amb = ambiguous_cells(list(producer.values()))
    assert {(r["producer"], r["sends"], r["broker"]) for r in amb} == {("new", "Long.MIN_VALUE", "old"),
                                                                       ("new", "-1L", "old")}
    assert all(r["readings"][0] == "error" and len(r["readings"]) == 2 for r in amb)
    gives = producer[("new", "Long.MIN_VALUE", "old")]["reading_gives"]
    assert gives == {"error": "the produce fails: nothing is stored",
                     "records -1": "the sent Long.MIN_VALUE is stored as -1L without the bit: an old consumer reads "
                                   "NO_TIMESTAMP (-1L), a new one NO_TIMESTAMP (Long.MIN_VALUE)"}


# (timestamp, bit, consumer) -> (meaning, value, seed reading)
CONSUMER_CELLS = {
    ("-1L", 0, "old"): ("NO_TIMESTAMP", -1, "NO_TIMESTAMP -1"),
    ("-1L", 0, "new"): ("NO_TIMESTAMP", MIN, "NO_TIMESTAMP Long.MIN_VALUE"),
    ("-1L", 1, "old"): ("NO_TIMESTAMP", -1, "NO_TIMESTAMP"),
    ("-1L", 1, "new"): ("time", -1, "-1 ms"),
    ("Long.MIN_VALUE", 1, "old"): ("time", MIN, None),   # Kafka's consumer: a time, neither "Error" nor NO_TIMESTAMP
    ("Long.MIN_VALUE", 1, "new"): ("NO_TIMESTAMP", MIN, "NO_TIMESTAMP Long.MIN_VALUE"),
    (N, 1, "old"): ("time", -86_400_000, None),
    (N, 1, "new"): ("time", -86_400_000, None),
    ("Long.MIN_VALUE", 0, "old"): ("time", MIN, None),
    ("Long.MIN_VALUE", 0, "new"): ("time", MIN, None),  # the bit Kafka dropped is what the new consumer needed
    (N, 0, "old"): ("time", -86_400_000, None),
    (N, 0, "new"): ("time", -86_400_000, None),
}


@pytest.mark.parametrize("key", sorted(CONSUMER_CELLS, key=str))
def test_seed002_consumer_matrix_cell(consumer, key):
    meaning, value, agrees = CONSUMER_CELLS[key]
    cell = consumer[key]
    assert (cell["computed"]["meaning"], cell["computed"]["timestamp"]) == (meaning, value)
    assert cell["computed"]["stored_bit"] == key[1]  # the record on disk is the row's
    assert cell["agrees_with"] == agrees
    if key[2] == "old":
        assert (cell["kafka"]["meaning"], cell["kafka"]["timestamp"]) == (meaning, value)


def test_seed002_consumer_matrix_ambiguous_cells(consumer):
    amb = ambiguous_cells(list(consumer.values()))
    assert {(r["record timestamp"], r["isTimestampExtended"], r["consumer"]) for r in amb} == {
        ("-1L", 1, "old"), ("Long.MIN_VALUE", 1, "old")}
    assert all(r["readings"] == ["error", "NO_TIMESTAMP"] for r in amb)
    assert all(set(r["reading_gives"]) == {"error", "NO_TIMESTAMP"} for r in amb)


def test_seed003_every_computed_cell_matches_the_seed_and_kafka_rules():
    """The bytes-level run agrees with kafkafmt.broker.idempotence's seed model in all 30 cells, and the Kafka
    column with its 'kafka' variant (UnsupportedForMessageFormatException, error 43; booleans only)."""
    rows = seed003_matrix()
    assert len(rows) == 30 and not ambiguous_cells(rows)
    for r in rows:
        s, c, k = r["seed"], r["computed"], r["kafka"]
        assert (c["outcome"] == "stored") == s["succeeded"], r
        if s["succeeded"]:
            assert (c["stored_magic"], c["idempotent_on_disk"]) == (s["stored_magic"], s["idempotent"]), r
            assert c["downgraded"] == s["downgraded"], r
        else:
            assert "UnsupportedForMessageFormatException" in c["error"]  # the seed says UnsupportedVersionException
        fmt = int(r["topic format"][1])
        kv = produce_outcome(r["mode"], client_version="1.0.0", broker_version="1.0.0", topic_message_format=fmt,
                             variant="kafka")
        assert (k["outcome"] == "stored") == kv.succeeded, r
        if not kv.succeeded:
            assert kv.error in k["error"]


def test_seed003_safe_mode_downgrade_and_client_disable():
    """003.safe: the 1.0.0 broker downgrades safe-mode batches; 003.old_broker: the client disables idempotence."""
    cells = {(r["mode"], r["broker"], r["topic format"]): r["computed"] for r in seed003_matrix()}
    assert cells[("safe", "1.0", "v1")] == {"outcome": "stored", "side": "leader", "error": None, "stored_magic": 1,
                                           "idempotent_on_disk": False, "downgraded": True,
                                           "disabled_by_client": False}
    assert cells[("safe", "0.11.0", "v2")]["disabled_by_client"] and not cells[("safe", "0.11.0", "v2")]["downgraded"]


def test_matrix_tables_render():
    cols, rows = matrix_table("seed002-producer")
    assert cols[-4:] == ["seed", "computed", "agrees with", "Kafka 3.9.2"]
    assert any("ambiguous" in r[cols.index("seed")] for r in rows)


@pytest.mark.java
def test_kafka_drops_the_extended_bit_when_every_timestamp_is_below_minus_one(kafka_oracle, producer):
    """The matrix's old-broker cell for "new producer sends Long.MIN_VALUE" against Kafka 3.9.2's LogValidator:
    setMaxTimestamp recomputes the attributes (the bit is lost) and keeps Long.MIN_VALUE; kafkafmt's bytes equal
    Kafka's."""
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0, timestamp_extended=True)
    b.append(MIN, b"k0", b"producer value 0")
    res = kafka_oracle.validate(b.build(), toMagic=2, sourceCompression="none", targetCompression="none",
                                timestampType="CreateTime", now=1_700_000_000_000, offset=0, origin="CLIENT",
                                interBrokerProtocolVersion="3.9", partitionLeaderEpoch=0)
    (batch,) = MemoryRecords(bytes.fromhex(res["validatedBytes"])).batches()
    assert batch.attributes & 0x80 == 0 and batch.max_timestamp == -1
    assert [r.timestamp for r in batch.records()] == [MIN]
    c = producer[("new", "Long.MIN_VALUE", "old")]["computed"]
    assert (c["stored"], c["extended"]) == (MIN, False)
