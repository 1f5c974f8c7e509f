"""tests/ci_mode.py: a missing component is a skip locally and a failure under ``CI=true``, for an import too."""
from __future__ import annotations

import pytest

from ci_mode import import_or_skip


def test_a_missing_module_fails_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"^no_such_module_kafkafmt is missing here \(CI mode: this "
                                                     r"component is required\)$"):
        import_or_skip("no_such_module_kafkafmt", "no_such_module_kafkafmt is missing here")


def test_a_missing_module_is_skipped_locally(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^no_such_module_kafkafmt is not installed \(No module named "):
        import_or_skip("no_such_module_kafkafmt")


def test_a_present_module_is_returned(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert import_or_skip("json").dumps([1]) == "[1]"
