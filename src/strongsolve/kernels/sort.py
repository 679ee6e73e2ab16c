"""Sort-unique of uint64 ID runs (the layers of the forward pass).

An LSD radix sort with 8-bit digits ("radix sort for uint64 runs"): one pass builds the
histograms of every digit, then one stable scatter pass per digit that is not constant across the
run (board IDs use 4 bits per cell, so a 3x3 board's IDs never touch the top 28 bits and those
passes are skipped). 256 buckets keep the histograms and the scatter's write streams in L1. Measured
on this project's first machine: 18-22 ns per ID on runs of 6e4 to 1e6 IDs, 50 on 2.2e7 IDs, against
40, 53 and 148 for ``numpy.sort``. Tiny runs go to ``numpy.sort``, whose constant cost is lower.

Where numpy sorts with SIMD (numpy 2's x86-simd-sort quicksort on an AVX-512 host), ``numpy.sort``
wins instead: 5.4, 7.0 and 9.8 ns per 36-bit ID on runs of 6e4, 1e6 and 4e6 IDs against 13.9, 18.5
and 30.2 for the radix sort (2026-12-03). Which of the two runs is measured once per
process (:func:`numpy_sort_is_faster`); both give the same result.

:func:`sort_unique_runs` scatters a list of runs by their top varying bits into 256 buckets of
disjoint value ranges and sorts the buckets, every step on the stage's threads
(``parallel.map_chunks``): the union of a forward layer's chunks was one serial radix sort, the
largest serial part of the forward stage (2 threads gave 1.39x).
"""

import threading
import time
from functools import lru_cache

import numpy as np

from ..parallel import default_workers, map_chunks
from .options import njit

DIGIT_BITS = 8
RADIX_MIN = 512  # below this many IDs numpy.sort is faster than the histogram set-up
SORT_PROBE = 1 << 16  # IDs :func:`numpy_sort_is_faster` sorts both ways (a mid-size 3x3 layer)


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

    The radix sort :func:`sort_unique` uses where numpy's is slower, carrying the positions.
    Callable from other kernels (the look-ups of a queried state's successors are sorted with it,
    g2048.expand._resolve).
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


_PROBE_LOCK = threading.Lock()


def numpy_sort_is_faster():
    """Whether ``numpy.sort`` sorts uint64 IDs faster than :func:`_radix` on this CPU.

    Times both on :data:`SORT_PROBE` random 36-bit IDs (a 3x3 board's ID width), best of three
    each, once per process (a few milliseconds; under a lock, so that threads sorting buckets at
    once neither repeat nor disturb it). numpy's sort is a SIMD quicksort where the CPU and the
    numpy build have one (module docstring), else an introsort the radix sort beats.

    Returns
    -------
    bool
        True: :func:`sort_unique` sorts with ``numpy.sort``; False: with the radix sort.
    """
    with _PROBE_LOCK:
        return _probe_sorts()


@lru_cache(maxsize=None)
def _probe_sorts():
    probe = np.random.default_rng(0).integers(0, 1 << 36, SORT_PROBE, dtype=np.uint64)
    no_positions = np.empty(0, np.int64)

    def best(sort):
        sort()  # a first call loads the radix kernel from numba's cache
        times = []
        for _ in range(3):
            t = time.perf_counter()
            sort()
            times.append(time.perf_counter() - t)
        return min(times)

    return best(lambda: np.sort(probe)) < best(lambda: _radix(probe, no_positions))


def require_uint64(ids, user):
    """Raise TypeError naming ``user`` unless ``ids`` is a uint64 array (the board-ID dtype)."""
    if ids.dtype != np.uint64:
        raise TypeError(f"{user} needs uint64 IDs, got {ids.dtype}")


def sort_unique(ids, compact=True):
    """Sorted unique copy of a uint64 array.

    The faster of the radix sort and ``numpy.sort`` on this CPU (module docstring), followed by a
    numba pass dropping repeats; several times faster than ``numpy.unique``.

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
    if ids.shape[0] < RADIX_MIN or numpy_sort_is_faster():
        a = np.sort(ids)
    else:
        a = _radix(np.ascontiguousarray(ids), np.empty(0, np.int64))[0]
    a = a[:_drop_repeats(a)]
    return a.copy() if compact else a


PARALLEL_SORT_MIN = 1 << 20  # below this many IDs (about 50 ms of sorting) one thread sorts
BUCKET_BITS = 8


@njit
def _or_and(ids):
    """Bitwise OR and AND of every ID of ``ids`` (uint64[N]): their XOR marks the bits that vary."""
    all_or = np.uint64(0)
    all_and = ~np.uint64(0)
    for i in range(ids.shape[0]):
        all_or |= ids[i]
        all_and &= ids[i]
    return all_or, all_and


@njit
def _bucket_counts(ids, shift):
    """IDs of ``ids`` (uint64[N]) per bucket ``(id >> shift) & 255`` (int64[256])."""
    counts = np.zeros(1 << BUCKET_BITS, np.int64)
    mask = np.uint64((1 << BUCKET_BITS) - 1)
    for i in range(ids.shape[0]):
        counts[(ids[i] >> shift) & mask] += 1
    return counts


@njit
def _scatter_into(ids, shift, pos, out):
    """Write each ID of ``ids`` to ``out[pos[bucket]]`` and advance that position (``pos`` int64[256],
    changed in place). Runs given disjoint positions may be scattered on several threads at once."""
    mask = np.uint64((1 << BUCKET_BITS) - 1)
    for i in range(ids.shape[0]):
        b = (ids[i] >> shift) & mask
        out[pos[b]] = ids[i]
        pos[b] += 1


@njit
def _copy_into(src, out, at):
    """``out[at:at + len(src)] = src`` without the GIL (uint64 arrays)."""
    for i in range(src.shape[0]):
        out[at + i] = src[i]


def _task_bounds(sizes, tasks):
    """``[(lo, hi), ...]``: consecutive index ranges of ``sizes`` (the runs' lengths) of about equal
    total size, at most ``tasks`` of them, none empty."""
    ends = np.cumsum(sizes)
    cuts = np.searchsorted(ends, [k * ends[-1] // tasks for k in range(1, tasks)], side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [len(sizes)]]))
    return [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _runs_or_and(k, bounds, runs):
    lo, hi = bounds[k]
    all_or, all_and = 0, (1 << 64) - 1
    for r in range(lo, hi):
        run_or, run_and = _or_and(runs[r])
        all_or, all_and = all_or | int(run_or), all_and & int(run_and)
    return all_or, all_and


def _runs_counts(k, bounds, runs, shift):
    lo, hi = bounds[k]
    return [_bucket_counts(runs[r], shift) for r in range(lo, hi)]


def _runs_scatter(k, bounds, runs, shift, pos, out):
    lo, hi = bounds[k]
    for r in range(lo, hi):
        _scatter_into(runs[r], shift, pos[r].copy(), out)


def _bucket_sort(k, parts, into):
    """Sort bucket ``k`` of ``parts`` and drop its repeats; ``into`` collects the result (the caller
    drops each bucket's scattered IDs as soon as it is sorted)."""
    into[k] = sort_unique(parts[k])
    parts[k] = None
    return into[k].shape[0]


def _copy_buckets(k, bounds, sorted_parts, offsets, out):
    lo, hi = bounds[k]
    for b in range(lo, hi):
        _copy_into(sorted_parts[b], out, offsets[b])
        sorted_parts[b] = None


def sort_unique_runs(runs):
    """The sorted unique union of ``runs`` on the stage's threads, without concatenating them first.

    The IDs are scattered straight from the runs into 256 buckets of disjoint value ranges (by the 8
    bits below and including the highest bit that varies across all of them): each task counts its
    runs' IDs per bucket, then writes them at positions no other task writes. Each bucket is then
    sorted and freed of repeats on its own, and the buckets are copied side by side into the result,
    all on ``parallel.default_workers()`` threads (``STRONGSOLVE_THREADS`` or the usable CPUs).
    Before this kernel, the forward stage concatenated a layer's chunks, scattered them and concatenated the
    sorted buckets on one thread, 11 of its 21 s per 4x3 age near 572 on 2 threads (two copies of
    1e8 IDs into memory first touched by them). One thread takes the same path: concatenating the
    chunks and sorting them in one piece took 71.5-74.3 s and 5.3 GiB for the 4x3 forward of ages
    572-574 against 59.9-65.5 s and 3.7 GiB. Fewer than
    ``PARALLEL_SORT_MIN`` IDs are concatenated and sorted as :func:`sort_unique` does.

    Memory: the runs, then (the list is emptied once they are scattered) the scattered copy and the
    sorted buckets so far, each bucket sorted three times over while it is sorted, then the sorted
    buckets and the result: about three times the IDs at the peak (five when one bucket holds
    nearly every ID).

    Parameters
    ----------
    runs : list of uint64[N_k]
        In any order, repeats allowed; **emptied** by the call (``runs.clear()``), so the memory of
        the runs goes as soon as their IDs are copied.

    Returns
    -------
    uint64[M], M <= sum N_k, strictly increasing (a new array)

    Raises
    ------
    TypeError
        If a run is not uint64.
    """
    for run in runs:
        require_uint64(run, "sort_unique_runs")
    n = sum(run.shape[0] for run in runs)
    workers = default_workers()
    if n < PARALLEL_SORT_MIN:
        ids = np.concatenate(runs) if len(runs) > 1 else (runs[0] if runs else np.empty(0, np.uint64))
        runs.clear()
        return sort_unique(ids)
    runs[:] = [np.ascontiguousarray(run) for run in runs if run.shape[0]]
    bounds = _task_bounds([run.shape[0] for run in runs], 4 * workers)
    tasks = list(range(len(bounds)))
    pairs = map_chunks(_runs_or_and, tasks, bounds, runs)
    all_or, all_and = pairs[0]
    for run_or, run_and in pairs:
        all_or, all_and = all_or | run_or, all_and & run_and
    top = (all_or ^ all_and).bit_length() - 1  # the highest bit that varies
    shift = np.uint64(max(0, top - (BUCKET_BITS - 1)))
    counts = np.array([c for cs in map_chunks(_runs_counts, tasks, bounds, runs, shift) for c in cs],
                      dtype=np.int64).reshape(len(runs), 1 << BUCKET_BITS)
    start = np.zeros((1 << BUCKET_BITS) + 1, np.int64)
    np.cumsum(counts.sum(axis=0), out=start[1:])
    pos = np.cumsum(counts, axis=0) - counts + start[:-1]  # pos[r, b]: where run r's bucket b goes
    out = np.empty(n, np.uint64)
    map_chunks(_runs_scatter, tasks, bounds, runs, shift, pos, out)
    runs.clear()
    parts = [out[start[b]:start[b + 1]] for b in range(1 << BUCKET_BITS) if start[b + 1] > start[b]]
    del out  # the parts keep it until the last bucket is sorted
    sorted_parts = [None] * len(parts)
    numpy_sort_is_faster()  # measured here, before the threads sort the buckets
    sizes = map_chunks(_bucket_sort, list(range(len(parts))), parts, sorted_parts)
    offsets = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    result = np.empty(int(offsets[-1]), np.uint64)
    copies = _task_bounds(sizes, 4 * workers)
    map_chunks(_copy_buckets, list(range(len(copies))), copies, sorted_parts, offsets, result)
    return result


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

    The k-way merge of :class:`strongsolve.kernels.external.SortedRuns`: on this
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
    L2 or L3) is cheaper than sorting them.

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
