"""Moved to :mod:`kafkafmt.gen.workloads` (sample-log generation sits above the log).  This module only
re-exports it for ``kafkafmt.viz``, which still imports it from here; delete it when viz imports
``kafkafmt.gen``."""
from ..gen.workloads import *  # noqa: F401,F403
from ..gen.workloads import CREATE_TIME, LOG_APPEND_TIME  # noqa: F401
