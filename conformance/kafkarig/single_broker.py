"""One broker of any release the rig runs, alone in its own directory: the benchmarks' and live checks' set-up.

:class:`SingleBroker` starts one broker of ``version`` the way the rig starts that release:

* **4.4.0**: a :class:`~kafkarig.kraft.KRaftBroker` (KRaft combined mode, ``conformance/.cache/lib-4.4``);
* **3.9.2**: a :class:`~kafkarig.broker.ZooKeeper` and a :class:`~kafkarig.broker.KafkaBroker` of a profile
  (:data:`kafkarig.broker.PROFILES`: ``legacy`` honours ``message.format.version``, ``modern`` does not);
* **older releases** (0.9.0.1 ... 2.8.2): an :class:`~kafkarig.oldcluster.OldCluster` of that release with one
  broker (id 1), the release's jars resolved into ``conformance/.cache/releases``.

``jvm_opts`` replaces the rig's JVM options (a benchmark gives Kafka's own defaults), ``extra_jvm_opts`` is
added to them (JMX, a JDWP agent).  Whatever fails while starting, everything already started is stopped
before the error goes up; :meth:`SingleBroker.close` stops the broker, then its ZooKeeper.  Used by
``benchmarks/conversion.py`` and :mod:`kafkarig.accounting_live`.
"""
from __future__ import annotations

import time
from pathlib import Path

from .broker import JVM_OPTS, LIB_DIR, BrokerError, KafkaBroker, ZooKeeper, java_missing_reason
from .client import KafkaClient

__all__ = ["SingleBroker"]


class SingleBroker:
    """One broker of ``version`` under ``root/kafka-<version>``; ``broker`` (the rig's object), ``process``,
    ``port``, ``pid``, ``lib_dir`` (its release's jars), ``client()``, ``partition_dir()``, ``wait_leaders()``,
    ``close()``."""

    def __init__(self, version: str, root: Path, overrides: dict[str, str], *, profile: str = "legacy",
                 jvm_opts: list[str] | None = None, extra_jvm_opts: list[str] = ()) -> None:
        from .kraft import JVM_OPTS_44, LIB44_DIR, KRaftBroker
        from .oldcluster import OldCluster

        self.version = version
        self._closers = []
        where = Path(root) / f"kafka-{version}"
        try:
            if version == "4.4.0":
                where.mkdir(parents=True)
                b = KRaftBroker(where, overrides=overrides,
                                jvm_opts=[*(jvm_opts or JVM_OPTS_44), *extra_jvm_opts])
                self._closers.append(b.close)
                self.lib_dir = LIB44_DIR
            elif version == "3.9.2":
                reason = java_missing_reason()
                if reason:
                    raise BrokerError(reason)
                zk = ZooKeeper(where)
                self._closers.append(zk.stop)
                zk.start()
                b = KafkaBroker(where, zk, profile, overrides, jvm_opts=[*(jvm_opts or JVM_OPTS), *extra_jvm_opts])
                self._closers.insert(0, b.stop)
                b.start()
                self.lib_dir = LIB_DIR
            else:
                c = OldCluster(version, root=str(where))
                self._closers.append(c.close)
                b = c.add_broker(1, version, overrides, start=False)
                b.jvm_opts = [*(jvm_opts or b.jvm_opts), *extra_jvm_opts]
                b.start()
                self.lib_dir = b.release.lib_dir
            self.broker = b
            self.process, self.port = b.process, b.port
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "SingleBroker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self.process.pid

    def client(self, timeout: float = 30.0, client_id: str = "kafkafmt-conformance") -> KafkaClient:
        return KafkaClient("127.0.0.1", self.port, client_id=client_id, timeout=timeout)

    def partition_dir(self, topic: str, partition: int = 0) -> Path:
        return self.broker.partition_dir(topic, partition)

    def wait_leaders(self, topics, timeout: float = 60.0) -> None:
        """Until every partition of ``topics`` has a leader (Metadata v0, which every release answers; with
        ``auto.create.topics.enable`` it also creates them); a :class:`~kafkarig.broker.BrokerError` after
        ``timeout``."""
        from .oldcluster import metadata_v0
        topics = list(topics)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            md = metadata_v0(self.port, topics)
            parts = [md["topics"].get(t, {}).get("partitions", {}) for t in topics]
            if all(p and all(x["leader"] >= 0 for x in p.values()) for p in parts):
                return
            time.sleep(0.1)
        raise BrokerError(f"Kafka {self.version}: no leader for {', '.join(topics)} after {timeout:.0f} s")

    def close(self) -> None:
        """Stop the broker, then its ZooKeeper (each by PID); the others still stop if one fails."""
        for close in self._closers:
            try:
                close()
            except Exception:  # noqa: BLE001 - the others still stop
                pass
        self._closers = []
