"""What a message-format conversion costs a broker (the ``costs`` floor, above the broker rules).

:mod:`kafkafmt.costs.model` turns kafkafmt's exact counts of a fetch (records re-encoded, bytes decompressed and
compressed per codec, the bytes read and sent: :func:`kafkafmt.broker.fetch.fetch`) into predicted broker CPU
seconds and held memory per request for a Kafka line, from per-operation costs measured on real brokers by
``make bench-conversion`` (``benchmarks/conversion.py``) and kept as data (``measured.json``, naming the machine,
its load and the date).  The conversions priced are KIP-32's down-conversion for old consumers (0.10.0 on),
eager before KIP-283 (2.0) and lazy after, none on 4.x (KIP-724); KIP-31's relative offsets are what spares a
0.10 broker the recompression of a produce, which the benchmark measures beside.
"""
from .model import (
    CODECS,
    LAZY_CHUNK_BYTES,
    TABLE_PATH,
    Consumed,
    CostTable,
    Counts,
    FitCell,
    MixPrediction,
    Prediction,
    ReleaseCosts,
    consume,
    fit,
    load_table,
    predict,
    predict_fetch,
    predict_mix,
)

__all__ = ["CODECS", "LAZY_CHUNK_BYTES", "TABLE_PATH", "Consumed", "CostTable", "Counts", "FitCell", "MixPrediction",
           "Prediction", "ReleaseCosts", "consume", "fit", "load_table", "predict", "predict_fetch", "predict_mix"]
