"""Issue 12, item 3: limits bound the work a decode may do.

Every codec's decompression bomb, and batches of millions of the smallest records that fit under
the decompression cap, are refused with a DecodeLimitError by the record reader and by ``dump``,
each within 5 s of CPU and 500 MB peak RSS, measured in a fresh interpreter (``limits_child.py``).
These are limits with generous margins, not speed goals.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import bombs
from kafkafmt.errors import DecodeLimitError, DecompressionLimitError, IllegalArgumentError
from kafkafmt.limits import DEFAULT_MAX_RECORDS_PER_BATCH, current_limits, decode_limits
from kafkafmt.records import MemoryRecords

HERE = Path(__file__).parent
CPU_LIMIT_S = 5.0
RSS_LIMIT_MB = 500.0


@pytest.fixture(scope="module")
def measured():
    p = subprocess.run([sys.executable, str(HERE / "limits_child.py")], capture_output=True, text=True,
                       cwd=HERE, timeout=600)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    return {r["case"]: r for r in rows[:-1]}


def test_every_codec_has_a_bomb_and_a_tiny_record_blowup(measured):
    for c in bombs.CODECS:
        assert f"zero-{c}-v2" in measured and f"tiny-{c}-v2" in measured
    assert {"zero-gzip-v1", "zero-snappy-v1", "zero-lz4-v0", "tiny-gzip-v1", "tiny-lz4-v0"} <= set(measured)


def test_bombs_are_refused_within_the_limits(measured):
    for name, r in measured.items():
        expected = DecompressionLimitError if name.startswith("zero") else DecodeLimitError
        assert r["outcome"] == expected.__name__, r
        assert r["dump_error"] == expected.__name__, r
        assert r["cpu_seconds"] < CPU_LIMIT_S, r
        assert r["peak_rss_mb"] < RSS_LIMIT_MB, r


def test_small_inputs_blow_up_without_the_record_limit():
    """The blowups are real: under 1 MB of input, tens of millions of records below the byte cap."""
    data = bombs.tiny_records("zstd", 38_000_000)
    assert len(data) < 1 << 20
    (batch,) = MemoryRecords(data).batches()
    assert batch.count > 38_000_000 and batch.count * len(bombs.TINY_V2_RECORD) < current_limits().max_decompressed_bytes
    with pytest.raises(DecodeLimitError, match="max_records_per_batch=500000") as ei:
        next(batch.records())
    assert ei.value.position == 0


def test_the_limits_are_configurable_per_block():
    data = bombs.tiny_records("lz4", 2000)
    (batch,) = MemoryRecords(data).batches()
    assert sum(1 for _ in batch.records()) == batch.count
    with decode_limits(max_records_per_batch=batch.count - 1):
        with pytest.raises(DecodeLimitError):
            list(batch.records())
    with decode_limits(max_decompressed_bytes=100):
        with pytest.raises(DecompressionLimitError, match="max_bytes=100"):
            list(batch.records())
    assert current_limits().max_records_per_batch == DEFAULT_MAX_RECORDS_PER_BATCH
    v1 = bombs.tiny_records("gzip", 300, magic=1)
    (wrapper,) = MemoryRecords(v1).batches()
    n = sum(1 for _ in wrapper.records())
    with decode_limits(max_records_per_batch=n - 1):
        with pytest.raises(DecodeLimitError, match="inner messages"):
            list(wrapper.records())
    with pytest.raises(IllegalArgumentError):
        with decode_limits(max_records_per_batch=-1):
            pass


def test_the_limits_are_configurable_by_environment():
    code = ("from kafkafmt.limits import current_limits as c; l = c(); "
            "print(l.max_records_per_batch, l.max_decompressed_bytes)")
    env = dict(os.environ, KAFKAFMT_MAX_RECORDS_PER_BATCH="7", KAFKAFMT_MAX_DECOMPRESSED_BYTES="1024")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["7", "1024"]
