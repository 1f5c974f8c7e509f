"""Notebook 06 (rolling upgrade): seed 000's phases and seed 004's ``message.format.version`` plan as
a stepper.  At each step a producer appends one batch to the same partition and three consumer
generations fetch the whole log: which paths convert, what it costs, and the rollback.

The steps are data (:data:`STEPS`); each step's outcome is computed by the produce path
(:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets`) and the fetch path
(:func:`kafkafmt.broker.fetch.fetch`).  (The cluster scenario model of ``kafkafmt.scenarios`` is
the fuller version of this; this stepper needs only the broker rules.)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..broker.consumer import consumer_view
from ..broker.fetch import fetch, fetch_version_for_magic
from ..broker.validator import validate_messages_and_assign_offsets
from ..config import LogConfig
from .anatomy import build, sample_records


@dataclass(frozen=True)
class Step:
    """One step of the upgrade: the topic's ``message.format.version`` and what the producer sends."""

    name: str
    source: str
    message_format_version: str
    producer_magic: int


STEPS = (
    Step("old cluster: v0 producers and consumers", "seed 000, before phase 1", "0.9.0", 0),
    Step("brokers upgraded, message.format.version=0.9.0; producers send v1 (ProduceRequest v2)",
         "seed 000 phase 1, steps 1-8; seed 004", "0.9.0", 1),
    Step("most consumers upgraded: message.format.version=0.10.0, rolling bounce",
         "seed 000 phase 2, step 1", "0.10.0", 1),
    Step("rollback: message.format.version=0.9.0 again", "seed 000 phase 2, step 3 (rollback)", "0.9.0", 1),
    Step("forward again, and today: v2 producers on 0.11+ (KIP-98)", "seed 004; Kafka 0.11+", "3.0-IV1", 2),
)
#: the consumers that fetch at every step: (label, newest format they read)
CONSUMERS = (("0.9 consumer (fetch v1)", 0), ("0.10 consumer (fetch v3)", 1), ("current consumer", 2))
#: the Java consumer's release line of a consumer, where it decides what a parse error becomes (row
#: ``consumer.unparsable_fetch``: the 0.9 consumer logs it and stalls, as 0.9.0.1 did live after the rollback)
CONSUMER_LINES = {"0.9 consumer (fetch v1)": "0.9"}
NOW_MS = 1_700_000_000_000


def run(upto: int, *, codec: str = "gzip", records_per_step: int = 20) -> dict:
    """Apply :data:`STEPS` ``[0..upto]``; return the produce rows of every step and the fetch rows of the last."""
    if not 0 <= upto < len(STEPS):
        raise ValueError(f"step must be 0..{len(STEPS) - 1}")
    log, produce = b"", []
    for i, step in enumerate(STEPS[:upto + 1]):
        cfg = LogConfig(message_format_version=step.message_format_version)
        sent = build(step.producer_magic, codec, sample_records(records_per_step, seed=i))
        offset = produce[-1]["next_offset"] if produce else 0
        res = validate_messages_and_assign_offsets(sent, cfg, offset=offset, now=NOW_MS + i * 60_000)
        log += res.records
        produce.append({"step": i, "what": step.name, "message.format.version": step.message_format_version,
                        "producer sends": f"v{step.producer_magic}", "stored as": f"v{res.to_magic}",
                        "converted on produce": res.converted, "recompressed": res.recompressed,
                        "next_offset": res.next_offset})
    cfg = LogConfig(message_format_version=STEPS[upto].message_format_version)
    fetches = []
    for label, magic in CONSUMERS:
        res = fetch(log, topic_config=cfg, fetch_version=fetch_version_for_magic(magic))
        c = res.cost
        fetches.append({"consumer": label, "reads": reads(res.records, magic, CONSUMER_LINES.get(label)),
                        "zero copy": res.zero_copy,
                        "converted to": "-" if res.to_magic is None else f"v{res.to_magic}",
                        "bytes on disk": c.bytes_read, "bytes sent": c.bytes_out,
                        "records re-encoded": c.records_touched, "recompressions": c.compressions})
    return {"step": STEPS[upto], "produce": produce, "fetch": fetches, "log_bytes": len(log)}


#: the live record's produce checks (``conformance/history``, :mod:`kafkafmt.scenarios.checked`) that sent each
#: step's request to real brokers: the test topic whose format is the step's, and the releases where it has
#: that format (None: every release that ran it); the records differ, the request and the path are the step's
LIVE_PRODUCE = {0: ("raw", ("0.9.0.1",)), 1: ("raw-v0", None), 2: ("raw", ("0.10.0.1", "0.10.1.1", "0.10.2.2")),
                3: ("raw-v0", None), 4: ("raw", ("0.11.0.3", "1.0.2", "1.1.1", "2.0.1", "2.1.1", "2.8.2"))}


def produce_checked(rec, step: int, codec: str):
    """Which real releases stored step ``step``'s produce (its producer's format and ``codec`` on a topic of
    the step's format) as the model does: a :class:`~kafkafmt.scenarios.checked.Verdict`."""
    topic, releases = LIVE_PRODUCE[step]
    return rec.check_across(f"produce/{topic}/magic{STEPS[step].producer_magic}-{codec}", releases)


def run_checked(upto: int, *, codec: str = "gzip", rec=None) -> dict:
    """:func:`run`, each produce row labelled with the releases that confirmed it (``rec``: a live record)."""
    from .live_record import mark
    r = run(upto, codec=codec)
    if rec is not None:
        for row in r["produce"]:
            row["checked live"] = mark(produce_checked(rec, row["step"], codec))
    return r


def rollback_checked(rec) -> list[str]:
    """What seed 000's rollback did on the real mixed 0.9.0.1 + 0.10.2.2 cluster (the record's ``rollback``
    phase): each 0.9 consumer's read, and whether the model said the same."""
    from .live_record import mark
    out = []
    for c in rec.seed000_checks("rollback"):
        if "/consume/" in c["check"]:
            v = rec.seed000_check("rollback", c["check"])
            out.append(f"  {c['client']}, {c['request']}: {v.model or rec.describe(c['expected'])} ({mark(v)})")
    return out


def reads(records: bytes, client_magic: int, client_line: str | None = None) -> str:
    """What a client reading up to ``client_magic`` makes of the fetched bytes (``ok``, garbled, its error, or
    a stall: the Java consumer of ``client_line`` that only logs its parse error)."""
    view = consumer_view(records, client_magic=client_magic, client_line=client_line)
    if view.outcome == "stalls":
        return (f"✗ stalls: no record, no error (the {client_line} Java consumer logs "
                f"{view.logged.split(':')[0]} and fetches the same offset again)")
    garbled = sum(r.garbled for r in view.records)
    if view.error:
        return f"✗ {view.error}"
    return f"✗ {garbled} garbled records" if garbled else f"ok ({len(view.records)} records)"


def conversions_per_step(*, codec: str = "gzip") -> list[dict]:
    """For every step: how many of the three consumers are served zero-copy, and the records re-encoded."""
    out = []
    for i in range(len(STEPS)):
        r = run(i, codec=codec)
        out.append({"step": i, "zero_copy_consumers": sum(f["zero copy"] for f in r["fetch"]),
                    "records_re_encoded": sum(f["records re-encoded"] for f in r["fetch"]),
                    "converted_on_produce": r["produce"][-1]["converted on produce"],
                    "consumers_failing": sum(not f["reads"].startswith("ok") for f in r["fetch"])})
    return out


#: the shipped scenarios of seeds 000 and 004 (kafkafmt/scenarios/data), for the scenario stepper
SCENARIOS = ("seed000-rolling-upgrade", "seed000-rolling-upgrade-ibp-0.10.0", "seed000-trial-rollback",
             "seed000-trial-rollback-ibp-0.10.0", "seed004-migration")
HOP_COLUMNS = ("path", "actor", "request", "magic_in", "magic_out", "conversion", "recompressed", "records",
               "records_touched", "bytes_in", "bytes_out", "error")


@lru_cache(maxsize=8)
def _scenario(name: str):
    from ..scenarios import load_scenario, run_scenario
    return run_scenario(load_scenario(name))


def scenario_step(name: str, step: int, record=None) -> dict:
    """Step ``step`` (1-based) of a shipped scenario run by :mod:`kafkafmt.scenarios` on a simulated
    cluster: every hop (producer → leader → follower → consumer) with its conversion and bytes, the
    seed's warnings, where a Kafka release differs, and, at the last step of a run a broker
    stopped by refusing to start, why and the steps not run (a step after it: not run, and why); with a live
    ``record``, what the real releases did (``live``: HTML)."""
    if name not in SCENARIOS:
        raise ValueError(f"scenario must be one of {SCENARIOS}")
    res = _scenario(name)
    total = scenario_steps(name)
    if not 1 <= step <= total:
        raise ValueError(f"{name} has steps 1..{total}")
    if step > len(res.steps):  # after the step where a broker refused to start: the plan goes no further
        n, title = res.not_run[step - len(res.steps) - 1]
        return {"scenario": name, "steps": total, "name": f"{n}. {title} (not run)", "ok": False, "warnings": [],
                "seed_vs_kafka": "", "stopped": res.stopped, "not_run": [f"{k}. {x}" for k, x in res.not_run],
                "hops": [], "live": _live_step(record, name, step), "ran": False}
    s = res.steps[step - 1]
    last = step == len(res.steps)
    return {"scenario": name, "steps": total, "name": s.name, "ok": s.ok, "warnings": list(s.warnings),
            "seed_vs_kafka": s.seed_vs_kafka,
            "stopped": res.stopped if last else None, "not_run": [f"{n}. {x}" for n, x in res.not_run] if last else [],
            "hops": [{k: r.to_dict()[k] for k in HOP_COLUMNS} for r in s.rows],
            "live": _live_step(record, name, step)}


def _live_step(record, name: str, step: int) -> str:
    from .live_record import step_html
    return "" if record is None else step_html(record, name, step)


def scenario_steps(name: str) -> int:
    """How many steps the shipped scenario ``name`` has (the stepper's range): those run and those a broker's
    refusal to start left unrun, so the range is the whole plan (and never a single step, which a browser's
    slider cannot span)."""
    if name not in SCENARIOS:
        raise ValueError(f"scenario must be one of {SCENARIOS}")
    res = _scenario(name)
    return len(res.steps) + len(res.not_run)


# ------------------------------------------------------------------------------------------------
# the notebook's panels
def step_caption(r: dict, values: dict) -> str:
    """How many consumers are served zero-copy, what is re-encoded and who cannot read, at this step."""
    f = r["fetch"]
    zc = sum(x["zero copy"] for x in f)
    failing = [x["consumer"] for x in f if not x["reads"].startswith("ok")]
    re_enc = sum(x["records re-encoded"] for x in f)
    bad = (f" <b style='color:#b71c1c'>{', '.join(failing)} cannot read the log.</b>" if failing else
           " Every consumer reads the log.")
    return (f"Step {values['upto']}: <b>{zc} of {len(f)} consumers served zero-copy</b>, {re_enc} records "
            f"re-encoded on fetch.{bad}")


def step_view(r: dict):
    """The step in words, the produce table, the records re-encoded per consumer, and the fetch table."""
    import html as _html

    import pandas as pd

    from . import plots, tables
    f = pd.DataFrame(r["fetch"])
    fig = plots.bar_plot(f["consumer"], f["records re-encoded"], xlabel="consumer generation",
                         ylabel="records re-encoded (count)",
                         bar_text=["0 · zero-copy" if z else tables.number(v)
                                   for z, v in zip(f["zero copy"], f["records re-encoded"])],
                         colors=[plots.GREEN if z else plots.AMBER for z in f["zero copy"]],
                         legend=[(plots.GREEN, "zero-copy"), (plots.AMBER, "down-converted")],
                         title=f"step {r['produce'][-1]['step']}: records re-encoded per fetch")
    head = f"<p><b>{_html.escape(r['step'].name)}</b> ({_html.escape(r['step'].source)})</p>"
    produce = tables.table_html(pd.DataFrame(r["produce"]).drop(columns=["next_offset"]), title="produce, step by step")
    fetches = tables.table_html(f, units={"bytes on disk": "bytes", "bytes sent": "bytes"}, outcomes=("reads",),
                                title="each consumer fetches the whole log")
    return head, produce, fig, fetches


def stepper_panel(record=None):
    """Notebook 06's upgrade stepper: a step of :data:`STEPS` and the producer's codec; with a live ``record``,
    each produce labelled with the real releases that stored it so."""
    from functools import partial

    import ipywidgets as w

    from .widgets import Panel
    return Panel({"upto": w.IntSlider(value=0, min=0, max=len(STEPS) - 1, description="step"),
                  "codec": w.Dropdown(options=["none", "gzip", "snappy", "lz4"], value="gzip", description="codec")},
                 partial(run_checked, rec=record), step_view, title="Rolling upgrade", caption=step_caption)


def scenario_caption(d: dict, values: dict) -> str:
    """The scenario step's conversions and warnings, counted."""
    conv = sum(1 for h in d["hops"] if str(h["conversion"]).startswith("converted") or h["conversion"] == "rebuilt")
    errors = sum(1 for h in d["hops"] if h["error"])
    stop = f" <b style='color:#b71c1c'>A broker refused to start: {len(d['not_run'])} step(s) not run.</b>" \
        if d.get("stopped") else ""
    return (f"Step {values['step']} of {d['steps']}: {len(d['hops'])} hops and events, "
            f"<b>{conv} converting the records</b> (down, up or rebuilt), "
            f"{errors} with an error, {len(d['warnings'])} warning(s) from the seed.{stop}")


def scenario_view(d: dict):
    """The step's name, the seed's warnings, where a Kafka release differs, where the run stopped, and every hop."""
    import html as _html

    from . import tables
    notes = "".join(f"<li>{_html.escape(str(x))}</li>" for x in d["warnings"])
    kafka = f"<p><i>Seed vs Kafka:</i> {_html.escape(str(d['seed_vs_kafka']))}</p>" if d["seed_vs_kafka"] else ""
    stop = (f"<p style='color:#b71c1c'><b>{'The run stops here' if d.get('ran', True) else 'Not run: the run stopped earlier'}"
            f":</b> {_html.escape(d['stopped'])}. Not run: {_html.escape('; '.join(d['not_run']))}.</p>"
            ) if d.get("stopped") else ""
    head = f"<p><b>{_html.escape(d['name'])}</b></p>" + (f"<ul>{notes}</ul>" if notes else "") + kafka + stop
    hops = tables.table_html(d["hops"], units={"bytes_in": "bytes", "bytes_out": "bytes"}, outcomes=("error",))
    return (head, hops, d["live"]) if d.get("live") else (head, hops)


def scenario_panel(record=None):
    """Notebook 06's scenario stepper: the step slider spans exactly the chosen scenario's steps; with a live
    ``record``, each step's comparisons on the real releases below the model's hops."""
    from functools import partial

    import ipywidgets as w

    from .widgets import Panel
    return Panel({"name": w.Dropdown(options=SCENARIOS, description="scenario", layout=w.Layout(width="330px")),
                  "step": w.IntSlider(value=1, min=1, max=scenario_steps(SCENARIOS[0]), description="step")},
                 partial(scenario_step, record=record), scenario_view, title="Scenario stepper", caption=scenario_caption,
                 adapt={"step": lambda v: {"min": 1, "max": scenario_steps(v["name"])}})


__all__ = ["scenario_steps", "stepper_panel", "step_view", "step_caption", "scenario_panel", "scenario_view",
           "scenario_caption", "Step", "STEPS", "CONSUMERS", "run", "reads", "conversions_per_step", "SCENARIOS",
           "scenario_step", "CONSUMER_LINES", "LIVE_PRODUCE", "produce_checked", "run_checked", "rollback_checked"]
