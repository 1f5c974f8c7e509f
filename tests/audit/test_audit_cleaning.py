"""The audit's "what the 4.4 cleaner makes of it": a cleaned temporary copy (kafkafmt.audit.cleaning) against
Kafka 4.4.0's own cleaner (CleanerThread.cleanFilthiestLog in conformance/oracle-4.4/CleanerOracle44.java)
run pass after pass on another copy of the same partition, counted here with the reference readers; and
the audit still changes no byte and no modification time of its input."""
from __future__ import annotations

import random
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from kafkafmt.audit import audit_log_dirs
from kafkafmt.audit.cleaning import target_config
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.log.clock import set_mtime_ms
from kafkafmt.log.readonly import file_states
from kafkafmt.records import MemoryRecords

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS / "log"))
from log_helpers import batch  # noqa: E402

T0 = 1_700_000_000_000
TOPIC = {"cleanup.policy": "compact", "segment.bytes": "1024"}


@pytest.fixture(scope="module")
def cleaner44():
    from kafkarig.cleaner_oracle44 import cleaner_oracle44_or_skip
    return cleaner_oracle44_or_skip()


def _phase(log_dir: Path, props: dict, now: int, batches: list[bytes]) -> None:
    d = log_dir / "t-0"
    log = Log(d, LogConfig.from_properties(props), SimulatedClock(now), clean_shutdown=True)
    first_new = log.active_segment.base_offset
    for b in batches:
        log.append_as_follower(b)
    log.close()
    for p in d.glob("*.log"):
        if int(p.stem) >= first_new:
            set_mtime_ms(p, now)


def make_partition(log_dir: Path) -> None:
    """v0 gzip wrappers, v1 plain messages, then v2 batches overwriting part of the old keys, with tombstones:
    some v0/v1 records stay their key's latest, others are superseded."""
    rng = random.Random(5)
    off = 0
    for i, (magic, codec, keys, mfv) in enumerate([(0, "gzip", range(0, 30), "0.9.0"), (1, "none", range(20, 50),
                                                                                         "0.10.2"),
                                                   (2, "lz4", range(0, 25), "3.0"), (2, "none", range(40, 60), "3.0")]):
        batches = []
        for j in range(30):
            n = rng.randrange(1, 4) if codec != "none" or magic == 2 else 1
            recs = [(T0 + i * 60_000 + j, b"k%d" % rng.choice(keys), None if rng.random() < 0.1 else b"v%d" % (off + x))
                    for x in range(n)]
            batches.append(batch(off, recs, magic=magic, compression=codec))
            off += n
        _phase(log_dir, {**TOPIC, "message.format.version": mfv}, T0 + i * 60_000, batches)


def _kafka_clean_until_done(oracle, d: Path, config: dict, now: int) -> int:
    passes = 0
    for _ in range(64):
        if not oracle.clean(d, now=now, config=config)["cleaned"]:
            break
        passes += 1
    return passes


def _counts(d: Path, legacy_offsets: set[int]) -> tuple[Counter, Counter]:
    magics, legacy = Counter(), Counter()
    for p in sorted(d.glob("*.log")):
        for b in MemoryRecords(p.read_bytes()).batches():
            offsets = [r.offset for r in b.records()]
            magics[f"v{b.magic}:batches"] += 1
            magics[f"v{b.magic}:records"] += len(offsets)
            magics[f"v{b.magic}:bytes"] += b.size_in_bytes
            if offsets and all(o in legacy_offsets for o in offsets):
                legacy["batches"] += 1
                legacy["records"] += len(offsets)
                legacy["bytes"] += b.size_in_bytes
                legacy["left"] += b.magic < 2
    return magics, legacy


def test_the_cleaned_copy_is_what_kafka_44_makes(cleaner44, tmp_path):
    logs = tmp_path / "logs"
    make_partition(logs)
    src = logs / "t-0"
    legacy_offsets = {r.offset for p in src.glob("*.log") for b in MemoryRecords(p.read_bytes()).batches()
                      if b.magic < 2 for r in b.records()}
    now = T0 + 10 * 60_000
    before = file_states(src)
    report = audit_log_dirs(logs, target="4.4", now_ms=now, topic_config={"t": TOPIC})
    assert file_states(src) == before  # read-only: sizes, digests and mtimes
    part = report.partitions[0]
    d = part.to_dict()["cleaner"]

    kafka = tmp_path / "kafka" / "t-0"
    kafka.mkdir(parents=True)
    for p in src.iterdir():
        if p.suffix in (".log", ".index", ".timeindex"):
            shutil.copy2(p, kafka / p.name)
    config = target_config(part.setting.config, "4.4").to_properties()
    passes = _kafka_clean_until_done(cleaner44, kafka, config, now)
    magics, legacy = _counts(kafka, legacy_offsets)

    copy = d["cleaned_copy"]
    assert copy["passes"] == passes >= 1
    assert {f"{m}:{k}": v for m, c in copy["magics"].items() for k, v in c.items() if k != "codecs"} == \
        {k: v for k, v in magics.items() if v}
    assert (d["batches_after"], d["records_after"], d["bytes_after"], copy["legacy_batches_left"]) == \
        (legacy["batches"], legacy["records"], legacy["bytes"], legacy["left"])
    # superseded keys dropped too: fewer records than the format rewrite keeps, yet some v0/v1 data lives on
    assert 0 < d["records_after"] < d["records"]
    assert d["batches_after"] < d["rewrite_only"]["batches"]


def test_on_line_39_the_cleaner_keeps_the_format(tmp_path):
    logs = tmp_path / "logs"
    make_partition(logs)
    d = audit_log_dirs(logs, target="3.9", now_ms=T0 + 10 * 60_000, topic_config={"t": TOPIC}).partitions[0]
    copy = d.to_dict()["cleaner"]["cleaned_copy"]
    assert copy["legacy_batches_left"] == d.cleaned.legacy.batches > 0
