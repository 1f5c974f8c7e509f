"""The cluster model: brokers, producers and consumers running kafkafmt's real broker and log code.

A :class:`Cluster` holds one topic whose partitions are replicated over brokers.  Each replica is a
:class:`kafkafmt.log.Log` on disk (in a temporary directory) driven by one
:class:`~kafkafmt.log.clock.SimulatedClock`.  Every operation runs on real bytes:

* :meth:`Cluster.produce` — the producer builds its request with :class:`MemoryRecordsBuilder` in the
  magic its ProduceRequest version carries; the leader runs ``validate_messages_and_assign_offsets``
  (Kafka 3.9's ``LogValidator`` with the request checks) and appends through ``Log.append_as_leader``;
* :meth:`Cluster.replicate` — each follower sends the FetchRequest version its
  ``inter.broker.protocol.version`` gives (``MetadataVersion.fetchRequestVersion``) to the leader,
  which answers through :func:`kafkafmt.broker.fetch` (zero-copy or down-converted), and the follower
  appends the answer with ``Log.append_as_follower`` (no conversion: ``UnifiedLog.appendAsFollower``);
* :meth:`Cluster.consume` — the consumer's FetchRequest through :func:`kafkafmt.broker.fetch`, then
  :func:`kafkafmt.broker.consumer_view` (what a client of that generation reads) and, for a
  KIP-228-aware consumer, :func:`kafkafmt.kip228.interpret_timestamp`.

Each operation returns :class:`PathRow` objects (one per path: producer, leader, follower, consumer)
holding plain computed data, with measured timings kept apart in :attr:`PathRow.measured`.

**Model decisions.**  Every broker runs the rules of its own release line: its ``version`` (a code
generation: 0.9, 0.10.0, 0.10.2, 0.11, 1.1, 3.9, 4.4 …) is its logs' ``BrokerConfig.kafka_line``, so its
LogValidator and its fetch conversion follow that release's rows of :mod:`kafkafmt.kafka_lines` (a
0.10.0 broker down-converts a whole fetch into one message set, eagerly; a 3.9 one batch by batch, lazily;
a 4.4 one answers no Produce < v3 / Fetch < v4, writes every topic v2 and serves old batches as they
are).  The version also limits the request versions a broker answers
(:func:`~kafkafmt.scenarios.versions.client_api_versions`) and the newest format it can write (a 0.9
broker writes v0 whatever it is told).  Its ``inter.broker.protocol.version`` and
``message.format.version`` are its server settings (``BrokerConfig``, ``log.message.format.version``), checked
as its release checks them: a bounce its release refuses (a 0.10.0 broker given format 0.10.0 under IBP
0.10.0-IV0, before KAFKA-6238) leaves it on its previous settings, with a ``refused to start`` row.
A consumer reads as the Java consumer of its own line does
(:func:`kafkafmt.broker.consumer_view` with ``client_line``: a 0.9 consumer that cannot parse a fetched
partition stalls, its exception only logged).  Leader epochs are not modelled (all 0) and
leader elections are clean (the first live replica).  Seed 002's "new broker" (``kip228: true``)
(``kafkafmt.kip228.enable``) stores every v2 batch extended, an old -1 as Long.MIN_VALUE; seed 003's
1.0.0 broker (``idempotence_modes: true``) downgrades a ``safe`` idempotent batch by dropping its
producer state and re-validating it into the topic's format, and fails a ``required`` one.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from .. import kafka_lines
from ..broker import consumer_view, fetch, validate_messages_and_assign_offsets
from ..broker.fetch import max_magic_for_fetch_version
from ..broker.idempotence import drop_producer_state
from ..constants import NO_TIMESTAMP, CompressionType, TimestampType
from ..errors import BrokerConfigRefusedError, ConfigError, KafkaFmtError, UnsupportedForMessageFormatError
from ..log import Log, SimulatedClock
from ..records import MemoryRecords, build_records, kip228
from .model import (
    START_MS,
    BrokerSpec,
    ConsumerSpec,
    PathRow,
    ProducerSpec,
    broker_config_for,
    removed_properties,
    topic_config_for,
)
from .versions import client_api_versions, magic_for_produce_version, release_line, replica_fetch_version, without_ibp

__all__ = ["Cluster"]

#: the producer id an idempotent producer of the model gets (as in the conformance cases)
_PRODUCER_ID = 4242

class Cluster:
    """One topic over a set of brokers; replicas are ``kafkafmt.log.Log`` directories in ``root``."""

    def __init__(self, brokers, partitions, *, topic: str = "topic", root: str | Path | None = None,
                 clock: SimulatedClock | None = None):
        self.brokers: dict[str, BrokerSpec] = {b.name: b for b in brokers}
        self.topic = topic
        #: partition → {"leader": name, "replicas": [names]}
        self.partitions: dict[int, dict] = {}
        for i, p in enumerate(partitions):
            replicas = list(p.get("replicas") or self.brokers)
            leader = p.get("leader") or replicas[0]
            for name in [leader, *replicas]:
                if name not in self.brokers:
                    raise ConfigError(f"partition {i}: unknown broker {name!r}")
            if leader not in replicas:
                replicas.insert(0, leader)
            self.partitions[i] = {"leader": leader, "replicas": replicas}
        self._own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="kafkafmt-scenario-")) if root is None else Path(root)
        self.clock = clock or SimulatedClock(START_MS)
        self.logs: dict[tuple[str, int], Log] = {}
        #: broker → the partitions it led when it was last shut down (seed 000's rollback nukes those)
        self.led_before_shutdown: dict[str, list[int]] = {}
        for b in self.brokers.values():
            try:
                broker_config_for(b)
            except BrokerConfigRefusedError as e:
                raise BrokerConfigRefusedError(f"broker {b.name} (Kafka {b.version}) refuses to start: {e.reason}",
                                               row=e.row) from None
        for p, info in self.partitions.items():
            for name in info["replicas"]:
                self._open_log(name, p)

    # --- plumbing -------------------------------------------------------------------------------
    def log_dir(self, broker: str, partition: int) -> Path:
        return self.root / broker / f"{self.topic}-{partition}"

    def _open_log(self, broker: str, partition: int) -> Log:
        log = Log(self.log_dir(broker, partition), topic_config_for(self.brokers[broker]), self.clock)
        self.logs[(broker, partition)] = log
        return log

    def close(self) -> None:
        for log in self.logs.values():
            if not log.closed:
                log.close()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def log_bytes(self, broker: str, partition: int) -> bytes:
        """Every byte of a replica's ``.log`` segment files, in offset order (what is on its disk)."""
        log = self.logs[(broker, partition)]
        log.flush()
        return b"".join(Path(seg.log_file).read_bytes()[:seg.size] for seg in log.segments)

    def magics_on_disk(self, broker: str, partition: int) -> list[int]:
        return [b.magic for b in MemoryRecords(self.log_bytes(broker, partition)).batches()]

    def compact(self, broker: str, partition: int, cleaner: dict | None = None) -> PathRow:
        """One pass of Kafka 3.9's log cleaner over a replica at the scenario's clock (``Log.clean``: the
        cleaner thread's ``cleanFilthiestLog`` on this partition; ``cleaner``: ``log.cleaner.*`` settings).
        The topic compacts when the broker's properties say ``cleanup.policy: compact``."""
        from ..log.cleaner.offset_map import CleanerConfig
        log = self.logs.get((broker, partition))
        if log is None or log.closed:
            raise ConfigError(f"broker {broker!r} holds no open replica of partition {partition}")
        cfg = CleanerConfig.from_properties(cleaner or {})
        before = self.log_bytes(broker, partition)
        r = log.clean(now=self.clock.now(), cleaner=cfg)
        after = self.log_bytes(broker, partition)
        n_before, n_after = (sum(1 for _ in MemoryRecords(d).records()) for d in (before, after))
        return PathRow("disk", broker, partition, request="log cleaner pass", records=n_after,
                       bytes_in=len(before), bytes_out=len(after),
                       detail={"compact": r.compact, "cleaned": r.cleaned, "records_removed": n_before - n_after,
                               "tombstones_kept": len(r.stats.tombstones_kept),
                               "tombstones_removed": r.stats.tombstones_removed, "checkpoint": r.checkpoint,
                               "magics": [b.magic for b in MemoryRecords(after).batches()]})

    def leader_of(self, partition: int) -> str:
        return self.partitions[partition]["leader"]

    # --- configuration changes (a rolling bounce) -----------------------------------------------
    def configure(self, broker: str, *, version: str | None = None, properties: dict | None = None,
                  kip228: bool | None = None, idempotence_modes: bool | None = None) -> PathRow:
        """Change a broker's code version or properties and bounce it: its logs get the new topic config.

        A broker whose release refuses the new settings (``KafkaConfig.validateValues``,
        :func:`~kafkafmt.scenarios.model.broker_config_for`) does not start with them: the operator restarts it
        on its previous code and settings, and the row says ``refused to start`` with the release's reason as
        its ``error`` (``IllegalArgumentException: requirement failed: …``)."""
        b = self.brokers[broker]
        before = (b.version, dict(b.properties), b.kip228, b.idempotence_modes)
        if version is not None:
            b.version = str(version)
        if properties:
            b.properties.update({k: str(v) if not isinstance(v, (int, bool)) else v for k, v in properties.items()})
        if kip228 is not None:
            b.kip228 = bool(kip228)
        if idempotence_modes is not None:
            b.idempotence_modes = bool(idempotence_modes)
        try:
            broker_config_for(b)
        except BrokerConfigRefusedError as e:
            refused = {"version": b.version, "inter.broker.protocol.version": b.inter_broker_protocol_version,
                       "message.format.version": _format_asked(b)}
            b.version, b.properties, b.kip228, b.idempotence_modes = before
            return PathRow("broker", broker, conversion="refused to start",
                           error=f"{e.kafka_exception}: requirement failed: {e.reason}",
                           detail={**refused, "reason": e.reason, "kafka_line": b.kafka_line, "kafka_line_row": e.row,
                                   "restarted_on": {"version": b.version, **b.properties}})
        cfg = topic_config_for(b)
        for (name, _p), log in self.logs.items():
            if name == broker:
                log.update_config(cfg)
        produce_max, fetch_max = client_api_versions(b.version)
        detail = {"version": b.version, "inter.broker.protocol.version": b.inter_broker_protocol_version,
                  "message.format.version": cfg.message_format_version,
                  "replica_fetch_version": replica_fetch_version(b.inter_broker_protocol_version),
                  "message_format_ignored": cfg.message_format_ignored}
        request = f"answers Produce ≤ v{produce_max}, Fetch ≤ v{fetch_max}"
        if without_ibp(b.kafka_line):  # a 4.x broker; KIP-896: the oldest versions are gone
            produce_min = kafka_lines.value("produce.min_version", b.kafka_line)
            fetch_min = kafka_lines.value("fetch.min_version", b.kafka_line)
            request = f"answers Produce v{produce_min}–v{produce_max}, Fetch v{fetch_min}–v{fetch_max}"
            detail.update({"kafka_line": b.kafka_line, "message.format.version": None,
                           "properties_ignored": removed_properties(b)})
        return PathRow("broker", broker, request=request, magic_out=cfg.to_magic, conversion="bounced",
                       detail=detail)

    def shutdown(self, broker: str) -> list[PathRow]:
        """Stop a broker; each partition it led gets the first live replica as leader (clean election)."""
        self.brokers[broker].up = False
        rows = [PathRow("broker", broker, conversion="shut down")]
        self.led_before_shutdown[broker] = [p for p, info in self.partitions.items() if info["leader"] == broker]
        for p, info in self.partitions.items():
            if info["leader"] == broker:
                live = [r for r in info["replicas"] if self.brokers[r].up]
                if live:
                    info["leader"] = live[0]
                    rows.append(PathRow("broker", live[0], partition=p, conversion="elected leader"))
        return rows

    def nuke(self, broker: str, partitions=None) -> PathRow:
        """Delete a broker's data for ``partitions`` (default: every partition it holds; ``"led"``: those it
        led when it was shut down, seed 000's "nuke the data of the topics it was serving as leader")."""
        held = [p for (name, p) in self.logs if name == broker]
        if partitions == "led":
            partitions = self.led_before_shutdown.get(broker, [])
        targets = held if partitions is None else [p for p in partitions if p in held]
        lost = {}
        for p in targets:
            others = [self.logs[(r, p)].log_end_offset for r in self.partitions[p]["replicas"] if r != broker]
            lost[p] = max(0, self.logs[(broker, p)].log_end_offset - max(others, default=0))
        for p in targets:
            log = self.logs.pop((broker, p))
            if not log.closed:
                log.close()
            shutil.rmtree(self.log_dir(broker, p))
            self._open_log(broker, p)
        return PathRow("broker", broker, conversion="data deleted",
                       detail={"partitions": targets, "offsets_on_no_other_replica": lost})

    def start(self, broker: str) -> PathRow:
        self.brokers[broker].up = True
        return PathRow("broker", broker, conversion="started")

    def elect(self, partition: int, broker: str) -> PathRow:
        if broker not in self.partitions[partition]["replicas"] or not self.brokers[broker].up:
            raise ConfigError(f"broker {broker!r} is not a live replica of partition {partition}")
        self.partitions[partition]["leader"] = broker
        return PathRow("broker", broker, partition=partition, conversion="elected leader")

    # --- produce --------------------------------------------------------------------------------
    def produce(self, producer: ProducerSpec, partition: int, timestamps: list[int | None]) -> list[PathRow]:
        """One ProduceRequest with one record per timestamp (``None``: the clock's now)."""
        leader_name = self.leader_of(partition)
        broker = self.brokers[leader_name]
        mode = producer.mode()
        c_produce, _ = client_api_versions(producer.version)
        b_produce, _ = client_api_versions(broker.version)
        version = min(c_produce, b_produce) if producer.produce_version is None else int(producer.produce_version)
        magic = magic_for_produce_version(version)
        idempotent = mode in ("safe", "required")
        prow = PathRow("producer", producer.name, partition, f"ProduceRequest v{version}", magic_in=magic,
                       magic_out=magic, detail={"compression": producer.compression, "idempotence": mode,
                                                "kip228": producer.kip228})
        if not broker.up:
            prow.error = f"NOT_LEADER_OR_FOLLOWER: partition {partition} has no live leader ({leader_name} is down)"
            return [prow]
        if mode == "safe" and not broker.idempotence_modes:
            # seed 003: "if a 1.0.0 client with enable.idempotence=safe is writing to an 0.11.0 broker,
            # idempotence will be disabled" (the broker cannot receive the mode)
            idempotent = False
            prow.detail["idempotence_disabled"] = "safe mode and a broker without idempotence modes: disabled"
        if idempotent and magic < 2:
            # the client cannot send producer ids below Produce v3 (KIP-98)
            if mode == "safe":
                idempotent = False
                prow.detail["idempotence_disabled"] = "safe mode and a broker without Produce v3: disabled"
            else:
                prow.error = "UnsupportedVersionException"
                prow.detail["reason"] = f"the broker answers Produce ≤ v{b_produce}: no idempotence (required)"
                return [prow]
        now = self.clock.now()
        stamps = [now if t is None else t for t in timestamps]
        prow.detail["sent"] = [{"key": k, "value": v, "timestamp": NO_TIMESTAMP if magic == 0 else t}
                               for k, v, t in zip(*_record_texts(producer, len(stamps)), stamps)]
        try:
            data = _build(producer, magic, stamps, idempotent)
        except KafkaFmtError as e:
            prow.error = f"{type(e).__name__}: {e.reason}"
            return [prow]
        prow.records, prow.bytes_out = len(timestamps), len(data)
        lrow = self._leader_append(broker, partition, data, version, mode if idempotent else "off", magic)
        lrow.detail["producer"] = producer.name
        return [prow, lrow]

    def _leader_append(self, broker: BrokerSpec, partition: int, data: bytes, version: int, mode: str,
                       magic: int) -> PathRow:
        log = self.logs[(broker.name, partition)]
        cfg = log.config
        row = PathRow("leader", broker.name, partition, f"ProduceRequest v{version}", magic_in=magic,
                      bytes_in=len(data), records=len(list(MemoryRecords(data).records())))
        t0 = time.perf_counter_ns()
        try:
            try:
                res = validate_messages_and_assign_offsets(data, cfg, offset=log.log_end_offset,
                                                           now=self.clock.now(), produce_version=version,
                                                           topic=self.topic, partition=partition)
            except UnsupportedForMessageFormatError:
                if not (cfg.broker.idempotence_variant == "seed" and mode == "safe"):
                    raise
                data = drop_producer_state(data)
                row.detail["downgraded"] = "safe mode: producer id, epoch and sequences dropped (seed 003)"
                res = validate_messages_and_assign_offsets(data, cfg, offset=log.log_end_offset,
                                                           now=self.clock.now(), produce_version=version,
                                                           topic=self.topic, partition=partition)
            before = log.log_end_offset
            log.append_as_leader(data)
        except KafkaFmtError as e:
            row.error = f"{e.kafka_exception or type(e).__name__}: {e.reason}"
            row.measured["validate_ns"] = time.perf_counter_ns() - t0
            return row
        row.measured["validate_and_append_ns"] = time.perf_counter_ns() - t0
        stored = _read_from(log, before)
        if stored != res.records:  # the log's own validation must give the validator's bytes
            raise AssertionError("Log.append_as_leader stored other bytes than LogValidator returned")
        row.magic_out = res.to_magic
        row.conversion = _produce_conversion(magic, res)
        row.recompressed = res.recompressed
        row.records_touched = res.stats.num_converted_records or (res.record_count if res.converted else 0)
        row.bytes_out = len(res.records)
        row.detail.update({"path": res.path, "offsets": [res.first_offset, res.last_offset],
                           "log_append_time": res.response_log_append_time,
                           "decompressed": res.source_compression != CompressionType.NONE,
                           "source_compression": res.source_compression.kafka_name,
                           "target_compression": res.target_compression.kafka_name,
                           "timestamps": [r.timestamp for r in MemoryRecords(res.records).records()],
                           "idempotent_on_disk": any(b.producer_id >= 0 for b in MemoryRecords(res.records).batches()
                                                     if b.magic >= 2),
                           "timestamp_extended": any(kip228.is_extended(b)
                                                     for b in MemoryRecords(res.records).batches())})
        row.measured["temporary_memory_bytes"] = res.stats.temporary_memory_bytes
        self.clock.advance(1)
        return row

    # --- replication ----------------------------------------------------------------------------
    def replicate(self) -> list[PathRow]:
        """Every live follower of every partition fetches from its live leader until caught up."""
        rows = []
        for p, info in self.partitions.items():
            leader = info["leader"]
            if not self.brokers[leader].up:
                continue
            for name in info["replicas"]:
                if name == leader or not self.brokers[name].up:
                    continue
                follower_log = self.logs[(name, p)]
                leader_log = self.logs[(leader, p)]
                if follower_log.log_end_offset >= leader_log.log_end_offset:
                    continue
                rows.extend(self._follower_fetch(name, leader, p))
        return rows

    def _follower_fetch(self, follower: str, leader: str, partition: int) -> list[PathRow]:
        fb, lb = self.brokers[follower], self.brokers[leader]
        version = min(replica_fetch_version(fb.inter_broker_protocol_version), client_api_versions(lb.version)[1])
        flog = self.logs[(follower, partition)]
        fres, row = self._serve_fetch(lb, partition, version, flog.log_end_offset, is_follower=True)
        row.path, row.actor = "follower", follower
        row.detail["leader"] = leader
        if fres.error:
            return [row]
        t0 = time.perf_counter_ns()
        try:
            flog.append_as_follower(fres.records)
        except KafkaFmtError as e:
            row.error = f"{e.kafka_exception or type(e).__name__}: {e.reason}"
            return [row]
        row.measured["follower_append_ns"] = time.perf_counter_ns() - t0
        row.magic_out = sorted(set(self.magics_on_disk(follower, partition)))[-1] if flog.log_end_offset else None
        row.detail["magics_on_disk"] = sorted(set(self.magics_on_disk(follower, partition)))
        return [row]

    def _serve_fetch(self, leader: BrokerSpec, partition: int, version: int, offset: int, *, is_follower: bool):
        log = self.logs[(leader.name, partition)]
        data = _read_from(log, offset)
        t0 = time.perf_counter_ns()
        res = fetch(data, topic_config=log.config, fetch_version=version, fetch_offset=offset,
                    is_follower=is_follower)
        elapsed = time.perf_counter_ns() - t0
        on_disk = sorted({b.magic for b in MemoryRecords(data).batches()})
        delivered = sorted({b.magic for b in MemoryRecords(res.records).batches()})
        error = res.error
        if res.connection_closed:  # KIP-896 on the 4.4 line
            error = f"{res.error}: no response, {leader.name} closes the connection (Fetch v{version} < " \
                    f"v{kafka_lines.value('fetch.min_version', leader.kafka_line)})"
        row = PathRow("consumer", "", partition, f"FetchRequest v{version}",
                      magic_in=on_disk[-1] if on_disk else None, magic_out=delivered[-1] if delivered else None,
                      error=error, bytes_in=res.cost.bytes_read, bytes_out=res.cost.bytes_out,
                      records_touched=res.cost.records_touched)
        if res.error is None:
            row.conversion = "zero-copy" if res.zero_copy else (
                f"converted down v{row.magic_in}→v{res.to_magic}" if row.magic_in is not None and
                row.magic_in > res.to_magic else f"converted to v{res.to_magic}")
            row.recompressed = res.cost.compressions > 0
        row.records = len(list(MemoryRecords(res.records).records()))
        row.detail.update({"fetch_offset": offset, "decompressions": res.cost.decompressions,
                           "compressions": res.cost.compressions, "can_parse_up_to": max_magic_for_fetch_version(version)})
        row.measured.update({"fetch_ns": elapsed, "cpu_time_ns": res.cost.cpu_time_ns,
                             "temporary_memory_bytes": res.stats.temporary_memory_bytes})
        return res, row

    # --- consume --------------------------------------------------------------------------------
    def consume(self, consumer: ConsumerSpec, partition: int, offset: int = 0) -> list[PathRow]:
        leader = self.brokers[self.leader_of(partition)]
        if not leader.up:
            return [PathRow("consumer", consumer.name, partition, error=f"NOT_LEADER_OR_FOLLOWER: partition "
                                                                         f"{partition} has no live leader "
                                                                         f"({leader.name} is down)")]
        c_fetch = client_api_versions(consumer.version)[1]
        version = min(c_fetch, client_api_versions(leader.version)[1]) if consumer.fetch_version is None \
            else int(consumer.fetch_version)
        res, row = self._serve_fetch(leader, partition, version, offset, is_follower=False)
        row.actor = consumer.name
        row.detail["leader"] = leader.name
        if res.error:
            return [row]
        client_magic = max_magic_for_fetch_version(version)
        view = consumer_view(res.wire_records, client_magic=client_magic, fetch_offset=offset,
                             client_line=release_line(consumer.version))
        extended = {r_off for b in MemoryRecords(res.records).batches() if kip228.is_extended(b)
                    for r_off in range(b.base_offset, b.last_offset + 1)}
        if view.error:
            row.error = f"{view.error}: {view.error_message}"
        read = []
        for r in view.records:
            ts, meaning = kip228.interpret_timestamp(r.timestamp, r.offset in extended, aware=consumer.kip228)
            read.append({"offset": r.offset, "timestamp": ts, "meaning": meaning, "garbled": r.garbled,
                         "extended": r.offset in extended})
        row.records = len(view.records)
        row.detail["outcome"] = view.outcome
        if view.logged:
            row.detail["logged"] = view.logged
        row.detail["read"] = read
        row.detail["garbled"] = any(r.garbled for r in view.records)
        return [row]


# ------------------------------------------------------------------------------------------------
def _read_from(log: Log, offset: int) -> bytes:
    """The replica's batches from ``offset`` to its end, whole (``UnifiedLog.read`` up to the LEO)."""
    if offset >= log.log_end_offset:
        return b""
    out = []
    while offset < log.log_end_offset:
        info = log.read(offset, 1 << 30, isolation="log_end")
        if not info.records:
            break
        out.append(bytes(info.records))
        last = list(MemoryRecords(info.records).batches())[-1]
        offset = last.last_offset + 1
    return b"".join(out)


def _build(producer: ProducerSpec, magic: int, timestamps: list[int], idempotent: bool) -> bytes:
    codec = CompressionType.from_name(producer.compression)
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    kw = {}
    if idempotent:
        kw = {"producer_id": _PRODUCER_ID, "producer_epoch": 0, "base_sequence": 0}
    keys, values = _record_texts(producer, len(timestamps))
    return build_records([(NO_TIMESTAMP if magic == 0 else ts, k.encode(), v.encode())
                          for ts, k, v in zip(timestamps, keys, values)],
                         magic=magic, compression=codec, timestamp_type=ts_type, timestamp_extended=producer.kip228, **kw)


def _record_texts(producer: ProducerSpec, count: int) -> tuple[list[str], list[str]]:
    """The keys and values a producer of the model sends: ``k<i>`` and ``<name> value <i>``."""
    return [f"k{i}" for i in range(count)], [f"{producer.name} value {i}" for i in range(count)]


def _format_asked(b: BrokerSpec) -> str | None:
    """The ``message.format.version`` a broker's properties ask for (None: its code version's default)."""
    fmt = b.properties.get("message.format.version", b.properties.get("log.message.format.version"))
    return None if fmt is None else str(fmt)


def _produce_conversion(magic_in: int, res) -> str:
    if magic_in < res.to_magic:
        return f"converted up v{magic_in}→v{res.to_magic}"
    if magic_in > res.to_magic:
        return f"converted down v{magic_in}→v{res.to_magic}"
    return "rebuilt" if res.path.endswith("(rebuilt)") or res.converted else "in place"
