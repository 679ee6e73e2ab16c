"""numba options, in one place.

``fastmath`` stays off: it lets LLVM reorder floating-point sums, which breaks the bit-for-bit
reproducibility of values across machines, core counts and chunk sizes (issue 4, "Determinism").
``cache=True`` keeps compiled kernels on disk so Snakemake jobs (one process each) pay the JIT once.
"""

import numba

JIT = dict(nogil=True, cache=True, fastmath=False, boundscheck=False)
JIT_PARALLEL = dict(JIT, parallel=True)


def njit(fn=None, **overrides):
    """``numba.njit`` with the project's options (``overrides`` win)."""
    opts = dict(JIT, **overrides)
    if fn is None:
        return numba.njit(**opts)
    return numba.njit(**opts)(fn)


def njit_parallel(fn=None, **overrides):
    """``numba.njit(parallel=True)`` with the project's options."""
    return njit(fn, **dict(JIT_PARALLEL, **overrides))
