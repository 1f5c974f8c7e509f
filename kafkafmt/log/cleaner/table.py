"""The log cleaner's offset map as Kafka lays it out (``SkimpyOffsetMap``), compiled: a preallocated
open-addressing table of ``memory // 24`` slots, each a key's MD5 digest (16 bytes,
``SkimpyOffsetMap.hashInto``) and its latest offset (8 bytes), so the map takes exactly the dedupe
buffer's bytes whatever the number of keys.

* Slots are found as Kafka probes them (``positionOf``): attempt ``a`` reads the big-endian int at byte
  ``min(a, 12)`` of the digest, adds ``max(0, a - 12)`` (Java int arithmetic), takes ``Utils.abs`` and
  the remainder by the slot count.  A slot whose 24 bytes are all zero is empty (``isEmpty``).
* ``put`` overwrites a key's offset or takes the first empty slot (the caller keeps the map below
  ``slots * load factor``, as ``Cleaner.buildOffsetMap`` does); ``get`` gives -1 for a key not in the map
  and gives up after ``slots + 12`` attempts.
* The MD5 (RFC 1321) is compiled too, so a key is hashed where it is read, with no Python call per key.
"""
from __future__ import annotations

import math

import numpy as np

from ...constants import INT32_MIN
from ...records.fast.jit import inner, kernel

__all__ = ["BYTES_PER_ENTRY", "DIGEST_SIZE", "MD5_K", "MD5_S", "md5_spans", "new_table", "clear_table", "table_put_many",
           "table_get_many"]

#: ``SkimpyOffsetMap.hashSize``: an MD5 digest
DIGEST_SIZE = 16
#: ``SkimpyOffsetMap.bytesPerEntry``: the digest and an 8-byte offset
BYTES_PER_ENTRY = DIGEST_SIZE + 8
#: ``hashSize - 4``: the last byte at which ``positionOf`` reads its int
_LAST_PROBE_BYTE = DIGEST_SIZE - 4
#: state[...] of a table: entries in use, the latest offset put (``lastOffset``), and from USED on the
#: slots taken, in the order they were taken (so that clearing a table touches only them)
ENTRIES, LATEST, USED = 0, 1, 2

#: MD5 (RFC 1321): the per-round shift amounts and the sine table
MD5_S = np.array([7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4, np.uint64)
MD5_K = np.array([int(abs(math.sin(i + 1)) * 2**32) & 0xFFFFFFFF for i in range(64)], np.uint64)


#: MD5's four rounds of 16 steps each
_STEPS_PER_ROUND = 16


def _md5_block_source(lanes: int = 1) -> str:
    """The source of ``_md5_block(w, st)`` (``lanes`` 2: ``_md5_block2(w, st, w_1, st_1)``, two messages at
    once): RFC 1321's 64 steps written out, each with its own sine constant, shift and message word, so
    the compiler sees constants instead of table lookups (measured 1.3x faster than a loop over
    :data:`MD5_K` and :data:`MD5_S`).  A step depends on the one before it; two independent messages
    stepped side by side keep the processor's other execution units busy (measured 1.3x the keys per
    second of one at a time)."""
    tags = [""] + [f"_{n}" for n in range(1, lanes)]
    args = ", ".join(f"w{t}, st{t}" for t in tags)
    name = "_md5_block" if lanes == 1 else f"_md5_block{lanes}"
    lines = [f"def {name}({args}):", "    m = np.uint64(0xFFFFFFFF)"]
    for t in tags:
        lines.append(f"    a{t}, b{t}, c{t}, d{t} = st{t}[0], st{t}[1], st{t}[2], st{t}[3]")
        lines += [f"    w{j}{t} = w{t}[{j}]" for j in range(16)]
    names = ["a", "b", "c", "d"]
    for i in range(64):
        k, r = int(MD5_K[i]), int(MD5_S[i])
        for t in tags:
            a, b, c, d = (v + t for v in names)
            f, g = [(f"(({b} & {c}) | (~{b} & {d}))", i), (f"(({d} & {b}) | (~{d} & {c}))", (5 * i + 1) % 16),
                    (f"({b} ^ {c} ^ {d})", (3 * i + 5) % 16),
                    (f"({c} ^ ({b} | (~{d} & m)))", (7 * i) % 16)][i // _STEPS_PER_ROUND]
            lines.append(f"    x{t} = ({f} + {a} + np.uint64({k}) + w{g}{t}) & m")
            lines.append(f"    {a} = ({b} + (((x{t} << np.uint64({r})) | (x{t} >> np.uint64({32 - r}))) & m)) & m")
        names = [names[3], names[0], names[1], names[2]]
    for t in tags:
        lines += [f"    st{t}[{j}] = (st{t}[{j}] + {v}{t}) & m" for j, v in enumerate("abcd")]
    return "\n".join(lines)


def _compiled_md5_block(lanes: int = 1):
    scope = {"np": np}
    name = "_md5_block" if lanes == 1 else f"_md5_block{lanes}"
    exec(compile(_md5_block_source(lanes), f"<{__name__}.{name}>", "exec"), scope)  # noqa: S102 (our own source)
    return inner(scope[name])


#: one 64-byte block (16 little-endian words ``w``) into the state ``st``
_md5_block = _compiled_md5_block()
#: the same for two messages side by side: ``_md5_block2(w, st, w_1, st_1)``
_md5_block2 = _compiled_md5_block(2)


@inner
def _md5_words(src, p, w):
    for j in range(16):
        q = p + 4 * j
        w[j] = (np.uint64(src[q]) | (np.uint64(src[q + 1]) << np.uint64(8)) | (np.uint64(src[q + 2]) << np.uint64(16))
                | (np.uint64(src[q + 3]) << np.uint64(24)))


@inner
def _tail_words(data, p, rem, n, last, first, w):
    """The words of a padding block: ``rem`` message bytes from ``p`` (``first``: the 0x80 marker goes
    here), then zeros, then (``last``) the message length in bits."""
    for j in range(16):
        w[j] = np.uint64(0)
    for t in range(rem):
        w[t >> 2] |= np.uint64(data[p + t]) << np.uint64(8 * (t & 3))
    if first:
        w[rem >> 2] |= np.uint64(0x80) << np.uint64(8 * (rem & 3))
    if last:
        bits = np.uint64(n) * np.uint64(8)
        w[14] = bits & np.uint64(0xFFFFFFFF)
        w[15] = bits >> np.uint64(32)


@inner
def md5_into(data, p, n, dig, w, st):
    """``dig[:16]`` = MD5 of ``data[p:p+n]``; ``w`` (16 uint64) and ``st`` (4 uint64) are the caller's scratch."""
    _md5_start(st)
    full = n // 64
    for blk in range(full):
        _md5_words(data, p + 64 * blk, w)
        _md5_block(w, st)
    rem = n - 64 * full
    tail = p + 64 * full
    if rem < 56:
        _tail_words(data, tail, rem, n, True, True, w)
        _md5_block(w, st)
    else:
        _tail_words(data, tail, rem, n, False, True, w)
        _md5_block(w, st)
        _tail_words(data, tail, 0, n, True, False, w)
        _md5_block(w, st)
    _md5_out(st, dig)


@inner
def _md5_start(st):
    st[0], st[1], st[2], st[3] = np.uint64(0x67452301), np.uint64(0xefcdab89), np.uint64(0x98badcfe), \
        np.uint64(0x10325476)


@inner
def _md5_out(st, dig):
    for k in range(4):
        for j in range(4):
            dig[4 * k + j] = np.uint8((st[k] >> np.uint64(8 * j)) & np.uint64(0xFF))


#: the longest message MD5 pads within one block (8 bytes of length and the 0x80 marker after it)
ONE_BLOCK_MAX = 55


@inner
def md5_pair_into(data, p, n, dig, p2, n2, dig2, w, st, w2, st2):
    """:func:`md5_into` of two messages; two of at most :data:`ONE_BLOCK_MAX` bytes (most keys) are hashed
    side by side (``_md5_block2``)."""
    if n > ONE_BLOCK_MAX or n2 > ONE_BLOCK_MAX:
        md5_into(data, p, n, dig, w, st)
        md5_into(data, p2, n2, dig2, w, st)
        return
    _md5_start(st)
    _md5_start(st2)
    _tail_words(data, p, n, n, True, True, w)
    _tail_words(data, p2, n2, n2, True, True, w2)
    _md5_block2(w, st, w2, st2)
    _md5_out(st, dig)
    _md5_out(st2, dig2)


@kernel
def md5_spans(data, pos, lengths, out):
    """``out[i]`` = MD5 of ``data[pos[i]:pos[i]+lengths[i]]`` (``SkimpyOffsetMap.hashInto``); a negative
    length (a null key) is skipped."""
    w = np.empty(16, np.uint64)
    st = np.empty(4, np.uint64)
    for i in range(pos.shape[0]):
        if lengths[i] >= 0:
            md5_into(data, pos[i], lengths[i], out[i], w, st)


# --------------------------------------------------------------------------------------------- the table
@inner
def _slot(dig, attempt, slots):
    """``SkimpyOffsetMap.positionOf`` as a slot number."""
    at = min(attempt, _LAST_PROBE_BYTE)
    v = (np.int64(dig[at]) << 24) | (np.int64(dig[at + 1]) << 16) | (np.int64(dig[at + 2]) << 8) | np.int64(dig[at + 3])
    v += max(0, attempt - _LAST_PROBE_BYTE)
    v = ((v - INT32_MIN) & np.int64(0xFFFFFFFF)) + INT32_MIN  # Java int arithmetic
    v = 0 if v == INT32_MIN else abs(v)  # Utils.abs
    return v % slots


@inner
def _empty(hashes, offs, s):
    if offs[s] != 0:
        return False
    for j in range(DIGEST_SIZE):
        if hashes[s, j] != 0:
            return False
    return True


@inner
def _same(hashes, s, dig):
    for j in range(DIGEST_SIZE):
        if hashes[s, j] != dig[j]:
            return False
    return True


@inner
def table_put(hashes, offs, state, dig, offset):
    """``SkimpyOffsetMap.put`` of a digest (the caller keeps a free slot): the slot it is in."""
    slots = offs.shape[0]
    attempt = 0
    while True:
        s = _slot(dig, attempt, slots)
        if _empty(hashes, offs, s):
            for j in range(DIGEST_SIZE):
                hashes[s, j] = dig[j]
            offs[s] = offset
            state[USED + state[ENTRIES]] = s
            state[ENTRIES] += 1
            state[LATEST] = offset
            return s
        if _same(hashes, s, dig):
            offs[s] = offset
            state[LATEST] = offset
            return s
        attempt += 1


@inner
def table_get(hashes, offs, dig):
    """``SkimpyOffsetMap.get`` of a digest: its offset, or -1."""
    slots = offs.shape[0]
    limit = slots + _LAST_PROBE_BYTE
    attempt = 0
    while attempt < limit:
        s = _slot(dig, attempt, slots)
        if _empty(hashes, offs, s):
            return np.int64(-1)
        if _same(hashes, s, dig):
            return offs[s]
        attempt += 1
    return np.int64(-1)


@kernel
def table_put_many(hashes, offs, state, digs, offsets):
    """:func:`table_put` of each row of ``digs`` with its offset, in order."""
    for i in range(digs.shape[0]):
        table_put(hashes, offs, state, digs[i], offsets[i])


@kernel
def table_get_many(hashes, offs, digs, present, out):
    """``out[i]`` = :func:`table_get` of ``digs[i]`` where ``present[i]``, else -1."""
    for i in range(digs.shape[0]):
        out[i] = table_get(hashes, offs, digs[i]) if present[i] else np.int64(-1)


def new_table(slots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An empty table of ``slots`` slots: (digests, offsets, state).  ``np.zeros`` asks the system for
    zeroed pages, so only the slots touched take memory (and the record of them, in ``state``)."""
    state = np.zeros(USED + slots, np.int64)
    state[LATEST] = -1
    return np.zeros((slots, DIGEST_SIZE), np.uint8), np.zeros(slots, np.int64), state


@kernel
def clear_table(hashes, offs, state):
    """``SkimpyOffsetMap.clear``: every slot empty again (only the slots taken are written), no entries,
    no latest offset."""
    for k in range(state[ENTRIES]):
        s = state[USED + k]
        offs[s] = 0
        for j in range(DIGEST_SIZE):
            hashes[s, j] = 0
    state[ENTRIES], state[LATEST] = 0, -1
