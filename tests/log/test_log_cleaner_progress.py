"""A cleaning pass reports how far it has read (``clean_log(progress=...)``), phase by phase, in bytes of
segment data: the offset map over the dirty segments, then the filter over every segment it rewrites."""
from __future__ import annotations

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.cleaner.offset_map import CleanerConfig
from kafkafmt.records import MemoryRecordsBuilder

T0 = 1_700_000_000_000


def test_the_pass_reports_each_phase_up_to_its_total(tmp_path):
    config = LogConfig.from_properties({"cleanup.policy": "compact", "segment.bytes": 4096,
                                        "min.cleanable.dirty.ratio": 0.01})
    log = Log(tmp_path / "t-0", config, SimulatedClock(T0), clean_shutdown=True)
    offset = 0
    for n in range(40):
        b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, offset, partition_leader_epoch=0)
        for _ in range(10):
            b.append(T0 + offset, b"k%d" % (offset % 7), b"v" * 30)
            offset += 1
        log.append_as_follower(b.build())
    seen = []
    dirty = sum(s.size for s in log.segments[:-1])
    result = log.clean(now=T0 + 10_000, cleaner=CleanerConfig(), progress=lambda *a: seen.append(a))
    log.close()
    assert result.cleaned
    phases = [p for p, _, _ in seen]
    assert phases[0] == "offset map" and phases[-1] == "filter" and phases == sorted(phases, key=phases.index)
    for phase in ("offset map", "filter"):
        reports = [(done, total) for p, done, total in seen if p == phase]
        dones = [d for d, _ in reports]
        assert dones[0] == 0 and dones == sorted(dones) and len({t for _, t in reports}) == 1
        assert dones[-1] == reports[0][1] == dirty, phase  # every dirty byte read, first pass: all dirty
