"""kafkafmt: Apache Kafka's message formats and log, byte for byte.

The format-level modules live on the records floor (:mod:`kafkafmt.records`); five of them also have a short
public name, a module that re-exports them: :mod:`kafkafmt.spec` (the JSON spec), :mod:`kafkafmt.annotate`
(the annotated byte view), :mod:`kafkafmt.dump` (kafka-dump-log's lines), :mod:`kafkafmt.kip228` (KIP-228,
opt-in) and :mod:`kafkafmt.samples` (the sample record sets).
"""

__version__ = "0.1.0"

#: the short public names of records-floor modules: ``{short name: the module it re-exports}``
MODULE_ALIASES = {
    "kafkafmt.spec": "kafkafmt.records.spec",
    "kafkafmt.annotate": "kafkafmt.records.annotate",
    "kafkafmt.dump": "kafkafmt.records.dump_log",
    "kafkafmt.kip228": "kafkafmt.records.kip228",
    "kafkafmt.samples": "kafkafmt.records.sample_sets",
}
