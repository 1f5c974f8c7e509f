"""Idempotent producers and older message formats (seed 003, from the KIP-185 discussion).

Three variants are modelled, for every combination of client (0.11.0 / 1.0.0), broker (0.11.0 /
1.0.0), topic message format (v0 / v1 / v2) and ``enable.idempotence`` value:

``variant="seed"`` — the page as captured in seed 003 (version 4):

* modes ``off`` / ``safe`` / ``required``; a 1.0.0 client reads ``true`` as ``required`` and
  ``false`` as ``off``;
* a 1.0.0 broker **downgrades** v2 batches sent in ``safe`` mode to the topic's older format (the
  producer id, epoch and sequence numbers are lost) and **fails** ``required`` ones;
* a 1.0.0 client in ``safe`` mode talking to an 0.11.0 broker **disables** idempotence;
* the ProduceRequest carries the mode (a new version); an older request (0.11.0 client) has no mode,
  so it keeps 0.11.0's behaviour: fail on an older format.  The seed calls that failure an
  UnsupportedVersionException.

``variant="published"`` — the later version of the page (mode renamed ``requested``, kept here as an
alias of ``safe``): the client learns the topic's message format from the metadata and decides
itself: ``requested`` → it sends non-idempotent batches to an older-format topic (nothing is
downgraded by the broker, the producer state is simply never attached); ``required`` → the client
fails with UnsupportedVersionException before sending.  An 0.11.0 broker cannot tell the client the
format, so ``requested`` disables idempotence there as in the seed.

``variant="kafka"`` — what Apache Kafka actually shipped (1.0 through 3.9): ``enable.idempotence``
stays a boolean (``safe``/``required``/``requested`` are a ConfigException), and the broker rejects
an idempotent batch for a topic below v2 with UnsupportedForMessageFormatException ("Idempotent
records cannot be used with magic version N", ``LogValidator.validateBatch``; error 43, fatal for the
producer).  Since Kafka 3.0 idempotence is on by default (KIP-679) and, with
inter.broker.protocol.version ≥ 3.0, every topic is v2 (KIP-724), so the failure cannot happen there.

:func:`downgrade_batch` performs the seed's broker-side downgrade on real bytes (Kafka's
``RecordsUtil.downConvert`` rules: headers dropped, offsets kept) and lists what was lost.
:func:`matrix` returns every combination as rows for a notebook table.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..constants import NO_TIMESTAMP
from ..records import MemoryRecords, MemoryRecordsBuilder
from .fetch import down_convert
from .trace import Trace

__all__ = ["produce_outcome", "ProduceOutcome", "downgrade_batch", "Downgrade", "matrix", "normalize_mode",
           "drop_producer_state",
           "CLIENT_VERSIONS", "BROKER_VERSIONS", "TOPIC_FORMATS", "MODES", "VARIANTS"]

CLIENT_VERSIONS = ("0.11.0", "1.0.0")
BROKER_VERSIONS = ("0.11.0", "1.0.0")
TOPIC_FORMATS = (0, 1, 2)
MODES = ("off", "safe", "required", "true", "false")
VARIANTS = ("seed", "published", "kafka")
LOST_FIELDS = ("producer id", "producer epoch", "sequence numbers")
_S3 = "seed 003"


@dataclass
class ProduceOutcome:
    """What happens to one produce of an idempotent-capable producer."""

    variant: str
    mode: str  #: as configured
    effective_mode: str | None  #: after the client's interpretation (None: the config is rejected)
    client_version: str
    broker_version: str
    topic_format: int
    idempotence_requested: bool
    idempotence_effective: bool
    batch_sent_magic: int | None  #: what the client sends (None: nothing sent)
    batch_stored_magic: int | None  #: what the broker appends (None: nothing appended)
    downgraded: bool
    downgraded_by: str | None  #: "broker" | "client" | None
    error: str | None
    error_side: str | None  #: "client" | "broker" | None
    error_message: str | None
    lost: tuple = ()
    notes: list = field(default_factory=list)
    trace: Trace | None = None

    @property
    def succeeded(self) -> bool:
        return self.error is None

    def to_row(self) -> dict:
        d = asdict(self)
        d.pop("trace")
        d["lost"] = ", ".join(self.lost)
        d["notes"] = " | ".join(self.notes)
        d["succeeded"] = self.succeeded
        return d


def normalize_mode(mode, client_version: str, variant: str) -> tuple[str | None, str | None]:
    """``(effective_mode, config_error)``: how the client reads ``enable.idempotence``."""
    m = str(mode).strip().lower()
    if m in ("true", "false") or variant == "kafka" or client_version == "0.11.0":
        if m not in ("true", "false"):
            return None, (f"Invalid value {mode} for configuration enable.idempotence: Expected value to be either "
                          "true or false")
        if variant == "kafka" or client_version == "0.11.0":
            return ("idempotent" if m == "true" else "off"), None
        return ("required" if m == "true" else "off"), None  # seed 003 last paragraph
    if m == "requested":
        m = "safe"
    if m not in ("off", "safe", "required"):
        return None, f"Invalid value {mode} for configuration enable.idempotence"
    return m, None


def produce_outcome(mode, *, client_version: str = "1.0.0", broker_version: str = "1.0.0",
                    topic_message_format=2, variant: str = "seed") -> ProduceOutcome:
    """The outcome of producing with ``enable.idempotence=mode`` (see the module doc for the variants)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}")
    if client_version not in CLIENT_VERSIONS or broker_version not in BROKER_VERSIONS:
        raise ValueError(f"versions must be in {CLIENT_VERSIONS} / {BROKER_VERSIONS}")
    fmt = _format(topic_message_format)
    tr = Trace(f"{variant}: client {client_version}, broker {broker_version}, topic v{fmt}, "
               f"enable.idempotence={mode}")
    eff, cfg_err = normalize_mode(mode, client_version, variant)
    out = ProduceOutcome(variant, str(mode), eff, client_version, broker_version, fmt, False, False, None, None,
                         False, None, None, None, None, trace=tr)
    if cfg_err:
        out.error, out.error_side, out.error_message = "ConfigException", "client", cfg_err
        src = "ProducerConfig (enable.idempotence is a BOOLEAN)" if (variant == "kafka" or client_version == "0.11.0") \
            else _S3
        tr.add("client configuration", f"rejected: {cfg_err}", src,
               note="the modes off/safe/required were never released; Kafka kept true/false" if variant == "kafka"
               else "an 0.11.0 client only knows true/false")
        return out
    tr.add("client configuration", f"enable.idempotence={mode} → {eff}",
           _S3 + " (true → required, false → off)" if variant != "kafka" and client_version == "1.0.0"
           else "ProducerConfig")
    out.idempotence_requested = eff != "off"
    if eff == "off":
        return _plain(out, tr, "idempotence off: a plain batch")
    if variant == "kafka":
        return _kafka(out, tr)
    if variant == "seed":
        return _seed(out, tr)
    return _published(out, tr)


def _format(f) -> int:
    if isinstance(f, int):
        if f not in TOPIC_FORMATS:
            raise ValueError("topic format must be 0, 1 or 2")
        return f
    s = str(f).lower().lstrip("v")
    if s in ("0", "1", "2"):
        return int(s)
    from ..config import record_version
    return record_version(s)


def _plain(out: ProduceOutcome, tr: Trace, why: str, *, lost=()) -> ProduceOutcome:
    out.batch_sent_magic = 2
    out.batch_stored_magic = out.topic_format
    out.idempotence_effective = False
    out.lost = tuple(lost)
    conv = "" if out.topic_format == 2 else f"; the broker converts it to the topic's v{out.topic_format} as usual"
    tr.add("produce", why + conv, "LogValidator.convertAndAssignOffsetsNonCompressed" if out.topic_format < 2
           else "LogValidator")
    return out


def _stored(out: ProduceOutcome, tr: Trace, src: str) -> ProduceOutcome:
    out.batch_sent_magic = 2
    out.batch_stored_magic = 2
    out.idempotence_effective = True
    tr.add("produce", "idempotent v2 batch accepted: producer id, epoch and sequence kept", src)
    return out


def _fail(out: ProduceOutcome, tr: Trace, error: str, side: str, message: str, src: str, note="") -> ProduceOutcome:
    out.error, out.error_side, out.error_message = error, side, message
    out.batch_sent_magic = 2 if side == "broker" else None
    tr.add("produce", f"fails on the {side}: {error}: {message}", src, note=note)
    return out


def _kafka_reject(out, tr, note=""):
    return _fail(out, tr, "UnsupportedForMessageFormatException", "broker",
                 f"Idempotent records cannot be used with magic version {out.topic_format}",
                 "LogValidator.validateBatch", note=note)


def _kafka(out: ProduceOutcome, tr: Trace) -> ProduceOutcome:
    if out.topic_format == 2:
        return _stored(out, tr, "LogValidator.validateBatch")
    return _kafka_reject(out, tr, note="seed 003's Background calls this failure UnsupportedVersionException; the "
                                       "broker answers UNSUPPORTED_FOR_MESSAGE_FORMAT (43)")


def _seed(out: ProduceOutcome, tr: Trace) -> ProduceOutcome:
    eff = out.effective_mode
    if out.client_version == "0.11.0":
        tr.add("request", "an 0.11.0 client sends the old ProduceRequest: no idempotence mode in it", _S3,
               note="seed 003: 'upgrade the ProduceRequest to include the idempotent producer mode'")
        if out.topic_format == 2:
            return _stored(out, tr, _S3)
        return _fail(out, tr, "UnsupportedVersionException", "broker",
                     "produce requests to topics with an older message format fail", _S3 + " Background",
                     note="real brokers answer UnsupportedForMessageFormatException (see variant 'kafka')")
    if out.broker_version == "0.11.0":
        if eff == "safe":
            out.notes.append("seed 003: a 1.0.0 client in safe mode writing to an 0.11.0 broker disables idempotence")
            tr.add("client", "safe mode + 0.11.0 broker → idempotence disabled", _S3)
            return _plain(out, tr, "plain batch (idempotence disabled by the client)", lost=LOST_FIELDS)
        if out.topic_format == 2:
            return _stored(out, tr, "0.11.0 broker")
        return _fail(out, tr, "UnsupportedVersionException", "broker",
                     "the 0.11.0 broker does not support idempotence for this topic's message format",
                     _S3 + " (required: requests fail if the broker does not support idempotence)")
    # 1.0.0 client, 1.0.0 broker: the new ProduceRequest carries the mode
    tr.add("request", f"ProduceRequest carries mode {eff}", _S3 + " Level of Effort 2")
    if out.topic_format == 2:
        return _stored(out, tr, _S3)
    if eff == "safe":
        out.batch_sent_magic = 2
        out.batch_stored_magic = out.topic_format
        out.downgraded, out.downgraded_by = True, "broker"
        out.lost = LOST_FIELDS + ("headers (if any)",) + (("timestamps",) if out.topic_format == 0 else ())
        out.idempotence_effective = False
        tr.add("broker", f"safe mode: the v2 batch is downgraded to v{out.topic_format}; "
               f"lost: {', '.join(out.lost)}", _S3 + " Design",
               note="kafkafmt.broker.idempotence.downgrade_batch shows it on bytes; Kafka itself has no such path")
        return out
    return _fail(out, tr, "UnsupportedVersionException", "broker",
                 f"required mode: topic message format v{out.topic_format} does not support idempotence",
                 _S3 + " Design (required → error)")


def _published(out: ProduceOutcome, tr: Trace) -> ProduceOutcome:
    eff = out.effective_mode
    if out.client_version == "0.11.0":
        if out.topic_format == 2:
            return _stored(out, tr, "0.11.0 client")
        return _kafka_reject(out, tr, note="an 0.11.0 client has no mode: the broker rejects the batch")
    if out.broker_version == "0.11.0":
        if eff == "safe":
            tr.add("client", "requested mode + 0.11.0 broker → idempotence disabled", "published page")
            return _plain(out, tr, "plain batch (idempotence disabled by the client)", lost=LOST_FIELDS)
        if out.topic_format == 2:
            return _stored(out, tr, "0.11.0 broker")
        return _kafka_reject(out, tr, note="the 0.11.0 broker cannot tell the client the topic's format")
    tr.add("metadata", f"the client learns the topic's message format v{out.topic_format} from metadata",
           "published page")
    if out.topic_format == 2:
        return _stored(out, tr, "published page")
    if eff == "safe":
        out.downgraded, out.downgraded_by = True, "client"
        out.notes.append("the client sends a non-idempotent batch; nothing for the broker to strip")
        return _plain(out, tr, "requested mode: the client disables idempotence for this topic", lost=LOST_FIELDS)
    return _fail(out, tr, "UnsupportedVersionException", "client",
                 f"topic message format v{out.topic_format} does not support idempotence (required)", "published page")


def matrix(variants=VARIANTS, modes=MODES) -> list[dict]:
    """Every (variant, client, broker, topic format, mode) combination as a dict row, from the rules above.

    The same table computed on real bytes (a producer, the validator and a log per cell) is
    :func:`kafkafmt.scenarios.matrices.seed003_matrix`, which the test-suite checks against this one."""
    rows = []
    for v in variants:
        for c in CLIENT_VERSIONS:
            for b in BROKER_VERSIONS:
                for f in TOPIC_FORMATS:
                    for m in modes:
                        rows.append(produce_outcome(m, client_version=c, broker_version=b, topic_message_format=f,
                                                    variant=v).to_row())
    return rows


# ------------------------------------------------------------------------------------------------
@dataclass
class Downgrade:
    """A v2 batch downgraded to an older format, and what did not survive."""

    records: bytes
    to_magic: int
    lost: dict
    trace: Trace


def downgrade_batch(v2_bytes, to_magic: int) -> Downgrade:
    """Downgrade v2 batch(es) to ``to_magic`` as seed 003's 'safe' broker would, listing what is lost.

    The conversion uses Kafka's down-conversion rules (``RecordsUtil.downConvert``): offsets and
    codec kept, headers dropped, producer state dropped, timestamps dropped for v0.  (On the produce
    path Kafka instead rejects idempotent batches, and fails with IllegalArgumentException on headers.)
    """
    data = bytes(v2_bytes)
    batches = [b for b in MemoryRecords(data).batches()]
    tr = Trace(f"downgrade {len(batches)} v2 batch(es) to v{to_magic} (seed 003 safe mode)")
    lost: dict = {"producer_id": [], "producer_epoch": [], "base_sequence": [], "sequences": [],
                  "partition_leader_epoch": [], "transactional": [], "headers": [], "timestamps": [],
                  "control_batches": 0}
    for b in batches:
        if b.magic < 2:
            continue
        if b.is_control:
            lost["control_batches"] += 1
            continue
        lost["producer_id"].append(b.producer_id)
        lost["producer_epoch"].append(b.producer_epoch)
        lost["base_sequence"].append(b.base_sequence)
        lost["partition_leader_epoch"].append(b.partition_leader_epoch)
        lost["transactional"].append(b.is_transactional)
        for r in b.records():
            lost["sequences"].append(r.sequence)
            if r.headers:
                lost["headers"].append((r.offset, [(h.key, h.value) for h in r.headers]))
            if to_magic == 0 and r.timestamp != NO_TIMESTAMP:
                lost["timestamps"].append((r.offset, r.timestamp))
    tr.add("what v2 carries that v0/v1 cannot", ", ".join(k for k, v in lost.items() if v), _S3,
           producer_ids=lost["producer_id"], sequences=lost["sequences"][:10])
    dc = down_convert(batches, to_magic, 0, trace=tr)
    return Downgrade(dc.records, to_magic, lost, tr)


def drop_producer_state(data: bytes) -> bytes:
    """Seed 003's safe-mode broker, first half of the downgrade: the same v2 batches without producer id,
    epoch and sequence (the broker then converts them to the topic's format as for any plain batch).

    "the 1.0.0 broker will automatically downgrade messages sent in safe mode from the 0.11.0 message
    format if the topic being written to is configured to use an older message format version" (seed 003,
    Design).  Kafka has no such path: it rejects the batch (``LogValidator.validateBatch``)."""
    out = []
    for batch in MemoryRecords(bytes(data)).batches():
        b = MemoryRecordsBuilder(batch.magic, batch.compression, batch.timestamp_type, batch.base_offset,
                                 timestamp_extended=batch.magic >= 2 and batch.is_timestamp_extended)
        for r in batch.records():
            b.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers)
        out.append(b.build())
    return b"".join(out)
