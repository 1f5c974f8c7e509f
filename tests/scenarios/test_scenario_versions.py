"""The request versions the cluster model uses: the replica FetchRequest version of every
inter.broker.protocol.version checked against Kafka 3.9.2's own MetadataVersion (jshell over the oracle's jars)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from ci_mode import skip_or_fail
from kafkafmt.scenarios.versions import (
    client_api_versions,
    magic_for_produce_version,
    normalize_api_version,
    replica_fetch_version,
)
from kafkarig.oracle import LIB_DIR, oracle_missing_reason

_JSH = """import org.apache.kafka.server.common.MetadataVersion;
for (MetadataVersion v : MetadataVersion.VERSIONS) { System.out.println("MV " + v.version() + " " + v.fetchRequestVersion()); }
/exit
"""


@pytest.mark.java
def test_replica_fetch_version_matches_kafka_for_every_metadata_version(tmp_path):
    reason = oracle_missing_reason() or (None if shutil.which("jshell") else "jshell (JDK 17) is not on PATH")
    if reason:
        skip_or_fail(reason)
    script = tmp_path / "mv.jsh"
    script.write_text(_JSH)
    cp = ":".join(str(p) for p in sorted(LIB_DIR.glob("*.jar")))
    out = subprocess.run(["jshell", "--class-path", cp, str(script)], capture_output=True, text=True, timeout=240,
                         env={"PATH": __import__("os").environ["PATH"], "HOME": str(tmp_path)})
    kafka = {line.split()[1]: int(line.split()[2]) for line in out.stdout.splitlines() if line.startswith("MV ")}
    assert len(kafka) > 50, out.stdout + out.stderr
    for version, fetch_version in kafka.items():
        assert replica_fetch_version(version) == fetch_version, version


def test_seed_api_version_alias_and_request_versions():
    """Seed 000: "Create internal ApiVersion 0.9.0-1 ** which uses ProducerRequest V2 and FetchRequest V2."."""
    assert normalize_api_version("0.9.0-1") == "0.10.0-IV0"
    assert replica_fetch_version("0.9.0-1") == 2 and replica_fetch_version("0.9.0") == 1
    assert client_api_versions("0.9.0") == (1, 1) and client_api_versions("0.10.0") == (2, 2)
    assert [magic_for_produce_version(v) for v in (0, 1, 2, 3, 11)] == [0, 0, 1, 2, 2]


def test_each_broker_runs_its_own_release_line():
    """A broker's ``version`` is its logs' ``BrokerConfig.kafka_line``: a 0.9 broker has no message.format.version
    (KIP-32 added it in 0.10.0) and writes v0; a 0.10.0 broker merges a down-conversion into one message set
    (row fetch.down_conversion_output), a 3.9 broker converts batch by batch."""
    from kafkafmt import kafka_lines
    from kafkafmt.scenarios.model import BrokerSpec, removed_properties, topic_config_for
    from kafkafmt.scenarios.versions import release_line

    assert [release_line(v) for v in ("0.9.0", "0.10.0-IV0", "0.9.0-1", "0.10.2.2", "1.0", "3.9", "4.4.0", "3.0")] == [
        "0.9", "0.10.0", "0.10.0", "0.10.2", "1.0", "3.9", "4.4", "2.8"]
    old = BrokerSpec("A", "0.9.0", {"message.format.version": "0.10.0", "inter.broker.protocol.version": "0.9.0"})
    assert removed_properties(old) == ["message.format.version"]
    cfg = topic_config_for(old)
    assert (cfg.broker.kafka_line, cfg.broker.inter_broker_protocol_version, cfg.to_magic) == ("0.9", "0.9.0", 0)
    lines = {v: topic_config_for(BrokerSpec("B", v, {"message.format.version": "0.10.0"})).broker.kafka_line
             for v in ("0.10.0", "3.9")}
    assert lines == {"0.10.0": "0.10.0", "3.9": "3.9"}
    assert [kafka_lines.value("fetch.down_conversion_output", x) for x in lines.values()] == ["merged", "per batch"]
