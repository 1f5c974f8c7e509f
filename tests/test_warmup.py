"""First use of the compiled decoder: a process with an empty numba cache decodes exactly as the
reference decoder does and leaves the cache behind; ``kafkafmt warmup`` loads it and fills in every
kernel; with no writable cache directory the kernels still compile.  (No timing here: the seconds
are the bench's first-use line.)  The cold processes run as a job started when the session begins
(tests/head_start.py), beside the tests before this one."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numba
import numpy as np
import pyarrow as pa
import pytest

import head_start
from kafkafmt.log.cleaner import kernels as cleaner_kernels  # noqa: F401  (the cleaner's kernels: jit.KERNELS holds every kernel)
from kafkafmt.records import records_table
from kafkafmt.records.fast import build_kernel, jit, kernels  # noqa: F401  (fills jit.KERNELS)
from kafkafmt.samples import sample_record_sets

#: a first use as in a notebook: every sample record set through records_table, in a new process
COLD_DECODE = """
import json, sys
import pyarrow as pa
from kafkafmt.records import records_table
from kafkafmt.records.fast import jit
from kafkafmt.samples import sample_record_sets
with pa.OSFile(sys.argv[1], "wb") as f:
    for name, (_, data) in sample_record_sets().items():
        t = records_table(data)
        with pa.ipc.new_stream(f, t.schema) as w:
            w.write_table(t)
compiled, loaded = jit.cache_stats()
print(json.dumps({"compiled": compiled, "loaded": loaded, "cache_dirs": jit.cache_dirs()}))
"""


def _cold_commands(tmp):
    """A cold process decoding every sample (into ``tmp/tables.arrows``), then ``kafkafmt warmup``, on the empty
    numba cache ``tmp/numba-cache``."""
    (tmp / "numba-cache").mkdir()
    return [[sys.executable, "-c", COLD_DECODE, str(tmp / "tables.arrows")], [sys.executable, "-m", "kafkafmt", "warmup"]]


#: two processes compiling every kernel (about 2 minutes of one core): started when the session begins
head_start.job("cold-numba-cache", module=__name__, fixture="cold_cache", lane="cpu", commands=_cold_commands,
               env=lambda tmp: dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "numba-cache")), timeout=900)


@pytest.fixture()
def cold_cache():
    """The cold job's directory, its numba cache, the cold process's JSON line and warmup's report."""
    done = head_start.result("cold-numba-cache")
    for p in done.runs:
        assert p.returncode == 0, p.stdout + p.stderr
    assert len(done.runs) == 2
    return done.tmp, done.tmp / "numba-cache", done.runs[0].stdout, done.runs[1].stdout


def test_cold_process_decodes_as_the_reference_and_warmup_loads_its_cache(cold_cache):
    tmp_path, cache, cold, report = cold_cache
    out = tmp_path / "tables.arrows"
    stats = json.loads(cold.strip().splitlines()[-1])
    assert stats["compiled"] > 0 and stats["loaded"] == 0  # a truly cold cache: nothing to load
    assert stats["cache_dirs"] and all(d.startswith(str(cache)) for d in stats["cache_dirs"])
    with pa.OSFile(str(out), "rb") as f:
        for name, (_, data) in sample_record_sets().items():
            assert pa.ipc.open_stream(f).read_all().equals(records_table(data, engine="reference")), name

    m = re.search(r"(\d+) kernels ready in [\d.]+ s: (\d+) compiled, (\d+) loaded from the cache; cache: (.+)", report)
    assert m, report
    n, loaded, where = int(m[1]), int(m[3]), m[4].strip().split(", ")
    assert n == len(jit.KERNELS)
    # every signature the cold process compiled is loaded, not compiled again; warmup compiles only what
    # the decode above did not reach (the builder, the legacy CRC pass, the cleaner's kernels and the
    # specializations they compile of the kernels they call)
    assert loaded >= stats["compiled"] > 0
    assert all(w.startswith(str(cache)) for w in where)  # one directory per package folder holding kernels
    assert "agrees with the reference on 11 sample record sets" in report
    cached = {f.split("-")[0] for w in where for f in os.listdir(w) if f.endswith(".nbi")}
    assert cached >= {f"{k.py_func.__module__.rsplit('.', 1)[1]}.{name}" for name, k in jit.KERNELS.items()}


#: every kind of input a caller may hand over: byte containers to the decoder, number and byte columns to
#: the builder; each kernel must compile (or load) one signature for all of them, not one per kind
ONE_SIGNATURE = """
import json, mmap, tempfile
import numpy as np, pyarrow as pa
from kafkafmt.records import build_v2_batches, decode_records, records_table
from kafkafmt.records.fast import jit
from kafkafmt.samples import sample_record_sets
for _, data in sample_record_sets().values():
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            for source in (data, bytearray(data), memoryview(data), m):
                records_table(source)
                list(decode_records(source))
readonly = pa.array([5, 6], pa.int64()).to_numpy()
for ts in ([5, 6], np.arange(4)[::2], readonly, np.array([5, 6], np.int32), pa.array([5, 6], pa.int64())):
    for keys in ([b"k", None], pa.array([b"k", None]), pa.array(["k", None]), [None, None]):
        build_v2_batches(ts, keys, [b"v", b""], [[("h", b"x")], []], offsets=ts)
        build_v2_batches(ts, keys, pa.array([b"v", None], pa.large_binary()))
print(json.dumps({name: len(k.signatures) for name, k in jit.KERNELS.items()}))
"""


def test_each_kernel_has_one_signature_whatever_the_input():
    counts = json.loads(subprocess.run([sys.executable, "-c", ONE_SIGNATURE], capture_output=True, text=True,
                                       check=True).stdout.strip().splitlines()[-1])
    assert counts and all(n <= 1 for n in counts.values()), counts


def test_a_kernel_compiles_without_a_writable_cache(monkeypatch):
    """numba refuses ``cache=True`` when no cache directory is writable (a read-only site-packages and
    home): the kernel is then compiled in each process, with a warning, instead of failing the import."""
    monkeypatch.setattr(numba.config, "CACHE_LOCATOR_CLASSES", "ZipCacheLocator")  # applies to no .py file
    monkeypatch.setattr(jit, "_uncached", [])
    monkeypatch.setattr(jit, "KERNELS", dict(jit.KERNELS))

    def plus_one(a):
        return a[0] + 1

    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        k = jit.kernel(plus_one)
    assert k(np.array([41], np.int64)) == 42
    assert jit.cache_stats()[0] >= 1 and "plus_one" in jit.KERNELS
