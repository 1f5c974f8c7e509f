"""Fixtures for the Kafka 4.4 line: the 4.4.0 oracle (jars of ``make -C conformance oracle-4.4``)."""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.dirname(HERE))  # tests/ (kafka_oracle, ci_mode)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "broker"))  # broker_helpers


@pytest.fixture(scope="session")
def oracle44():
    from kafkarig.oracle44 import oracle44_or_skip
    return oracle44_or_skip()
