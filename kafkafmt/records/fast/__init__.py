"""The compiled half of the columnar decoder: numba kernels and the Arrow arrays built from them.

Why numba (measured, see README "Columnar decoding"): it ships as a wheel, so ``pip install``
needs no compiler and there is no build step in the project; ``@njit(cache=True)`` keeps the
machine code on disk (in ``$NUMBA_CACHE_DIR`` when set, else beside this package, else in numba's
user cache directory ``~/.cache/numba`` when the source directory is read-only), so only the very first
use in a fresh environment pays the compile, and ``make setup`` pays it (``kafkafmt warmup``) so that
a notebook's first ``records_table`` loads the kernels instead (numba's options: :mod:`.jit`).  Cython
or Rust (PyO3/maturin) would need a C or Rust toolchain at install time for an editable checkout, for the
same loops.

Nothing here decides a rule of Kafka's on its own: the kernels only succeed on input the
pure-Python reference decoder accepts, and hand every other batch back to it.
"""
from .kernels import (
    F_ATTRIBUTES,
    F_BATCH,
    F_HEADERS_COUNT,
    F_HEADERS_POS,
    F_KEY_LEN,
    F_KEY_POS,
    F_MAGIC,
    F_OFFSET,
    F_OFFSET_DELTA,
    F_RECORD_POS,
    F_SEQUENCE,
    F_SIZE,
    F_STORED_OFFSET,
    F_STORED_TIMESTAMP,
    F_TIMESTAMP,
    F_TS_DELTA,
    F_TSTYPE,
    F_VALUE_LEN,
    F_VALUE_POS,
    H_AREA_END,
    H_AREA_START,
    H_ATTRIBUTES,
    H_BASE_OFFSET,
    H_BASE_SEQ,
    H_BASE_TS,
    H_COUNT,
    H_CRC,
    H_END,
    H_EPOCH,
    H_MAX_TS,
    H_PID,
    H_PLE,
    H_POSITION,
    MIN_LEGACY_ENTRY,
    MIN_V2_RECORD,
    N_FIELDS,
    N_HEAD_FIELDS,
    RUN_ROOM,
    crc32_spans,
    decode_legacy_inner,
    decode_legacy_plain,
    decode_v2,
    header_spans,
    legacy_crcs,
    legacy_plain_run,
    v2_run,
)

__all__ = ["ValueGather", "NO_GATHER", "numpy_array", "numpy_view", "binary_array", "header_arrays", "pool_astype", "pool_empty",
           "decode_v2", "v2_run", "N_HEAD_FIELDS", "RUN_ROOM", "H_BASE_OFFSET", "H_PLE", "H_CRC", "H_ATTRIBUTES",
           "H_BASE_TS", "H_MAX_TS", "H_PID", "H_EPOCH", "H_BASE_SEQ", "H_COUNT", "H_POSITION", "H_END", "H_AREA_START",
           "H_AREA_END",
           "legacy_plain_run",
           "legacy_crcs", "crc32_spans", "decode_legacy_plain", "decode_legacy_inner", "N_FIELDS", "MIN_V2_RECORD",
           "MIN_LEGACY_ENTRY", "F_OFFSET", "F_TIMESTAMP", "F_TSTYPE", "F_SEQUENCE", "F_KEY_POS", "F_KEY_LEN",
           "F_VALUE_POS", "F_VALUE_LEN", "F_HEADERS_POS", "F_HEADERS_COUNT", "F_BATCH", "F_RECORD_POS", "F_SIZE",
           "F_ATTRIBUTES", "F_MAGIC", "F_TS_DELTA", "F_OFFSET_DELTA", "F_STORED_TIMESTAMP", "F_STORED_OFFSET",
           "header_spans"]

#: the Arrow half, loaded (pyarrow) on first use: the cleaner's kernels need none of it
_ARROW = ("ValueGather", "NO_GATHER", "numpy_array", "numpy_view", "binary_array", "header_arrays", "pool_astype", "pool_empty")


def __getattr__(name: str):
    if name in _ARROW:
        from . import arrow
        return getattr(arrow, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
