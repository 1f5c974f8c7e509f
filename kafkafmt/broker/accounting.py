"""Kafka's own accounting of a conversion (KIP-188, Kafka 1.0 on) and what the broker publishes of it.

Per request the broker computes ``RecordConversionStats`` (``RecordsProcessingStats`` in 1.x,
``RecordValidationStats`` in 3.x): ``temporaryMemoryBytes`` and ``numRecordsConverted`` (and the conversion
time, which kafkafmt does not model).  kafkafmt computes the same numbers: on produce
(:func:`~kafkafmt.broker.validator.validate_messages_and_assign_offsets`, ``LogValidator``) and on fetch
(:func:`~kafkafmt.broker.fetch.fetch`: ``FileRecords.downConvert`` before KIP-283, the chunks
``LazyDownConversionRecordsSend`` converts after it).  The broker publishes them as
``kafka.network:type=RequestMetrics,name=TemporaryMemoryBytes,request=Produce|Fetch`` (a histogram updated once
per request, 0 included) and ``kafka.server:type=BrokerTopicMetrics,name=Produce|FetchMessageConversionsPerSec``
(a meter marked with the records converted, when there are any); what reaches them differs by release (rows
``metrics.produce_conversion`` and ``metrics.fetch_conversion`` of :mod:`kafkafmt.kafka_lines`): nothing before
1.0, and a fetch's numbers are lost from 2.8 until 3.5 (KAFKA-14295, KAFKA-14743).

    acc = accounting(fetch(log, fetch_version=1), "2.8")
    acc.computed["temporary_memory_bytes"], acc.published   # what the broker spent, what its metrics show
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import kafka_lines
from ..config import ConfigError

__all__ = ["Accounting", "accounting", "has_accounting", "TEMPORARY_MEMORY_BYTES", "MESSAGE_CONVERSIONS"]

#: the published metrics, by request kind (the JMX names, ``kafka.network`` / ``kafka.server``)
TEMPORARY_MEMORY_BYTES = {"produce": "kafka.network:type=RequestMetrics,name=TemporaryMemoryBytes,request=Produce",
                          "fetch": "kafka.network:type=RequestMetrics,name=TemporaryMemoryBytes,request=Fetch"}
MESSAGE_CONVERSIONS = {"produce": "kafka.server:type=BrokerTopicMetrics,name=ProduceMessageConversionsPerSec",
                       "fetch": "kafka.server:type=BrokerTopicMetrics,name=FetchMessageConversionsPerSec"}
_ROW = {"produce": "metrics.produce_conversion", "fetch": "metrics.fetch_conversion"}


def has_accounting(line: str) -> bool:
    """Whether the line computes ``RecordConversionStats`` at all (KIP-188, Kafka 1.0)."""
    return kafka_lines.value("metrics.produce_conversion", kafka_lines.check_line(line)) != "none"


@dataclass
class Accounting:
    """One request's conversion accounting on a Kafka line.

    ``computed``: what the broker computes (``temporary_memory_bytes``, ``num_converted_records`` and, for a
    fetch, ``chunks_converted`` / ``batches_not_converted`` / ``sent_as_is``: 1.1's eager conversion that
    converted nothing and sent the slice as it was, row ``fetch.eager_nothing_converted``).  ``published``: what
    the request adds to the broker's metrics: ``temporary_memory_bytes`` (the value the TemporaryMemoryBytes
    histogram records for it)
    and ``message_conversions`` (what the ``*MessageConversionsPerSec`` meter's count grows by).  ``published_as``:
    the row's value (``all``, ``records only``, ``none``); ``kafka_line_row`` / ``source``: the row."""

    request: str
    line: str
    computed: dict
    published: dict
    published_as: str
    kafka_line_row: str
    source: str
    metrics: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"request": self.request, "line": self.line, "computed": self.computed, "published": self.published,
                "published_as": self.published_as, "kafka_line_row": self.kafka_line_row, "source": self.source,
                "metrics": self.metrics}

    def lines(self) -> list[str]:
        """The accounting as text lines (for ``kafkafmt explain``)."""
        c, p = self.computed, self.published
        spent = f"temporaryMemoryBytes {c['temporary_memory_bytes']:,}, numRecordsConverted " \
                f"{c['num_converted_records']:,}"
        if c.get("sent_as_is"):
            spent += ", nothing converted: the slice was sent as it was (row fetch.eager_nothing_converted)"
        elif "chunks_converted" in c:
            spent += f", {c['chunks_converted']} chunk(s) converted"
            if c.get("batches_not_converted"):
                spent += f", {c['batches_not_converted']} source batch(es) never converted"
        shown = f"TemporaryMemoryBytes {p['temporary_memory_bytes']:,}, " \
                f"{self.request.capitalize()}MessageConversionsPerSec +{p['message_conversions']:,}"
        lost = {"records only": "the temporary memory is not published",
                "none": "the conversion is not published"}.get(self.published_as)
        why = f" ({lost} on Kafka {self.line}: {self.source}; row {self.kafka_line_row})" if lost else ""
        return [f"Kafka {self.line}'s accounting (KIP-188 RecordConversionStats):",
                f"  the broker spends  {spent}",
                f"  its metrics show   {shown}{why}"]


def accounting(result, line: str) -> Accounting:
    """The accounting of ``result`` (a :class:`~kafkafmt.broker.fetch.FetchResult` or a
    :class:`~kafkafmt.broker.validator.ValidationResult`) on ``line``; a :class:`~kafkafmt.errors.ConfigError`
    (one line) when the line predates KIP-188 and computes none."""
    line = kafka_lines.check_line(line)
    request = "fetch" if hasattr(result, "wire_records") else "produce"
    if not has_accounting(line):
        first = kafka_lines.rows(_ROW[request])[0]
        raise ConfigError(f"Kafka {line} computes no conversion accounting: RecordConversionStats and its metrics "
                          f"came with {first.source} in Kafka {first.release}")
    stats = result.stats
    computed = {"temporary_memory_bytes": stats.temporary_memory_bytes,
                "num_converted_records": stats.num_converted_records}
    if request == "fetch":
        computed.update(chunks_converted=result.chunks_converted, batches_not_converted=result.batches_not_converted,
                        sent_as_is=result.sent_as_is)
    row = kafka_lines.row(_ROW[request], line)
    how = kafka_lines.value(_ROW[request], line)
    published = {"temporary_memory_bytes": stats.temporary_memory_bytes if how == "all" else 0,
                 "message_conversions": stats.num_converted_records if how in ("all", "records only") else 0}
    return Accounting(request, line, computed, published, how, row.key, row.source,
                      {"temporary_memory_bytes": TEMPORARY_MEMORY_BYTES[request],
                       "message_conversions": MESSAGE_CONVERSIONS[request]})
