"""Two versions of kafkafmt side by side: the JSON that ``benchmarks/bench.py`` and ``benchmarks/cleaner.py``
wrote for each, turned into one table for the documentation site (``docs/_data/bench/*before_after.json``).

Both benchmarks measure kafkafmt against peers in the same run (kafka-python and aiokafka; Kafka's warm
``Cleaner`` and a JVM process), so what compares across versions is the *ratio to the peer*, not a rate: the
machine's load moves both sides of a run together.  Run the versions interleaved (before, after, before,
after ...) and give every run's file; each cell shows the median of the runs and, in brackets, every run.

    python benchmarks/before_after.py cleaner --before b1.json b2.json --after a1.json a2.json \\
        --label-before dde2ef2 --label-after 90027bd --out docs/_data/bench/cleaner_before_after.json
    python benchmarks/before_after.py bench --before results-b.json --after results-a.json ... --out ...

The output is the ``{"columns": [...], "rows": [...]}`` form the site's ``bench-table`` directive renders, with
the runs' machine, load averages and dates beside it, nothing typed by hand.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _median_cell(values: list[float]) -> str:
    """``1.52 (1.48, 1.52, 1.60)``: the median of the runs, then each run in order."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    med = statistics.median(values)
    return f"{med:.2f}" if len(values) == 1 else f"{med:.2f} ({', '.join(f'{v:.2f}' for v in values)})"


def cleaner_ratios(res: dict) -> dict[str, float]:
    """Kafka's time over kafkafmt's, per warm partition and end to end, from one ``cleaner.py`` result."""
    out = {f"warm {r['partition']}": r["ratio"] for r in res.get("warm", [])}
    out.update({f"warm {r['partition']}, per CPU second": r["cpu_ratio"] for r in res.get("warm", [])
                if r.get("cpu_ratio")})
    e = res.get("end_to_end")
    if e:
        out[f"end to end, {e['dirty_bytes'] >> 20} MiB v2 lz4"] = e["ratio"]
    return out


def cleaner_identical(res: dict) -> bool:
    """Whether every output of the run was byte-identical to Kafka's."""
    rows = list(res.get("warm", [])) + ([res["end_to_end"]] if res.get("end_to_end") else [])
    return bool(rows) and all(r["identical"] for r in rows)


def bench_ratios(res: dict) -> dict[str, dict[str, float]]:
    """kafkafmt's rate over each peer's, per ``task data`` row, from one ``bench.py`` result."""
    sys.path.insert(0, str(HERE))
    from bench import ENGINES, rate_table

    columns, rows = rate_table(res)
    peers = ENGINES[1:]
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        ratios = row[-len(peers):]
        out[f"{row[0]} {row[1]}"] = {p: float(r[:-1]) for p, r in zip(peers, ratios) if r != "-"}
    return out


def _loads(runs: list[dict]) -> str:
    def one(res):
        load = res.get("load_before") or res.get("machine", {}).get("load_avg")
        return f"{load[0]:.1f}" if load else "?"
    return ", ".join(one(r) for r in runs)


def _when(runs: list[dict]) -> str:
    started = [r["started"] for r in runs if r.get("started")]
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(min(started))) if started else ""


def cleaner_table(before: list[dict], after: list[dict], labels: tuple[str, str]) -> dict:
    keys = list(dict.fromkeys(k for res in before + after for k in cleaner_ratios(res)))
    rows = [[k, _median_cell([cleaner_ratios(r).get(k) for r in before]),
             _median_cell([cleaner_ratios(r).get(k) for r in after])] for k in keys]
    rows.append(["outputs byte-identical to Kafka's", "yes" if all(map(cleaner_identical, before)) else "NO",
                 "yes" if all(map(cleaner_identical, after)) else "NO"])
    m = after[0]["machine"]
    return {
        "title": "The log cleaner before and after the cleaner became one package with its rules written once "
                 "(ratio: Kafka 3.9.2's time over kafkafmt's; above 1, kafkafmt is faster)",
        "command": "benchmarks/cleaner.py (make bench-cleaner) on each version, runs interleaved; "
                   "benchmarks/before_after.py cleaner",
        "machine": f"{m['cpu']}, {m['cores']} cores, Python {m['python']}",
        "load": f"1-minute load average at each run's start: before {_loads(before)}; after {_loads(after)}",
        "date": _when(before + after),
        "columns": ["measure", f"before ({labels[0]}): median (runs)", f"after ({labels[1]}): median (runs)"],
        "rows": rows,
    }


def bench_table(before: list[dict], after: list[dict], labels: tuple[str, str]) -> dict:
    sys.path.insert(0, str(HERE))
    from bench import ENGINES

    peers = ENGINES[1:]
    b = [bench_ratios(r) for r in before]
    a = [bench_ratios(r) for r in after]
    keys = list(dict.fromkeys(k for d in b + a for k in d))
    rows = []
    for k in keys:
        row = k.split(" ", 1)
        for p in peers:
            row += [_median_cell([d.get(k, {}).get(p) for d in b]), _median_cell([d.get(k, {}).get(p) for d in a])]
        rows.append(row)
    m = after[0]["machine"]
    return {
        "title": "Decoding, building and down-converting before and after the house was rebuilt (kafkafmt's "
                 "records/s over each peer's, measured in the same run)",
        "command": "benchmarks/bench.py (make bench) on each version, one after the other; "
                   "benchmarks/before_after.py bench",
        "machine": f"{m['cpu']}, {m['cores']} cores, Python {m['python']}, numba {m.get('numba', '?')}, "
                   f"pyarrow {m.get('pyarrow', '?')}",
        "load": f"1-minute load average at each run's start: before {_loads(before)}; after {_loads(after)}",
        "date": _when(before + after),
        "columns": ["task", "data"] + [f"vs {p}, {when}" for p in peers for when in (labels[0], labels[1])],
        "rows": rows,
    }


def _load(path: Path) -> dict:
    """One run's JSON; ``bench.py`` keeps its duration, not its start: then the start is the file's time less it."""
    res = json.loads(path.read_text())
    res.setdefault("started", path.stat().st_mtime - res.get("seconds", 0))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=["bench", "cleaner"], help="which benchmark's JSON the files are")
    ap.add_argument("--before", nargs="+", type=Path, required=True, help="the runs of the earlier version")
    ap.add_argument("--after", nargs="+", type=Path, required=True, help="the runs of the later version")
    ap.add_argument("--label-before", default="before", help="how the earlier version is named (a commit)")
    ap.add_argument("--label-after", default="after", help="how the later version is named (a commit)")
    ap.add_argument("--out", type=Path, help="where to write the table's JSON (default: print it)")
    args = ap.parse_args(argv)
    before = [_load(p) for p in args.before]
    after = [_load(p) for p in args.after]
    make = cleaner_table if args.kind == "cleaner" else bench_table
    doc = make(before, after, (args.label_before, args.label_after))
    doc["source"] = ("benchmarks/before_after.py over each run's own JSON: "
                     + ", ".join(p.name for p in args.before) + " (before); "
                     + ", ".join(p.name for p in args.after) + " (after)")
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
