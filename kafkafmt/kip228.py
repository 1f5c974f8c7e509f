"""The public name of :mod:`kafkafmt.records.kip228` (KIP-228's negative timestamps, opt-in), re-exported.

The module lives on the records floor; this name is the one the command line's help, the notebooks and
users' code spell.  It holds no state of its own: every name here is the records module's object.
"""
from .records.kip228 import *  # noqa: F401,F403
from .records.kip228 import __all__  # noqa: F401
