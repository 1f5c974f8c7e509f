"""One convention on every ``kafkafmt`` verb: ``--format`` (the older ``--json`` still works), the same exit
statuses listed in every ``--help`` (0 done, 1 Kafka would refuse / a check disagrees / unreadable input,
2 usage), errors in one line on stderr."""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys

import pytest

from kafkafmt.cli import COMMANDS, main, make_parser
from kafkafmt.records.sample_sets import sample_record_sets
from kafkafmt.tools import EXIT_CODES


def _leaves(parser: argparse.ArgumentParser, path=()):
    """Every command that runs something: (words, its parser)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for a in subs:
        for name, child in a.choices.items():
            yield from _leaves(child, (*path, name))


LEAVES = sorted(_leaves(make_parser()))


def test_every_verb_is_reached():
    assert {words[0] for words, _ in LEAVES} == set(COMMANDS)


@pytest.mark.parametrize("words", [w for w, _ in LEAVES], ids=" ".join)
def test_every_help_lists_format_and_the_exit_codes(words, capsys):
    with pytest.raises(SystemExit) as e:
        main([*words, "--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--format" in out
    assert " ".join(EXIT_CODES.split()) in out


def test_the_top_level_help_lists_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert " ".join(EXIT_CODES.split()) in " ".join(capsys.readouterr().out.split())


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    d = tmp_path_factory.mktemp("samples")
    for name, (_, data) in sample_record_sets().items():
        (d / name).write_bytes(data)
    return d


def _out(argv, capsys) -> tuple[int, str, str]:
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("argv", [["dump", "{s}/mixed-magics.bin"], ["explain", "fetch", "{s}/v2-headers.bin"],
                                  ["explain", "produce", "{s}/v2-idempotent.bin", "--now", "1700000009000"],
                                  ["explain", "lines"]])
def test_the_older_json_spelling_is_format_json(argv, samples, capsys):
    argv = [a.format(s=samples) for a in argv]
    old = _out([*argv, "--json"], capsys)
    new = _out([*argv, "--format", "json"], capsys)
    assert old == new and old[0] == 0
    text = new[1]
    docs = [json.loads(line) for line in text.splitlines()] if argv[0] == "dump" else [json.loads(text)]
    assert docs and _out(argv, capsys)[1] != text  # the table is another thing


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkafmt", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("verb", COMMANDS)
def test_a_usage_error_exits_2_on_every_verb(verb):
    p = _cli(verb, "--format", "no-such-format")
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("usage: kafkafmt ") and f"kafkafmt {verb}: error: " in p.stderr, p.stderr


def test_a_refusal_or_an_unreadable_input_exits_1_in_one_line(samples, tmp_path):
    bad = tmp_path / "bad.bin"
    data = bytearray((samples / "v2-headers.bin").read_bytes())
    data[20] ^= 0xFF  # a flipped byte under the CRC: the broker refuses the produce
    bad.write_bytes(bytes(data))
    p = _cli("explain", "produce", str(bad))
    assert p.returncode == 1 and "outcome: REJECTED with CorruptRecordException" in p.stdout, p.stdout
    for args in (["dump", str(tmp_path / "missing.log")], ["explain", "fetch", str(tmp_path / "missing.log")],
                 ["clean", str(tmp_path / "nowhere")]):
        p = _cli(*args)
        assert p.returncode == 1, p
        assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("kafkafmt: ") and "Traceback" not in p.stderr
    p = _cli("dump", "--strict", str(bad))
    assert p.returncode == 1 and "isvalid: false" in p.stdout
    assert _cli("dump", str(bad)).returncode == 0  # as kafka-dump-log: reported, exit 0


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_scripts_name_every_verb_and_parse(shell, tmp_path):
    p = _cli("completion", shell)
    assert p.returncode == 0, p.stderr
    script = tmp_path / f"kafkafmt.{shell}"
    script.write_text(p.stdout)
    for words, _ in LEAVES:
        assert all(w in p.stdout for w in words), words
    assert "--format" in p.stdout and "--kafka-line" in p.stdout
    if shell == "bash":
        assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
        probe = (f"source {script}; COMP_WORDS=(kafkafmt ex); COMP_CWORD=1; _shtab_kafkafmt; echo ${{COMPREPLY[@]}}; "
                 f"COMP_WORDS=(kafkafmt explain ''); COMP_CWORD=2; _shtab_kafkafmt; echo ${{COMPREPLY[@]}}")
        out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True).stdout.splitlines()
        explain = " ".join(dict.fromkeys(w[1] for w, _ in _leaves(make_parser()) if w[0] == "explain"))
        assert out == ["explain", explain], out
    elif shutil.which("zsh"):  # a syntax check where zsh is installed (the content is checked above everywhere)
        assert subprocess.run(["zsh", "-n", str(script)]).returncode == 0


def test_every_json_document_is_described_in_the_reference():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli-json.md").read_text()
    for words, parser in LEAVES:
        fmt = next(a for a in parser._actions if a.dest == "format" and a.option_strings == ["--format"])
        if "json" in fmt.choices:
            assert f"`kafkafmt {' '.join(words)}" in text, words
