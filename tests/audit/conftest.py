"""Fixtures for the audit: the mixed sample (v0, v1, v2; compressed and not; one topic compacted)."""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.dirname(HERE))  # tests/ (ci_mode)
sys.path.insert(0, HERE)


@pytest.fixture(scope="session")
def mixed(tmp_path_factory):
    """A generated log directory (read-only for the tests: each test that writes copies it first)."""
    from mixed_sample import make_mixed
    out = tmp_path_factory.mktemp("audit") / "logs"
    make_mixed(out)
    return out
