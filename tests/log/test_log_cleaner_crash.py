"""A cleaning pass killed (SIGKILL) after each of its steps -- ``.cleaned`` written, renamed ``.swap``, each
replaced segment deleted, ``.swap`` renamed into place, checkpoint written -- leaves a directory that
kafkafmt's loader and Kafka 3.9.2's LogLoader (restarting after a crash) open to the same records, with
every key's latest value still there (``LogLoader`` completing or dropping the interrupted swap).  With
``file.delete.delay.ms`` > 0 a replaced segment's files stay renamed ``.deleted`` past each later step.
"""
from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from kafkafmt.log import Log, LogConfig, SimulatedClock
from log_helpers import batch

T0 = 1_700_000_000_000
#: appended with 700-byte segments, cleaned with segment.bytes=3000 (raised since, as kafka-configs
#: --alter would), so a group merges several segments that all still hold records
PROPS = {"cleanup.policy": "compact", "segment.bytes": "3000", "min.cleanable.dirty.ratio": "0.01",
         "file.delete.delay.ms": "0"}

#: kafkafmt's cleaner pass over a partition (argv: its directory, the clock, the topic's properties as JSON, and
#: optionally a Kafka line: 4.4 for test_log_cleaner44_vs_kafka), run once to its end and then killed at each kill
#: point in a fork of itself: after the full pass (its steps printed as a JSON list) it reads ``K DIR`` lines,
#: cleans DIR in a forked process killed (SIGKILL) after step K, and prints how that process ended ("killed 9",
#: "exited 0"); an empty line ends it.
#: The forks start warm (kafkafmt imported, the compiled kernels loaded: seconds a fresh interpreter spends
#: on each kill point), as a broker's cleaner thread runs its passes one after another.
FORKING_CHILD = textwrap.dedent("""
    import json, os, signal, sys, warnings
    warnings.simplefilter("ignore")
    from kafkafmt.config import BrokerConfig
    from kafkafmt.log import Log, LogConfig, SimulatedClock
    d, now, props = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    line = sys.argv[4] if len(sys.argv) > 4 else None
    config = LogConfig.from_properties(props, broker=BrokerConfig(kafka_line=line) if line else None)
    steps = []
    Log(d, config, SimulatedClock(now), clean_shutdown=True).clean(now=now, hook=steps.append)
    print(json.dumps(steps), flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        k, work = line.split(maxsplit=1)
        k, seen = int(k), []
        pid = os.fork()
        if pid == 0:
            def hook(step):
                seen.append(step)
                if len(seen) == k:
                    os.kill(os.getpid(), signal.SIGKILL)
            try:
                Log(work.strip(), config, SimulatedClock(now), clean_shutdown=True).clean(now=now, hook=hook)
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        ended = f"killed {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exited {os.WEXITSTATUS(status)}"
        print(ended, flush=True)
""")


def _config(**extra) -> LogConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LogConfig.from_properties({**PROPS, **extra})


def _append(d: Path, start: int, n: int, now: int, magic: int, codec: str) -> int:
    log = Log(d, _config(**{"segment.bytes": "700"}), SimulatedClock(now), clean_shutdown=True)
    off = start
    for i in range(n):
        # one key per batch written once (kept by every pass), two keys overwritten often
        recs = [(now + i, b"u%d" % off if j == 0 else b"k%d" % ((off + j) * 7 % 11), b"v%d" % (off + j))
                for j in range(3)]
        log.append_as_follower(batch(off, recs, magic=magic, compression=codec))
        off += 3
    log.close()
    return off


def _kafkafmt_records(d: Path) -> list:
    log = Log(d, _config(), SimulatedClock(T0), clean_shutdown=False)
    out = [[r.offset, None if r.key is None else r.key.hex(), None if r.value is None else r.value.hex()]
           for seg in log.segments for b in seg.log.batches() for r in b.records()]
    log.close()
    return out


def _latest(records: list) -> dict:
    return {k: v for _, k, v in records}


@pytest.fixture(scope="module")
def cleaner_oracle():
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    return cleaner_oracle_or_skip()


def _chosen(steps: list[str]) -> list[int]:
    """1-based kill points: each kind of step once, and every step of the first group replacing 2+ segments."""
    chosen = {steps.index(s) + 1 for s in set(steps)}
    start = 0
    for i, s in enumerate(steps):
        if s == "renamed":
            if steps[start:i].count("deleted") >= 2:
                chosen |= set(range(start + 1, i + 2))
                break
            start = i + 1
    return sorted(chosen)


@pytest.mark.parametrize("magic,codec,every,delay", [
    (2, "none", False, 0),
    (2, "none", False, 60000),  # the replaced files left .deleted for the scheduler
    pytest.param(2, "none", True, 0, marks=pytest.mark.slow),
    pytest.param(1, "gzip", True, 0, marks=pytest.mark.slow)])
def test_kill_at_each_step(cleaner_oracle, tmp_path, magic, codec, every, delay):
    props = {**PROPS, "file.delete.delay.ms": str(delay)}
    base = tmp_path / "base" / "t-0"
    off = _append(base, 0, 30, T0, magic, codec)
    log = Log(base, _config(), SimulatedClock(T0 + 1000), clean_shutdown=True)
    log.clean(now=T0 + 1000)  # small cleaned segments, merged into groups by the next pass
    log.close()
    _append(base, off, 30, T0 + 2000, magic, codec)
    before = _latest(_kafkafmt_records(shutil.copytree(base.parent, tmp_path / "ref") / "t-0"))
    now = T0 + 3000
    full = shutil.copytree(base.parent, tmp_path / "full") / "t-0"
    with killed_cleaner(full, now, props, tmp_path / "child.err") as (steps, kill_after):
        _kill_points(steps, kill_after, tmp_path, base, now, props, every, delay, before, cleaner_oracle)


@contextlib.contextmanager
def killed_cleaner(full: Path, now: int, props: dict, err: Path, line: str | None = None):
    """:data:`FORKING_CHILD` started on ``full``: yields the steps of its full pass and ``kill_after(k, work)``,
    which cleans the partition ``work`` in a fork killed after step ``k`` and says how the fork ended."""
    with err.open("w") as out:
        child = subprocess.Popen([sys.executable, "-c", FORKING_CHILD, str(full), str(now), json.dumps(props),
                                  *([line] if line else [])],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=out, text=True)
        try:
            steps = json.loads(child.stdout.readline() or "null")
            assert steps, err.read_text()

            def kill_after(k: int, work: Path) -> str:
                child.stdin.write(f"{k} {work}\n")
                child.stdin.flush()
                return child.stdout.readline().strip()
            yield steps, kill_after
        finally:
            child.stdin.close()
            child.wait(timeout=60)
            child.stdout.close()
    assert child.returncode == 0, err.read_text()


def _kill_points(steps, kill_after, tmp_path, base, now, props, every, delay, before, cleaner_oracle):
    assert {"cleaned", "swap", "deleted", "renamed", "checkpoint"} <= set(steps)
    assert steps.count("cleaned") >= 2
    for k in (range(1, len(steps) + 1) if every else _chosen(steps)):
        work = shutil.copytree(base.parent, tmp_path / f"k{k}")
        assert kill_after(k, work / "t-0") == f"killed {signal.SIGKILL.value}", (tmp_path / "child.err").read_text()
        if delay and steps[k - 1] in ("renamed", "checkpoint"):
            assert list((work / "t-0").glob("*.log.deleted")), f"after step {k} ({steps[k - 1]})"
        kafka = shutil.copytree(work, tmp_path / f"k{k}-kafka") / "t-0"
        theirs = cleaner_oracle.records(kafka, now=now, config=props)["records"]
        ours = _kafkafmt_records(work / "t-0")
        assert ours == theirs, f"after step {k} ({steps[k - 1]})"
        assert _latest(ours) == before, f"a key's latest value was lost after step {k} ({steps[k - 1]})"
