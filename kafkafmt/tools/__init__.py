"""Command-line tools, one module per ``kafkafmt`` command (dump, build, clean, annotate, samples,
warmup, gen, pipeline, explain, scenario, audit): the I/O edge of kafkafmt, registered by
:mod:`kafkafmt.cli`.

Every command whose answer depends on the Kafka release takes the one option ``--kafka-line``
(:func:`add_kafka_line`), which :func:`kafkafmt.cli.main` checks before the command runs."""
from __future__ import annotations

from ..kafka_lines import DEFAULT_LINE, KAFKA_LINES


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
