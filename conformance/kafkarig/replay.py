"""The ``segments`` check's replay: ``kafkafmt.log.Log`` appends what the broker appended, on the broker's
clock, and writes the same segment files (``.log``, ``.index``, ``.timeindex``) byte for byte.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from kafkafmt.errors import KafkaFmtError
from kafkafmt.log import Log
from kafkafmt.log.clock import SimulatedClock

from .compare import compare_records
from .diffs import explain_index_diff
from .predict import topic_config
from .results import AGREE, CaseResult

#: the partition's leader epoch checkpoint (``LeaderEpochCheckpointFile``): compared in cases that alter
#: the topic, since ``UnifiedLog.updateConfig`` re-initialises the cache when the record version changes
EPOCH_CHECKPOINT = "leader-epoch-checkpoint"


def replay_segments(workdir: Path, r: CaseResult) -> tuple[Path, list[str]]:
    """kafkafmt.log.Log replays the case's successful appends (same topic config, the broker's clock);
    its segment files must equal the broker's.  Returns the closed log's directory and the problems."""
    case = r.case
    d = workdir / "kafkafmt-logs" / f"{case.topic_name}-0"
    if d.exists():
        shutil.rmtree(d)
    clock = SimulatedClock(r.produce[0].wall_now if r.produce else 0)
    cfg = topic_config(case, 0)
    log = Log(d, cfg, clock, topic_partition=(case.topic_name, 0), leader_epoch=0)
    problems = []
    try:
        for st in r.produce:
            if topic_config(case, st.index) != cfg:  # the case's alter steps (UnifiedLog.updateConfig)
                cfg = topic_config(case, st.index)
                log.update_config(cfg)
            if st.error_code != 0:
                continue
            clock.set(st.lat if st.lat is not None else st.wall_now)
            try:
                log.append_as_leader(st.data)
            except KafkaFmtError as e:
                problems.append(f"request {st.index}: the broker appended it, kafkafmt.log raised "
                                f"{type(e).__name__}: {e}")
        names = sorted(p.name for p in r.snapshot.iterdir() if p.name != EPOCH_CHECKPOINT)
        ours = sorted(p.name for p in d.iterdir() if p.suffix in (".log", ".index", ".timeindex"))
        if names != ours:
            problems.append(f"segment files: broker {names} vs kafkafmt {ours}")
        for name in names:
            a = (r.snapshot / name).read_bytes()
            bp = d / name
            if not bp.exists():
                continue
            b = bp.read_bytes()
            if name.endswith(".log"):
                status, detail = compare_records(case, a, b)
                why = None if status == AGREE else detail
            else:
                why = explain_index_diff(a, b, time_index=name.endswith(".timeindex"))
            if why:
                problems.append(f"{name}: {why}")
    finally:
        log.close()
    if case.alter:  # a record-version change re-initialises the leader epoch cache (deleted below v2)
        theirs, mine = (p / EPOCH_CHECKPOINT for p in (r.snapshot, d))
        t, m = (f.read_text() if f.exists() else None for f in (theirs, mine))
        if t != m:
            problems.append(f"{EPOCH_CHECKPOINT}: broker {t!r} vs kafkafmt {m!r}")
    return d, problems
