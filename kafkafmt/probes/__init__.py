"""Probes of the Kafka lines: one behaviour of the seeds' story run on two lines and compared.

Each probe (:mod:`kafkafmt.probes.seeds`) runs kafkafmt's rules on one line — the produce path
(:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets`), the fetch path
(:func:`kafkafmt.broker.fetch.fetch`), the topic configuration, the log (its time index) and the
cleaner's rewrite of v0/v1 data (KAFKA-13093) — and returns a typed
:class:`~kafkafmt.line_verdicts.Outcome`; the :class:`~kafkafmt.line_verdicts.Verdict` between two lines
is computed from the outcomes and the rows of :mod:`kafkafmt.kafka_lines` the probe meets.
:mod:`kafkafmt.probes.requests` explains one produce or fetch on several lines side by side;
:mod:`kafkafmt.probes.cleaner` says what a cleaner pass would do differently on other lines for a
partition's data (printed by ``kafkafmt clean``).

The outcome and verdict types are on the configuration floor beside ``kafka_lines``
(:mod:`kafkafmt.line_verdicts`); the probes themselves run the broker's rules and the log, so they live
on the floor above the log (beside ``gen``, ``scenarios`` and ``audit``), and the views
(:mod:`kafkafmt.viz.kafka4`) only draw what they return.
"""
from __future__ import annotations

from ..line_verdicts import Outcome, OutcomeKind, Verdict, verdict
from .cleaner import cleaner_line_notes, partition_magics
from .requests import REQUESTS, explain_on_lines
from .seeds import PROBES, SEEDS, Probe, cleaner_rewrite, mixed_log, rewrite, seed_outcomes, verdict_counts

__all__ = ["Outcome", "OutcomeKind", "Verdict", "verdict", "Probe", "PROBES", "SEEDS", "seed_outcomes",
           "verdict_counts", "mixed_log", "rewrite", "cleaner_rewrite", "REQUESTS", "explain_on_lines",
           "cleaner_line_notes", "partition_magics"]
