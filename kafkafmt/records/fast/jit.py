"""How the kernels are compiled: numba's options in one place, and the on-disk cache.

Two kinds of compiled function (measured on a first ``records_table``, see README "First use"):

* :func:`kernel`: called from Python.  ``cache=True``: the machine code is written once to numba's
  cache (``$NUMBA_CACHE_DIR`` when set, else ``__pycache__`` beside the module, else the user's cache
  directory ``~/.cache/numba``) and later processes load it instead of compiling (about 0.4 s for
  every kernel against 3 to 4 s).  It is compiled lazily, for the one signature its callers pass (``np.uint8`` data, int64
  positions), so a first call compiles only what that call needs.
* :func:`inner`: called only from other kernels.  Compiled without the CPython and C wrappers that
  only a call from Python needs, and not cached on its own (its code lives on inside each caller's
  cached code): about 15 % less compile work on a cold cache than a second ``cache=True`` kernel.
* :func:`inline`: as :func:`inner`, but inlined by numba itself into every caller (hot inner loops).

In a process that runs them interpreted (:mod:`kafkafmt.kernel_mode`: small inputs on the command line),
the three decorators return the Python function itself and numba is not imported.

When no cache directory is writable (a read-only ``site-packages`` and a read-only home), numba
refuses ``cache=True`` at import; the kernels are then compiled in each process and a warning says
how to give them a cache (``NUMBA_CACHE_DIR``).
"""
from __future__ import annotations

import warnings

from ...kernel_mode import as_python, interpreted

#: the kernels of this process are the Python functions, run by the interpreter (no numba)
INTERPRETED = interpreted()
if not INTERPRETED:
    from numba import njit

#: every :func:`kernel`, by name (``kafkafmt warmup`` compiles them and reports which were loaded)
KERNELS: dict[str, object] = {}
_uncached: list[str] = []


def kernel(fn):
    """A compiled function callable from Python, cached on disk when a cache directory is writable."""
    if INTERPRETED:
        KERNELS[fn.__name__] = run = as_python(fn)
        return run
    try:
        compiled = njit(cache=True, nogil=True)(fn)
    except RuntimeError as e:  # numba's CacheImpl: "cannot cache function ...: no locator available"
        if "no locator available" not in str(e):
            raise
        if not _uncached:
            warnings.warn(f"kafkafmt: no writable numba cache directory for {fn.__code__.co_filename}; the "
                          "compiled decoder is compiled again in every process (seconds). Set NUMBA_CACHE_DIR "
                          "to a writable directory to keep it.", RuntimeWarning, stacklevel=2)
        _uncached.append(fn.__name__)
        compiled = njit(nogil=True)(fn)
    KERNELS[fn.__name__] = compiled
    return compiled


def inner(fn):
    """A compiled helper called only from other kernels (no Python wrapper, no cache of its own)."""
    if INTERPRETED:
        fn.py_func = fn
        return fn
    return njit(nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)(fn)


def inline(fn):
    """A small helper inlined into each kernel that calls it, in numba's own IR (``inline="always"``): for
    the CRC-32's inner loop, where a call per 8 bytes or LLVM's own choice not to inline measured 1.2-1.7x slower."""
    if INTERPRETED:
        fn.py_func = fn
        return fn
    return njit(nogil=True, inline="always")(fn)


def cache_dirs() -> list[str]:
    """The directories the kernels' caches live in (empty when none is writable)."""
    return sorted({k._cache._cache_path for k in KERNELS.values()
                   if getattr(getattr(k, "_cache", None), "_cache_path", None)})


def cache_stats() -> tuple[int, int]:
    """How many kernel signatures this process compiled and how many it loaded from the cache."""
    compiled = [k for k in KERNELS.values() if hasattr(k, "stats")]
    return sum(sum(k.stats.cache_misses.values()) for k in compiled), sum(sum(k.stats.cache_hits.values()) for k in compiled)


def uncached(names=None) -> list[str]:
    """The kernels (all, or those of ``names``) with no machine code in the on-disk cache: a call compiles
    them (numba's index file for the function is missing).  Empty when interpreted."""
    import os
    missing = []
    for name, k in KERNELS.items():
        if names is not None and name not in names:
            continue
        index = getattr(getattr(getattr(k, "_cache", None), "_cache_file", None), "_index_path", None)
        if index is not None and not os.path.exists(index):
            missing.append(name)
    return missing
