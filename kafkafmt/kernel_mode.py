"""Whether this process runs kafkafmt's kernels compiled (numba, cached on disk) or interpreted.

The kernels (:mod:`kafkafmt.records.fast`, the cleaner's :mod:`kafkafmt.log.cleaner.kernels`) are plain
Python functions that :mod:`kafkafmt.records.fast.jit` hands to numba.  Compiled, they are fast, but a
process pays for numba itself (about 0.3 s and 100 MiB to load it and the cached machine code) and, the
first time in an environment whose cache is empty (a fresh ``pip install`` without ``kafkafmt warmup``),
for compiling them: a minute or more of CPU.  Interpreted, the same functions run as written (numba's
``NUMBA_DISABLE_JIT`` semantics: every kernel, inner function and inlined helper is the Python function),
with no numba import and no compile, and take about 0.2 ms per record in the cleaner.

So the command line chooses per process, before any kernel is imported: inputs below a command's
threshold are handled interpreted (``kafkafmt clean`` of a 1,000-record partition: about 1 s instead of
the first compile), larger ones compiled.  The library's default is compiled; ``KAFKAFMT_KERNELS`` set to
``interpreted`` or ``compiled`` forces one for a process (the tests run the kernels interpreted with it).
The choice cannot change once the kernels are imported (numba has made its dispatchers by then).
"""
from __future__ import annotations

import os
import sys

__all__ = ["interpreted", "use_interpreted", "forced", "as_python", "njit"]

#: the module whose import fixes the choice (it decorates every kernel)
_JIT_MODULE = "kafkafmt.records.fast.jit"
_ENV = "KAFKAFMT_KERNELS"
_interpreted: bool | None = None


def forced() -> str | None:
    """``interpreted`` or ``compiled`` when ``KAFKAFMT_KERNELS`` forces the mode, else None."""
    value = os.environ.get(_ENV, "").strip().lower()
    if value in ("interpreted", "compiled"):
        return value
    return None


def interpreted() -> bool:
    """Whether the kernels of this process run interpreted (read once, when they are decorated)."""
    if forced() is not None:
        return forced() == "interpreted"
    return bool(_interpreted)


def use_interpreted(yes: bool = True) -> bool:
    """Ask for interpreted (or compiled) kernels in this process; True when that is what it will have
    (False when the kernels were already imported the other way, or ``KAFKAFMT_KERNELS`` says otherwise)."""
    global _interpreted
    if _JIT_MODULE not in sys.modules:
        _interpreted = yes
    return interpreted() == yes


def as_python(fn):
    """``fn`` run by the interpreter as numba runs it compiled: a Python ``int`` argument is an ``int64`` (as
    numba types it, so that arithmetic on it wraps and converts as in the compiled code), and integer
    arithmetic wraps without a word (numpy warns of an overflow in a scalar operation; the kernels rely on
    the wrap, as the compiled code does)."""
    import functools

    import numpy as np

    @functools.wraps(fn)
    def run(*args):
        args = tuple(np.int64(a) if type(a) is int else a for a in args)
        with np.errstate(over="ignore"):
            return fn(*args)
    run.py_func = fn
    return run


def njit(**options):
    """``numba.njit(**options)`` when this process's kernels run compiled; when they run interpreted, the
    function as :func:`as_python` runs it, and numba is never imported.  For the kernels below the records
    floor (the codecs' block compressors, :mod:`kafkafmt.compression.lz4_block` and ``snappy_block``), which
    cannot use :mod:`kafkafmt.records.fast.jit`'s decorators; the mode is read when a kernel is decorated."""
    def decorate(fn):
        if interpreted():
            return as_python(fn)
        from numba import njit as numba_njit
        return numba_njit(**options)(fn)
    return decorate
