"""KIP-33's time index on an upgrade from Kafka 0.10.0.1 to 0.10.1.1, live, against kafkafmt's log model.

One run of :func:`kafkarig.time_index.run_time_index_upgrade` per module, in a subprocess started when the
session begins (tests/head_start.py; a ZooKeeper and two brokers, JVMs
capped at 256 MB; about 90 s, most of it waiting for the releases' retention to run): a partition written on
0.10.0.1, its broker stopped cleanly (topic ``ti-clean``) or killed (``ti-crash``), the jars swapped to
0.10.1.1 on the same data directory, the IBP and format steps of 0.10.1's upgrade notes, more records, time
retention.  One test per check: after each phase each partition's ``.log``, ``.index`` and ``.timeindex``
files (names, sizes, bytes) are those of kafkafmt's ``Log`` driven through the same steps with the Kafka
line of the running release, and ListOffsets v1 answers what ``Log.fetch_offset_by_timestamp`` answers.

A disagreement would be an ``xfail(strict=True)`` naming it (:data:`DISAGREEMENTS`); there is none.
"""
from __future__ import annotations

import pytest

from old_release_fixtures import rig_job, rig_result

pytestmark = [pytest.mark.java, pytest.mark.broker]

from kafkarig.time_index import check_names  # noqa: E402

#: <phase>/<what>/<topic> → the disagreement, as measured
DISAGREEMENTS: dict[str, str] = {}


RELEASES = ("0.10.0.1", "0.10.1.1")
rig_job("time-index-rig", module=__name__, fixture="upgrade", target="kafkarig.time_index:run_time_index_upgrade",
        releases=RELEASES)


@pytest.fixture(scope="module")
def upgrade():
    run = rig_result("time-index-rig", RELEASES)
    return {c["check"]: c for p in run["phases"].values() for c in p["checks"]}


def _cases():
    for phase, names in check_names().items():
        for name in names:
            marks = [pytest.mark.xfail(strict=True, reason=DISAGREEMENTS[name])] if name in DISAGREEMENTS else []
            yield pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", list(_cases()))
def test_time_index_upgrade_agrees(upgrade, name):
    c = upgrade[name]
    assert c["agree"], f"{name} ({c['client']}, {c['request']}): {c['detail']}"
