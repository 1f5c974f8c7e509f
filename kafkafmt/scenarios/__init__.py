"""Executable scenarios: the seeds' rolling upgrades and compatibility matrices, on real bytes.

* :mod:`.model` — broker, producer and consumer specs, :class:`PathRow`, :func:`topic_config_for` and
  :func:`broker_config_for` (a broker's settings as its release checks them).
* :mod:`.cluster` — :class:`Cluster` of brokers, producers and consumers over ``kafkafmt.log.Log``
  replicas (produce → leader → follower → consumer, each hop on real bytes).
* :mod:`.loader` — scenario files (YAML/JSON, ``docs/how-to/scenario.md``), :class:`ScenarioError`.
* :mod:`.runner` — :func:`run_scenario`, expectations, warnings quoting the seeds, rendering.
* :mod:`.matrices` — seed 002's producer/consumer matrices and seed 003's mode × format table,
  each cell computed by running a scenario, beside the seed's cell and Kafka 3.9.2's behaviour.
* :mod:`.quotes` — the seed sentences cited.  :mod:`.versions` — request versions per generation.
"""
from .cluster import Cluster
from .loader import Scenario, ScenarioError, Step, load_scenario, parse_scenario, shipped_scenarios
from .model import BrokerSpec, ConsumerSpec, PathRow, ProducerSpec, broker_config_for, topic_config_for
from .runner import ScenarioResult, StepResult, render, run_file, run_scenario

__all__ = ["BrokerSpec", "Cluster", "ConsumerSpec", "PathRow", "ProducerSpec", "topic_config_for", "broker_config_for",
           "Scenario", "ScenarioError", "Step", "load_scenario", "parse_scenario", "shipped_scenarios",
           "ScenarioResult", "StepResult", "render", "run_file", "run_scenario"]
