"""``kafkafmt dump --deep`` against Kafka 3.9.2's ``kafka-dump-log --deep-iteration``, as a user runs them.

Both tools run as new processes on the same 300k-record v2 segment (no compression and lz4, batches of
1000 records of about 100 bytes, built by kafkafmt's builder): ``python -m kafkafmt dump --deep FILE``
and ``java kafka.tools.DumpLogSegments --deep-iteration --files FILE`` with ``conformance/.cache/lib``
on the class path and kafka-run-class.sh's JVM options, its start included.  Output goes to a file;
the two outputs are compared once (they must be byte-identical).  Runs are interleaved (kafkafmt,
Kafka, kafkafmt, ...) and the medians of the wall times are reported, with their ratio.

Where kafkafmt's time goes is measured in one more process per segment: interpreter start (``python
-c pass``), importing the command, decoding the records into columns (the reading core,
``records_table``; its first call loads the compiled kernels from numba's cache), and ``dump_log``
as a whole; formatting is ``dump_log`` less decoding, and what is left of the wall time is writing
the lines.

    make bench-dump                    # 300k records, 5 rounds per segment
    python benchmarks/dump_deep.py --records 50000 --rounds 3

Writes ``build/bench/dump_deep.json``.  A measurement, never a test: on a shared machine the ratio is
what to read, not the absolute times.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench import make_records, write_batches  # noqa: E402

OUT = ROOT / "build" / "bench"
LIB = ROOT / "conformance" / ".cache" / "lib"
CODECS = ("none", "lz4")
#: kafka-run-class.sh's defaults for a tool (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS)
KAFKA_JVM_OPTS = ["-Xmx256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                  "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                  "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"]


def make_segment(n: int, codec: str) -> Path:
    """``build/bench/dump/v2-<codec>-<n>/00000000000000000000.log`` (built once)."""
    path = OUT / "dump" / f"v2-{codec}-{n}" / "00000000000000000000.log"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    write_batches(path, make_records(n), 2, codec)
    return path


def kafkafmt_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "kafkafmt", "dump", "--deep", str(path)]


def kafka_cmd(path: Path) -> list[str]:
    return ["java", *KAFKA_JVM_OPTS, "-cp", f"{LIB}{os.sep}*", "kafka.tools.DumpLogSegments", "--deep-iteration",
            "--files", str(path)]


def timed(cmd: list[str], out: Path) -> float:
    """Wall seconds of ``cmd`` in a new process, stdout to ``out``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(out, "wb") as f:
        t = time.perf_counter()
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        wall = time.perf_counter() - t
    if p.returncode:
        raise SystemExit(f"{cmd[0]} failed ({p.returncode}): {p.stderr.decode(errors='replace')[-400:]}")
    return wall


def breakdown(path: str) -> dict:
    """Worker: where kafkafmt's time goes on ``path`` (in this process, after interpreter start):
    importing the command (and the columnar core it decodes with), decoding every record into
    columns (``records_table``), and ``dump_log`` as a whole (decoding plus making the lines)."""
    t0 = time.perf_counter()
    from kafkafmt import cli
    cli.make_parser("dump")
    from kafkafmt.io import open_readonly
    from kafkafmt.records.columnar import records_table
    from kafkafmt.records.dump_log import dump_log
    t1 = time.perf_counter()
    with open_readonly(path) as buf:
        first = memoryview(buf)[:int.from_bytes(buf[8:12], "big") + 12]  # one batch: loads the kernels
        t2 = time.perf_counter()
        records_table(first, include_keys=False, include_values=False, check_crc=False)
        t3 = time.perf_counter()
        records_table(buf, include_keys=False, include_values=False, check_crc=False)
        t4 = time.perf_counter()
        dump_log(buf, filename=os.path.basename(path), deep=True, emit_lines=lambda lines: None)
        t5 = time.perf_counter()
        del first
    return {"import_s": t1 - t0, "kernels_s": t3 - t2, "decode_s": t4 - t3, "dump_log_s": t5 - t4,
            "format_s": (t5 - t4) - (t4 - t3)}


def interpreter_start() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t


def measure(path: Path, rounds: int) -> dict:
    outs = {"kafkafmt": path.parent / "kafkafmt.out", "kafka": path.parent / "kafka.out"}
    times: dict[str, list[float]] = {"kafkafmt": [], "kafka": []}
    for _ in range(rounds):
        times["kafkafmt"].append(timed(kafkafmt_cmd(path), outs["kafkafmt"]))
        times["kafka"].append(timed(kafka_cmd(path), outs["kafka"]))
    same = outs["kafkafmt"].read_bytes() == outs["kafka"].read_bytes()
    lines = outs["kafka"].read_bytes().count(b"\n")
    for f in outs.values():
        f.unlink()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    worker = subprocess.run([sys.executable, __file__, "--worker", str(path)], capture_output=True, text=True,
                            env=env, check=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"file": str(path.relative_to(ROOT)), "bytes": path.stat().st_size, "lines": lines,
            "identical_output": same, "runs": times, "median_s": med, "ratio": med["kafkafmt"] / med["kafka"],
            "python_start_s": statistics.median(interpreter_start() for _ in range(3)),
            "breakdown": json.loads(worker.stdout)}


def report(results: list[dict]) -> str:
    rows = ["segment          kafkafmt  kafka-dump-log  ratio  identical | python start  import  kernels  decode"
            "  format  dump_log (in-process)"]
    for r in results:
        m, b = r["median_s"], r["breakdown"]
        rows.append(f"{Path(r['file']).parent.name:<16} {m['kafkafmt']:7.2f}s {m['kafka']:14.2f}s "
                    f"{r['ratio']:6.2f}  {str(r['identical_output']):<9} | {r['python_start_s']:11.2f}s "
                    f"{b['import_s']:6.2f}s {b['kernels_s']:7.2f}s {b['decode_s']:6.2f}s {b['format_s']:6.2f}s "
                    f"{b['dump_log_s']:8.2f}s")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=300_000, help="records per segment (default 300000)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved runs of each tool per segment (default 5)")
    ap.add_argument("--codec", choices=CODECS, action="append", help="only this codec (repeatable)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(breakdown(args.worker)))
        return 0
    if not (LIB / "kafka_2.13-3.9.2.jar").exists() and not any(LIB.glob("kafka_2.13-*.jar")):
        print("dump_deep: Kafka's jars are missing: run `make -C conformance jars`", file=sys.stderr)
        return 2
    results = []
    for codec in args.codec or CODECS:
        results.append(measure(make_segment(args.records, codec), args.rounds))
        print(report(results[-1:]).splitlines()[-1], flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    doc = {"records": args.records, "rounds": args.rounds, "cpus": os.cpu_count(), "results": results}
    (OUT / "dump_deep.json").write_text(json.dumps(doc, indent=1))
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
