"""Sample-log generation above the log: workload files, producers with skewed clocks, the KIP-33
policy comparison.

* :mod:`kafkafmt.gen.workload_file`: the workload file format of ``kafkafmt gen`` (YAML/JSON:
  topics, producer groups, clock models, configs; :func:`load_workload`, :func:`parse_workload`);
* :mod:`kafkafmt.gen.generator`: a workload file becomes a broker's log directory (:func:`generate_logs`);
* :mod:`kafkafmt.gen.workloads`: workloads as lists of append events (:class:`Workload`), producers
  with skewed clocks (:class:`ClockModel`), Kafka's default partitioner, :func:`run_workload`;
* :mod:`kafkafmt.gen.compare`: :func:`compare_policies`, one workload through Kafka's time index and
  the seed-001 KIP-33 variant.

Floor 6 of the architecture: imports the log and below; the log never imports it.
"""
from .compare import compare_policies
from .generator import MANIFEST, generate_logs, generate_partition, parse_size
from .workload_file import (
                            ProducerGroup,
                            TopicSpec,
                            WorkloadError,
                            WorkloadSpec,
                            load_workload,
                            log_config,
                            parse_workload,
                            shipped_workloads,
)
from .workloads import (
                            AppendEvent,
                            ClockModel,
                            Producer,
                            Workload,
                            client_batch,
                            generate,
                            generate_mixed,
                            partition_for_key,
                            run_workload,
                            stored_batch,
)

__all__ = ["compare_policies", "MANIFEST", "generate_logs", "generate_partition", "parse_size", "ProducerGroup",
           "TopicSpec", "WorkloadError", "WorkloadSpec", "load_workload", "log_config", "parse_workload",
           "shipped_workloads", "AppendEvent", "ClockModel", "Producer", "Workload", "client_batch", "generate",
           "generate_mixed", "partition_for_key", "run_workload", "stored_batch"]
