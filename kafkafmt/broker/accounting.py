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
1.0, and a fetch's numbers are lost from 2.8 until 3.5 (KAFKA-14295, KAFKA-14743).  The conversion time is
published too, as ``MessageConversionsTimeMs`` (row ``metrics.conversion_time``): a histogram updated once per
request whose value, a time, cannot be predicted, but whether it is exactly 0 can.  A Produce request of several
partitions (:func:`request_accounting`) publishes the last partition's temporary memory and time, not their sum,
until Kafka 4.3 (KAFKA-15894, row ``metrics.multi_partition``; the order: :mod:`.request_order`).

    acc = accounting(fetch(log, fetch_version=1), "2.8")
    acc.computed["temporary_memory_bytes"], acc.published   # what the broker spent, what its metrics show
    request_accounting({("t", 0): validate(...), ("t", 1): validate(...)}, "2.8")   # one Produce, two partitions
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import kafka_lines
from ..config import ConfigError

__all__ = ["Accounting", "accounting", "request_accounting", "has_accounting", "TEMPORARY_MEMORY_BYTES",
           "MESSAGE_CONVERSIONS", "CONVERSION_TIME"]

#: the published metrics, by request kind (the JMX names, ``kafka.network`` / ``kafka.server``)
TEMPORARY_MEMORY_BYTES = {"produce": "kafka.network:type=RequestMetrics,name=TemporaryMemoryBytes,request=Produce",
                          "fetch": "kafka.network:type=RequestMetrics,name=TemporaryMemoryBytes,request=Fetch"}
MESSAGE_CONVERSIONS = {"produce": "kafka.server:type=BrokerTopicMetrics,name=ProduceMessageConversionsPerSec",
                       "fetch": "kafka.server:type=BrokerTopicMetrics,name=FetchMessageConversionsPerSec"}
CONVERSION_TIME = {"produce": "kafka.network:type=RequestMetrics,name=MessageConversionsTimeMs,request=Produce",
                   "fetch": "kafka.network:type=RequestMetrics,name=MessageConversionsTimeMs,request=Fetch"}
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
    histogram records for it), ``message_conversions`` (what the ``*MessageConversionsPerSec`` meter's count grows
    by), ``histogram_updates`` (how many values each of the two request histograms records: 1 per request) and
    ``message_conversions_time`` (what MessageConversionsTimeMs records: ``"zero"``, exactly 0, or ``"measured"``,
    the broker's own time in ms, rounded, not predicted; row ``metrics.conversion_time``).  ``published_as``:
    the row's value (``all``, ``records only``, ``none``); ``kafka_line_row`` / ``source``: the row; ``rows``:
    every row the published numbers follow, with its value and source.  A request of several partitions
    (:func:`request_accounting`) has ``computed["partitions"]``, each partition's numbers in the order the broker
    visits them, and ``computed`` sums them."""

    request: str
    line: str
    computed: dict
    published: dict
    published_as: str
    kafka_line_row: str
    source: str
    metrics: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"request": self.request, "line": self.line, "computed": self.computed, "published": self.published,
                "published_as": self.published_as, "kafka_line_row": self.kafka_line_row, "source": self.source,
                "metrics": self.metrics, "rows": self.rows}

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
        if "partitions" in c:
            spent += f" over {len(c['partitions'])} partitions"
        time = "0" if p["message_conversions_time"] == "zero" else "the conversion's time (ms, not predicted)"
        shown = f"TemporaryMemoryBytes {p['temporary_memory_bytes']:,}, " \
                f"{self.request.capitalize()}MessageConversionsPerSec +{p['message_conversions']:,}, " \
                f"MessageConversionsTimeMs {time}"
        lost = {"records only": "the temporary memory is not published",
                "none": "the conversion is not published"}.get(self.published_as)
        why = f" ({lost} on Kafka {self.line}: {self.source}; row {self.kafka_line_row})" if lost else ""
        out = [f"Kafka {self.line}'s accounting (KIP-188 RecordConversionStats):",
               f"  the broker spends  {spent}",
               f"  its metrics show   {shown}{why}"]
        if len(c.get("partitions", ())) > 1 and self.rows["metrics.multi_partition"]["value"] == "last partition":
            last = c["partitions"][-1]
            out.append(f"  (TemporaryMemoryBytes is the last partition's, {last['topic']}-{last['partition']}: "
                       f"{self.rows['metrics.multi_partition']['source']})")
        return out


def accounting(result, line: str) -> Accounting:
    """The accounting of ``result`` (a :class:`~kafkafmt.broker.fetch.FetchResult` or a
    :class:`~kafkafmt.broker.validator.ValidationResult`: a request of one partition) on ``line``; a
    :class:`~kafkafmt.errors.ConfigError` (one line) when the line predates KIP-188 and computes none."""
    return _accounting([(None, result)], line, None)


def request_accounting(partitions, line: str, scala: str | None = None) -> Accounting:
    """The accounting of one Produce request carrying several partitions: ``partitions`` maps ``(topic,
    partition)`` to its :class:`~kafkafmt.broker.validator.ValidationResult` (a dict, or pairs, in the request's
    order); ``scala``: the broker's Scala build (default :func:`.request_order.scala_build`), which decides the
    order the broker visits them in and so, before 4.3, whose temporary memory it publishes (KAFKA-15894)."""
    pairs = list(partitions.items()) if hasattr(partitions, "items") else [(tuple(k), v) for k, v in partitions]
    if not pairs:
        raise ConfigError("a Produce request carries at least one partition")
    if any(hasattr(r, "wire_records") for _, r in pairs):
        raise ConfigError("request_accounting models a Produce of several partitions; a fetch is one partition here")
    return _accounting(pairs, line, scala)


def _accounting(pairs, line: str, scala: str | None) -> Accounting:
    from .request_order import visit_order
    line = kafka_lines.check_line(line)
    request = "fetch" if hasattr(pairs[0][1], "wire_records") else "produce"
    if not has_accounting(line):
        first = kafka_lines.rows(_ROW[request])[0]
        raise ConfigError(f"Kafka {line} computes no conversion accounting: RecordConversionStats and its metrics "
                          f"came with {first.source} in Kafka {first.release}")
    if pairs[0][0] is not None:
        order = visit_order([k for k, _ in pairs], line, scala)
        pairs = sorted(pairs, key=lambda kv: order.index(kv[0]))
    stats = [r.stats for _, r in pairs]
    computed = {"temporary_memory_bytes": sum(s.temporary_memory_bytes for s in stats),
                "num_converted_records": sum(s.num_converted_records for s in stats)}
    if request == "fetch":
        result = pairs[0][1]
        computed.update(chunks_converted=result.chunks_converted, batches_not_converted=result.batches_not_converted,
                        sent_as_is=result.sent_as_is)
    if pairs[0][0] is not None:
        computed["partitions"] = [{"topic": k[0], "partition": k[1], "temporary_memory_bytes": s.temporary_memory_bytes,
                                   "num_converted_records": s.num_converted_records} for (k, _), s in zip(pairs, stats)]
    keys = (_ROW[request], "metrics.conversion_time", "metrics.multi_partition")
    rows = {k: {"value": kafka_lines.value(k, line), "source": getattr(kafka_lines.row(k, line), "source", None) or
                kafka_lines.rows(k)[0].source} for k in keys}
    how = rows[_ROW[request]]["value"]
    # KafkaApis.updateRecordConversionStats, per partition in the broker's order: the meter is marked with each
    # partition's records; the memory (and, when it converted records, the time) assigned, or added from 4.3
    memory = stats[-1].temporary_memory_bytes if rows["metrics.multi_partition"]["value"] == "last partition" \
        else computed["temporary_memory_bytes"]
    converted = computed["num_converted_records"] > 0
    updates = 1 if rows["metrics.conversion_time"]["value"] == "every request" else 0
    published = {"temporary_memory_bytes": memory if how == "all" else 0,
                 "message_conversions": computed["num_converted_records"] if how in ("all", "records only") else 0,
                 "histogram_updates": updates,
                 "message_conversions_time": "measured" if how == "all" and converted else "zero"}
    row = kafka_lines.row(_ROW[request], line)
    return Accounting(request, line, computed, published, how, row.key, row.source,
                      {"temporary_memory_bytes": TEMPORARY_MEMORY_BYTES[request],
                       "message_conversions": MESSAGE_CONVERSIONS[request],
                       "message_conversions_time": CONVERSION_TIME[request]}, rows)
