"""Notebook 07 (seed 003): idempotent producers against older message formats, the seed's design
against what Kafka shipped, as tables computed by :func:`kafkafmt.broker.idempotence.matrix`.

The notebook calls :func:`outcome_grid` and :func:`disagreements` only, so when the matrix becomes
a computed scenario table the notebook keeps working.
"""
from __future__ import annotations

from ..broker import idempotence as _idem
from ..records import MemoryRecordsBuilder

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


def idempotent_batch(n: int = 3, *, producer_id: int = 4242, producer_epoch: int = 0, base_sequence: int = 0) -> bytes:
    """A v2 batch as an idempotent producer sends it (producer id, epoch and sequence set)."""
    b = MemoryRecordsBuilder(2, "none", base_offset=0, producer_id=producer_id, producer_epoch=producer_epoch,
                             base_sequence=base_sequence)
    for i in range(n):
        b.append(1_700_000_000_000 + i, f"k{i}".encode(), f"v{i}".encode())
    return b.build()


def downgrade(to_magic: int, n: int = 3) -> dict:
    """Seed 003's broker downgrade of an idempotent batch to ``to_magic``: the bytes before and after and what was lost."""
    if to_magic not in (0, 1):
        raise ValueError("the seed downgrades to message format v0 or v1")
    before = idempotent_batch(n)
    d = _idem.downgrade_batch(before, to_magic)
    lost = {k: v for k, v in d.lost.items() if v}
    return {"before": before, "after": d.records, "lost": lost, "bytes_before": len(before),
            "bytes_after": len(d.records)}


__all__ = ["rows", "short_outcome", "outcome_grid", "disagreements", "computed_table", "idempotent_batch", "downgrade",
           "VARIANTS", "CLIENTS", "BROKERS", "MODES"]
