"""The broker fixtures leave nothing behind: processes stopped by PID, ports closed, temp dir gone,
also when the code using the cluster raises."""
from __future__ import annotations

import os

import pytest

from ci_mode import skip_or_fail
from kafkarig.broker import Cluster, java_missing_reason, pid_alive, port_is_listening

pytestmark = [pytest.mark.java, pytest.mark.broker]


class Boom(Exception):
    pass


def test_cluster_cleans_up_even_on_error():
    reason = java_missing_reason()
    if reason:
        skip_or_fail(reason)
    seen = {}
    with pytest.raises(Boom):
        with Cluster() as cluster:
            broker = cluster.broker("legacy")
            with broker.client() as c:
                versions = c.api_versions()
                assert 0 in versions and 1 in versions  # Produce, Fetch
                assert c.create_topic("lifecycle", {"message.format.version": "0.10.2"}) == (0, None)
            seen.update(pids=cluster.pids(), ports=cluster.ports(), root=cluster.root,
                        listeners=broker.config["listeners"])
            assert all(pid_alive(p) for p in seen["pids"])
            assert all(port_is_listening(p) for p in seen["ports"])
            raise Boom()
    assert seen["listeners"].startswith("PLAINTEXT://127.0.0.1:")
    assert not [p for p in seen["pids"] if pid_alive(p)], "processes left running"
    assert not [p for p in seen["ports"] if port_is_listening(p)], "ports left listening"
    assert not os.path.exists(seen["root"]), "temp dir left behind"
