"""Records → batches → record sets: Kafka's message formats v0, v1 and v2."""
from .batch import RecordBatch
from .columnar import BATCH_SCHEMA, RECORD_SCHEMA, batches_table, decode_records, records_table
from .builder import MemoryRecordsBuilder, RecordsInfo, build_records, end_txn_marker
from .default import DefaultRecordBatch, decrement_sequence, increment_sequence
from .legacy import LegacyRecordBatch
from .memory import MemoryRecords, Trailing, read_batch
from .record import ControlRecord, Header, Record

__all__ = ["RecordBatch", "MemoryRecordsBuilder", "RecordsInfo", "build_records", "end_txn_marker",
           "DefaultRecordBatch", "LegacyRecordBatch", "MemoryRecords", "Trailing", "read_batch",
           "ControlRecord", "records_table", "batches_table", "decode_records", "RECORD_SCHEMA", "BATCH_SCHEMA", "Header", "Record", "increment_sequence", "decrement_sequence"]
