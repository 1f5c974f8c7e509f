"""A seed's proposals on real releases: what the live run does with what no Kafka release shipped.

Seed 003 proposes a producer setting ``enable.idempotence=safe`` (idempotence when the broker can store it,
a silent downgrade otherwise) and a 1.0.0 broker with *idempotence modes* (``idempotence_modes: true``: it
drops a safe batch's producer state to write the topic's older format, and refuses a required one).  Kafka
never shipped either: ``enable.idempotence`` stayed a boolean (``ProducerConfig``, 0.11 … 2.x), and every
broker refuses an idempotent batch to a topic below message format v2 (``LogValidator``:
``UNSUPPORTED_FOR_MESSAGE_FORMAT``, error 43).

The live run therefore runs :func:`released` — the scenario as a user of the releases can run it: brokers
without idempotence modes, a ``safe`` producer given ``enable.idempotence=true`` (the only way a release
lets a producer ask for idempotence; the seed reads ``true`` as ``required`` and ``false`` as ``off``, so
those two modes are Kafka's booleans and run as they are) — and compares every row of it with the release
(counted).  Where the seed's own model run differs, a row with :attr:`~kafkafmt.scenarios.live.LiveRow.proposal`
set shows the proposal's outcome beside what the release did instead (:func:`safe_produce_row`,
:func:`broker_modes_row`): printed ``SEED``, never counted.
"""
from __future__ import annotations

import copy

from kafkafmt.scenarios.live import LiveRow

__all__ = ["IDEMPOTENT_MODES", "SAFE_NOTE", "MODES_NOTE", "broker_modes_row", "idempotent", "produce_outcome",
           "released", "safe_produce_row"]

#: the producer modes (``ProducerSpec.mode()``, after the seed's ``true`` → ``required``) that ask for idempotence
IDEMPOTENT_MODES = ("safe", "required")
SAFE_NOTE = ("seed 003's enable.idempotence=safe, a value no release accepts (enable.idempotence is a boolean): "
             "the release's producer ran with enable.idempotence=true")
MODES_NOTE = "seed 003's 1.0.0 broker with idempotence modes, which no release shipped"


def idempotent(mode: str) -> bool:
    """Whether a producer of this mode (``ProducerSpec.mode()``) asks for idempotence."""
    return mode in IDEMPOTENT_MODES


def released(scenario):
    """``scenario`` as the releases can run it: no broker with idempotence modes (a ``configure``'s
    ``idempotence_modes`` dropped), ``safe`` producers given ``true``; the seed's expectations dropped (they
    are the seed's, checked by ``scenario run``).  The scenario itself is left as it is."""
    twin = copy.deepcopy(scenario)
    for b in twin.brokers:
        b.idempotence_modes = False
    for p in twin.producers.values():
        if p.mode() == "safe":
            p.idempotence = "true"
    for step in twin.steps:
        step.expect, step.warn = [], []
        actions = []
        for act, args, place in step.actions:
            args = dict(args)
            if act == "configure":
                args.pop("idempotence_modes", None)
            if act == "upgrade" and str(args.get("idempotence", "")).lower() == "safe":
                args["idempotence"] = "true"
            actions.append((act, args, place))
        step.actions = actions
    return twin


def produce_outcome(prow, lrow) -> tuple[str | None, str]:
    """A model producer's produce (its ``producer`` and ``leader`` rows): its error (None: stored), and in words."""
    err = (prow.error if prow else "no row") or (lrow.error if lrow else None)
    if err:
        return err, f"error {err}"
    if lrow is None:
        return None, "ok"
    notes = [n for n in (lrow.detail.get("downgraded"), prow.detail.get("idempotence_disabled")) if n]
    first, last = lrow.detail["offsets"]
    return None, f"ok, offsets {first}-{last}, stored as v{lrow.magic_out}" + "".join(f"; {n}" for n in notes)


def safe_produce_row(what: str, seed_rows: tuple, real_ok: bool, real_out: str) -> LiveRow:
    """A ``safe`` producer's produce: the seed's outcome (its model run's rows) beside the release's; the same
    when both stored the records or both refused them (the offsets may differ by an earlier proposal's record)."""
    err, seed_out = produce_outcome(*seed_rows)
    return LiveRow(what, seed_out, real_out, (err is None) == real_ok, proposal=SAFE_NOTE)


def broker_modes_row(name: str, release: str) -> LiveRow:
    """A broker the seed gives idempotence modes, run on ``release``, which has none."""
    return LiveRow(f"broker {name}: idempotence modes",
                   "safe batches downgraded to the topic's format (producer id, epoch and sequences dropped), "
                   "required ones refused",
                   f"Kafka {release} has no such setting: it stores an idempotent batch only in format v2 and "
                   "answers UNSUPPORTED_FOR_MESSAGE_FORMAT (43) below it, whatever the producer meant",
                   False, proposal=MODES_NOTE)
