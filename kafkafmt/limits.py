"""Limits that bound the work a decode may do, so hostile bytes cannot cost unbounded memory or time.

Kafka itself has no such limits (a broker trusts ``message.max.bytes`` and its JVM heap); a
workbench that is pointed at captured or hand-made bytes needs them.  Two limits apply to every
deep decode (``RecordBatch.records``, ``dump --deep``, the broker views, the columnar decoder):

``max_decompressed_bytes`` (default 256 MiB)
    the output of one compressed stream (a v2 batch's records, or a v0/v1 wrapper's value);
    past it :class:`~kafkafmt.errors.DecompressionLimitError`.  The ``max_decompressed_bytes``
    argument of ``records()`` overrides it per call.
``max_records_per_batch`` (default 500,000)
    the records one batch may hold: a v2 batch whose ``recordsCount`` is larger, or a v0/v1
    wrapper holding more inner messages, is refused with
    :class:`~kafkafmt.errors.DecodeLimitError` before any record is built.  Without it a 24 KB zstd
    batch of 7-byte records expands (under the byte cap) to tens of millions of records.

Both are errors about the input (``position`` points at the batch), never silent truncation.
Change them for a block of code with :func:`decode_limits`, or for the process with the
environment variables ``KAFKAFMT_MAX_DECOMPRESSED_BYTES`` / ``KAFKAFMT_MAX_RECORDS_PER_BATCH``
(read at import)::

    with decode_limits(max_records_per_batch=10_000_000):
        rows = list(batch.records())
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
from dataclasses import dataclass

from .constants import DEFAULT_MAX_DECOMPRESSED_BYTES
from .errors import DecodeLimitError, IllegalArgumentError

DEFAULT_MAX_RECORDS_PER_BATCH = 500_000


@dataclass(frozen=True)
class DecodeLimits:
    """The limits in force (see the module docstring)."""

    max_decompressed_bytes: int = dataclasses.field(default=DEFAULT_MAX_DECOMPRESSED_BYTES, metadata={
        "what": "the output of one compressed stream (a v2 batch's records, or a v0/v1 wrapper's value)",
        "refused_with": "DecompressionLimitError"})
    max_records_per_batch: int = dataclasses.field(default=DEFAULT_MAX_RECORDS_PER_BATCH, metadata={
        "what": "the records of one batch: a v2 recordsCount, or the inner messages of a v0/v1 wrapper",
        "refused_with": "DecodeLimitError"})

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if type(v) is not int or v < 0:
                raise IllegalArgumentError(f"{f.name} must be an integer >= 0, got {v!r}")


def _from_environment() -> DecodeLimits:
    values = {}
    for name in ("max_decompressed_bytes", "max_records_per_batch"):
        text = os.environ.get(f"KAFKAFMT_{name.upper()}")
        if text:
            try:
                values[name] = int(text)
            except ValueError:
                raise IllegalArgumentError(f"KAFKAFMT_{name.upper()} must be an integer, got {text!r}") from None
    return DecodeLimits(**values)


_CURRENT: contextvars.ContextVar[DecodeLimits] = contextvars.ContextVar("kafkafmt_decode_limits",
                                                                         default=_from_environment())


def current_limits() -> DecodeLimits:
    """The limits in force in this context."""
    return _CURRENT.get()


@contextlib.contextmanager
def decode_limits(**changes):
    """Run a block with some limits changed (``max_decompressed_bytes=..., max_records_per_batch=...``)."""
    token = _CURRENT.set(dataclasses.replace(_CURRENT.get(), **changes))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)


def check_record_count(count: int, *, position: int | None, what: str = "records") -> None:
    """Refuse a batch that holds (or declares) more than ``max_records_per_batch`` records."""
    limit = _CURRENT.get().max_records_per_batch
    if count > limit:
        raise DecodeLimitError(f"the batch holds more than max_records_per_batch={limit} {what} ({count}); "
                               "raise the limit with kafkafmt.limits.decode_limits to decode it", position=position)


__all__ = ["DecodeLimits", "current_limits", "decode_limits", "check_record_count",
           "DEFAULT_MAX_DECOMPRESSED_BYTES", "DEFAULT_MAX_RECORDS_PER_BATCH"]
