"""Notebook 08's last section: seed 002's isTimestampExtended on attribute bit 6, the bit KIP-534 gave to
hasDeleteHorizonMs, against Kafka 3.9.2's reader (the main oracle's ``read``) and cleaner (the cleaner
oracle, through the ``kafka`` fixture), beside kafkafmt's 0x80."""
from __future__ import annotations

from kafkafmt.records import MemoryRecords
from kafkafmt.viz import negative

NEG, RECENT = negative.BIT6_TIMESTAMPS


def test_the_batch_carries_the_bit_where_asked_and_a_valid_crc(kafka_oracle):
    for bit in (negative.SEED_BIT, negative.KAFKAFMT_BIT):
        data = negative.bit6_batch(RECENT, bit=bit)
        b = next(MemoryRecords(data).batches())
        assert b.attributes == bit and b.is_valid()
        k = kafka_oracle.read(data)["batches"][0]
        assert k["deleteHorizonMs"] == negative.bit6_read(RECENT, bit)["deleteHorizonMs"]


def test_kafkas_reader_takes_bit6_as_a_delete_horizon_at_the_base_timestamp(kafka_oracle):
    for ts in (NEG, RECENT):
        assert negative.bit6_read(ts, negative.SEED_BIT)["deleteHorizonMs"] == ts
        assert kafka_oracle.read(negative.bit6_batch(ts))["batches"][0]["deleteHorizonMs"] == ts
        assert negative.bit6_read(ts, negative.KAFKAFMT_BIT)["deleteHorizonMs"] is None


def test_kafkas_cleaner_on_the_seed_layout(kafka):
    seed = negative.bit6_clean(RECENT, negative.SEED_BIT)
    assert seed["tombstone"] == "removed" and seed["keys kept"] == ["a"]  # at once: the horizon has passed
    assert seed["deleteHorizonMs after"] == RECENT
    ours = negative.bit6_clean(RECENT, negative.KAFKAFMT_BIT)
    assert ours["tombstone"] == "kept" and ours["attributes after"] == "0x40"  # 0x80 lost in the rebuild
    assert ours["deleteHorizonMs after"] == negative.NOW_MS + 86_400_000
    assert kafka == [True, True]


def test_kafkas_cleaner_fails_on_negative_timestamps_either_way(kafka):
    for bit in (negative.SEED_BIT, negative.KAFKAFMT_BIT):
        r = negative.bit6_clean(NEG, bit)
        assert r["tombstone"] == "✗ pass fails: Invalid negative timestamp -86400000"
        assert r["error"] == "IllegalArgumentException"  # in Kafka's LogCleaningException
    assert len(kafka) == 2 and all("IllegalArgumentException" in k for k in kafka)


def test_bit6_table_rows():
    t = negative.bit6_table()
    assert list(t["Kafka cleaner: tombstone"].str[:7]) == ["✗ pass ", "✗ pass ", "removed", "kept"]
    assert list(t["attributes"]) == ["0x40", "0x80", "0x40", "0x80"]
