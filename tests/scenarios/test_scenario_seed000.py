"""Seed 000 (KIP-32) phased rolling upgrade, run end to end on real bytes: one assertion per statement of
the seed, each citing the seed's sentence (kafkafmt/scenarios/data/seed000-rolling-upgrade.yaml)."""
from __future__ import annotations

import pytest

from kafkafmt.scenarios import render, run_file
from kafkafmt.scenarios.quotes import QUOTES


@pytest.fixture(scope="module")
def result():
    return run_file("seed000-rolling-upgrade")


def rows(result, step, path, **sel):
    s = result.steps[step]
    out = [r for r in s.rows if r.path == path and all(getattr(r, k) == v for k, v in sel.items())]
    assert out, f"no {path} row in step {step} ({s.name})"
    return out


def test_every_expectation_of_the_scenario_file_holds(result):
    assert result.ok, result.failed_checks
    assert len(result.steps) == 17


def test_p1_1_format_0_9_0_writes_v0(result):
    """000.p1.1: "Set message.format.version=0.9.0 on brokers. (Broker will write MessageAndOffset V0 to disk)"."""
    assert {r.magic_out for r in rows(result, 0, "leader")} == {0}
    assert {r.magic_out for r in rows(result, 0, "follower")} == {0}


def test_p1_3_apiversion_0_9_0_uses_produce_v1_fetch_v1(result):
    """000.p1.3: "Configure the broker to use ApiVersion 0.9.0 (ProduceRequest V1 and FetchRequest V1)"."""
    assert {r.request for r in rows(result, 0, "producer")} == {"ProduceRequest v1"}
    assert {r.request for r in rows(result, 2, "follower")} == {"FetchRequest v1"}
    assert {r.detail["replica_fetch_version"] for r in rows(result, 1, "broker")} == {1}


def test_p1_4_new_code_answers_v2_but_replicates_with_v1(result):
    """000.p1.4: "Do a rolling upgrade of the brokers to let the broker pick up the new code supporting ApiVersion
    0.9.0-1"; the IBP still says 0.9.0, so replication stays on FetchRequest V1."""
    assert {r.request for r in rows(result, 2, "broker")} == {"answers Produce ≤ v2, Fetch ≤ v2"}
    assert {r.request for r in rows(result, 2, "follower")} == {"FetchRequest v1"}


def test_p1_5_apiversion_0_9_0_1_replicates_with_fetch_v2(result):
    """000.p1.5: "Bump up ApiVersion of broker to 0.9.0-1 to let the broker use FetchRequest V2 for replication"
    (Kafka's name: 0.10.0-IV0)."""
    assert {r.detail["inter.broker.protocol.version"] for r in rows(result, 3, "broker")} == {"0.10.0-IV0"}
    assert {(r.request, r.conversion, r.magic_out) for r in rows(result, 3, "follower")} == {
        ("FetchRequest v2", "zero-copy", 0)}


def test_p1_6_1_produce_v1_recompressed_with_absolute_offsets(result):
    """000.p1.6.1: "... it will decompress the message, assign offsets using absolute offsets and re-compress"."""
    (leader,) = rows(result, 4, "leader")
    assert (leader.magic_in, leader.magic_out, leader.recompressed) == (0, 0, True)
    assert leader.detail["offsets"] == [7, 9]  # absolute: after the 3 + 2 + 2 records of steps 1, 3 and 4


def test_p1_6_2_produce_v2_down_converted_time_dropped(result):
    """000.p1.6.2: "... ignore the time field and do re-compression.  i.e. down-convert the message format to
    MessageAndOffset V0."  The step carries the lossy-step warning quoting that sentence."""
    (prod,) = rows(result, 5, "producer")
    (leader,) = rows(result, 5, "leader")
    assert (prod.request, prod.magic_out) == ("ProduceRequest v2", 1)
    assert (leader.magic_out, leader.conversion, leader.recompressed) == (0, "converted down v1→v0", True)
    assert leader.detail["timestamps"] == [-1, -1, -1]
    assert any(QUOTES["000.p1.6.2"][1] in w for w in result.steps[5].warnings)


@pytest.mark.parametrize("step,req", [(6, "FetchRequest v1"), (7, "FetchRequest v2")])
def test_p1_6_3_and_4_fetch_of_v0_data_is_zero_copy(result, step, req):
    """000.p1.6.3 / 000.p1.6.4: data on disk is V0, so fetch V1 and fetch V2 both use zero-copy with V0."""
    (c,) = rows(result, step, "consumer")
    assert (c.request, c.conversion, c.magic_out, c.bytes_in, c.bytes_out, c.error) == (
        req, "zero-copy", 0, c.bytes_out, c.bytes_in, None)
    assert c.records == 13 and c.records_touched == 0


def test_p1_7_and_8_clients_upgraded(result):
    """000.p1.7 "Upgrade consumer to send FetchRequest V2." / 000.p1.8 "Upgrade producer to send ProducerRequest V2."."""
    assert rows(result, 8, "consumer", actor="c-old")[-1].request == "FetchRequest v2"
    assert rows(result, 9, "producer", actor="p-old")[-1].request == "ProduceRequest v2"


def test_p2_1_format_bump_warns_about_remaining_old_consumers(result):
    """000.p2.1: "After most of the consumers are upgraded, Bump up message.format.version=1 0.10.0 ..."."""
    assert {r.magic_out for r in rows(result, 10, "broker")} == {1}
    (w,) = [w for w in result.steps[10].warnings if "c-straggler" in w]
    assert QUOTES["000.p2.1"][1] in w


def test_p2_2_1_produce_v1_up_converted_with_time_minus_one(result):
    """000.p2.2.1: "... fill in the time field with -1 if message.timestamp.type=CreateTime ... and re-compress
    the message. i.e. up-convert the message format to MessageAndOffset V1."."""
    (leader,) = rows(result, 11, "leader")
    assert (leader.magic_in, leader.magic_out, leader.recompressed) == (0, 1, True)
    assert leader.detail["timestamps"] == [-1, -1, -1]


def test_p2_2_2_produce_v2_not_recompressed(result):
    """000.p2.2.2: "... assign offsets using relative offsets, check and maybe overwrite the time field, and NOT do
    re-compression."."""
    (leader,) = rows(result, 12, "leader")
    assert (leader.conversion, leader.recompressed, leader.bytes_in, leader.bytes_out) == (
        "in place", False, leader.bytes_in, leader.bytes_in)


def test_p2_2_3_fetch_v1_of_v1_data_down_converted(result):
    """000.p2.2.3: "... it will NOT use the zero-copy transfer. Instead the broker will read the message from disk,
    down-convert them to V0 and reply using fetch response V1 with MessageAndOffset V0."."""
    (c,) = rows(result, 13, "consumer")
    assert (c.conversion, c.magic_in, c.magic_out, c.recompressed) == ("converted down v1→v0", 1, 0, True)
    assert c.records_touched == 6


def test_p2_2_4_fetch_v2_of_v1_data_zero_copy(result):
    """000.p2.2.4: "... it will use zero-copy transfer to reply with fetch response V2 with MessageAndOffset V1."."""
    (c,) = rows(result, 14, "consumer")
    assert (c.conversion, c.magic_out, c.records_touched) == ("zero-copy", 1, 0)


def test_table_cites_every_step_and_keeps_timings_apart(result):
    text = render(result)
    for s in result.steps:
        assert s.name in text
        for q in s.cite:
            assert QUOTES[q][1] in text
    assert "_ns" not in text  # measured timings only with --measured
    data = result.to_dict(with_measured=True)
    assert any(r["measured"] for s in data["steps"] for r in s["rows"])


def test_computed_results_are_reproducible(result):
    again = run_file("seed000-rolling-upgrade")
    assert again.to_dict(with_measured=False) == result.to_dict(with_measured=False)


@pytest.mark.parametrize("step", [15, 16])
def test_p2_2_log_append_time_fills_the_time_field_with_the_server_time(result, step):
    """000.p2.2.1: "... current server time if message.timestamp.type=LogAppendTime and re-compress"; 000.p2.2.2:
    "... check and maybe overwrite the time field, and NOT do re-compression" (readers see the server time)."""
    (leader,) = rows(result, step, "leader")
    lat = leader.detail["log_append_time"]
    assert lat > 1_700_000_000_000 and leader.detail["timestamps"] == [lat, lat]
    assert leader.recompressed is (step == 15)


def test_flat_rows_for_tables(result):
    rows = result.to_rows()
    assert {r["step"] for r in rows} == set(range(1, 18))
    assert all("measured" not in r for r in rows)
    (lead,) = [r for r in rows if r["step"] == 13 and r["path"] == "leader"]
    assert (lead["conversion"], lead["recompressed"], lead["detail.decompressed"]) == ("in place", False, True)
