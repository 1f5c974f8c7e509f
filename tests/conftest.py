"""Shared pytest fixtures.

``kafka_oracle``: Apache Kafka 3.9's own classes (MemoryRecordsBuilder, LogValidator, RecordsUtil,
the codecs) in a long-running JVM (see conformance/README.md).  Skipped with a clear reason when
the oracle is not built locally; a failure when ``CI=true``.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from kafkarig.oracle import close_shared_oracle, oracle_or_skip  # noqa: E402


@pytest.fixture(scope="session")
def kafka_oracle():
    """Apache Kafka 3.9 oracle (conformance/): skipped locally if not built, fails when CI=true."""
    oracle = oracle_or_skip()
    yield oracle
    close_shared_oracle()
