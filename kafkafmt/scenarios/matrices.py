"""The seeds' compatibility tables, every cell computed by running a one-broker scenario on real bytes.

* :func:`seed002_producer_matrix` — KIP-228's "Changes from producer perspective": old/new producer ×
  old/new broker × timestamp (-1, Long.MIN_VALUE, another negative) with/without isTimestampExtended.
* :func:`seed002_consumer_matrix` — "Changes from consumer perspective": record timestamp × bit ×
  old/new consumer.
* :func:`seed003_matrix` — seed 003's idempotence mode × broker × topic message format.

Each cell holds three things side by side: ``seed`` (the seed's own cell, quoted, split into its
``readings`` where it says "Error or …", then ``ambiguous``), ``computed`` (what the scenario run
gives: a :class:`~kafkafmt.scenarios.cluster.Cluster` with the seed's old or new broker, producer and
consumer), and ``kafka`` (what Kafka 3.9.2 does: the same run with Kafka's rules, which kafkafmt
checks against the jars and the live broker; ``n/a`` where Kafka has no such party).
``agrees_with`` names the seed reading the computed outcome matches (``None``: it matches none).
"""
from __future__ import annotations

from ..broker.idempotence import produce_outcome
from ..constants import NO_TIMESTAMP, NO_TIMESTAMP_EXTENDED, V2_TIMESTAMP_EXTENDED_FLAG_MASK
from ..records import MemoryRecords
from ..records.kip228 import interpret_timestamp
from .cluster import Cluster
from .model import BrokerSpec, ConsumerSpec, ProducerSpec

__all__ = ["seed002_producer_matrix", "seed002_consumer_matrix", "seed003_matrix", "ambiguous_cells", "MATRICES",
           "OTHER_NEGATIVE"]

MIN = NO_TIMESTAMP_EXTENDED
#: the "other negative" timestamp used in the tables: one day before the epoch
OTHER_NEGATIVE = -86_400_000
_KAFKA_SOURCE = ("kafkafmt's Kafka 3.9 rules: LogValidator keeps a v2 batch in place (attributes, Long.MIN_VALUE "
                 "included) — checked against the 3.9.2 jars (tests/records/test_kip228.py) and the live broker "
                 "(conformance/cases/scenarios.json)")


def _ts_name(ts: int) -> str:
    return {NO_TIMESTAMP: "-1L", MIN: "Long.MIN_VALUE"}.get(ts, f"{ts}L")


def _one_broker(kip228_broker: bool, *, version="3.9", properties=None, modes=False) -> Cluster:
    return Cluster([BrokerSpec("broker", version, dict(properties or {}), kip228_broker, modes)], [{}])


# ------------------------------------------------------------------------------------------------
# seed 002, producer perspective.  (producer, sends, bit) → seed cell per broker: (text, readings)
# readings: (label, expected) with expected = ("stored", timestamp) or ("error", None)
_SEED002_PRODUCER = [
    ("old", NO_TIMESTAMP, {
        "old": ("(tick) Records this as NO_TIMESTAMP (−1L)", [("records -1", ("stored", NO_TIMESTAMP))]),
        "new": ("(tick) Records this as NO_TIMESTAMP (Long.MIN_VALUE)", [("records Long.MIN_VALUE", ("stored", MIN))])}),
    ("new", MIN, {
        "old": ("(error) Error or Records this as NO_TIMESTAMP (−1L)",
                [("error", ("error", None)), ("records -1", ("stored", NO_TIMESTAMP))]),
        "new": ("(tick) Records this as NO_TIMESTAMP (Long.MIN_VALUE)", [("records Long.MIN_VALUE", ("stored", MIN))])}),
    ("new", NO_TIMESTAMP, {
        "old": ("(error) Error or Records this as NO_TIMESTAMP (−1L)",
                [("error", ("error", None)), ("records -1 as NO_TIMESTAMP", ("stored", NO_TIMESTAMP))]),
        "new": ("(tick) Records this as −1L ms", [("records -1 ms", ("stored", NO_TIMESTAMP))])}),
    # not in the seed's table: the "other negatives" and the old producer without the bit
    ("new", OTHER_NEGATIVE, None),
    ("old", OTHER_NEGATIVE, None),
    ("old", MIN, None),
]


def _produce_cell(producer_new: bool, ts: int, broker_new: bool) -> dict:
    with _one_broker(broker_new) as c:
        rows = c.produce(ProducerSpec("producer", kip228=producer_new), 0, [ts])
        last = rows[-1]
        if last.error:
            return {"outcome": "error", "side": last.path, "error": last.error, "stored": None, "extended": None}
        batch = next(MemoryRecords(c.log_bytes("broker", 0)).batches())
        stored = [r.timestamp for r in batch.records()][0]
        ext = bool(batch.attributes & V2_TIMESTAMP_EXTENDED_FLAG_MASK)
        return {"outcome": "stored", "side": "leader", "error": None, "stored": stored, "extended": ext,
                "text": f"stored {_ts_name(stored)}" + (", isTimestampExtended=1" if ext else
                                                        ", isTimestampExtended dropped" if producer_new else ", bit 0")}


def _agrees(readings, computed) -> str | None:
    for label, (kind, value) in readings:
        if kind == computed["outcome"] and (kind == "error" or value == computed["stored"]):
            return label
    return None


def _producer_reading_gives(expected, sent: int) -> str:
    """What a reading of an ambiguous producer cell means downstream: which consumers read what."""
    kind, value = expected
    if kind == "error":
        return "the produce fails: nothing is stored"
    old = interpret_timestamp(value, False, aware=False)
    new = interpret_timestamp(value, False, aware=True)
    return (f"the sent {_ts_name(sent)} is stored as {_ts_name(value)} without the bit: an old consumer reads "
            f"{old[1]} ({_ts_name(old[0])}), a new one {new[1]} ({_ts_name(new[0])})")


def _consumer_reading_gives(expected) -> str:
    value, meaning = expected
    if value == "error":
        return "the old consumer raises an error on the record"
    return f"the application sees {meaning}"


def seed002_producer_matrix() -> list[dict]:
    """One row per (producer, timestamp sent, broker) with the seed's cell, the computed one and Kafka's."""
    out = []
    for producer, ts, seed_cells in _SEED002_PRODUCER:
        bit = 1 if producer == "new" else 0
        for broker in ("old", "new"):
            computed = _produce_cell(producer == "new", ts, broker == "new")
            seed = None if seed_cells is None else seed_cells[broker]
            readings = [] if seed is None else seed[1]
            kafka = _produce_cell(producer == "new", ts, False) if broker == "old" else None
            out.append({
                "producer": producer, "sends": _ts_name(ts), "isTimestampExtended": bit, "broker": broker,
                "seed": None if seed is None else seed[0], "readings": [r[0] for r in readings],
                "ambiguous": len(readings) > 1, "computed": computed,
                "reading_gives": {label: _producer_reading_gives(exp, ts) for label, exp in readings}
                if len(readings) > 1
                else {},
                "agrees_with": _agrees(readings, computed) if readings else None,
                "kafka": kafka if kafka is not None else "n/a (KIP-228 was never adopted: Kafka 3.9 is the old broker)",
                "kafka_source": _KAFKA_SOURCE if kafka is not None else None})
    return out


# ------------------------------------------------------------------------------------------------
# seed 002, consumer perspective: (timestamp, bit) → seed cell per consumer
_SEED002_CONSUMER = [
    (NO_TIMESTAMP, 0, {
        "old": ("(tick) Interpret as NO_TIMESTAMP (−1L)", [("NO_TIMESTAMP -1", (NO_TIMESTAMP, "NO_TIMESTAMP"))]),
        "new": ("(tick) Interpret as NO_TIMESTAMP (Long.MIN_VALUE)", [("NO_TIMESTAMP Long.MIN_VALUE",
                                                                       (MIN, "NO_TIMESTAMP"))])}),
    (NO_TIMESTAMP, 1, {
        "old": ("(error) Error or NO_TIMESTAMP", [("error", ("error", None)), ("NO_TIMESTAMP", (None, "NO_TIMESTAMP"))]),
        "new": ("(tick) Interpret as −1L ms", [("-1 ms", (NO_TIMESTAMP, "time"))])}),
    (MIN, 1, {
        "old": ("(error) Error or NO_TIMESTAMP", [("error", ("error", None)), ("NO_TIMESTAMP", (None, "NO_TIMESTAMP"))]),
        "new": ("(tick) Interpret as NO_TIMESTAMP (Long.MIN_VALUE)", [("NO_TIMESTAMP Long.MIN_VALUE",
                                                                       (MIN, "NO_TIMESTAMP"))])}),
    (OTHER_NEGATIVE, 1, None),
    # not in the seed: records below -1 without the bit, as Kafka 3.9 stores a KIP-228 batch whose every
    # timestamp is below -1 (setMaxTimestamp drops the bit)
    (MIN, 0, None),
    (OTHER_NEGATIVE, 0, None),
]


def _consume_cell(ts: int, bit: int, consumer_new: bool, *, kafka_broker: bool = False) -> dict:
    """A producer writes ``ts`` (with the bit iff ``bit``); the consumer reads it.  The record reaches the
    disk as the row states it through the seed's new broker for bit 1 (Kafka's broker may drop the bit:
    Kafka's setMaxTimestamp rewrites the attributes) and through an old one for bit 0 (a new broker would turn
    -1 into Long.MIN_VALUE); ``kafka_broker`` forces Kafka 3.9's rules."""
    with _one_broker(bool(bit) and not kafka_broker) as c:
        # below -1 only a KIP-228 producer can write; without the bit such a record exists only because
        # Kafka's broker dropped it
        prod = c.produce(ProducerSpec("producer", kip228=bool(bit) or ts < NO_TIMESTAMP), 0, [ts])
        if prod[-1].error:
            return {"outcome": "error", "error": prod[-1].error, "timestamp": None, "meaning": None}
        (row,) = c.consume(ConsumerSpec("consumer", kip228=consumer_new), 0)
        if row.error:
            return {"outcome": "error", "error": row.error, "timestamp": None, "meaning": None}
        (rec,) = row.detail["read"]
        return {"outcome": "read", "error": None, "timestamp": rec["timestamp"], "meaning": rec["meaning"],
                "stored_bit": int(rec["extended"]),
                "text": f"{rec['meaning']} ({_ts_name(rec['timestamp'])})"}


def _agrees_read(readings, computed) -> str | None:
    for label, (value, meaning) in readings:
        if value == "error":
            if computed["outcome"] == "error":
                return label
            continue
        if computed["outcome"] == "read" and computed["meaning"] == meaning and (
                value is None or computed["timestamp"] == value):
            return label
    return None


def seed002_consumer_matrix() -> list[dict]:
    out = []
    for ts, bit, seed_cells in _SEED002_CONSUMER:
        for consumer in ("old", "new"):
            computed = _consume_cell(ts, bit, consumer == "new")
            seed = None if seed_cells is None else seed_cells[consumer]
            readings = [] if seed is None else seed[1]
            out.append({
                "record timestamp": _ts_name(ts), "isTimestampExtended": bit, "consumer": consumer,
                "seed": None if seed is None else seed[0], "readings": [r[0] for r in readings],
                "ambiguous": len(readings) > 1, "computed": computed,
                "reading_gives": {label: _consumer_reading_gives(exp) for label, exp in readings} if len(readings) > 1
                else {},
                "agrees_with": _agrees_read(readings, computed) if readings else None,
                "kafka": _consume_cell(ts, bit, False, kafka_broker=True) if consumer == "old"
                else "n/a (no Kafka consumer knows isTimestampExtended)",
                "kafka_source": "Kafka 3.9's broker stores it, Kafka's consumer reads it (ConsumerRecord.NO_TIMESTAMP "
                                "= -1, the attribute bit unknown)" if consumer == "old" else None})
    return out


# ------------------------------------------------------------------------------------------------
# seed 003
_FORMATS = {0: "0.9.0", 1: "0.10.2", 2: "0.11.0"}
_MODES = ("off", "safe", "required", "true", "false")


def _idem_cell(mode: str, broker_version: str, fmt: int, *, kafka: bool) -> dict:
    props = {"message.format.version": _FORMATS[fmt], "inter.broker.protocol.version": "2.8" if kafka else broker_version}
    modes = (not kafka) and broker_version == "1.0"
    code = "3.9" if kafka else broker_version
    if kafka and mode not in ("true", "false"):
        return {"outcome": "error", "side": "client", "error": "ConfigException: enable.idempotence is a boolean",
                "stored_magic": None, "idempotent_on_disk": None}
    with Cluster([BrokerSpec("broker", code, props, False, modes)], [{}]) as c:
        p = ProducerSpec("producer", "3.9" if kafka else "1.0", idempotence=mode)
        rows = c.produce(p, 0, [None])
        last = rows[-1]
        if last.error:
            return {"outcome": "error", "side": last.path, "error": last.error, "stored_magic": None,
                    "idempotent_on_disk": None}
        return {"outcome": "stored", "side": "leader", "error": None, "stored_magic": last.magic_out,
                "idempotent_on_disk": last.detail["idempotent_on_disk"],
                "downgraded": "downgraded" in last.detail, "disabled_by_client": "idempotence_disabled" in rows[0].detail}


def seed003_matrix() -> list[dict]:
    """Mode × broker (0.11.0 / 1.0.0) × topic format; the seed's cell from :func:`produce_outcome`."""
    out = []
    for broker in ("0.11.0", "1.0"):
        for fmt in (0, 1, 2):
            for mode in _MODES:
                seed = produce_outcome(mode, client_version="1.0.0", broker_version="1.0.0" if broker == "1.0"
                                       else "0.11.0", topic_message_format=fmt, variant="seed")
                kafka = _idem_cell(mode, broker, fmt, kafka=True)
                out.append({"mode": mode, "broker": broker, "topic format": f"v{fmt}", "reading_gives": {},
                            "seed": {"succeeded": seed.succeeded, "stored_magic": seed.batch_stored_magic,
                                     "idempotent": seed.idempotence_effective, "error": seed.error,
                                     "downgraded": seed.downgraded},
                            "ambiguous": False,
                            "computed": _idem_cell(mode, broker, fmt, kafka=False), "kafka": kafka,
                            "kafka_source": "kafkafmt's LogValidator (UnsupportedForMessageFormatException, "
                                            "checked by conformance/cases/produce-convert.json)"})
    return out


MATRICES = {"seed002-producer": seed002_producer_matrix, "seed002-consumer": seed002_consumer_matrix,
            "seed003": seed003_matrix}


def ambiguous_cells(rows: list[dict]) -> list[dict]:
    """The cells where the seed says "Error or …", with what each reading gives."""
    return [r for r in rows if r["ambiguous"]]


def _outcome_text(cell) -> str:
    if not isinstance(cell, dict):
        return str(cell)
    if cell.get("error"):
        return f"error ({cell.get('side', '')}): {cell['error']}"
    if "text" in cell:
        return cell["text"]
    return (f"stored v{cell['stored_magic']}" + (", idempotent" if cell.get("idempotent_on_disk") else "")
            + (", downgraded by the broker" if cell.get("downgraded") else "")
            + (", idempotence disabled by the client" if cell.get("disabled_by_client") else ""))


def _seed_text(row) -> str:
    seed = row["seed"]
    if isinstance(seed, dict):
        if seed["error"]:
            return f"error: {seed['error']}"
        return (f"stored v{seed['stored_magic']}" + (", idempotent" if seed["idempotent"] else "")
                + (", downgraded by the broker" if seed["downgraded"] else ""))
    if seed is None:
        return "(not in the seed)"
    return seed + (f"  [ambiguous: {' | '.join(f'{k} → {v}' for k, v in row['reading_gives'].items())}]"
                   if row["ambiguous"] else "")


def matrix_table(name: str) -> tuple[list[str], list[list[str]]]:
    """``(columns, rows)`` of a matrix as text cells: the key columns, seed, computed, agrees, Kafka 3.9."""
    rows = MATRICES[name]()
    keys = [k for k in rows[0] if k not in ("seed", "readings", "ambiguous", "computed", "agrees_with", "kafka",
                                            "kafka_source", "reading_gives")]
    cols = keys + ["seed", "computed", "agrees with", "Kafka 3.9.2"]
    out = []
    for r in rows:
        if isinstance(r["seed"], dict):
            s = r["seed"]
            c = r["computed"]
            agree = "yes" if (c["outcome"] == "stored") == s["succeeded"] and (
                c["outcome"] != "stored" or (c["stored_magic"], c["idempotent_on_disk"]) ==
                (s["stored_magic"], s["idempotent"])) else "NO"
        else:
            agree = r["agrees_with"] or ("-" if r["seed"] is None else "none of the readings")
        out.append([str(r[k]) for k in keys] + [_seed_text(r), _outcome_text(r["computed"]), agree,
                                                 _outcome_text(r["kafka"])])
    return cols, out
