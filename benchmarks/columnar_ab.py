"""Columnar decoding (``records_table``) of one or more kafkafmt trees against aiokafka's C reader, interleaved.

A measurement for a shared machine, where `make bench`'s best-of figures move with other people's work: each
engine is a long-lived process (one per kafkafmt tree given, with that tree first on ``PYTHONPATH``, plus
aiokafka with its C extension decoding every record), the engines take turns on the same bytes round after
round, and each figure is the **median** over the rounds of the CPU time (``time.process_time``, every thread
of the process) and of the wall time of one decode.  On a loaded machine the CPU-time ratio is the one to
read: wall time then measures the scheduler as much as the code.  Data: ``make bench``'s datasets
(``bench.make_datasets``: ~100-byte values, batches of 1,000, built by kafkafmt's builder).

    python benchmarks/columnar_ab.py                      # this tree, 200k records, v2 none and lz4, 15 rounds
    python benchmarks/columnar_ab.py --tree /tmp/before --tree .   # a before/after (git archive a commit there)

Writes ``build/bench/columnar_ab.json`` (the docs' table format: title, machine, load, date, columns, rows).
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "build" / "bench"
PEER = "aiokafka-c"


def worker(engine: str) -> None:
    """Decode the file named on each stdin line once (after one untimed decode of a new file); answer
    ``[wall, cpu]`` seconds."""
    sys.path.insert(0, str(HERE))
    import engines as E  # noqa: E402  (benchmarks/ is not a package)
    if engine == PEER:
        import aiokafka.record._crecords  # noqa: F401  (the C extension, or fail)
        fn = E.deep_aiokafka
    else:
        from kafkafmt.samples import sample_record_sets
        for _, d in sample_record_sets().values():  # the compiled kernels loaded outside any timing
            E.columnar_kafkafmt(d)
        fn = E.columnar_kafkafmt
    data, path = None, None
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != path:
            path = line.strip()
            data = Path(path).read_bytes()
            fn(data)
        c, w = time.process_time(), time.perf_counter()
        fn(data)
        print(json.dumps([time.perf_counter() - w, time.process_time() - c]), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", help="a kafkafmt source tree (repeatable; default: this one)")
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--datasets", default="v2-none,v2-lz4")
    ap.add_argument("--out", default=str(OUT / "columnar_ab.json"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT))
    from bench import machine, make_datasets
    trees = [str(Path(t).resolve()) for t in (args.tree or [str(ROOT)])]
    paths = make_datasets(args.records, OUT / "data")
    load = os.getloadavg()
    procs = {}
    for name in trees + [PEER]:
        env = dict(os.environ)
        if name != PEER:
            env["PYTHONPATH"] = os.pathsep.join([name, env.get("PYTHONPATH", "")])
        procs[name] = subprocess.Popen([sys.executable, __file__, "--worker", "kafkafmt" if name != PEER else PEER],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    for p in procs.values():
        p.stdout.readline()
    rows = []
    try:
        for ds in args.datasets.split(","):
            times = {name: [] for name in procs}
            for _ in range(args.rounds):
                for name, p in procs.items():
                    p.stdin.write(f"{paths[ds]}\n")
                    p.stdin.flush()
                    times[name].append(json.loads(p.stdout.readline()))
            med = {name: [statistics.median(t[i] for t in ts) for i in (0, 1)] for name, ts in times.items()}
            for tree in trees:
                rows.append([ds, tree, f"{med[tree][1] * 1e3:.1f}", f"{med[PEER][1] * 1e3:.1f}",
                             f"{med[PEER][1] / med[tree][1]:.2f}", f"{med[PEER][0] / med[tree][0]:.2f}"])
                print("  ".join(rows[-1]), flush=True)
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait()
    m = machine()
    res = {"title": f"Columnar decoding ({args.records:,} records) against aiokafka's C reader: medians of "
                    f"{args.rounds} interleaved runs",
           "source": "benchmarks/columnar_ab.py's own run",
           "command": "python benchmarks/columnar_ab.py " + " ".join(f"--tree {t}" for t in trees),
           "machine": f"{m.get('cpu')}, {m.get('cores')} cores, Python {m.get('python')}",
           "load": f"1-minute load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "columns": ["data", "kafkafmt tree", "kafkafmt CPU ms", "aiokafka-c CPU ms", "ratio (CPU)", "ratio (wall)"],
           "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1))
    print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
