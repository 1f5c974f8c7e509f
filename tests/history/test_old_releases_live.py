"""kafkafmt's model against real brokers and clients of Kafka 0.9.0.1 ... 2.8.2, byte for byte.

Each release is started once (one ZooKeeper, one broker, JVMs capped at 256 MB; each release in its own cluster,
a live job of tests/head_start.py started when the session begins, beside the tests before it), every check of
:func:`kafkarig.history.plan` runs on it, the model configured as that release's Kafka line (``--kafka-line``)
(kafkafmt-built produce requests of each magic, uncompressed and gzip, on a topic of the release's default
format and, from 0.10.0 on, on one of ``message.format.version=0.9.0``; fetches of each client generation; the
release's DumpLogSegments; the Java kafka-clients of 0.9.0.1, 0.10.2.2 and 0.11.0.3 and kafka-python pinned to
(0,9), (0,10), (0,11) producing and consuming), the broker is stopped, and one test per check asserts that the
model agrees with what the release did.

DumpLogSegments' lines are compared line for line with ``kafkafmt dump --deep --print-data-log --kafka-line``
of the release's line (its format: row ``dump.format``), and the release must list every record kafkafmt
decodes, in order.

Where they do not, the check is an ``xfail(strict=True)`` naming the disagreement (:data:`DISAGREEMENTS`):
the suite stays green, and the day the model is fixed the xfail turns into a failure, to be removed.
``make history-record`` writes the same checks to kafkafmt/scenarios/record/last-live-run.json.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

import head_start
from old_release_fixtures import REPO, live_job, releases_or_skip

pytestmark = [pytest.mark.java, pytest.mark.broker]

from kafkarig.history import Check, plan  # noqa: E402
from kafkarig.releases import RELEASES, release  # noqa: E402

DISAGREEMENTS: dict[tuple[str, str], str] = {}


def _cases():
    for v in RELEASES:
        for name in plan(release(v)):
            marks = []
            if (v, name) in DISAGREEMENTS:
                marks.append(pytest.mark.xfail(strict=True, reason=DISAGREEMENTS[(v, name)]))
            yield pytest.param(v, name, id=f"{v}-{name}", marks=marks)


#: the releases whose Java kafka-clients the checks run (kafkarig.history.CLIENTS)
CLIENT_RELEASES = ("0.9.0.1", "0.10.2.2", "0.11.0.3")

#: one live run of a release in a subprocess: ``python -c _RUN VERSION OUT``, every check of its plan as JSON
_RUN = """
import json, sys
from kafkarig.history import run_release
from kafkarig.oldcluster import OldCluster
from kafkarig.releases import release
with OldCluster(sys.argv[1]) as cluster:
    checks = run_release(cluster, cluster.add_broker(1, sys.argv[1]), release(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    json.dump({name: c.to_dict() for name, c in checks.items()}, f)
"""


def _job(version: str) -> None:
    """One release's run as a live job of tests/head_start.py, started when the session begins (its tests name
    the release as a parameter): one ZooKeeper and one broker, every check of its plan, everything stopped."""
    live_job(f"release-{version}", module=__name__, fixture=version, releases=(version, *CLIENT_RELEASES),
             commands=lambda tmp: [[sys.executable, "-c", _RUN, version, str(tmp / "checks.json")]],
             env=lambda tmp: {**os.environ, "PYTHONPATH": os.pathsep.join(
                 [str(REPO), str(REPO / "conformance"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)})


for _v in RELEASES:
    _job(_v)


class _Runs:
    """Each release's checks, from its job (waited for, or run now when the session did not start it)."""

    def __init__(self) -> None:
        self.done: dict[str, dict[str, Check]] = {}

    def get(self, version: str) -> dict[str, Check]:
        releases_or_skip(version)
        if version not in self.done:
            job = head_start.result(f"release-{version}")
            p = job.last
            # every check of a release whose run failed reports the same failure
            assert p.returncode == 0, \
                f"Kafka {version}'s run exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
            found = json.loads((job.tmp / "checks.json").read_text())
            self.done[version] = {name: Check(**c) for name, c in found.items()}
        return self.done[version]


@pytest.fixture(scope="module")
def runs():
    return _Runs()


@pytest.mark.parametrize("version,check", list(_cases()))
def test_release_agrees_with_model(runs, version, check):
    c = runs.get(version)[check]
    if check.startswith("dump/"):
        assert c.extra["records_listed"], f"Kafka {version} DumpLogSegments does not list the segment's records " \
            f"as kafkafmt decodes them:\n" + "\n".join(c.real)
    assert c.agree, c.message()
