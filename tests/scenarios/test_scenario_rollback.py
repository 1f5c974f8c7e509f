"""Seed 000's one-broker trial and rollback: after broker B's data is nuked and re-replicated, V0 is on its disk,
byte for byte (kafkafmt/scenarios/data/seed000-trial-rollback-ibp-0.10.0.yaml: B's ApiVersion 0.10.0).

Under the seed's ApiVersion 0.9.0-1 (0.10.0-IV0, seed000-trial-rollback.yaml) a 0.10.0 broker refuses the
trial's format: the run stops at trial 1 (KafkaConfig before KAFKA-6238)."""
from __future__ import annotations

import pytest

from kafkafmt.broker import down_convert
from kafkafmt.records import MemoryRecords
from kafkafmt.scenarios import render, run_file
from kafkafmt.scenarios.quotes import QUOTES


@pytest.fixture(scope="module")
def run():
    result, cluster = run_file("seed000-trial-rollback-ibp-0.10.0", keep_cluster=True)
    yield result, cluster
    cluster.close()


def disk(result, step, broker):
    (row,) = [r for r in result.steps[step].rows if r.path == "disk" and r.actor == broker]
    return bytes.fromhex(row.detail["hex"])


def test_expectations_hold(run):
    result, _ = run
    assert result.ok, result.failed_checks


def test_trial_b_writes_v1_and_others_get_down_converted_v0(run):
    """000.t.2: "Broker B will start to act like what described in phase 2." and 000.t.2.2: "It will only see
    ProduceRequest/FetchRequest V1 from other brokers and clietns."."""
    result, _ = run
    b_v1 = disk(result, 1, "B")
    assert {x.magic for x in MemoryRecords(b_v1).batches()} == {1}
    a_v0 = disk(result, 1, "A")
    # what A holds is exactly Kafka's down-conversion of B's v1 batches (RecordsUtil.downConvert)
    assert a_v0 == down_convert(list(MemoryRecords(b_v1).batches()), 0).records


def test_rollback_b_has_v0_on_disk_byte_for_byte(run):
    """000.t.3.4: "restart the broker to let the broker replicate from leaders. At this point the data on disk will
    be in MessageAndOffset V0."."""
    result, cluster = run
    final_b = cluster.log_bytes("B", 1)
    assert final_b == disk(result, 5, "B") == disk(result, 5, "A") == disk(result, 1, "A")
    assert [x.magic for x in MemoryRecords(final_b).batches()] == [0]
    assert [r.value for r in MemoryRecords(final_b).records()] == [b"p-old value 0", b"p-old value 1",
                                                                   b"p-old value 2"]
    assert final_b != disk(result, 1, "B")  # the v1 copy B wrote as leader is gone
    text = render(result)
    assert final_b.hex()[:64] in text  # shown byte for byte in the table


def test_rollback_steps_cite_the_seed_and_warn_on_the_nuke(run):
    result, _ = run
    assert [s.cite for s in result.steps[2:]] == [["000.t.3", "000.t.3.1"], ["000.t.3.2"], ["000.t.3.3"],
                                                  ["000.t.3.4"]]
    (w,) = [w for w in result.steps[3].warnings if QUOTES["000.t.3.2"][1] in w]
    assert "every offset is on another replica" in w


def test_the_seeds_trial_is_refused_by_0_10_0_and_the_run_stops():
    """000.t.1 with 000.p1.5's ApiVersion 0.9.0-1: broker B does not start; the rollback steps are not run."""
    result = run_file("seed000-trial-rollback")
    (row,) = result.steps[0].rows
    assert (row.actor, row.conversion) == ("B", "refused to start")
    assert row.detail["reason"] == ("log.message.format.version 0.10.0 cannot be used when "
                                    "inter.broker.protocol.version is set to 0.10.0-IV0")
    assert [n for n, _ in result.not_run] == [2, 3, 4, 5, 6] and not result.ok
    assert render(result).splitlines()[-1] == ("1 of 6 steps run (a broker refused to start at step 1), 1 failed "
                                               "expectation(s)")
