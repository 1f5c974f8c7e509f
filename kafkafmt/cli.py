"""The ``kafkafmt`` command line (also ``python -m kafkafmt``).

Each subcommand lives in its own module with a ``register(subparsers)`` function that adds
its parser and sets ``func`` (called with the parsed args; returns an exit code).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from . import __version__
from .errors import KafkaFmtError

#: the commands, in --help order; each is the module ``kafkafmt.tools.<command>``
COMMANDS = ["dump", "build", "clean", "annotate", "samples", "warmup", "gen", "pipeline", "explain", "scenario",
            "audit", "completion"]
#: modules providing subcommands, in --help order
COMMAND_MODULES = [f"kafkafmt.tools.{name}" for name in COMMANDS]


def make_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``kafkafmt`` parser; with ``command`` (one of :data:`COMMANDS`) only that command is
    registered, so a run imports only what its command needs (``--help`` and unknown names get all)."""
    parser = argparse.ArgumentParser(
        prog="kafkafmt",
        description="Apache Kafka's message formats and log, byte for byte: dump, build, explain.",
    )
    parser.add_argument("--version", action="version", version=f"kafkafmt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [f"kafkafmt.tools.{command}"] if command in COMMANDS else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _add_exit_codes(parser)
    return parser


def _add_exit_codes(parser: argparse.ArgumentParser) -> None:
    """The exit statuses, the same for every command, at the end of each parser's ``--help``."""
    from .tools import EXIT_CODES
    parser.epilog = f"{parser.epilog}\n\n{EXIT_CODES}" if parser.epilog else EXIT_CODES
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _add_exit_codes(child)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    parser = make_parser(args_in[0] if args_in else None)
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        if getattr(args, "kafka_line", None) is not None:
            from .kafka_lines import check_line
            args.kafka_line = check_line(args.kafka_line)
        return int(args.func(args) or 0)
    except KafkaFmtError as e:
        print(f"kafkafmt: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `kafkafmt dump ... | head`
        return 0
    except OSError as e:  # an output that cannot be written, a device error
        print(f"kafkafmt: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kafkafmt: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug of kafkafmt's: one line, the traceback on request
        if os.environ.get("KAFKAFMT_TRACEBACK"):
            raise
        print(f"kafkafmt: internal error: {type(e).__name__}: {e} (KAFKAFMT_TRACEBACK=1 shows where)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
