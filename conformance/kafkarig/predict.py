"""kafkafmt's side of a differential case: what kafkafmt's produce and fetch paths make of the case's
requests, and how kafkafmt reads the broker's log (in the Kafka oracle's field names).

The topic is configured as the broker configures it: the profile's broker settings (IBP, ``log.*``
defaults, the test broker's segment sizes) under the case's topic overrides, in one ``LogConfig``.
"""
from __future__ import annotations

from pathlib import Path

from kafkafmt.broker.fetch import fetch as kafkafmt_fetch
from kafkafmt.broker.validator import validate_messages_and_assign_offsets
from kafkafmt.errors import KafkaFmtError
from kafkafmt.records import MemoryRecords

from .broker import BASE_BROKER_CONFIG, PROFILES
from .cases import Case, error_code
from .results import CaseResult, FetchStep, ProduceStep

#: the test broker's own log settings (every profile's): its segment and index sizes
_BROKER_LOG_DEFAULTS = {k: BASE_BROKER_CONFIG[k] for k in ("log.segment.bytes", "log.index.size.max.bytes")}


def segment_files(d: Path, suffix: str) -> list[Path]:
    """A partition directory's files of one kind (``.log``, ``.index``, ``.timeindex``) in offset order."""
    return sorted(d.glob(f"*{suffix}"), key=lambda p: p.name)


def read_log(snapshot: Path) -> bytes:
    """The partition's record bytes: its ``.log`` segments in offset order."""
    return b"".join(p.read_bytes() for p in segment_files(snapshot, ".log"))


def topic_config(case: Case, before_produce: int | None = None):
    """The case's topic as kafkafmt configures it: the profile's broker settings (IBP, ``log.*``
    defaults, the broker's segment sizes) under the case's topic overrides, in one LogConfig.
    ``before_produce``: the configs in force at that produce request (the case's ``alter`` steps up
    to it applied); ``None``: after every alter (what the fetches see)."""
    return log_config(case, case.topic_at(before_produce))


def log_config(case: Case, topic_props: dict):
    """``topic_props`` on the case's broker profile, as one kafkafmt ``LogConfig``."""
    from kafkafmt.config import BrokerConfig, LogConfig
    prof = PROFILES.get(case.broker, {})
    broker_props = {"inter.broker.protocol.version": prof.get("inter.broker.protocol.version", "3.9"),
                    **{k: v for k, v in prof.items() if k.startswith("log.")},
                    **_BROKER_LOG_DEFAULTS}
    return LogConfig.from_properties(topic_props, broker=BrokerConfig.from_properties(broker_props))


def _kafkafmt_error_code(e: BaseException) -> int:
    code = getattr(e, "error_code", None)
    return -1 if code is None else int(code)


def predict_produce(case: Case, steps: list[ProduceStep]) -> tuple[list[int], list[bytes], list[str]]:
    """kafkafmt's produce path for each request: (error codes, validated bytes of the successes, notes)."""
    offset = 0
    codes, outs, notes = [], [], []
    for st in steps:
        cfg = topic_config(case, st.index)
        now = st.lat if st.lat is not None else st.wall_now
        try:
            res = validate_messages_and_assign_offsets(
                st.data, cfg, offset=offset, now=now, origin="CLIENT", partition_leader_epoch=0,
                produce_version=st.version, topic=case.topic_name)
        except KafkaFmtError as e:
            codes.append(_kafkafmt_error_code(e))
            notes.append(f"request {st.index}: kafkafmt {type(e).__name__}: {e}")
            continue
        validated = bytes(res.records)
        codes.append(0)
        outs.append(validated)
        offset = res.next_offset
    return codes, outs, notes


def predict_fetch(case: Case, res: CaseResult, fs: FetchStep, log_files: list[Path]):
    """kafkafmt's fetch path (``kafkafmt.broker.fetch.fetch``) over the broker's own segment file that
    holds the fetch offset (a fetch reads one segment) -> (error code, bytes on the wire)."""
    seg = log_files[0] if log_files else None
    for f in log_files:
        if int(f.name.split(".")[0]) <= fs.offset:
            seg = f
    data = seg.read_bytes() if seg is not None else b""
    cfg = topic_config(case)  # after every alter: the fetches come last
    max_bytes = int(fs.spec.get("partitionMaxBytes", fs.spec.get("maxBytes", 1 << 20)))
    r = kafkafmt_fetch(data, topic_config=cfg, fetch_version=fs.version, fetch_offset=fs.offset, max_bytes=max_bytes)
    code = 0 if not r.error else error_code(r.error)
    return code, r.wire_records


def kafkafmt_read(log: bytes) -> list[dict]:
    """kafkafmt's reading of a record set, in the oracle ``read`` op's field names."""
    out = []
    for b in MemoryRecords(log).batches():
        recs = []
        for r in b.records():
            recs.append({"offset": r.offset, "timestamp": r.timestamp, "sequence": r.sequence,
                         "key": None if r.key is None else bytes(r.key).hex(),
                         "value": None if r.value is None else bytes(r.value).hex(),
                         "headers": [{"key": h.key, "value": None if h.value is None else bytes(h.value).hex()}
                                     for h in r.headers]})
        out.append({"magic": b.magic, "sizeInBytes": b.size_in_bytes, "isValid": b.is_valid(),
                    "checksum": b.checksum, "compression": b.compression.kafka_name,
                    "timestampType": b.timestamp_type.kafka_name, "maxTimestamp": b.max_timestamp,
                    "baseOffset": b.base_offset, "lastOffset": b.last_offset, "count": b.count,
                    "producerId": b.producer_id, "producerEpoch": b.producer_epoch,
                    "baseSequence": b.base_sequence, "lastSequence": b.last_sequence,
                    "partitionLeaderEpoch": b.partition_leader_epoch, "isTransactional": b.is_transactional,
                    "isControlBatch": b.is_control, "records": recs})
    return out
