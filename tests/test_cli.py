"""The kafkafmt command line, run as a user would (python -m kafkafmt ...)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kafkafmt.cli import main


def run(*args, check=True):
    p = subprocess.run([sys.executable, "-m", "kafkafmt", *args], capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    d = tmp_path_factory.mktemp("samples")
    run("samples", "--out", str(d))
    return d


def test_help_on_every_command(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for cmd in ("dump", "build", "samples", "annotate", "explain"):
        assert cmd in out
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0


def test_samples_are_reproducible(samples, tmp_path):
    run("samples", "--out", str(tmp_path))
    for f in samples.iterdir():
        assert (tmp_path / f.name).read_bytes() == f.read_bytes()


def test_dump_lines(samples):
    out = run("dump", str(samples / "v1-gzip-wrapper.bin"), "--deep").stdout.splitlines()
    assert out[0] == f"Dumping {samples / 'v1-gzip-wrapper.bin'}"
    assert out[1].startswith("offset: 104 position: 0 CreateTime: ")
    assert out[1].endswith("magic: 1 compresscodec: gzip crc: %s isvalid: true" % out[1].split("crc: ")[1].split()[0])
    assert [line.split()[2] for line in out[2:]] == ["100", "101", "102", "103", "104"]
    assert all(line.startswith("| offset: ") and line.endswith("}") for line in out[2:])


def test_dump_log_file_prints_starting_offset_and_trailing_bytes(samples, tmp_path):
    seg = tmp_path / "00000000000000000042.log"
    seg.write_bytes((samples / "v2-headers.bin").read_bytes() + b"\x00" * 5)
    out = run("dump", str(seg)).stdout.splitlines()
    assert out[1] == "Log starting offset: 42"
    assert out[-1] == "Found 5 invalid bytes at the end of 00000000000000000042.log"


def test_dump_json_then_build_is_identical(samples, tmp_path):
    for name in ("v2-headers.bin", "mixed-magics.bin", "v2-transaction-commit.bin", "v0-uncompressed.bin",
                 "kip228-negative-timestamps.bin"):
        src = samples / name
        js = run("dump", str(src), "--json").stdout
        assert all(json.loads(line)["file"] == str(src) for line in js.splitlines())
        spec = tmp_path / (name + ".jsonl")
        spec.write_text(js)
        out = tmp_path / name
        run("build", str(spec), "-o", str(out))
        if "gzip" not in name and "mixed" not in name:
            assert out.read_bytes() == src.read_bytes(), name
        else:
            a = run("dump", str(src), "--deep", "--print-data-log").stdout.splitlines()[1:]
            b = run("dump", str(out), "--deep", "--print-data-log").stdout.splitlines()[1:]
            def strip(lines):
                return [ln.split(" crc:")[0].split(" size:")[0] for ln in lines]
            assert strip(a) == strip(b)


def test_corrupt_file_gives_clear_error_and_exit_1(tmp_path):
    f = tmp_path / "bad.bin"
    f.write_bytes(b"\x00" * 8 + b"\x00\x00\x00\x05" + b"\x00" * 10)
    p = run("dump", str(f), check=False)
    assert p.returncode == 1
    assert "CorruptRecordError" in p.stderr and "position 0" in p.stderr and "Traceback" not in p.stderr


def test_annotate(samples):
    out = run("annotate", str(samples / "v0-uncompressed.bin")).stdout
    assert "batch[0].crc" in out and "batch[2].value = " in out


def test_build_rejects_bad_spec(tmp_path):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"magic": 2, "records": [{"timestamp": 1, "key": {"hex": "zz"}}]}))
    p = run("build", str(spec), "-o", str(tmp_path / "o.bin"), check=False)
    assert p.returncode == 1 and "SpecError" in p.stderr
    assert not (tmp_path / "o.bin").exists()
