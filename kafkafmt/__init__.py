"""kafkafmt: Apache Kafka's message formats and log, byte for byte."""
import sys
from importlib import import_module
from importlib.machinery import ModuleSpec

__version__ = "0.1.0"

#: the public spellings of the format-level modules, which live on the records floor:
#: ``import kafkafmt.spec`` gives the module :mod:`kafkafmt.records.spec` itself (one object, so
#: ``kafkafmt.kip228.enable`` set through either name is the same switch); imported on first use
MODULE_ALIASES = {
    "kafkafmt.spec": "kafkafmt.records.spec",  # the lossless JSON spec of record sets
    "kafkafmt.annotate": "kafkafmt.records.annotate",  # the annotated byte view
    "kafkafmt.dump": "kafkafmt.records.dump_log",  # kafka-dump-log's lines for record sets
    "kafkafmt.kip228": "kafkafmt.records.kip228",  # KIP-228 negative timestamps (opt-in)
    "kafkafmt.samples": "kafkafmt.records.sample_sets",  # the sample record sets
}


class _ModuleAlias:
    """A meta path finder and loader serving :data:`MODULE_ALIASES` (the target module, unchanged)."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        return ModuleSpec(fullname, _ModuleAlias) if fullname in MODULE_ALIASES else None

    @staticmethod
    def create_module(spec):
        module = import_module(MODULE_ALIASES[spec.name])
        spec.loader_state = module.__spec__  # the import system sets module.__spec__ to the alias's
        return module

    @staticmethod
    def exec_module(module):
        module.__spec__ = module.__spec__.loader_state


if not any(finder is _ModuleAlias for finder in sys.meta_path):
    sys.meta_path.insert(0, _ModuleAlias)  # before the path finders: the alias wins over a stale file
