"""Errors raised by the log layer; all are defined once in :mod:`kafkafmt.errors` and re-exported here."""
from ..errors import (ConfigError, DumpToolError, IllegalStateError, IndexOffsetOverflowError,  # noqa: F401
                      KafkaStorageError, LogDirLockedError, NoSuchFileError, OffsetsOutOfOrderError,
                      UnexpectedAppendOffsetError)
