"""Compressed produce on old brokers: the bytes a release's leader stores against kafkafmt's prediction.

kafka-python's own encoder (``kafka.record.legacy_records.LegacyRecordBatchBuilder``: magic 0 for its
``api_version=(0, 9)``, magic 1 for ``(0, 10)``; the wrapper offset 0 over inner offsets 0..n-1; gzip at level
9, lz4 framed by python-lz4, snappy by python-snappy/cramjam) writes a message set, the rig's raw client sends
it as the release's Produce version, and the bytes the leader appended to its segment are compared with
:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets` configured as the release's line.
A 0.9 leader rebuilds every compressed v0 set (offsets to assign); a 0.10.0 or 0.10.1 leader rebuilds
kafka-python's v1 sets too (row ``produce.legacy_inner_offsets_base``), with its own codecs (rows
``codec.*``), which is where the bytes of lz4-java's liblz4 r100 and r123 show.

Each case's payload is one of :data:`PAYLOADS`: three short records, and records chosen (by their seed)
so that liblz4 r100 or r123 compress the rebuilt message set otherwise than liblz4 1.10.
"""
from __future__ import annotations

import random

from kafkafmt.broker.fetch import fetch as model_fetch
from kafkafmt.broker.validator import validate_messages_and_assign_offsets
from kafkafmt.errors import KafkaFmtError

from .history import TS_BASE, hexdiff, model_config
from .oldcluster import OldCluster
from .releases import release

__all__ = ["CASES", "CODECS", "PAYLOADS", "RELEASES", "check_names", "kafka_python_message_set", "run_all", "run_codecs_live"]

#: kafka-python's codec ids (LegacyRecordBatchBuilder.CODEC_*)
CODECS = {"gzip": 1, "snappy": 2, "lz4": 3}


def _short() -> list[tuple[int, bytes, bytes]]:
    return [(TS_BASE + i, b"k%d" % i, b"value-%d" % i) for i in range(3)]


def _seeded(seed: int, n: int) -> list[tuple[int, bytes, bytes]]:
    r = random.Random(seed)
    return [(TS_BASE + i, b"k%d" % i, r.randbytes(r.randrange(0, 6)) + b"value-%d" % r.randrange(1000)
             + bytes(r.randrange(0, 3))) for i in range(n)]


#: payload name → (timestamp, key, value) records: ``seed158`` is rebuilt by liblz4 r123 in 298 bytes of
#: lz4 frame and by liblz4 1.10 in 293 (magic 1)
PAYLOADS = {"short": _short(), "seed158": _seeded(158, 8), "seed200": _seeded(200, 16)}


def kafka_python_message_set(magic: int, codec: str, records) -> bytes:
    """The message set kafka-python writes for ``records`` (its LegacyRecordBatchBuilder)."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    b = LegacyRecordBatchBuilder(magic=magic, compression_type=CODECS[codec], batch_size=1 << 20)
    for i, (ts, key, value) in enumerate(records):
        b.append(i, timestamp=None if magic == 0 else ts, key=key, value=value)
    return bytes(b.build())


#: (the topic's compression.type or None, kafka-python's codec, payloads): a topic of the producer's codec, and
#: topics whose codec differs from the producer's, so every release rebuilds (and, from 0.11, converts to v2)
CASES = tuple((None, c, ("short", "seed158", "seed200")) for c in CODECS) + (
    ("lz4", "gzip", ("seed158", "seed200")), ("snappy", "gzip", ("seed200",)), ("gzip", "lz4", ("seed200",)))
#: the releases :func:`run_all` runs: each lz4-java of 0.9 … 2.1 (1.2.0, 1.3.0, 1.4.1, 1.5.0)
RELEASES = ("0.9.0.1", "0.10.0.1", "0.10.1.1", "0.10.2.2", "2.0.1", "2.1.1")


def _fetched(topic_codec: str | None, codec: str) -> bool:
    """Whether a case's partition is also fetched as message format v0 (the stored codec gzip or lz4: a
    down-conversion rebuilds it with the release's codecs; snappy-java's encoder is not kafkafmt's)."""
    return (topic_codec or codec) in ("gzip", "lz4")


def check_names(rel=None) -> list[str]:
    """The names of the checks :func:`run_codecs_live` makes on a release (of ``rel``), in order: each case's
    produce, then, from 0.10.0 on, its Fetch v1 (message format v0: down-converted)."""
    out = []
    for topic_codec, codec, names in CASES:
        for name in names:
            out.append(f"{topic_codec or 'producer'}/{codec}/{name}")
            if (rel is None or rel.max_magic >= 1) and _fetched(topic_codec, codec):
                out.append(f"fetch-v1/{topic_codec or 'producer'}/{codec}/{name}")
    return out


def _case(cluster, broker, rel, topic_codec, codec, name) -> list[dict]:
    magic = min(rel.max_magic, 1)
    produce_version = 0 if magic == 0 else 2
    topic = f"codec-{topic_codec or 'producer'}-{codec}-{name}"
    configs = {"compression.type": topic_codec} if topic_codec else None
    cluster.create_topic(topic, configs=configs)
    data = kafka_python_message_set(magic, codec, PAYLOADS[name])
    seg = broker.segment(topic)
    with broker.client() as c:
        res = c.produce_retrying(topic, 0, data, version=produce_version, acks=-1)
    real = seg.read_bytes()
    try:
        m = validate_messages_and_assign_offsets(data, model_config(rel, topic_configs=configs), offset=0,
                                                 produce_version=produce_version)
        expected, path = bytes(m.records), m.path
    except KafkaFmtError as e:
        expected, path = b"", f"{type(e).__name__}: {e}"
    checks = [{"release": rel.version, "check": f"{topic_codec or 'producer'}/{codec}/{name}", "sent": data.hex(),
               "error_code": res.error_code, "expected": expected.hex(), "real": real.hex(), "path": path,
               "agree": res.error_code == 0 and expected == real, "detail": hexdiff(expected, real)}]
    if rel.max_magic >= 1 and _fetched(topic_codec, codec):
        checks.append({"release": rel.version, "check": f"fetch-v1/{checks[0]['check']}",
                       **_fetch_v1(broker, rel, topic, configs)})
    return checks


def _fetch_v1(broker, rel, topic: str, configs) -> dict:
    """The partition fetched with Fetch v1 (message format v0) from offset 0, against the model's answer from the
    segment's bytes (:func:`kafkarig.history.fetch_check`'s comparison; the values here are not text)."""
    seg = broker.segment(topic).read_bytes()
    with broker.client() as c:
        res = c.fetch(topic, 0, 0, version=1)
    m = model_fetch(seg, topic_config=model_config(rel, topic_configs=configs), fetch_version=1, fetch_offset=0)
    expected = b"" if m.error else bytes(m.wire_records if not m.zero_copy else m.records)
    real = b"" if res.error_code else (res.records or b"")
    agree = (m.error or "NONE") == res.error and expected == real
    return {"error_code": res.error_code, "expected": expected.hex(), "real": real.hex(),
            "path": "zero-copy" if m.zero_copy else f"down-converted to v{m.to_magic}", "agree": agree,
            "detail": hexdiff(expected, real)}


def run_codecs_live(version: str = "0.10.0.1") -> list[dict]:
    """Every case of :data:`CASES` on a lone broker of ``version``: kafka-python's message set of the newest
    magic it takes (at most 1) produced to a topic of its own; the stored bytes against the model's."""
    rel = release(version)
    with OldCluster(version) as cluster:
        broker = cluster.add_broker(1, version)
        return [c for topic_codec, codec, names in CASES for name in names
                for c in _case(cluster, broker, rel, topic_codec, codec, name)]


def run_all() -> dict:
    """:func:`run_codecs_live` of every release of :data:`RELEASES`, one after the other."""
    return {"checks": [c for v in RELEASES for c in run_codecs_live(v)]}
