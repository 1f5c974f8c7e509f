"""Errors raised by the log layer; all are defined once in :mod:`kafkafmt.errors` and re-exported here."""
from ..errors import (  # noqa: F401
                      ConfigError,
                      DumpToolError,
                      IllegalStateError,
                      IndexOffsetOverflowError,
                      KafkaStorageError,
                      LogDirLockedError,
                      NoSuchFileError,
                      OffsetsOutOfOrderError,
                      UnexpectedAppendOffsetError,
)
