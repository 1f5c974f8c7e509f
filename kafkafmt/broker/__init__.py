"""The broker's rules as a library: validation on produce (``LogValidator``), conversion on fetch
(``KafkaApis`` down-conversion), the consumer view; ``kafkafmt explain produce|fetch`` is
:mod:`kafkafmt.tools.explain`.

Modules (each rule cites the Kafka class/method or seed section it comes from):

* the topic configuration is :class:`kafkafmt.config.LogConfig` (also the log's), with the broker's
  :class:`kafkafmt.config.BrokerConfig` (``inter.broker.protocol.version``).
* :mod:`.append` – ``AppendOrigin``, ``LogAppendInfo`` and ``UnifiedLog.analyzeAndValidateRecords`` (the log's too).
* :mod:`.validator` – :func:`validate_messages_and_assign_offsets` (``UnifiedLog.analyzeAndValidateRecords``
  + ``LogValidator``).
* :mod:`.fetch` – :func:`fetch` / :func:`down_convert` (``KafkaApis.maybeConvertFetchedData``,
  ``RecordsUtil.downConvert``, ``LazyDownConversionRecords``) with conversion cost accounting.
* :mod:`.accounting` – Kafka's own accounting of a conversion (KIP-188) and what each release publishes of it;
  :mod:`.request_order` – the order a broker visits a Produce's partitions (KAFKA-15894).
* :mod:`.consumer` – :func:`consumer_view` (what a consumer of a given generation reads).
* :mod:`.idempotence` – seed 003's idempotence modes, the published variant and what Kafka shipped.
* :mod:`.trace` – :class:`Trace` / :class:`Step` (each decision taken, with its Kafka source).
* :mod:`.inplace` – ``setLastOffset`` / ``setMaxTimestamp`` / ``setPartitionLeaderEpoch`` on a copy.
* :mod:`.recordview` – records as the validator sees them (Kafka's ``toString`` in error messages).
"""
from ..config import BrokerConfig, ConfigError, LogConfig
from .consumer import ConsumedRecord, ConsumerView, consumer_view
from .fetch import ConversionCost, FetchResult, down_convert, fetch
from .idempotence import ProduceOutcome, downgrade_batch, matrix, produce_outcome
from .trace import Step, Trace
from .validator import ValidationResult, ValidationStats, validate_messages_and_assign_offsets

__all__ = ["LogConfig", "BrokerConfig", "ConfigError", "Step", "Trace", "ValidationResult", "ValidationStats",
           "validate_messages_and_assign_offsets", "fetch", "down_convert", "FetchResult", "ConversionCost",
           "consumer_view", "ConsumerView", "ConsumedRecord", "produce_outcome", "ProduceOutcome",
           "downgrade_batch", "matrix"]
