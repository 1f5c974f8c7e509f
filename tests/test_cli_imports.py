"""Which heavy libraries a ``kafkafmt`` command loads: a shell tool starts in a blink only if each verb
imports what it uses.  Each command runs in a fresh interpreter (``kafkafmt.cli.main``), then the
modules it left in ``sys.modules`` are read: deterministic, unlike a timing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kafkafmt

REPO = Path(kafkafmt.__file__).resolve().parent.parent
#: the libraries that cost a shell command most of its start-up (each 50-300 ms and tens of MiB)
HEAVY = ("numba", "llvmlite", "pyarrow", "pandas", "matplotlib", "pyspark")

_DRIVER = """
import json, sys
from kafkafmt.cli import main
try:
    rc = main(sys.argv[2:])
except SystemExit as e:
    rc = e.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
with open(sys.argv[1], "w") as f:
    json.dump({{"rc": rc, "heavy": heavy, "numpy": "numpy" in sys.modules}}, f)
"""


def loaded(tmp_path: Path, *args: str, env: dict | None = None) -> dict:
    """Run ``kafkafmt ARGS`` in a new interpreter; its exit code and the heavy modules it imported."""
    out = tmp_path / "loaded.json"
    p = subprocess.run([sys.executable, "-c", _DRIVER.format(heavy=HEAVY), str(out), *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                            **(env or {})})
    assert p.returncode == 0 and out.exists(), p.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    from kafkafmt.records.sample_sets import sample_record_sets
    d = tmp_path_factory.mktemp("samples")
    for name, (_, data) in sample_record_sets().items():
        (d / name).write_bytes(data)
    return d


def test_help_loads_no_heavy_library_nor_numpy(tmp_path):
    r = loaded(tmp_path, "--help")
    assert r == {"rc": 0, "heavy": [], "numpy": False}


@pytest.mark.parametrize("verb", ["dump", "explain", "clean", "audit", "scenario", "gen", "build", "annotate", "completion",
                                  "samples", "warmup", "pipeline"])
def test_each_verbs_help_loads_no_heavy_library(tmp_path, verb):
    r = loaded(tmp_path, verb, "--help")
    assert (r["rc"], r["heavy"]) == (0, [])


def test_a_deep_dump_of_a_small_file_loads_no_heavy_library(tmp_path, samples):
    r = loaded(tmp_path, "dump", "--deep", str(samples / "mixed-magics.bin"), str(samples / "v2-headers.bin"),
               str(samples / "v2-zstd.bin"), str(samples / "v0-lz4-wrapper.bin"))
    assert r == {"rc": 0, "heavy": [], "numpy": False}


def test_explain_fetch_loads_no_heavy_library(tmp_path, samples):
    r = loaded(tmp_path, "explain", "fetch", str(samples / "v2-headers.bin"), "--fetch-version", "3")
    assert (r["rc"], r["heavy"]) == (0, [])
    r = loaded(tmp_path, "explain", "produce", str(samples / "v2-idempotent.bin"), "--json")
    assert r["heavy"] == []


def test_a_deep_dump_of_a_large_file_loads_the_columnar_core_but_not_pandas(tmp_path):
    """Above ``COLUMNAR_MIN_BYTES`` the dump decodes with the columnar core (numba, pyarrow), but never
    pandas: ``pa.array`` and ``to_numpy`` import it on their first call (0.3-1.3 s of a dump here), so the core
    builds and reads its Arrow arrays from buffers."""
    from kafkafmt.records import MemoryRecordsBuilder
    from kafkafmt.records.dump_log import COLUMNAR_MIN_BYTES
    parts, offset = [], 0
    while sum(map(len, parts)) <= COLUMNAR_MIN_BYTES:
        b = MemoryRecordsBuilder(2, 0, 0, offset)
        for i in range(500):
            b.append(1_700_000_000_000 + i, b"k%d" % i, b"v" * 100)
        parts.append(b.build())
        offset += 500
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"".join(parts))
    r = loaded(tmp_path, "dump", "--deep", str(log), env={"KAFKAFMT_KERNELS": "compiled"})
    assert r["rc"] == 0
    assert "pyarrow" in r["heavy"] and "numba" in r["heavy"]  # the columnar core did the decoding
    assert "pandas" not in r["heavy"]
