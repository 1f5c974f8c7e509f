"""kafkafmt benchmarks: ratios against kafka-python and aiokafka, measured in the same run on the same
bytes (issue 8 part 4).  ``make bench`` (full, < 10 min) or ``make bench-quick`` (< 2 min).

Prints a table and writes ``build/bench/results.json``.  Rates are records/s (or MB/s), the best of
a few repeats; ratios compare engines within this run only (absolute rates on a shared machine are
noisy, ratios taken together are not).  Each engine runs in its own process: aiokafka chooses its C
extension or pure Python when first imported (``AIOKAFKA_NO_EXTENSIONS``).

Tasks: deep decode (every record's offset, timestamp, key, value, headers; kafkafmt's ``decode_records``
and, as ``deep-reference``, its pure-Python reference decoder), columnar decode
(``records_table``: an Arrow table, CRCs checked; peers have no columnar reader, so they are timed
on their deep decode), build (batches of 1,000; ``build-columns``: the compiled column builder, v2 uncompressed, on
the same rows given as three lists, made outside the timing, alternating with the peers' builders run again
on the rows, so that the row's ratios share the machine's noise), down-conversion v2 -> v1/v0, shallow scan with CRC
of a large segment against one raw ``crc32c`` pass (with peak anonymous and file-backed memory),
log append as leader and as follower, and the numba first-use cost (cold compile, cached load, and the cache
`make setup` leaves; `--first-use` measures only that).
"""
from __future__ import annotations

import argparse
import json
import mmap
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "build" / "bench"
ENGINES = ("kafkafmt", "kafka-python", "aiokafka-c", "aiokafka-py")
DATASETS = ((2, "none"), (2, "gzip"), (2, "snappy"), (2, "lz4"), (2, "zstd"), (1, "none"), (1, "gzip"))
PER_BATCH = 1000
REPEAT_BUDGET_S = 1.5
SEED = 8


def make_records(n: int, seed: int = SEED) -> list[tuple[int, bytes, bytes]]:
    """``n`` records of about 100 bytes: a small JSON-like value (compressible as real ones are)."""
    rng = random.Random(seed)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(400)]
    out = []
    for i in range(n):
        value = b'{"id":%d,"user":"%s","event":"%s","amount":%d,"note":"%s %s %s"}' % (
            i, rng.choice(words), rng.choice(words), rng.randint(0, 10**6), rng.choice(words), rng.choice(words),
            rng.choice(words))
        out.append((1_700_000_000_000 + i * 7, b"user-%05d" % rng.randint(0, 50_000), value[:100].ljust(100, b" ")))
    return out


def dataset_name(magic: int, codec: str) -> str:
    return f"v{magic}-{codec}"


def write_batches(path: Path, records: list[tuple[int, bytes, bytes]], magic: int, codec: str) -> None:
    """``records`` as CreateTime batches (or message sets) of :data:`PER_BATCH` records by kafkafmt's builder
    (Kafka's byte layout), offsets from 0, written to ``path`` through a temporary file."""
    from kafkafmt.constants import CompressionType, TimestampType
    from kafkafmt.records import MemoryRecordsBuilder
    parts = []
    for s in range(0, len(records), PER_BATCH):
        b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), TimestampType.CREATE_TIME, s)
        for ts, k, v in records[s:s + PER_BATCH]:
            b.append(ts, k, v)
        parts.append(b.build())
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(b"".join(parts))
    tmp.replace(path)


def make_datasets(n: int, data_dir: Path) -> dict[str, Path]:
    """Each dataset built once by kafkafmt's builder (Kafka's byte layout) and shared by every engine."""
    data_dir.mkdir(parents=True, exist_ok=True)
    records = make_records(n)
    paths = {}
    for magic, codec in DATASETS:
        path = data_dir / f"{dataset_name(magic, codec)}-{n}.bin"
        if not path.exists():
            write_batches(path, records, magic, codec)
        paths[dataset_name(magic, codec)] = path
    return paths


# ------------------------------------------------------------------------------------------------
# worker side (one process per engine)
def _best(fn, repeats: int, budget_s: float = 3.0):
    best, result, spent = None, None, 0.0
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
        spent += dt
        if spent > budget_s:
            break
    return best, result


def run_worker(engine: str, plan: dict) -> None:
    """Serve tasks read one JSON line at a time from stdin; answer each with one JSON line (seconds of
    one run, and the records handled).  The harness alternates engines task by task, so that all
    engines share the machine's noise."""
    sys.path.insert(0, str(HERE))
    import engines as E  # noqa: E402  (benchmarks/ is not a package)
    records = make_records(plan["n"])
    cache: dict[str, bytes] = {}
    if engine == "kafkafmt":
        from kafkafmt.samples import sample_record_sets
        for _, data in sample_record_sets().values():  # load the compiled kernels outside any timing
            E.columnar_kafkafmt(data)
    columns = tuple(map(list, zip(*records)))  # build-columns' input: the same rows as three lists
    if engine == "kafkafmt":
        E.build_columns_kafkafmt(([1], [b"k"], [b"v"]), 2, "none", PER_BATCH)  # and the column builder's kernel
    print(json.dumps({"ready": engine}), flush=True)
    for line in sys.stdin:
        t = json.loads(line)
        task = t["task"]
        if "path" in t and t["path"] not in cache:
            cache.clear()
            cache[t["path"]] = Path(t["path"]).read_bytes()
        data = cache.get(t.get("path"))
        if task == "deep":
            fn = lambda: E.DEEP[engine](data)  # noqa: E731
        elif task == "columnar":
            fn = lambda: E.columnar_kafkafmt(data)  # noqa: E731
        elif task == "deep-reference":
            fn = lambda: E.deep_reference_kafkafmt(data)  # noqa: E731
        elif task == "build":
            fn = lambda: E.BUILD[engine](records, t["magic"], t["codec"], PER_BATCH)  # noqa: E731
        elif task == "build-columns" and engine == "kafkafmt":
            fn = lambda: E.build_columns_kafkafmt(columns, t["magic"], t["codec"], PER_BATCH)  # noqa: E731
        elif task == "build-columns":  # the peers' own builders, timed alternately with the column builder
            fn = lambda: E.BUILD[engine](records, t["magic"], t["codec"], PER_BATCH)  # noqa: E731
        elif task == "down":
            fn = lambda: E.DOWN[engine](data, t["to_magic"])  # noqa: E731
        else:
            raise ValueError(task)
        start = time.perf_counter()
        count = fn()
        print(json.dumps({"seconds": time.perf_counter() - start, "records": count}), flush=True)


class Worker:
    """One engine's long-lived process."""

    def __init__(self, engine: str, n: int):
        env = dict(os.environ)
        if engine == "aiokafka-py":
            env["AIOKAFKA_NO_EXTENSIONS"] = "1"
        self.engine = engine
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", engine, "--plan",
                                      json.dumps({"n": n})], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)
        self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"benchmark worker {self.engine} died (exit status {self.proc.wait()})")
        return json.loads(line)

    def run(self, task: dict) -> dict:
        self.proc.stdin.write(json.dumps(task) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def measure(tasks: list[dict], engines: list[str], n: int, repeats: int, progress) -> list[dict]:
    """Every task on every engine, engines alternating, up to ``repeats`` rounds; the best time of each.
    An engine whose runs of a task already took ``REPEAT_BUDGET_S`` is not run again (noise matters
    little over seconds, and the whole run must stay under 10 minutes)."""
    workers = {e: Worker(e, n) for e in engines}
    rows = []
    try:
        for t in tasks:
            best: dict[str, dict] = {}
            spent: dict[str, float] = {}
            for _ in range(repeats):
                for e in engines:
                    if t["task"] in ("columnar", "deep-reference") and e != "kafkafmt":
                        continue
                    if spent.get(e, 0.0) >= REPEAT_BUDGET_S:
                        continue
                    r = workers[e].run(t)
                    spent[e] = spent.get(e, 0.0) + r["seconds"]
                    if e not in best or r["seconds"] < best[e]["seconds"]:
                        best[e] = r
            for e, r in best.items():
                rows.append({**{k: v for k, v in t.items() if k != "path"}, "engine": e, **r})
            progress.update()
    finally:
        for w in workers.values():
            w.close()
    return rows


class MemorySampler:
    """Peak RssAnon and RssFile of this process (``/proc/self/status``), sampled every 2 ms."""

    def __init__(self):
        self.peak = {"RssAnon": 0, "RssFile": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now() -> dict[str, int]:
        vals = {}
        with open("/proc/self/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("RssAnon", "RssFile"):
                    vals[key] = int(rest.split()[0]) * 1024
        return vals

    def _run(self):
        while not self._stop.is_set():
            for k, v in self.now().items():
                self.peak[k] = max(self.peak[k], v)
            time.sleep(0.002)

    def __enter__(self):
        self.baseline = self.now()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        for k, v in self.now().items():
            self.peak[k] = max(self.peak[k], v)


def run_scan(path: str, mode: str) -> dict:
    """Shallow scan with CRC check over a read-only mmap, or one raw crc32c pass (``mode="raw"``)."""
    import crc32c

    from kafkafmt.records import MemoryRecords
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        with MemorySampler() as mem:
            t = time.perf_counter()
            if mode == "raw":
                view = memoryview(mm)
                crc, step, batches, invalid = 0, 64 << 20, 0, 0
                for s in range(0, len(mm), step):
                    crc = crc32c.crc32c(view[s:s + step], crc)
                view.release()
            else:
                batches = invalid = 0
                for b in MemoryRecords(mm).batches():
                    batches += 1
                    invalid += not b.is_valid()
                    del b
            seconds = time.perf_counter() - t
        size = len(mm)
    return {"mode": mode, "seconds": seconds, "bytes": size, "batches": batches, "invalid": invalid,
            "peak_anon": mem.peak["RssAnon"], "peak_file": mem.peak["RssFile"],
            "baseline_anon": mem.baseline["RssAnon"]}


def run_append(path: str, repeats: int) -> list[dict]:
    """Log append as leader (LogValidator assigns offsets) and as follower, against raw file appends."""
    from kafkafmt.log.clock import SimulatedClock
    from kafkafmt.log.log import Log
    from kafkafmt.records import MemoryRecords
    data = Path(path).read_bytes()
    from kafkafmt.layout import DEFAULT_BATCH
    client, batches = [], []  # a producer's batches start at offset 0; a leader's carry its epoch (0)
    for b in MemoryRecords(data).batches():  # (baseOffset and partitionLeaderEpoch are outside the CRC)
        c, f = bytearray(b.raw), bytearray(b.raw)
        DEFAULT_BATCH.put(c, 0, "baseOffset", 0)
        DEFAULT_BATCH.put(f, 0, "partitionLeaderEpoch", 0)
        client.append(bytes(c))
        batches.append(bytes(f))
    n = sum(b.count for b in MemoryRecords(data).batches())
    out = []
    for mode in ("leader", "follower", "raw-write"):
        def go():
            d = tempfile.mkdtemp(prefix="kafkafmt-bench-", dir=OUT)
            try:
                if mode == "raw-write":
                    with open(os.path.join(d, "segment"), "wb") as f:
                        for b in batches:
                            f.write(b)
                    return n
                log = Log(os.path.join(d, "bench-0"), clock=SimulatedClock(1_700_000_000_000))
                try:
                    if mode == "leader":
                        for b in client:
                            log.append_as_leader(b)
                    else:
                        for b in batches:
                            log.append_as_follower(b)
                finally:
                    log.close()
                return n
            finally:
                shutil.rmtree(d, ignore_errors=True)
        seconds, count = _best(go, repeats)
        out.append({"task": "append", "mode": mode, "seconds": seconds, "records": count, "bytes": len(data)})
    return out


def run_first_use() -> dict:
    """Seconds to import kafkafmt.records and decode in this (new) process: first one small v2 record set (a
    notebook's first ``records_table``: the v2 kernels), then every sample (every kernel, v0/v1 too); and how
    many kernels numba compiled and how many it loaded from its on-disk cache."""
    t = time.perf_counter()
    from kafkafmt.records import records_table
    from kafkafmt.records.fast import jit
    from kafkafmt.samples import sample_record_sets
    t_import = time.perf_counter() - t
    samples = sample_record_sets()
    t = time.perf_counter()
    records_table(samples["v2-headers.bin"][1])
    t_v2 = time.perf_counter() - t
    for _, data in samples.values():
        records_table(data)
    compiled, loaded = jit.cache_stats()
    return {"import": t_import, "first_v2": t_v2, "first_decode": time.perf_counter() - t, "compiled": compiled,
            "loaded": loaded, "cache_dirs": jit.cache_dirs()}


FIRST_USE_TARGET_S = 3.0


def first_use_line(fu: dict) -> str:
    """The first-use figures against the issue's 3 s target (import + first records_table of a v2 batch)."""
    def one(r):
        total = r["import"] + r["first_v2"]
        verdict = "met" if total < FIRST_USE_TARGET_S else f"missed by {total - FIRST_USE_TARGET_S:.2f} s"
        return (f"{total:.2f} s = import {r['import']:.2f} s + first v2 records_table {r['first_v2']:.2f} s "
                f"({verdict}; every kernel, v0/v1 too: {r['first_decode']:.2f} s; {r['compiled']} kernels compiled, "
                f"{r['loaded']} loaded from the cache)")
    parts = [f"cold (new process, empty NUMBA_CACHE_DIR) {one(fu['cold'])}",
             f"cached (new process, the cache the cold one left) {one(fu['cached'])}"]
    if "installed" in fu:
        parts.append(f"after `make setup` (its `kafkafmt warmup` cache, in a new process) {one(fu['installed'])}")
    return f"first use, target < {FIRST_USE_TARGET_S:.0f} s: " + "; ".join(parts)


# ------------------------------------------------------------------------------------------------
# harness side
def _sub(args: list[str], env: dict | None = None) -> object:
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True, env=e)
    if r.returncode:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"benchmark worker {args[:2]} failed")
    return json.loads(r.stdout.strip().splitlines()[-1])


def machine() -> dict:
    model = ""
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    import numba
    import pyarrow
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(), "python": platform.python_version(),
            "numba": numba.__version__, "pyarrow": pyarrow.__version__, "load_avg": os.getloadavg()}


def measure_first_use() -> dict:
    """The first-use worker in three new processes: an empty numba cache (compile), the cache it left (load),
    and the environment as it is (the cache ``make setup``'s ``kafkafmt warmup`` left, as a notebook finds it)."""
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold = _sub(["--worker", "first-use", "--plan", "{}"], {"NUMBA_CACHE_DIR": cache})
        warm = _sub(["--worker", "first-use", "--plan", "{}"], {"NUMBA_CACHE_DIR": cache})
    return {"cold": cold, "cached": warm, "installed": _sub(["--worker", "first-use", "--plan", "{}"])}


def tile_segment(src: Path, size: int, dest: Path) -> Path:
    """A segment of about ``size`` bytes: the dataset's batches repeated (a shallow scan reads headers only)."""
    if dest.exists() and dest.stat().st_size >= size * 0.9:
        return dest
    chunk = src.read_bytes()
    tmp = dest.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        written = 0
        while written + len(chunk) <= size:
            f.write(chunk)
            written += len(chunk)
    tmp.replace(dest)
    return dest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20k records, a 128 MiB segment, one repeat (< 2 min)")
    ap.add_argument("--records", type=int, help="records per dataset (default 200000; --quick 20000)")
    ap.add_argument("--segment-mib", type=int, help="size of the scanned segment (default 1024; --quick 128)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated subset of " + ",".join(ENGINES))
    ap.add_argument("--out", default=str(OUT / "results.json"), help="where to write the JSON results")
    ap.add_argument("--first-use", action="store_true",
                    help="measure only the numba first-use cost (cold, cached, after make setup) and print its line")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:  # internal: one engine's measurements, JSON on stdout
        plan = json.loads(args.plan)
        if args.worker == "scan":
            res = run_scan(plan["path"], plan["mode"])
        elif args.worker == "append":
            res = run_append(plan["path"], plan["repeats"])
        elif args.worker == "first-use":
            res = run_first_use()
        else:
            run_worker(args.worker, plan)
            return 0
        print(json.dumps(res))
        return 0

    if args.first_use:
        print(first_use_line(measure_first_use()))
        return 0
    n = args.records or (20_000 if args.quick else 200_000)
    seg = (args.segment_mib or (128 if args.quick else 1024)) << 20
    repeats = 1 if args.quick else 3
    engines = [e for e in args.engines.split(",") if e]
    OUT.mkdir(parents=True, exist_ok=True)
    from tqdm import tqdm
    paths = make_datasets(n, OUT / "data")
    tasks = []
    for magic, codec in DATASETS:
        p = str(paths[dataset_name(magic, codec)])
        tasks += [{"task": "deep", "dataset": dataset_name(magic, codec), "path": p},
                  {"task": "deep-reference", "dataset": dataset_name(magic, codec), "path": p},
                  {"task": "columnar", "dataset": dataset_name(magic, codec), "path": p},
                  {"task": "build", "dataset": dataset_name(magic, codec), "magic": magic, "codec": codec}]
        if (magic, codec) == (2, "none"):
            tasks.append({"task": "build-columns", "dataset": dataset_name(magic, codec), "magic": 2, "codec": "none"})
    for to_magic in (1, 0):
        tasks.append({"task": "down", "dataset": f"v2-none -> v{to_magic}", "path": str(paths["v2-none"]),
                      "to_magic": to_magic})
    results: dict = {"machine": machine(), "records": n, "segment_bytes": seg, "started": time.time()}
    steps = tqdm(total=len(tasks) + 5, desc="bench", unit="step")
    results["rows"] = measure(tasks, engines, n, repeats, steps)
    steps.set_postfix_str("first use")
    results["first_use"] = measure_first_use()
    steps.update()
    steps.set_postfix_str("segment")
    segment = tile_segment(paths["v2-none"], seg, OUT / "data" / f"segment-{seg >> 20}MiB.log")
    steps.update()
    results["scan"] = [_sub(["--worker", "scan", "--plan", json.dumps({"path": str(segment), "mode": m})])
                       for m in ("raw", "raw", "batches")]  # the first raw pass warms the page cache
    results["scan"] = results["scan"][1:]
    steps.update()
    steps.set_postfix_str("append")
    results["append"] = _sub(["--worker", "append", "--plan", json.dumps({"path": str(paths["v2-none"]),
                                                                          "repeats": repeats})])
    steps.update()
    segment.unlink()
    steps.update()
    steps.close()
    results["seconds"] = time.time() - results.pop("started")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(report(results))
    print(f"\nJSON: {args.out}")
    return 0


RATE_COLUMNS = ["task", "data", "kafkafmt rec/s", "kafka-python", "aiokafka-c", "aiokafka-py", "vs kafka-python",
                "vs aiokafka-c", "vs aiokafka-py"]


def rate_table(res: dict) -> tuple[list[str], list[list[str]]]:
    """``(columns, rows)`` of a run's results (``results.json``): records/s per engine and kafkafmt's ratio to each
    peer, the table :func:`report` prints and the documentation site renders (docs/_data/bench/bench.json)."""
    rows = res["rows"]
    rate = {}
    for r in rows:
        if r["seconds"]:
            rate[(r["task"], r["dataset"], r["engine"])] = res["records"] / r["seconds"]
    out = []
    for task in ("columnar", "deep", "deep-reference", "build", "build-columns", "down"):
        for ds in dict.fromkeys(r["dataset"] for r in rows if r["task"] == task):
            ours = rate.get((task, ds, "kafkafmt"))
            peer_task = {"columnar": "deep", "deep-reference": "deep"}.get(task, task)
            peers = [rate.get((peer_task, ds, e)) for e in ENGINES[1:]]
            cells = [f"{ours:,.0f}" if ours else "-"] + [f"{p:,.0f}" if p else "-" for p in peers]
            ratios = [f"{ours / p:.2f}x" if ours and p else "-" for p in peers]
            out.append([task, ds, *cells, *ratios])
    return list(RATE_COLUMNS), out


def report(res: dict) -> str:
    """The results as a Markdown table: records/s per engine, and kafkafmt's ratio to each peer."""
    lines = [f"machine: {res['machine']['cpu']}, {res['machine']['cores']} cores, Python {res['machine']['python']}, "
             f"numba {res['machine']['numba']}, pyarrow {res['machine']['pyarrow']}; {res['records']} records per "
             f"dataset, batches of {PER_BATCH}; run took {res['seconds']:.0f} s", ""]
    columns, table_rows = rate_table(res)
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|---|---|" + "---:|" * (len(columns) - 2))
    lines += ["| " + " | ".join(r) + " |" for r in table_rows]
    fu = res.get("first_use")
    if fu:
        lines += ["", first_use_line(fu)]
    scan = {s["mode"]: s for s in res.get("scan", [])}
    if scan:
        raw, ours = scan["raw"], scan["batches"]
        mb = lambda s: s["bytes"] / s["seconds"] / 1e6  # noqa: E731
        lines += ["", f"shallow scan with CRC of a {ours['bytes'] >> 20} MiB segment ({ours['batches']} batches): "
                      f"{mb(ours):,.0f} MB/s = {mb(ours) / mb(raw):.0%} of one raw crc32c pass ({mb(raw):,.0f} MB/s); "
                      f"peak anonymous memory {ours['peak_anon'] / 2**20:.0f} MiB (of which "
                      f"{ours['baseline_anon'] / 2**20:.0f} MiB before the scan), file-backed pages "
                      f"{ours['peak_file'] / 2**20:.0f} MiB (raw pass: {raw['peak_anon'] / 2**20:.0f} MiB anonymous, "
                      f"{raw['peak_file'] / 2**20:.0f} MiB file-backed)"]
    app = {a["mode"]: a for a in res.get("append", [])}
    if app:
        raw = app["raw-write"]
        lines.append("")
        for mode in ("leader", "follower"):
            a = app[mode]
            lines.append(f"log append as {mode}: {a['records'] / a['seconds']:,.0f} records/s, "
                         f"{a['bytes'] / a['seconds'] / 1e6:,.0f} MB/s = {raw['seconds'] / a['seconds']:.2f}x "
                         f"raw file writes of the same batches")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
