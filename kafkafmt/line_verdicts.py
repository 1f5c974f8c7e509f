"""What a behaviour became from one Kafka line to another, typed: :class:`Outcome` and :class:`Verdict`.

A probe (:mod:`kafkafmt.probes`) runs one behaviour on a line and returns an :class:`Outcome`: it was
done (stored, served, accepted, answered ...) or refused (by the broker, or by the producer before any
broker saw it), with the text people read.  :func:`verdict` compares the outcomes on an older and a newer
line with the rows of :mod:`kafkafmt.kafka_lines` the probe meets, never by parsing the text.

This module is on the configuration floor, beside :mod:`kafkafmt.kafka_lines`: it imports nothing of
kafkafmt but that table.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from . import kafka_lines

__all__ = ["OutcomeKind", "Outcome", "Verdict", "verdict", "CHANGED_BOUND"]


class OutcomeKind(Enum):
    """Whether the line did the thing."""

    DONE = "done"        #: stored, served, accepted, answered, indexed, kept or rewritten
    REFUSED = "refused"  #: an error: the broker's (or the producer's, before any broker saw it)


@dataclass(frozen=True)
class Outcome:
    """One behaviour on one line: its kind, what people read, and who refused (``"broker"`` or
    ``"producer"``; empty when done).  ``text`` is the whole sentence shown in tables."""

    kind: OutcomeKind
    text: str
    refused_by: str = ""

    @classmethod
    def done(cls, text: str) -> "Outcome":
        return cls(OutcomeKind.DONE, text)

    @classmethod
    def refused(cls, reason: str, by: str = "broker") -> "Outcome":
        return cls(OutcomeKind.REFUSED, f"refused: {reason}" if by == "broker" else f"refused by the {by}: {reason}",
                   by)

    @property
    def is_refused(self) -> bool:
        return self.kind is OutcomeKind.REFUSED

    def __str__(self) -> str:
        return self.text


class Verdict(Enum):
    """What the newer line did with a behaviour of the older one."""

    KEPT = "kept"        #: the same outcome on both lines
    CHANGED = "changed"  #: a different outcome (a refusal under a new default or bound included)
    REMOVED = "removed"  #: the newer line refuses what the older did, by a row that removes something
    ADDED = "added"      #: the newer line does what the older refused, by rows that add what did not exist

    def __str__(self) -> str:
        return self.value


#: row prefixes that change a bound or a default (a refusal under them is a change, not a removal)
CHANGED_BOUND = ("topic.default.", "topic.check.")


def _absent(value) -> bool:
    return value is None or value is False


def verdict(older: Outcome, newer: Outcome, rows: tuple[str, ...] = (), older_line: str = "3.9") -> Verdict:
    """The verdict from ``older`` (on ``older_line``) to ``newer``, given the kafka_lines rows the probe meets."""
    if older.text == newer.text:
        return Verdict.KEPT
    if newer.is_refused and not older.is_refused and not all(r.startswith(CHANGED_BOUND) for r in rows):
        return Verdict.REMOVED
    if older.is_refused and not newer.is_refused and rows and \
            all(_absent(kafka_lines.value(r, older_line)) for r in rows):
        return Verdict.ADDED
    return Verdict.CHANGED
