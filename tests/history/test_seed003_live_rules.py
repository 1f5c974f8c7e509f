"""Seed 003 on real releases, the parts decided without a JVM: the idempotent Java producer's settings per
release, the scenario as releases can run it (its proposals), the 1.0 line on its own release, the byte comparison of
v2 batches whose producer ids and leader epochs are the broker's, and how proposal rows are shown and counted.

The live run itself is ``test_scenario_live_seed003.py``.
"""
from __future__ import annotations

import pytest

from kafkafmt import kafka_lines
from kafkafmt.records.builder import build_records
from kafkafmt.scenarios import load_scenario, run_scenario
from kafkafmt.scenarios.live import LiveReport, LiveRow, render_rows
from kafkarig import proposals
from kafkarig.live_scenario import _exception_class, compare_bytes, release_of, unsupported
from kafkarig.oldclients import producer_settings
from kafkarig.releases import RELEASE_OF_LINE, ReleaseError

SEED003 = "seed003-upgrade-path"


# --------------------------------------------------------------------------- the Java producer's settings
def test_an_idempotent_0_11_producer_takes_one_request_in_flight():
    """0.11.0.3's KafkaProducer.configureInflightRequests: anything but 1 is a ConfigException."""
    assert producer_settings("0.11.0.3", True) == {
        "enable.idempotence": "true", "acks": "all", "retries": "2147483647",
        "max.in.flight.requests.per.connection": "1"}


@pytest.mark.parametrize("version", ["1.0.2", "1.1.1", "2.8.2"])
def test_an_idempotent_producer_from_1_0_on_takes_five(version):
    """KAFKA-5494 (1.0.0): at most 5, the broker keeping a producer's last five batches' sequences."""
    assert producer_settings(version, True)["max.in.flight.requests.per.connection"] == "5"
    assert producer_settings(version, True)["retries"] != "0"  # retries=0 is a ConfigException with idempotence


def test_the_in_flight_limit_is_a_row_of_the_lines():
    row = kafka_lines.change("producer.idempotent_max_in_flight")
    assert (row.since, row.source) == ("1.0", "KAFKA-5494")
    assert [kafka_lines.value(row.key, line) for line in ("0.11", "1.0", "1.1", "2.8")] == [1, 5, 5, 5]


def test_a_plain_producer_turns_idempotence_off_only_where_the_key_exists():
    assert producer_settings("0.11.0.3", False) == {"enable.idempotence": "false"}
    assert producer_settings("0.10.2.2", False) == {} == producer_settings("0.9.0.1", False)


@pytest.mark.parametrize("version", ["0.9.0.1", "0.10.2.2"])
def test_an_idempotent_producer_before_0_11_is_one_clear_line(version):
    with pytest.raises(ReleaseError) as e:
        producer_settings(version, True)
    assert str(e.value) == (f"kafka-clients {version} has no enable.idempotence: the idempotent producer came "
                            "with 0.11 (KIP-98)")


# --------------------------------------------------------------------------- which scenarios run live
def test_seed003_runs_live_and_its_line_1_0_runs_on_1_0_2():
    assert unsupported(load_scenario(SEED003)) is None
    assert release_of("1.0") == release_of("1.0.0") == "1.0.2"
    assert release_of("1.1") == "1.1.1"


def test_every_line_before_3_9_runs_on_a_release_of_its_own():
    """No line is checked on a neighbour's release: each of kafkafmt's lines 0.9 … 2.8 has its own (3.9 and 4.4 are
    checked against their jars by the oracles)."""
    older = [line for line in kafka_lines.KAFKA_LINES if kafka_lines.order(line) < kafka_lines.order("3.9")]
    assert sorted(RELEASE_OF_LINE, key=kafka_lines.order) == older
    assert all(kafka_lines.check_line(RELEASE_OF_LINE[line]) == line for line in older)


def test_an_idempotent_producer_of_a_release_before_0_11_is_refused(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\ntitle: t\nbrokers:\n  - {name: A, version: \"0.11.0\"}\npartitions:\n  - {leader: A}\n"
        "producers:\n  - {name: p, version: \"0.10.2\"}\nsteps:\n  - name: one\n    do:\n"
        "      - upgrade: {producer: p, idempotence: \"true\"}\n      - produce: {producer: p, records: 1}\n")
    why = unsupported(load_scenario(str(path)))
    assert why is not None and why.endswith(
        "producer p: kafka-clients 0.10.2.2 has no enable.idempotence: the idempotent producer came with 0.11 (KIP-98)")
    assert "\n" not in why


# --------------------------------------------------------------------------- the scenario as releases run it
def test_released_drops_the_brokers_modes_and_gives_safe_producers_true():
    seed = load_scenario(SEED003)
    runs = proposals.released(seed)
    assert [a for _act, a, _p in runs.steps[1].actions] == [{"broker": "S", "version": "1.0"},
                                                            {"broker": "K", "version": "1.0"}]
    assert runs.steps[2].actions[1][1] == {"producer": "p-safe", "version": "1.0", "idempotence": "true"}
    assert all(not st.expect for st in runs.steps)
    # the scenario as written is left as it is
    assert seed.steps[1].actions[0][1]["idempotence_modes"] is True
    assert seed.steps[2].actions[1][1]["idempotence"] == "safe" and seed.steps[0].expect


def test_the_seed_stores_a_safe_batch_the_releases_refuse():
    """Step 3, p-safe → S (a v1 topic): the seed's broker downgrades it, Kafka's rules refuse it (error 43)."""
    def p_safe(result):
        rows = result.steps[2].rows
        i = next(i for i, r in enumerate(rows) if r.path == "producer" and r.actor == "p-safe")
        return rows[i], rows[i + 1]

    seed_p, seed_l = p_safe(run_scenario(load_scenario(SEED003)))
    real_p, real_l = p_safe(run_scenario(proposals.released(load_scenario(SEED003))))
    assert proposals.produce_outcome(seed_p, seed_l) == (
        None, "ok, offsets 3-3, stored as v1; safe mode: producer id, epoch and sequences dropped (seed 003)")
    err, text = proposals.produce_outcome(real_p, real_l)
    assert err == "UnsupportedForMessageFormatException: Idempotent records cannot be used with magic version 1"
    row = proposals.safe_produce_row("p-safe → p0", (seed_p, seed_l), False, "error org.apache.kafka.common."
                                     "errors.UnsupportedForMessageFormatException: The message format version on "
                                     "the broker does not support the request.")
    assert row.proposal == proposals.SAFE_NOTE and not row.agree and row.model.startswith("ok, offsets 3-3")


# --------------------------------------------------------------------------- comparing what the brokers stored
def _idempotent(pid: int, epoch: int, value: bytes = b"v") -> bytes:
    return build_records([(1_700_000_000_000, b"k0", value)], producer_id=pid, producer_epoch=0, base_sequence=0,
                         partition_leader_epoch=epoch)


def test_v2_batches_agree_but_for_the_brokers_producer_ids_and_leader_epochs():
    legacy = build_records([(1_700_000_000_000, b"k0", b"v")], magic=1)
    model = legacy + _idempotent(4242, 0)
    real = legacy + _idempotent(0, 4)
    row = compare_bytes("replica S p0", model, real)
    assert row.agree, row
    assert row.what == "replica S p0 (v2: the broker's producer ids and leader epochs, compared without them)"
    assert row.model.endswith("producer ids [4242], leader epochs [0]")
    assert row.real.endswith("producer ids [0], leader epochs [4]")


@pytest.mark.parametrize("real", [_idempotent(0, 4, b"w"),  # another value
                                  build_records([(1_700_000_000_000, b"k0", b"v")], partition_leader_epoch=4)])
def test_anything_else_in_a_v2_batch_still_differs(real):
    """A value, or a batch without a producer id where the model has one (not idempotent on disk)."""
    row = compare_bytes("replica S p0", _idempotent(4242, 0), real)
    assert not row.agree and "first difference at byte" in row.detail


def test_the_error_class_is_the_one_compared():
    assert _exception_class("org.apache.kafka.common.errors.UnsupportedForMessageFormatException: The message "
                            "format version on the broker does not support the request.") == \
        "UnsupportedForMessageFormatException" == _exception_class(
            "UnsupportedForMessageFormatException: Idempotent records cannot be used with magic version 1")
    assert _exception_class("no answer from the broker within 16000 ms") is None
    assert _exception_class("NOT_LEADER_OR_FOLLOWER: partition 0 has no live leader") is None


# --------------------------------------------------------------------------- proposal rows: shown, not counted
def test_a_proposal_row_is_shown_as_seed_and_never_counted():
    rows = [LiveRow("p-off → p0", "ok, offsets 2-2", "ok, offsets 2-2", True),
            LiveRow("p-safe (enable.idempotence=safe) → p0 leader S", "ok, offsets 3-3, stored as v1",
                    "error UnsupportedForMessageFormatException", False, proposal=proposals.SAFE_NOTE)]
    report = LiveReport([(3, "step 2", rows)], {"S": "0.11.0.3→1.1.1"}, 9.0)
    assert report.ok and report.disagreements == [] and [r for *_, r in report.proposals] == [rows[1]]
    text = render_rows(3, "step 2", rows)
    assert text.splitlines()[4:] == [
        "   SEED   p-safe (enable.idempotence=safe) → p0 leader S",
        "          seed:  ok, offsets 3-3, stored as v1",
        "          real:  error UnsupportedForMessageFormatException",
        f"          note:  {proposals.SAFE_NOTE}; the release did otherwise (not counted)"]
    data = report.to_dict()
    assert (data["ok"], data["disagreements"], data["proposals"]) == (True, 0, 1)
    assert data["steps"][0]["rows"][1]["proposal"] == proposals.SAFE_NOTE
