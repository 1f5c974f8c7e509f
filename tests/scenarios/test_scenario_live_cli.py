"""``kafkafmt scenario run --live`` without a live runner installed: one line naming the rig, exit status 2.

The product finds a live runner only through the entry point group ``kafkafmt.live_runners``
(:mod:`kafkafmt.scenarios.live`); here the group is empty, as in an installed wheel without the rig.
"""
from __future__ import annotations

import pytest

from kafkafmt import cli
from kafkafmt.scenarios import live


@pytest.fixture
def no_runner(monkeypatch):
    monkeypatch.setattr(live, "entry_points", lambda group: [])


def test_live_without_the_rig_is_one_line_and_status_2(no_runner, capsys):
    assert cli.main(["scenario", "run", "seed000-rolling-upgrade", "--live"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["kafkafmt: the live run needs the test rig from a source checkout: "
                                "pip install -e conformance/ (no entry point in group 'kafkafmt.live_runners')"]


def test_live_looks_up_its_group_and_loads_the_first_entry(monkeypatch):
    seen = []

    class Entry:
        def load(self):
            return "the runner"

    monkeypatch.setattr(live, "entry_points", lambda group: seen.append(group) or [Entry()])
    assert live.live_runner() == "the runner"
    assert seen == ["kafkafmt.live_runners"]


def test_a_step_the_runner_cannot_perform_is_one_line_and_status_2(monkeypatch, capsys):
    def runner(scenario, *, emit):
        raise live.LiveUnsupported("step 1 do[0]: action 'compact' is not run live")

    class Entry:
        def load(self):
            return runner

    monkeypatch.setattr(live, "entry_points", lambda group: [Entry()])
    assert cli.main(["scenario", "run", "seed000-rolling-upgrade", "--live"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "kafkafmt: cannot run live: step 1 do[0]: action 'compact' is not run live"]


def test_a_disagreement_is_printed_beside_the_model_and_exits_1(monkeypatch, capsys):
    def runner(scenario, *, emit):
        rows = [live.LiveRow("replica A p0", "106 bytes", "106 bytes", True),
                live.LiveRow("replica B p0", "106 bytes", "98 bytes", False, "first difference at byte 12")]
        emit(1, scenario.steps[0].name, rows)
        return live.LiveReport([(1, scenario.steps[0].name, rows)], {"A": "0.9.0.1"}, 3.0)

    class Entry:
        def load(self):
            return runner

    monkeypatch.setattr(live, "entry_points", lambda group: [Entry()])
    assert cli.main(["scenario", "run", "seed000-rolling-upgrade", "--live"]) == 1
    out = capsys.readouterr().out
    assert "   DIFFER replica B p0\n          model: 106 bytes\n          real:  98 bytes\n" \
           "          where: first difference at byte 12" in out
    assert out.splitlines()[-1] == ("1 steps live (A 0.9.0.1; 3 s), 1 disagreement(s) between the model and "
                                    "the releases")


def test_live_json_is_the_report(monkeypatch, capsys):
    import json

    def runner(scenario, *, emit):
        assert emit is None
        rows = [live.LiveRow("replica A p0", "106 bytes", "106 bytes", True)]
        return live.LiveReport([(1, scenario.steps[0].name, rows)], {"A": "0.9.0.1"}, 3.0)

    class Entry:
        def load(self):
            return runner

    monkeypatch.setattr(live, "entry_points", lambda group: [Entry()])
    assert cli.main(["scenario", "run", "seed000-rolling-upgrade", "--live", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["releases"] == {"A": "0.9.0.1"} and data["not_run"] == []
    assert data["steps"][0]["rows"] == [{"what": "replica A p0", "model": "106 bytes", "real": "106 bytes",
                                         "agree": True, "detail": "", "proposal": ""}]
    assert (data["disagreements"], data["proposals"]) == (0, 0)


def test_a_seeds_proposal_is_shown_beside_the_release_and_not_counted(monkeypatch, capsys):
    def runner(scenario, *, emit):
        rows = [live.LiveRow("p-safe → p0", "ok, offsets 3-3, stored as v1", "error UnsupportedForMessageFormat"
                             "Exception", False, proposal="seed 003's enable.idempotence=safe")]
        emit(1, scenario.steps[0].name, rows)
        return live.LiveReport([(1, scenario.steps[0].name, rows)], {"S": "1.1.1"}, 3.0)

    class Entry:
        def load(self):
            return runner

    monkeypatch.setattr(live, "entry_points", lambda group: [Entry()])
    assert cli.main(["scenario", "run", "seed003-upgrade-path", "--live"]) == 0
    out = capsys.readouterr().out
    assert "   SEED   p-safe → p0\n          seed:  ok, offsets 3-3, stored as v1\n" in out
    assert out.splitlines()[-1] == ("1 steps live (S 1.1.1; 3 s), 0 disagreement(s) between the model and the "
                                    "releases; 1 row(s) of a seed's proposal no release shipped, beside what the "
                                    "release did (not counted)")
