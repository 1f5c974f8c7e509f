"""``kafkafmt scenario run FILE --live`` on real brokers and clients: the seeds' scenarios, hop by hop.

The CLI runs in a subprocess that finds the rig's live runner as an installed checkout would: through the
entry point ``conformance/pyproject.toml`` declares (a ``.dist-info`` written from that file on the
subprocess's path, so the test runs whether or not ``pip install -e conformance/`` was done).  One run per
scenario.  Where the model and the release disagree, the measured disagreement is asserted as it is, and the
step's agreement is a strict xfail naming why the model is wrong (the release is right).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from old_release_fixtures import releases_or_skip

pytestmark = [pytest.mark.java, pytest.mark.broker]

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "kafkafmt" / "scenarios" / "data"

#: KAFKA-6238: until 1.0.1 a broker compared log.message.format.version with the IBP in ApiVersion order
FORMAT_ABOVE_IBP = (
    "the model is wrong: Kafka 0.10.0.1 refuses to start with log.message.format.version 0.10.0 (0.10.0-IV1) "
    "under inter.broker.protocol.version 0.10.0-IV0 (the seed's ApiVersion 0.9.0-1): its KafkaConfig requires "
    "interBrokerProtocolVersion >= logMessageFormatVersion in ApiVersion order until KAFKA-6238 (1.0.1, 1.1.0 "
    "compare record versions, as 3.9 does); the model runs 3.9's check and bounces the broker")
REFUSED_0_10_0 = ("Kafka 0.10.0.1 refused to start: log.message.format.version 0.10.0 cannot be used when "
                  "inter.broker.protocol.version is set to 0.10.0-IV0")


def rig_entry_point(root: Path) -> Path:
    """A ``kafkarig`` distribution's metadata holding the entry points ``conformance/pyproject.toml`` declares
    (its ``[project]`` name and version, its ``[project.entry-points."GROUP"]`` tables; tomllib is 3.11+)."""
    text = (REPO / "conformance" / "pyproject.toml").read_text()
    name, version = (re.search(rf'(?m)^{k} = "([^"]+)"', text).group(1) for k in ("name", "version"))
    eps = "".join(f"[{group}]\n{body.strip()}\n".replace('"', "")
                  for group, body in re.findall(r'(?ms)^\[project\.entry-points\."([^"]+)"\]\n(.*?)(?=^\[|\Z)', text))
    assert eps, "conformance/pyproject.toml declares no entry point"
    info = root / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
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
            cur["rows"].append((m.group(1) == "AGREE ", m.group(2), lines[i + 1].split("model: ", 1)[1],
                                lines[i + 2].split("real:  ", 1)[1]))
    return steps


_RUNS: dict[str, tuple] = {}


def live(name: str, tmp_path_factory, releases: tuple[str, ...]):
    """``kafkafmt scenario run <name> --live`` once per test session: (process, parsed steps)."""
    if name not in _RUNS:
        for v in releases:
            releases_or_skip(v)
        path = rig_entry_point(tmp_path_factory.mktemp("rig-entry-point"))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "conformance"), str(path)])}
        p = subprocess.run([sys.executable, "-m", "kafkafmt", "scenario", "run", str(DATA / f"{name}.yaml"), "--live"],
                           env=env, capture_output=True, text=True, timeout=280, cwd=REPO)
        _RUNS[name] = (p, parse(p.stdout))
    return _RUNS[name]


def differ(steps, n: int) -> list[tuple[str, str, str]]:
    return [(w, m, r) for agree, w, m, r in steps[n]["rows"] if not agree]


# --------------------------------------------------------------------------- seed 000: the rolling upgrade
@pytest.fixture(scope="module")
def upgrade(tmp_path_factory):
    return live("seed000-rolling-upgrade", tmp_path_factory, ("0.9.0.1", "0.10.0.1"))


def test_upgrade_runs_live_until_the_release_refuses_phase_2_1(upgrade):
    p, steps = upgrade
    assert p.stderr == ""
    assert sorted(steps) == list(range(1, 12)), p.stdout[-3000:]
    assert "not run live (a release refused an earlier step): 12. phase 2.2.1: " in p.stdout
    assert "(A 0.9.0.1→0.10.0.1, B 0.9.0.1→0.10.0.1, C 0.9.0.1→0.10.0.1; " in p.stdout.splitlines()[-1]
    assert p.returncode == 1


@pytest.mark.parametrize("step", range(1, 11))
def test_upgrade_phase_1_every_replica_client_and_fetch_agrees(upgrade, step):
    p, steps = upgrade
    rows = steps[step]["rows"]
    assert rows and differ(steps, step) == [], differ(steps, step)
    assert any(what.startswith("replica ") for _, what, *_ in rows)


def test_upgrade_compares_followers_clients_and_fetches(upgrade):
    p, steps = upgrade
    whats = [what for s in steps.values() for _, what, *_ in s["rows"]]
    assert "replica C p0" in whats
    assert any(w.startswith("c-new (kafka-clients 0.10.0.1) reads p0") for w in whats)
    assert any(w.startswith("Fetch v1 p0 from 0: the bytes returned by A") for w in whats)
    assert any(w.startswith("p-new (kafka-clients 0.10.0.1) → p0") for w in whats)


# --------------------------------------------------------------------------- seed 000: the trial and rollback
@pytest.fixture(scope="module")
def rollback(tmp_path_factory):
    return live("seed000-trial-rollback", tmp_path_factory, ("0.10.0.1",))


def test_rollback_runs_live_until_the_release_refuses_trial_1(rollback):
    p, steps = rollback
    assert sorted(steps) == [1] and p.returncode == 1


#: (scenario fixture, step, broker) where the first format bump meets KAFKA-6238's absence
REFUSALS = [("upgrade", 11, "A"), ("rollback", 1, "B")]


@pytest.mark.parametrize("run,step,broker", REFUSALS)
def test_the_release_refuses_the_format_bump_the_model_bounces(request, run, step, broker):
    p, steps = request.getfixturevalue(run)
    assert [(w, r) for w, _m, r in differ(steps, step)] == [(f"broker {broker} bounced", REFUSED_0_10_0)]


@pytest.mark.xfail(strict=True, reason=FORMAT_ABOVE_IBP)
@pytest.mark.parametrize("run,step,broker", REFUSALS)
def test_the_format_bump_agrees(request, run, step, broker):
    p, steps = request.getfixturevalue(run)
    assert differ(steps, step) == []


# --------------------------------------------------------------------------- seed 004: the migration plan
@pytest.fixture(scope="module")
def migration(tmp_path_factory):
    return live("seed004-migration", tmp_path_factory, ("0.9.0.1", "0.10.0.1", "0.10.1.1"))


#: step → the rows where the model is wrong (what, and why), as measured
MIGRATION_DISAGREEMENTS = {
    5: ("Fetch v1 p0 from 0: the bytes returned by A",
        "0.10.0.1 down-converts a v1 fetch for a 0.9 consumer into ONE gzip message set (151 bytes: "
        "FileMessageSet.toMessageFormat puts every inner message into one ByteBufferMessageSet with the first entry's codec); "
        "the model (3.9's lazy conversion) converts batch by batch (304 bytes); the records read agree"),
    10: ("c-v0 (kafka-clients 0.9.0.1) reads p0 from 0 via A",
         "after the format went back to 0.9.0 the 0.10.1.1 leader sends v1 zero-copy to a 0.9.0.1 Java consumer, "
         "which gets NO record and no exception (its Fetcher's KafkaException is caught and logged by "
         "NetworkClient.poll, the response dropped and refetched); the model's consumer_view reads offsets 0-1 "
         "then raises KafkaException"),
}


def test_migration_runs_every_step_live(migration):
    p, steps = migration
    assert p.stderr == ""
    assert sorted(steps) == list(range(1, 11)), p.stdout[-3000:]
    assert p.returncode == 1


@pytest.mark.parametrize("step", [s for s in range(1, 11) if s not in MIGRATION_DISAGREEMENTS])
def test_migration_step_agrees(migration, step):
    p, steps = migration
    assert steps[step]["rows"] and differ(steps, step) == [], differ(steps, step)


@pytest.mark.parametrize("step", sorted(MIGRATION_DISAGREEMENTS))
def test_migration_disagreement_is_where_it_was_measured(migration, step):
    p, steps = migration
    assert [w for w, _m, _r in differ(steps, step)] == [MIGRATION_DISAGREEMENTS[step][0]]


@pytest.mark.parametrize("step", [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=why))
                                  for s, (_w, why) in sorted(MIGRATION_DISAGREEMENTS.items())])
def test_migration_step_with_a_known_disagreement_agrees(migration, step):
    p, steps = migration
    assert differ(steps, step) == []
