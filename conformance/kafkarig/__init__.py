"""kafkarig: kafkafmt's test rig, apart from the product (it lives in the checkout, never in the wheel).

* :mod:`kafkarig.releases`  the jars of old Kafka releases (0.9.0.1 ... 2.8.2), resolved by Maven.
* :mod:`kafkarig.oldcluster`  ZooKeeper and brokers of those releases, mixed, restarted, swapped.
* :mod:`kafkarig.oldclients`  the Java ``kafka-clients`` of 0.9 / 0.10 / 0.11 and kafka-python pinned.
"""
