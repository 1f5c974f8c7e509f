"""The command line as a shell tool: wall time and peak memory of short ``kafkafmt`` calls, new processes.

    python benchmarks/cli.py [--rounds 7]      (make bench-cli)

Each case is one process, run in turn with every other (interleaved rounds), and its median wall time and
median peak RSS (``wait4``'s ``ru_maxrss``) are reported beside ``python -c pass`` (the interpreter's own
start) and, for the dump, beside Kafka 3.9.2's ``kafka-dump-log --deep-iteration`` on the same file (a JVM,
run as ``benchmarks/dump_deep.py`` runs it; its jars in ``conformance/.cache/lib``):

* ``--help``;
* ``dump --deep`` of a small segment (the v2 headers sample, 264 bytes, as ``00000000000000000000.log``);
* ``explain fetch`` of that segment for a fetch v3 client (down-converted to v1);
* ``audit`` of a small log directory (about 1,000 records, ``kafkafmt gen --workload small-keyed``);
* ``clean`` of that partition (a fresh copy per run, the copy not timed).

The numba cache is the environment's own (warm after ``make setup``); small inputs never load it.  Writes
``build/bench/cli.json`` in the docs' table form (``docs/_data/bench/cli.json`` is the copy the Benchmarks page
renders).  A measurement, never a test: on a shared 2-core machine the figures move with the load, given in
the JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from dump_deep import KAFKA_JVM_OPTS, LIB  # noqa: E402

OUT = ROOT / "build" / "bench"
#: the small log directory: the shipped workload (kafkafmt/gen/shipped/small-keyed.yaml), about 1,000 keyed
#: records with tombstones in small segments, uncleaned
WORKLOAD = "small-keyed"
TARGETS = {"--help": "<= 0.15 s", "dump --deep (small file)": "<= 0.25 s, <= 60 MiB"}


#: GNU time: it forks the measured command itself, so the command's peak RSS is its own (a child forked from this
#: Python process would count this process's pages, copied at the fork, in its ``ru_maxrss``)
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def measured(cmd: list[str], env: dict, cwd: Path, prepare=None) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of ``cmd`` in a new process, its output discarded."""
    if prepare:
        prepare()
    run = [GNU_TIME, "-f", "kafkafmt-bench-rss %M", *cmd] if GNU_TIME else cmd
    t = time.perf_counter()
    p = subprocess.Popen(run, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {err[-600:]}")
    rss = [line.split()[-1] for line in err.splitlines() if line.startswith("kafkafmt-bench-rss ")]
    return wall, (int(rss[-1]) if rss else usage.ru_maxrss) / 1024


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--before", metavar="CHECKOUT", default=None,
                    help="also time --help, the dump and explain fetch of another checkout (e.g. a worktree of an "
                         "older commit), interleaved with these")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kafkafmt-bench-cli-"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("KAFKAFMT_KERNELS", None)
    py = sys.executable
    try:
        from kafkafmt.records.sample_sets import sample_record_sets
        seg = work / "seg" / "00000000000000000000.log"
        seg.parent.mkdir()
        seg.write_bytes(sample_record_sets()["v2-headers.bin"][1])
        subprocess.run([py, "-m", "kafkafmt", "gen", "--workload", WORKLOAD, "--out", "logs", "--jobs", "1",
                        "--quiet"], cwd=work, env={**env, "KAFKAFMT_KERNELS": "interpreted"}, check=True)
        logs, part = work / "logs", work / "clean" / "users-0"

        def fresh_copy():
            shutil.rmtree(work / "clean", ignore_errors=True)
            shutil.copytree(logs, work / "clean")

        k = [py, "-m", "kafkafmt"]
        cases = {
            "python -c pass": ([py, "-c", "pass"], None),
            "--help": ([*k, "--help"], None),
            "dump --deep (small file)": ([*k, "dump", "--deep", str(seg)], None),
            "explain fetch (small file, fetch v3)": ([*k, "explain", "fetch", str(seg), "--fetch-version", "3"], None),
            "audit (small log dir)": ([*k, "audit", str(logs), "--quiet"], None),
            "clean (small partition)": ([*k, "clean", str(part), "--now", "1800000000000", "-c",
                                         "cleanup.policy=compact"], fresh_copy),
        }
        if args.before:
            old_env = {**env, "PYTHONPATH": os.pathsep.join([str(Path(args.before).resolve()),
                                                              os.environ.get("PYTHONPATH", "")])}
            rev = subprocess.run(["git", "-C", args.before, "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip() or args.before
            for name in ("--help", "dump --deep (small file)", "explain fetch (small file, fetch v3)"):
                cases[f"{name} before ({rev})"] = (cases[name][0], None, old_env)
        java = shutil.which("java") and any(LIB.glob("kafka_2.13-*.jar"))
        if java:
            cases["kafka-dump-log --deep-iteration (same file)"] = (
                ["java", *KAFKA_JVM_OPTS, "-cp", f"{LIB}{os.sep}*", "kafka.tools.DumpLogSegments", "--deep-iteration",
                 "--files", str(seg)], None)
        load_before = os.getloadavg()
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        cases = {n: (c[0], c[1], c[2] if len(c) > 2 else env) for n, c in cases.items()}
        for name, (cmd, prep, e) in cases.items():  # one untimed run each: the OS's file cache, numba's cache
            measured(cmd, e, work, prep)
        for _ in range(args.rounds):
            for name, (cmd, prep, e) in cases.items():
                runs[name].append(measured(cmd, e, work, prep))
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {n: (statistics.median(w for w, _ in r), statistics.median(m for _, m in r)) for n, r in runs.items()}
    base = med["python -c pass"][0]
    jvm = med.get("kafka-dump-log --deep-iteration (same file)")
    rows = []
    for name, (wall, rss) in med.items():
        vs_jvm = f"{wall / jvm[0]:.2f}x" if jvm and name.startswith("dump") else ""
        if " before (" in name:
            now = med[name.split(" before (")[0]]
            vs_jvm = (vs_jvm + "; " if vs_jvm else "") + f"now {now[0] / wall:.2f}x the wall, {now[1] / rss:.2f}x the RSS"
        rows.append([name, f"{wall:.3f} s", f"{rss:.0f} MiB", f"{wall / base:.1f}x", vs_jvm, TARGETS.get(name, "")])
    doc = {"title": "kafkafmt's short calls, new processes: wall and peak RSS (medians of interleaved runs)",
           "command": f"make bench-cli (benchmarks/cli.py --rounds {args.rounds})",
           "machine": {**machine(), "load_avg": list(load_before)},
           "load": f"1-min load {load_before[0]:.1f} before, {load_after[0]:.1f} after",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "columns": ["call", "wall", "peak RSS", "vs python -c pass", "vs kafka-dump-log / before", "target"],
           "rows": rows, "runs": {n: [[round(w, 4), round(m, 1)] for w, m in r] for n, r in runs.items()},
           "source": "benchmarks/cli.py's own run (build/bench/cli.json, copied here)",
           "rss": "GNU time's %M" if GNU_TIME else "wait4's ru_maxrss (includes the benchmark's own pages at the fork)",
           "note": "small inputs run without numba (the reference decoder for dump, interpreted kernels for "
                   "audit and clean: docs/explanation/command-line.md); kafka-dump-log with kafka-run-class.sh's "
                   "JVM options"}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cli.json").write_text(json.dumps(doc, indent=1))
    width = max(len(r[0]) for r in rows)
    print(f"{'call':<{width}}  {'wall':>9}  {'peak RSS':>9}  {'vs pass':>8}  {'vs jvm':>7}")
    for r in rows:
        print(f"{r[0]:<{width}}  {r[1]:>9}  {r[2]:>9}  {r[3]:>8}  {r[4]:>7}")
    print(f"{doc['load']}; build/bench/cli.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
