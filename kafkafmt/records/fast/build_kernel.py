"""The compiled loop of the column builder: every v2 record of every batch in one pass.

``DefaultRecord.writeTo`` (KIP-98, KIP-82): length varint, attributes 0, timestampDelta varlong,
offsetDelta varint, key and value with their varint lengths (-1 = null), then the headers, given
here already encoded (:func:`kafkafmt.records.default.encode_headers`) or absent (a single 0 count).
The batch headers are left zeroed: the caller fills them through :mod:`kafkafmt.layout`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...constants import RECORD_BATCH_OVERHEAD

#: the longest varint (int32) and varlong (int64) in bytes (``ByteUtils``)
MAX_VARINT = 5
MAX_VARLONG = 10


@njit(cache=True, nogil=True)
def _zigzag(v):
    return (np.uint64(v) << np.uint64(1)) ^ np.uint64(v >> np.int64(63))


@njit(cache=True, nogil=True)
def _size(u):
    n = 1
    while u >= np.uint64(0x80):
        u >>= np.uint64(7)
        n += 1
    return n


@njit(cache=True, nogil=True)
def _put(out, p, u):
    while u >= np.uint64(0x80):
        out[p] = np.uint8((u & np.uint64(0x7F)) | np.uint64(0x80))
        u >>= np.uint64(7)
        p += 1
    out[p] = np.uint8(u)
    return p + 1


@njit(cache=True, nogil=True)
def _copy(out, p, src, s, n):
    out[p:p + n] = src[s:s + n]
    return p + n


@njit(cache=True, nogil=True)
def write_v2_records(out, batch_starts, ts_delta, offset_delta, key_data, key_pos, key_len, value_data, value_pos,
                     value_len, hdr_data, hdr_pos, hdr_len, per_batch):
    """Write the records of ``len(ts_delta)`` rows into ``out``, a batch of ``per_batch`` records
    behind each ``RECORD_BATCH_OVERHEAD`` gap; ``batch_starts[b]`` gets each batch's position and
    ``batch_starts[-1]`` the end.  ``hdr_len[i] < 0`` means no headers."""
    n = len(ts_delta)
    p = 0
    b = 0
    for i in range(n):
        if i % per_batch == 0:
            batch_starts[b] = p
            b += 1
            p += RECORD_BATCH_OVERHEAD
        tz = _zigzag(ts_delta[i])
        oz = _zigzag(offset_delta[i])
        kl = key_len[i]
        vl = value_len[i]
        kz = _zigzag(np.int64(kl))
        vz = _zigzag(np.int64(vl))
        hl = hdr_len[i]
        body = 1 + _size(tz) + _size(oz) + _size(kz) + max(kl, 0) + _size(vz) + max(vl, 0) + (hl if hl >= 0 else 1)
        p = _put(out, p, _zigzag(np.int64(body)))
        out[p] = 0
        p = _put(out, p + 1, tz)
        p = _put(out, p, oz)
        p = _put(out, p, kz)
        if kl > 0:
            p = _copy(out, p, key_data, key_pos[i], kl)
        p = _put(out, p, vz)
        if vl > 0:
            p = _copy(out, p, value_data, value_pos[i], vl)
        if hl >= 0:
            p = _copy(out, p, hdr_data, hdr_pos[i], hl)
        else:
            out[p] = 0
            p += 1
    batch_starts[b] = p
    return p
