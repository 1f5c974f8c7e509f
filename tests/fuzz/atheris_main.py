"""Coverage-guided fuzzing of the targets in ``targets.py`` with atheris (libFuzzer for Python).

    python tests/fuzz/atheris_main.py TARGET [libFuzzer options]     # one target, e.g. records
    python tests/fuzz/atheris_main.py all [libFuzzer options]        # every target, chosen by byte 0

The first positional libFuzzer argument is the corpus directory; it is seeded from ``seeds.py``
when empty.  A crash (any exception but a KafkaFmtError) stops the run, prints the traceback and
writes the input to ``-artifact_prefix``; ``make fuzz`` sets these (see the Makefile).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# numba compiles the columnar kernels from their bytecode: atheris' coverage hooks must stay out of it
# (atheris excludes exact module names only)
_NUMBA_MODULES = sorted(f"kafkafmt.records.fast.{p.stem}" for p in
                        (Path(__file__).parents[2] / "kafkafmt" / "records" / "fast").glob("*.py"))
with atheris.instrument_imports(include=["kafkafmt"], exclude=["kafkafmt.records.fast", *_NUMBA_MODULES]):
    import seeds
    import targets

NAMES = sorted(targets.TARGETS)
#: what ``all`` multiplexes (byte 0 picks one)
ALL = [n for n in NAMES if n not in targets.KNOWN_OPEN]


def _seed_corpus(target: str, corpus: str) -> None:
    os.makedirs(corpus, exist_ok=True)
    if os.listdir(corpus):
        return
    names = ALL if target == "all" else [target]
    for name in names:
        prefix = bytes([ALL.index(name)]) if target == "all" else b""
        for i, s in enumerate(seeds.seeds_for(name)):
            with open(os.path.join(corpus, f"seed-{name}-{i}"), "wb") as f:
                f.write(prefix + s)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in NAMES + ["all"]:
        sys.exit(f"usage: atheris_main.py {{{'|'.join(NAMES + ['all'])}}} [CORPUS_DIR] [libFuzzer options]")
    target = sys.argv.pop(1)
    corpus = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    if corpus:
        _seed_corpus(target, corpus)

    if target == "all":
        def one_input(data: bytes) -> None:
            if data:
                targets.run_target(ALL[data[0] % len(ALL)], data[1:])
    else:
        def one_input(data: bytes) -> None:
            targets.run_target(target, data)

    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
