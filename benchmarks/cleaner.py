"""kafkafmt's log cleaner against Kafka 3.9.2's own, on the same seeded partitions (``make bench-cleaner``).

Two measurements, each a ratio of runs made in this one run, interleaved (kafkafmt, Kafka, kafkafmt,
Kafka ...), and each rate the **median** of its runs, per wall second and per CPU second of the
cleaning thread:

* **warm**: one cleaning pass (``Log.clean`` / ``CleanerThread.cleanFilthiestLog``) over a fresh copy of
  the same partition, timed around the pass only (opening the log is not timed): kafkafmt in this
  process after one untimed pass (its kernels compiled or loaded), Kafka inside the oracle's JVM
  (conformance/oracle/CleanerOracle.java, op ``clean``'s ``cleanNanos``) after a few untimed passes
  (the JIT warm).  Partitions: v2 uncompressed, v2 lz4, v1 gzip.  Rate = dirty bytes (the segments
  below the active one) / seconds.
* **end to end**: ``kafkafmt clean DIR`` as a new process against a new JVM that opens the partition
  and runs Kafka's cleaner on it (the oracle's ``clean`` op, its start-up and the log's loading
  included), on one larger v2 lz4 partition; peak RSS of each process (``ru_maxrss``).

The cleaner settings are Kafka's defaults (dedupe buffer 128 MiB, io buffer 512 KiB) unless given.
Results: a table on stdout and ``build/bench/cleaner.json``; the machine and its load average printed.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "build" / "bench"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "conformance"))  # kafkarig: the cleaner oracle

SEED = 17
T0 = 1_700_000_000_000
TOPIC_PROPS = {"cleanup.policy": "compact", "segment.bytes": str(1 << 20), "min.cleanable.dirty.ratio": "0.01",
               "delete.retention.ms": "86400000", "file.delete.delay.ms": "0"}
WARM = (("v2-none", 2, "none"), ("v2-lz4", 2, "lz4"), ("v1-gzip", 1, "gzip"))


def _props(magic: int, segment_bytes: int) -> dict:
    p = dict(TOPIC_PROPS, **{"segment.bytes": str(segment_bytes)})
    if magic < 2:
        p["message.format.version"] = "0.10.2"
    return p


def make_partition(d: Path, magic: int, codec: str, size: int, *, keys: int = 20_000, per_batch: int = 50,
                   segment_bytes: int = 1 << 20, seed: int = SEED) -> Path:
    """A partition directory ``d`` (``<topic>-<partition>``) of about ``size`` bytes of batches of
    ``per_batch`` records: keys drawn from ``keys`` (a few hot, most cold), values of 60-140 bytes,
    5% tombstones, timestamps 10 ms apart; written by kafkafmt's follower append (Kafka's layout)."""
    import warnings

    from kafkafmt.constants import CompressionType, TimestampType
    from kafkafmt.log import Log, LogConfig, SimulatedClock
    from kafkafmt.records import MemoryRecordsBuilder
    rng = random.Random(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = LogConfig.from_properties(_props(magic, segment_bytes))
    d.mkdir(parents=True, exist_ok=True)
    log = Log(d, config, SimulatedClock(T0), clean_shutdown=True)
    comp = CompressionType.from_name(codec)
    offset, ts, written = 0, T0, 0
    filler = bytes(rng.choice(b"abcdefghij ") for _ in range(4096))
    while written < size:
        b = MemoryRecordsBuilder(magic, comp, TimestampType.CREATE_TIME, offset,
                                 partition_leader_epoch=0 if magic >= 2 else -1)
        for _ in range(per_batch):
            k = rng.randrange(keys // 20) if rng.random() < 0.3 else rng.randrange(keys)
            if rng.random() < 0.05:
                value = None
            else:
                at = rng.randrange(3900)
                value = b'{"n":%d,"s":"' % offset + filler[at:at + rng.randrange(40, 120)] + b'"}'
            b.append(ts, b"key-%06d" % k, value)
            ts += 10
        data = b.build()
        log.append_as_follower(data)
        offset += per_batch
        written += len(data)
    log.close()
    return d


def dirty_bytes(d: Path) -> int:
    """The bytes of every segment but the active (last) one: what one pass reads as dirty."""
    logs = sorted(d.glob("*.log"))
    return sum(p.stat().st_size for p in logs[:-1])


# ------------------------------------------------------------------------------------------------
# warm: one pass in this process against one pass inside the oracle's JVM, interleaved
def _fresh_copy(src: Path, work: Path, tag: str) -> Path:
    parent = work / tag
    shutil.rmtree(parent, ignore_errors=True)
    parent.mkdir(parents=True)
    dst = parent / src.name
    shutil.copytree(src, dst)
    return dst


def clean_kafkafmt(d: Path, magic: int, segment_bytes: int, now: int, cleaner: dict) -> tuple[float, float]:
    """Wall and CPU seconds of one ``Log.clean`` pass (the log opened outside the timing)."""
    import warnings

    from kafkafmt.log import Log, LogConfig, SimulatedClock
    from kafkafmt.log.cleaner.offset_map import CleanerConfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = LogConfig.from_properties(_props(magic, segment_bytes))
    cfg = CleanerConfig(dedupe_buffer_size=cleaner["dedupeBufferSize"], io_buffer_size=cleaner["ioBufferSize"])
    log = Log(d, config, SimulatedClock(now), clean_shutdown=True)
    try:
        c, t = time.thread_time(), time.perf_counter()
        r = log.clean(now=now, cleaner=cfg)
        dt, dc = time.perf_counter() - t, time.thread_time() - c
    finally:
        log.close()
    if not r.cleaned:
        raise RuntimeError(f"kafkafmt did not clean {d}")
    return dt, dc


def clean_kafka(oracle, d: Path, magic: int, segment_bytes: int, now: int, cleaner: dict) -> tuple[float, float]:
    """Wall and CPU seconds (of the cleaning thread) of one ``cleanFilthiestLog`` in the oracle's JVM."""
    r = oracle.clean(d, now=now, config=_props(magic, segment_bytes), cleaner=cleaner)
    if not r["cleaned"]:
        raise RuntimeError(f"Kafka did not clean {d}")
    return r["cleanNanos"] / 1e9, r.get("cleanCpuNanos", 0) / 1e9


def _same_files(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir() if p.suffix in (".log", ".index", ".timeindex"))
    return names == sorted(p.name for p in b.iterdir() if p.suffix in (".log", ".index", ".timeindex")) and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names)


def measure_warm(oracle, work: Path, size: int, runs: int, cleaner: dict, segment_bytes: int,
                 progress=print) -> list[dict]:
    now = T0 + 10 ** 9
    rows = []
    for name, magic, codec in WARM:
        src = make_partition(work / "src" / name / "t-0", magic, codec, size, segment_bytes=segment_bytes)
        dirty = dirty_bytes(src)
        for _ in range(1):  # warm-up, untimed: kafkafmt's kernels loaded, Kafka's JIT warm
            a = _fresh_copy(src, work, "fmt")
            clean_kafkafmt(a, magic, segment_bytes, now, cleaner)
        for _ in range(3):
            b = _fresh_copy(src, work, "kafka")
            clean_kafka(oracle, b, magic, segment_bytes, now, cleaner)
        identical = _same_files(a, b)
        fmt, kafka = [], []
        for _ in range(runs):
            fmt.append(clean_kafkafmt(_fresh_copy(src, work, "fmt"), magic, segment_bytes, now, cleaner))
            kafka.append(clean_kafka(oracle, _fresh_copy(src, work, "kafka"), magic, segment_bytes, now, cleaner))
        f, k = statistics.median(x for x, _ in fmt), statistics.median(x for x, _ in kafka)
        fc, kc = statistics.median(c for _, c in fmt), statistics.median(c for _, c in kafka)
        row = {"partition": name, "dirty_bytes": dirty, "runs": runs, "identical": identical,
               "kafkafmt_s": fmt, "kafka_s": kafka, "kafkafmt_mb_s": dirty / f / 1e6, "kafka_mb_s": dirty / k / 1e6,
               "ratio": k / f, "kafkafmt_cpu_mb_s": dirty / fc / 1e6, "kafka_cpu_mb_s": dirty / kc / 1e6 if kc else None,
               "cpu_ratio": kc / fc if kc else None}
        progress(f"  warm {name}: kafkafmt {row['kafkafmt_mb_s']:.1f} MB/s, Kafka {row['kafka_mb_s']:.1f} MB/s, "
                 f"ratio {row['ratio']:.2f}; per CPU second: {row['kafkafmt_cpu_mb_s']:.1f} vs "
                 f"{(row['kafka_cpu_mb_s'] or 0):.1f} MB/s, ratio {(row['cpu_ratio'] or 0):.2f} (identical: {identical})")
        rows.append(row)
        shutil.rmtree(work / "src" / name, ignore_errors=True)
    return rows


# ------------------------------------------------------------------------------------------------
# end to end: a new process each
def make_large_partition(d: Path, size: int, *, codec: str = "lz4", templates: int = 4000,
                         segment_bytes: int = 128 << 20, seed: int = SEED) -> Path:
    """A large v2 partition quickly: ``templates`` batches made by :func:`make_partition`'s rules, then
    appended again and again with their base offset rewritten (outside a v2 batch's CRC), so later copies
    update the keys of earlier ones."""
    import warnings

    from kafkafmt.log import Log, LogConfig, SimulatedClock
    from kafkafmt.records import MemoryRecords
    tmpl_dir = d.parent / (d.name + ".templates")
    make_partition(tmpl_dir / "t-0", 2, codec, templates * 3500 // 2, keys=200_000, per_batch=50,
                   segment_bytes=1 << 30, seed=seed)
    data = b"".join(p.read_bytes() for p in sorted((tmpl_dir / "t-0").glob("*.log")))
    shutil.rmtree(tmpl_dir)
    spans = [(b.position, b.size_in_bytes, b.last_offset - b.base_offset + 1) for b in MemoryRecords(data).batches()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = LogConfig.from_properties(_props(2, segment_bytes))
    d.mkdir(parents=True, exist_ok=True)
    log = Log(d, config, SimulatedClock(T0), clean_shutdown=True)
    offset, written = 0, 0
    while written < size:
        for pos, n, count in spans:
            b = bytearray(data[pos:pos + n])
            b[0:8] = offset.to_bytes(8, "big")
            log.append_as_follower(bytes(b))
            offset += count
            written += n
            if written >= size:
                break
    log.close()
    return d


#: a small launcher between the benchmark and each measured process: Linux carries ``ru_maxrss`` across
#: fork and exec, so a child forked from this (large) process would report at least this process's size
_LAUNCH = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[2], sys.argv[2:])\n"
           "_, status, ru = os.wait4(pid, 0)\nopen(sys.argv[1], 'w').write(str(ru.ru_maxrss))\n"
           "sys.exit(os.waitstatus_to_exitcode(status))\n")


def _timed_process(cmd: list[str], stdin: str = "") -> tuple[float, int, str]:
    """Wall seconds, peak RSS (bytes: the child's ``ru_maxrss``, through :data:`_LAUNCH`) and stdout of
    one new process (the launcher's start, a few ms, is inside the time)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-S", "-c", _LAUNCH, rss.name, *cmd], input=stdin, stdout=out,
                           stderr=err, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        dt = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {err.read().strip()[-400:]}")
        return dt, int(open(rss.name).read()) * 1024, out.read()


def _kafkafmt_cmd(d: Path, now: int, segment_bytes: int, cleaner: dict) -> list[str]:
    cfg = dict(_props(2, segment_bytes), **{"log.cleaner.dedupe.buffer.size": cleaner["dedupeBufferSize"],
                                            "log.cleaner.io.buffer.size": cleaner["ioBufferSize"]})
    cmd = [sys.executable, "-m", "kafkafmt", "clean", str(d), "--now", str(now)]
    for k, v in cfg.items():
        cmd += ["-c", f"{k}={v}"]
    return cmd


def _java_cmd() -> list[str]:
    from kafkarig.cleaner_oracle import CLASSES, LIB
    return ["java", "-XX:+UseSerialGC", "-Xshare:auto", "-cp", f"{CLASSES}:{LIB}/*", "CleanerOracle"]


def measure_end_to_end(work: Path, size: int, runs: int, cleaner: dict, segment_bytes: int,
                       progress=print) -> dict:
    """``kafkafmt clean`` in a new process against a new JVM cleaning the same copy, interleaved."""
    now = T0 + 10 ** 9
    t = time.perf_counter()
    src = make_large_partition(work / "large" / "t-0", size, segment_bytes=segment_bytes)
    progress(f"  end to end: {dirty_bytes(src) / 2**20:.0f} MiB dirty partition made in {time.perf_counter() - t:.0f} s")
    req = json.dumps({"op": "clean", "dir": "", "now": now, "config": _props(2, segment_bytes), "cleaner": cleaner})
    fmt, kafka = [], []
    for _ in range(runs):
        a = _fresh_copy(src, work, "fmt")
        dt, rss, out = _timed_process(_kafkafmt_cmd(a, now, segment_bytes, cleaner))
        fmt.append((dt, rss))
        b = _fresh_copy(src, work, "kafka")
        r = json.loads(req)
        r["dir"] = str(b)
        dt, rss, out = _timed_process(_java_cmd(), json.dumps(r) + "\n")
        resp = json.loads(out.strip().splitlines()[-1])
        if not resp.get("ok") or not resp.get("cleaned"):
            raise RuntimeError(f"Kafka's cleaner process: {resp}")
        kafka.append((dt, rss))
    identical = _same_files(a, b)
    dirty = dirty_bytes(src)
    shutil.rmtree(work / "large", ignore_errors=True)
    f, k = statistics.median(x for x, _ in fmt), statistics.median(x for x, _ in kafka)
    row = {"dirty_bytes": dirty, "partition_bytes": size, "segment_bytes": segment_bytes, "runs": runs, "identical": identical,
           "kafkafmt_s": [x for x, _ in fmt], "kafka_s": [x for x, _ in kafka],
           "kafkafmt_peak_rss": max(r for _, r in fmt), "kafka_peak_rss": max(r for _, r in kafka), "ratio": k / f}
    progress(f"  end to end: kafkafmt clean {f:.2f} s, JVM {k:.2f} s, ratio {row['ratio']:.2f}; peak RSS kafkafmt "
             f"{row['kafkafmt_peak_rss'] / 2**20:.0f} MiB, JVM {row['kafka_peak_rss'] / 2**20:.0f} MiB "
             f"(identical files: {identical})")
    return row


# ------------------------------------------------------------------------------------------------
def _work_dir() -> Path:
    """tmpfs when there is one: both cleaners fsync the cleaned segment, and a disk would time the disk."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="kafkafmt-bench-cleaner-", dir=base))


def report(res: dict) -> str:
    m = res["machine"]
    lines = [f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average before "
             f"{' '.join(f'{x:.1f}' for x in res['load_before'])}, after {' '.join(f'{x:.1f}' for x in res['load_after'])}",
             f"cleaner settings: dedupe buffer {res['cleaner']['dedupeBufferSize'] >> 20} MiB, io buffer "
             f"{res['cleaner']['ioBufferSize'] >> 10} KiB; medians of interleaved runs; work dir {res['work_fs']}",
             "",
             f"{'warm pass':<12}{'dirty MiB':>10}{'kafkafmt MB/s':>15}{'Kafka MB/s':>12}{'ratio':>8}"
             f"{'CPU: kafkafmt':>15}{'Kafka':>8}{'ratio':>8}  identical"]
    for r in res["warm"]:
        lines.append(f"{r['partition']:<12}{r['dirty_bytes'] / 2**20:>10.1f}{r['kafkafmt_mb_s']:>15.1f}"
                     f"{r['kafka_mb_s']:>12.1f}{r['ratio']:>8.2f}{r['kafkafmt_cpu_mb_s']:>15.1f}"
                     f"{(r['kafka_cpu_mb_s'] or 0):>8.1f}{(r['cpu_ratio'] or 0):>8.2f}  {r['identical']}")
    e = res.get("end_to_end")
    if e:
        f, k = statistics.median(e["kafkafmt_s"]), statistics.median(e["kafka_s"])
        lines += ["", f"end to end (v2 lz4, {e['dirty_bytes'] / 2**20:.0f} MiB dirty in {e['segment_bytes'] >> 20} MiB "
                  f"segments, {e['runs']} run(s)): "
                  f"kafkafmt clean {f:.2f} s ({e['dirty_bytes'] / f / 1e6:.1f} MB/s), JVM process {k:.2f} s "
                  f"({e['dirty_bytes'] / k / 1e6:.1f} MB/s), ratio {e['ratio']:.2f}; peak RSS kafkafmt "
                  f"{e['kafkafmt_peak_rss'] / 2**20:.0f} MiB, JVM {e['kafka_peak_rss'] / 2**20:.0f} MiB; "
                  f"identical files: {e['identical']}"]
    lines.append("ratio = Kafka's time / kafkafmt's (above 1: kafkafmt faster); MB/s = MB of dirty log per wall "
                 "second; CPU: per CPU second of the cleaning thread (Python's thread_time, the JVM's "
                 "ThreadMXBean), steadier than wall time on a loaded machine")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=8 << 20, help="bytes per warm partition (default 8 MiB)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each cleaner per partition (default 5)")
    ap.add_argument("--e2e-size", type=int, default=256 << 20,
                    help="bytes of the end-to-end partition (default 256 MiB; 0 skips it)")
    ap.add_argument("--e2e-runs", type=int, default=1)
    ap.add_argument("--dedupe-buffer", type=int, default=128 << 20, help="log.cleaner.dedupe.buffer.size")
    ap.add_argument("--io-buffer", type=int, default=512 << 10, help="log.cleaner.io.buffer.size")
    ap.add_argument("--segment-bytes", type=int, default=1 << 20, help="segment.bytes of the warm partitions")
    ap.add_argument("--quick", action="store_true", help="2 MiB partitions, 3 runs, 32 MiB end to end")
    args = ap.parse_args(argv)
    if args.quick:
        args.size, args.runs, args.e2e_size = 2 << 20, 3, 32 << 20
    from bench import machine
    from kafkarig.cleaner_oracle import KafkaCleanerOracle, _missing_reason
    reason = _missing_reason()
    if reason:
        print(f"bench-cleaner: skipped: {reason}")
        return 0
    cleaner = {"dedupeBufferSize": args.dedupe_buffer, "ioBufferSize": args.io_buffer}
    work = _work_dir()
    res = {"machine": machine(), "load_before": os.getloadavg(), "cleaner": cleaner, "work_fs": str(work.parent),
           "started": time.time()}
    oracle = KafkaCleanerOracle()
    try:
        print(f"bench-cleaner: warm passes on {args.size >> 20} MiB partitions, {args.runs} runs each", flush=True)
        res["warm"] = measure_warm(oracle, work, args.size, args.runs, cleaner, args.segment_bytes,
                                   progress=lambda s: print(s, flush=True))
    finally:
        oracle.close()
    try:
        if args.e2e_size:
            seg = min(128 << 20, max(args.e2e_size // 8, 1 << 20))  # several segments: the active one is not cleaned
            res["end_to_end"] = measure_end_to_end(work, args.e2e_size, args.e2e_runs, cleaner, seg,
                                                   progress=lambda s: print(s, flush=True))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["load_after"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cleaner.json").write_text(json.dumps(res, indent=1))
    print()
    print(report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
