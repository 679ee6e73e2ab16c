"""Sort-unique of uint64 ID runs (the layers of the forward pass).

An LSD radix sort with 8-bit digits (issue 8: "radix sort for uint64 runs"): one pass builds the
histograms of every digit, then one stable scatter pass per digit that is not constant across the
run (board IDs use 4 bits per cell, so a 3x3 board's IDs never touch the top 28 bits and those
passes are skipped). 256 buckets keep the histograms and the scatter's write streams in L1. Measured
on this project's machine: 18-22 ns per ID on runs of 6e4 to 1e6 IDs, 50 on 2.2e7 IDs, against 40,
53 and 148 for ``numpy.sort``. Tiny runs go to ``numpy.sort``, whose constant cost is lower.

:func:`sort_unique_parallel` splits a large run by its top varying bits into 256 buckets of
disjoint value ranges (one serial scatter pass) and sorts the buckets on the stage's threads
(``parallel.map_chunks``): the union of a forward layer's chunks was one serial radix sort, the
largest serial part of the forward stage (issue 20: 2 threads gave 1.39x).
"""

import numpy as np

from ..parallel import default_workers, map_chunks
from .options import njit

DIGIT_BITS = 8
RADIX_MIN = 512  # below this many IDs numpy.sort is faster than the histogram set-up


@njit
def _radix(keys, positions):
    """LSD radix sort of ``keys`` (uint64[N], 8-bit digits, constant digits skipped), carrying
    ``positions`` (int64[N]) along when it is not empty. Returns the sorted copies of both."""
    n = keys.shape[0]
    carry = positions.shape[0] > 0
    mask = np.uint64(255)
    all_or = np.uint64(0)
    all_and = ~np.uint64(0)
    counts = np.zeros((8, 256), np.int64)
    for i in range(n):
        x = keys[i]
        all_or |= x
        all_and &= x
        for p in range(8):
            counts[p, (x >> np.uint64(8 * p)) & mask] += 1
    varying = all_or ^ all_and
    src_key = keys.copy()
    dst_key = np.empty_like(src_key)
    src_pos = positions.copy()
    dst_pos = np.empty_like(src_pos)
    pos = np.empty(256, np.int64)
    for p in range(8):
        shift = np.uint64(8 * p)
        if ((varying >> shift) & mask) == 0:
            continue
        s = 0
        for b in range(256):
            pos[b] = s
            s += counts[p, b]
        for i in range(n):
            x = src_key[i]
            b = (x >> shift) & mask
            dst_key[pos[b]] = x
            if carry:
                dst_pos[pos[b]] = src_pos[i]
            pos[b] += 1
        src_key, dst_key = dst_key, src_key
        src_pos, dst_pos = dst_pos, src_pos
    return src_key, src_pos


@njit
def radix_argsort(keys):
    """Stable sorting permutation (int64[N]) of ``keys`` (uint64[N]): ``keys[perm]`` is sorted.

    The radix sort of :func:`sort_unique`, carrying the positions. Callable from other kernels (the
    look-ups of a queried state's successors are sorted with it, g2048.expand._resolve).
    """
    return _radix(keys, np.arange(keys.shape[0]))[1]


@njit
def _drop_repeats(a):
    """Compact a sorted array in place to its distinct values; returns their count."""
    n = a.shape[0]
    if n == 0:
        return 0
    m = 1
    for i in range(1, n):
        if a[i] != a[m - 1]:
            a[m] = a[i]
            m += 1
    return m


def require_uint64(ids, user):
    """Raise TypeError naming ``user`` unless ``ids`` is a uint64 array (the board-ID dtype)."""
    if ids.dtype != np.uint64:
        raise TypeError(f"{user} needs uint64 IDs, got {ids.dtype}")


def sort_unique(ids, compact=True):
    """Sorted unique copy of a uint64 array.

    Radix sort (module docstring) followed by a numba pass dropping repeats; several times faster
    than ``numpy.unique``, which sorts with a comparison sort.

    Parameters
    ----------
    ids : uint64[N]
    compact : bool
        False: return a view of the sort's buffer (sized N), for a result written out and dropped
        at once (a spilled run), which saves a copy.

    Returns
    -------
    uint64[M], M <= N, strictly increasing

    Raises
    ------
    TypeError
        If ``ids`` is not uint64.
    """
    require_uint64(ids, "sort_unique")
    a = (_radix(np.ascontiguousarray(ids), np.empty(0, np.int64))[0] if ids.shape[0] >= RADIX_MIN
         else np.sort(ids))
    a = a[:_drop_repeats(a)]
    return a.copy() if compact else a


PARALLEL_SORT_MIN = 1 << 20  # below this many IDs (about 50 ms of sorting) one thread sorts
BUCKET_BITS = 8


@njit
def _bucket_scatter(ids):
    """``ids`` (uint64[N]) reordered into 256 buckets by the 8 bits below and including the highest
    bit that varies across them (lower buckets hold smaller values), and the buckets' bounds
    (int64[257]). Stable within a bucket."""
    n = ids.shape[0]
    all_or = np.uint64(0)
    all_and = ~np.uint64(0)
    for i in range(n):
        all_or |= ids[i]
        all_and &= ids[i]
    varying = all_or ^ all_and
    top = 0
    while top < 63 and (varying >> np.uint64(top + 1)) != 0:
        top += 1
    shift = np.uint64(max(0, top - (BUCKET_BITS - 1)))
    mask = np.uint64((1 << BUCKET_BITS) - 1)
    start = np.zeros((1 << BUCKET_BITS) + 1, np.int64)
    for i in range(n):
        start[((ids[i] >> shift) & mask) + 1] += 1
    for b in range(1 << BUCKET_BITS):
        start[b + 1] += start[b]
    pos = start[:-1].copy()
    out = np.empty(n, np.uint64)
    for i in range(n):
        b = (ids[i] >> shift) & mask
        out[pos[b]] = ids[i]
        pos[b] += 1
    return out, start


def sort_unique_parallel(ids):
    """:func:`sort_unique` on the stage's threads (``parallel.default_workers()``:
    ``STRONGSOLVE_THREADS`` or the usable CPUs): the IDs scattered into 256 buckets of disjoint
    value ranges, each bucket sorted and freed of repeats on its own, the buckets concatenated.
    The same array as :func:`sort_unique`; one thread or fewer than ``PARALLEL_SORT_MIN`` IDs
    sort as it does.

    Parameters
    ----------
    ids : uint64[N]

    Returns
    -------
    uint64[M], M <= N, strictly increasing

    Raises
    ------
    TypeError
        If ``ids`` is not uint64.
    """
    require_uint64(ids, "sort_unique_parallel")
    if default_workers() < 2 or ids.shape[0] < PARALLEL_SORT_MIN:
        return sort_unique(ids)
    out, start = _bucket_scatter(np.ascontiguousarray(ids))
    parts = [out[start[b]:start[b + 1]] for b in range(start.shape[0] - 1) if start[b + 1] > start[b]]
    # held at most: the input, the scattered copy, the sorted buckets so far and each bucket being
    # sorted three times over (one bucket of nearly all IDs: about 5 N); the scattered copy goes
    # before the result is made
    runs = map_chunks(sort_unique, parts)
    del out, parts
    return np.concatenate(runs)


@njit
def _merge_two(a, b):
    """Sorted unique union of two strictly increasing uint64 arrays (a branch-free merge: both
    sides advance on a tie)."""
    na = a.shape[0]
    nb = b.shape[0]
    out = np.empty(na + nb, np.uint64)
    i = j = m = 0
    while i < na and j < nb:
        x = a[i]
        y = b[j]
        out[m] = min(x, y)
        m += 1
        i += x <= y
        j += y <= x
    while i < na:
        out[m] = a[i]
        m += 1
        i += 1
    while j < nb:
        out[m] = b[j]
        m += 1
        j += 1
    return out[:m]


def merge_unique(runs):
    """Sorted unique union of sorted unique runs, merged in pairs (log2(len(runs)) passes).

    The k-way merge of :class:`strongsolve.kernels.external.SortedRuns` (issue 8): on this
    project's machine 5-10 ns per ID for 4 to 32 runs of 6e4 to 5e5 IDs, against 22-35 ns for
    sorting their concatenation again.

    Parameters
    ----------
    runs : list of uint64[N_k], each strictly increasing

    Returns
    -------
    uint64[M], strictly increasing (a new array)

    Raises
    ------
    TypeError
        If a run is not uint64.
    """
    runs = list(runs)
    for run in runs:
        require_uint64(run, "merge_unique")
    if not runs:
        return np.empty(0, np.uint64)
    if len(runs) == 1:
        return runs[0].copy()
    while len(runs) > 1:
        merged = [_merge_two(runs[k], runs[k + 1]) for k in range(0, len(runs) - 1, 2)]
        runs = merged + runs[len(merged) * 2:]
    return runs[0]


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio: Fibonacci hashing (Knuth 6.4)


@njit
def distinct(ids):
    """The distinct values of ``ids`` (uint64[N], any order) in order of first occurrence.

    An open-addressing hash set (linear probing, at most half full) sized to the input. On 4x3 the
    moves of a forward chunk of 65536 states give 3.57 IDs per state of which 1.53 are distinct
    (1.93 in a chunk of 16384); dropping the repeats this way (about 6 ns per ID, the table in
    L2 or L3) is cheaper than sorting them (issue 8).

    Returns
    -------
    uint64[M], M <= N
    """
    return _hash_distinct(ids, False)[0].copy()  # compact: SortedRuns counts what it holds by nbytes


@njit
def distinct_index(ids):
    """:func:`distinct` and where each ID went: ``(values, index)`` with ``values`` (uint64[M]) the
    distinct values in order of first occurrence and ``index`` (int64[N]) such that
    ``values[index] == ids``.

    The successors of queried states are numbered this way, then only the distinct ones sorted for
    their look-ups (g2048.expand._resolve)."""
    return _hash_distinct(ids, True)


@njit
def _hash_distinct(ids, with_index):
    n = ids.shape[0]
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    table = np.zeros(1 << bits, np.uint64)  # 0 marks a free slot; the value 0 is tracked apart
    number = np.empty((1 << bits) if with_index else 0, np.int64)  # distinct number of a slot
    index = np.empty(n if with_index else 0, np.int64)
    mask = np.uint64((1 << bits) - 1)
    shift = np.uint64(64 - bits)
    out = np.empty(n, np.uint64)
    m = 0
    zero_at = -1
    for i in range(n):
        x = ids[i]
        if x == 0:
            if zero_at < 0:
                zero_at = m
                out[m] = x
                m += 1
            if with_index:
                index[i] = zero_at
            continue
        h = (x * _GOLDEN) >> shift
        while True:
            y = table[h]
            if y == x:
                break
            if y == 0:
                table[h] = x
                if with_index:
                    number[h] = m
                out[m] = x
                m += 1
                break
            h = (h + np.uint64(1)) & mask
        if with_index:
            index[i] = number[h]
    return out[:m], index
