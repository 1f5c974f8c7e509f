"""The public name of :mod:`kafkafmt.records.dump_log` (kafka-dump-log's lines for record sets), re-exported.

The module lives on the records floor; this name is the one the command line's help, the notebooks and
users' code spell.  It holds no state of its own: every name here is the records module's object.
"""
from .records.dump_log import *  # noqa: F401,F403
from .records.dump_log import __all__  # noqa: F401
