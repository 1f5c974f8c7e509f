"""The kernels run interpreted (:mod:`kafkafmt.kernel_mode`) give the bytes the compiled kernels give, and
the command line runs small inputs interpreted (no numba, no compile on a first use).

A log directory of every codec, tombstones, transactions with aborts and a v1 past turning v2
(``WORKLOAD``) is cleaned partition by partition in two processes, ``KAFKAFMT_KERNELS=interpreted`` and
``compiled``: every file of the two copies must be the same bytes.  The compiled cleaner is checked
against Kafka's own elsewhere (tests/log/test_log_cleaner_vs_kafka.py); those tests also pass run with
``KAFKAFMT_KERNELS=interpreted``."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kafkafmt
from test_cli_imports import loaded

REPO = Path(kafkafmt.__file__).resolve().parent.parent
NOW = "1800000000000"
WORKLOAD = """\
name: kernel-mode
seed: 5
start_ms: 1700000000000
duration_ms: 20000
broker:
  inter.broker.protocol.version: "2.8"
topics:
  - name: users
    partitions: 1
    config: {segment.bytes: 16384}
    producers:
      - {name: profile, rate: 30, keys: 40, batch_records: [1, 5], value_bytes: [20, 80], tombstones: 0.1, codec: lz4}
      - {name: bulk, rate: 10, keys: 40, batch_records: [2, 4], value_bytes: [20, 80], codec: zstd}
  - name: orders
    partitions: 1
    config: {segment.bytes: 16384}
    producers:
      - {name: checkout, rate: 20, keys: 50, batch_records: [2, 6], value_bytes: [30, 60],
         transactions: {batches: [1, 4], abort: 0.2}}
  - name: legacy
    partitions: 1
    config: {segment.bytes: 8192, message.format.version: "0.10.2"}
    changes:
      - {at_ms: 10000, config: {message.format.version: "3.0"}}
    producers:
      - {name: settings, rate: 20, keys: 30, batch_records: [1, 6], value_bytes: [20, 60], codec: gzip,
         idempotent: false, magic: [{from_ms: 0, magic: 1}, {from_ms: 10000, magic: 2}]}
      - {name: hot, rate: 10, keys: 5, value_bytes: [20, 60], idempotent: false, codec: snappy,
         magic: [{from_ms: 0, magic: 1}, {from_ms: 10000, magic: 2}]}
"""
PARTITIONS = ("users-0", "orders-0", "legacy-0")


def kafkafmt_run(*args: str, mode: str | None = None, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("KAFKAFMT_KERNELS", None)
    if mode:
        env["KAFKAFMT_KERNELS"] = mode
    p = subprocess.run([sys.executable, "-m", "kafkafmt", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("kernel-mode")
    (d / "w.yaml").write_text(WORKLOAD)
    kafkafmt_run("gen", "--workload", "w.yaml", "--out", "logs", "--jobs", "1", "--quiet", mode="interpreted", cwd=d)
    return d / "logs"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and p.name != ".lock"}


#: ``kafkafmt clean`` (:func:`kafkafmt.cli.main`) of each partition directory given, one after another in one
#: interpreter (one start and one kernels' load per mode, not per partition): their exit codes and outputs, and
#: whether numba was loaded (the two modes' runs must differ there), as JSON
_CLEAN_EACH = """
import contextlib, io, json, sys
from kafkafmt.cli import main
ran = []
for part in sys.argv[1:]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["clean", part, "--now", "%s", "-c", "cleanup.policy=compact"])
    ran.append([rc, out.getvalue()])
print(json.dumps({"ran": ran, "numba": "numba" in sys.modules}))
""" % NOW


def test_interpreted_kernels_clean_to_the_compiled_kernels_bytes(logs, tmp_path):
    copies = {}
    for mode in ("compiled", "interpreted"):
        copies[mode] = tmp_path / mode
        shutil.copytree(logs, copies[mode])
        env = {**os.environ, "KAFKAFMT_KERNELS": mode,
               "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        p = subprocess.run([sys.executable, "-c", _CLEAN_EACH, *(str(copies[mode] / part) for part in PARTITIONS)],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, p.stderr[-3000:]
        run = json.loads(p.stdout)
        assert run["numba"] == (mode == "compiled")
        for rc, out in run["ran"]:
            assert rc == 0 and "\ncleaned offsets [0, " in out, out
    compiled, interpreted = _files(copies["compiled"]), _files(copies["interpreted"])
    assert any(name.endswith(".log.deleted") for name in compiled)  # segments were replaced
    assert compiled.keys() == interpreted.keys()
    assert [n for n in compiled if compiled[n] != interpreted[n]] == []


def test_the_command_line_cleans_and_audits_a_small_log_interpreted(logs, tmp_path):
    work = tmp_path / "logs"
    shutil.copytree(logs, work)
    r = loaded(tmp_path, "clean", str(work / "users-0"), "--now", NOW, "-c", "cleanup.policy=compact")
    assert (r["rc"], r["heavy"]) == (0, [])
    r = loaded(tmp_path, "audit", str(logs), "--quiet", "--now-ms", NOW, "--format", "json", "-o", "a.json")
    assert (r["rc"], r["heavy"]) == (0, [])
    compiled = kafkafmt_run("audit", str(logs), "--quiet", "--now-ms", NOW, "--format", "json", mode="compiled",
                            cwd=tmp_path).stdout
    assert [json.loads(line) for line in (tmp_path / "a.json").read_text().splitlines()] == \
        [json.loads(line) for line in compiled.splitlines()]


_CODEC_DRIVER = """
import hashlib, json, sys
import numpy as np
from kafkafmt.compression import lz4_block, snappy_block
rng = np.random.default_rng(7)
inputs = [b"", b"a", bytes(range(256)) * 40, b"kafka " * 3000, rng.integers(0, 4, 70_000, dtype=np.uint8).tobytes(),
          rng.integers(0, 256, 5_000, dtype=np.uint8).tobytes()]
out = {}
for i, data in enumerate(inputs):
    for release in ("1.1.3", "1.1.10"):
        out[f"snappy {release} {i}"] = hashlib.sha256(snappy_block.compress_raw(data, release)).hexdigest()
    for name, compressor in sorted(lz4_block.RELEASES.items()):
        out[f"lz4 {name} {i}"] = hashlib.sha256(lz4_block.compress_block(data[:65_536], compressor)).hexdigest()
print(json.dumps({"digests": out, "numba": "numba" in sys.modules}))
"""


def test_the_codecs_block_compressors_write_the_same_bytes_interpreted(tmp_path):
    """The release-exact lz4 and snappy block compressors (below the records floor: kernel_mode.njit) run as Python
    in an interpreted process, without numba, and write the compiled kernels' bytes."""
    runs = {}
    for mode in ("compiled", "interpreted"):
        env = {**os.environ, "KAFKAFMT_KERNELS": mode,
               "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        p = subprocess.run([sys.executable, "-c", _CODEC_DRIVER], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=900)
        assert p.returncode == 0, p.stderr[-3000:]
        runs[mode] = json.loads(p.stdout)
    assert (runs["compiled"]["numba"], runs["interpreted"]["numba"]) == (True, False)
    compiled, interpreted = runs["compiled"]["digests"], runs["interpreted"]["digests"]
    assert len(compiled) == 6 * (2 + 3) and [k for k in compiled if compiled[k] != interpreted[k]] == []
