"""tests/head_start.py, the jobs started with the session: which jobs selected tests need, and how a job runs
(its commands in order, stopping at the first that fails; a job past its limit stopped and said so)."""
from __future__ import annotations

import sys
from types import SimpleNamespace

import head_start


def _item(module: str, fixtures=(), params=None):
    item = SimpleNamespace(module=SimpleNamespace(__name__=module), fixturenames=list(fixtures))
    if params is not None:
        item.callspec = SimpleNamespace(params=params)
    return item


def _register(name: str, fixture: str, module: str = "test_head_start_fake") -> None:
    head_start.job(name, module=module, fixture=fixture, lane="cpu", commands=lambda tmp: [])


def test_a_job_is_needed_by_a_test_of_its_module_using_its_fixture_or_naming_it_as_a_parameter():
    _register("hs-a", "fix_a")
    _register("hs-b", "fix_b")
    _register("hs-c", "fix_a", module="test_head_start_other")
    names = lambda items: [j.name for j in head_start.needed(items) if j.name.startswith("hs-")]  # noqa: E731
    assert names([_item("test_head_start_fake", ["fix_a"])]) == ["hs-a"]
    assert names([_item("test_head_start_fake", ["request"], {"run": "fix_b", "step": 3})]) == ["hs-b"]
    assert names([_item("test_head_start_fake", ["other"])]) == []
    assert names([_item("test_head_start_other", ["fix_a"]), _item("test_head_start_fake", ["fix_b"])]) == \
        ["hs-b", "hs-c"]  # registration order, whatever the items' order


def test_a_job_s_commands_run_in_order_in_its_directory_until_one_fails():
    job = head_start.Job("hs-run", "m", "f", "cpu", commands=lambda tmp: [
        [sys.executable, "-c", f"open({str(tmp / 'a')!r}, 'w').write('1'); print('first')"],
        [sys.executable, "-c", "import sys; print('second'); sys.exit(3)"],
        [sys.executable, "-c", "print('never')"]])
    done = head_start._run(job)
    assert [p.returncode for p in done.runs] == [0, 3]
    assert [p.stdout.strip() for p in done.runs] == ["first", "second"] and done.last.returncode == 3
    assert (done.tmp / "a").read_text() == "1"


def test_a_job_past_its_limit_is_stopped_and_says_so():
    job = head_start.Job("hs-slow", "m", "f", "cpu", timeout=1,
                         commands=lambda tmp: [[sys.executable, "-c", "import time; time.sleep(60)"]])
    done = head_start._run(job)
    assert done.last.returncode != 0 and "hs-slow stopped after 1 s" in done.last.stderr
