"""Issue 12, item 6: a conformance case agrees only when every check that applies agrees; a pending
check (could not run) or an import error can never count as agreement.  No broker needed."""
from __future__ import annotations

import pytest

from kafkarig.results import AGREE, DIFFER, ERROR, NOT_APPLICABLE, PENDING, CaseResult


def _result(*statuses):
    r = CaseResult(case=None)
    for i, s in enumerate(statuses):
        r.add(f"c{i}", s, "")
    return r.status


@pytest.mark.parametrize("statuses,expected", [
    ((AGREE, AGREE), AGREE),
    ((AGREE, NOT_APPLICABLE), AGREE),
    ((AGREE, PENDING), PENDING),          # was AGREE: one agreeing check hid a pending one
    ((PENDING, AGREE, AGREE), PENDING),
    ((NOT_APPLICABLE,), PENDING),         # nothing compared is not agreement
    ((), PENDING),
    ((AGREE, DIFFER, PENDING), DIFFER),
    ((AGREE, ERROR), ERROR),
])
def test_case_status_needs_every_check_to_agree(statuses, expected):
    assert _result(*statuses) == expected
