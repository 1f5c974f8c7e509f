"""``kafkafmt scenario run --live``: a scenario's steps on real brokers and clients, beside the model, step by step.

Registered as the entry point ``kafkarig`` of group ``kafkafmt.live_runners`` (``conformance/pyproject.toml``);
the product finds :func:`run_live` there and never imports the rig.  The model runs the scenario
(:func:`kafkafmt.scenarios.runner.run_scenario`); after each modelled step its ``on_step`` hook hands the step
and the model's cluster to :class:`LiveScenario`, which performs the same actions on a ZooKeeper cluster of
old releases (:mod:`kafkarig.oldcluster`) and compares:

* a broker's ``version`` is a release line (``"0.9.0"``, ``"0.10.0"``...): the line's last patch release of
  :data:`kafkarig.releases.RELEASES` runs (``0.10.2`` → ``0.10.2.2``); scenario brokers A, B, C... are broker
  ids 1, 2, 3..., the scenario's partitions one topic ``topic`` with their replicas in that order (leader first);
* ``configure`` → a rolling restart of the brokers whose release or properties changed (the model's
  ``message.format.version`` / ``inter.broker.protocol.version`` / ``message.timestamp.type`` become
  ``log.message.format.version``, ``inter.broker.protocol.version`` and ``log.message.timestamp.type``; the
  seeds' ``0.9.0-1`` is ``0.10.0-IV0``), each waiting for the ISR, then the preferred leaders elected again
  (the model keeps its leaders across a bounce); nothing is started before the first step that needs a broker;
* ``produce`` → the Java ``kafka-clients`` of the producer's release line (``OldClient``) sends the records
  the model's producer sent (keys, values, timestamps of the model's row), compression as the producer's;
* ``consume`` → the consumer's Java client reads from the offset (a model consumer that stalls agrees with a
  client that read nothing and raised nothing before its timeout); its records (offsets, and timestamps from
  0.10 on) and error against the model's; plus one raw Fetch at the model's request version: the bytes it
  returns against the model's fetch of the model's leader replica;
* ``replicate`` → wait for every live follower to hold its leader's bytes; ``shutdown`` / ``start`` stop and
  start a broker (leaders compared with the model's); ``nuke`` deletes a stopped broker's partition
  directories; ``show_disk`` and the end of every step compare each replica's ``.log`` bytes with the model's
  replica (those the model has replicated).

A step the rig cannot run for real (seed 002's KIP-228 switches, seed 003's idempotence modes, a forced
request version, Kafka 3.9 / 4.4 brokers, the cleaner, the clock) is refused before any JVM starts
(:class:`~kafkafmt.scenarios.live.LiveUnsupported`, one line).  Every JVM is stopped by PID at the end,
whatever happened.
"""
from __future__ import annotations

import shutil
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

from kafkafmt.broker.fetch import fetch as model_fetch
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.errors import KafkaFmtError
from kafkafmt.records import MemoryRecords
from kafkafmt.scenarios.live import LiveReport, LiveRow, LiveRunFailed, LiveUnsupported
from kafkafmt.scenarios.runner import run_scenario
from kafkafmt.scenarios.versions import normalize_api_version

from .broker import BrokerError
from .history import hexdiff, stalled
from .oldclients import java_client
from .oldcluster import OldCluster
from .releases import RELEASE_OF_LINE, ReleaseError, release

__all__ = ["run_live", "release_of", "unsupported", "LiveScenario", "TOPIC"]

TOPIC = "topic"
#: the model's broker property → the server.properties key of the release
BROKER_KEYS = {"message.format.version": "log.message.format.version",
               "log.message.format.version": "log.message.format.version",
               "inter.broker.protocol.version": "inter.broker.protocol.version",
               "message.timestamp.type": "log.message.timestamp.type",
               "log.message.timestamp.type": "log.message.timestamp.type"}
#: every broker: leaders move only when the scenario says so (the model keeps them across a bounce)
#: how long a bounced broker's replicas get to rejoin the ISR before the release is said to refuse the step (s)
ISR_TIMEOUT = 30.0
LIVE_BROKER_CONFIG = {"auto.leader.rebalance.enable": "false", "num.partitions": "1"}
#: the actions the rig performs for real, and per action the keys it can honour
ACTIONS = {"configure": {"broker", "version", "properties"}, "produce": {"producer", "partition", "records", "timestamps"},
           "replicate": set(), "consume": {"consumer", "partition", "offset"}, "shutdown": {"broker"},
           "start": {"broker"}, "nuke": {"broker", "partitions"}, "show_disk": {"broker", "partition"},
           "upgrade": {"producer", "consumer", "version", "compression"}}


def release_of(version) -> str:
    """The release the rig runs for a scenario's ``version`` (a line such as ``0.10.2`` or ``0.9.0``, or a
    release): the line's last patch release; LiveUnsupported when the rig runs no release of it."""
    v = str(version).strip()
    try:
        return release(v).version
    except ReleaseError:
        pass
    lines = sorted((line for line in RELEASE_OF_LINE if v == line or v.startswith(line + ".")), key=len)
    if not lines:
        raise LiveUnsupported(f"no live release of Kafka {v}: the rig runs {', '.join(RELEASE_OF_LINE.values())}")
    return RELEASE_OF_LINE[lines[-1]]


def unsupported(scenario) -> str | None:
    """Why ``scenario`` cannot run live (one line naming the place), or None."""
    for b in scenario.brokers:
        try:
            release_of(b.version)
        except LiveUnsupported as e:
            return f"broker {b.name}: {e.reason}"
        if b.kip228 or b.idempotence_modes:
            return f"broker {b.name}: kip228 / idempotence_modes are proposals no release shipped"
        extra = set(b.properties) - set(BROKER_KEYS)
        if extra:
            return f"broker {b.name}: properties {sorted(extra)} are not run live"
    for p in scenario.producers.values():
        if p.produce_version is not None or p.kip228 or p.mode() != "off":
            return f"producer {p.name}: a forced produce_version, kip228 or idempotence is not run live"
        release_of(p.version)
    for c in scenario.consumers.values():
        if c.fetch_version is not None or c.kip228:
            return f"consumer {c.name}: a forced fetch_version or kip228 is not run live"
        release_of(c.version)
    for step in scenario.steps:
        for act, args, place in step.actions:
            if act not in ACTIONS:
                return f"{place}: action {act!r} is not run live (live: {', '.join(ACTIONS)})"
            extra = set(args) - ACTIONS[act]
            if extra:
                return f"{place}: {act} {sorted(extra)} is not run live"
            props = args.get("properties") or {}
            if set(props) - set(BROKER_KEYS):
                return f"{place}: properties {sorted(set(props) - set(BROKER_KEYS))} are not run live"
            if "version" in args:
                release_of(args["version"])
    return None


def _server_properties(props: dict) -> dict[str, str]:
    out = {}
    for k, v in props.items():
        v = str(v)
        if k in ("message.format.version", "log.message.format.version", "inter.broker.protocol.version"):
            v = normalize_api_version(v)
        out[BROKER_KEYS[k]] = v
    return out


def _effective(version: str, props: dict[str, str]) -> tuple:
    """What a broker of ``version`` runs with ``props``: its release, and each setting with the release's default
    filled in (a 0.9 broker has no message format nor timestamp type setting: it writes v0); equal tuples need
    no bounce."""
    rel = release(version)
    ibp = props.get("inter.broker.protocol.version", rel.message_format)
    if rel.max_magic == 0:
        return rel.version, ibp
    return (rel.version, ibp, props.get("log.message.format.version", rel.message_format),
            props.get("log.message.timestamp.type", "CreateTime"))


def _digest(data: bytes) -> str:
    if not data:
        return "empty"
    try:
        return _summary(data)
    except KafkaFmtError as e:
        return f"{len(data)} bytes, crc32 {zlib.crc32(data):08x}, not parsable: {e}"


def _summary(data: bytes) -> str:
    batches = list(MemoryRecords(data).batches())
    magics = sorted({b.magic for b in batches})
    codecs = sorted({CompressionType(b.compression_id).kafka_name for b in batches})
    n = sum(1 for _ in MemoryRecords(data).records())
    return (f"{len(data)} bytes, {n} records in {len(batches)} batch(es) ({', '.join(codecs)}), magic {magics}, "
            f"crc32 {zlib.crc32(data):08x}")


def _records(data: bytes, *, lat_masked: bool = False) -> list[tuple]:
    out = []
    for b in MemoryRecords(data).batches():
        lat = b.timestamp_type == TimestampType.LOG_APPEND_TIME
        for r in b.records():
            out.append((b.magic, r.offset, None if (lat and lat_masked) else r.timestamp,
                        bytes(r.key or b"").decode(), bytes(r.value or b"").decode()))
    return out


def _has_lat(data: bytes) -> bool:
    return any(b.timestamp_type == TimestampType.LOG_APPEND_TIME for b in MemoryRecords(data).batches())


def compare_bytes(what: str, model: bytes, real: bytes) -> LiveRow:
    """Two replicas' (or fetches') bytes; LogAppendTime batches agree when all but the broker's clock agrees."""
    if model == real:
        return LiveRow(what, _digest(model), _digest(real), True)
    try:
        if (_has_lat(model) or _has_lat(real)) and _records(model, lat_masked=True) == _records(real, lat_masked=True):
            return LiveRow(what + " (LogAppendTime: each broker's clock, compared without it)", _digest(model),
                           _digest(real), True)
    except KafkaFmtError:
        pass
    return LiveRow(what, _digest(model), _digest(real), False, hexdiff(model, real))


class Refused(Exception):
    """A release refused a step (a broker that will not start with the scenario's configuration): the live run
    stops there with ``row`` as the step's last comparison."""

    def __init__(self, row: LiveRow) -> None:
        super().__init__(row.real)
        self.row = row


def _model_broker(rows, name: str) -> str:
    r = next((r for r in rows if r.path == "broker" and r.actor == name), None)
    if r is None:
        return "bounced"
    d = r.detail
    return (f"{d.get('version')} bounced, inter.broker.protocol.version={d.get('inter.broker.protocol.version')}, "
            f"message.format.version={d.get('message.format.version')}: writes v{r.magic_out}, replicates with "
            f"Fetch v{d.get('replica_fetch_version')}")


def _refusal(message: str) -> str:
    """The reason a broker gave for not starting (its ``requirement failed: ...`` or first exception line)."""
    lines = message.splitlines()
    for marker in ("requirement failed: ", "Exception: "):
        for line in lines:
            if marker in line:
                return line[line.index(marker) + (0 if marker.startswith("Exc") else len(marker)):].strip()
    return lines[0]


class LiveScenario:
    """The real cluster behind one scenario, driven step by step by :meth:`perform`."""

    def __init__(self, scenario) -> None:
        self.sc = scenario
        self.ids = {b.name: i + 1 for i, b in enumerate(scenario.brokers)}
        self.names = {i: n for n, i in self.ids.items()}
        self.want = {b.name: (release_of(b.version), _server_properties(b.properties)) for b in scenario.brokers}
        self.down: set[str] = set()
        self.client_versions = {**{p.name: p.version for p in scenario.producers.values()},
                                **{c.name: c.version for c in scenario.consumers.values()}}
        self.compression = {p.name: p.compression for p in scenario.producers.values()}
        self.cluster: OldCluster | None = None
        #: broker → the releases it ran, in order
        self.ran: dict[str, list[str]] = {n: [r] for n, (r, _) in self.want.items()}

    # -- the cluster ------------------------------------------------------------------------------------
    def releases(self) -> dict[str, str]:
        return {n: r for n, (r, _) in self.want.items()}

    def _up(self) -> OldCluster:
        if self.cluster is not None:
            return self.cluster
        first = self.sc.brokers[0].name
        self.cluster = OldCluster(self.want[first][0], chroot="live")
        for b in self.sc.brokers:
            rel, props = self.want[b.name]
            self.cluster.add_broker(self.ids[b.name], rel, {**LIVE_BROKER_CONFIG, **props}, start=False)
        # the first broker alone (it becomes the controller, as when they start one by one), then the others at once
        up = [b for b in self.sc.brokers if b.name not in self.down]
        for group in (up[:1], up[1:]):
            with ThreadPoolExecutor(max(1, len(group))) as pool:
                started = [(b, pool.submit(self.cluster.brokers[self.ids[b.name]].start)) for b in group]
            for b, done in started:  # the first broker that refused, in the scenario's order
                try:
                    done.result()
                except BrokerError as e:
                    raise Refused(LiveRow(f"broker {b.name} started", f"{b.version} {b.properties}",
                                          f"Kafka {self.want[b.name][0]} refused to start: {_refusal(str(e))}", False,
                                          "nothing is run live")) from None
        assignment = ",".join(":".join(str(self.ids[r]) for r in [p["leader"], *[x for x in p["replicas"]
                                                                                  if x != p["leader"]]])
                              for p in self._model_partitions())
        self.cluster.create_topic(TOPIC, replica_assignment=assignment, version=self.want[first][0])
        return self.cluster

    def _model_partitions(self) -> list[dict]:
        out = []
        for p in self.sc.partitions:
            replicas = list(p.get("replicas") or [b.name for b in self.sc.brokers])
            out.append({"leader": p.get("leader") or replicas[0], "replicas": replicas})
        return out

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None

    def _broker(self, name: str):
        return self._up().brokers[self.ids[name]]

    def _leaders(self) -> dict[int, str | None]:
        parts = self._up().partitions(TOPIC)
        return {p: self.names.get(info["leader"]) for p, info in parts.items()}

    def _wait_leaders(self, model, timeout: float = 30.0) -> dict[int, str | None]:
        """Wait until the real leaders are the model's (or ``timeout``); the real leaders."""
        want = {p: info["leader"] for p, info in model.partitions.items()}
        deadline = time.monotonic() + timeout
        while True:
            got = self._leaders()
            if got == want or time.monotonic() > deadline:
                return got
            time.sleep(0.2)

    def _wait_in_sync(self, timeout: float = 60.0) -> None:
        self._up().wait_in_sync(TOPIC, timeout, brokers={self.ids[n] for n in self.ids if n not in self.down})

    def _elect_preferred(self, model) -> None:
        want = {p: info["leader"] for p, info in model.partitions.items()}
        if self._leaders() == want:
            return
        c = self._up()
        c.tool("kafka.admin.PreferredReplicaLeaderElectionCommand", ["--zookeeper", c.zk_connect])
        self._wait_leaders(model)

    # -- one step -----------------------------------------------------------------------------------------
    def perform(self, step, result, model) -> list[LiveRow]:
        self.rows_so_far = rows = []
        if self.cluster is None:
            self._up()
        cursor = [0]
        for act, args, place in step.actions:
            rows += getattr(self, f"_{act}")(args, result.rows, cursor, model)
        if self.cluster is not None:
            rows += self._replicas(model, step_end=True)
        return rows

    @staticmethod
    def _next_row(rows, cursor, path: str, actor: str):
        for i in range(cursor[0], len(rows)):
            if rows[i].path == path and rows[i].actor == actor:
                cursor[0] = i + 1
                return rows[i]
        return None

    def _configure(self, a, rows, cursor, model) -> list[LiveRow]:
        names = list(self.ids) if a["broker"] == "all" else [a["broker"]]
        changed = []
        for n in names:
            rel, props = self.want[n]
            new = (release_of(a["version"]) if a.get("version") else rel,
                   {**props, **_server_properties(a.get("properties") or {})})
            if _effective(*new) != _effective(rel, props):
                changed.append(n)
            self.want[n] = new
        out = []
        for n in changed:
            if n in self.down:
                continue
            rel, props = self.want[n]
            b = self._broker(n)
            before = (b.release.version, dict(b.overrides))
            try:
                b.restart(rel, props)
            except BrokerError as e:
                b.restart(before[0], before[1])  # the operator puts the broker back as it was
                self._wait_in_sync()
                raise Refused(LiveRow(f"broker {n} bounced", _model_broker(rows, n),
                                      f"Kafka {rel} refused to start: {_refusal(str(e))}", False,
                                      f"{n} restarted on its previous configuration; the steps after this one are "
                                      "not run live")) from None
            try:
                self._wait_in_sync(ISR_TIMEOUT)
            except BrokerError as e:
                raise Refused(LiveRow(f"broker {n} bounced", _model_broker(rows, n),
                                      f"Kafka {rel} started but its replicas did not rejoin the ISR within "
                                      f"{ISR_TIMEOUT:.0f}s: {str(e).splitlines()[0]}", False,
                                      "the steps after this one are not run live")) from None
            if self.ran[n][-1] != rel:
                self.ran[n].append(rel)
            out.append(LiveRow(f"broker {n} bounced", _model_broker(rows, n), f"Kafka {rel} started, " + ", ".join(
                f"{k}={v}" for k, v in sorted(props.items()) if k in BROKER_KEYS.values()), True))
        if changed:
            self._elect_preferred(model)
        return out

    def _produce(self, a, rows, cursor, model) -> list[LiveRow]:
        name = a["producer"]
        prow = self._next_row(rows, cursor, "producer", name)
        partition = int(a.get("partition", 0))
        lrow = self._next_row(rows, cursor, "leader", model.partitions[partition]["leader"])
        sent = prow.detail.get("sent", []) if prow else []
        if not sent:
            return [LiveRow(f"{name} → p{partition}", f"not sent: {prow.error if prow else 'no row'}", "not sent", True)]
        self._up()
        leader = self._leaders().get(partition)
        bootstrap = self._broker(leader or next(n for n in self.ids if n not in self.down)).bootstrap
        values = [s["value"] for s in sent]
        prefix = values[0][:-1]
        stamps = [s["timestamp"] for s in sent]
        # v0 has no timestamp: the client sends none (a 0.10 client then stamps its own clock, dropped in v0)
        ts = ["-1", prefix] if all(t < 0 for t in stamps) else ["0", prefix, ",".join(map(str, stamps))]
        run = java_client(release_of(self.client_versions[name]),
                          ["produce", bootstrap, TOPIC, str(partition), self.compression[name], str(len(sent)), *ts],
                          timeout_ms=15000)
        model_err = (prow.error or (lrow.error if lrow else None))
        model_out = f"error {model_err}" if model_err else \
            f"ok, offsets {lrow.detail['offsets'][0]}-{lrow.detail['offsets'][1]}" if lrow else "ok"
        real_out = f"ok, offsets {run.records[0]['offset']}-{run.records[-1]['offset']}" if run.ok and run.records \
            else f"error {run.error}"
        agree = (model_err is None) == run.ok and (not run.ok or real_out == model_out)
        return [LiveRow(f"{name} ({run.client}) → p{partition} leader {leader}: {len(sent)} records, "
                        f"{prow.request}", model_out, real_out, agree)]

    def _replicate(self, a, rows, cursor, model) -> list[LiveRow]:
        self._up()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if all(ok for ok in self._follower_state().values()):
                break
            time.sleep(0.2)
        return []

    def _follower_state(self) -> dict[tuple[str, int], bool]:
        out = {}
        for p, info in self._up().partitions(TOPIC).items():
            leader = self.names.get(info["leader"])
            if leader is None:
                continue
            lead = self._broker(leader).segment(TOPIC, p).read_bytes()
            for r in info["replicas"]:
                n = self.names[r]
                if n != leader and n not in self.down:
                    seg = self._broker(n).segment(TOPIC, p)
                    out[(n, p)] = seg.exists() and seg.read_bytes() == lead
        return out

    def _consume(self, a, rows, cursor, model) -> list[LiveRow]:
        name, partition, offset = a["consumer"], int(a.get("partition", 0)), int(a.get("offset", 0))
        crow = self._next_row(rows, cursor, "consumer", name)
        leader = self._leaders().get(partition)
        out: list[LiveRow] = []
        rel = release_of(self.client_versions[name])
        with_ts = release(rel).max_magic >= 1
        model_read = [(r["offset"], r["timestamp"]) if with_ts else (r["offset"],)
                      for r in (crow.detail.get("read", []) if crow else [])]
        count = max(len(model_read), 1)
        # the model's "stalls" (a 0.9 consumer that only logs its parse error): the real client ends its poll
        # loop at the timeout having read nothing and raised nothing
        stalls = crow is not None and crow.detail.get("outcome") == "stalls"
        timeout_ms = 6000 if crow is None or crow.error or stalls else 15000
        run = java_client(rel, ["consume", self._broker(leader).bootstrap, TOPIC, str(partition), str(offset),
                                str(count)], timeout_ms=timeout_ms)
        real_read = [(r["offset"], r["timestamp"]) if with_ts else (r["offset"],) for r in run.records]
        real_stalled = stalled(run)
        model_txt = f"{len(model_read)} records {model_read[:4]}{'...' if len(model_read) > 4 else ''}" + (
            f", error {crow.error}" if crow and crow.error else
            ", stalls: no record, no error (the exception only logged)" if stalls else "")
        real_txt = f"{len(real_read)} records {real_read[:4]}{'...' if len(real_read) > 4 else ''}" + (
            "" if run.ok else f", stalls: no record, no error within {timeout_ms} ms" if real_stalled
            else f", error {run.error}")
        agree = model_read == real_read and (
            stalls and real_stalled or not stalls and (crow is not None and crow.error is None) == run.ok)
        out.append(LiveRow(f"{name} ({run.client}) reads p{partition} from {offset} via {leader}", model_txt, real_txt,
                           agree))
        if crow is not None and crow.request.startswith("FetchRequest v") and offset == 0:
            version = int(crow.request.rsplit("v", 1)[1])
            log = model.logs[(model.partitions[partition]["leader"], partition)]
            m = model_fetch(model.log_bytes(model.partitions[partition]["leader"], partition), topic_config=log.config,
                            fetch_version=version, fetch_offset=0)
            with self._broker(leader).client() as c:
                res = c.fetch(TOPIC, partition, 0, version=version)
            real = b"" if res.error_code else (res.records or b"")
            out.append(compare_bytes(f"Fetch v{version} p{partition} from 0: the bytes returned by {leader}",
                                     b"" if m.error else bytes(m.records), real))
        return out

    def _shutdown(self, a, rows, cursor, model) -> list[LiveRow]:
        n = a["broker"]
        if self.cluster is not None:
            self._broker(n).stop()
        self.down.add(n)
        if self.cluster is None:
            return []
        got = self._wait_leaders(model)
        want = {p: info["leader"] for p, info in model.partitions.items()}
        return [LiveRow(f"leader of p{p} after {n} stopped", str(want[p]), str(got.get(p)), want[p] == got.get(p))
                for p in sorted(want)]

    def _start(self, a, rows, cursor, model) -> list[LiveRow]:
        n = a["broker"]
        self.down.discard(n)
        if self.cluster is not None:
            rel, props = self.want[n]
            b = self._broker(n)
            b.restart(rel, {**LIVE_BROKER_CONFIG, **props})
            self._wait_in_sync()
        return []

    def _nuke(self, a, rows, cursor, model) -> list[LiveRow]:
        n = a["broker"]
        brow = self._next_row(rows, cursor, "broker", n)
        parts = brow.detail["partitions"] if brow else []
        if self.cluster is not None:
            if n not in self.down:
                raise LiveUnsupported(f"nuke {n}: the broker is running (shut it down first)")
            for p in parts:
                shutil.rmtree(self._broker(n).partition_dir(TOPIC, p), ignore_errors=True)
        return [LiveRow(f"{n}'s data of partitions {parts} deleted", str(parts), str(parts), True)]

    def _show_disk(self, a, rows, cursor, model) -> list[LiveRow]:
        n, p = a["broker"], int(a.get("partition", 0))
        real = self._broker(n).segment(TOPIC, p)
        return [compare_bytes(f"disk {n} p{p} (.log)", model.log_bytes(n, p), real.read_bytes() if real.exists() else b"")]

    def _upgrade(self, a, rows, cursor, model) -> list[LiveRow]:
        for k in ("producer", "consumer"):
            if k in a and "version" in a:
                self.client_versions[a[k]] = str(a["version"])
        if "producer" in a and "compression" in a:
            self.compression[a["producer"]] = str(a["compression"])
        return []

    def _replicas(self, model, step_end: bool) -> list[LiveRow]:
        """Each replica the model has replicated: its ``.log`` bytes against the real broker's."""
        out = []
        self._replicate({}, [], [0], model)
        for p, info in model.partitions.items():
            leader = info["leader"]
            lead_leo = model.logs[(leader, p)].log_end_offset
            for n in info["replicas"]:
                if n in self.down or not model.brokers[n].up:
                    continue
                if n != leader and model.logs[(n, p)].log_end_offset != lead_leo:
                    continue  # the model has not replicated it yet; the real follower has
                seg = self._broker(n).segment(TOPIC, p)
                out.append(compare_bytes(f"replica {n} p{p}{' (leader)' if n == leader else ''}",
                                         model.log_bytes(n, p), seg.read_bytes() if seg.exists() else b""))
        return out


def run_live(scenario, *, emit=None) -> LiveReport:
    """Run ``scenario`` in the model and for real, step by step; ``emit(n, name, rows)`` after each step."""
    why = unsupported(scenario)
    if why:
        raise LiveUnsupported(why)
    live = LiveScenario(scenario)
    report = LiveReport(releases=live.releases())
    t0 = time.monotonic()

    def on_step(n, step, result, model):
        try:
            rows = live.perform(step, result, model)
        except Refused as r:
            rows = [*live.rows_so_far, r.row]
            report.steps.append((n, step.name, rows))
            if emit is not None:
                emit(n, step.name, rows)
            raise
        report.steps.append((n, step.name, rows))
        if emit is not None:
            emit(n, step.name, rows)

    try:
        run_scenario(scenario, on_step=on_step)
    except Refused:
        report.not_run = [f"{i}. {st.name}" for i, st in enumerate(scenario.steps, 1) if i > len(report.steps)]
    except (BrokerError, ReleaseError, OSError) as e:
        raise LiveRunFailed(str(e).splitlines()[0]) from None
    finally:
        live.close()
    report.seconds = time.monotonic() - t0
    report.releases = {n: "→".join(r) for n, r in live.ran.items()}
    return report
