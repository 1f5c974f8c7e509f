"""Helpers of the live checks against old Kafka releases (conformance/kafkarig/releases.py).

Java 17 and Maven are needed (the releases' jars are resolved into conformance/.cache/releases/ on
first use); without them the tests skip locally and fail under ``CI=true`` (tests/ci_mode.py).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import head_start
from ci_mode import skip_or_fail

REPO = Path(__file__).resolve().parents[2]


def releases_or_skip(version: str):
    """``version``'s Release with its jars resolved, or a skip (a failure in CI) saying why not."""
    from kafkarig.releases import ReleaseError, maven_missing_reason, release, resolve

    reason = maven_missing_reason()
    if reason:
        skip_or_fail(reason)
    try:
        resolve(version)
    except ReleaseError as e:
        skip_or_fail(str(e))
    return release(version)


#: a rig run in a subprocess of its own: the function named by argv[1] ("module:function", no argument), its
#: JSON-able result written to argv[2]
_RIG_CALL = """
import importlib, json, sys
module, function = sys.argv[1].split(":")
result = getattr(importlib.import_module(module), function)()
with open(sys.argv[2], "w") as f:
    json.dump(result, f)
"""


def live_job(name: str, *, module: str, fixture: str, releases: tuple[str, ...], commands, env, timeout: float = 600):
    """Register a run on old releases as a ``live`` job of ``module``'s ``fixture`` (tests/head_start.py), started
    when the session begins; the releases' jars are resolved first, in the job's thread (Maven under its lock),
    a release Maven cannot give being said by :func:`releases_or_skip` when the fixture asks for the run."""
    def before() -> None:
        from kafkarig.releases import ReleaseError, resolve
        for v in releases:
            try:
                resolve(v)
            except ReleaseError:
                pass

    head_start.job(name, module=module, fixture=fixture, lane="live", cwd=REPO,
                   timeout=timeout, before=before, commands=commands, env=env)


def rig_job(name: str, *, module: str, fixture: str, target: str, releases: tuple[str, ...],
            timeout: float = 600) -> None:
    """Register the rig run ``target`` (``"kafkarig.seed000:run_seed000"``) as a :func:`live_job`;
    :func:`rig_result` returns its result."""
    live_job(name, module=module, fixture=fixture, releases=releases, timeout=timeout,
             commands=lambda tmp: [[sys.executable, "-c", _RIG_CALL, target, str(tmp / "result.json")]],
             env=lambda tmp: {**os.environ, "PYTHONPATH": os.pathsep.join(
                 [str(REPO), str(REPO / "conformance"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)})


def rig_result(name: str, releases: tuple[str, ...]) -> dict:
    """The result of rig job ``name`` (:func:`rig_job`), after :func:`releases_or_skip` of each release; a run that
    failed fails here with its exit status and the end of its output."""
    for v in releases:
        releases_or_skip(v)
    done = head_start.result(name)
    p = done.last
    assert p.returncode == 0, f"{name} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    return json.loads((done.tmp / "result.json").read_text())
