"""Command-line tools, one module per ``kafkafmt`` command (dump, build, clean, annotate, samples,
warmup, gen, pipeline, explain, scenario, audit, completion): the I/O edge of kafkafmt, registered by
:mod:`kafkafmt.cli`.  Each imports its library code inside the function that runs it, so that a command
loads only what it uses (tests/test_cli_imports.py); every one takes ``--format`` (:func:`add_format`) and
lists :data:`EXIT_CODES` in its ``--help``.

Every command whose answer depends on the Kafka release takes the one option ``--kafka-line``
(:func:`add_kafka_line`), which :func:`kafkafmt.cli.main` checks before the command runs."""
from __future__ import annotations

import argparse
import os

from ..kafka_lines import DEFAULT_LINE, KAFKA_LINES

#: log data (bytes of ``.log`` files) below which a command runs the kernels interpreted
#: (:mod:`kafkafmt.kernel_mode`): the cleaner interpreted takes about 0.2 ms of CPU a record, so 1 MiB
#: (about 12,000 small records) costs 2-3 s, against about 1 s for loading the compiled kernels from a warm
#: cache and a minute or more for compiling them on a first use
INTERPRETED_MAX_BYTES = 1 << 20


#: the exit statuses of every command, listed in each ``--help``
EXIT_CODES = ("exit status: 0 done (the input is fine, or was handled as Kafka would); 1 Kafka would refuse it (a "
              "record set, a setting, a fetch), a check or a comparison disagrees, or an input cannot be read (one "
              "line on stderr); 2 usage: a bad option or argument")

#: what ``--format`` names on every command: ``table`` for people, ``json`` for programs
FORMAT_HELP = {"table": "for people", "json": "JSON (described in docs/reference/cli-json.md)",
               "html": "a self-contained page", "markdown": "a Markdown table"}


def add_format(parser, choices: tuple[str, ...] = ("table", "json"), *, default: str = "table",
               json_alias: bool = False, json_help: str | None = None) -> None:
    """``--format`` (``table``, ``json``, ...), one spelling on every command; with ``json_alias`` the
    older ``--json`` still works as ``--format json``."""
    what = "; ".join(f"{c}: {FORMAT_HELP.get(c, c)}" + (f" ({json_help})" if c == "json" and json_help else "")
                     for c in choices)
    parser.add_argument("--format", choices=choices, default=default, action=_Format,
                        help=f"output format (default {default}): {what}")
    parser.set_defaults(json=default == "json")  # ``args.json``: what the verbs written against --json read
    if json_alias:
        parser.add_argument("--json", dest="format", nargs=0, action=_Format, const="json",
                            help="the same as --format json (its older spelling)")


class _Format(argparse.Action):
    """``--format VALUE`` (or ``--json``: its ``const``), which also sets ``args.json``."""

    def __call__(self, parser, namespace, values, option_string=None):
        value = self.const if self.const is not None else values
        namespace.format = value
        namespace.json = value == "json"


def add_kafka_line(parser, *, default: str = DEFAULT_LINE, what: str = "follow") -> None:
    """``--kafka-line VERSION``: the Kafka release line whose rules the command follows
    (``BrokerConfig.kafka_line``, the rows of :mod:`kafkafmt.kafka_lines`)."""
    parser.add_argument("--kafka-line", default=default, metavar="VERSION",
                        help=f"the Kafka release line to {what}: {', '.join(KAFKA_LINES)}, or a release of one "
                             f"(0.10.2.2, 4.4.0) (default {default})")


class LazyChoices:
    """An argparse ``choices`` whose values come from a module loaded only when they are needed: when a value
    is checked (the command runs) or listed (its own ``--help``, an error, shell completion), so that
    registering a command (``kafkafmt --help``, any other command) does not import it."""

    def __init__(self, load):
        self._load = load
        self._values = None

    def _all(self) -> tuple:
        if self._values is None:
            self._values = tuple(self._load())
        return self._values

    def __contains__(self, value) -> bool:
        return value in self._all()

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def log_bytes(paths) -> int:
    """The bytes of the ``.log`` segment files under ``paths`` (files, partition or log directories)."""
    total = 0
    for path in paths:
        if os.path.isfile(path):
            total += os.path.getsize(path)
            continue
        for folder, _, names in os.walk(path):
            total += sum(os.path.getsize(os.path.join(folder, n)) for n in names if n.endswith(".log"))
    return total


def choose_kernels(paths, what: str, kernel_module: str, max_bytes: int = INTERPRETED_MAX_BYTES) -> bool:
    """Before a command imports any kernel: run them interpreted when the data under ``paths`` is small
    (:data:`INTERPRETED_MAX_BYTES`); True when this process runs them interpreted.  When they run compiled
    and some are not in numba's cache yet (a first use after an install without ``kafkafmt warmup``), say
    so once on a terminal: what is compiled, why, about how long, where it is kept."""
    from ..kernel_mode import interpreted, use_interpreted
    size = log_bytes(paths)
    use_interpreted(size < max_bytes)
    if interpreted():
        return True
    compile_notice(what, kernel_module, size)
    return False


def compile_notice(what: str, kernel_module: str, size: int) -> None:
    """On a terminal, once, before compiled kernels run: which are not in numba's cache yet (a first use after an
    install without ``kafkafmt warmup``), that they are compiled as they are reached, about how long, and where
    they are kept.  Nothing when every kernel is cached, or off a terminal."""
    import sys
    if not sys.stderr.isatty():
        return
    import importlib
    importlib.import_module(kernel_module)
    from ..records.fast import jit
    cold = jit.uncached()
    if cold:
        where = ", ".join(jit.cache_dirs()) or "nowhere: set NUMBA_CACHE_DIR to keep them"
        print(f"kafkafmt: {size / 2**20:.1f} MiB of data: {what} runs compiled, and {len(cold)} kernels are not "
              f"compiled in this environment yet: those it needs are compiled as it reaches them (once; up to a "
              f"minute or two of CPU on a 2-core machine), then kept in {where}. `kafkafmt warmup` compiles "
              f"them ahead of time.", file=sys.stderr, flush=True)
