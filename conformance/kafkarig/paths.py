"""Where the rig finds its inputs: the checkout's ``conformance/`` directory and the cache ``make oracle`` fills.

``make -C conformance oracle`` puts Kafka 3.9.2's jars in ``.cache/lib`` and the compiled oracles in
``.cache/classes``; ``make -C conformance oracle-4.4`` does the same for Kafka 4.4.0 in ``lib-4.4`` and
``classes-4.4``.  The rig lives in a source checkout (``conformance/kafkarig``); the product (``kafkafmt``)
never reads these paths.
"""
from __future__ import annotations

from pathlib import Path

#: the checkout's conformance/ directory (the Java oracle sources, the cases, this package)
CONFORMANCE = Path(__file__).resolve().parent.parent
#: the checkout (where ``python -m kafkafmt`` finds the package under test)
REPO_ROOT = CONFORMANCE.parent
CACHE = CONFORMANCE / ".cache"
#: Kafka 3.9.2's jars and the oracles compiled against them
LIB_DIR = CACHE / "lib"
CLASSES_DIR = CACHE / "classes"
#: Kafka 4.4.0's jars and the oracles compiled against them
LIB44_DIR = CACHE / "lib-4.4"
CLASSES44_DIR = CACHE / "classes-4.4"
#: the differential cases (``conformance/cases/*.json``)
CASES_DIR = CONFORMANCE / "cases"

__all__ = ["CONFORMANCE", "REPO_ROOT", "CACHE", "LIB_DIR", "CLASSES_DIR", "LIB44_DIR", "CLASSES44_DIR", "CASES_DIR"]
