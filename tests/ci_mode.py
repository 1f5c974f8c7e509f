"""The one place that decides whether the tests run in CI, and what a missing component means then.

``CI`` set to any true value (``true``, ``1``, ``yes``, ``on``, any case) is CI mode. Locally an
optional component (Java, the Kafka jars, a broker, Spark, Chromium) may be skipped with a reason;
in CI its absence is a failure, never a skip.
"""
from __future__ import annotations

import importlib
import os

import pytest

_TRUE = {"1", "true", "yes", "on", "y", "t"}


def in_ci() -> bool:
    """True when the ``CI`` environment variable holds a true value."""
    return os.environ.get("CI", "").strip().lower() in _TRUE


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason`` locally; fail with it in CI (where every component is required)."""
    if in_ci():
        pytest.fail(f"{reason} (CI mode: this component is required)", pytrace=False)
    pytest.skip(reason)


def import_or_skip(name: str, reason: str | None = None):
    """The module ``name`` (``pytest.importorskip`` under this rule): when it cannot be imported, a skip with
    ``reason`` locally (at module level too) and a failure in CI."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        why = reason or f"{name} is not installed ({e})"
        if in_ci():
            pytest.fail(f"{why} (CI mode: this component is required)", pytrace=False)
        pytest.skip(why, allow_module_level=True)
