"""Notebook 01's findings: per-record overhead, measured on bytes Kafka's own builder agrees with."""
import pytest

from kafkafmt.records import MemoryRecords
from kafkafmt.viz import anatomy


def test_single_record_overhead_matches_kafkas_constants():
    # LegacyRecord.RECORD_OVERHEAD_V0/V1 (14/22) + Records.LOG_OVERHEAD (12);
    # DefaultRecordBatch.RECORD_BATCH_OVERHEAD (61) + 7 one-byte varint/int8 fields of a small record
    assert anatomy.single_record_overhead(0) == 26
    assert anatomy.single_record_overhead(1) == 34
    assert anatomy.single_record_overhead(2) == 68


def test_v2_break_even_is_the_first_size_where_v2_is_cheaper():
    n = anatomy.v2_break_even()
    row = lambda m, k: anatomy.overhead_row(m, "none", k)["overhead_per_record"]  # noqa: E731
    assert row(2, n) < row(1, n) and row(2, n - 1) >= row(1, n - 1)


def test_overhead_table_covers_every_combination_and_codecs_shrink_big_batches():
    df = anatomy.overhead_table((1, 100), codecs=("none", "gzip", "zstd"))
    assert len(df) == 3 * 2 * 2 + 2  # zstd: v2 only (KIP-110)
    big = df[df["records"] == 100].set_index(["magic", "codec"])["overhead_per_record"]
    for m in anatomy.MAGICS:
        assert big[(m, "gzip")] < big[(m, "none")]
    assert big[(2, "zstd")] < big[(2, "none")]


def test_record_set_round_trips_and_refuses_headers_before_v2():
    data = anatomy.record_set(2, "lz4", 3, 2)
    recs = list(MemoryRecords(data).records())
    assert [len(r.headers) for r in recs] == [2, 2, 2]
    with pytest.raises(ValueError, match="no record headers"):
        anatomy.record_set(1, "none", 1, 1)
    with pytest.raises(ValueError):
        anatomy.sample_records(0)


@pytest.mark.java
@pytest.mark.parametrize("magic,codec", [(0, "none"), (1, "none"), (2, "none"), (1, "gzip"), (2, "gzip")])
def test_sizes_equal_kafkas_builder(kafka_oracle, magic, codec):
    """The sizes behind the overhead plot are the sizes Kafka 3.9.2's MemoryRecordsBuilder writes."""
    recs = anatomy.sample_records(20)
    theirs = kafka_oracle.build(magic=magic, compression=codec,
                                timestampType="CreateTime" if magic else "NoTimestampType", baseOffset=0,
                                logAppendTime=-1, producerId=-1, producerEpoch=-1, baseSequence=-1,
                                isTransactional=False, partitionLeaderEpoch=-1,
                                records=[{"timestamp": ts if magic else -1, "key": k.hex(), "value": v.hex(),
                                          "headers": []} for ts, k, v, _ in recs])
    assert anatomy.overhead_row(magic, codec, 20)["size"] == theirs["sizeInBytes"]
