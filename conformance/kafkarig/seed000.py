"""Seed 000's rolling upgrade from 0.9 to 0.10 (KIP-32's upgrade plan), for real, and its rollback.

Broker 1 runs 0.9.0.1, broker 2 runs 0.10.2.2 told to speak and write 0.9 (``inter.broker.protocol.version=
0.9.0``, ``log.message.format.version=0.9.0``); topic ``seed`` has two partitions with the replica
assignment ``1:2,2:1`` (partition 0 led by broker 1, partition 1 by broker 2: after each rolling restart the
preferred leaders are elected again, :func:`_restart`, so each phase reads the broker it means to).  Phases:

0. *mixed*: a 0.9 Java client writes to partition 0, a 0.10 Java client to partition 1;
1. *binaries*: broker 1's jars swapped to 0.10.2.2 on the same data directory (IBP and format 0.9.0);
2. *protocol*: a rolling restart with ``inter.broker.protocol.version=0.10.2``;
3. *format*: a rolling restart with ``log.message.format.version=0.10.2``, then both clients write again;
   a 0.9 consumer and a 0.10 consumer read both partitions;
4. *rollback*: a rolling restart back to format 0.9.0 and IBP 0.9.0, then broker 1 back on 0.9.0.1's
   jars; a 0.9 consumer reads both partitions again.

After every phase each partition's replicas are compared byte for byte (the follower's segment must
equal the leader's once the ISR is full), and what the leaders stored and the consumers read is compared
with kafkafmt's model of the release (:mod:`kafkarig.history`).  Restarts wait for the ISR to hold
both replicas again, never a fixed sleep.  :func:`run_seed000` returns the record of the run.
"""
from __future__ import annotations

import time

from kafkafmt.broker.fetch import fetch as model_fetch
from kafkafmt.broker.validator import validate_messages_and_assign_offsets
from kafkafmt.constants import CompressionType
from kafkafmt.records.builder import build_records

from .broker import BrokerError
from .history import (
    TS_BASE,
    Check,
    client_line,
    client_reads_magic,
    decode,
    hexdiff,
    model_config,
    model_consumed,
    real_consumed,
)
from .oldcluster import OldCluster
from .releases import release

__all__ = ["PHASES", "TOPIC", "run_seed000"]

TOPIC = "seed"
PHASES = ("mixed", "binaries", "protocol", "format", "rollback")
_OLD = {"inter.broker.protocol.version": "0.9.0", "log.message.format.version": "0.9.0"}
_CLUSTER = "0.9.0.1+0.10.2.2"


#: the preferred leader of each partition (the first replica of ``1:2,2:1``)
PREFERRED = {0: 1, 1: 2}


def _leaders(cluster: OldCluster) -> dict[int, int]:
    return {p: info["leader"] for p, info in cluster.partitions(TOPIC).items()}


def _restart(cluster: OldCluster, changes: dict[int, tuple[str | None, dict]], timeout: float = 30.0) -> None:
    """A rolling restart (each broker waits for the ISR), then the preferred leaders elected again
    (``PreferredReplicaLeaderElectionCommand``, as an operator does after a rolling restart: a restarted broker
    gives its partitions up and, with ``leader.imbalance.check.interval.seconds`` at 300, gets them back only
    minutes later); a BrokerError when the leaders are not :data:`PREFERRED` within ``timeout``."""
    cluster.rolling_restart([TOPIC], changes)
    if _leaders(cluster) == PREFERRED:
        return
    cluster.tool("kafka.admin.PreferredReplicaLeaderElectionCommand", ["--zookeeper", cluster.zk_connect])
    deadline = time.monotonic() + timeout
    while (got := _leaders(cluster)) != PREFERRED:
        if time.monotonic() > deadline:
            raise BrokerError(f"seed000: the preferred leaders {PREFERRED} were not elected within {timeout:.0f}s "
                              f"(leaders {got})")
        time.sleep(0.2)
    cluster.wait_in_sync(TOPIC)


def _wait_replicas(cluster: OldCluster, partition: int, timeout: float = 20.0) -> tuple[bytes, bytes, int]:
    """The leader's and the follower's segment of ``partition`` once equal (or at ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        p = cluster.in_sync_state(TOPIC)[partition]  # every assigned replica, as ZooKeeper holds them
        leader = p["leader"]
        follower = next(r for r in p["replicas"] if r != leader)
        a = cluster.brokers[leader].segment(TOPIC, partition).read_bytes()
        b = cluster.brokers[follower].segment(TOPIC, partition).read_bytes()
        if a == b or time.monotonic() > deadline:
            return a, b, leader
        time.sleep(0.2)


def _replica_checks(cluster: OldCluster, phase: str) -> list[Check]:
    out = []
    for p in (0, 1):
        a, b, leader = _wait_replicas(cluster, p)
        out.append(Check(_CLUSTER, f"seed000/{phase}/replicas-identical/p{p}", "replication",
                         f"leader {leader}'s segment vs the follower's", a.hex(), b.hex(), a == b, hexdiff(a, b),
                         "a follower appends the leader's bytes as they are"))
    return out


def _produce(cluster: OldCluster, client: str, partition: int, mfv: str, phase: str, magic: int) -> Check:
    """``client`` writes 3 uncompressed records to ``partition`` through its leader; the leader's
    appended bytes against the model's append of the same records (format ``mfv``)."""
    parts = cluster.partitions(TOPIC)
    leader = cluster.brokers[parts[partition]["leader"]]
    seg = leader.segment(TOPIC, partition)
    before = seg.stat().st_size
    leo = len(decode(seg.read_bytes()))
    run = _client_run(client, leader.bootstrap, partition, "produce")
    real = seg.read_bytes()[before:]
    recs = [(-1 if magic == 0 else TS_BASE + i, f"k{i}".encode(), f"value-{i}".encode()) for i in range(3)]
    data = build_records(recs, magic=magic, compression=CompressionType.NONE)
    m = validate_messages_and_assign_offsets(data, model_config(release("0.10.2.2"), mfv), offset=leo,
                                             produce_version={0: 1, 1: 2}[magic])
    expected = bytes(m.records)
    ok = run.ok and expected == real
    return Check(_CLUSTER, f"seed000/{phase}/produce/{client}/p{partition}", run.client,
                 f"3 records via broker {leader.id} ({leader.release.version}), format {mfv}", expected.hex(),
                 real.hex() if run.ok else f"refused: {run.error}", ok,
                 "" if ok else (run.error or hexdiff(expected, real)), m.path)


def _client_run(client: str, bootstrap: str, partition: int, job: str, offset: int = 0, count: int = 3):
    from .oldclients import java_client
    version = client.split("-", 1)[1]
    if job == "produce":
        return java_client(version, ["produce", bootstrap, TOPIC, str(partition), "none", "3", str(TS_BASE)])
    return java_client(version, ["consume", bootstrap, TOPIC, str(partition), str(offset), str(count)],
                       timeout_ms=6000)


def _consume(cluster: OldCluster, client: str, partition: int, mfv: str, phase: str, fetch_version: int) -> Check:
    """``client`` reads ``partition`` from 0 through its leader; its records against the model's fetch of the
    leader's segment read as that client reads (:func:`kafkarig.history.model_consumed`)."""
    parts = cluster.partitions(TOPIC)
    leader = cluster.brokers[parts[partition]["leader"]]
    seg = leader.segment(TOPIC, partition).read_bytes()
    count = len(decode(seg))
    run = _client_run(client, leader.bootstrap, partition, "consume", count=count)
    m = model_fetch(seg, topic_config=model_config(leader.release, mfv), fetch_version=fetch_version, fetch_offset=0)
    sees_time = client != "java-0.9.0.1"
    fetched = bytes(m.records)  # the whole conversion: a consumer fetches the rest of a cut response
    expected = model_consumed(fetched, client_reads_magic(client), sees_time, count, client_line(client))
    real = real_consumed(run, sees_time)
    ok = expected == real
    return Check(_CLUSTER, f"seed000/{phase}/consume/{client}/p{partition}", run.client,
                 f"{count} records from broker {leader.id} ({leader.release.version}), fetch v{fetch_version}",
                 expected, real, ok, "" if ok else f"expected {expected!r}, real {real!r}",
                 "zero-copy" if m.zero_copy else f"down-converted to v{m.to_magic}",
                 {"segment_magics": sorted({r["magic"] for r in decode(seg)}), "fetched": fetched.hex()})


def run_seed000() -> dict:
    """Run every phase; the record: per phase the checks (dicts) and the seconds it took."""
    t0 = time.monotonic()
    phases: dict[str, dict] = {}

    def phase(name: str, checks: list[Check], t: float) -> None:
        phases[name] = {"seconds": round(time.monotonic() - t, 1), "checks": [c.to_dict() for c in checks]}

    with OldCluster("0.9.0.1", chroot="seed000") as c:
        t = time.monotonic()
        c.add_broker(1, "0.9.0.1")
        c.add_broker(2, "0.10.2.2", dict(_OLD))
        c.create_topic(TOPIC, replica_assignment="1:2,2:1", version="0.9.0.1")
        checks = [_produce(c, "java-0.9.0.1", 0, "0.9.0", "mixed", 0),
                  _produce(c, "java-0.10.2.2", 1, "0.9.0", "mixed", 1)]
        phase("mixed", checks + _replica_checks(c, "mixed"), t)

        t = time.monotonic()
        _restart(c, {1: ("0.10.2.2", dict(_OLD))})
        phase("binaries", _replica_checks(c, "binaries"), t)

        t = time.monotonic()
        ibp = {"inter.broker.protocol.version": "0.10.2"}
        _restart(c, {1: (None, ibp), 2: (None, ibp)})
        phase("protocol", _replica_checks(c, "protocol"), t)

        t = time.monotonic()
        fmt = {"log.message.format.version": "0.10.2"}
        _restart(c, {1: (None, fmt), 2: (None, fmt)})
        checks = [_produce(c, "java-0.9.0.1", 0, "0.10.2", "format", 0),
                  _produce(c, "java-0.10.2.2", 1, "0.10.2", "format", 1)]
        checks += _replica_checks(c, "format")
        for p in (0, 1):
            checks += [_consume(c, "java-0.9.0.1", p, "0.10.2", "format", 1),
                       _consume(c, "java-0.10.2.2", p, "0.10.2", "format", 3)]
        phase("format", checks, t)

        t = time.monotonic()
        old_fmt = {"log.message.format.version": "0.9.0"}
        old_ibp = {"inter.broker.protocol.version": "0.9.0"}
        _restart(c, {1: (None, old_fmt | old_ibp), 2: (None, old_fmt | old_ibp)})
        _restart(c, {1: ("0.9.0.1", {})})
        checks = _replica_checks(c, "rollback")
        for p in (0, 1):
            checks.append(_consume(c, "java-0.9.0.1", p, "0.9.0", "rollback", 1))
        phase("rollback", checks, t)
    return {"cluster": _CLUSTER, "seconds": round(time.monotonic() - t0, 1), "phases": phases}
