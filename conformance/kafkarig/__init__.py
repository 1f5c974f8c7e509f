"""kafkarig: kafkafmt's test rig, apart from the product (it lives in the checkout, never in the wheel).

Everything here checks kafkafmt against the real Apache Kafka; nothing in ``kafkafmt`` imports it.

* :mod:`kafkarig.paths`  where the rig finds ``conformance/`` and the jars/classes of ``make oracle``.
* :mod:`kafkarig.jsonl_jvm`  the one transport to a long-running JVM: one JSON object per line.
* The oracles, each a JVM on Kafka's own jars over that transport: :mod:`kafkarig.oracle` (3.9.2's
  record classes, ``oracle/KafkaOracle.java``), :mod:`kafkarig.oracle44` (4.4.0's,
  ``oracle-4.4/KafkaOracle44.java``), :mod:`kafkarig.log_oracle` (3.9.2's ``UnifiedLog`` and
  kafka-dump-log, ``oracle-log/KafkaLogOracle.java``), :mod:`kafkarig.cleaner_oracle` and
  :mod:`kafkarig.cleaner_oracle44` (the ``LogCleaner`` of each line, ``oracle/CleanerOracle.java``,
  ``oracle-4.4/CleanerOracle44.java``).
* :mod:`kafkarig.client`  a minimal, explicit Kafka wire-protocol client (raw record-set bytes in and
  out; nothing is rewritten on the client side).
* :mod:`kafkarig.broker`  start/stop ZooKeeper and a Kafka 3.9.2 broker from ``conformance/.cache/lib``
  on 127.0.0.1 (free ports, a temp dir, cleaned up whatever happens); :mod:`kafkarig.kraft` the same for
  a Kafka 4.4.0 broker in KRaft combined mode; :mod:`kafkarig.single_broker` one broker of any release
  alone (KRaft, ZooKeeper or an old release's cluster), as the benchmarks and the live accounting start it.
* :mod:`kafkarig.cases`, :mod:`kafkarig.runner`, :mod:`kafkarig.diffs`  the differential runner: the
  cases of ``conformance/cases/*.json`` against the broker AND kafkafmt, compared byte for byte;
  ``python conformance/run.py`` prints the report.
* :mod:`kafkarig.releases`  the jars of old Kafka releases (0.9.0.1 ... 2.8.2), resolved by Maven into
  ``conformance/.cache/releases/``; :mod:`kafkarig.oldcluster` ZooKeeper clusters of those releases (mixed,
  restarted, jars swapped on a data dir, rolling restarts waiting for the ISR); :mod:`kafkarig.oldclients`
  the Java ``kafka-clients`` of 0.9 / 0.10 / 0.11 (``old-clients/OldClient.java``) and kafka-python pinned;
  :mod:`kafkarig.history` the live checks of kafkafmt's model against them, :mod:`kafkarig.seed000` seed
  000's rolling upgrade and rollback on a 0.9.0.1 + 0.10.2.2 cluster (``make history-record``);
  :mod:`kafkarig.live_scenario` ``kafkafmt scenario run FILE --live``: a scenario's steps on those releases
  beside the model, registered under the entry point group ``kafkafmt.live_runners`` (``conformance/pyproject.toml``).
"""
