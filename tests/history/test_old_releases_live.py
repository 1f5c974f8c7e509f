"""kafkafmt's model against real brokers and clients of Kafka 0.9.0.1 ... 2.8.2, byte for byte.

Each release is started once (one ZooKeeper, one broker, JVMs capped at 256 MB; three releases at a time, each
in its own cluster), every check of :func:`kafkarig.history.plan` runs on it, the model configured as that
release's Kafka line (``--kafka-line``) (kafkafmt-built produce requests of each magic, uncompressed
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
``make history-record`` writes the same checks to kafkafmt/scenarios/record/last-live-run.json.
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


#: releases run at once, each in its own cluster: a run mostly waits (for JVMs to start, for clients), so
#: three share two cores
AT_ONCE = 3
#: the releases whose Java kafka-clients the checks run (kafkarig.history.CLIENTS)
CLIENT_RELEASES = ("0.9.0.1", "0.10.2.2", "0.11.0.3")


def _run(version: str) -> dict:
    """One live run of ``version``: one ZooKeeper and one broker, every check of its plan, everything stopped."""
    from kafkarig.history import run_release
    from kafkarig.oldcluster import OldCluster

    with OldCluster(version) as cluster:
        return run_release(cluster, cluster.add_broker(1, version), release(version))


class _Runs:
    """One live run per release, started for every release the session selected when the module begins,
    :data:`AT_ONCE` at a time in release order; a test waits for its release's run (tests come release by release)."""

    def __init__(self, versions: list[str]) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from kafkarig.oldclients import compile_java_client
        from kafkarig.releases import ReleaseError, resolve

        # Maven and javac one at a time, before any run: runs only read the releases' jars and clients' classes
        for v in dict.fromkeys([*versions, *CLIENT_RELEASES]):
            try:
                resolve(v)
                if v in CLIENT_RELEASES:
                    compile_java_client(v)
            except ReleaseError:
                pass  # said by releases_or_skip when a test of the release asks for its run
        self.pool = ThreadPoolExecutor(max_workers=AT_ONCE, thread_name_prefix="release-run")
        self.runs = {v: self.pool.submit(_run, v) for v in versions}

    def get(self, version: str) -> dict:
        releases_or_skip(version)
        return self.runs[version].result()  # every check of a release whose run failed reports the same failure

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def runs(request):
    wanted = {item.callspec.params["version"] for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")}
    r = _Runs([v for v in RELEASES if v in wanted])
    try:
        yield r
    finally:
        r.close()


@pytest.mark.parametrize("version,check", list(_cases()))
def test_release_agrees_with_model(runs, version, check):
    c = runs.get(version)[check]
    if check.startswith("dump/"):
        assert c.extra["records_listed"], f"Kafka {version} DumpLogSegments does not list the segment's records " \
            f"as kafkafmt decodes them:\n" + "\n".join(c.real)
    assert c.agree, c.message()
