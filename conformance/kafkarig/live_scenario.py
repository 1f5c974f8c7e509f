"""``kafkafmt scenario run --live``: a scenario's steps on real brokers and clients, beside the model, step by step.

Registered as the entry point ``kafkarig`` of group ``kafkafmt.live_runners`` (``conformance/pyproject.toml``);
the product finds :func:`run_live` there and never imports the rig.  The model runs the scenario
(:func:`kafkafmt.scenarios.runner.run_scenario`); after each modelled step its ``on_step`` hook hands the step
and the model's cluster to :class:`LiveScenario`, which performs the same actions on a ZooKeeper cluster of
old releases (:mod:`kafkarig.oldcluster`) and compares:

* a broker's ``version`` is a release line (``"0.9.0"``, ``"0.10.0"``...): the line's last patch release of
  :data:`kafkarig.releases.RELEASES` runs (``0.10.2`` → ``0.10.2.2``); scenario brokers A, B, C... are broker
  ids 1, 2, 3..., the scenario's partitions one topic ``topic`` with their replicas in that order (leader first);
* ``configure`` → a rolling restart of the brokers whose release or properties changed, in the model's order
  (the model's ``message.format.version`` / ``inter.broker.protocol.version`` / ``message.timestamp.type``
  become ``log.message.format.version``, ``inter.broker.protocol.version`` and ``log.message.timestamp.type``;
  the seeds' ``0.9.0-1`` is ``0.10.0-IV0``), each waiting for the ISR, then the preferred leaders elected
  again (the model keeps its leaders across a bounce); nothing is started before the first step that needs a
  broker.  A broker that refuses to start is restarted on its previous settings and the run stops there, as
  the model's does (:func:`kafkafmt.scenarios.runner.run_scenario`): the row agrees when the model refused
  that broker for the release's own reason;
* ``produce`` → the Java ``kafka-clients`` of the producer's release line (``OldClient``) sends the records
  the model's producer sent (keys, values, timestamps of the model's row), compression as the producer's,
  ``enable.idempotence`` as its mode (:func:`kafkarig.oldclients.producer_settings`); an error is the one the
  client raised (exception class and message), its class compared with the model's;
* ``consume`` → the consumer's Java client reads from the offset; its records (offsets, and timestamps from
  0.10 on; a LogAppendTime wrapper's or batch's without the broker's clock: :func:`_clockless`) and its error
  against the model's: a model consumer that raises agrees with a failure of the same exception class, one
  that stalls with a client that received the fetch response, logged the same exception class and read
  nothing (:func:`kafkarig.history.stalled`); plus one raw Fetch at the model's request version: the bytes it
  returns against the model's fetch of the model's leader replica;
* ``replicate`` → wait for every live follower to hold its leader's bytes; ``shutdown`` / ``start`` stop and
  start a broker (leaders compared with the model's); ``nuke`` deletes a stopped broker's partition
  directories; ``show_disk`` and the end of every step compare each replica's ``.log`` bytes with the model's
  replica (those the model has replicated).

Seed 003's proposals (``enable.idempotence=safe``, a broker's ``idempotence_modes``) run as the releases can
run them (:mod:`kafkarig.proposals`): the rows are compared with the model of Kafka's released rules, and the
seed's own outcome is shown beside the release's where it differs (``SEED`` rows, not counted).  v2 batches
carry a producer id the broker assigned and the leader epoch its controller counted, which the model does not
simulate: replicas are compared without them (and the CRC over them), and the row says so.

A step the rig cannot run for real (seed 002's KIP-228 switches, a forced request version, Kafka 3.9 / 4.4
brokers, the cleaner, the clock, an idempotent producer of a release before 0.11) is refused before any JVM
starts (:class:`~kafkafmt.scenarios.live.LiveUnsupported`, one line).  Every JVM is stopped by PID at the end,
whatever happened.
"""
from __future__ import annotations

import dataclasses
import re
import shutil
import struct
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

from . import proposals
from .broker import BrokerError
from .history import hexdiff, stalled
from .oldclients import java_client, producer_settings
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
ACTIONS = {"configure": {"broker", "version", "properties", "idempotence_modes"},
           "produce": {"producer", "partition", "records", "timestamps"},
           "replicate": set(), "consume": {"consumer", "partition", "offset"}, "shutdown": {"broker"},
           "start": {"broker"}, "nuke": {"broker", "partitions"}, "show_disk": {"broker", "partition"},
           "upgrade": {"producer", "consumer", "version", "compression", "idempotence"}}


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
        if b.kip228:
            return f"broker {b.name}: kip228 is a proposal no release shipped"
        extra = set(b.properties) - set(BROKER_KEYS)
        if extra:
            return f"broker {b.name}: properties {sorted(extra)} are not run live"
    for p in scenario.producers.values():
        if p.produce_version is not None or p.kip228:
            return f"producer {p.name}: a forced produce_version or kip228 is not run live"
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
    return _idempotence_unsupported(scenario)


def _idempotence_unsupported(scenario) -> str | None:
    """An idempotent producer whose release has no ``enable.idempotence`` (before 0.11, KIP-98), followed through
    the scenario's ``upgrade`` actions; None when there is none."""
    state = {p.name: (p.version, p.mode()) for p in scenario.producers.values()}
    for step in scenario.steps:
        for act, args, place in step.actions:
            if act == "upgrade" and args.get("producer") in state:
                version, mode = state[args["producer"]]
                probe = dataclasses.replace(scenario.producers[args["producer"]],
                                            idempotence=str(args.get("idempotence", mode)))
                state[args["producer"]] = (str(args.get("version", version)), probe.mode())
            if act == "produce" and args.get("producer") in state:
                version, mode = state[args["producer"]]
                try:
                    producer_settings(release_of(version), proposals.idempotent(mode))
                except ReleaseError as e:
                    return f"{place}: producer {args['producer']}: {e}"
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


def _v2_state(data: bytes) -> tuple[bytes, list[int], list[int]] | None:
    """``data`` with each v2 batch's partitionLeaderEpoch, CRC and (when it has one) producer id zeroed, and the
    producer ids and leader epochs found; None when there is no v2 batch or the entries do not parse.

    Layout (``DefaultRecordBatch``, KIP-98): baseOffset 0-7, length 8-11, partitionLeaderEpoch 12-15, magic 16,
    crc 17-20 (over attributes … end), attributes 21-22, lastOffsetDelta 23-26, two timestamps 27-42,
    producerId 43-50; a legacy entry has its magic at 16 too (offset, size, crc, magic)."""
    out, pids, epochs, pos = bytearray(data), [], [], 0
    while pos + 17 <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        end = pos + 12 + size
        if size < 5 or end > len(data):
            return None
        if data[pos + 16] == 2:
            if end < pos + 61:
                return None
            epochs.append(struct.unpack_from(">i", data, pos + 12)[0])
            pid = struct.unpack_from(">q", data, pos + 43)[0]
            pids.append(pid)
            out[pos + 12:pos + 16] = bytes(4)
            out[pos + 17:pos + 21] = bytes(4)
            if pid >= 0:
                out[pos + 43:pos + 51] = bytes(8)
        pos = end
    return (bytes(out), pids, epochs) if epochs and pos == len(data) else None


def _lat_masked(data: bytes) -> tuple[bytes, list[int]] | None:
    """``data`` with the broker's clock masked in each LogAppendTime entry, and the times masked; None when
    the entries do not parse.  A legacy v1 wrapper (attribute bit 3, KIP-32) has its timestamp (bytes 18-25)
    and the CRC over it (12-15) zeroed; a v2 batch (attribute bit 3, KIP-98) its maxTimestamp (35-42), the
    one field ``setMaxTimestamp(LOG_APPEND_TIME, now)`` writes, and its CRC (17-20).  Every other byte (offsets,
    sizes, attributes, codec, the compressed payload with the inner timestamps) stays as it is."""
    out, times, pos = bytearray(data), [], 0
    while pos < len(data):
        if pos + 17 > len(data):
            return None
        size = struct.unpack_from(">i", data, pos + 8)[0]
        end = pos + 12 + size
        if size < 5 or end > len(data):
            return None
        magic = data[pos + 16]
        if magic == 1 and end >= pos + 26 and data[pos + 17] & 0x08:
            times.append(struct.unpack_from(">q", data, pos + 18)[0])
            out[pos + 12:pos + 16] = bytes(4)
            out[pos + 18:pos + 26] = bytes(8)
        elif magic == 2 and end >= pos + 61 and struct.unpack_from(">h", data, pos + 21)[0] & 0x08:
            times.append(struct.unpack_from(">q", data, pos + 35)[0])
            out[pos + 17:pos + 21] = bytes(4)
            out[pos + 35:pos + 43] = bytes(8)
        pos = end
    return bytes(out), times


def compare_bytes(what: str, model: bytes, real: bytes) -> LiveRow:
    """Two replicas' (or fetches') bytes, compared whole.  LogAppendTime entries are compared byte for byte with
    only the broker's clock masked (:func:`_lat_masked`: the time field the broker stamps and the CRC over it);
    v2 batches without the producer ids the broker assigned and the leader epochs its controller counted
    (:func:`_v2_state`; neither simulated by the model: one producer id per JVM, an epoch per election)."""
    if model == real:
        return LiveRow(what, _digest(model), _digest(real), True, real_bytes=real)
    lat_m, lat_r = _lat_masked(model), _lat_masked(real)
    masked_m, masked_r, notes = model, real, []
    if lat_m is not None and lat_r is not None and (lat_m[1] or lat_r[1]):
        masked_m, masked_r = lat_m[0], lat_r[0]
        notes.append("LogAppendTime: each broker's clock (the stamped time and the CRC over it) masked")
    if masked_m != masked_r:
        m, r = _v2_state(masked_m), _v2_state(masked_r)
        if m is not None and r is not None and m[0] == r[0]:
            masked_m, masked_r = m[0], r[0]
            notes.append("v2: the broker's producer ids and leader epochs, compared without them")
            return LiveRow(f"{what} ({'; '.join(notes)})",
                           f"{_digest(model)}, producer ids {m[1]}, leader epochs {m[2]}",
                           f"{_digest(real)}, producer ids {r[1]}, leader epochs {r[2]}", True, real_bytes=real)
    if masked_m == masked_r:
        return LiveRow(f"{what} ({'; '.join(notes)})", f"{_digest(model)}, stamped {lat_m[1]}",
                       f"{_digest(real)}, stamped {lat_r[1]}", True, real_bytes=real)
    return LiveRow(what, _digest(model), _digest(real), False, hexdiff(masked_m, masked_r), real_bytes=real)


def _lat_offsets(data: bytes) -> dict[int, int]:
    """Offset → the index of its wrapper or batch, for every record in a LogAppendTime entry of ``data``."""
    out: dict[int, int] = {}
    try:
        for i, b in enumerate(MemoryRecords(data).batches()):
            if b.timestamp_type == TimestampType.LOG_APPEND_TIME:
                out.update({r.offset: i for r in b.records()})
    except KafkaFmtError:
        pass
    return out


def _clockless(model_read: list[tuple], real_records: list[dict], lat: dict[int, int], with_ts: bool,
               consumed_at: int, produced_at: dict[int, int]) -> tuple[list, list, str]:
    """A consumer's records, the model's and the release's, compared without the broker's clock: a record of a
    LogAppendTime wrapper or batch (``lat``, the model's) has its timestamp replaced by ``"LogAppendTime"`` on
    the model's side, and on the release's when its client says so (``timestampType``), every record of that
    wrapper or batch carries the same time, and that time is no earlier than its producer started
    (``produced_at``) and no later than the consumer did (``consumed_at``); a record that fails any of these
    keeps its real time, and disagrees.  Returns both sides and a note saying what was left out."""
    if not with_ts or not lat:
        return model_read, [(r["offset"], r["timestamp"]) if with_ts else (r["offset"],) for r in real_records], ""
    model = [(o, "LogAppendTime") if o in lat else (o, t) for o, t in model_read]
    times: dict[int, set[int]] = {}
    for r in real_records:
        if r["offset"] in lat:
            times.setdefault(lat[r["offset"]], set()).add(r["timestamp"])
    real = []
    for r in real_records:
        o, t = r["offset"], r["timestamp"]
        clockless = (o in lat and r.get("timestampType") == "LogAppendTime" and len(times[lat[o]]) == 1
                     and o in produced_at and produced_at[o] <= t <= consumed_at)
        real.append((o, "LogAppendTime") if clockless else (o, t))
    return model, real, ("LogAppendTime: the broker's clock, compared as one time per wrapper or batch, "
                         "stamped between the produce and the read")


def _exception_class(error: str | None) -> str | None:
    """The exception's simple class name an error text starts with (``org.….UnsupportedForMessageFormatException:
    …`` or the model's ``UnsupportedForMessageFormatException: …``), None when it names none."""
    m = re.match(r"(?:[\w$]+\.)*(\w+(?:Exception|Error))\b", error or "")
    return m.group(1) if m else None


class Refused(Exception):
    """A release refused a step (a broker that will not start with the scenario's configuration): the live run
    stops there with ``row`` as the step's last comparison."""

    def __init__(self, row: LiveRow) -> None:
        super().__init__(row.real)
        self.row = row


def _model_broker(r) -> str:
    """The model's bounce of one broker (its ``broker`` row), in words: started with what, or refused."""
    if r is None:
        return "bounced"
    d = r.detail
    if r.conversion == "refused to start":
        return f"Kafka {d.get('version')} refused to start: {d.get('reason')}"
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
    """The real cluster behind one scenario, driven step by step by :meth:`perform`.

    ``scenario`` is what runs (:func:`kafkarig.proposals.released`); ``seed`` the scenario as written and
    ``seed_steps`` its model run's steps, whose proposals (``safe`` producers, idempotence modes) are shown
    beside what the release did."""

    def __init__(self, scenario, seed=None, seed_steps=()) -> None:
        self.sc = scenario
        self.seed = seed if seed is not None else scenario
        self.seed_steps = list(seed_steps)
        #: producer → its mode as the seed wrote it (``safe`` is a proposal) and as the release runs it
        self.seed_modes = {p.name: p.mode() for p in self.seed.producers.values()}
        self.modes = {p.name: p.mode() for p in scenario.producers.values()}
        self._seed_args: dict = {}
        self._seed_rows: list = []
        self._seed_cursor = [0]
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
        #: (partition, offset) → the wall clock (ms) when the real producer of that offset started
        self.produced_at: dict[tuple[int, int], int] = {}

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
    def perform(self, step, result, model, number: int | None = None) -> list[LiveRow]:
        """Step ``number`` for real; its comparisons with the model (``result``, ``model``) as rows."""
        self.rows_so_far = rows = []
        if self.cluster is None:
            self._up()
        cursor = [0]
        seed_step = self.seed.steps[number - 1] if number and number <= len(self.seed.steps) else step
        self._seed_rows = self.seed_steps[number - 1].rows if number and number <= len(self.seed_steps) else []
        self._seed_cursor = [0]
        if number == 1:
            rows += [proposals.broker_modes_row(b.name, self.want[b.name][0]) for b in self.seed.brokers
                     if b.idempotence_modes]
        for (act, args, place), (_a, seed_args, _p) in zip(step.actions, seed_step.actions):
            self._seed_args = seed_args
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
        """A rolling bounce of the brokers the model bounced, in its order: each broker whose release or
        settings changed is restarted and waited for in the ISR.  A broker that refuses to start is restarted on
        its previous settings and the run stops there (:class:`Refused`), agreeing when the model refused it
        for the same reason; the model's roll stops at its first refusal, and so does this one."""
        names = list(self.ids) if a["broker"] == "all" else [a["broker"]]
        out, changed = [], False
        for n in names:
            mrow = self._next_row(rows, cursor, "broker", n)
            if mrow is None:  # the model's roll stopped before this broker
                break
            model_refused = mrow.conversion == "refused to start"
            rel, props = self.want[n]
            new = (release_of(a["version"]) if a.get("version") else rel,
                   {**props, **_server_properties(a.get("properties") or {})})
            if n in self.down or (_effective(*new) == _effective(rel, props) and not model_refused):
                self.want[n] = new
                continue
            b = self._broker(n)
            before = (b.release.version, dict(b.overrides))
            try:
                b.restart(*new)
            except BrokerError as e:
                # the operator puts the broker back as it was (restart merges: a key the bounce added is removed)
                b.restart(before[0], {**{k: None for k in new[1] if k not in before[1]}, **before[1]})
                self._wait_in_sync()
                reason = _refusal(str(e))
                raise Refused(LiveRow(f"broker {n} bounced", _model_broker(mrow),
                                      f"Kafka {new[0]} refused to start: {reason}",
                                      model_refused and mrow.detail.get("reason") == reason,
                                      f"{n} restarted on its previous configuration; the steps after this one are "
                                      "not run live")) from None
            self.want[n] = new
            changed = True
            real = f"Kafka {new[0]} started, " + ", ".join(
                f"{k}={v}" for k, v in sorted(new[1].items()) if k in BROKER_KEYS.values())
            if model_refused:
                raise Refused(LiveRow(f"broker {n} bounced", _model_broker(mrow), real, False,
                                      "the model refused the bounce; the steps after this one are not run"))
            try:
                self._wait_in_sync(ISR_TIMEOUT)
            except BrokerError as e:
                raise Refused(LiveRow(f"broker {n} bounced", _model_broker(mrow),
                                      f"Kafka {new[0]} started but its replicas did not rejoin the ISR within "
                                      f"{ISR_TIMEOUT:.0f}s: {str(e).splitlines()[0]}", False,
                                      "the steps after this one are not run live")) from None
            if self.ran[n][-1] != new[0]:
                self.ran[n].append(new[0])
            out.append(LiveRow(f"broker {n} bounced", _model_broker(mrow), real, True))
        if changed:
            self._elect_preferred(model)
        if self._seed_args.get("idempotence_modes"):
            out += [proposals.broker_modes_row(n, self.want[n][0]) for n in names]
        return out

    def _produce(self, a, rows, cursor, model) -> list[LiveRow]:
        name = a["producer"]
        prow = self._next_row(rows, cursor, "producer", name)
        partition = int(a.get("partition", 0))
        lrow = self._next_row(rows, cursor, "leader", model.partitions[partition]["leader"])
        seed_prow = self._next_row(self._seed_rows, self._seed_cursor, "producer", name)
        i = self._seed_cursor[0]
        seed_lrow = self._seed_rows[i] if seed_prow and i < len(self._seed_rows) and \
            self._seed_rows[i].path == "leader" else None
        self._seed_cursor[0] += seed_lrow is not None
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
        rel = release_of(self.client_versions[name])
        settings = producer_settings(rel, proposals.idempotent(self.modes[name]))
        started = int(time.time() * 1000)
        run = java_client(rel, ["produce", bootstrap, TOPIC, str(partition), self.compression[name], str(len(sent)),
                                *ts], timeout_ms=15000, producer=settings)
        if run.ok:  # the earliest a LogAppendTime broker can have stamped these offsets (:func:`_clockless`)
            self.produced_at.update({(partition, r["offset"]): started for r in run.records})
        model_err = (prow.error or (lrow.error if lrow else None))
        model_out = f"error {model_err}" if model_err else \
            f"ok, offsets {lrow.detail['offsets'][0]}-{lrow.detail['offsets'][1]}" if lrow else "ok"
        real_out = f"ok, offsets {run.records[0]['offset']}-{run.records[-1]['offset']}" if run.ok and run.records \
            else f"error {run.error}"
        # both failed: the same exception class when the model names one (the client reports its own message:
        # a Produce response carries only the error code before v8, the broker's message is in its log)
        same_error = _exception_class(model_err) in (None, _exception_class(run.error))
        agree = (model_err is None) == run.ok and (real_out == model_out if run.ok else same_error)
        idem = f", enable.idempotence={settings['enable.idempotence']}" if settings else ""  # 0.11 on (KIP-98)
        what = f"{name} ({run.client}{idem}) → p{partition} leader {leader}: {len(sent)} records, {prow.request}"
        out = [LiveRow(what, model_out, real_out, agree)]
        if self.seed_modes.get(name) == "safe":
            out.append(proposals.safe_produce_row(f"{name} (enable.idempotence=safe) → p{partition} leader {leader}",
                                                  (seed_prow, seed_lrow), run.ok and bool(run.records), real_out))
        return out

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
        for p, info in self._up().in_sync_state(TOPIC).items():  # every assigned replica (ZooKeeper's)
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
        # the model's "stalls" (a 0.9 consumer that only logs its parse error): the real client received the
        # fetch response, its NetworkClient logged the exception, and its poll loop ended having read nothing
        stalls = crow is not None and crow.detail.get("outcome") == "stalls"
        timeout_ms = 6000 if crow is None or crow.error or stalls else 15000
        started = int(time.time() * 1000)
        run = java_client(rel, ["consume", self._broker(leader).bootstrap, TOPIC, str(partition), str(offset),
                                str(count)], timeout_ms=timeout_ms)
        lat = _lat_offsets(model.log_bytes(model.partitions[partition]["leader"], partition)) if with_ts else {}
        model_seen, real_seen, lat_note = _clockless(model_read, run.records, lat, with_ts, started,
                                                     {o: t for (p, o), t in self.produced_at.items() if p == partition})
        real_read = [(r["offset"], r["timestamp"]) if with_ts else (r["offset"],) for r in run.records]
        real_stalled = stalled(run)
        model_txt = f"{len(model_read)} records {model_read[:4]}{'...' if len(model_read) > 4 else ''}" + (
            f", error {crow.error}" if crow and crow.error else
            f", stalls: no record, no error (only logged: {crow.detail.get('logged')})" if stalls else "")
        real_txt = f"{len(real_read)} records {real_read[:4]}{'...' if len(real_read) > 4 else ''}" + (
            "" if run.ok else f", stalls: no record, no error (only logged: {run.dropped})" if real_stalled
            else f", error {run.error}")
        if stalls:  # the exception the release's client logged is the one the model's logs
            outcome = real_stalled and _exception_class(crow.detail.get("logged")) == _exception_class(run.dropped)
        elif crow is not None and crow.error:  # a failure of the model's class, not any failure
            outcome = not run.ok and not real_stalled and _exception_class(crow.error) == _exception_class(run.error)
        else:
            outcome = crow is not None and run.ok
        agree = model_seen == real_seen and outcome
        what = f"{name} ({run.client}) reads p{partition} from {offset} via {leader}"
        out.append(LiveRow(what + (f" ({lat_note})" if lat_note else ""), model_txt, real_txt, agree))
        if crow is not None and crow.request.startswith("FetchRequest v") and offset == 0:
            version = int(crow.request.rsplit("v", 1)[1])
            log = model.logs[(model.partitions[partition]["leader"], partition)]
            m = model_fetch(model.log_bytes(model.partitions[partition]["leader"], partition), topic_config=log.config,
                            fetch_version=version, fetch_offset=0)
            with self._broker(leader).client() as c:
                res = c.fetch(TOPIC, partition, 0, version=version)
            real = b"" if res.error_code else (res.records or b"")
            out.append(compare_bytes(f"Fetch v{version} p{partition} from 0: the bytes returned by {leader}",
                                     b"" if m.error else bytes(m.wire_records), real))
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
        if "producer" in a and "idempotence" in a:
            p = self.sc.producers[a["producer"]]
            self.modes[p.name] = dataclasses.replace(p, idempotence=str(a["idempotence"])).mode()
            self.seed_modes[p.name] = dataclasses.replace(p, idempotence=str(self._seed_args["idempotence"])).mode()
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
    seed = run_scenario(scenario)  # the seed's own outcomes, its proposals' included: shown beside the releases'
    runs = proposals.released(scenario)
    live = LiveScenario(runs, scenario, seed.steps)
    report = LiveReport(releases=live.releases())
    t0 = time.monotonic()

    def on_step(n, step, result, model):
        try:
            rows = live.perform(step, result, model, n)
        except Refused as r:
            report.brokers_at[n] = {b: ran[-1] for b, ran in live.ran.items()}
            rows = [*live.rows_so_far, r.row]
            report.steps.append((n, step.name, rows))
            if emit is not None:
                emit(n, step.name, rows)
            raise
        report.brokers_at[n] = {b: ran[-1] for b, ran in live.ran.items()}
        report.steps.append((n, step.name, rows))
        if emit is not None:
            emit(n, step.name, rows)

    try:
        run_scenario(runs, on_step=on_step)  # the model stops after a step where a broker refused to start
    except Refused:
        pass
    except (BrokerError, ReleaseError, OSError) as e:
        raise LiveRunFailed(str(e).splitlines()[0]) from None
    finally:
        live.close()
    report.not_run = [f"{i}. {st.name}" for i, st in enumerate(runs.steps, 1) if i > len(report.steps)]
    report.seconds = time.monotonic() - t0
    report.releases = {n: "→".join(r) for n, r in live.ran.items()}
    return report
