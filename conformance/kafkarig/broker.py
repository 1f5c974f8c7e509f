"""Start and stop a real ZooKeeper and Kafka broker (ZK mode) from the jars in ``conformance/.cache/lib``.

Everything binds to 127.0.0.1 on free ports; data, configs and the JVMs' logs live in one temp dir
that is removed on :meth:`Cluster.close` (processes are stopped by PID: SIGTERM, then SIGKILL after
a timeout).  Nothing is written to the caller's stdout.

    with Cluster() as cluster:
        broker = cluster.broker("legacy")            # started on first use
        with broker.client() as c:
            c.create_topic("t", {"message.format.version": "0.10.2"})

Broker *profiles* are broker-level configurations (:data:`PROFILES`); the cases pick one and put
everything else (message format, timestamp type and limits, segment size, index interval,
compression) in per-topic configs, so one broker per profile serves the whole run.
"""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from . import paths
from .client import KafkaClient, ProtocolError
from .paths import REPO_ROOT
from .properties import SINGLE_NODE_CONFIG, write_properties, write_server_properties

LIB_DIR = Path(os.environ.get("KAFKAFMT_KAFKA_LIB", paths.LIB_DIR))
JVM_OPTS = ["-Xmx256m", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m",
            "-Djava.awt.headless=true", "-Dzookeeper.admin.enableServer=false"]

#: Broker-level configuration per profile (on top of :data:`BASE_BROKER_CONFIG`).
#: ``legacy``: IBP 2.8, so ``message.format.version`` is honoured and v0/v1 land on disk.
#: ``modern``: IBP 3.9 (message.format.version ignored: always v2 on disk).
PROFILES: dict[str, dict[str, str]] = {
    "legacy": {"inter.broker.protocol.version": "2.8", "log.message.format.version": "2.8"},
    "modern": {"inter.broker.protocol.version": "3.9"},
}

BASE_BROKER_CONFIG = {
    **SINGLE_NODE_CONFIG,
    "zookeeper.session.timeout.ms": "18000",
    "zookeeper.connection.timeout.ms": "30000",
    "delete.topic.enable": "true",
}

LOG4J = """\
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={path}
log4j.appender.file.Append=true
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.org.apache.zookeeper=WARN
"""


class BrokerError(RuntimeError):
    """A JVM did not start or did not answer in time; the message ends with its log tail."""


def java_missing_reason() -> str | None:
    """Why a broker cannot run here (no ``java`` on PATH, or the jars are not fetched), else None."""
    if shutil.which(os.environ.get("KAFKA_ORACLE_JAVA") or "java") is None:
        return "Java 17+ is not on PATH (needed to run the real Kafka broker)"
    if not any(LIB_DIR.glob("kafka_2.13-*.jar")) or not any(LIB_DIR.glob("zookeeper-*.jar")):
        return f"Kafka broker jars not found in {LIB_DIR}: run `make oracle` (Java 17 + Maven)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def pid_alive(pid: int) -> bool:
    """True if ``pid`` is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


# ------------------------------------------------------------------------------------ processes
_LIVE: dict[int, "JavaProcess"] = {}
_LIVE_LOCK = threading.Lock()


class JavaProcess:
    """One JVM started by us; stdout/stderr go to files; stopped by its PID only."""

    def __init__(self, name: str, main_class: str, args: list[str], workdir: Path, *,
                 jvm_opts: list[str] | None = None, sysprops: dict[str, str] | None = None,
                 lib_dir: Path | None = None) -> None:
        self.name = name
        self.workdir = workdir
        self.stdout_path = workdir / f"{name}.stdout"
        self.stderr_path = workdir / f"{name}.stderr"
        java = os.environ.get("KAFKA_ORACLE_JAVA") or "java"
        props = [f"-D{k}={v}" for k, v in (sysprops or {}).items()]
        self.cmd = [java, *(jvm_opts or JVM_OPTS), *props, "-cp", f"{lib_dir or LIB_DIR}{os.sep}*", main_class, *args]
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def start(self) -> None:
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            self.proc = subprocess.Popen(self.cmd, cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=err, start_new_session=True)
        with _LIVE_LOCK:
            _LIVE[self.proc.pid] = self

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM, wait up to ``timeout`` s, then SIGKILL. Only this process's PID is signalled."""
        p = self.proc
        if p is None:
            return
        try:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)
                    p.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=30)
                except ProcessLookupError:
                    pass
        finally:
            with _LIVE_LOCK:
                _LIVE.pop(p.pid, None)

    def log_tail(self, n: int = 3000) -> str:
        parts = []
        for path in (self.stderr_path, self.stdout_path, self.workdir / f"{self.name}.log"):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            if text.strip():
                parts.append(f"--- {path.name}\n{text[-n:]}")
        return "\n".join(parts)


def _stop_all_live() -> None:  # last resort at interpreter exit (e.g. after Ctrl-C)
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    for p in procs:
        try:
            p.stop(timeout=10)
        except Exception:  # pragma: no cover - best effort
            pass


atexit.register(_stop_all_live)


# ------------------------------------------------------------------------------------ ZooKeeper, broker
class ZooKeeper:
    def __init__(self, root: Path) -> None:
        self.dir = root / "zookeeper"
        self.dir.mkdir(parents=True)
        self.port = free_port()
        cfg = self.dir / "zoo.cfg"
        write_properties(cfg, {
            "dataDir": str(self.dir / "data"), "clientPort": str(self.port), "clientPortAddress": "127.0.0.1",
            "tickTime": "2000", "maxClientCnxns": "0", "admin.enableServer": "false",
            "4lw.commands.whitelist": "srvr",
        })
        (self.dir / "log4j.properties").write_text(LOG4J.format(path=self.dir / "zookeeper.log"))
        self.process = JavaProcess("zookeeper", "org.apache.zookeeper.server.ZooKeeperServerMain", [str(cfg)],
                                   self.dir, jvm_opts=[*JVM_OPTS[1:], "-Xmx96m"],
                                   sysprops={"log4j.configuration": f"file:{self.dir / 'log4j.properties'}"})

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        self.process.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.process.running():
                raise BrokerError(f"ZooKeeper exited with {self.process.proc.returncode}\n{self.process.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"srvr")
                    if s.recv(64).startswith(b"Zookeeper version"):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise BrokerError(f"ZooKeeper did not answer on port {self.port} within {timeout}s\n{self.process.log_tail()}")

    def stop(self) -> None:
        self.process.stop()


class KafkaBroker:
    """One Kafka broker (``kafka.Kafka server.properties``) registered under its own ZK chroot."""

    def __init__(self, root: Path, zk: ZooKeeper, profile: str, overrides: dict[str, str] | None = None,
                 broker_id: int = 0, jvm_opts: list[str] | None = None) -> None:
        self.profile = profile
        self.dir = root / f"broker-{profile}"
        self.dir.mkdir(parents=True)
        self.log_dir = self.dir / "data"
        self.port = free_port()
        self.config = {
            "broker.id": str(broker_id),
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.log_dir),
            "zookeeper.connect": f"{zk.connect}/kafkafmt-{profile}",
            **BASE_BROKER_CONFIG,
            **PROFILES.get(profile, {}),
            **(overrides or {}),
        }
        self.properties = write_server_properties(self.dir, self.config)
        (self.dir / "log4j.properties").write_text(LOG4J.format(path=self.dir / "kafka.log"))
        self.process = JavaProcess("kafka", "kafka.Kafka", [str(self.properties)], self.dir, jvm_opts=jvm_opts,
                                   sysprops={"log4j.configuration": f"file:{self.dir / 'log4j.properties'}",
                                             "kafka.logs.dir": str(self.dir)})

    def client(self, timeout: float = 30.0) -> KafkaClient:
        return KafkaClient("127.0.0.1", self.port, timeout=timeout)

    def start(self, timeout: float = 90.0) -> None:
        self.process.start()
        wait_until_ready(self.process, self.client, f"Kafka broker ({self.profile})", self.port, timeout)

    def stop(self) -> None:
        self.process.stop()

    def partition_dir(self, topic: str, partition: int = 0) -> Path:
        return self.log_dir / f"{topic}-{partition}"


class Cluster:
    """One ZooKeeper shared by brokers started on demand, one per profile; all in one temp dir."""

    def __init__(self, root: str | os.PathLike | None = None, *, keep: bool = False) -> None:
        reason = java_missing_reason()
        if reason:
            raise BrokerError(reason)
        self._own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="kafkafmt-conformance-")) if root is None else Path(root)
        self.keep = keep
        self.zk: ZooKeeper | None = None
        self.brokers: dict[str, KafkaBroker] = {}
        self._lock = threading.Lock()
        self.closed = False

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _ensure_zk(self) -> ZooKeeper:
        if self.zk is None:
            self.zk = ZooKeeper(self.root)
            self.zk.start()
        return self.zk

    def broker(self, profile: str = "legacy", overrides: dict[str, str] | None = None) -> KafkaBroker:
        with self._lock:
            if self.closed:
                raise BrokerError("cluster is closed")
            b = self.brokers.get(profile)
            if b is None:
                zk = self._ensure_zk()
                b = KafkaBroker(self.root, zk, profile, overrides)
                self.brokers[profile] = b
                b.start()
            return b

    def start_all(self, profiles) -> None:
        for p in profiles:
            self.broker(p)

    def pids(self) -> list[int]:
        procs = [b.process for b in self.brokers.values()] + ([self.zk.process] if self.zk else [])
        return [p.pid for p in procs if p.pid is not None]

    def ports(self) -> list[int]:
        return [b.port for b in self.brokers.values()] + ([self.zk.port] if self.zk else [])

    def close(self) -> None:
        """Stop every broker, then ZooKeeper (by PID), then remove the temp dir; always all three."""
        if self.closed:
            return
        self.closed = True
        errors = []
        for b in list(self.brokers.values()):
            try:
                b.stop()
            except Exception as e:  # pragma: no cover
                errors.append(e)
        if self.zk is not None:
            try:
                self.zk.stop()
            except Exception as e:  # pragma: no cover
                errors.append(e)
        if self._own_root and not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)
        if errors:
            raise errors[0]


__all__ = ["Cluster", "KafkaBroker", "ZooKeeper", "JavaProcess", "BrokerError", "PROFILES", "java_missing_reason",
           "free_port", "port_is_listening", "pid_alive", "LIB_DIR", "REPO_ROOT"]


def wait_until_ready(process: "JavaProcess", client, what: str, port: int, timeout: float,
                     log_tail=lambda: "") -> None:
    """Poll a starting broker until it answers ApiVersions and its metadata names a controller and a
    broker; a BrokerError with the logs' tails if the process exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if not process.running():
            raise BrokerError(f"{what} exited with {process.proc.returncode}\n{process.log_tail()}\n{log_tail()}")
        try:
            with client(timeout=5) as c:
                c.api_versions()
                md = c.metadata([])
                if md["controller"] >= 0 and md["brokers"]:
                    return
        except (OSError, ProtocolError) as e:
            last = e
        time.sleep(0.2)
    raise BrokerError(f"{what} not ready on port {port} within {timeout}s ({last})\n{process.log_tail()}\n"
                      f"{log_tail()}")
