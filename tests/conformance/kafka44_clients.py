"""Real clients reading one partition from the beginning, each answer as (offset, timestamp, timestamp type,
key, value) tuples in kafkafmt's terms (-1 / NoTimestampType where a client says "no timestamp"), or the
exception a client raised.  Used by test_kafka44_broker.py; ``python kafka44_clients.py aiokafka HOST:PORT
TOPIC N`` runs the aiokafka reader in a fresh process (so ``AIOKAFKA_NO_EXTENSIONS`` can pick its reader).
"""
from __future__ import annotations

import asyncio
import json
import sys
import time

_TS_TYPES = {None: "NoTimestampType", -1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}


def _row(offset, ts, ts_type, key, value):
    if ts is None:
        ts = -1
    return (offset, ts, ts_type, key, value)


def kafka_python(bootstrap: str, topic: str, n: int, timeout: float = 10.0, **kw) -> list:
    from kafka import KafkaConsumer, TopicPartition
    tp = TopicPartition(topic, 0)
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                      consumer_timeout_ms=int(timeout * 1000), **kw)
    try:
        c.assign([tp])
        c.seek(tp, 0)
        out = []
        for m in c:
            out.append(_row(m.offset, m.timestamp, _TS_TYPES[m.timestamp_type], m.key, m.value))
            if len(out) >= n:
                break
        return out
    finally:
        c.close()


def confluent(bootstrap: str, topic: str, n: int, timeout: float = 15.0) -> list:
    from confluent_kafka import (
        TIMESTAMP_CREATE_TIME,
        TIMESTAMP_LOG_APPEND_TIME,
        TIMESTAMP_NOT_AVAILABLE,
        Consumer,
        TopicPartition,
    )
    types = {TIMESTAMP_NOT_AVAILABLE: "NoTimestampType", TIMESTAMP_CREATE_TIME: "CreateTime",
             TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime"}
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafkafmt-kafka44", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "log_level": 0})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        out, deadline = [], time.monotonic() + timeout
        while len(out) < n and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                raise RuntimeError(str(m.error()))
            t, ts = m.timestamp()
            out.append(_row(m.offset(), -1 if t == TIMESTAMP_NOT_AVAILABLE else ts, types[t], m.key(), m.value()))
        return out
    finally:
        c.close()


def aiokafka(bootstrap: str, topic: str, n: int, timeout: float = 10.0) -> list:
    async def run():
        from aiokafka import AIOKafkaConsumer, TopicPartition
        tp = TopicPartition(topic, 0)
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest")
        await c.start()
        try:
            c.assign([tp])
            c.seek(tp, 0)
            out, deadline = [], time.monotonic() + timeout
            while len(out) < n and time.monotonic() < deadline:
                got = await c.getmany(tp, timeout_ms=1000)
                for m in got.get(tp, []):
                    out.append(_row(m.offset, m.timestamp, _TS_TYPES[m.timestamp_type], m.key, m.value))
            return out
        finally:
            await c.stop()
    return asyncio.run(run())


def _hexed(rows):
    return [[o, t, tt, None if k is None else k.hex(), None if v is None else v.hex()] for o, t, tt, k, v in rows]


if __name__ == "__main__":  # python kafka44_clients.py aiokafka HOST:PORT TOPIC N
    name, bootstrap, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    try:
        print(json.dumps({"rows": _hexed(globals()[name](bootstrap, topic, n))}))
    except Exception as e:  # the finding is the exception itself
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
