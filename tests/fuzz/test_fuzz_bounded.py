"""Issue 12, item 1: the bounded fuzz run of ``make test`` (about a minute in all).

Two fuzzers over the targets of ``targets.py`` (every entry point that takes bytes):
hypothesis strategies that mutate valid inputs (``strategies.py``; fixed seed, so a run is
reproducible) and atheris, coverage-guided, over every target at once for a fixed time.  Both must
find nothing: any exception other than a KafkaFmtError fails the test with the input that caused
it (add it to ``regressions/`` with its fix).  ``make fuzz`` runs the long campaigns.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seeds
import strategies
from ci_mode import skip_or_fail
from targets import KNOWN_OPEN, TARGETS, run_target

HERE = Path(__file__).parent
#: seconds of coverage-guided fuzzing in the bounded run (FUZZ_BOUNDED_SECONDS overrides)
ATHERIS_SECONDS = int(os.environ.get("FUZZ_BOUNDED_SECONDS", "15"))
EXAMPLES = {"recovery": 40, "index": 60, "explain": 80}
FUZZED = sorted(t for t in TARGETS if t not in KNOWN_OPEN)


def _inputs(target: str) -> st.SearchStrategy[bytes]:
    if target in ("index", "build") or target.startswith("codec_"):
        own = strategies.mutated(st.sampled_from(seeds.seeds_for(target)))
        return st.one_of(own, strategies.spec_mutations()) if target == "build" else own
    return strategies.mutated()


@pytest.mark.parametrize("target", FUZZED)
def test_hypothesis_mutations_find_no_crash(target):
    @settings(max_examples=EXAMPLES.get(target, 120), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=_inputs(target))
    def check(data):
        run_target(target, data)

    check()


def test_mutations_reach_the_record_decoder():
    """The strategies are not toothless: with CRCs recomputed, mutated batches pass the CRC check
    and some fail inside record decoding rather than at the batch header."""
    from kafkafmt.errors import InvalidRecordError
    from kafkafmt.records import MemoryRecords

    seen = set()

    @settings(max_examples=300, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=strategies.mutated(st.sampled_from(seeds.record_sets())).map(strategies.fix_crcs))
    def check(data):
        try:
            for b in MemoryRecords(data).batches():
                if b.is_valid():
                    seen.add("crc valid")
                    list(b.records())
        except InvalidRecordError as e:
            if "record" in e.reason.lower():
                seen.add("record decoder")
        except Exception:
            pass

    check()
    assert seen == {"crc valid", "record decoder"}


def test_nested_wrappers_are_refused_at_every_depth():
    from kafkafmt.constants import CompressionType
    from kafkafmt.errors import InvalidRecordError
    from kafkafmt.records import MemoryRecords

    data = strategies.nested_wrapper(60, CompressionType.GZIP, 1)
    (b,) = MemoryRecords(data).batches()
    with pytest.raises(InvalidRecordError, match="Inner messages must not be compressed"):
        list(b.records())


def test_atheris_coverage_guided_run_finds_no_crash(tmp_path):
    if importlib.util.find_spec("atheris") is None:
        skip_or_fail("atheris is not installed (pip install -e '.[tests]')")
    corpus = tmp_path / "corpus"
    cmd = [sys.executable, str(HERE / "atheris_main.py"), "all", str(corpus), f"-max_total_time={ATHERIS_SECONDS}",
           "-seed=12", "-timeout=20", "-rss_limit_mb=1500", f"-artifact_prefix={tmp_path}/", "-print_final_stats=1"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=ATHERIS_SECONDS + 120)
    crashes = sorted(x.name for x in tmp_path.iterdir() if x.name.startswith(("crash-", "timeout-", "oom-")))
    assert p.returncode == 0 and not crashes, f"{crashes}\n{p.stderr[-4000:]}"
    runs = [line for line in p.stderr.splitlines() if line.startswith("stat::number_of_executed_units")]
    assert runs and int(runs[0].split(":")[-1]) > 100, p.stderr[-2000:]
