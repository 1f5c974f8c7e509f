"""Moved to :mod:`kafkafmt.gen.generator` (sample-log generation sits above the log).  This module only
re-exports it for ``kafkafmt.viz``, which still imports it from here; delete it when viz imports
``kafkafmt.gen``."""
from ..gen.generator import (FIRST_PRODUCER_ID, MANIFEST, REPLICATION_OFFSET_CHECKPOINT,  # noqa: F401
                             generate_logs, generate_partition, parse_size)
