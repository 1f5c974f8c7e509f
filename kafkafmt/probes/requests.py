"""One produce or fetch from a client generation, explained by brokers of several Kafka lines side by side."""
from __future__ import annotations

from .. import kafka_lines
from ..broker.consumer import consumer_view
from ..broker.fetch import fetch, max_magic_for_fetch_version
from ..broker.validator import magic_for_produce_version, validate_messages_and_assign_offsets
from ..errors import KafkaFmtError
from ..records.sample_sets import build, sample_records
from .lines import NOW_MS, OLD_FORMAT, topic
from .seeds import mixed_log

__all__ = ["REQUESTS", "GENERATIONS", "explain_on_lines"]

REQUESTS = ("produce", "fetch")
GENERATIONS = tuple(g.name for g in kafka_lines.CLIENT_GENERATIONS)


def _generation(name: str):
    for g in kafka_lines.CLIENT_GENERATIONS:
        if g.name == name:
            return g
    raise ValueError(f"client generation must be one of {', '.join(GENERATIONS)}")


def _explain_produce(line: str, g, mfv: str, codec: str) -> tuple[str, list]:
    magic = magic_for_produce_version(g.produce_max)
    data = build(magic, codec if magic or codec != "zstd" else "none", sample_records(3, seed=1))
    try:
        res = validate_messages_and_assign_offsets(data, topic(line, mfv), now=NOW_MS, produce_version=g.produce_max)
    except KafkaFmtError as e:
        return f"✗ rejected: {e.kafka_exception or type(e).__name__}", list(getattr(e, "trace", None) or [])
    how = "converted" if res.converted else "in place"
    return f"✓ appended as v{res.to_magic} ({how}{', recompressed' if res.recompressed else ''})", list(res.trace)


def _explain_fetch(line: str, g, mfv: str, codec: str) -> tuple[str, list]:
    res = fetch(mixed_log(codec if codec != "zstd" else "gzip"), topic_config=topic(line, mfv),
                fetch_version=g.fetch_max)
    if res.error is not None:
        how = "no response, connection closed" if res.connection_closed else res.error
        return f"✗ {how} ({res.error})", list(res.trace)
    view = consumer_view(res.records, client_magic=max_magic_for_fetch_version(g.fetch_max))
    if view.error:
        return f"✗ the client fails: {view.error}", list(res.trace)
    got = "zero-copy" if res.zero_copy else f"↓ converted to v{res.to_magic}"
    return f"{'✓ ' if res.zero_copy else ''}{got}, {len(view.records)} records read", list(res.trace)


def explain_on_lines(request: str = "fetch", client: str = "0.10.0", message_format_version: str = OLD_FORMAT,
                     codec: str = "gzip", lines: tuple[str, ...] = kafka_lines.COMPARED_LINES) -> dict:
    """One ``request`` (produce: the client's newest version and format; fetch: of the v0+v1+v2 log) from a
    ``client`` generation, explained by a broker of each of ``lines`` (the topic at ``message_format_version``
    where the line honours it): per line the outcome and every step, and the kafka_lines rows applied."""
    if request not in REQUESTS:
        raise ValueError(f"request must be one of {REQUESTS}")
    g = _generation(client)
    run = _explain_produce if request == "produce" else _explain_fetch
    out = {"request": request, "client": g.to_dict(), "version": g.produce_max if request == "produce" else g.fetch_max,
           "lines": [kafka_lines.check_line(ln) for ln in lines]}
    for line in out["lines"]:
        outcome, steps = run(line, g, message_format_version, codec)
        out[line] = {"outcome": outcome,
                     "steps": [{"#": i + 1, "rule": s.rule, "decision": s.decision, "source": s.source,
                                "row": s.values.get("kafka_line_row") or ""} for i, s in enumerate(steps)],
                     "rows": kafka_lines.rows_applied(steps)}
    return out
