"""Differential conformance against the real Apache Kafka: kafkafmt and a Kafka 3.9.2 broker fed the same cases.

* :mod:`kafkafmt.conformance.client`  a minimal, explicit Kafka wire-protocol client (raw record-set
  bytes in and out; nothing is rewritten on the client side).
* :mod:`kafkafmt.conformance.broker`  start/stop ZooKeeper and a Kafka broker from the jars in
  ``conformance/.cache/lib`` on 127.0.0.1 (free ports, a temp dir, cleaned up whatever happens).
* :mod:`kafkafmt.conformance.runner`  run the cases of ``conformance/cases/*.json`` against the broker
  AND kafkafmt and compare byte for byte; ``python conformance/run.py`` prints the report.
"""
