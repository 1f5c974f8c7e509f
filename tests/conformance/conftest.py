"""Fixtures for the differential conformance tests (issue 5): a real Kafka 3.9 broker (ZooKeeper mode)
on 127.0.0.1, session-scoped, and the results of the cases of ``conformance/cases/*.json``.

Skipped locally with a clear reason when Java or the jars (``make oracle``) are missing; a failure
when ``CI=true``.  The cases run once per session (only those the session selected), in the same
runner as ``python conformance/run.py``; each test then asserts its case's result.
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.dirname(HERE))  # tests/

from kafkarig.broker import pid_alive, port_is_listening  # noqa: E402
from kafkarig.oracle import oracle_missing_reason, shared_oracle  # noqa: E402
from live_broker import zookeeper_cluster  # noqa: E402


@pytest.fixture(scope="session")
def kafka_cluster():
    """ZooKeeper + brokers started on demand (one per profile); stopped by PID and checked at the end."""
    with zookeeper_cluster() as cluster:
        yield cluster
        pids, ports, root = cluster.pids(), cluster.ports(), cluster.root
    left = [p for p in pids if pid_alive(p)]
    listening = [p for p in ports if port_is_listening(p)]
    assert not left, f"broker/ZooKeeper processes left running: {left}"
    assert not listening, f"ports still listening after the cluster stopped: {listening}"
    assert not root.exists(), f"temp dir left behind: {root}"


@pytest.fixture(scope="session")
def conformance_results(request, kafka_cluster):
    """{case id: CaseResult} for every conformance case selected in this session."""
    from kafkarig.cases import load_cases
    from kafkarig.runner import Runner

    wanted = set()
    for item in request.session.items:
        cs = getattr(item, "callspec", None)
        # only this fixture's users: other modules name a parameter "case" too (a live accounting case's name)
        if cs is not None and "case" in cs.params and "conformance_results" in item.fixturenames:
            wanted.add(cs.params["case"].id)
    cases = [c for c in load_cases() if c.id in wanted] if wanted else load_cases()
    oracle = None
    if oracle_missing_reason() is None:
        try:
            oracle = shared_oracle()
        except Exception:  # the 'read' check is then pending
            oracle = None
    runner = Runner(kafka_cluster, oracle=oracle)
    try:
        results = runner.run(cases)
        yield {r.case.id: r for r in results}
    finally:
        runner.close()
