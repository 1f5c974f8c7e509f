"""Seed 000 (KIP-32) phased rolling upgrade, run end to end on real bytes: one assertion per statement of
the seed, each citing the seed's sentence.

The seed's own plan (kafkafmt/scenarios/data/seed000-rolling-upgrade.yaml) stops at phase 2.1 on 0.10.0
brokers: under its ApiVersion 0.9.0-1 (0.10.0-IV0) Kafka 0.10.0.1 refuses to start with
log.message.format.version 0.10.0 (KafkaConfig before KAFKA-6238, row ``broker.message_format_check``).  The
whole plan runs with ApiVersion 0.10.0 (0.10.0-IV1) at phase 1.5 (seed000-rolling-upgrade-ibp-0.10.0.yaml):
``result`` below; both are run live on 0.9.0.1 and 0.10.0.1 brokers by tests/history/test_scenario_live.py."""
from __future__ import annotations

import pytest

from kafkafmt.scenarios import render, run_file
from kafkafmt.scenarios.quotes import QUOTES

REFUSAL = ("log.message.format.version 0.10.0 cannot be used when inter.broker.protocol.version is set to "
           "0.10.0-IV0")


@pytest.fixture(scope="module")
def result():
    return run_file("seed000-rolling-upgrade-ibp-0.10.0")


@pytest.fixture(scope="module")
def plan():
    result, cluster = run_file("seed000-rolling-upgrade", keep_cluster=True)
    yield result, cluster
    cluster.close()


def _without_ibp(step) -> list[dict]:
    out = []
    for r in step.rows:
        d = r.to_dict(with_measured=False)
        d["detail"] = {k: v for k, v in d["detail"].items() if k != "inter.broker.protocol.version"}
        out.append(d)
    return out


def test_the_seeds_plan_is_the_variants_phase_1_but_for_the_name_of_its_api_version(plan, result):
    seed, _ = plan
    assert [_without_ibp(s) for s in seed.steps[:10]] == [_without_ibp(s) for s in result.steps[:10]]
    assert {r.detail["inter.broker.protocol.version"] for r in rows(seed, 3, "broker")} == {"0.10.0-IV0"}
    assert {r.detail["inter.broker.protocol.version"] for r in rows(result, 3, "broker")} == {"0.10.0"}
    assert all(s.ok for s in seed.steps[:10])


def test_p2_1_kafka_0_10_0_refuses_the_format_under_the_seeds_api_version(plan):
    """000.p2.1 "Bump up message.format.version=1 0.10.0 and rolling bounce the brokers" under 000.p1.5's
    ApiVersion 0.9.0-1: the first broker of the roll does not start (KafkaConfig.validateValues of 0.10.0.1)."""
    seed, _ = plan
    (row,) = seed.steps[10].rows  # the roll stops at A: B and C are not bounced
    assert (row.path, row.actor, row.conversion, row.magic_out) == ("broker", "A", "refused to start", None)
    assert row.error == f"IllegalArgumentException: requirement failed: {REFUSAL}"
    assert row.detail["reason"] == REFUSAL
    assert (row.detail["kafka_line"], row.detail["kafka_line_row"]) == ("0.10.0", "broker.message_format_check")
    assert row.detail["restarted_on"] == {"version": "0.10.0", "message.format.version": "0.9.0",
                                          "inter.broker.protocol.version": "0.9.0-1"}
    assert [c["ok"] for c in seed.steps[10].checks] == [False] and len(seed.failed_checks) == 1
    assert not seed.ok


def test_after_the_refusal_the_plan_stops_and_the_broker_runs_its_previous_settings(plan):
    seed, cluster = plan
    assert len(seed.steps) == 11
    assert [n for n, _ in seed.not_run] == list(range(12, 18))
    assert seed.not_run[0][1].startswith("phase 2.2.1: ")
    assert seed.stopped == (f"broker A (Kafka 0.10.0) refused to start: {REFUSAL} (restarted on its previous "
                            "settings)")
    for name in "ABC":
        assert cluster.brokers[name].properties == {"message.format.version": "0.9.0",
                                                    "inter.broker.protocol.version": "0.9.0-1"}
        assert {log.config.to_magic for (b, _), log in cluster.logs.items() if b == name} == {0}
    text = render(seed)
    assert f"   REFUSED: broker A (Kafka 0.10.0) does not start: IllegalArgumentException: requirement failed: " \
           f"{REFUSAL}; the operator restarts it on its previous settings" in text
    assert "   12. phase 2.2.1: ProduceRequest V1 on a v1 broker" in text
    assert text.splitlines()[-1] == "11 of 17 steps run (a broker refused to start at step 11), 1 failed " \
                                    "expectation(s)"
    assert "KAFKA-6238" in seed.steps[10].seed_vs_kafka and "0.10.0-IV1" in seed.steps[10].seed_vs_kafka


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


def test_p1_5_apiversion_0_9_0_1_replicates_with_fetch_v2(plan, result):
    """000.p1.5: "Bump up ApiVersion of broker to 0.9.0-1 to let the broker use FetchRequest V2 for replication"
    (Kafka's name: 0.10.0-IV0; 0.10.0, 0.10.0-IV1, replicates with FetchRequest V2 too)."""
    seed, _ = plan
    assert {r.detail["inter.broker.protocol.version"] for r in rows(seed, 3, "broker")} == {"0.10.0-IV0"}
    for res in (seed, result):
        assert {r.detail["replica_fetch_version"] for r in rows(res, 3, "broker")} == {2}
        assert {(r.request, r.conversion, r.magic_out) for r in rows(res, 3, "follower")} == {
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
    again = run_file("seed000-rolling-upgrade-ibp-0.10.0")
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


@pytest.mark.parametrize("version,refused", [("0.10.0", True), ("0.10.2", True), ("0.11.0", True), ("1.1", False),
                                             ("3.9", False)])
def test_the_format_bump_under_0_10_0_iv0_is_refused_until_kafka_6238(version, refused):
    """Row ``broker.message_format_check`` decides, per broker line: ApiVersion order before 1.0.1 (KAFKA-6238),
    record versions from then on (1.1.1's and 3.9's KafkaConfig accept format 0.10.0 under 0.10.0-IV0)."""
    from kafkafmt.scenarios import BrokerSpec, Cluster
    start = {"message.format.version": "0.9.0", "inter.broker.protocol.version": "0.9.0-1"}
    with Cluster([BrokerSpec("A", version, dict(start))], [{"leader": "A"}]) as c:
        row = c.configure("A", properties={"message.format.version": "0.10.0"})
        assert (row.conversion == "refused to start") is refused
        assert row.magic_out == (None if refused else 1)
        assert c.brokers["A"].properties == (start if refused else {**start, "message.format.version": "0.10.0"})
        assert c.logs[("A", 0)].config.to_magic == (0 if refused else 1)
