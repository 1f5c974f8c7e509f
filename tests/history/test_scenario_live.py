"""``kafkafmt scenario run FILE --live`` on real brokers and clients: seed 000's rolling upgrade, hop by hop.

The CLI runs in a subprocess that finds the rig's live runner as an installed copy of the checkout would:
through the entry point ``conformance/pyproject.toml`` declares (a ``.dist-info`` written from that file on
the subprocess's path, so the test runs whether or not ``pip install -e conformance/`` was done).  One run
per module: three brokers (0.9.0.1, then 0.10.0.1's jars swapped in), ZooKeeper, the 0.9 and 0.10 Java clients.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from old_release_fixtures import releases_or_skip

pytestmark = [pytest.mark.java, pytest.mark.broker]

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "kafkafmt" / "scenarios" / "data" / "seed000-rolling-upgrade.yaml"
#: the steps the release refuses: step → the rows that differ (model beside release, as measured)
REFUSED = {
    11: ("broker A bounced", "Kafka 0.10.0.1 refused to start: log.message.format.version 0.10.0 cannot be used when "
                             "inter.broker.protocol.version is set to 0.10.0-IV0"),
}


def rig_entry_point(root: Path) -> Path:
    """A ``kafkarig`` distribution's metadata holding exactly the entry points ``conformance/pyproject.toml`` declares."""
    project = tomllib.loads((REPO / "conformance" / "pyproject.toml").read_text())["project"]
    info = root / f"{project['name']}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    eps = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items())
                  for group, entries in project["entry-points"].items())
    (info / "entry_points.txt").write_text(eps)
    return root


def parse(out: str) -> dict[int, dict]:
    """The printed run: step number → {"name", "rows": [(agree, what, model, real)]}."""
    steps: dict[int, dict] = {}
    cur = None
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\d+)\. (.*)$", line)
        if m:
            cur = steps.setdefault(int(m.group(1)), {"name": m.group(2), "rows": []})
        m = re.match(r"^   (AGREE |DIFFER) (.*)$", line)
        if m and cur is not None:
            model = lines[i + 1].split("model: ", 1)[1]
            real = lines[i + 2].split("real:  ", 1)[1]
            cur["rows"].append((m.group(1) == "AGREE ", m.group(2), model, real))
    return steps


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory):
    for v in ("0.9.0.1", "0.10.0.1"):
        releases_or_skip(v)
    path = rig_entry_point(tmp_path_factory.mktemp("rig-entry-point"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "conformance"), str(path)])}
    p = subprocess.run([sys.executable, "-m", "kafkafmt", "scenario", "run", str(SCENARIO), "--live"], env=env,
                       capture_output=True, text=True, timeout=280, cwd=REPO)
    return p, parse(p.stdout)


def test_each_step_runs_live_until_the_release_refuses_one(upgrade):
    p, steps = upgrade
    assert p.stderr == ""
    assert sorted(steps) == list(range(1, 12)), p.stdout[-3000:]
    assert "not run live (a release refused an earlier step): 12. phase 2.2.1: " in p.stdout
    assert p.returncode == 1


@pytest.mark.parametrize("step", range(1, 11))
def test_before_phase_2_every_replica_client_and_fetch_agrees(upgrade, step):
    p, steps = upgrade
    rows = steps[step]["rows"]
    assert rows and all(agree for agree, *_ in rows), "\n".join(map(str, rows))
    assert any(what.startswith("replica ") for _, what, *_ in rows)


def test_the_replicas_and_clients_are_compared_byte_for_byte(upgrade):
    p, steps = upgrade
    whats = [what for s in steps.values() for _, what, *_ in s["rows"]]
    assert "replica C p0" in whats  # followers: the same bytes as the model's replica
    assert any(w.startswith("c-new (kafka-clients 0.10.0.1) reads p0") for w in whats)
    assert any(w.startswith("Fetch v1 p0 from 0: the bytes returned by A") for w in whats)
    assert any(w.startswith("p-new (kafka-clients 0.10.0.1) → p0") for w in whats)


def test_phase_2_1_the_release_refuses_what_the_model_bounces(upgrade):
    p, steps = upgrade
    assert [(w, r) for agree, w, _m, r in steps[11]["rows"] if not agree] == [REFUSED[11]]


@pytest.mark.xfail(strict=True, reason="the model is wrong: Kafka 0.10.0.1 refuses to start with "
                   "log.message.format.version 0.10.0 under inter.broker.protocol.version 0.10.0-IV0 (the seed's "
                   "ApiVersion 0.9.0-1): KafkaConfig requires interBrokerProtocolVersion >= logMessageFormatVersion in "
                   "ApiVersion order until KAFKA-6238 (1.0.1 and 1.1.0 compare record versions, as 3.9 does); the "
                   "model runs 3.9's check and bounces the broker")
def test_phase_2_1_agrees(upgrade):
    p, steps = upgrade
    assert all(agree for agree, *_ in steps[11]["rows"])
