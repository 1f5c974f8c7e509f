"""Every crash the fuzzers found, replayed: ``regressions/<target>/<name>`` is an input for one target.

Inputs of a target in ``targets.KNOWN_OPEN`` (a crash owned by another part of issue 12) are
expected to crash until it is fixed (strict xfail: the day they stop crashing, this fails and
the marker must go).  Every other input must now end normally or with a KafkaFmtError.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from targets import KNOWN_OPEN, TARGETS, run_target

REGRESSIONS = Path(__file__).parent / "regressions"
CASES = sorted(p for p in REGRESSIONS.glob("*/*") if p.is_file())


def test_every_regression_names_a_target():
    assert CASES
    for p in CASES:
        assert p.parent.name in TARGETS, p


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_regression_input(path):
    target = path.parent.name
    if target in KNOWN_OPEN:
        with pytest.raises(Exception) as ei:  # still crashing; when it stops, this fails: move it on
            run_target(target, path.read_bytes())
        pytest.xfail(f"open ({KNOWN_OPEN[target]}): {type(ei.value).__name__}: {ei.value}")
    run_target(target, path.read_bytes())
