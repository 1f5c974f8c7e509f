"""Spark over Kafka's log files: a data source, a writer and a session helper.

>>> import kafkafmt.spark
>>> spark = kafkafmt.spark.session()                     # quiet local[2] session, source registered
>>> df = spark.read.format("kafkafmt").load("data/logs/topic-*")
>>> df.write.format("kafkafmt").option("magic", 2).option("codec", "zstd").save("out/logs")

Without Spark, :func:`plan` and :func:`read_all` give the same rows in this process.
Floor 6 of the architecture: imports records and log, never the other way round.
"""
from .plan import Plan, ReadOptions, Split, plan
from .read import read_all, read_split
from .session import register, session

__all__ = ["Plan", "ReadOptions", "Split", "plan", "read_all", "read_split", "register", "session"]
