"""The ``kafkafmt`` command line (also ``python -m kafkafmt``).

Each subcommand lives in its own module with a ``register(subparsers)`` function that adds
its parser and sets ``func`` (called with the parsed args; returns an exit code).
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import KafkaFmtError

#: modules providing subcommands, in --help order
COMMAND_MODULES = [
    "kafkafmt.tools.dump",
    "kafkafmt.tools.build",
    "kafkafmt.tools.clean",
    "kafkafmt.tools.annotate",
    "kafkafmt.tools.samples",
    "kafkafmt.tools.warmup",
    "kafkafmt.tools.gen",
    "kafkafmt.tools.pipeline",
    "kafkafmt.tools.explain",
    "kafkafmt.tools.scenario",
    "kafkafmt.tools.audit",
]


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafkafmt",
        description="Apache Kafka's message formats and log, byte for byte: dump, build, explain.",
    )
    parser.add_argument("--version", action="version", version=f"kafkafmt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KafkaFmtError as e:
        print(f"kafkafmt: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `kafkafmt dump ... | head`
        return 0
    except OSError as e:  # an output that cannot be written, a device error
        print(f"kafkafmt: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
