"""Moved to :mod:`kafkafmt.gen.workload_file`: the generator's file format is a *workload* file (a
scenario is a cluster scenario of :mod:`kafkafmt.scenarios`).  This module only keeps the old names
for ``kafkafmt.viz``, which still imports them from here; delete it when viz imports ``kafkafmt.gen``."""
from ..gen.workload_file import ProducerGroup as ProducerSpec  # noqa: F401
from ..gen.workload_file import TopicSpec, log_config  # noqa: F401
from ..gen.workload_file import WorkloadError as ScenarioError  # noqa: F401
from ..gen.workload_file import WorkloadSpec as Scenario  # noqa: F401
from ..gen.workload_file import load_workload as load_scenario  # noqa: F401
from ..gen.workload_file import parse_workload as parse_scenario  # noqa: F401
from ..gen.workload_file import shipped_workloads as shipped_scenarios  # noqa: F401
