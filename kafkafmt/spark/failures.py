"""A Spark job that failed on a kafkafmt error, seen from the driver as that error again.

An error raised in a Python worker (a corrupt batch in ``FAILFAST`` mode, say) reaches the driver as
PySpark's ``PythonException`` (or a ``Py4JJavaError``), whose text carries the worker's traceback; its
last ``kafkafmt.…Error: [at byte position N] reason`` line is the error.  :func:`kafkafmt_errors`
turns such a failure back into the :class:`~kafkafmt.errors.KafkaFmtError` subclass, position and reason,
so that the command line prints one line and library callers catch one documented exception.
"""
from __future__ import annotations

import contextlib
import re
from typing import Iterator

from .. import errors

_LINE = re.compile(r"^kafkafmt(?:\.\w+)*\.(?P<name>\w+): (?:\[at byte position (?P<position>\d+)"
                   r"(?:, record offset (?P<offset>-?\d+))?\] |\[record offset (?P<offset2>-?\d+)\] )?(?P<reason>.*)$",
                   re.M)


def kafkafmt_error_from(exc: BaseException) -> errors.KafkaFmtError | None:
    """The kafkafmt error a failed Spark job reports in ``exc`` (rebuilt: class, position, offset,
    reason), or None when ``exc`` is not one."""
    if isinstance(exc, errors.KafkaFmtError):
        return exc
    found = None
    for m in _LINE.finditer(str(exc)):
        cls = getattr(errors, m["name"], None)
        if isinstance(cls, type) and issubclass(cls, errors.KafkaFmtError):
            found = (cls, m)
    if found is None:
        return None
    cls, m = found
    position = int(m["position"]) if m["position"] is not None else None
    offset = m["offset"] if m["offset"] is not None else m["offset2"]
    err = cls.__new__(cls)   # subclasses with extra constructor arguments keep the base fields only
    errors.KafkaFmtError.__init__(err, m["reason"].strip(), position=position,
                                  offset=int(offset) if offset is not None else None)
    return err


@contextlib.contextmanager
def kafkafmt_errors() -> Iterator[None]:
    """Re-raise a Spark failure caused by a kafkafmt error as that error (anything else unchanged)."""
    try:
        yield
    except errors.KafkaFmtError:
        raise
    except Exception as exc:  # PythonException, Py4JJavaError, ... : only those carrying a kafkafmt error
        err = kafkafmt_error_from(exc)
        if err is None:
            raise
        raise err from None


__all__ = ["kafkafmt_error_from", "kafkafmt_errors"]
