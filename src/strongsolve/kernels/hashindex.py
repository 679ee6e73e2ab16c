"""Hash index of a value layer: the value of a key in one probe.

The backward pass of a layered game looks up, for every candidate move of every chance outcome, the
value of its successor in the next layers. A sorted layer answers that by a search per key, or by
sorting the keys first and merging; an open-addressing hash table answers it with one random access
(on 4x3 2048 at age 110, 21 ns per candidate against about 39 for numbering, sorting and
merging a chunk's candidates).

Layout (defined here only): ``index`` is uint64[S, 2], S = N + N // 2 + 1 slots for N keys (at most
two thirds full); row ``h`` holds a key (0 marks a free slot) and the bits of its float64 value. A
key's home slot is ``(((key * golden) >> 32) * S) >> 32`` (Fibonacci hashing, Knuth 6.4, then a
multiply to range [0, S)); collisions go to the next slots, wrapping (linear probing). A key and its
value share a cache line, so a probe costs one memory access. Memory: 24 bytes per key.

A batch of look-ups is faster still when each probe's cache line is requested some keys ahead
(:func:`lookup_into`): the memory accesses of a table larger than the caches then overlap (
21.5 against 13.1 ns per key, 4x3 age 110). The home slot needs S < 2^32 (2.8e9 keys; the largest
4x3 layer holds about 1.9e8).
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..parallel import chunk_bounds, default_workers, map_chunks
from .options import njit

PARALLEL_BUILD_MIN = 1 << 18  # keys: below this one thread builds the index (a few ms)
PREFETCH_DISTANCE = 32  # keys: 8, 16, 32 ahead gave 17.1, 14.5, 13.1 ns per key

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio
_U32 = np.uint64(32)


@njit(inline='always')
def _home(x, size):
    return (((x * _GOLDEN) >> _U32) * size) >> _U32


@njit(inline='always')
def _probe(index, x, h):
    """Slot (int) of key ``x`` in ``index``, searched from its home slot ``h``; -1 if absent."""
    size = np.uint64(index.shape[0])
    while True:
        y = index[h, 0]
        if y == x:
            return np.int64(h)
        if y == 0:
            return np.int64(-1)
        h += np.uint64(1)
        if h == size:
            h = np.uint64(0)


@intrinsic
def _prefetch_row(typingctx, index, row):
    """LLVM's prefetch hint (read, keep in all cache levels) for ``index[row, 0]``; numba has no
    prefetch of its own. It changes no result: a hint the CPU may drop."""
    def codegen(context, builder, signature, args):
        index_type = signature.args[0]
        array = context.make_array(index_type)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        pointer = cgutils.get_item_pointer(context, builder, index_type, array, [args[1], zero])
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(hint, [builder.bitcast(pointer, byte_pointer), ir.Constant(i32, 0),
                            ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(index, row), codegen


@njit
def _build(keys, value_bits, index):
    size = np.uint64(index.shape[0])
    n = keys.shape[0]
    for i in range(min(PREFETCH_DISTANCE, n)):
        _prefetch_row(index, _home(keys[i], size))
    for i in range(n):
        if i + PREFETCH_DISTANCE < n:
            _prefetch_row(index, _home(keys[i + PREFETCH_DISTANCE], size))
        x = keys[i]
        h = _home(x, size)
        while index[h, 0] != 0:
            h += np.uint64(1)
            if h == size:
                h = np.uint64(0)
        index[h, 0] = x
        index[h, 1] = value_bits[i]


@njit
def _build_range(keys, value_bits, index, lo, hi, ahead):
    """Insert the keys whose home slot is in ``[lo, hi)``, probing within that range only; returns
    the positions (int64[K]) of those whose probe found the range full up to ``hi - 1``, for
    :func:`_build` to insert afterwards. Writes no slot outside the range, so ranges that do not
    overlap are built on several threads at once."""
    size = np.uint64(index.shape[0])
    lo = np.uint64(lo)
    hi = np.uint64(hi)
    n = keys.shape[0]
    deferred = np.empty(16, np.int64)
    k = 0
    for i in range(min(ahead, n)):
        h = _home(keys[i], size)
        if lo <= h < hi:
            _prefetch_row(index, h)
    for i in range(n):
        if i + ahead < n:
            h = _home(keys[i + ahead], size)
            if lo <= h < hi:
                _prefetch_row(index, h)
        x = keys[i]
        h = _home(x, size)
        if h < lo or h >= hi:
            continue
        while h < hi and index[h, 0] != 0:
            h += np.uint64(1)
        if h == hi:
            if k == deferred.shape[0]:
                deferred = np.concatenate((deferred, np.empty(k, np.int64)))
            deferred[k] = i
            k += 1
            continue
        index[h, 0] = x
        index[h, 1] = value_bits[i]
    return deferred[:k].copy()


def _build_task(k, bounds, keys, value_bits, index):
    # about PREFETCH_DISTANCE keys of the range ahead: one key in len(bounds) falls in it
    return _build_range(keys, value_bits, index, *bounds[k], PREFETCH_DISTANCE * len(bounds))


def hash_index(keys, values):
    """Hash index (module docstring) of a layer: ``keys`` with their ``values``.

    With two threads or more (``parallel.default_workers()``) and at least ``PARALLEL_BUILD_MIN``
    keys, each thread fills the slots of its own range of home slots and the few keys whose probe
    runs past their range's end are inserted afterwards (one thread built the backward's
    indexes, half of its main thread's busy time at 4x3 ages 572-574). A key may land in another
    slot than in a one-thread build; every look-up gives the same value.

    Parameters
    ----------
    keys : uint64[N]
        Distinct, nonzero (a layer's board IDs: a board of age >= 2 has a tile).
    values : float64[N]
        ``values[i]`` belongs to ``keys[i]``.

    Returns
    -------
    uint64[N + N // 2 + 1, 2]
        Look values up with :func:`lookup` or :func:`lookup_into`.

    Raises
    ------
    TypeError
        If ``keys`` is not uint64 or ``values`` not float64.
    ValueError
        If their lengths differ, a key is 0 (the free-slot mark), or there are 2^32 / 1.5 keys or
        more (the home slot's range).
    """
    if keys.dtype != np.uint64 or values.dtype != np.float64:
        raise TypeError(f"hash_index needs uint64 keys and float64 values, got {keys.dtype} and "
                        f"{values.dtype}")
    if keys.shape != values.shape or keys.ndim != 1:
        raise ValueError(f"hash_index needs one value per key: {keys.shape} keys, {values.shape} "
                         "values")
    if keys.size and not keys.all():
        raise ValueError("hash_index: key 0 is not allowed (it marks a free slot)")
    size = keys.size + keys.size // 2 + 1
    if size >= 2**32:
        raise ValueError(f"hash_index: {keys.size} keys is too many for one index; allowed: fewer "
                         f"than {(2**32 - 1) * 2 // 3} (split the layer)")
    index = np.zeros((size, 2), np.uint64)
    keys = np.ascontiguousarray(keys)
    value_bits = np.ascontiguousarray(values).view(np.uint64)
    workers = default_workers()
    if workers < 2 or keys.size < PARALLEL_BUILD_MIN:
        _build(keys, value_bits, index)
        return index
    # each thread fills the slots of its own range of home slots; the few keys whose probe runs
    # past their range's end are inserted after, one thread probing on into the next range
    bounds = chunk_bounds(size, -(-size // workers))
    deferred = np.concatenate(map_chunks(_build_task, list(range(len(bounds))), bounds, keys,
                                         value_bits, index))
    _build(keys[deferred], value_bits[deferred], index)
    return index


def lookup(index, keys):
    """The values of ``keys`` in a hash index.

    Parameters
    ----------
    index : uint64[S, 2]
        From :func:`hash_index`.
    keys : uint64[N]

    Returns
    -------
    values : float64[N]
        NaN for a key the index does not hold (key 0 included).
    missing : int
        The number of such keys.

    Raises
    ------
    TypeError
        If ``index`` is not a hash index or ``keys`` not a uint64 vector.
    """
    if not (isinstance(index, np.ndarray) and index.dtype == np.uint64 and index.ndim == 2
            and index.shape[1] == 2 and index.shape[0] >= 1):
        raise TypeError("lookup needs a hash index (uint64[S, 2] from hash_index), got "
                        f"{getattr(index, 'dtype', type(index))} of shape "
                        f"{getattr(index, 'shape', None)}")
    if not isinstance(keys, np.ndarray) or keys.dtype != np.uint64 or keys.ndim != 1:
        raise TypeError("lookup needs a uint64 vector of keys, got "
                        f"{getattr(keys, 'dtype', type(keys))}")
    values = np.full(keys.size, np.nan)
    stored = np.flatnonzero(keys)  # 0 marks a free slot: never a key
    missing = keys.size - stored.size + lookup_into(np.ascontiguousarray(index), keys[stored],
                                                    stored, values)
    return values, int(missing)


@njit
def lookup_into(index, keys, positions, out):
    """``out[positions[i]]`` = the value of ``keys[i]`` in ``index``, left as it was for a key that
    is absent. Returns the number of absent keys. For kernels: nothing is checked (``index`` from
    :func:`hash_index`; ``keys`` uint64[N], nonzero; ``positions`` int64[N] within ``out``,
    float64; use :func:`lookup` otherwise).

    Each key's home slot is computed once, when its cache line is requested
    :data:`PREFETCH_DISTANCE` keys ahead, and kept in a ring until its probe."""
    bits = out.view(np.uint64)
    size = np.uint64(index.shape[0])
    n = keys.shape[0]
    ring = np.empty(PREFETCH_DISTANCE, np.uint64)
    for i in range(min(PREFETCH_DISTANCE, n)):
        ring[i] = _home(keys[i], size)
        _prefetch_row(index, ring[i])
    missing = 0
    for i in range(n):
        place = i % PREFETCH_DISTANCE
        h = _probe(index, keys[i], ring[place])
        if i + PREFETCH_DISTANCE < n:
            ring[place] = _home(keys[i + PREFETCH_DISTANCE], size)
            _prefetch_row(index, ring[place])
            # and the next line, where a key pushed along by collisions may sit
            _prefetch_row(index, min(ring[place] + np.uint64(2), size - np.uint64(1)))
        if h < 0:
            missing += 1
        else:
            bits[positions[i]] = index[h, 1]
    return missing
