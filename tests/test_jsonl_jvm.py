"""The oracles' one transport (conformance/kafkarig/jsonl_jvm.py): a process that dies or answers garbage is reported with
its exit status and stderr, not as a hang or a JSON error, and answers are read one line per request."""
from __future__ import annotations

import sys

import pytest

from kafkarig.jsonl_jvm import (
    JsonLinesJvm,
    JvmCrashed,
    OracleError,
    close_session_jvm,
    session_jvm,
    session_jvm_or_skip,
)


def _server(script: str) -> JsonLinesJvm:
    return JsonLinesJvm([sys.executable, "-c", script], "test server")


def test_one_answer_per_request():
    echo = _server("import sys, json\nfor line in sys.stdin:\n"
                   "    print(json.dumps({'ok': True, 'got': json.loads(line)}), flush=True)")
    try:
        assert echo.request("ping", n=1) == {"ok": True, "got": {"op": "ping", "n": 1}}
        assert echo.request("again")["got"]["op"] == "again" and echo.requests_served == 2 and echo.alive
    finally:
        echo.close()
    assert not echo.alive


def test_a_dead_process_is_reported_with_its_stderr():
    dead = _server("import sys\nsys.stdin.readline()\nsys.stderr.write('boom: no such class')\nsys.exit(3)")
    try:
        with pytest.raises(JvmCrashed, match=r"(?s)test server exited with 3.*boom: no such class"):
            dead.request("ping")
        with pytest.raises(JvmCrashed, match="exited with 3"):
            dead.request("ping")
    finally:
        dead.close()


def test_a_line_that_is_not_json_is_reported():
    noisy = _server("import sys\nsys.stdin.readline()\nprint('WARNING: something', flush=True)\nsys.stdin.read()")
    try:
        with pytest.raises(JvmCrashed, match="non-JSON line: 'WARNING: something"):
            noisy.request("ping")
    finally:
        noisy.close()


ANSWER = ("import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
          "    print(json.dumps({'ok': r['op'] != 'fail', 'error': 'java.lang.IllegalStateException', 'message': 'no'}),"
          " flush=True)")


def test_call_returns_an_ok_answer_and_raises_the_oracles_error():
    server = _server(ANSWER)
    try:
        assert server.call("ping")["ok"] is True
        with pytest.raises(OracleError, match="java.lang.IllegalStateException: no") as info:
            server.call("fail")
        assert info.value.error == "java.lang.IllegalStateException" and info.value.response["ok"] is False
    finally:
        server.close()


def test_one_jvm_per_session_started_again_when_it_died():
    started = []

    def start():
        started.append(_server(ANSWER))
        return started[-1]
    try:
        first = session_jvm("test oracle", start)
        assert session_jvm("test oracle", start) is first and len(started) == 1
        first.close()
        again = session_jvm("test oracle", start)
        assert again is not first and again.alive and len(started) == 2
    finally:
        close_session_jvm("test oracle")
    assert not started[-1].alive


def test_a_missing_oracle_skips_naming_what_is_missing(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="test oracle unavailable: Java 17 not found"):
        session_jvm_or_skip("test oracle", lambda: "Java 17 not found", lambda: pytest.fail("started"))
