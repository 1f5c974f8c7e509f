"""ZooKeeper-mode clusters of old Kafka releases (0.9.0.1 ... 2.8.2) on 127.0.0.1, stopped by PID.

One ZooKeeper per cluster (from a release's own jars), a chroot per cluster, brokers of any release
from :mod:`kafkarig.releases`, each a JVM capped at 256 MB of heap with its own ``server.properties``
(``inter.broker.protocol.version``, ``log.message.format.version`` per broker).  A broker restarts on
the same log dir with another release's jars (:meth:`OldBroker.restart`), which is how a rolling
upgrade or a rollback swaps binaries; :meth:`OldCluster.rolling_restart` waits for every partition's
ISR to hold all its replicas again (the ISR ZooKeeper holds, which the controller acts on), never a fixed sleep.

Readiness is the broker's own "started (kafka.server.KafkaServer)" line in its ``kafka.log`` (a 0.9
broker cannot answer ApiVersions, so the newer probe of :mod:`kafkarig.broker` does not fit); a broker
that exits or does not start in time raises :class:`~kafkarig.broker.BrokerError` whose
first line says which, followed by its log tail.  :meth:`OldCluster.close` stops every JVM whatever
happened (and an ``atexit`` hook of the launcher stops any left).

Topics are created with the release's own ``kafka.admin.TopicCommand --zookeeper`` and topic configs
changed with its ``kafka.admin.ConfigCommand`` (what an operator of that release ran); the
partition state (leader, replicas, ISR) is read with a Metadata v0 request, which every release answers.

    with OldCluster("0.10.2.2") as c:
        b = c.add_broker(1, "0.10.2.2", {"log.message.format.version": "0.9.0"})
        c.create_topic("t", configs={"message.format.version": "0.9.0"})
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .broker import (
    BASE_BROKER_CONFIG,
    JVM_OPTS,
    LOG4J,
    BrokerError,
    JavaProcess,
    ZooKeeper,
    free_port,
)
from .client import KafkaClient, ProtocolError, Writer
from .properties import write_server_properties
from .releases import Release, release, resolve
from .zkread import partition_state, replica_assignment

__all__ = ["TOOLS_LOG4J", "BrokerError", "OldBroker", "OldCluster", "metadata_v0"]

API_METADATA = 3
#: each broker's JVM: the launcher's options (heap capped at 256 MB, serial GC, C1 only)
BROKER_JVM_OPTS = [*JVM_OPTS]
STARTED = re.compile(r"started \(kafka\.server\.KafkaServer\)")
#: what a broker logs when it cannot read a request it received: 0.9 meets an API key newer than itself
#: (ApiVersions, KIP-35, which every Java client from 0.10.0 sends first) in ``ApiKeys.forId``, and its network
#: ``Processor`` logs the uncaught exception; a request it cannot parse closes the socket
UNREADABLE_REQUEST = re.compile(r"Processor got uncaught exception|Closing socket for \S+ because of error")
#: the admin tools' log: warnings and errors to stderr, nothing else
TOOLS_LOG4J = """\
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%p %m (%c)%n
"""


def metadata_v0(port: int, topics: list[str], timeout: float = 10.0) -> dict:
    """Metadata v0 (every release since 0.8 answers it): ``{"brokers": {id: port}, "topics": {name:
    {"error": e, "partitions": {p: {"error", "leader", "replicas", "isr"}}}}}``."""
    body = Writer().array(topics, lambda w, t: w.string(t)).getvalue()
    with KafkaClient("127.0.0.1", port, timeout=timeout) as c:
        r = c.request(API_METADATA, 0, body)
        brokers = dict(r.array(lambda r: (r.int32(), (r.string(), r.int32())[1])))

        def part(r):
            err, p, leader = r.int16(), r.int32(), r.int32()
            return p, {"error": err, "leader": leader, "replicas": r.array(lambda r: r.int32()),
                       "isr": r.array(lambda r: r.int32())}

        def topic(r):
            err, name = r.int16(), r.string()
            return name, {"error": err, "partitions": dict(r.array(part))}

        return {"brokers": brokers, "topics": dict(r.array(topic))}


class OldBroker:
    """One broker of a cluster: its id, port, log dir and current release; restartable in place."""

    def __init__(self, cluster: OldCluster, broker_id: int, rel: Release, config: dict[str, str]) -> None:
        self.cluster = cluster
        self.id = broker_id
        self.dir = cluster.root / f"broker-{broker_id}"
        self.dir.mkdir(parents=True)
        self.log_dir = self.dir / "data"
        self.log_file = self.dir / "kafka.log"
        self.port = free_port()
        self.release = rel
        self.overrides = dict(config)
        #: the JVM's options on its next start (a benchmark sets Kafka's own defaults here)
        self.jvm_opts = list(BROKER_JVM_OPTS)
        self.process: JavaProcess | None = None
        (self.dir / "log4j.properties").write_text(LOG4J.format(path=self.log_file))

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def config(self) -> dict[str, str]:
        return {
            **BASE_BROKER_CONFIG,
            "broker.id": str(self.id),
            # 0.9 predates listeners' advertised twin in some tools: set both, and the old host/port
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.log_dir),
            "zookeeper.connect": self.cluster.zk_connect,
            "offsets.topic.replication.factor": "1",
            # before 0.10.1 (KIP-74) a follower must fetch a whole message.max.bytes message
            "replica.fetch.max.bytes": BASE_BROKER_CONFIG["message.max.bytes"],
            # records carry fixed timestamps from the past: since 0.10.1 (KIP-33) retention reads them
            "log.retention.hours": "876000",
            **self.overrides,
        }

    def start(self, timeout: float = 90.0) -> None:
        resolve(self.release)
        props = write_server_properties(self.dir, self.config())
        seen = self.log_file.stat().st_size if self.log_file.exists() else 0
        self.process = JavaProcess("kafka", "kafka.Kafka", [str(props)], self.dir, jvm_opts=self.jvm_opts,
                                   lib_dir=self.release.lib_dir,
                                   sysprops={"log4j.configuration": f"file:{self.dir / 'log4j.properties'}",
                                             "kafka.logs.dir": str(self.dir)})
        self.process.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.process.running():
                code = self.process.proc.returncode
                self.process.stop()
                raise BrokerError(f"Kafka {self.release.version} broker {self.id} exited with {code} before "
                                  f"it started\n{self._tail(seen)}")
            if self._log_since(seen) and STARTED.search(self._log_since(seen)):
                return
            time.sleep(0.1)
        self.process.stop()
        raise BrokerError(f"Kafka {self.release.version} broker {self.id} did not start within {timeout:.0f}s\n"
                          f"{self._tail(seen)}")

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.log_file, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_mark(self) -> int:
        """Where the broker's log ends now (for :meth:`unreadable_request_since`)."""
        try:
            return self.log_file.stat().st_size
        except OSError:
            return 0

    def unreadable_request_since(self, mark: int) -> str | None:
        """The broker's own words, when it logged since ``mark`` that it could not read a request
        (:data:`UNREADABLE_REQUEST`: its line and the exception's), else None."""
        text = self._log_since(mark)
        found = UNREADABLE_REQUEST.search(text)
        if found is None:
            return None
        lines = text[found.start():].splitlines()
        return (f"Kafka {self.release.version} broker {self.id} could not read the client's request: "
                + " ".join(line.strip() for line in lines[:2])[:300])

    def _tail(self, since: int, n: int = 2500) -> str:
        return f"--- kafka.log\n{self._log_since(since)[-n:]}\n{self.process.log_tail(800) if self.process else ''}"

    def running(self) -> bool:
        return self.process is not None and self.process.running()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def restart(self, version: str | None = None, config: dict[str, str | None] | None = None,
                timeout: float = 90.0) -> None:
        """Stop, then start on the same log dir with ``version``'s jars and ``config`` merged in
        (a ``None`` value removes a key)."""
        self.stop()
        if version is not None:
            self.release = release(version)
        for k, v in (config or {}).items():
            if v is None:
                self.overrides.pop(k, None)
            else:
                self.overrides[k] = v
        self.start(timeout)

    def partition_dir(self, topic: str, partition: int = 0) -> Path:
        return self.log_dir / f"{topic}-{partition}"

    def segment(self, topic: str, partition: int = 0, base_offset: int = 0) -> Path:
        return self.partition_dir(topic, partition) / f"{base_offset:020d}.log"

    def client(self, timeout: float = 30.0) -> KafkaClient:
        return KafkaClient("127.0.0.1", self.port, timeout=timeout)


class OldCluster:
    """One ZooKeeper (from ``zk_release``'s jars) and the brokers added to it; all in one temp dir."""

    def __init__(self, zk_release: str, *, chroot: str = "kafkafmt", root: str | None = None) -> None:
        self.zk_release = release(zk_release)
        resolve(self.zk_release)
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="kafkafmt-history-"))
        self._own_root = root is None
        self.chroot = chroot
        self.brokers: dict[int, OldBroker] = {}
        self.zk: ZooKeeper | None = ZooKeeper(self.root)
        # the launcher's ZooKeeper, run from this release's class path (ZooKeeper 3.4.x / 3.5.x)
        cmd = self.zk.process.cmd
        cmd[cmd.index("-cp") + 1] = f"{self.zk_release.lib_dir}/*"
        try:
            self.zk.start()
        except BaseException:
            self.close()
            raise

    @property
    def zk_connect(self) -> str:
        return f"{self.zk.connect}/{self.chroot}"

    def __enter__(self) -> OldCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- brokers ------------------------------------------------------------------------------------
    def add_broker(self, broker_id: int, version: str, config: dict[str, str] | None = None, *,
                   start: bool = True) -> OldBroker:
        b = OldBroker(self, broker_id, release(version), config or {})
        self.brokers[broker_id] = b
        if start:
            b.start()
        return b

    def live_broker(self) -> OldBroker:
        for b in self.brokers.values():
            if b.running():
                return b
        raise BrokerError("no broker of the cluster is running")

    def pids(self) -> list[int]:
        procs = [b.process for b in self.brokers.values() if b.process] + ([self.zk.process] if self.zk else [])
        return [p.pid for p in procs if p.pid is not None and p.running()]

    # -- the release's own admin tools ---------------------------------------------------------------
    def tool(self, main_class: str, args: list[str], version: str | None = None, timeout: float = 90.0) -> str:
        """Run ``main_class`` of ``version`` (default: the ZooKeeper's release) and return its stdout;
        BrokerError with its stderr when it fails."""
        rel = release(version) if version else self.zk_release
        resolve(rel)
        log4j = self.root / "tools-log4j.properties"
        if not log4j.exists():
            log4j.write_text(TOOLS_LOG4J)
        cmd = ["java", *JVM_OPTS, f"-Dlog4j.configuration=file:{log4j}", "-cp", f"{rel.lib_dir}/*", main_class,
               *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
        if p.returncode != 0 or "Error while executing" in p.stdout:
            first = (p.stdout + p.stderr).strip().splitlines()
            raise BrokerError(f"{main_class.rsplit('.', 1)[-1]} of Kafka {rel.version} failed: "
                              f"{first[0] if first else p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        return p.stdout

    def create_topic(self, name: str, *, partitions: int = 1, replication_factor: int = 1,
                     replica_assignment: str | None = None, configs: dict[str, str] | None = None,
                     version: str | None = None, timeout: float = 30.0) -> None:
        """``kafka.admin.TopicCommand --zookeeper ... --create``, then wait for every partition's leader
        and full ISR (``replica_assignment`` as the tool takes it: ``1:2,2:1``)."""
        args = ["--zookeeper", self.zk_connect, "--create", "--topic", name]
        if replica_assignment:
            args += ["--replica-assignment", replica_assignment]
        else:
            args += ["--partitions", str(partitions), "--replication-factor", str(replication_factor)]
        for k, v in (configs or {}).items():
            args += ["--config", f"{k}={v}"]
        self.tool("kafka.admin.TopicCommand", args, version)
        self.wait_in_sync(name, timeout=timeout)

    def alter_topic_config(self, name: str, add: dict[str, str] | None = None, delete: list[str] | None = None,
                           version: str | None = None) -> None:
        args = ["--zookeeper", self.zk_connect, "--alter", "--entity-type", "topics", "--entity-name", name]
        if add:
            args += ["--add-config", ",".join(f"{k}={v}" for k, v in add.items())]
        if delete:
            args += ["--delete-config", ",".join(delete)]
        self.tool("kafka.admin.ConfigCommand", args, version)

    def dump_log_segments(self, segment: Path, version: str) -> str:
        """The release's own ``kafka.tools.DumpLogSegments --deep-iteration --print-data-log``."""
        return self.tool("kafka.tools.DumpLogSegments",
                         ["--files", str(segment), "--deep-iteration", "--print-data-log"], version)

    # -- partition state --------------------------------------------------------------------------------
    def partitions(self, topic: str) -> dict[int, dict]:
        """Each partition of ``topic`` as a live broker's Metadata v0 answers: its leader, and the replicas that broker
        knows alive (:meth:`in_sync_state` has every assigned replica)."""
        md = metadata_v0(self.live_broker().port, [topic])
        return md["topics"].get(topic, {}).get("partitions", {})

    def in_sync_state(self, topic: str) -> dict[int, dict]:
        """Each partition of ``topic``: its leader from a broker's metadata (Metadata v0), its replicas, ISR and
        ``zk_leader`` as ZooKeeper holds them (:mod:`kafkarig.zkread`: a broker's metadata lists only the replicas
        it knows alive, and shows an ISR grown back only when the leader propagates it, seconds later)."""
        out = {}
        assigned = replica_assignment(self.zk_connect, topic) or {}
        for n, p in self.partitions(topic).items():
            state = partition_state(self.zk_connect, topic, n) or {"leader": -1, "isr": []}
            out[n] = {**p, "replicas": assigned.get(n, p["replicas"]), "isr": state["isr"], "zk_leader": state["leader"]}
        return out

    def wait_in_sync(self, topic: str, timeout: float = 60.0, brokers: set[int] | None = None) -> dict[int, dict]:
        """Wait until every partition of ``topic`` has a leader, the same in the brokers' metadata and in ZooKeeper,
        and its ISR (ZooKeeper's, what the controller acts on) holds all its replicas (those of ``brokers`` only,
        when given: the others are down); returns :meth:`in_sync_state`."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                parts = self.in_sync_state(topic)
                if parts and all(p["leader"] >= 0 and p["leader"] == p["zk_leader"] and set(p["isr"]) >= (
                        set(p["replicas"]) if brokers is None else set(p["replicas"]) & brokers)
                        for p in parts.values()):
                    return parts
                last = parts
            except (OSError, ProtocolError, BrokerError, ValueError) as e:
                last = e
            time.sleep(0.2)
        raise BrokerError(f"topic {topic}: partitions not in sync within {timeout:.0f}s: {last}")

    def rolling_restart(self, topics: list[str], changes: dict[int, tuple[str | None, dict]],
                        timeout: float = 60.0) -> None:
        """Restart brokers one at a time (``{broker_id: (release or None, config changes)}``), waiting
        after each for every partition of ``topics`` to be back in sync before the next one."""
        for broker_id, (version, config) in changes.items():
            self.brokers[broker_id].restart(version, config)
            for t in topics:
                self.wait_in_sync(t, timeout)

    # -- the end ----------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every broker, then ZooKeeper (by PID), then remove the temp dir; always all three."""
        for b in list(self.brokers.values()):
            try:
                b.stop()
            except Exception:  # pragma: no cover - best effort, the next ones still stop
                pass
        if self.zk is not None:
            self.zk.stop()
            self.zk = None
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)
