"""Write conformance/history/last-live-run.json: every live check of kafkafmt against old Kafka releases.

    make history-record                       # every release of conformance/kafkarig/releases.py
    python conformance/history/record.py 0.10.2.2 0.11.0.3   # some (the others' records are kept)

For each release: one ZooKeeper and one broker started, the checks of ``kafkarig.history.plan`` run,
everything stopped.  Each check is recorded with the model's expectation, the release's real bytes or
records, whether they agree, the model rule (LogValidator path, fetch outcome) and the first difference.
Then the seed 000 rolling upgrade (``kafkarig.seed000``) on a mixed 0.9.0.1 + 0.10.2.2 cluster, its
phases recorded the same way.  Written atomically; the run's disagreements are printed, one a line.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))          # kafkarig
sys.path.insert(0, str(HERE.parent.parent))   # kafkafmt of this checkout

from kafkarig.history import run_release  # noqa: E402
from kafkarig.oldcluster import OldCluster  # noqa: E402
from kafkarig.releases import RELEASES, ReleaseError, release  # noqa: E402

OUT = HERE / "last-live-run.json"


def _slim(check: dict) -> dict:
    """A check as recorded: the real side, and the decoded records of a fetch, written out only where the
    release and the model disagree."""
    if check["agree"] and check["real"] == check["expected"]:
        check["real"] = "= expected"
    drop = ("segment", "stored", "fetched", "model_converted") + (("expected_records", "real_records")
                                                                 if check["agree"] else ())
    for key in drop:
        check["extra"].pop(key, None)
    return check


def main(argv: list[str]) -> int:
    versions = [a for a in argv if a != "seed000"] if argv else list(RELEASES)
    record = json.loads(OUT.read_text()) if OUT.exists() and argv else {"releases": {}}
    for v in versions:
        try:
            rel = release(v)
        except ReleaseError as e:
            print(f"history-record: {e}", file=sys.stderr)
            return 2
        t0 = time.monotonic()
        with OldCluster(rel.version) as cluster:
            checks = run_release(cluster, cluster.add_broker(1, rel.version), rel)
        record["releases"][rel.version] = {"seconds": round(time.monotonic() - t0, 1),
                                           "checks": [_slim(c.to_dict()) for c in checks.values()]}
        bad = [c for c in checks.values() if not c.agree and not c.check.startswith("dump/")]
        print(f"{rel.version}: {len(checks)} checks, {len(bad)} disagreement(s), "
              f"{time.monotonic() - t0:.0f}s", flush=True)
        for c in bad:
            print(f"  {c.check}: {c.detail[:240]}", flush=True)
    if not argv or "seed000" in argv:
        from kafkarig.seed000 import run_seed000
        seed = run_seed000()
        for phase in seed["phases"].values():
            phase["checks"] = [_slim(c) for c in phase["checks"]]
        record["seed000"] = seed
    record["releases"] = dict(sorted(record["releases"].items(), key=lambda kv: list(RELEASES).index(kv[0])))
    tmp = OUT.with_suffix(".json.tmp")
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1, sort_keys=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(OUT)
    print(f"wrote {OUT.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
