"""IncrementalAlterConfigs v0 in kafkafmt's own wire client (``kafkarig.client``): the request
body laid out field by field from Kafka's ``IncrementalAlterConfigsRequest.json`` (api key 44, v0, not
flexible), the response parsed from bytes laid out from ``IncrementalAlterConfigsResponse.json``, and the
same body as aiokafka's protocol schema encodes it (a peer implementation).  The live broker applying it
is checked by the ``alter/*`` conformance cases."""
from __future__ import annotations

import struct

import pytest

from kafkarig.cases import CaseError, load_file
from kafkarig.client import KafkaClient, Reader


def _str(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def test_request_body_is_the_v0_layout():
    body = KafkaClient.incremental_alter_configs_body(
        "t1", {"message.timestamp.type": "LogAppendTime", "message.format.version": None})
    want = (struct.pack(">i", 1)                            # resources: 1
            + struct.pack(">b", 2) + _str("t1")             # resource_type TOPIC, resource_name
            + struct.pack(">i", 2)                          # configs: 2 (sorted by name)
            + _str("message.format.version") + struct.pack(">b", 1) + _str(None)          # DELETE, null
            + _str("message.timestamp.type") + struct.pack(">b", 0) + _str("LogAppendTime")  # SET
            + struct.pack(">b", 0))                         # validate_only false
    assert body == want


def test_request_body_validate_only():
    body = KafkaClient.incremental_alter_configs_body("x", {"a": "1"}, validate_only=True)
    assert body[-1:] == b"\x01"


def test_response_parse():
    resp = (struct.pack(">i", 7)                            # throttle_time_ms
            + struct.pack(">i", 1)
            + struct.pack(">h", 40) + _str("bad value") + struct.pack(">b", 2) + _str("t1"))
    assert KafkaClient.parse_incremental_alter_configs_response(Reader(resp)) == [(40, "bad value", 2, "t1")]


def test_request_and_response_match_kafka_python():
    """kafka-python 3 generates its messages from the same Kafka JSON specs: a peer encoding."""
    from kafka.protocol.admin.configs import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
    peer = IncrementalAlterConfigsRequest(
        resources=[(2, "topic-a", [("message.format.version", 0, "0.9.0"), ("retention.ms", 1, None)])],
        validate_only=False)
    ours = KafkaClient.incremental_alter_configs_body("topic-a", {"message.format.version": "0.9.0",
                                                                  "retention.ms": None})
    assert peer.encode(version=0) == ours
    resp = IncrementalAlterConfigsResponse(throttle_time_ms=3, responses=[(0, None, 2, "topic-a")]).encode(version=0)
    assert KafkaClient.parse_incremental_alter_configs_response(Reader(resp)) == [(0, None, 2, "topic-a")]


def test_case_alter_steps_checked(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{"cases": [{"name": "a", "produce": [{"hex": ""}], '
                 '"alter": [{"beforeProduce": 2, "configs": {"x": "1"}}]}]}')
    with pytest.raises(CaseError, match="beforeProduce must be an int in 0..1"):
        load_file(p)
    p.write_text('{"cases": [{"name": "a", "topic": {"x": "0", "y": "0"}, "produce": [{"hex": ""}, {"hex": ""}], '
                 '"alter": [{"beforeProduce": 2, "configs": {"y": null}}, {"beforeProduce": 1, "configs": {"x": 1}}]}]}')
    (case,) = load_file(p)
    assert [case.topic_at(i) for i in (0, 1, 2, None)] == [
        {"x": "0", "y": "0"}, {"x": "1", "y": "0"}, {"x": "1"}, {"x": "1"}]
