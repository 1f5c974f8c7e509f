"""Which client generations a Kafka line still answers: :data:`kafkafmt.kafka_lines.CLIENT_GENERATIONS`
against rows ``produce.min_version`` and ``fetch.min_version`` (KIP-896), and what a client that can
fetch receives from v0/v1 data (row ``fetch.down_conversion``, KIP-724)."""
from __future__ import annotations

from .. import kafka_lines
from ..broker.fetch import max_magic_for_fetch_version

__all__ = ["client_verdicts", "LINE_ROWS"]

#: the rows of :data:`kafkafmt.kafka_lines.CHANGES` an audit applies
LINE_ROWS = ("produce.min_version", "fetch.min_version", "fetch.down_conversion", "cleaner.legacy_to_v2")


def client_verdicts(target: str) -> list[dict]:
    """Per client generation: can it still produce and fetch on a broker of ``target``, and why not."""
    produce_min = kafka_lines.value("produce.min_version", target)
    fetch_min = kafka_lines.value("fetch.min_version", target)
    down_convert = kafka_lines.value("fetch.down_conversion", target)
    out = []
    for g in kafka_lines.CLIENT_GENERATIONS:
        produce, fetch = g.produce_max >= produce_min, g.fetch_max >= fetch_min
        why = []
        if not produce:
            why.append(f"Produce v{g.produce_max} < v{produce_min} ({kafka_lines.change('produce.min_version').source})")
        if not fetch:
            why.append(f"Fetch v{g.fetch_max} < v{fetch_min} ({kafka_lines.change('fetch.min_version').source})")
        if not down_convert:
            row = kafka_lines.row("fetch.down_conversion", target)
            reads = (f"every batch as stored, v0/v1 included (no down-conversion: {row.source})" if row is not None
                     else "every batch as stored (one message format: v1 came with "
                          f"{kafka_lines.rows('fetch.down_conversion')[0].source})")
        elif max_magic_for_fetch_version(g.fetch_max) < 2:
            reads = (f"v{max_magic_for_fetch_version(g.fetch_max)}: newer batches down-converted "
                     "(RecordsUtil.downConvert)")
        else:
            reads = "every batch as stored"
        out.append({**g.to_dict(), "can_produce": produce, "can_fetch": fetch,
                    "refused": "; ".join(why) or None, "reads": reads if fetch else None})
    return out
