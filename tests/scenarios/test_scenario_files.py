"""Every shipped scenario runs; the CLI; malformed scenario files get one-line errors naming file, line and
field; an impossible combination is an outcome, not a crash; the cited seed sentences are verbatim."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafkafmt import cli
from kafkafmt.errors import KafkaFmtError
from kafkafmt.scenarios import ScenarioError, load_scenario, parse_scenario, run_scenario, shipped_scenarios
from kafkafmt.scenarios.quotes import QUOTES

REPO = Path(__file__).resolve().parents[2]


#: shipped seed plans a release of their brokers refuses: scenario → (the step where a broker does not start,
#: its one failed expectation); the steps after it are not run (Kafka 0.10.0.1's KafkaConfig before KAFKA-6238)
REFUSED = {"seed000-rolling-upgrade": (11, {"path": "broker", "magic_out": 1}),
           "seed000-trial-rollback": (1, {"path": "broker", "actor": "B", "magic_out": 1,
                                          "detail.replica_fetch_version": 2})}


@pytest.mark.parametrize("name", sorted(shipped_scenarios()))
def test_every_shipped_scenario_runs_and_meets_its_expectations(name):
    result = run_scenario(load_scenario(name))
    if name in REFUSED:
        step, expect = REFUSED[name]
        assert len(result.steps) == step and result.stopped and "refused to start" in result.stopped
        assert [(s, c["expect"]) for s, c in result.failed_checks] == [(result.steps[-1].name, expect)]
        assert len(result.steps) + len(result.not_run) == len(load_scenario(name).steps)
    else:
        assert result.ok, result.failed_checks
        assert result.not_run == [] and result.stopped is None
    assert all(s.cite or s.name.startswith("before") for s in result.steps), "every step cites the seed"


def test_cli_run_formats_and_exit_status(capsys, tmp_path):
    assert cli.main(["scenario", "run", "seed002-upgrade-order", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["steps"][1]["rows"][2]["detail"]["timestamps"] == [-(2**63)]
    assert all("measured" not in r for s in data["steps"] for r in s["rows"])
    assert cli.main(["scenario", "run", "seed002-upgrade-order", "--format", "markdown"]) == 0
    assert "| path | actor |" in capsys.readouterr().out
    bad = tmp_path / "wrong-expectation.yaml"
    bad.write_text(BASE + """steps:
  - name: s
    do: [{produce: {producer: p}}]
    expect: [{path: leader, magic_out: 1}]
""")
    assert cli.main(["scenario", "run", str(bad)]) == 1
    assert "EXPECTATION FAILED" in capsys.readouterr().out
    assert cli.main(["scenario", "list"]) == 0
    assert "seed000-trial-rollback" in capsys.readouterr().out


def test_cli_matrix(capsys):
    assert cli.main(["scenario", "matrix", "seed002-consumer", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "ambiguous: error → the old consumer raises an error on the record \\| NO_TIMESTAMP → the application sees " \
           "NO_TIMESTAMP" in out and "none of the readings" in out


BASE = """name: t
brokers: [{name: A}]
producers: [{name: p}]
consumers: [{name: c}]
"""

MALFORMED = [
    ("name: [unclosed\n", r"bad\.yaml:2: not valid YAML/JSON: expected ','"),
    ("", r"bad\.yaml:1: the file is empty"),
    (BASE + "steps:\n  - do: [{produce: {producer: p9}}]\n", r"bad\.yaml:6: steps\[0\]\.do\[0\]\.produce\.producer: "
                                                           r"unknown producer 'p9' \(known: p\)"),
    (BASE + "steps:\n  - do: [{fly: {}}]\n", r"bad\.yaml:6: steps\[0\]\.do\[0\]\.fly: unknown action"),
    (BASE + "steps:\n  - do:\n      - produce: {producer: p, records: -3}\n",
     r"bad\.yaml:7: steps\[0\]\.do\[0\]\.produce\.records: expected a non-negative integer, got -3"),
    (BASE + "steps:\n  - do: []\n    expect: [{path: leader, magic: 1}]\n",
     r"bad\.yaml:7: steps\[0\]\.expect\[0\]\.magic: unknown field"),
    (BASE + "steps:\n  - do: []\n    cite: [000.nope]\n", r"bad\.yaml:7: steps\[0\]\.cite\[0\]: unknown seed quote id"),
    ("name: t\nbrokers: [{name: A, colour: red}]\nsteps: []\n", r"bad\.yaml:2: brokers\[0\]\.colour: unknown field"),
    ("name: t\nbrokers: [{name: A}]\nproducers: [{name: p, idempotence: maybe}]\nsteps: []\n",
     r"bad\.yaml:3: producers\[0\]\.idempotence: unknown mode 'maybe'"),
    ("name: t\nbrokers: [{name: A}]\n", r"bad\.yaml:1: \(top\): missing field 'steps'"),
    ("a: &x [1, 2]\nb: [*x, *x, *x]\n", r"bad\.yaml:1: b\[0\]: YAML anchors and aliases are not supported"),
    ("name: t\nbrokers:\n  - {name: A}\n  - {name: A}\nsteps: []\n", r"bad\.yaml:4: brokers\[1\]\.name: duplicate name 'A'"),
    (BASE + "steps:\n  - do: [{produce: {producer: p, records: 1000000000}}]\n",
     r"bad\.yaml:6: steps\[0\]\.do\[0\]\.produce\.records: at most 10000 records per produce step"),
    (BASE + "steps:\n  - do: [{consume: {consumer: c, partition: 4}}]\n",
     r"bad\.yaml:6: steps\[0\]\.do\[0\]\.consume\.partition: expected a partition number 0\.\.0, got 4"),
]


@pytest.mark.parametrize("text,message", MALFORMED)
def test_malformed_file_gives_a_one_line_error_naming_file_line_and_field(tmp_path, capsys, text, message):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert isinstance(e.value, KafkaFmtError) and e.value.reason
    assert re.search(message, str(e.value)), str(e.value)
    assert cli.main(["scenario", "run", str(f)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith("kafkafmt: error: ScenarioError: ")


MALFORMED_VALUES = [
    ("name: t\nbrokers: [{name: A, version: 0.10}]\nsteps: []\n",
     r"bad\.yaml:2: brokers\[0\]\.version: write the version as a string"),
    ("name: t\nbrokers: [{name: A, version: \"0.7\"}]\nsteps: []\n",
     r"bad\.yaml:2: brokers\[0\]\.version: Version 0\.7 is not a valid version"),
    ("name: t\nbrokers: [{name: A, properties: {message.colour: red}}]\nsteps: []\n",
     r"bad\.yaml:2: brokers\[0\]\.properties\.message\.colour: not a Kafka topic property"),
    ("name: t\nbrokers: [{name: A, properties: {message.timestamp.type: Never}}]\nsteps: []\n",
     r"bad\.yaml:2: brokers\[0\]\.properties: Invalid value Never for configuration message\.timestamp\.type"),
]


@pytest.mark.parametrize("text,message", MALFORMED_VALUES)
def test_malformed_values_are_named_too(tmp_path, text, message):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(ScenarioError, match=message):
        load_scenario(f)


def test_an_impossible_cluster_action_names_the_place(tmp_path):
    f = tmp_path / "elect.yaml"
    f.write_text("name: t\nbrokers: [{name: A}, {name: B}]\npartitions: [{leader: A, replicas: [A]}]\nsteps:\n"
                 "  - do:\n      - elect: {broker: B, partition: 0}\n")
    with pytest.raises(ScenarioError, match=r"elect\.yaml:6: steps\[0\]\.do\[0\]\.elect: broker 'B' is not a live "
                                            r"replica of partition 0"):
        run_scenario(load_scenario(f))


def test_unknown_scenario_name():
    with pytest.raises(ScenarioError, match="no shipped scenario of that name"):
        load_scenario("no-such-scenario")


def test_json_scenarios_are_accepted():
    sc = parse_scenario(json.dumps({"name": "j", "brokers": [{"name": "A"}], "producers": [{"name": "p"}],
                                    "steps": [{"do": [{"produce": {"producer": "p"}}]}]}), "j.json")
    assert run_scenario(sc).ok


IMPOSSIBLE = BASE.replace("brokers: [{name: A}]", """brokers:
  - {name: A, version: "3.9", properties: {message.format.version: "0.10.2", inter.broker.protocol.version: "2.8"}}""")


def test_zstd_to_a_v1_topic_is_an_outcome_not_a_crash():
    sc = parse_scenario(IMPOSSIBLE.replace("producers: [{name: p}]", """producers:
  - {name: p, compression: zstd}
  - {name: old, version: "0.10.2", compression: zstd}""") + """steps:
  - name: zstd v2 batch to a v1 topic
    do: [{produce: {producer: p}}, {produce: {producer: old}}, {consume: {consumer: c}}]
""", "zstd.yaml")
    (step,) = run_scenario(sc).steps
    leader = [r for r in step.rows if r.path == "leader"]
    assert len(leader) == 1 and leader[0].error and leader[0].magic_out is None
    assert "zstd" in leader[0].error.lower() or "ZStandard" in leader[0].error
    old = [r for r in step.rows if r.path == "producer" and r.actor == "old"]
    assert old[0].error and old[0].request == "ProduceRequest v2"  # a v1 message set cannot carry zstd


def test_quoted_seed_sentences_are_verbatim():
    for base in (REPO.parent / "shared" / "seeds", REPO.parents[1] / "shared" / "seeds", Path("/work/shared/seeds")):
        if base.is_dir():
            break
    else:
        pytest.skip("the seed documents (shared/seeds) are not beside this checkout")
    texts = {p.name[:3]: " ".join(p.read_text(encoding="utf-8").split()) for p in base.glob("0*.txt")}
    for key, (seed, sentence) in QUOTES.items():
        assert " ".join(sentence.split()) in texts[seed], key


def test_producing_to_a_partition_without_a_live_leader_is_an_outcome():
    sc = parse_scenario("""name: t
brokers: [{name: A}]
producers: [{name: p}]
consumers: [{name: c}]
steps:
  - do: [{shutdown: {broker: A}}, {produce: {producer: p}}, {consume: {consumer: c}}]
""", "down.yaml")
    (step,) = run_scenario(sc).steps
    errors = [r.error for r in step.rows if r.path in ("producer", "consumer")]
    assert len(errors) == 2 and all(e.startswith("NOT_LEADER_OR_FOLLOWER") for e in errors)


def test_conformance_links_of_shipped_scenarios_name_existing_cases():
    from kafkarig.cases import load_cases
    ids = {c.id for c in load_cases()}
    linked = [c for name in shipped_scenarios() for s in load_scenario(name).steps for c in s.conformance]
    assert len(linked) >= 15 and set(linked) <= ids
