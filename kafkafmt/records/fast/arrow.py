"""Arrow arrays from kernel output: variable-length columns are one gather into contiguous buffers
(``pa.Array.from_buffers``), never a Python object per value."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...constants import INT32_MAX
from .kernels import F_KEY_LEN, F_VALUE_LEN, gather, gather_rows, header_spans


def pool_empty(shape, dtype) -> np.ndarray:
    """``np.empty`` from Arrow's memory pool (mimalloc or jemalloc), which keeps freed pages for the
    next decode: numpy's large allocations are fresh mappings whose every page faults in again
    (measured: the kernels' output and the key/value gathers 25-35% faster in ``records_table``)."""
    dtype = np.dtype(dtype)
    count = 1
    for n in (shape,) if isinstance(shape, (int, np.integer)) else shape:  # not np.prod: it costs more than the allocation
        count *= n
    return np.frombuffer(pa.allocate_buffer(count * dtype.itemsize), dtype=dtype).reshape(shape)


def pool_astype(a: np.ndarray, dtype) -> np.ndarray:
    """``a.astype(dtype)`` into :func:`pool_empty` memory."""
    out = pool_empty(a.shape, dtype)
    np.copyto(out, a, casting="unsafe")
    return out


def numpy_array(a: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``pa.array(a, type_)`` for a 1-d array of ``type_``'s width (bool: one byte per value), without a copy for
    fixed-width types and without ``pa.array``, whose first call in a process imports pandas (measured 0.3-1.3 s
    of a ``kafkafmt dump --deep``)."""
    if pa.types.is_boolean(type_):
        return pa.Array.from_buffers(type_, len(a), [None, pa.py_buffer(np.packbits(a, bitorder="little"))])
    if a.dtype.itemsize * 8 != type_.bit_width:  # pragma: no cover - a bug in the caller
        raise TypeError(f"{a.dtype} values for {type_}")
    return pa.Array.from_buffers(type_, len(a), [None, pa.py_buffer(np.ascontiguousarray(a))])


def numpy_view(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a fixed-width Arrow array without nulls as a numpy array (a view of one chunk), without
    ``to_numpy``, whose first call in a process imports pandas."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count or pa.types.is_boolean(array.type):  # pragma: no cover - a bug in the caller
        raise TypeError(f"no plain numpy view of {array.type} with {array.null_count} nulls")
    dtype = np.dtype(array.type.to_pandas_dtype())
    return np.frombuffer(array.buffers()[1], dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _validity(lengths: np.ndarray) -> tuple[pa.Buffer | None, int]:
    is_null = np.less(lengths, 0, out=pool_empty(len(lengths), np.bool_))
    nulls = int(np.count_nonzero(is_null))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(~is_null, bitorder="little")), nulls


def binary_array(data: np.ndarray, pos: np.ndarray, lengths: np.ndarray, type_: pa.DataType = pa.binary()) -> pa.Array:
    """``data[pos[i]:pos[i]+lengths[i]]`` for each i as an Arrow binary (or string) array; a negative
    length is null.  The caller keeps each array under 2 GiB (Arrow's int32 offsets), or asks for
    ``large_binary``."""
    layout = _BinaryLayout(lengths, type_)
    dest = pool_empty(layout.total, np.uint8)
    gather(data, pos, layout.sizes, layout.offsets, dest)
    return layout.array(pa.py_buffer(dest))


class _BinaryLayout:
    """Validity bitmap and offsets of a binary column from its lengths (negative: null)."""

    def __init__(self, lengths: np.ndarray, type_: pa.DataType):
        self.n, self.type = len(lengths), type_
        self.validity, self.nulls = _validity(lengths)
        self.sizes = np.maximum(lengths, 0, out=pool_empty(self.n, np.int64)) if self.nulls else lengths
        self.offsets = pool_empty(self.n + 1, np.int64)  # temporaries from the pool too: no page faults
        self.offsets[0] = 0
        np.cumsum(self.sizes, out=self.offsets[1:])
        self.total = int(self.offsets[-1])
        self.large = pa.types.is_large_binary(type_) or pa.types.is_large_string(type_)
        if self.total > INT32_MAX and not self.large:
            raise OverflowError(f"{self.total} bytes do not fit one Arrow binary array")

    def array(self, values: pa.Buffer) -> pa.Array:
        offsets = pa.py_buffer(self.offsets if self.large else pool_astype(self.offsets, np.int32))
        return pa.Array.from_buffers(self.type, self.n, [self.validity, offsets, values], null_count=self.nulls)


class ValueGather:
    """Key and value columns (Arrow ``binary``) gathered piece by piece, as a kernel fills rows: by
    :func:`decode_v2` itself (``kernel_args``) while each record is in cache, or by :meth:`rows` right after a
    kernel fills a few rows (one gather per column over a whole chunk reads the records area from memory a
    second time; measured ~6 ms of 26 for 200k lz4 records).  The kernels write the columns' offsets and
    count their nulls as they go (no pass over the lengths afterwards).  ``keys``/``values``: which columns;
    ``capacity`` bounds each column's bytes (every value lies inside the buffer: the sum of the records areas
    does), ``rows`` the rows."""

    def __init__(self, keys: bool, values: bool, capacity: int, rows: int):
        self.keys, self.values = keys, values
        self.buffers = [pa.allocate_buffer(capacity if want else 0, resizable=True) for want in (keys, values)]
        self._dests = [np.frombuffer(b, np.uint8) for b in self.buffers]
        self.offsets = [pool_empty(rows + 1 if want else 1, np.int32) for want in (keys, values)]
        for o in self.offsets:
            o[0] = 0
        self.used = np.zeros(4, np.int64)  # bytes of keys, of values; null keys, null values

    def kernel_args(self) -> tuple:
        """``(copy_keys, copy_values, key_dest, value_dest, used, key_offsets, value_offsets)`` for
        :func:`decode_v2` and :func:`gather_rows`."""
        return (self.keys, self.values, *self._dests, self.used, *self.offsets)

    def rows(self, data: np.ndarray, out: np.ndarray, row0: int, row1: int) -> None:
        """Append the values of rows ``row0..row1-1`` (the next rows, in order)."""
        gather_rows(data, out, row0, row1, *self.kernel_args())

    def arrays(self, out: np.ndarray) -> list[pa.Array]:
        """The columns (keys, then values, those gathered) over every row of ``out``."""
        self._dests = None  # no view may outlive the resize, which may move the bytes
        n = out.shape[1]
        arrays = []
        used = self.used.tolist()
        for i, (want, len_field) in enumerate(((self.keys, F_KEY_LEN), (self.values, F_VALUE_LEN))):
            if not want:
                continue
            size, nulls = used[i], used[2 + i]
            if size > INT32_MAX:
                raise OverflowError(f"{size} bytes do not fit one Arrow binary array")
            buf = self.buffers[i]
            buf.resize(size, shrink_to_fit=True)
            validity = pa.py_buffer(np.packbits(out[len_field] >= 0, bitorder="little")) if nulls else None
            arrays.append(pa.Array.from_buffers(pa.binary(), n, [validity, pa.py_buffer(self.offsets[i][:n + 1]), buf],
                                                null_count=nulls))
        return arrays


#: the kernels' destination arguments when nothing is gathered
NO_GATHER = (False, False, np.empty(0, np.uint8), np.empty(0, np.uint8), np.zeros(4, np.int64), np.zeros(1, np.int32),
             np.zeros(1, np.int32))


def header_arrays(data: np.ndarray, headers_pos: np.ndarray, headers_count: np.ndarray,
                  header_type: pa.DataType, raw_keys_type: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """The ``headers`` column (list<struct<key string, value binary>>) and ``header_key_bytes``.

    A header key that is not well-formed UTF-8 reads as Java's ``new String(bytes, UTF_8)`` does
    (each bad sequence becomes U+FFFD), and the record's raw keys are kept, losslessly, in
    ``header_key_bytes`` (null for records whose keys are all UTF-8).
    """
    n = len(headers_pos)
    total = int(headers_count.sum())
    fields = list(header_type.value_type)
    if total == 0:  # no record has a header (most topics): every list is empty, no pass over the rows
        structs = pa.StructArray.from_arrays([pa.nulls(0, f.type) for f in fields], fields=fields)
        return pa.Array.from_buffers(header_type, n, [None, pa.py_buffer(np.zeros(n + 1, np.int32))],
                                     children=[structs]), pa.nulls(n, raw_keys_type)
    list_offsets = pool_empty(n + 1, np.int32)
    list_offsets[0] = 0
    np.cumsum(headers_count, out=list_offsets[1:])
    kpos = np.empty(total, np.int64)
    klen = np.empty(total, np.int64)
    vpos = np.empty(total, np.int64)
    vlen = np.empty(total, np.int64)
    if total:
        header_spans(data, headers_pos, headers_count, total, kpos, klen, vpos, vlen)
    key_bytes = binary_array(data, kpos, klen)
    try:
        keys = key_bytes.cast(pa.string())  # Arrow checks well-formed UTF-8 (Unicode 3.9, table 3-7)
        raw_keys = pa.nulls(n, raw_keys_type)
    except pa.ArrowInvalid:  # a key that is not UTF-8 (rare): find which, in Python
        raw = key_bytes.to_pylist()
        read = [r.decode("utf-8", "replace") for r in raw]
        bad = np.fromiter((k.encode() != r for k, r in zip(read, raw)), np.bool_, total)  # something was replaced
        keys = pa.array(read, pa.string())
        owner = np.repeat(np.arange(n), headers_count)
        has_bad = np.zeros(n, dtype=np.bool_)
        has_bad[owner[bad]] = True
        lo = list_offsets.tolist()
        raw_keys = pa.array([raw[lo[r]:lo[r + 1]] if has_bad[r] else None for r in range(n)], raw_keys_type)
    values = binary_array(data, vpos, vlen)
    structs = pa.StructArray.from_arrays([keys, values], fields=fields)
    # from buffers: the offsets are right by construction, so no validating pass and no copy
    return pa.Array.from_buffers(header_type, n, [None, pa.py_buffer(list_offsets)], children=[structs]), raw_keys
