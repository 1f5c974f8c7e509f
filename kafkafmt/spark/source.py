"""The ``kafkafmt`` data source on PySpark 4's Python Data Source API (``pyspark.sql.datasource``).

``spark.read.format("kafkafmt").load(path | glob | [paths])`` reads topic-partition directories
or segment files (options: :mod:`kafkafmt.spark.plan`); ``df.write.format("kafkafmt")`` writes log
directories (:mod:`kafkafmt.spark.write`).  Planning runs once (``partitions()``), each Spark
partition is one task reading whole batches of its byte ranges, and rows reach Spark as
``pyarrow.RecordBatch`` objects.
"""
from __future__ import annotations

import uuid
from typing import Iterator

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from . import columns
from .plan import ReadOptions, plan
from .read import read_split
from .write import WriteOptions, abort, build_logs, stage


class KafkaFmtPartition(InputPartition):
    """One Spark partition: a list of :class:`~kafkafmt.spark.plan.Split`."""

    def __init__(self, splits):
        super().__init__(tuple(splits))
        self.splits = tuple(splits)


class KafkaFmtReader(DataSourceReader):
    """Plans once, then each task reads its splits."""

    def __init__(self, options: ReadOptions):
        self.options = options

    def partitions(self):
        # nothing to read still needs one (empty) partition: Spark would otherwise hand read() a bare one
        return [KafkaFmtPartition(p) for p in plan(self.options).partitions] or [KafkaFmtPartition([])]

    def read(self, partition: KafkaFmtPartition) -> Iterator:
        for split in partition.splits:
            yield from read_split(split, self.options)


class StagedFile(WriterCommitMessage):
    """A task's commit message: its staged Arrow file and row count."""

    def __init__(self, info: dict):
        self.info = info


class KafkaFmtWriter(DataSourceArrowWriter):
    """Tasks stage Arrow files; the commit builds the log directories (:mod:`kafkafmt.spark.write`)."""

    def __init__(self, options: WriteOptions):
        self.options = options

    def write(self, iterator) -> StagedFile:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = f"{ctx.partitionId():06d}-{ctx.attemptNumber()}" if ctx else uuid.uuid4().hex
        return StagedFile(stage(iterator, self.options, task))

    def commit(self, messages) -> None:
        build_logs([m.info for m in messages if m is not None], self.options)

    def abort(self, messages) -> None:
        abort(self.options)


class KafkaFmtDataSource(DataSource):
    """``format("kafkafmt")``: Kafka log directories as DataFrames, and back."""

    @classmethod
    def name(cls) -> str:
        return "kafkafmt"

    def _read_options(self) -> ReadOptions:
        return ReadOptions.parse(dict(self.options))

    def schema(self) -> str:
        level = str(dict((k.lower(), v) for k, v in self.options.items()).get("level", "record")).lower()
        return columns.ddl(columns.schema_for(level))

    def reader(self, schema) -> KafkaFmtReader:
        return KafkaFmtReader(self._read_options())

    def writer(self, schema, overwrite: bool) -> "KafkaFmtWriter":
        return KafkaFmtWriter(WriteOptions.parse(dict(self.options), overwrite=overwrite))
