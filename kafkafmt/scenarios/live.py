"""Scenarios run live: the extension point through which a live runner plugs into ``scenario run --live``.

kafkafmt models brokers; it never starts one.  A *live runner* (installed apart from the package, from a
source checkout) runs a scenario's steps on real brokers and clients of the releases it names, beside
the model, and reports, per step, each comparison as a :class:`LiveRow`: what the model says and what
the release did.  It is found through the entry point group :data:`ENTRY_POINT_GROUP`
(``importlib.metadata``); its object is a callable ``run(scenario, *, emit) -> LiveReport`` where
``emit(step_number, step_name, rows)`` is called after each step (so a run prints as it goes).

The model's side of a live run comes from :func:`kafkafmt.scenarios.runner.run_scenario` with its
``on_step`` hook: after each modelled step the runner is handed the step's result and the model's cluster
(its replicas' bytes), performs the same step for real and compares.  A step the runner cannot perform
raises :class:`LiveUnsupported` (one line naming the step and the action).

A scenario may hold a seed's proposal that no release shipped (seed 003's ``enable.idempotence=safe`` and its
1.0.0 broker's idempotence modes).  A runner that runs such a step on a release instead compares the release
with kafkafmt's model of Kafka's released rules (counted), and shows the proposal's outcome beside what the
release did in a row with :attr:`LiveRow.proposal` set: printed ``SEED``, never counted as a disagreement.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import entry_points

from ..errors import KafkaFmtError

__all__ = ["ENTRY_POINT_GROUP", "LiveRow", "LiveReport", "LiveRunFailed", "LiveRunnerMissing", "LiveUnsupported", "live_runner",
           "render_rows"]

#: the entry point group a live runner registers under (one entry; the first found on sys.path wins)
ENTRY_POINT_GROUP = "kafkafmt.live_runners"

MISSING = ("the live run needs the test rig from a source checkout: pip install -e conformance/ "
           f"(no entry point in group {ENTRY_POINT_GROUP!r})")


class LiveRunnerMissing(KafkaFmtError):
    """No live runner is installed (the package alone models; it does not run brokers)."""

    kafka_exception = "LiveRunnerMissing"


class LiveUnsupported(KafkaFmtError):
    """A scenario asks the live run for a step or a setting it cannot perform on real brokers."""

    kafka_exception = "LiveUnsupported"


class LiveRunFailed(KafkaFmtError):
    """The live run could not go on (a broker that does not start, a release Maven cannot give); one line,
    everything it started stopped."""

    kafka_exception = "LiveRunFailed"


@dataclass
class LiveRow:
    """One comparison of a step: ``what`` (e.g. ``"replica B p0 bytes"``), the model's and the release's outcome."""

    what: str
    model: str
    real: str
    agree: bool
    detail: str = ""  #: where they differ (first differing byte, the records on each side)
    #: set on a row comparing a seed's proposal no release shipped (``model`` is then the proposal's outcome)
    #: with what the release did instead: which proposal, in words; such a row is shown and never counted
    proposal: str = ""
    #: the release's bytes (a replica's ``.log``, a fetch's records) when the row compares bytes, else empty
    real_bytes: bytes = b""

    def to_dict(self) -> dict:
        """The comparison as JSON values (the release's bytes left out: a record of live runs keeps them where a
        page shows them)."""
        return {"what": self.what, "model": self.model, "real": self.real, "agree": self.agree, "detail": self.detail,
                "proposal": self.proposal}


@dataclass
class LiveReport:
    """A whole live run: per step ``(number, name, rows)``, and what ran (``releases``: broker → the releases it
    ran, ``"0.9.0.1→0.10.0.1"``; ``brokers_at``: step number → broker → the release it ran during that step)."""

    steps: list = field(default_factory=list)
    releases: dict = field(default_factory=dict)
    seconds: float = 0.0
    #: steps not run live (a broker refused to start at an earlier one, for real or in the model: its row says why)
    not_run: list = field(default_factory=list)
    brokers_at: dict = field(default_factory=dict)

    @property
    def disagreements(self) -> list:
        """``(step, name, row)`` where the model and a release disagree (proposal rows are not counted)."""
        return [(n, name, r) for n, name, rows in self.steps for r in rows if not r.agree and not r.proposal]

    @property
    def proposals(self) -> list:
        """``(step, name, row)`` of the rows showing a seed's proposal beside what the release did instead."""
        return [(n, name, r) for n, name, rows in self.steps for r in rows if r.proposal]

    @property
    def ok(self) -> bool:
        return not self.disagreements

    def to_dict(self) -> dict:
        """The run as data (``scenario run --live --format json``, and a record of live runs): ``ok``,
        ``releases`` (broker → the releases it ran, ``→``-joined), ``seconds``, ``not_run`` and per step its
        rows (``what``, ``model``, ``real``, ``agree``, ``detail``, ``proposal``)."""
        return {"ok": self.ok, "releases": dict(self.releases), "seconds": round(self.seconds, 1),
                "not_run": list(self.not_run), "disagreements": len(self.disagreements),
                "proposals": len(self.proposals),
                "steps": [{"step": n, "name": name, "rows": [r.to_dict() for r in rows]} for n, name, rows in self.steps]}


def live_runner():
    """The installed live runner's callable; :class:`LiveRunnerMissing` (one line) when none is installed."""
    found = list(entry_points(group=ENTRY_POINT_GROUP))
    if not found:
        raise LiveRunnerMissing(MISSING)
    return found[0].load()


def render_rows(number: int, name: str, rows: list) -> str:
    """One step of a live run as text: each comparison, model beside release, AGREE or DIFFER; a seed's
    proposal beside what the release did instead, SEED (not counted)."""
    out = [f"{number}. {name}"]
    if not rows:
        out.append("   (nothing to compare)")
    for r in rows:
        if r.proposal:
            out.append(f"   SEED   {r.what}")
            out.append(f"          seed:  {r.model}")
            out.append(f"          real:  {r.real}")
            out.append(f"          note:  {r.proposal}; the release did {'the same' if r.agree else 'otherwise'} "
                       "(not counted)")
            continue
        out.append(f"   {'AGREE ' if r.agree else 'DIFFER'} {r.what}")
        out.append(f"          model: {r.model}")
        out.append(f"          real:  {r.real}")
        if r.detail and not r.agree:
            out.append(f"          where: {r.detail}")
    return "\n".join(out)
