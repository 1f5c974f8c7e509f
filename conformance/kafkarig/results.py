"""The differential runner's results: a status per check, the broker's answers per step, a case's verdict.

A check is ``agree``, ``DIFFER`` (with the first difference explained), ``pending`` (it should have run but
could not, e.g. no Kafka oracle), ``n/a`` (the case gives it nothing to compare, e.g. an empty log after a
rejected produce) or ``error`` (including a kafkafmt module that fails to import).  A case agrees only when
every check that applies agrees: one pending check makes the case pending, and a case with nothing to
compare is pending too.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .cases import Case

AGREE, DIFFER, PENDING, ERROR, NOT_APPLICABLE = "agree", "DIFFER", "pending", "error", "n/a"


@dataclass
class Check:
    name: str
    status: str
    detail: str = ""


@dataclass
class ProduceStep:
    index: int
    data: bytes
    version: int
    error_code: int = 0
    base_offset: int = -1
    log_append_time: int = -1
    error_message: str | None = None
    wall_now: int = 0
    lat: int | None = None  # the broker's log-append time for this append, if LogAppendTime


@dataclass
class FetchStep:
    index: int
    spec: dict
    version: int
    offset: int
    error_code: int = 0
    high_watermark: int = -1
    records: bytes | None = None


@dataclass
class CaseResult:
    case: Case
    checks: list[Check] = field(default_factory=list)
    produce: list[ProduceStep] = field(default_factory=list)
    fetches: list[FetchStep] = field(default_factory=list)
    alters: list[tuple[int, str | None]] = field(default_factory=list)  #: the broker's (error code, message)
    snapshot: Path | None = None
    seconds: float = 0.0
    setup_error: str | None = None

    @property
    def status(self) -> str:
        if self.setup_error:
            return ERROR
        st = [c.status for c in self.checks]
        if ERROR in st:
            return ERROR
        if DIFFER in st:
            return DIFFER
        if PENDING in st or AGREE not in st:
            return PENDING
        return AGREE

    @property
    def agrees(self) -> bool:
        return self.status == AGREE

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    def add(self, name: str, status: str, detail: str = "") -> None:
        self.checks.append(Check(name, status, detail))

    def summary(self) -> str:
        def tag(c):
            if c.status not in (AGREE, NOT_APPLICABLE):
                return f"{c.name}={c.status}"
            return c.name + ("~" if "identical except compressed payload" in c.detail else "")
        names = " ".join(tag(c) for c in self.checks)
        return f"[{names}]"

    def first_problem(self) -> str:
        if self.setup_error:
            return self.setup_error
        for c in self.checks:
            if c.status in (DIFFER, ERROR):
                return f"{c.name}: {c.detail}"
        return ""

    def report(self) -> str:
        lines = [f"{self.status} {self.case.id} {self.summary()} ({self.seconds:.2f}s)"]
        if self.setup_error:
            lines.append(f"  setup: {self.setup_error}")
        for c in self.checks:
            if c.detail:
                lines.append(f"  {c.name} [{c.status}]: {c.detail}")
        return "\n".join(lines)


def results_to_json(results: list[CaseResult]) -> str:
    return json.dumps([{"id": r.case.id, "status": r.status, "xfail": r.case.xfail, "seconds": round(r.seconds, 3),
                        "setupError": r.setup_error,
                        "checks": [{"name": c.name, "status": c.status, "detail": c.detail} for c in r.checks]}
                       for r in results], indent=2)
