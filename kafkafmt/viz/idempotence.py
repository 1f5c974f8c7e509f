"""Notebook 07 (seed 003): idempotent producers against older message formats, the seed's design
against what Kafka shipped, as tables computed by :func:`kafkafmt.broker.idempotence.matrix`.

The notebook calls :func:`outcome_grid` and :func:`disagreements` only, so when the matrix becomes
a computed scenario table the notebook keeps working.
"""
from __future__ import annotations

from ..broker import idempotence as _idem
from ..records import build_records

VARIANTS = _idem.VARIANTS
CLIENTS = _idem.CLIENT_VERSIONS
BROKERS = _idem.BROKER_VERSIONS
MODES = _idem.MODES


def rows(variant: str | None = None) -> list[dict]:
    """Every (client, broker, topic format, mode) outcome of ``variant`` (all variants when None)."""
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}")
    return _idem.matrix(variants=VARIANTS if variant is None else (variant,))


def short_outcome(row: dict) -> str:
    """One cell of the grid: what is stored, or which error and on which side."""
    if row["error"]:
        return f"✗ {row['error']} ({row['error_side']})"
    stored = row["batch_stored_magic"]
    if row["downgraded"]:
        return f"↓ v{stored}, idempotence lost ({row['downgraded_by']})"
    if row["idempotence_effective"]:
        return f"✓ v{stored} idempotent"
    return f"✓ v{stored} plain" + (" (disabled)" if row["idempotence_requested"] else "")


def outcome_grid(variant: str = "seed", client: str = "1.0.0", broker: str = "1.0.0"):
    """Topic format (rows) × ``enable.idempotence`` (columns) → :func:`short_outcome`, as a DataFrame."""
    import pandas as pd
    if client not in CLIENTS or broker not in BROKERS:
        raise ValueError(f"client and broker versions are {CLIENTS}")
    sel = [r for r in rows(variant) if r["client_version"] == client and r["broker_version"] == broker]
    df = pd.DataFrame([{"topic format": f"v{r['topic_format']}", "enable.idempotence": r["mode"],
                        "outcome": short_outcome(r)} for r in sel])
    return df.pivot(index="topic format", columns="enable.idempotence", values="outcome")[list(MODES)]


def disagreements(a: str = "seed", b: str = "kafka") -> list[dict]:
    """The combinations where variants ``a`` and ``b`` end differently (stored format, idempotence or error)."""
    def key(r):
        return (r["client_version"], r["broker_version"], r["topic_format"], r["mode"])
    rb = {key(r): r for r in rows(b)}
    out = []
    for r in rows(a):
        o = rb[key(r)]
        if short_outcome(r) != short_outcome(o):
            out.append({"client": r["client_version"], "broker": r["broker_version"],
                        "topic format": r["topic_format"], "mode": r["mode"], a: short_outcome(r), b: short_outcome(o)})
    return out


def computed_table():
    """Seed 003's mode × broker × topic-format table computed scenario by scenario
    (:mod:`kafkafmt.scenarios.matrices`): the seed's cell, the computed outcome and Kafka 3.9.2's."""
    import pandas as pd

    from ..scenarios.matrices import matrix_table
    headers, table = matrix_table("seed003")
    return pd.DataFrame(table, columns=headers)


#: the live record's produce checks (``conformance/history``) of a v2 batch, plain or idempotent (producer id,
#: epoch 0, sequence 0), on a topic of each format: (topic format, enable.idempotence) → check
LIVE_CHECKS = {("v0", "false"): "produce/raw-v0/magic2-none", ("v1", "false"): "produce/raw-v1/magic2-none",
               ("v2", "false"): "produce/raw/magic2-none", ("v1", "true"): "produce/raw-v1/magic2-none-idempotent",
               ("v2", "true"): "produce/raw/magic2-none-idempotent"}
#: the release the rig runs for each broker line of seed 003's table
LIVE_RELEASE = {"0.11.0": "0.11.0.3", "1.0": "1.0.2"}


#: seed 003's scenario step → the release check that sent its request (an idempotent v2 batch to a v1 topic)
SEED_VS_RELEASE = {"seed003-upgrade-path": {1: ("0.11.0.3", "produce/raw-v1/magic2-none-idempotent")}}


def seed_vs_release_html(rec) -> str:
    """Where seed 003's text and the release disagree: the seed's sentence, Kafka's answer, and the bytes of the
    idempotent batch a real 0.11.0.3 broker refused (:func:`kafkafmt.viz.live_record.seed_vs_release_html`)."""
    from .live_record import seed_vs_release_html as _html
    return _html(rec, list(SEED_VS_RELEASE), checks=SEED_VS_RELEASE)


def checked_live(rec, broker: str, topic_format: str, mode: str):
    """What the real release of ``broker``'s line did with the batch of ``mode`` on a ``topic_format`` topic
    (a :class:`~kafkafmt.scenarios.checked.Verdict`): Kafka's own ``enable.idempotence`` only (the seed's modes
    are a proposal no release shipped)."""
    from ..scenarios.checked import Verdict
    if mode not in ("true", "false"):
        return Verdict("not run", "not run live: seed 003's modes are a proposal no release shipped")
    check = LIVE_CHECKS.get((topic_format, mode))
    if check is None:
        return Verdict("not run", f"not run live: the record has no {mode} batch on a {topic_format} topic")
    return rec.check_across(check, (LIVE_RELEASE[broker],))


def computed_table_checked(rec):
    """:func:`computed_table` with a column naming the real release that stored or refused each of Kafka's own
    cells (``enable.idempotence`` true / false) as the Kafka column says."""
    from .live_record import mark
    df = computed_table()

    def cell(v, mode):
        if v.state != "not run":
            return mark(v)
        return "— the seed's mode never shipped" if mode not in ("true", "false") else "— not run live"
    df[LIVE_COLUMN] = [cell(checked_live(rec, b, f, m), m)
                       for b, f, m in zip(df["broker"], df["topic format"], df["mode"])]
    return df


#: the column :func:`computed_table_checked` adds
LIVE_COLUMN = "checked on a real release"


def idempotent_batch(n: int = 3, *, producer_id: int = 4242, producer_epoch: int = 0, base_sequence: int = 0) -> bytes:
    """A v2 batch as an idempotent producer sends it (producer id, epoch and sequence set)."""
    return build_records([(1_700_000_000_000 + i, f"k{i}".encode(), f"v{i}".encode()) for i in range(n)],
                         producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence)


def downgrade(to_magic: int, n: int = 3) -> dict:
    """Seed 003's broker downgrade of an idempotent batch to ``to_magic``: the bytes before and after, and
    what was lost."""
    if to_magic not in (0, 1):
        raise ValueError("the seed downgrades to message format v0 or v1")
    before = idempotent_batch(n)
    d = _idem.downgrade_batch(before, to_magic)
    lost = {k: v for k, v in d.lost.items() if v}
    return {"before": before, "after": d.records, "lost": lost, "bytes_before": len(before),
            "bytes_after": len(d.records)}


# ------------------------------------------------------------------------------------------------
# the notebook's findings and panels
def seed_table_finding() -> dict:
    """Seed 003's own table (30 cells, a 1.0.0 client) as computed: how many cells the computation
    reproduces, and in how many of those Kafka 3.9.2 ends differently."""
    t = computed_table()
    reproduced = int((t["agrees with"] == "yes").sum())
    kafka_differs = int(sum(not _same_end(c, k) for c, k in zip(t["computed"], t["Kafka 3.9.2"])))
    return {"cells": len(t), "reproduced": reproduced, "kafka_differs": kafka_differs}


def reconciliation(client: str = "1.0.0") -> dict:
    """How the two counts of notebook 07 fit together: the combinations where the seed's design and Kafka
    end differently (all, and for ``client``), those where both fail on the same side and only the
    exception's name differs, and the seed table's cells where Kafka 3.9.2 ends differently."""
    d = disagreements("seed", "kafka")
    mine = [r for r in d if r["client"] == client]
    name_only = [r for r in mine if r["seed"].startswith("✗") and r["kafka"].startswith("✗")
                 and r["seed"].rsplit("(", 1)[-1] == r["kafka"].rsplit("(", 1)[-1]]
    return {"combinations": len(rows("seed")), "differ": len(d), "differ_client": len(mine),
            "error_name_only": len(name_only), **seed_table_finding()}


def _same_end(computed: str, kafka: str) -> bool:
    """Whether two outcome texts end the same way: both stored in the same format, or the same error."""
    def end(text):
        t = text.lower()
        if t.startswith("error"):
            return ("error", t.split(":")[1].strip() if ":" in t else t)
        return ("stored", t.split(",")[0].strip())
    return end(computed) == end(kafka)


def grid_caption(df, values: dict) -> str:
    """Cells stored idempotently, downgraded or failing, and how many differ from the other design."""
    cells = [str(v) for v in df.to_numpy().ravel()]
    ok = sum(c.startswith("✓") and "idempotent" in c for c in cells)
    down = sum(c.startswith("↓") for c in cells)
    err = sum(c.startswith("✗") for c in cells)
    other = "kafka" if values["variant"] != "kafka" else "seed"
    o = outcome_grid(other, values["client"], values["broker"])
    differ = int((o != df).sum().sum())
    return (f"{values['variant']} design, client {values['client']}, broker {values['broker']}: of {len(cells)} "
            f"cells <b>{ok} idempotent, {down} silently downgraded, {err} errors</b>; {differ} of {len(cells)} "
            f"end differently in the {other} design.")


def grid_panel():
    """Notebook 07's outcome grid: design, client and broker version."""
    import ipywidgets as w

    from . import tables
    from .widgets import Panel
    return Panel({"variant": w.Dropdown(options=VARIANTS, value="seed", description="design"),
                  "client": w.Dropdown(options=CLIENTS, value="1.0.0", description="client"),
                  "broker": w.Dropdown(options=BROKERS, value="1.0.0", description="broker")},
                 outcome_grid,
                 lambda df: tables.table_html(df, labels={"topic format": "topic format ╲ enable.idempotence"}),
                 title="enable.idempotence outcomes", caption=grid_caption)


def downgrade_view(d: dict):
    """The batch before and after the downgrade, as byte views, and what was lost."""
    import html as _html

    from . import byteview
    lost = "".join(f"<li><code>{_html.escape(k)}</code>: {_html.escape(str(v))}</li>" for k, v in d["lost"].items())
    return (f"<p><b>Before</b>: the idempotent producer's batch, {d['bytes_before']} bytes</p>"
            + byteview.byte_view_html(d["before"]),
            f"<p><b>After</b> the downgrade, {d['bytes_after']} bytes</p>" + byteview.byte_view_html(d["after"]),
            f"<p><b>Lost</b> (there is no field for them):</p><ul>{lost}</ul>")


def downgrade_panel():
    """Notebook 07's safe-mode downgrade of an idempotent batch to v1 or v0."""
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"to_magic": w.Dropdown(options=[("v1", 1), ("v0", 0)], value=1, description="topic format")},
                 downgrade, downgrade_view, title="safe-mode downgrade",
                 caption=lambda d, v: (f"Downgrading to v{v['to_magic']}: {d['bytes_before']} → {d['bytes_after']} "
                                       f"bytes; <b>lost: {', '.join(d['lost'])}</b>."))


__all__ = ["LIVE_CHECKS", "LIVE_RELEASE", "SEED_VS_RELEASE", "checked_live", "computed_table_checked", "LIVE_COLUMN",
           "seed_vs_release_html", "reconciliation", "seed_table_finding", "grid_panel", "grid_caption",
           "downgrade_panel", "downgrade_view",
           "rows", "short_outcome", "outcome_grid", "disagreements", "computed_table", "idempotent_batch",
           "downgrade", "VARIANTS", "CLIENTS", "BROKERS", "MODES"]
