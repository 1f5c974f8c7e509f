"""Brokers of the Kafka 4.4 line in the cluster model (``version: "4.4"``), beside 3.9 ones: the request
versions they answer, the properties they no longer know, and what old and current clients get.
What the model says is what tests/conformance/test_kafka44_broker.py measures on a live 4.4.0 broker."""
from __future__ import annotations

import pytest

from kafkafmt.scenarios import ScenarioError, load_scenario, parse_scenario, run_scenario
from kafkafmt.scenarios.model import BrokerSpec, removed_properties, topic_config_for
from kafkafmt.scenarios.versions import client_api_versions, kafka4_line, replica_fetch_version

SC = """name: t
brokers: [{name: A, version: "4.4"}]
producers: [{name: p-old, version: "0.10.0"}, {name: p, version: "3.9", compression: zstd}]
consumers: [{name: c-old, version: "0.10.1"}, {name: c, version: "4.4"}]
steps:
  - do:
      - produce: {producer: p, records: 2}
      - produce: {producer: p-old, records: 1}
      - consume: {consumer: c}
      - consume: {consumer: c-old}
"""


def test_versions_of_a_4_4_generation():
    assert kafka4_line("4.4") == kafka4_line("4.4.0") == "4.4" and kafka4_line("4.0") is None
    assert client_api_versions("4.4") == (13, 18) and replica_fetch_version("4.4") == 18
    assert client_api_versions("3.9") == (11, 17)  # the 3.9 table as it was


def test_a_4_4_broker_runs_the_4_4_line():
    b = BrokerSpec("A", "4.4", {"inter.broker.protocol.version": "2.8", "message.format.version": "0.10.0",
                                "cleanup.policy": "compact"})
    assert removed_properties(b) == ["inter.broker.protocol.version", "message.format.version"]
    cfg = topic_config_for(b)
    assert cfg.broker.kafka_line == "4.4" and cfg.to_magic == 2 and cfg.compact
    assert removed_properties(BrokerSpec("A", "3.9", {"message.format.version": "0.10.0"})) == []


def test_old_clients_get_no_answer_current_ones_are_served():
    (step,) = run_scenario(parse_scenario(SC, "t.yaml")).steps
    rows = {(r.path, r.detail.get("producer") or r.actor): r for r in step.rows}
    assert rows[("leader", "p")].error is None and rows[("leader", "p")].magic_out == 2
    assert rows[("leader", "p-old")].error.startswith("UnsupportedVersionException: Produce v2 is not supported")
    assert rows[("consumer", "c")].conversion == "zero-copy" and rows[("consumer", "c")].records == 2
    old = rows[("consumer", "c-old")]
    assert old.request == "FetchRequest v3" and old.records == 0
    assert old.error.startswith("UNSUPPORTED_VERSION: no response, A closes the connection (Fetch v3 < v4)")


def test_a_4_4_broker_declared_with_a_removed_property_is_an_error():
    bad = SC.replace('{name: A, version: "4.4"}', '{name: A, version: "4.4", properties: {message.format.version: "0.10.0"}}')
    with pytest.raises(ScenarioError, match=r"brokers\[0\]\.properties\.message\.format\.version: Kafka 4\.4 no longer"):
        parse_scenario(bad, "bad.yaml")


def test_the_shipped_upgrade_story():
    result = run_scenario(load_scenario("kafka4-upgrade"))
    assert result.ok, result.failed_checks
    roll = result.steps[3]
    assert [r.detail["kafka_line"] for r in roll.rows if r.path == "broker"] == ["4.4", "4.4"]
