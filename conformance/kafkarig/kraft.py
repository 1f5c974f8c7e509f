"""Start and stop a real Kafka 4.4.0 broker in KRaft combined mode, from ``conformance/.cache/lib-4.4``.

Kafka 4.x runs only in KRaft mode.  One process is broker and controller (``process.roles=broker,
controller``, ``node.id=1``, ``controller.quorum.voters=1@127.0.0.1:<port>``), its log directory
formatted first with the storage tool (``kafka.tools.StorageTool format``), every listener on
127.0.0.1 on free ports, ``-Xmx512m``.  Like :mod:`kafkarig.broker` (the 3.9.2 broker),
the JVM is stopped by its PID (SIGTERM, then SIGKILL after a timeout) and its temp dir removed on
:meth:`KRaftBroker.close`; nothing is written to the caller's stdout.

    with KRaftBroker() as broker:
        with broker.client() as c:
            c.create_topic("t", {"cleanup.policy": "compact"})
        broker.stop()                       # e.g. to put old segments in place
        broker.start()                      # same node, same log dir

:func:`place_segment` swaps a stopped broker's partition for other segment bytes (v0/v1 data
written by kafkafmt or an older broker) the way an upgrade leaves them: ``partition.metadata``
kept, indexes removed (the broker rebuilds them), the partition's entries in
``replication-offset-checkpoint`` and ``recovery-point-offset-checkpoint`` set to the new log end.
"""
from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from . import paths
from .broker import BrokerError, JavaProcess, free_port, wait_until_ready
from .client import KafkaClient
from .properties import SINGLE_NODE_CONFIG, write_server_properties

LIB44_DIR = Path(os.environ.get("KAFKAFMT_KAFKA44_LIB", paths.LIB44_DIR))
JVM_OPTS_44 = ["-Xmx512m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m",
               "-Djava.awt.headless=true"]

#: broker settings of the one-node KRaft cluster (on top of the listeners, ids and log dir); controlled shutdown
#: on: a stop then fences the broker in the metadata log, so a restart registers at once, where an unfenced
#: registration kept its session and the restart was refused (DUPLICATE_BROKER_REGISTRATION) until
#: broker.session.timeout.ms (9 s) ran out
KRAFT_BROKER_CONFIG = {
    **SINGLE_NODE_CONFIG,
    "controlled.shutdown.enable": "true",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}

LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
"""


def kraft_missing_reason() -> str | None:
    """Why a 4.4 broker cannot run here (no ``java``, or the 4.4.0 jars not fetched), else None."""
    if shutil.which(os.environ.get("KAFKA_ORACLE_JAVA") or "java") is None:
        return "Java 17+ is not on PATH (needed to run the real Kafka 4.4.0 broker)"
    if not (LIB44_DIR / "kafka_2.13-4.4.0.jar").is_file():
        return f"Kafka 4.4.0 jars not found in {LIB44_DIR}: run `make -C conformance oracle-4.4` (Java 17 + Maven)"
    return None


def _cluster_id(seed: str) -> str:
    """A KRaft cluster id: a UUID in URL-safe base64 without padding (``Uuid.toString``), fixed by ``seed``;
    like ``Uuid.randomUuid``, never one starting with '-' (a command line would read it as an option)."""
    n = 0
    while True:
        raw = uuid.uuid5(uuid.NAMESPACE_URL, f"kafkafmt:{seed}:{n}").bytes
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if not text.startswith("-"):
            return text
        n += 1


class KRaftBroker:
    """One Kafka 4.4.0 process, broker and controller, in its own temp dir; started on :meth:`start`."""

    def __init__(self, root: str | os.PathLike | None = None, *, overrides: dict[str, str] | None = None,
                 keep: bool = False, start: bool = True, jvm_opts: list[str] | None = None) -> None:
        reason = kraft_missing_reason()
        if reason:
            raise BrokerError(reason)
        self._own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="kafkafmt-kraft44-")) if root is None else Path(root)
        self.keep = keep
        self.jvm_opts = list(jvm_opts or JVM_OPTS_44)
        self.log_dir = self.root / "data"
        self.port = free_port()
        self.controller_port = free_port()
        self.config = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            **KRAFT_BROKER_CONFIG,
            **(overrides or {}),
        }
        self.properties = write_server_properties(self.root, self.config)
        (self.root / "log4j2.properties").write_text(LOG4J2.format(path=self.root / "kafka.log"))
        self.cluster_id = _cluster_id(str(self.root))
        self.process: JavaProcess | None = None
        self.starts = 0
        self.closed = False
        try:
            self._format()
            if start:
                self.start()
        except BaseException:  # nothing left behind: the JVM stopped by PID, the temp dir removed
            self.close()
            raise

    def __enter__(self) -> "KRaftBroker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _sysprops(self) -> dict[str, str]:
        return {"log4j2.configurationFile": str(self.root / "log4j2.properties"), "kafka.logs.dir": str(self.root)}

    def _format(self) -> None:
        """``kafka-storage.sh format -t <id> -c server.properties`` (kafka.tools.StorageTool)."""
        java = os.environ.get("KAFKA_ORACLE_JAVA") or "java"
        props = [f"-D{k}={v}" for k, v in self._sysprops().items()]
        cmd = [java, *JVM_OPTS_44, *props, "-cp", f"{LIB44_DIR}{os.sep}*", "kafka.tools.StorageTool", "format",
               "-t", self.cluster_id, "-c", str(self.properties)]
        proc = subprocess.run(cmd, cwd=self.root, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            raise BrokerError(f"kafka-storage format failed ({proc.returncode}):\n{proc.stdout[-2000:]}"
                              f"\n{proc.stderr[-2000:]}")

    def client(self, timeout: float = 30.0) -> KafkaClient:
        return KafkaClient("127.0.0.1", self.port, timeout=timeout)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def start(self, timeout: float = 120.0) -> None:
        """Start the JVM (again) and wait until it answers Metadata with itself as controller and broker."""
        if self.closed:
            raise BrokerError("broker is closed")
        self.starts += 1
        self.process = JavaProcess(f"kafka-{self.starts}", "kafka.Kafka", [str(self.properties)], self.root,
                                   jvm_opts=self.jvm_opts, sysprops=self._sysprops(), lib_dir=LIB44_DIR)
        self.process.start()
        wait_until_ready(self.process, self.client, "Kafka 4.4.0 broker", self.port, timeout, self._log_tail)

    def _log_tail(self, n: int = 3000) -> str:
        try:
            return (self.root / "kafka.log").read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def log_text(self) -> str:
        """The broker's log (kafka.log), for assertions on what it logged."""
        try:
            return (self.root / "kafka.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the JVM by its PID (SIGTERM, then SIGKILL); the log dir stays for a restart."""
        if self.process is not None:
            self.process.stop(timeout=30)

    def running(self) -> bool:
        return self.process is not None and self.process.running()

    def partition_dir(self, topic: str, partition: int = 0) -> Path:
        return self.log_dir / f"{topic}-{partition}"

    def close(self) -> None:
        """Stop the broker and remove its temp dir (unless ``keep``)."""
        if self.closed:
            return
        self.closed = True
        try:
            self.stop()
        finally:
            if self._own_root and not self.keep:
                shutil.rmtree(self.root, ignore_errors=True)


def _set_checkpoint(path: Path, topic: str, partition: int, offset: int) -> None:
    """Set ``topic partition offset`` in an offset checkpoint file (version 0, count, entries), atomically."""
    lines = path.read_text().splitlines() if path.exists() else ["0", "0"]
    entries = {}
    for line in lines[2:]:
        if line.strip():
            t, p, o = line.rsplit(" ", 2)
            entries[(t, int(p))] = int(o)
    entries[(topic, partition)] = offset
    body = "".join(f"{t} {p} {o}\n" for (t, p), o in sorted(entries.items()))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"0\n{len(entries)}\n{body}")
    os.replace(tmp, path)


def place_segment(broker: KRaftBroker, topic: str, data: bytes, *, partition: int = 0, base_offset: int = 0,
                  log_end_offset: int) -> Path:
    """Put ``data`` in place of a stopped broker's partition as its only segment (see the module doc)."""
    return place_segments(broker, topic, {base_offset: data}, partition=partition, log_end_offset=log_end_offset)[0]


def place_segments(broker: KRaftBroker, topic: str, segments: dict[int, bytes], *, partition: int = 0,
                   log_end_offset: int) -> list[Path]:
    """Put ``segments`` (base offset → bytes) in place of a stopped broker's partition: the last one is the
    active segment, the others can be cleaned or deleted by retention."""
    if broker.running():
        raise BrokerError("stop the broker before placing segments")
    pdir = broker.partition_dir(topic, partition)
    if not (pdir / "partition.metadata").exists():
        raise BrokerError(f"{pdir} has no partition.metadata: create the topic through the broker first")
    for f in pdir.iterdir():
        if f.suffix in (".log", ".index", ".timeindex", ".snapshot", ".txnindex"):
            f.unlink()
    placed = []
    for base_offset, data in sorted(segments.items()):
        seg = pdir / f"{base_offset:020d}.log"
        tmp = pdir / (seg.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, seg)
        placed.append(seg)
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        _set_checkpoint(broker.log_dir / name, topic, partition, log_end_offset)
    return placed


__all__ = ["KRaftBroker", "kraft_missing_reason", "place_segment", "place_segments", "LIB44_DIR", "KRAFT_BROKER_CONFIG"]
