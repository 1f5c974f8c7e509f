"""kafkafmt's model against real brokers and clients of Kafka 0.9.0.1 ... 2.8.2, byte for byte.

Each release is started once (one ZooKeeper, one broker, JVMs capped at 256 MB), every check of
:func:`kafkarig.history.plan` runs on it, the model configured as that release's Kafka line (``--kafka-line``)
(kafkafmt-built produce requests of each magic, uncompressed
and gzip, on a topic of the release's default format and, from 0.10.0 on, on one of
``message.format.version=0.9.0``; fetches of each client generation; the release's DumpLogSegments;
the Java kafka-clients of 0.9.0.1, 0.10.2.2 and 0.11.0.3 and kafka-python pinned to (0,9), (0,10),
(0,11) producing and consuming), the broker is stopped, and one test per check asserts that the model
agrees with what the release did.

DumpLogSegments' lines are compared line for line with ``kafkafmt dump --deep --print-data-log --kafka-line``
of the release's line (its format: row ``dump.format``), and the release must list every record kafkafmt
decodes, in order.

Where they do not, the check is an ``xfail(strict=True)`` naming the disagreement (:data:`DISAGREEMENTS`):
the suite stays green, and the day the model is fixed the xfail turns into a failure, to be removed.
``make history-record`` writes the same checks to conformance/history/last-live-run.json.
"""
from __future__ import annotations

import pytest

from old_release_fixtures import releases_or_skip

pytestmark = [pytest.mark.java, pytest.mark.broker]

from kafkarig.history import plan  # noqa: E402
from kafkarig.releases import RELEASES, release  # noqa: E402

DISAGREEMENTS: dict[tuple[str, str], str] = {}


def _cases():
    for v in RELEASES:
        for name in plan(release(v)):
            marks = []
            if (v, name) in DISAGREEMENTS:
                marks.append(pytest.mark.xfail(strict=True, reason=DISAGREEMENTS[(v, name)]))
            yield pytest.param(v, name, id=f"{v}-{name}", marks=marks)


class _Runs:
    """One live run per release, made the first time a test asks for it (tests come release by release)."""

    def __init__(self) -> None:
        self.done: dict[str, dict] = {}

    def get(self, version: str) -> dict:
        if version not in self.done:
            from kafkarig.history import run_release
            from kafkarig.oldcluster import OldCluster

            rel = releases_or_skip(version)
            try:
                with OldCluster(version) as cluster:
                    self.done[version] = run_release(cluster, cluster.add_broker(1, version), rel)
            except Exception as e:  # every later check of this release reports the same failure
                self.done[version] = {"error": e}
        run = self.done[version]
        if "error" in run:
            raise run["error"]
        return run


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
