"""Helpers of the live checks against old Kafka releases (conformance/kafkarig/releases.py).

Java 17 and Maven are needed (the releases' jars are resolved into conformance/.cache/releases/ on
first use); without them the tests skip locally and fail under ``CI=true`` (tests/ci_mode.py).
"""
from __future__ import annotations

from ci_mode import skip_or_fail


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
