"""``kafkafmt clean`` says which Kafka line's cleaner it applies and what the other lines' cleaners would do
differently with the directory's data, so a 4.x broker's user does not apply 3.9's cleaner by accident."""
from __future__ import annotations

from pathlib import Path

from kafkafmt.cli import main
from kafkafmt.config import BrokerConfig, LogConfig
from kafkafmt.log import Log, SimulatedClock
from kafkafmt.records import MemoryRecords
from kafkafmt.records.sample_sets import build, sample_records

T0 = 1_700_000_000_000
PROPS = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"}


def _v1_partition(root: Path) -> Path:
    """A compacted partition written in v1 (a 3.9 broker at IBP 2.8, message.format.version 0.10.0)."""
    d = root / "t-0"
    log = Log(d, LogConfig.from_properties({**PROPS, "message.format.version": "0.10.0"}, broker=BrokerConfig()),
              SimulatedClock(T0))
    for i in range(4):
        log.append_as_leader(build(1, "none", sample_records(2, seed=i)))
    log.close()
    return d


def _args(d: Path, *extra) -> list[str]:
    out = ["clean", str(d), "--now", str(T0 + 1000), "--dry-run", *extra]
    for k, v in PROPS.items():
        out += ["-c", f"{k}={v}"]
    return out


def test_clean_prints_the_line_and_what_4x_would_do(tmp_path, capsys):
    d = _v1_partition(tmp_path)
    assert main(_args(d)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Kafka line 3.9 (the default): the cleaner of Kafka 3.9; on the other lines, for this data:"
    assert out[1] == ("  on Kafka 4.4: the 8 v0/v1 batch(es) here are rewritten as v2 batches "
                      "(cleaner.legacy_to_v2: KAFKA-13093)")
    assert out[-1].startswith(("cleaned offsets", "nothing to clean"))  # then the pass's own report


def test_clean_on_44_says_the_older_lines_keep_v1(tmp_path, capsys):
    d = _v1_partition(tmp_path)
    assert main(_args(d, "--kafka-line", "4.4.0")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Kafka line 4.4 (--kafka-line): the cleaner of Kafka 4.4; on the other lines, for this data:"
    assert out[1] == ("  on Kafka 0.9 … 3.9: the 8 v0/v1 batch(es) here are kept as v0/v1 "
                      "(cleaner.legacy_to_v2: KAFKA-13093)")


def test_a_v2_partition_names_no_rewrite(tmp_path, capsys):
    d = tmp_path / "t-0"
    log = Log(d, LogConfig.from_properties(PROPS), SimulatedClock(T0))
    log.append_as_leader(build(2, "none", sample_records(3, seed=1)))
    log.close()
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    assert main(_args(d)) == 0
    out = capsys.readouterr().out
    assert "v0/v1" not in out and "(cleaner.retain_last_batch: KAFKA-20452)" in out
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before  # --dry-run: the line text reads only
    assert {b.magic for b in MemoryRecords(before["00000000000000000000.log"]).batches()} == {2}


def test_an_old_line_names_what_its_neighbours_do(tmp_path, capsys):
    """On 0.10.0 a v1 partition hears of the rows around it: how far 0.9's and 0.10.1's passes reach
    (KAFKA-3587, KAFKA-3894), the wrapper magic fixed by KAFKA-4298, the epoch checkpoint of 0.11 … 2.0."""
    d = _v1_partition(tmp_path)
    assert main(_args(d, "--kafka-line", "0.10.0")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Kafka line 0.10.0 (--kafka-line): the cleaner of Kafka 0.10.0; on the other lines, for this data:"
    notes = [line for line in out if line.startswith("  on Kafka")]
    assert ("  on Kafka 0.10.1 … 4.4: a pass ends at the record that fills the offset map (cleaner.map_reach: "
            "KAFKA-3894)") in notes
    assert any(n.startswith("  on Kafka 0.9: a pass maps only whole segments") for n in notes)
    assert ("  on Kafka 0.10.1 … 4.4: a rebuilt compressed v0/v1 wrapper keeps its own magic "
            "(cleaner.legacy_rebuild_magic: KAFKA-4298)") in notes
    assert ("  on Kafka 0.11 … 2.0: an empty leader-epoch-checkpoint stays beside v0/v1 data "
            "(log.leader_epoch_cache: KIP-101)") in notes
    assert not any("deleteHorizonMs" in n for n in notes)  # no v2 batch here


def test_v2_data_on_28_hears_of_kip_534(tmp_path, capsys):
    d = tmp_path / "t-0"
    log = Log(d, LogConfig.from_properties(PROPS), SimulatedClock(T0))
    log.append_as_leader(build(2, "none", sample_records(3, seed=1)))
    log.close()
    assert main(_args(d, "--kafka-line", "2.8.2")) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  on Kafka")]
    assert ("  on Kafka 3.9 … 4.4: tombstones in the 1 v2 batch(es) here get a delete horizon in their batch header "
            "(deleteHorizonMs) (cleaner.delete_horizon: KIP-534)") in notes
