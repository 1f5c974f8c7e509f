"""The audit's mixed sample: v0, v1 and v2 segments, compressed and not, one topic compacted, written by
``kafkafmt gen``'s generator (the broker's produce path, message.format.version changed half way).

The broker's cleaner is off (``log.cleaner.enable=false``): the audit must meet v0/v1 data in a compacted
topic, which a cleaner running during generation would have removed for every key updated since."""
from __future__ import annotations

from kafkafmt.gen.generator import generate_logs
from kafkafmt.gen.workload_file import parse_workload

V0_V1_V2 = [{"from_ms": 0, "magic": 0}, {"from_ms": 20000, "magic": 1}, {"from_ms": 40000, "magic": 2}]
V1_V2 = [{"from_ms": 0, "magic": 1}, {"from_ms": 30000, "magic": 2}]
START_MS = 1700000000000
MIXED = {
    "name": "audit-mixed", "seed": 11, "start_ms": START_MS, "duration_ms": 60000,
    "broker": {"inter.broker.protocol.version": "2.8", "log.retention.check.interval.ms": 10000,
               "log.cleaner.enable": "false"},
    "topics": [
        {"name": "accounts", "partitions": 2,
         "config": {"cleanup.policy": "compact", "message.format.version": "0.9.0", "segment.bytes": 8192},
         "changes": [{"at_ms": 20000, "config": {"message.format.version": "0.10.2"}},
                     {"at_ms": 40000, "config": {"message.format.version": "3.0"}}],
         "producers": [
             {"name": "batchy", "rate": 20, "batch_records": [3, 6], "keys": 40, "value_bytes": [10, 40],
              "codec": "gzip", "magic": V0_V1_V2},
             {"name": "plain", "rate": 8, "keys": 40, "value_bytes": [10, 40], "magic": V0_V1_V2}]},
        {"name": "clicks", "partitions": 1,
         "config": {"message.format.version": "0.10.2", "segment.bytes": 8192, "retention.ms": 3600000,
                    "message.timestamp.type": "LogAppendTime"},
         "changes": [{"at_ms": 30000, "config": {"message.format.version": "3.0"}}],
         "producers": [
             {"name": "web", "rate": 20, "batch_records": [2, 5], "keys": 0, "codec": "snappy", "magic": V1_V2},
             {"name": "raw", "rate": 5, "keys": 0, "magic": V1_V2}]},
        {"name": "modern", "partitions": 1, "config": {"segment.bytes": 16384},
         "producers": [{"name": "svc", "rate": 20, "batch_records": [1, 8], "keys": 0, "codec": "lz4"}]},
    ]}


def make_mixed(out):
    """Generate the sample into ``out`` (a new directory); returns the manifest."""
    return generate_logs(parse_workload(MIXED), out, jobs=1, progress=False)
