"""Seed 000's rolling upgrade from 0.9 to 0.10 and its rollback on a real mixed 0.9.0.1 + 0.10.2.2 cluster.

One run (:func:`kafkarig.seed000.run_seed000`, under 2 minutes here) per module, in a subprocess started
when the session begins (tests/head_start.py); one test per check:
each partition's replicas byte-identical after every phase, what each leader stored against the model's
append, what a 0.9 and a 0.10 Java consumer read against the model's fetch.
"""
from __future__ import annotations

import pytest

from old_release_fixtures import rig_job, rig_result

pytestmark = [pytest.mark.java, pytest.mark.broker]

#: the checks each phase makes (kafkarig.seed000), known before the run
_CHECKS = {
    "mixed": ["produce/java-0.9.0.1/p0", "produce/java-0.10.2.2/p1", "replicas-identical/p0",
              "replicas-identical/p1"],
    "binaries": ["replicas-identical/p0", "replicas-identical/p1"],
    "protocol": ["replicas-identical/p0", "replicas-identical/p1"],
    "format": ["produce/java-0.9.0.1/p0", "produce/java-0.10.2.2/p1", "replicas-identical/p0",
               "replicas-identical/p1", "consume/java-0.9.0.1/p0", "consume/java-0.10.2.2/p0",
               "consume/java-0.9.0.1/p1", "consume/java-0.10.2.2/p1"],
    "rollback": ["replicas-identical/p0", "replicas-identical/p1", "consume/java-0.9.0.1/p0",
                 "consume/java-0.9.0.1/p1"],
}
#: seed000/<phase>/<check> → the disagreement, as measured (kafkafmt/scenarios/record/last-live-run.json)
DISAGREEMENTS: dict[str, str] = {}


RELEASES = ("0.9.0.1", "0.10.2.2")
rig_job("seed000-rig", module=__name__, fixture="seed000", target="kafkarig.seed000:run_seed000", releases=RELEASES)


@pytest.fixture(scope="module")
def seed000():
    run = rig_result("seed000-rig", RELEASES)
    return {c["check"]: c for p in run["phases"].values() for c in p["checks"]}


def _cases():
    for phase, checks in _CHECKS.items():
        for name in checks:
            key = f"seed000/{phase}/{name}"
            marks = [pytest.mark.xfail(strict=True, reason=DISAGREEMENTS[key])] if key in DISAGREEMENTS else []
            yield pytest.param(key, id=key, marks=marks)


@pytest.mark.parametrize("key", list(_cases()))
def test_seed000_phase_agrees(seed000, key):
    c = seed000[key]
    assert c["agree"], f"{key} ({c['client']}, {c['request']}): {c['detail']}"

