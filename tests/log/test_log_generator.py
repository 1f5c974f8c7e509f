"""The sample-log generator (kafkafmt gen): reproducible, loadable by kafkafmt and by Kafka 3.9.2 itself,
skew models as stated, a format upgrade half way, atomic output."""
from __future__ import annotations

import os
import random
import shutil
import statistics
from pathlib import Path

import pytest

from kafkafmt.errors import ConfigError, KafkaFmtError
from kafkafmt.gen import generator as gen_mod
from kafkafmt.gen.generator import MANIFEST, generate_logs, parse_size
from kafkafmt.gen.workload_file import WorkloadError, load_workload, log_config, parse_workload, shipped_workloads
from kafkafmt.gen.workloads import ClockModel, murmur2, partition_for_key
from kafkafmt.log import Log, SimulatedClock
from kafkafmt.log.files import read_checkpoint
from kafkafmt.records import MemoryRecords
from kafkafmt.records.columnar import batches_table, records_table

V1_THEN_V2 = [{"from_ms": 0, "magic": 1}, {"from_ms": 30000, "magic": 2}]
TINY = {
    "name": "tiny", "seed": 7, "duration_ms": 60000,
    "broker": {"inter.broker.protocol.version": "2.8", "log.retention.check.interval.ms": 10000},
    "topics": [
        {"name": "clicks", "partitions": 2,
         "config": {"message.format.version": "0.10.2", "segment.bytes": 16384, "segment.ms": 20000},
         "changes": [{"at_ms": 30000, "config": {"message.format.version": "3.0"}}],
         "producers": [
             {"name": "exact", "rate": 40, "batch_records": [5, 5], "keys": 50, "value_bytes": [10, 30],
              "codec": "lz4", "magic": V1_THEN_V2},
             {"name": "late", "rate": 10, "keys": 50, "codec": "gzip", "magic": V1_THEN_V2,
              "clock": {"model": "wrong", "offset_ms": -3600000}}]},
        {"name": "skewed", "partitions": 1, "config": {"segment.bytes": 32768},
         "producers": [{"name": "normal", "rate": 60, "batch_records": [20, 20], "keys": 0,
                        "clock": {"model": "normal", "sigma_ms": 200}}]},
        {"name": "audit", "partitions": 1,
         "config": {"message.timestamp.type": "LogAppendTime", "segment.bytes": 8192, "retention.bytes": 20000},
         "producers": [{"name": "svc", "rate": 30, "keys": 0, "codec": "zstd", "headers": 1}]},
    ]}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "tiny"
    manifest = generate_logs(parse_workload(TINY), out, jobs=1, progress=False)
    return out, manifest


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _partition_bytes(d: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(d.glob("*.log")))


def test_same_seed_same_bytes_in_a_process_pool_too(tiny, tmp_path):
    out, _ = tiny
    again = tmp_path / "tiny"
    generate_logs(parse_workload(TINY), again, jobs=2, progress=False)
    a, b = _files(out), _files(again)
    assert sorted(a) == sorted(b)
    assert a == b  # every file, byte for byte (segments, indexes, checkpoints, manifest)
    other = tmp_path / "other"
    generate_logs(parse_workload({**TINY, "seed": 8, "topics": TINY["topics"][1:2]}), other, jobs=1, progress=False)
    assert _partition_bytes(other / "skewed-0") != _partition_bytes(out / "skewed-0")


def test_layout_checkpoints_and_kafkafmt_loader(tiny, tmp_path):
    out, manifest = tiny
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)  # recovery rewrites indexes: never on the shared output
    names = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert names == ["audit-0", "clicks-0", "clicks-1", "skewed-0"]
    parts = {(p["topic"], p["partition"]): p for p in manifest["partitions"]}
    first_base = {k: min(int(s.name[:20]) for s in (out / f"{k[0]}-{k[1]}").glob("*.log")) for k in parts}
    for ckpt, key in (("recovery-point-offset-checkpoint", "recovery_point"),
                      ("log-start-offset-checkpoint", "log_start_offset"),
                      ("replication-offset-checkpoint", "high_watermark")):
        rows = read_checkpoint(out / ckpt)
        # LogManager.checkpointLogStartOffsetsInDir: a log start offset only above the first segment's base
        want = {k: v[key] for k, v in parts.items()
                if key != "log_start_offset" or v[key] > first_base[k]}
        assert {(t, int(p)): int(o) for t, p, o in rows} == want
    # a broker's log directory after a clean shutdown: the marker at the top, nothing of LogManager's below
    assert (out / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":-1}'
    assert not (out / ".lock").exists()
    assert {p.name for d in out.iterdir() if d.is_dir() for p in d.iterdir()
            if not p.name.endswith((".log", ".index", ".timeindex"))} == {"leader-epoch-checkpoint"}
    for (topic, p), info in parts.items():
        d = out / f"{topic}-{p}"
        assert (d / "leader-epoch-checkpoint").exists()
        segs = sorted(d.glob("*.log"))
        assert len(segs) == info["segments"] and all(s.with_suffix(".timeindex").exists() for s in segs)
        cfg = TINY["topics"][[t["name"] for t in TINY["topics"]].index(topic)]["config"]
        log = Log.open(copy / d.name, log_config(cfg, TINY["broker"]), SimulatedClock(info["end_ms"]),
                       clean_shutdown=False)
        try:  # recovery from scratch finds every batch valid and the same offsets
            assert (log.log_start_offset, log.log_end_offset) == (info["log_start_offset"], info["log_end_offset"])
            n = sum(len(records_table(s.read_bytes(), include_data=False)) for s in segs)
            assert n == info["log_end_offset"] - info["log_start_offset"]
            assert n == sum(q["records"] for q in info["producers"]) or topic == "audit"  # audit: retention
        finally:
            log.close_handlers()
    assert parts[("audit", 0)]["log_start_offset"] > 0  # retention.bytes deleted its oldest segments


def test_format_upgrade_half_way_gives_both_magics(tiny):
    out, manifest = tiny
    change_ms = manifest["start_ms"] + 30000
    for p in (0, 1):
        t = batches_table(_partition_bytes(out / f"clicks-{p}")).to_pylist()
        magics = [b["magic"] for b in t]
        assert set(magics) == {1, 2}
        first_v2 = magics.index(2)
        assert set(magics[first_v2:]) == {2}  # v1 before the upgrade, v2 after, never back
        assert all(b["max_timestamp"] < change_ms for b in t[:first_v2] if b["producer_id"] == -1)
        assert all(b["producer_id"] >= gen_mod.FIRST_PRODUCER_ID for b in t[first_v2:])  # idempotent producers
    # LogAppendTime topic: the broker's time in every batch; zstd and headers kept
    audit = batches_table(_partition_bytes(out / "audit-0")).to_pylist()
    assert {b["timestamp_type"] for b in audit} == {1} and {b["compression"] for b in audit} == {4}
    assert [b["max_timestamp"] for b in audit] == sorted(b["max_timestamp"] for b in audit)


def _t_two_sided_tail(x: float, df: float, steps: int = 20000) -> float:
    """P(|T| > x) for Student's t with ``df`` degrees of freedom (Simpson's rule over the density)."""
    import math
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    h = x / steps
    f = [c * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2) for i in range(steps + 1)]
    integral = h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))
    return 1 - 2 * integral


def test_skew_models_give_the_stated_distributions():
    rng, start = random.Random(1), 1_700_000_000_000
    normal = [ClockModel("normal", sigma_ms=250).skew(rng, start, start) for _ in range(20000)]
    assert abs(statistics.fmean(normal)) < 10 and abs(statistics.pstdev(normal) - 250) < 10
    heavy = [ClockModel("heavy_tailed", scale_ms=100, df=1.5).skew(rng, start, start) for _ in range(20000)]
    gauss_like = sum(abs(x) > 500 for x in normal) / len(normal)  # beyond 2 sigma: 4.55 %
    assert abs(gauss_like - 0.0455) < 0.005
    for k in (1, 3, 10):  # Student t with 1.5 degrees of freedom, scaled by 100 ms: the tails of the closed form
        observed = sum(abs(x) > 100 * k for x in heavy) / len(heavy)
        assert abs(observed - _t_two_sided_tail(k, 1.5)) < 0.01, (k, observed)
    assert _t_two_sided_tail(10, 1.5) > 100 * 1.5e-23  # the normal's tail at 10 sigma is nothing
    wrong = {ClockModel("wrong", offset_ms=-3600000).skew(rng, start + i, start) for i in range(100)}
    assert wrong == {-3600000}
    assert ClockModel("negative", base_ms=-5000).skew(rng, start + 42, start) + start + 42 == -5000 + 42
    with pytest.raises(ValueError):
        ClockModel("gaussian")


def test_skew_in_the_generated_log(tiny):
    out, manifest = tiny
    start = manifest["start_ms"]
    # normal clock, 20 records per batch sent at one instant: within-batch spread = sigma * sqrt(19/20)
    t = records_table(_partition_bytes(out / "skewed-0"), include_data=False).to_pandas()
    dev = t["timestamp_ms"] - t.groupby("batch_position")["timestamp_ms"].transform("mean")
    assert abs(dev.std() - 200 * (19 / 20) ** 0.5) < 15
    # the badly wrong clock: its records sit an hour behind the exact producer's, in the same partition
    for p in (0, 1):
        r = records_table(_partition_bytes(out / f"clicks-{p}")).to_pylist()
        late = [x["timestamp_ms"] for x in r if x["key"] is not None and x["timestamp_ms"] < start]
        exact = [x["timestamp_ms"] for x in r if x["timestamp_ms"] >= start]
        assert late and exact and all(start - 3600000 <= ts < start - 3600000 + 60000 for ts in late)
        assert all(start <= ts <= start + 60000 for ts in exact)


def test_keys_go_where_kafkas_partitioner_puts_them(tiny):
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2  # the peer's port of Utils.murmur2
    rng = random.Random(3)
    for _ in range(500):
        b = rng.randbytes(rng.randrange(0, 24))
        assert murmur2(b) & 0xFFFFFFFF == kafka_python_murmur2(b) & 0xFFFFFFFF
    out, _ = tiny
    for p in (0, 1):
        keys = {x["key"] for x in records_table(_partition_bytes(out / f"clicks-{p}")).to_pylist()}
        assert keys and all(partition_for_key(k, 2) == p for k in keys)


def test_negative_timestamps_for_a_kip228_topic(tmp_path):
    doc = {"name": "neg", "duration_ms": 5000, "topics": [{"name": "history", "producers": [
        {"name": "archive", "rate": 50, "keys": 10, "clock": {"model": "negative", "base_ms": -86400000}}]}]}
    generate_logs(parse_workload(doc), tmp_path / "neg", jobs=1, progress=False)
    d = tmp_path / "neg" / "history-0"
    batches = list(MemoryRecords(_partition_bytes(d)).batches())
    ts = [r.timestamp for b in batches for r in b.records()]
    assert batches and all(-86400000 <= t < -86400000 + 5000 for t in ts)  # the producer's 1969 times, kept
    # what a Kafka 3.9 leader does with them: the in-place path rewrites the attributes (the proposal's
    # isTimestampExtended bit is not Kafka's and is dropped), maxTimestamp stays NO_TIMESTAMP (-1), so the
    # time index never gets an entry
    assert all(b.attributes & 0x80 == 0 and b.max_timestamp == -1 for b in batches)
    assert all(p.stat().st_size == 0 for p in d.glob("*.timeindex"))


def test_bounds_refuse_batches_and_output_is_atomic(tmp_path, monkeypatch):
    doc = {"name": "bounded", "duration_ms": 20000, "topics": [{
        "name": "m", "config": {"message.timestamp.before.max.ms": 1000},
        "producers": [{"name": "ok", "rate": 20}, {"name": "old", "rate": 20,
                                                   "clock": {"model": "wrong", "offset_ms": -5000}}]}]}
    m = generate_logs(parse_workload(doc), tmp_path / "b", jobs=1, progress=False)
    prods = {q["name"]: q for q in m["partitions"][0]["producers"]}
    assert prods["ok"]["rejected"] == {} and prods["ok"]["records"] > 0
    assert prods["old"]["records"] == 0 and sum(prods["old"]["rejected"].values()) > 0
    # a failure half way leaves neither the output nor a temporary directory; an existing output survives
    real = gen_mod.generate_partition

    def failing(scenario, topic, partition, root, **kw):
        if topic == "audit":
            raise RuntimeError("disk full")
        return real(scenario, topic, partition, root, **kw)
    monkeypatch.setattr(gen_mod, "generate_partition", failing)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(RuntimeError):
        generate_logs(parse_workload(TINY), tmp_path / "x", jobs=1, progress=False)
    with pytest.raises(RuntimeError):
        generate_logs(parse_workload(TINY), tmp_path / "b", jobs=1, progress=False, force=True)
    assert sorted(os.listdir(tmp_path)) == before
    assert (tmp_path / "b" / MANIFEST).exists() and (tmp_path / "b" / "m-0").is_dir()
    with pytest.raises(WorkloadError):  # no silent overwrite
        generate_logs(parse_workload(doc), tmp_path / "b", jobs=1, progress=False)


@pytest.mark.parametrize("patch, words", [
    ({"topics": []}, "at least one topic"),
    ({"colour": 1}, "unknown key(s) colour"),
    ({"topics": [{"name": "t", "producers": [{"codec": "zstd", "magic": 1}]}]}, "zstd needs magic 2"),
    ({"topics": [{"name": "t", "producers": [{"clock": {"model": "sundial"}}]}]}, "clock model"),
    ({"topics": [{"name": "t", "config": {"segment.bytes": "big"}, "producers": [{}]}]}, "segment.bytes"),
    ({"topics": [{"name": "t", "config": {"message.timestamp.type": "Now"}, "producers": [{}]}]},
     "message.timestamp.type"),
])
def test_bad_workloads_are_refused_with_the_key(patch, words):
    with pytest.raises(ConfigError) as e:
        parse_workload({**TINY, **patch})
    assert isinstance(e.value, KafkaFmtError) and words in e.value.reason


def test_shipped_workloads_parse_and_sizes():
    assert {"default", "kip228"} <= set(shipped_workloads())
    for name in shipped_workloads():
        sc = load_workload(name)
        assert sc.topics and sc.expected_bytes() > 0
    assert parse_size("1GB") == 1 << 30 and parse_size("200MiB") == 200 << 20 and parse_size(4096) == 4096
    with pytest.raises(WorkloadError):
        parse_size("lots")


def test_cli_gen_one_line_errors_and_help(tmp_path, capsys):
    from kafkafmt.cli import main
    with pytest.raises(SystemExit):
        main(["gen", "--help"])
    assert "--size" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("topics: [{name: t, producers: [{rate: -1}]}]\n")
    assert main(["gen", "--scenario", str(bad), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().count("\n") == 0 and "rate must be a number >= 0.0" in err
    assert not (tmp_path / "o").exists()


def test_kafka_loads_and_dumps_the_generated_logs(tiny, log_oracle, tmp_path):
    """Kafka 3.9.2's own UnifiedLog loads every partition (recovery from offset 0 finds the same log end),
    and kafka-dump-log deep-iterates every segment and finds no index mismatch."""
    out, manifest = tiny
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)  # Kafka's loader may rewrite index files: never on the generated output
    names = {t["name"]: t for t in TINY["topics"]}
    for info in manifest["partitions"]:
        d = copy / f"{info['topic']}-{info['partition']}"
        props = {k: str(v) for k, v in names[info["topic"]]["config"].items() if not k.startswith("message.format")}
        st = log_oracle.call("open", log="gen", dir=str(d), config=props, clean=False, recoveryPoint=0,
                             logStartOffset=info["log_start_offset"])
        try:
            assert (st["logStartOffset"], st["logEndOffset"]) == (info["log_start_offset"], info["log_end_offset"])
            assert len(st["segments"]) == info["segments"]
        finally:
            log_oracle.call("closeHandlers", log="gen")
        d = out / f"{info['topic']}-{info['partition']}"
        records = 0
        for seg in sorted(d.glob("*.log")):
            lines, err, exc = log_oracle.dump("--files", str(seg), "--deep-iteration")
            assert exc is None and not err, (seg, err, exc)
            records += sum(1 for ln in lines if ln.startswith("| offset: "))
        assert records == info["log_end_offset"] - info["log_start_offset"]
        for idx in sorted(d.glob("*.index")) + sorted(d.glob("*.timeindex")):
            lines, err, exc = log_oracle.dump("--files", str(idx), "--verify-index-only")
            assert exc is None and not err and not any("Mismatches" in ln for ln in lines), (idx, lines, err)


def test_json_workloads_and_size_targets(tmp_path):
    import json
    doc = {**TINY, "topics": TINY["topics"][1:]}  # skewed + audit
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    sc = load_workload(path)
    assert [t.name for t in sc.topics] == ["skewed", "audit"]
    (tmp_path / "bad.json").write_text("{topics: ")
    with pytest.raises(WorkloadError, match="not valid JSON"):
        load_workload(tmp_path / "bad.json")
    target = 256 * 1024
    m = generate_logs(sc, tmp_path / "sized", size="256KB", jobs=1, progress=False)
    appended = [p["appended_bytes"] for p in m["partitions"]]
    assert m["size"] == target and m["rate_factor"] > 0
    # each partition stops at the first batch that reaches its share: the total overshoots by < one batch each
    assert target <= sum(appended) < target + 2 * 8192
