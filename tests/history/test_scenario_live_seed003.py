"""Seed 003's upgrade path, live: real 0.11.0.3 brokers upgraded to 1.0.2 (the rig's release of the seed's
"1.0"), real idempotent Java producers of 0.11.0.3 and 1.0.2, beside the model.

One ``kafkafmt scenario run seed003-upgrade-path --live`` per session (about 1 minute here), started when the
session begins (tests/head_start.py).  Every row is
compared with the model of Kafka's released rules (the scenario as releases can run it,
:func:`kafkarig.proposals.released`); the seed's proposals (``enable.idempotence=safe``, broker S's
idempotence modes) are ``SEED`` rows beside what the release did instead, never counted.
"""
from __future__ import annotations

import re

import pytest

from test_scenario_live import differ, live, scenario_job

pytestmark = [pytest.mark.java, pytest.mark.broker]

#: what a real Java producer reports for error 43 (Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, 0.11.0.3 and 1.0.2:
#: a Produce response carries only the code, the client words it)
CLIENT_43 = ("error org.apache.kafka.common.errors.UnsupportedForMessageFormatException: The message format version "
             "on the broker does not support the request.")
#: what the model says (LogValidator's exception, the broker's own message)
MODEL_43 = "error UnsupportedForMessageFormatException: Idempotent records cannot be used with magic version 1"


RUN = ("seed003-upgrade-path", ("0.11.0.3", "1.0.2"))
scenario_job(RUN[0], module=__name__, fixture="seed003", releases=RUN[1])


@pytest.fixture(scope="module")
def seed003():
    return live(*RUN)


def seed_rows(out: str) -> dict[int, list[tuple[str, str, str, str]]]:
    """The printed SEED rows: step → [(what, seed, real, note)]."""
    found: dict[int, list] = {}
    step = None
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\d+)\. ", line)
        if m:
            step = int(m.group(1))
        if line.startswith("   SEED   ") and step is not None:
            found.setdefault(step, []).append((line[10:], lines[i + 1].split("seed:  ", 1)[1],
                                               lines[i + 2].split("real:  ", 1)[1], lines[i + 3].split("note:  ", 1)[1]))
    return found


def rows(steps, n: int) -> dict[str, tuple[bool, str, str]]:
    return {what: (agree, model, real) for agree, what, model, real in steps[n]["rows"]}


def produce(steps, n: int, start: str) -> tuple[bool, str, str]:
    found = [v for what, v in rows(steps, n).items() if what.startswith(start)]
    assert len(found) == 1, (start, list(rows(steps, n)))
    return found[0]


def test_every_step_runs_live_and_agrees(seed003):
    p, steps = seed003
    assert p.stderr == ""
    assert sorted(steps) == [1, 2, 3, 4], p.stdout[-3000:]
    assert [differ(steps, n) for n in range(1, 5)] == [[], [], [], []]
    last = p.stdout.splitlines()[-1]
    assert last.startswith("4 steps live (S 0.11.0.3→1.0.2, K 0.11.0.3→1.0.2; "), last
    assert last.endswith("0 disagreement(s) between the model and the releases; 4 row(s) of a seed's proposal no "
                         "release shipped, beside what the release did (not counted)"), last
    assert p.returncode == 0


def test_step_1_a_0_11_idempotent_producer_meets_error_43_on_a_v1_topic(seed003):
    p, steps = seed003
    assert produce(steps, 1, "p-off (kafka-clients 0.11.0.3, enable.idempotence=false) → p0 leader S") == (
        True, "ok, offsets 0-1", "ok, offsets 0-1")
    for part, leader in ((0, "S"), (1, "K")):
        assert produce(steps, 1, f"p-true (kafka-clients 0.11.0.3, enable.idempotence=true) → p{part} leader "
                                 f"{leader}") == (True, MODEL_43, CLIENT_43)
    assert rows(steps, 1)["replica S p0 (leader)"][0]
    assert rows(steps, 1)["replica S p0 (leader)"][2].startswith("98 bytes, 2 records in 2 batch(es) (none), "
                                                                   "magic [1]")
    assert rows(steps, 1)["replica K p1 (leader)"] == (True, "empty", "empty")


def test_step_2_the_brokers_become_1_0_2_and_s_gets_no_idempotence_modes(seed003):
    p, steps = seed003
    bounced = {w: v for w, v in rows(steps, 2).items() if w.startswith("broker ")}
    assert sorted(bounced) == ["broker K bounced", "broker S bounced"]
    assert all(agree and real.startswith("Kafka 1.0.2 started, "
                                         "inter.broker.protocol.version=0.11.0, log.message.format.version=0.10.2")
               for agree, _m, real in bounced.values())
    (what, seed, real, note), = seed_rows(p.stdout)[2]
    assert what == "broker S: idempotence modes" and real.startswith("Kafka 1.0.2 has no such setting")
    assert note.endswith("the release did otherwise (not counted)")


def test_step_3_every_idempotent_1_0_producer_meets_error_43_the_plain_one_is_converted(seed003):
    p, steps = seed003
    assert produce(steps, 3, "p-off (kafka-clients 1.0.2, enable.idempotence=false) → p0 leader S") == (
        True, "ok, offsets 2-2", "ok, offsets 2-2")
    for name, part, leader in (("p-safe", 0, "S"), ("p-required", 0, "S"), ("p-true", 0, "S"), ("p-safe", 1, "K"),
                               ("p-required", 1, "K")):
        assert produce(steps, 3, f"{name} (kafka-clients 1.0.2, enable.idempotence=true) → p{part} leader "
                                 f"{leader}") == (True, MODEL_43, CLIENT_43)
    assert rows(steps, 3)["replica S p0 (leader)"][0] and rows(steps, 3)["replica K p1 (leader)"] == (
        True, "empty", "empty")


def test_step_3_where_the_seed_and_its_release_disagree_the_run_says_so(seed003):
    """The seed's safe mode: S downgrades the batch (v1, producer state dropped), a 0.11-aware client to K
    disables idempotence; Kafka 1.0.2 refuses both with error 43."""
    p, steps = seed003
    assert seed_rows(p.stdout)[3] == [
        ("p-safe (enable.idempotence=safe) → p0 leader S",
         "ok, offsets 3-3, stored as v1; safe mode: producer id, epoch and sequences dropped (seed 003)", CLIENT_43,
         "seed 003's enable.idempotence=safe, a value no release accepts (enable.idempotence is a boolean): the "
         "release's producer ran with enable.idempotence=true; the release did otherwise (not counted)"),
        ("p-safe (enable.idempotence=safe) → p1 leader K",
         "ok, offsets 0-0, stored as v1; safe mode and a broker without idempotence modes: disabled", CLIENT_43,
         "seed 003's enable.idempotence=safe, a value no release accepts (enable.idempotence is a boolean): the "
         "release's producer ran with enable.idempotence=true; the release did otherwise (not counted)")]


def test_step_4_after_the_format_upgrade_every_idempotent_batch_is_stored_as_v2(seed003):
    p, steps = seed003
    offsets = {("p-safe", 0): 3, ("p-required", 0): 4, ("p-true", 0): 5, ("p-required", 1): 0}
    for (name, part), off in offsets.items():
        leader = "S" if part == 0 else "K"
        assert produce(steps, 4, f"{name} (kafka-clients 1.0.2, enable.idempotence=true) → p{part} leader "
                                 f"{leader}") == (True, f"ok, offsets {off}-{off}", f"ok, offsets {off}-{off}")
    for replica in ("replica S p0 (leader)", "replica K p1 (leader)"):
        what = next(w for w in rows(steps, 4) if w.startswith(replica))
        agree, model, real = rows(steps, 4)[what]
        assert agree, (model, real)
        assert what == replica + " (v2: the broker's producer ids and leader epochs, compared without them)"
    s_model, s_real = rows(steps, 4)[next(w for w in rows(steps, 4) if w.startswith("replica S"))][1:]
    assert s_real.startswith("403 bytes, 6 records in 6 batch(es) (none), magic [1, 2]")
    assert s_model.endswith("producer ids [4242, 4242, 4242], leader epochs [0, 0, 0]")
    # one producer id per producer JVM, from the broker's ZooKeeper block; the leader epoch of two bounces
    pids, epochs = re.search(r"producer ids \[([\d, ]+)\], leader epochs \[([\d, ]+)\]$", s_real).groups()
    assert len(set(pids.split(", "))) == 3 and len(set(epochs.split(", "))) == 1 and int(epochs.split(", ")[0]) >= 1
    assert rows(steps, 4)[next(w for w in rows(steps, 4) if w.startswith("replica K"))][2].startswith(
        "88 bytes, 1 records in 1 batch(es) (none), magic [2]")
    (what, seed, real, note), = seed_rows(p.stdout)[4]
    # both store it idempotent; the offsets differ by the record the seed's S stored at step 3
    assert what == "p-safe (enable.idempotence=safe) → p0 leader S" and note.endswith("the release did the same "
                                                                                       "(not counted)")
    assert (seed, real) == ("ok, offsets 4-4, stored as v2", "ok, offsets 3-3")
