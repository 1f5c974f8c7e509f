"""kafkafmt.costs: the conversion cost model, fed fixed cost tables (deterministic: no broker, no timing)."""
from __future__ import annotations

import json

import pytest

from kafkafmt.costs import CostTable, Counts, FitCell, ReleaseCosts, consume, fit, load_table, predict, predict_fetch
from kafkafmt.errors import ConfigError
from kafkafmt.records.builder import build_records

TABLE = CostTable({
    "1.1.1": ReleaseCosts("1.1.1", zero_copy_s_per_byte=1e-9, reencode_s_per_record=2e-7, reencode_s_per_byte=4e-9,
                          codec_s_per_byte={"lz4": 6e-9, "gzip": 2e-8}),
    "2.8.2": ReleaseCosts("2.8.2", zero_copy_s_per_byte=5e-10, reencode_s_per_record=1e-7, reencode_s_per_byte=3e-9,
                          codec_s_per_byte={"lz4": 5e-9}),
}, machine="test machine, 2 cores", load="0.5", date="2026-01-01")


def _log(n_batches: int, per_batch: int, codec: str = "none", value_size: int = 100) -> bytes:
    out = bytearray()
    for b in range(n_batches):
        rows = [(1_700_000_000_000 + i, b"k%d" % i, bytes([65 + i % 26]) * value_size) for i in range(per_batch)]
        out += build_records(rows, magic=2, compression=codec, base_offset=b * per_batch)
    return bytes(out)


def test_zero_copy_costs_only_the_read_and_holds_no_memory():
    p = predict(Counts(zero_copy=True, bytes_read=2_000_000, bytes_out=2_000_000), "1.1", TABLE)
    assert p.cpu_s == pytest.approx(2_000_000 * 1e-9)
    assert p.memory_bytes == 0
    assert p.measured_on == "1.1.1"


def test_eager_conversion_adds_records_bytes_and_codec_and_holds_the_whole_response():
    c = Counts(zero_copy=False, conversion="eager", bytes_read=1_000_000, records_touched=10_000,
               reencoded_bytes=3_000_000, converted_bytes=1_100_000, codec_bytes={"lz4": 5_800_000})
    p = predict(c, "1.1", TABLE)
    # 1e6 x 1e-9 + 1e4 x 2e-7 + 3e6 x 4e-9 + 5.8e6 / 2 x 6e-9 = 0.001 + 0.002 + 0.012 + 0.0174
    assert p.cpu_s == pytest.approx(0.0324)
    assert p.parts["codec_lz4"] == pytest.approx(0.0174)
    assert p.memory_bytes == 1_100_000


def test_lazy_conversion_holds_one_chunk():
    c = Counts(zero_copy=False, conversion="lazy", bytes_read=1_000_000, records_touched=100,
               converted_bytes=1_100_000, max_chunk_bytes=140_000)
    p = predict(c, "2.8", TABLE)
    assert p.memory_bytes == 140_000
    assert p.cpu_s == pytest.approx(1_000_000 * 5e-10 + 100 * 1e-7)


def test_a_line_takes_its_release_else_the_newest_measured_before_it_else_the_oldest():
    assert TABLE.for_line("1.1").release == "1.1.1"
    assert TABLE.for_line("2.1").release == "1.1.1"      # 2.0 and 2.1 not measured: 1.1.1's costs
    assert TABLE.for_line("3.9").release == "2.8.2"
    assert TABLE.for_line("0.10.2").release == "1.1.1"   # before every measured release: the oldest
    with pytest.raises(ConfigError):
        TABLE.for_line("5.0")


def test_a_codec_the_table_lacks_is_a_clear_error():
    c = Counts(zero_copy=False, conversion="lazy", codec_bytes={"snappy": 10})
    with pytest.raises(ConfigError, match="no snappy cost for Kafka 2.8.2"):
        predict(c, "2.8", TABLE)


def test_fit_recovers_the_costs_from_two_record_sizes():
    truth = {"z": 8e-10, "r": 3e-7, "b": 2e-9, "lz4": 7e-9}

    def cell(records, rbytes, codec_bytes=0, zero=False):
        c = Counts(zero_copy=zero, conversion="none" if zero else "eager", bytes_read=rbytes // 2,
                   records_touched=0 if zero else records, reencoded_bytes=0 if zero else rbytes,
                   codec_bytes={"lz4": codec_bytes} if codec_bytes else {})
        cpu = truth["z"] * c.bytes_read + (0 if zero else truth["r"] * records + truth["b"] * rbytes
                                           + truth["lz4"] * codec_bytes / 2)
        return FitCell("3.9.2", c, cpu)

    table = fit([cell(0, 50_000_000, zero=True), cell(100_000, 9_000_000), cell(20_000, 10_000_000),
                 cell(20_000, 10_000_000, codec_bytes=19_000_000)], machine="m")
    rc = table.releases["3.9.2"]
    assert rc.zero_copy_s_per_byte == pytest.approx(truth["z"])
    assert rc.reencode_s_per_record == pytest.approx(truth["r"])
    assert rc.reencode_s_per_byte == pytest.approx(truth["b"])
    assert rc.codec_s_per_byte["lz4"] == pytest.approx(truth["lz4"])
    assert table.machine == "m"


def test_fit_tells_the_cost_per_request_from_the_cost_per_byte_with_two_request_sizes():
    truth = {"q": 6e-5, "z": 3e-10, "r": 2e-7}

    def cell(nbytes, requests, records=0):
        c = Counts(zero_copy=not records, conversion="lazy" if records else "none", bytes_read=nbytes,
                   requests=requests, records_touched=records)
        return FitCell("2.8.2", c, truth["q"] * requests + truth["z"] * nbytes + truth["r"] * records)

    mib = 1 << 20
    table = fit([cell(600 * mib, 600), cell(80 * mib, 1280), cell(100 * mib, 100, records=400_000)])
    rc = table.releases["2.8.2"]
    assert rc.request_s == pytest.approx(truth["q"])
    assert rc.zero_copy_s_per_byte == pytest.approx(truth["z"])
    assert rc.reencode_s_per_record == pytest.approx(truth["r"])   # after the requests and the read
    p = predict(Counts(zero_copy=True, bytes_read=10 * mib, requests=160), "2.8", table)
    assert p.parts["requests"] == pytest.approx(160 * truth["q"])
    assert p.cpu_s == pytest.approx(160 * truth["q"] + 10 * mib * truth["z"])
    # one request size: the requests and the bytes cannot be told apart, all goes per byte
    one = fit([cell(600 * mib, 600), cell(300 * mib, 300)]).releases["2.8.2"]
    assert one.request_s == 0 and one.zero_copy_s_per_byte == pytest.approx(truth["z"] + truth["q"] / mib)
    # a table written before the cost per request was measured still loads (no request cost)
    old = {k: v for k, v in rc.to_dict().items() if k != "request_s"}
    assert CostTable.from_dict({"releases": {"2.8.2": old}}).releases["2.8.2"].request_s == 0


def test_fit_needs_a_zero_copy_cell():
    with pytest.raises(ConfigError, match="no zero-copy cell"):
        fit([FitCell("1.1.1", Counts(zero_copy=False, records_touched=5), 1.0)])


def test_counts_of_a_real_eager_and_lazy_lz4_down_conversion():
    log = _log(4, 50, "lz4")
    eager = Counts.from_fetch_result(__import__("kafkafmt.broker.fetch", fromlist=["fetch"]).fetch(
        log, topic_config=_config("1.1"), fetch_version=3, fetch_offset=0), "1.1")
    assert eager.conversion == "eager" and not eager.zero_copy
    assert eager.records_touched == 200
    assert eager.codec_bytes == {"lz4": eager.bytes_decompressed + eager.bytes_compressed}
    assert eager.reencoded_bytes == eager.bytes_compressed > 0
    p_eager = predict_fetch(log, line="1.1", table=TABLE, fetch_version=3, fetch_offset=0)
    assert p_eager.memory_bytes == eager.converted_bytes > 0
    lazy = predict_fetch(_log(40, 50, "lz4", value_size=400), line="2.8", table=TABLE, fetch_version=3, fetch_offset=0)
    assert 0 < lazy.memory_bytes <= 200 * 1024   # one chunk of at most 128 KiB of source, converted


def _config(line):
    from kafkafmt.config import BrokerConfig, LogConfig
    return LogConfig.from_properties({}, broker=BrokerConfig(kafka_line=line))


def test_consume_reads_the_whole_log_as_a_consumer():
    log = _log(10, 100)   # 1,000 records, about 130 KB
    old = consume(log, line="1.1", fetch_version=1, max_bytes=40_000)
    assert old.last_offset == 999
    assert old.counts.records_touched == 1000           # every record converted once (whole batches fit)
    assert old.requests >= len(log) // 40_000
    zc = consume(log, line="1.1", fetch_version=7, max_bytes=40_000)
    assert zc.counts.zero_copy and zc.counts.records_touched == 0
    # each slice ends at max bytes, inside a batch the consumer fetches again: more than the log, never more
    # than max bytes a request
    assert len(log) < zc.counts.bytes_out <= zc.requests * 40_000


def test_4_4_has_nothing_to_convert_and_refuses_fetch_v3():
    log = _log(2, 10)
    with pytest.raises(ConfigError):
        consume(log, line="4.4", fetch_version=3)
    assert consume(log, line="4.4", fetch_version=11).counts.zero_copy


def test_the_shipped_table_names_its_machine_and_date(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text("[1]")
    with pytest.raises(ConfigError, match="not a cost table"):
        load_table(bad)
    with pytest.raises(ConfigError, match="no cost table"):
        load_table(tmp_path / "missing.json")
    table = tmp_path / "ok.json"
    table.write_text(json.dumps(TABLE.to_dict()))
    again = load_table(table)
    assert again == TABLE


def test_a_consumer_mix_adds_each_generations_share_and_4_4_refuses_the_old_ones():
    from kafkafmt.costs import predict_mix
    log = _log(20, 100, "lz4")
    only_new = predict_mix(log, line="1.1", shares={2: 1}, mb_per_s=100, table=TABLE)
    only_old = predict_mix(log, line="1.1", shares={0: 1}, mb_per_s=100, table=TABLE)
    half = predict_mix(log, line="1.1", shares={0: 1, 2: 1}, mb_per_s=100, table=TABLE)
    assert only_new.cpu_cores == pytest.approx(100e6 * 1e-9)        # zero-copy: the read cost alone
    assert only_old.cpu_cores > 3 * only_new.cpu_cores
    assert half.cpu_cores == pytest.approx((only_new.cpu_cores + only_old.cpu_cores) / 2)
    assert only_new.memory_bytes == 0 and half.memory_bytes > 0      # eager: a whole converted response
    on44 = predict_mix(log, line="4.4", shares={0: 1, 1: 1, 2: 2}, mb_per_s=100, table=TABLE)
    assert on44.refused == (0, 1) and on44.measured_on == "2.8.2"
    with pytest.raises(ConfigError):
        predict_mix(log, line="1.1", shares={3: 1}, mb_per_s=1, table=TABLE)


def test_a_0_10_merged_conversion_counts_the_codec_bytes_it_decompressed_and_compressed():
    from kafkafmt.broker.fetch import fetch
    rows = [(1_700_000_000_000 + i, b"k%d" % i, b"v" * 100) for i in range(50)]
    log = build_records(rows, magic=1, compression="gzip")
    r = fetch(log, topic_config=_config("0.10.2"), fetch_version=1, fetch_offset=0)
    keys = 10 * 2 + 40 * 3                                    # k0..k9: 2 bytes, k10..k49: 3
    # decompressed: the v1 wrapper's inner set, 50 messages of 12 (offset, size) + 22 (crc, magic, attributes,
    # timestamp, key and value sizes) + key + 100-byte value; compressed: the v0 set written (no timestamp: 14)
    v1_inner, v0_inner = 50 * (12 + 22 + 100) + keys, 50 * (12 + 14 + 100) + keys
    assert r.to_magic == 0 and (r.cost.decompressions, r.cost.compressions) == (1, 1)
    assert (r.cost.bytes_decompressed, r.cost.bytes_compressed) == (v1_inner, v0_inner)
    c = Counts.from_fetch_result(r, "0.10.2")
    assert c.reencoded_bytes == v0_inner
    assert c.codec_bytes == {"gzip": v1_inner + v0_inner}
    assert c.conversion == "eager"


def test_the_shipped_table_names_its_machine_and_date_and_prices_every_converting_release():
    t = load_table()
    assert "2 cores" in t.machine and t.date.startswith("20") and t.load
    assert {"0.10.2.2", "1.1.1", "2.8.2", "3.9.2", "4.4.0"} <= set(t.releases)
    for release in ("0.10.2.2", "1.1.1", "2.8.2", "3.9.2"):
        rc = t.releases[release]
        assert rc.zero_copy_s_per_byte > 0 and set(rc.codec_s_per_byte) == {"gzip", "snappy", "lz4"}
        # a gzip round trip costs more than lz4's on every release (the measured table, not a rule)
        assert rc.codec_s_per_byte["gzip"] > rc.codec_s_per_byte["lz4"]
