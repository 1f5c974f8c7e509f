"""Records → batches → record sets: Kafka's message formats v0, v1 and v2."""
from .batch import RecordBatch
from .builder import MemoryRecordsBuilder, RecordsInfo, build_records, end_txn_marker
from .default import DefaultRecordBatch, decrement_sequence, increment_sequence
from .legacy import LegacyRecordBatch
from .memory import MemoryRecords, Trailing, read_batch
from .record import ControlRecord, Header, Record

#: the columnar decoder (pyarrow, numba: ~120 MB and 0.4 s to import) loads on first use, so reading
#: records, ``dump`` and the limits of :mod:`kafkafmt.limits` do not pay for it
_COLUMNAR = ("BATCH_SCHEMA", "RECORD_SCHEMA", "batches_table", "decode_records", "records_table")


def __getattr__(name: str):
    if name in _COLUMNAR:
        from . import columnar
        return getattr(columnar, name)
    if name == "build_v2_batches":
        from .column_builder import build_v2_batches
        return build_v2_batches
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RecordBatch", "MemoryRecordsBuilder", "RecordsInfo", "build_records", "end_txn_marker",
           "DefaultRecordBatch", "LegacyRecordBatch", "MemoryRecords", "Trailing", "read_batch", "ControlRecord",
           "records_table", "batches_table", "decode_records", "RECORD_SCHEMA", "BATCH_SCHEMA", "Header", "Record",
           "increment_sequence", "decrement_sequence", "build_v2_batches"]
