"""Seed 004's holes (KIP-31: a compacted wrapper's inner relative offsets skip the removed records) as the real
Kafka 0.10.2.2 cleaner leaves them, kept as package data for notebook 09 (``kafkafmt/viz/data/holes-0.10.2.2.json``).

The record is Kafka 0.10.2.2's own ``kafka.log.Log`` writing notebook 09's 24 v1 gzip wrappers (12 keys) at T0 and
its own cleaner thread cleaning them 30 s later (:mod:`kafkarig.old_cleaner`).  Without Java:
``kafkafmt clean --kafka-line 0.10.2`` on the partition kafkafmt's 0.10.2 broker writes must leave every
``.log`` (bytes and modification time), ``.index``, ``.timeindex`` and ``cleaner-offset-checkpoint`` as recorded.
With Java: the release, run again, must leave the recorded files (skips locally without Java and Maven, fails
under ``CI=true``).  ``python tests/history/test_holes_0_10_vs_kafka.py --write`` records them again.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from kafkafmt.cli import main
from kafkafmt.viz import compaction as c


def oracle_files(version: str) -> dict:
    """What ``version``'s own Log and cleaner leave from notebook 09's holes workload."""
    from kafkarig.old_cleaner import OldCleaner
    with tempfile.TemporaryDirectory(prefix="kafkafmt-holes-") as root, OldCleaner(version) as kafka:
        d = Path(root) / "t-0"
        end = kafka.write(d, c.HOLES_PROPS, [(c.T0, b) for b in c.holes_input(c.real_holes()["workload"]["keys"])])
        kafka.clean(d, now=c.HOLES_CLEAN_AT, props=c.HOLES_PROPS, recovery_point=end, dedupe_buffer_size=1 << 20)
        return c.partition_files(Path(root))


def test_kafkafmt_clean_0_10_2_leaves_the_real_holes(tmp_path, capsys):
    rec = c.real_holes()
    assert rec["release"] == c.HOLES_RELEASE and rec["line"] == c.HOLES_LINE == "0.10.2"
    d = tmp_path / "t-0"
    d.mkdir()
    c.append(d, c.HOLES_PROPS, c.holes_input(rec["workload"]["keys"]), c.T0, line=c.HOLES_LINE)
    args = ["clean", str(d), "--now", str(c.HOLES_CLEAN_AT), "--kafka-line", c.HOLES_LINE]
    for k, v in c.HOLES_PROPS.items():
        args += ["-c", f"{k}={v}"]
    assert main(args) == 0, capsys.readouterr().err
    mine, real = c.partition_files(tmp_path), rec["files"]
    assert sorted(n for n in set(mine) | set(real) if mine.get(n) != real.get(n)) == []


def test_the_record_holds_holes():
    """The recorded segments hold rebuilt wrappers whose inner offsets skip (what notebook 09 shows)."""
    data = c.real_holes_data()
    assert len(data["holed"]) >= 2
    rel = [r["relative offset (stored)"] for r in data["rows"]]
    assert rel[0] == 0 and any(b - a > 1 for a, b in zip(rel, rel[1:]))
    assert [r["absolute offset (consumer)"] for r in data["rows"]] == [r.offset for r in data["wrapper"].records()]


@pytest.mark.java
def test_the_record_is_the_release_s():
    from old_release_fixtures import releases_or_skip
    releases_or_skip(c.HOLES_RELEASE)
    assert oracle_files(c.HOLES_RELEASE) == c.real_holes()["files"]


if __name__ == "__main__" and "--write" in sys.argv:
    sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "conformance"), str(Path(__file__).parent.parent)]
    c.REAL_HOLES_FILE.parent.mkdir(parents=True, exist_ok=True)
    keys = 12
    c.real_holes.cache_clear()
    c.REAL_HOLES_FILE.write_text(json.dumps({
        "release": c.HOLES_RELEASE, "line": c.HOLES_LINE,
        "workload": {"keys": keys, "function": "kafkafmt.viz.compaction.holes_input", "props": c.HOLES_PROPS,
                     "written_at": c.T0, "cleaned_at": c.HOLES_CLEAN_AT, "dedupe_buffer_size": 1 << 20},
        "files": {}}, indent=1) + "\n")  # the keys oracle_files reads, before the files are known
    files = oracle_files(c.HOLES_RELEASE)
    rec = json.loads(c.REAL_HOLES_FILE.read_text())
    rec["files"] = files
    c.REAL_HOLES_FILE.write_text(json.dumps(rec, indent=1) + "\n")
    print(f"wrote {c.REAL_HOLES_FILE}: {len(files)} files")
