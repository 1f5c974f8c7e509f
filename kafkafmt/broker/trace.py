"""Explanation traces: every decision the broker modules take, in order, with its source.

A :class:`Trace` is an ordered list of :class:`Step` objects.  Each step names the rule that was
applied, the decision taken, the values it looked at, and where the rule comes from: an Apache
Kafka class and method (``"LogValidator.assignOffsetsNonCompressed"``) or a seed section
(``"seed 000 §2.1.1"``).  Where Kafka and a seed document disagree the step says so in ``note``.

>>> t = Trace("produce")
>>> t.add("baseOffset check", "ok", "UnifiedLog.analyzeAndValidateRecords", baseOffset=0)
>>> print(t.render())                               # readable text
>>> t.to_dicts()                                    # JSON / pandas friendly
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass(frozen=True)
class Step:
    """One decision: ``rule`` applied, ``decision`` taken, looking at ``values``; from ``source``."""

    rule: str
    decision: str
    values: dict = field(default_factory=dict)
    source: str = ""
    note: str = ""  #: e.g. where a seed (KIP text) and Kafka differ

    def to_dict(self) -> dict:
        return {"rule": self.rule, "decision": self.decision, "values": dict(self.values),
                "source": self.source, "note": self.note}


def _fmt_value(v: Any) -> str:
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        return b.hex() if len(b) <= 16 else f"{b[:16].hex()}… ({len(b)} bytes)"
    if hasattr(v, "kafka_name"):
        return v.kafka_name
    return str(v)


class Trace:
    """An ordered list of :class:`Step`; ``title`` says what was explained."""

    def __init__(self, title: str = ""):
        self.title = title
        self.steps: list[Step] = []

    # --- building --------------------------------------------------------------------------
    def add(self, rule: str, decision: str, source: str, note: str = "", **values) -> Step:
        step = Step(rule, decision, values, source, note)
        self.steps.append(step)
        return step

    def extend(self, other: "Trace") -> None:
        self.steps.extend(other.steps)

    # --- reading ---------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    def rules(self) -> list[str]:
        return [s.rule for s in self.steps]

    def find(self, text: str) -> list[Step]:
        """Steps whose rule, decision or source contains ``text`` (case-insensitive)."""
        t = text.lower()
        return [s for s in self.steps if t in s.rule.lower() or t in s.decision.lower() or t in s.source.lower()]

    def sources(self) -> list[str]:
        return [s.source for s in self.steps]

    def to_dicts(self) -> list[dict]:
        """One dict per step (``rule``, ``decision``, ``values``, ``source``, ``note``), in order."""
        return [dict(step=i + 1, **s.to_dict()) for i, s in enumerate(self.steps)]

    def to_json(self, **kw) -> str:
        return json.dumps({"title": self.title, "steps": self.to_dicts()}, default=_fmt_value, **kw)

    def render(self, *, values: bool = True, width: int = 100) -> str:
        """Readable multi-line text: one numbered line per step, then its values, source and note."""
        lines = [self.title] if self.title else []
        for i, s in enumerate(self.steps, 1):
            lines.append(f"{i:>3}. {s.rule}: {s.decision}")
            if values and s.values:
                parts = [f"{k}={_fmt_value(v)}" for k, v in s.values.items()]
                cur = "       "
                for p in parts:
                    if len(cur) + len(p) + 1 > width and cur.strip():
                        lines.append(cur.rstrip())
                        cur = "       "
                    cur += p + " "
                if cur.strip():
                    lines.append(cur.rstrip())
            if s.source:
                lines.append(f"       [{s.source}]")
            if s.note:
                lines.append(f"       note: {s.note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"<Trace {self.title!r} {len(self.steps)} steps>"
