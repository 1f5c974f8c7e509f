"""Differential conformance: kafkafmt vs the real Apache Kafka 3.9 broker, one test per case of
``conformance/cases/*.json`` (produce, fetch, files, dump).  ``python conformance/run.py`` prints
the same results as a report.  A case marked ``xfail`` in its file is a known kafkafmt bug: strict,
so the test fails once the bug is fixed and the mark must go.
"""
from __future__ import annotations

import pytest

from ci_mode import skip_or_fail
from kafkarig.cases import load_cases
from kafkarig.results import AGREE, PENDING

pytestmark = [pytest.mark.java, pytest.mark.broker]


def _params():
    out = []
    for c in load_cases():
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


@pytest.mark.parametrize("case", _params())
def test_case_agrees_with_kafka(case, conformance_results):
    res = conformance_results[case.id]
    if res.status == PENDING:  # a check that could not run, or nothing compared: never a pass
        skip_or_fail(f"{case.id}: pending: {res.report()}")
    assert res.status == AGREE, res.report()
