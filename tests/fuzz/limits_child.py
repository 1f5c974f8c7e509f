"""Run in a fresh interpreter by test_limits.py: decode each hostile input, print one JSON line per case
and, last, the peak RSS of the whole process (``resource.getrusage``)."""
from __future__ import annotations

import json
import resource
import sys
import time

import bombs
from kafkafmt.dump import dump_log
from kafkafmt.errors import KafkaFmtError
from kafkafmt.records import MemoryRecords

#: (name, builder) pairs: every codec's zero bomb (v2, and a v0/v1 wrapper where the codec exists there:
#: lz4 in v0 for its KAFKA-3160 header checksum),
#: and batches of the smallest records that fit under the decompression cap
CASES = [(f"zero-{c}-v{m}", (lambda c=c, m=m: bombs.zero_bomb(c, 512 << 20, magic=m)))
         for c in bombs.CODECS for m in {"gzip": (1, 2), "snappy": (1, 2), "lz4": (0, 2), "zstd": (2,)}[c]]
CASES += [(f"tiny-{c}-v2", (lambda c=c: bombs.tiny_records(c, 38_000_000))) for c in bombs.CODECS]
CASES += [("tiny-gzip-v1", lambda: bombs.tiny_records("gzip", 7_800_000, magic=1)),
          ("tiny-lz4-v0", lambda: bombs.tiny_records("lz4", 7_800_000, magic=0))]


def _reset_peak_rss() -> bool:
    """Linux: reset the process's RSS high-water mark (``clear_refs`` 5), so each case is measured alone."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(name: str, data: bytes) -> dict:
    _reset_peak_rss()
    t0 = time.process_time()
    outcome = "decoded"
    try:
        for _ in MemoryRecords(data).records():
            pass
    except KafkaFmtError as e:
        outcome = type(e).__name__
    dump = dump_log(data, filename="bomb.bin", deep=True, print_data=True)
    return {"case": name, "input_bytes": len(data), "outcome": outcome,
            "dump_error": None if dump.error is None else type(dump.error).__name__,
            "cpu_seconds": time.process_time() - t0, "peak_rss_mb": _peak_rss_mb()}


if __name__ == "__main__":
    for name, build in CASES:
        if len(sys.argv) > 1 and name not in sys.argv[1:]:
            continue
        data = build()
        print(json.dumps(run(name, data)), flush=True)
        del data
    print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
