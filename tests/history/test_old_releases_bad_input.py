"""Bad input to the old-release rig: each one clear line, nothing left running.

An unknown release, a release Maven cannot give, a broker that does not start, a client of a release the
broker refuses (a 0.10 Java client against a 0.9.0.1 broker: it starts with ApiVersions, KIP-35, which
0.9 cannot answer).
"""
from __future__ import annotations

import pytest

from kafkarig.releases import Release, ReleaseError, release
from old_release_fixtures import releases_or_skip


def test_unknown_release_is_one_clear_line():
    with pytest.raises(ReleaseError) as e:
        release("0.8.2.2")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("unknown Kafka release '0.8.2.2': the rig runs 0.9.0.1, 0.10.0.1")


def test_a_line_names_its_last_patch_release():
    assert release("0.10.2").version == "0.10.2.2"
    assert release("0.9").version == "0.9.0.1"


@pytest.mark.java
def test_release_maven_cannot_give_is_one_clear_line(tmp_path, monkeypatch):
    from kafkarig import releases
    releases_or_skip("0.9.0.1")  # Maven and Java present
    monkeypatch.setattr(releases, "CACHE_DIR", tmp_path)
    ghost = Release("0.9.9.9", "2.11", "0.9", "0.9.0", 0, (0, 1), (0, 1))
    with pytest.raises(ReleaseError) as e:
        releases.resolve(ghost)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("Maven cannot give Kafka 0.9.9.9 (org.apache.kafka:kafka_2.11:0.9.9.9): ")
    assert "mvn.log" in msg


@pytest.fixture(scope="module")
def cluster09():
    releases_or_skip("0.9.0.1")
    releases_or_skip("0.10.2.2")
    from kafkarig.oldcluster import OldCluster
    c = OldCluster("0.9.0.1", chroot="bad-input")
    try:
        c.add_broker(1, "0.9.0.1")
        c.create_topic("t")
        yield c
    finally:
        c.close()


def _alive(pid: int) -> bool:
    from kafkarig.broker import pid_alive
    return pid_alive(pid)


@pytest.mark.java
@pytest.mark.broker
def test_broker_that_does_not_start_is_one_clear_line_and_stopped(cluster09):
    from kafkarig.oldcluster import BrokerError
    with pytest.raises(BrokerError) as e:
        cluster09.add_broker(7, "0.10.2.2", {"log.message.format.version": "not-a-version"})
    first, _, tail = str(e.value).partition("\n")
    assert first == "Kafka 0.10.2.2 broker 7 exited with 1 before it started"
    assert "not-a-version" in tail  # the log tail says why
    assert not _alive(cluster09.brokers[7].process.pid)


@pytest.mark.java
@pytest.mark.broker
def test_client_the_broker_refuses_is_one_clear_line(cluster09):
    from kafkarig.oldclients import java_client
    broker = cluster09.brokers[1]
    run = java_client("0.10.2.2", ["produce", broker.bootstrap, "t", "0", "none", "1", "-1"], timeout_ms=2000)
    assert not run.ok
    assert run.one_line().startswith("kafka-clients 0.10.2.2: failed: ")
    assert "\n" not in run.one_line()
    assert broker.running()  # the broker survives a client it cannot serve


@pytest.mark.java
@pytest.mark.broker
def test_closing_a_cluster_stops_every_jvm(cluster09):
    pids = cluster09.pids()
    assert len(pids) == 2  # ZooKeeper and broker 1 (broker 7 never started)
    cluster09.close()
    assert not any(_alive(p) for p in pids)
