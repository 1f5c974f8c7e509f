"""``kafkafmt dump --kafka-line X`` against release X's own ``kafka.tools.DumpLogSegments``, without and with
``--deep-iteration``, on segments with holes and on their offset indexes (every release of
conformance/kafkarig/releases.py).

One run of :func:`kafkarig.dump_releases.run_all` per session, in a subprocess started when the session begins
(tests/head_start.py): no broker, one JVM per release and set of flags or the offset indexes (40, three at a
time; about 30 s here, under 60 s on a loaded machine).  Each test compares one release and set of flags:
stdout line for line, and the stderr reports (non-consecutive offsets, index mismatches; one per file: the
release orders them by its HashMap, kafkafmt by the files); and what the release printed is what
tests/history/data/dump_shallow_by_release.json keeps for the offline tests (test_dump_by_release.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from old_release_fixtures import rig_job, rig_result

pytestmark = [pytest.mark.java]

from kafkarig.dump_releases import FLAGS, reports  # noqa: E402
from kafkarig.releases import RELEASES  # noqa: E402

DATA = json.loads((Path(__file__).parent / "data" / "dump_shallow_by_release.json").read_text())["releases"]

rig_job("dump-releases-rig", module=__name__, fixture="dumps", target="kafkarig.dump_releases:run_all",
        releases=tuple(RELEASES))


@pytest.fixture(scope="module")
def dumps():
    return rig_result("dump-releases-rig", tuple(RELEASES))


@pytest.mark.parametrize("release,flags", [(r, f) for r in RELEASES for f in [*FLAGS, "index"]])
def test_kafkafmt_dump_prints_what_the_release_printed(dumps, release, flags):
    run = dumps[release]["flags"][flags]
    assert run["kafkafmt"][0] == run["real"][0]
    assert reports(run["kafkafmt"][1]) == reports(run["real"][1])


@pytest.mark.parametrize("release", list(RELEASES))
def test_the_offline_data_is_what_the_release_prints(dumps, release):
    assert dumps[release]["segments"] == DATA[release]["segments"]
    assert {f: {"stdout": r["real"][0], "reports": reports(r["real"][1])}
            for f, r in dumps[release]["flags"].items()} == DATA[release]["flags"]
