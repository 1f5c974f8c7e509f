"""Seed 004's last migration step on the live Kafka 3.9.2 broker (issue 10/13): the topic's
``message.format.version`` lowered to 0.9.0 (IncrementalAlterConfigs) while gzip v1 data is on disk.
The broker's own bytes must show what kafkafmt's scenario model says for that step, and the model's
step must name the case (the case itself agreeing with kafkafmt is checked in test_conformance.py)."""
from __future__ import annotations

import pytest

from kafkafmt.records import MemoryRecords
from kafkafmt.scenarios import run_file
from kafkarig.cases import load_cases

pytestmark = [pytest.mark.java, pytest.mark.broker]

CASE_ID = "alter/seed004-format-lowered"
STEP = "the format lowered back to 0.9.0 while v1 data is on disk: an old consumer gets V1 zero-copy"


@pytest.mark.parametrize("case", [c for c in load_cases() if c.id == CASE_ID], ids=lambda c: c.id)
def test_seed004_lowered_format_sends_v1_zero_copy_to_fetch_v1(case, conformance_results):
    res = conformance_results[case.id]
    assert res.setup_error is None, res.report()
    log = b"".join(p.read_bytes() for p in sorted(res.snapshot.glob("*.log")))
    batches = list(MemoryRecords(log).batches())
    # v1 written before the change, the request after it converted down to v0
    assert [b.magic for b in batches] == [1, 0]
    v1 = batches[0].size_in_bytes
    f = res.fetches[0]
    assert (f.version, f.offset, f.error_code) == (1, 0, 0)
    assert f.records[:v1] == log[:v1]  # the stored v1 wrapper, zero-copy, to a 0.9 consumer's Fetch v1

    step = run_file("seed004-migration").step(STEP)
    assert CASE_ID in step.conformance
    (row,) = [r for r in step.rows if r.path == "consumer"]
    assert (row.request, row.magic_in, row.conversion) == ("FetchRequest v1", 1, "zero-copy")
