"""numba options, in one place.

``fastmath`` stays off: it lets LLVM reorder floating-point sums, which breaks the bit-for-bit
reproducibility of values across machines, core counts and chunk sizes ("Determinism").
``cache=True`` keeps compiled kernels on disk so Snakemake jobs (one process each) pay the JIT once.

numba names a function's cache files after its module, qualified name and first line, and keys the
entries in them by signature and bytecode, not by the compile options (numba issue #6845). A serial
and a parallel kernel made from one Python function (``njit(f)`` and ``njit_parallel(f)``: the CFR
regret matching, the compact-ID coders) shared one entry, and whichever compiled second loaded the
first one's machine code. On this project's machine (2026-12-03) the parallel compact-ID coders and
the forest CFR's parallel best response had loaded serial code (their 2-thread runs were serial
there), and the tabular CFR's serial regret matching had loaded the parallel code: the Truco row-11
job of scores 11-10 and 10-11 crashed with a segmentation fault in it, and ran with a fresh cache. So
every kernel is compiled from a copy of its function whose qualified name ends in its variant
(``__serial`` or ``__parallel``): each variant has cache files of its own
(tests/kernels/test_options.py).
"""

import types

import numba

JIT = dict(nogil=True, cache=True, fastmath=False, boundscheck=False)
JIT_PARALLEL = dict(JIT, parallel=True)


def _cache_named(fn, opts):
    """A copy of ``fn`` (same code, globals, defaults, closure) whose ``__qualname__`` ends in
    ``__parallel`` or ``__serial`` as ``opts`` ask, so numba caches it in files of its own (module
    docstring)."""
    variant = "parallel" if opts.get("parallel") else "serial"
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__dict__.update(fn.__dict__)
    copy.__doc__, copy.__module__ = fn.__doc__, fn.__module__
    copy.__qualname__ = f"{fn.__qualname__}__{variant}"
    return copy


def njit(fn=None, **overrides):
    """``numba.njit`` with the project's options (``overrides`` win), compiled from a copy of ``fn``
    named for its variant (module docstring); usable as ``@njit``, ``@njit(...)`` or ``njit(fn)``."""
    opts = dict(JIT, **overrides)

    def compile_(f):
        return numba.njit(**opts)(_cache_named(f, opts))

    return compile_ if fn is None else compile_(fn)


def njit_parallel(fn=None, **overrides):
    """``numba.njit(parallel=True)`` with the project's options."""
    return njit(fn, **dict(JIT_PARALLEL, **overrides))
