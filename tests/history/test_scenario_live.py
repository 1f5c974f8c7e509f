"""``kafkafmt scenario run FILE --live`` on real brokers and clients: the seeds' scenarios, hop by hop.

The CLI runs in a subprocess that finds the rig's live runner as an installed checkout would: through the
entry point ``conformance/pyproject.toml`` declares (a ``.dist-info`` written from that file on the
subprocess's path, so the test runs whether or not ``pip install -e conformance/`` was done).  One run per
scenario, started when the session begins, beside the tests before it (a live job of tests/head_start.py).
Where the model and a release disagree, the release is right and the model is fixed: every step run here
agrees, and a step that does not is a failure, shown model beside release.

Seed 000's own plans stop where Kafka 0.10.0.1 refuses to start a broker with log.message.format.version
0.10.0 under the seed's ApiVersion 0.9.0-1 (0.10.0-IV0; KafkaConfig before KAFKA-6238): the model refuses it
with the release's words, and both stop there.  The same plans with ApiVersion 0.10.0 (0.10.0-IV1, the
``-ibp-0.10.0`` scenarios) run to their end and agree at every step.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

import head_start
from old_release_fixtures import live_job, releases_or_skip

pytestmark = [pytest.mark.java, pytest.mark.broker]

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "kafkafmt" / "scenarios" / "data"

#: KAFKA-6238: until 1.0.1 a broker compared log.message.format.version with the IBP in ApiVersion order
REASON_0_10_0 = ("log.message.format.version 0.10.0 cannot be used when inter.broker.protocol.version is set to "
                 "0.10.0-IV0")
REFUSED_0_10_0 = f"Kafka 0.10.0.1 refused to start: {REASON_0_10_0}"


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


#: a scenario run's limit (two or three brokers, every step; about 30-170 s here)
RUN_TIMEOUT = 600


def scenario_job(name: str, *, module: str, fixture: str, releases: tuple[str, ...], data: Path = DATA) -> None:
    """Register ``kafkafmt scenario run <name> --live`` (the scenario ``data/<name>.yaml``) as a live job of
    ``module``'s ``fixture`` (:func:`old_release_fixtures.live_job`): it starts when the session begins, beside the
    tests before it."""
    def commands(tmp: Path) -> list[list[str]]:
        return [[sys.executable, "-m", "kafkafmt", "scenario", "run", str(data / f"{name}.yaml"), "--live"]]

    def env(tmp: Path) -> dict[str, str]:
        entry = tmp / "rig-entry-point"
        if not entry.exists():
            rig_entry_point(entry)
        return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "conformance"), str(entry)])}

    live_job(name, module=module, fixture=fixture, releases=releases, commands=commands, env=env, timeout=RUN_TIMEOUT)


def live(name: str, releases: tuple[str, ...]):
    """The run of ``kafkafmt scenario run <name> --live`` (registered by :func:`scenario_job`): (process, parsed
    steps)."""
    for v in releases:
        releases_or_skip(v)
    p = head_start.result(name).last
    return p, parse(p.stdout)


#: fixture → (the scenario it runs live, the releases it names), in the order the tests ask for them
RUNS = {
    "upgrade": ("seed000-rolling-upgrade", ("0.9.0.1", "0.10.0.1")),
    "upgrade_ibp": ("seed000-rolling-upgrade-ibp-0.10.0", ("0.9.0.1", "0.10.0.1")),
    "rollback": ("seed000-trial-rollback", ("0.10.0.1",)),
    "rollback_ibp": ("seed000-trial-rollback-ibp-0.10.0", ("0.10.0.1",)),
    "migration": ("seed004-migration", ("0.9.0.1", "0.10.0.1", "0.10.1.1")),
    "lat_consumers": ("lat-consumers", ("0.9.0.1", "0.10.0.1", "0.10.1.1")),
}
#: scenarios of the tests alone (tests/history/data), not shipped with the package
TEST_SCENARIOS = {"lat-consumers"}
for _fixture, (_name, _releases) in RUNS.items():
    scenario_job(_name, module=__name__, fixture=_fixture, releases=_releases,
                 data=Path(__file__).parent / "data" if _name in TEST_SCENARIOS else DATA)


def differ(steps, n: int) -> list[tuple[str, str, str]]:
    return [(w, m, r) for agree, w, m, r in steps[n]["rows"] if not agree]


# --------------------------------------------------------------------------- seed 000: the rolling upgrade
@pytest.fixture(scope="module")
def upgrade():
    return live(*RUNS["upgrade"])


def test_upgrade_runs_live_until_the_release_refuses_phase_2_1_and_agrees(upgrade):
    p, steps = upgrade
    assert p.stderr == ""
    assert sorted(steps) == list(range(1, 12)), p.stdout[-3000:]
    assert "not run live (a broker refused to start at an earlier step): 12. phase 2.2.1: " in p.stdout
    assert "; 17. phase 2.2.2 with LogAppendTime: " in p.stdout
    last = p.stdout.splitlines()[-1]
    assert last.startswith("11 steps live (A 0.9.0.1→0.10.0.1, B 0.9.0.1→0.10.0.1, C 0.9.0.1→0.10.0.1; ")
    assert last.endswith(", 0 disagreement(s) between the model and the releases")
    assert p.returncode == 0, p.stdout[-3000:]


@pytest.mark.parametrize("run,step", [("upgrade", n) for n in range(1, 11)] + [("upgrade_ibp", n) for n in range(1, 18)])
def test_upgrade_every_replica_client_and_fetch_agrees(request, run, step):
    """Phase 1 of the seed's plan, and every step of the plan with ApiVersion 0.10.0: replicas compared at each
    step's end, byte for byte."""
    p, steps = request.getfixturevalue(run)
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
def rollback():
    return live(*RUNS["rollback"])


def test_rollback_runs_live_until_the_release_refuses_trial_1_and_agrees(rollback):
    p, steps = rollback
    assert p.stderr == ""
    assert sorted(steps) == [1], p.stdout[-3000:]
    assert "not run live (a broker refused to start at an earlier step): 2. trial 2: " in p.stdout
    assert p.returncode == 0, p.stdout[-3000:]


#: (scenario fixture, step, broker) where the first format bump meets KAFKA-6238's absence
REFUSALS = [("upgrade", 11, "A"), ("rollback", 1, "B")]


@pytest.mark.parametrize("run,step,broker", REFUSALS)
def test_the_release_refuses_the_format_bump_and_so_does_the_model(request, run, step, broker):
    """The step's last comparison is the refused bounce: the model's refusal (row ``broker.message_format_check``
    of the 0.10.0 line) beside the release's, word for word; the broker the model refused is the one the release
    refused, and no broker after it in the roll was bounced."""
    p, steps = request.getfixturevalue(run)
    assert differ(steps, step) == []
    bounced = [r for r in steps[step]["rows"] if r[1].startswith("broker ")]
    assert bounced == [(True, f"broker {broker} bounced", f"Kafka 0.10.0 refused to start: {REASON_0_10_0}",
                        REFUSED_0_10_0)]
    assert steps[step]["rows"][-1] == bounced[0]


def test_the_model_refuses_for_the_release_s_own_reason(upgrade):
    """The agreement is on the reason the release gives, not on the word "refused": the model's text and the
    release's differ only in naming the line (0.10.0) and the release (0.10.0.1) that refused."""
    p, steps = upgrade
    (_, _, model, real) = steps[11]["rows"][-1]
    assert model.split(": ", 1)[1] == real.split(": ", 1)[1] == REASON_0_10_0


# --------------------------------------------------------------------------- seed 000 with ApiVersion 0.10.0
@pytest.fixture(scope="module")
def upgrade_ibp():
    return live(*RUNS["upgrade_ibp"])


@pytest.fixture(scope="module")
def rollback_ibp():
    return live(*RUNS["rollback_ibp"])


@pytest.mark.parametrize("run,count", [("upgrade_ibp", 17), ("rollback_ibp", 6)])
def test_the_plan_with_api_version_0_10_0_runs_every_step_live_and_agrees(request, run, count):
    p, steps = request.getfixturevalue(run)
    assert p.stderr == ""
    assert sorted(steps) == list(range(1, count + 1)), p.stdout[-3000:]
    assert "not run live" not in p.stdout
    assert [(n, differ(steps, n)) for n in steps if differ(steps, n)] == []
    assert p.returncode == 0, p.stdout[-3000:]


def test_with_api_version_0_10_0_the_format_bump_starts_every_broker(upgrade_ibp):
    p, steps = upgrade_ibp
    bounced = [(w, r) for agree, w, _m, r in steps[11]["rows"] if w.startswith("broker ")]
    assert [w for w, _ in bounced] == ["broker A bounced", "broker B bounced", "broker C bounced"]
    assert all(r.startswith("Kafka 0.10.0.1 started, ") and "inter.broker.protocol.version=0.10.0," in r
               and "log.message.format.version=0.10.0" in r for _, r in bounced), bounced



def test_with_api_version_0_10_0_the_rollback_leaves_v0_on_b_byte_for_byte(rollback_ibp):
    p, steps = rollback_ibp
    disks = [r for r in steps[6]["rows"] if r[1].startswith("disk ")]
    assert [w for _, w, *_ in disks] == ["disk B p1 (.log)", "disk A p1 (.log)"]
    assert all(agree and "magic [0]" in real for agree, _w, _m, real in disks), disks


# --------------------------------------------------------------------------- seed 004: the migration plan
@pytest.fixture(scope="module")
def migration():
    return live(*RUNS["migration"])


def test_migration_runs_every_step_live_and_agrees(migration):
    p, steps = migration
    assert p.stderr == ""
    assert sorted(steps) == list(range(1, 11)), p.stdout[-3000:]
    assert p.returncode == 0, p.stdout[-3000:]


@pytest.mark.parametrize("step", range(1, 11))
def test_migration_step_agrees(migration, step):
    p, steps = migration
    assert steps[step]["rows"] and differ(steps, step) == [], differ(steps, step)


def test_a_0_10_0_broker_down_converts_the_whole_slice_into_one_message_set(migration):
    """Step 5: 0.10.0.1's FileMessageSet.toMessageFormat, one gzip v0 message set (the 3.9 rules: 304 bytes)."""
    p, steps = migration
    row = [r for r in steps[5]["rows"] if r[1] == "Fetch v1 p0 from 0: the bytes returned by A"]
    assert row and row[0][0] and row[0][3].startswith("151 bytes"), row


def test_the_0_9_java_consumer_stalls_on_v1_bytes_and_the_model_says_so(migration):
    """Step 10: no record, no error (0.9.0.1 Fetcher parses in the completion listener; NetworkClient logs): the
    client received the response, and its NetworkClient logged the exception the model names (the gzip v1 wrapper
    read with the v0 layout has a null value, which RecordsIterator decompresses)."""
    p, steps = migration
    row = [r for r in steps[10]["rows"] if r[1].startswith("c-v0 (kafka-clients 0.9.0.1) reads p0")]
    assert row and row[0][0], row
    assert row[0][2] == ("0 records [], stalls: no record, no error (only logged: NullPointerException: the gzip "
                         "wrapper's value read from a v1 entry is null (value length -1): ByteBufferInputStream.read "
                         "on a null buffer)")
    assert row[0][3].startswith("0 records [], stalls: no record, no error (only logged: "
                                "java.lang.NullPointerException"), row[0][3]


# --------------------------------------------------------------------------- a LogAppendTime topic's consumers
@pytest.fixture(scope="module")
def lat_consumers():
    return live(*RUNS["lat_consumers"])


def test_log_append_time_consumers_agree_without_the_broker_s_clock(lat_consumers):
    """Kafka 0.10.1.1 stamps its own clock on a LogAppendTime topic: each consumer row is compared by timestamp
    type, one time per wrapper, stamped between the produce and the read; the replica byte for byte with only
    the stamped times and their CRCs masked."""
    p, steps = lat_consumers
    assert p.stderr == "" and sorted(steps) == [1, 2], p.stdout[-3000:]
    assert differ(steps, 1) == [] and differ(steps, 2) == [], (differ(steps, 1), differ(steps, 2))
    reads = [r for r in steps[2]["rows"] if " reads p0 from 0 via A" in r[1]]
    assert [r[1].split(" (")[0] for r in reads] == ["c-v1", "c-0101"]
    assert all(r[1].endswith("(LogAppendTime: the broker's clock, compared as one time per wrapper or batch, "
                             "stamped between the produce and the read)") for r in reads), reads
    replicas = [r for s in (1, 2) for r in steps[s]["rows"] if r[1].startswith("replica A p0")]
    assert replicas and all("LogAppendTime: each broker's clock (the stamped time and the CRC over it) masked"
                            in r[1] for r in replicas), replicas
