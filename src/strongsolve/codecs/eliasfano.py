"""Elias-Fano code for a strictly increasing sequence of uint64 IDs (afterstate layers).

The code (Elias 1974; Fano 1971; the practical form of Vigna 2013, "Quasi-succinct indices", and of
sucds / PISA) splits each of the ``n`` values ``x_i < U`` into ``l`` low bits and the high part
``h_i = x_i >> l``:

- ``low``: the low parts, ``l`` bits each, packed little-endian into uint64 words
  (value ``i`` in bits ``i*l .. i*l+l-1`` of the word stream).
- ``high``: a bit vector, little-endian in uint64 words, with a one at position ``h_i + i`` for every
  value; the ``h``-th zero closes bucket ``h``. There are ``Z = ((U-1) >> l) + 1`` buckets, so the
  vector holds ``n + Z`` bits and ends with the zero that closes the last bucket.
- ``select1``: the position of every ``sample_rate``-th one (ones ``0, s, 2s, ...``).
- ``select0``: the position of every ``sample_rate``-th zero (zeros ``0, s, 2s, ...``).

``l = max(0, floor(log2(U / n)))`` (capped at 63), the choice that minimises the size, which is then
at most ``n * (2 + ceil(log2(U / n)))`` bits for the low and high parts (Elias 1974).

Queries: ``access(i)`` finds the ``i``-th one by the ``select1`` sample before it; ``rank(x)``
(number of values ``< x``) finds the start of bucket ``x >> l`` by the ``select0`` sample, then
binary-searches the low parts inside the bucket. Each scan starts from the later of the two samples
that bound its target, so it crosses fewer than ``s`` ones and fewer than ``s`` zeros: at most
``2 s / 64`` words, whatever the distribution of the values (the guarantee of the "darray" of
Okanohara & Sadakane 2007, here with plain samples).

Sample rate trade-off: the samples cost ``64 / s`` bits per value plus ``64 / s`` bits per bucket;
since ``n <= Z <= 2n`` for the standard ``l``, that is between ``128 / s`` and ``192 / s`` bits per
value, against a query scan of at most ``s / 32`` words. The default ``s = 512`` costs 0.25 to 0.375
bits per value (about 2.5 % of a 4x3 layer at 12 to 13 bits per ID) and bounds a scan by 16 words
(two cache lines). Measured by ``bench/eliasfano.py`` and on 2e7 random IDs below 2^40 (2 shared
cores): 256 costs 0.33 bits per value more and was not faster (7.1e5 against 7.7e5 lookups/s),
1024 saves 0.17 bits more at the same speed but doubles the worst-case scan.

A fence of every ``FENCE_STEP``-th value (64: one bit per value, in memory only, computed when a
sequence is opened and never stored) narrows the binary search inside a bucket to at most 64
values. The standard ``l`` assumes values spread over the universe; canonical 2048 boards are
clustered: on 4x3 the 2,054,430 afterstates of age 112 fill 14,450 of 2,507,011 buckets, and a
backward look-up met about 850 values in its bucket, ten dependent probes of the low bits. The
searches are branch-free (their comparisons are unpredictable). Measured on that layer with the
sorted look-ups the backward pass then made (one thread, the layer warm in the caches): 126 ns
per look-up before, 58 ns with the fence and branch-free searches, against 45 ns for
``numpy.searchsorted`` on the decoded layer.

The layout (widths, word and sample counts) is computed once, in :func:`ef_layout`, and used by the
builder, the reader (:meth:`EliasFano.from_arrays`) and the size report, so ``size_in_bits`` is the
serialized size by construction: 64 bits per stored word.
"""

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic

from ..kernels.options import njit, njit_parallel

FORMAT = "strongsolve.eliasfano"
FORMAT_VERSION = 1
DEFAULT_SAMPLE_RATE = 512
MAX_UNIVERSE = 1 << 64
ARRAY_NAMES = ("low", "high", "select1", "select0")

_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_BYTE = np.uint64(0xFF)
FENCE_STEP = 64  # values between two fence entries (module docstring)


# ------------------------------------------------------------------------------------------------
# Layout: computed once, used by writer, reader and size report


@dataclass(frozen=True)
class EFLayout:
    """Sizes of one Elias-Fano sequence, derived from ``(n, universe, sample_rate)`` only.

    Attributes
    ----------
    n : int
        Number of values.
    universe : int
        Exclusive upper bound ``U`` of the values, ``n <= U <= 2**64``.
    sample_rate : int
        ``s``: one select sample every ``s`` ones and every ``s`` zeros.
    low_bits : int
        ``l``, the width of a low part (0..63).
    num_buckets : int
        ``Z = ((U-1) >> l) + 1`` high buckets (0 when ``n == 0``).
    high_len : int
        Bits in the high bit vector, ``n + Z``.
    words : dict of str to int
        Length in uint64 words of each stored array (``low``, ``high``, ``select1``, ``select0``).
    size_in_bits : int
        64 times the total number of words: the serialized size.
    """

    n: int
    universe: int
    sample_rate: int
    low_bits: int
    num_buckets: int
    high_len: int
    words: dict
    size_in_bits: int


def ef_layout(n, universe, sample_rate=DEFAULT_SAMPLE_RATE):
    """Compute the layout of an Elias-Fano sequence of ``n`` values below ``universe``.

    Parameters
    ----------
    n : int
        Number of values, ``0 <= n <= universe``.
    universe : int
        Exclusive upper bound ``U`` of the values, ``0 <= U <= 2**64`` (a Python int).
    sample_rate : int
        Select sample rate ``s >= 1``.

    Returns
    -------
    EFLayout

    Raises
    ------
    ValueError
        If a parameter is not an integer or is out of range (the message names it).
    """
    n = _as_int(n, "n")
    universe = _as_int(universe, "universe")
    sample_rate = _as_int(sample_rate, "sample_rate")
    if not 0 <= universe <= MAX_UNIVERSE:
        raise ValueError(f"universe {universe} is out of range: allowed 0 <= universe <= 2**64")
    if not 0 <= n <= universe:
        raise ValueError(f"n = {n} distinct values cannot lie below universe {universe}: "
                         f"allowed 0 <= n <= universe")
    if sample_rate < 1:
        raise ValueError(f"sample_rate {sample_rate} is out of range: allowed sample_rate >= 1")
    if n == 0:
        low_bits = 0
        num_buckets = 0
    else:
        # floor(log2(U / n)) == floor(log2(U // n)) for U >= n, in exact integer arithmetic
        low_bits = min(63, (universe // n).bit_length() - 1)
        num_buckets = ((universe - 1) >> low_bits) + 1
    high_len = n + num_buckets
    words = {
        "low": -(-n * low_bits // 64),
        "high": -(-high_len // 64),
        "select1": -(-n // sample_rate),
        "select0": -(-num_buckets // sample_rate),
    }
    return EFLayout(n, universe, sample_rate, low_bits, num_buckets, high_len, words,
                    64 * sum(words.values()))


def _as_int(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


# ------------------------------------------------------------------------------------------------
# Bit primitives


@intrinsic
def _popcount(typingctx, word):
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def _ctz(typingctx, word):
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@njit
def _select_in_word(word, t):
    """Bit position of the ``t``-th (0-based) one of ``word``; it must have more than ``t`` ones."""
    shift = 0
    while True:
        c = np.int64(_popcount(word & _BYTE))
        if c > t:
            break
        t -= c
        word >>= _U8
        shift += 8
    for _ in range(t):
        word &= word - _U1
    return shift + np.int64(_ctz(word))


@njit
def _scan1(high, pos, t):
    """Position of the ``t``-th one at or after bit ``pos`` (it must exist)."""
    w = pos >> 6
    word = high[w] & (_ONES << np.uint64(pos & 63))
    while True:
        c = np.int64(_popcount(word))
        if c > t:
            return w * 64 + _select_in_word(word, t)
        t -= c
        w += 1
        word = high[w]


@njit
def _scan0(high, pos, t):
    """Position of the ``t``-th zero at or after bit ``pos`` (it must exist within the vector)."""
    w = pos >> 6
    word = ~high[w] & (_ONES << np.uint64(pos & 63))
    while True:
        c = np.int64(_popcount(word))
        if c > t:
            return w * 64 + _select_in_word(word, t)
        t -= c
        w += 1
        word = ~high[w]


@njit
def _get_low(low, low_bits, i):
    if low_bits == 0:
        return _U0
    bit = i * low_bits
    w = bit >> 6
    sh = np.uint64(bit & 63)
    # both words, without a branch on whether the value straddles them: (next << 1) << (63 - sh)
    # is the next word's part, and 0 when sh == 0 (a shift by 64 would be undefined)
    following = low[min(w + 1, low.shape[0] - 1)]
    value = (low[w] >> sh) | ((following << _U1) << (np.uint64(63) - sh))
    return value & ((_U1 << np.uint64(low_bits)) - _U1)


# ------------------------------------------------------------------------------------------------
# The raw arrays, as one numba-friendly argument


class EFArrays(NamedTuple):
    """The raw arrays and sizes of a sequence, passed as one argument to the numba kernels.

    ``low``, ``high``, ``select1``, ``select0`` are uint64[words] as in the module docstring;
    ``n``, ``low_bits``, ``sample_rate``, ``num_buckets`` are ints (see :class:`EFLayout`);
    ``fence`` is uint64[ceil(n / FENCE_STEP)], the values at indices ``0, FENCE_STEP, ...``.
    """

    low: np.ndarray
    high: np.ndarray
    select1: np.ndarray
    select0: np.ndarray
    n: int
    low_bits: int
    sample_rate: int
    num_buckets: int
    fence: np.ndarray


# ------------------------------------------------------------------------------------------------
# Serial kernels (one query); every one is @njit and callable from other kernels


@njit
def _select(ef, t, ones):
    """Bit position of the ``t``-th one (``ones``, ``0 <= t < n``) or zero (``0 <= t < num_buckets``).

    Start from the sample of the target's own kind, then move to the later sample of the other kind
    when it still lies before the target (the largest k whose count of the target's kind before
    sample k is <= t), so the scan crosses fewer than ``s`` ones and ``s`` zeros."""
    s = ef.sample_rate
    own = ef.select1 if ones else ef.select0
    other = ef.select0 if ones else ef.select1
    j = t // s
    start = np.int64(own[j])
    before = j * s
    g_j = start - before
    g_next = np.int64(own[j + 1]) - (j + 1) * s if j + 1 < own.shape[0] else (
        ef.num_buckets if ones else ef.n)
    lo = g_j // s
    hi = min(other.shape[0], g_next // s + 1)
    if lo < hi and np.int64(other[lo]) - lo * s <= t:
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if np.int64(other[mid]) - mid * s <= t:
                lo = mid
            else:
                hi = mid
        q = np.int64(other[lo])
        if q > start:
            start = q
            before = q - lo * s
    return _scan1(ef.high, start, t - before) if ones else _scan0(ef.high, start, t - before)


@njit
def _select1(ef, i):
    """Bit position of the ``i``-th one (``0 <= i < n``)."""
    return _select(ef, i, True)


@njit
def _select0(ef, z):
    """Bit position of the ``z``-th zero (``0 <= z < num_buckets``)."""
    return _select(ef, z, False)


@njit
def ef_access(ef, i):
    """The ``i``-th value (uint64) of the sequence ``ef`` (an :class:`EFArrays`), ``0 <= i < n``."""
    pos = _select1(ef, i)
    return (np.uint64(pos - i) << np.uint64(ef.low_bits)) | _get_low(ef.low, ef.low_bits, i)


@njit
def _lower_bound(ef, x):
    """``(rank, found)``: the number of values ``< x`` and whether ``x`` is one of them."""
    n = ef.n
    if n == 0:
        return 0, False
    x = np.uint64(x)
    lb = np.uint64(ef.low_bits)
    h = x >> lb
    if h >= np.uint64(ef.num_buckets):
        return n, False
    bucket = np.int64(h)
    start = 0 if bucket == 0 else _select0(ef, bucket - 1) + 1
    first = start - bucket
    last = first + (_scan0(ef.high, start, 0) - start)
    return _search_bucket(ef, first, last, x)


@njit
def _search_bucket(ef, first, last, x):
    """``(rank, found)`` of ``x`` among the values ``first .. last - 1`` (one bucket: equal high
    parts, increasing low parts)."""
    return _search_fenced(ef, first, last, x, _fence_rank(ef.fence, 0, ef.fence.shape[0], x))


@njit
def _fence_rank(fence, lo, hi, x):
    """Number of fence entries ``< x``, known to lie in ``[lo, hi]`` (branch-free binary search,
    as in :func:`_search_fenced`)."""
    count = hi - lo
    while count > 0:
        half = count >> 1
        below = fence[lo + half] < x
        lo = lo + half + 1 if below else lo
        count = count - half - 1 if below else half
    return lo


@njit
def _search_fenced(ef, first, last, x, a):
    """:func:`_search_bucket` given ``a``, the number of fence entries ``< x``: the rank of ``x``
    lies in ``((a - 1) FENCE_STEP, a FENCE_STEP]``, at most ``FENCE_STEP`` values to search."""
    lo = first if a == 0 else max(first, (a - 1) * FENCE_STEP + 1)
    hi = last if a == ef.fence.shape[0] else min(last, a * FENCE_STEP)
    low_x = x & ((_U1 << np.uint64(ef.low_bits)) - _U1)
    # branch-free lower bound (the comparisons are unpredictable; selects instead of jumps)
    count = hi - lo
    while count > 0:
        half = count >> 1
        below = _get_low(ef.low, ef.low_bits, lo + half) < low_x
        lo = lo + half + 1 if below else lo
        count = count - half - 1 if below else half
    return lo, lo < last and _get_low(ef.low, ef.low_bits, lo) == low_x


@njit
def _fence(ef):
    """The values at indices ``0, FENCE_STEP, 2 FENCE_STEP, ...`` (uint64[ceil(n / FENCE_STEP)])."""
    out = np.empty((ef.n + FENCE_STEP - 1) // FENCE_STEP, np.uint64)
    for j in range(out.shape[0]):
        out[j] = ef_access(ef, j * FENCE_STEP)
    return out


@njit
def ef_rank(ef, x):
    """Number of values ``< x`` (int64) in the sequence ``ef``."""
    return _lower_bound(ef, x)[0]


@njit
def ef_index_of(ef, x):
    """Index (int64) of value ``x`` in the sequence ``ef``, or -1 when ``x`` is absent.

    Callable from other numba kernels: pass ``EliasFano.arrays`` (an :class:`EFArrays`) as ``ef``.
    """
    i, found = _lower_bound(ef, x)
    return i if found else -1


@njit
def ef_index_of_increasing(ef, xs, out):
    """``out[t]`` = index of ``xs[t]`` in the sequence ``ef`` or -1, for non-decreasing ``xs``
    (uint64[k]) into ``out`` (int64[k]).

    A cursor walks the high bits forward: the start of the next query's bucket is found by scanning
    from the last one when it is fewer than ``2 * sample_rate`` buckets ahead, else by the sampled
    select; a second cursor gallops forward over the fence. Sorted batches of look-ups (the successors of queried states, g2048.expand._resolve) thus read the code once, in
    order, instead of paying a sampled select per query.
    """
    n = ef.n
    lb = np.uint64(ef.low_bits)
    fence = ef.fence
    nf = fence.shape[0]
    a = 0  # fence entries < the current query
    bucket = np.int64(-1)
    start = np.int64(0)
    first = np.int64(0)
    last = np.int64(0)
    for t in range(xs.shape[0]):
        x = xs[t]
        h = x >> lb
        if n == 0 or h >= np.uint64(ef.num_buckets):
            out[t] = -1
            continue
        b = np.int64(h)
        if b != bucket:
            if bucket >= 0 and b - bucket <= 2 * ef.sample_rate:
                # the zero closing bucket b - 1 is the (b - 1 - bucket)-th zero from `start`
                start = _scan0(ef.high, start, b - 1 - bucket) + 1
            else:
                start = 0 if b == 0 else _select0(ef, b - 1) + 1
            bucket = b
            first = start - b
            last = first + (_scan0(ef.high, start, 0) - start)
        # the fence cursor gallops forward from the previous query's rank
        step = 1
        while a + step <= nf and fence[a + step - 1] < x:
            step *= 2
        a = _fence_rank(fence, a + step // 2, min(a + step, nf), x)
        i, found = _search_fenced(ef, first, last, x, a)
        out[t] = i if found else -1


@njit
def ef_successor(ef, x):
    """``(index, value)`` of the smallest value ``>= x``; ``(n, 0)`` when there is none."""
    i, found = _lower_bound(ef, x)
    if found:
        return i, np.uint64(x)
    if i == ef.n:
        return i, _U0
    return i, ef_access(ef, i)


# ------------------------------------------------------------------------------------------------
# Parallel batch drivers


@njit_parallel
def _access_batch(ef, indices):
    out = np.empty(indices.shape[0], np.uint64)
    for t in prange(indices.shape[0]):
        out[t] = ef_access(ef, indices[t])
    return out


@njit_parallel
def _rank_batch(ef, xs):
    out = np.empty(xs.shape[0], np.int64)
    for t in prange(xs.shape[0]):
        out[t] = _lower_bound(ef, xs[t])[0]
    return out


@njit_parallel
def _index_of_batch(ef, xs):
    out = np.empty(xs.shape[0], np.int64)
    for t in prange(xs.shape[0]):
        out[t] = ef_index_of(ef, xs[t])
    return out


@njit_parallel
def _successor_batch(ef, xs):
    index = np.empty(xs.shape[0], np.int64)
    value = np.empty(xs.shape[0], np.uint64)
    for t in prange(xs.shape[0]):
        index[t], value[t] = ef_successor(ef, xs[t])
    return index, value


@njit
def _decode_range(ef, first, out):
    """Write values ``first .. first + len(out) - 1`` into ``out`` by one walk of the high bits."""
    count = out.shape[0]
    if count == 0:
        return
    lb = np.uint64(ef.low_bits)
    pos = _select1(ef, first)
    w = pos >> 6
    word = ef.high[w] & (_ONES << np.uint64(pos & 63))
    i = first
    for k in range(count):
        while word == _U0:
            w += 1
            word = ef.high[w]
        p = w * 64 + np.int64(_ctz(word))
        word &= word - _U1
        out[k] = (np.uint64(p - i) << lb) | _get_low(ef.low, ef.low_bits, i)
        i += 1


@njit_parallel
def _decode_all(ef, out, chunk):
    """Every value into ``out`` (uint64[n]), blocks of ``chunk`` values decoded on numba's threads
    (each block starts from its own select1)."""
    n = out.shape[0]
    for c in prange((n + chunk - 1) // chunk):
        lo = c * chunk
        _decode_range(ef, lo, out[lo:min(n, lo + chunk)])


@njit
def _popcount_words(words):
    total = 0
    for w in range(words.shape[0]):
        total += np.int64(_popcount(words[w]))
    return total


# ------------------------------------------------------------------------------------------------
# Builder


@njit
def _encode(values, first, low, high, select1, low_bits, sample_rate, select0, prev_high):
    """Append ``values`` as values ``first, first+1, ...``; return the high part of the last one.

    Zero ``z`` lies between values ``i-1`` and ``i`` when ``h_{i-1} <= z < h_i``, at position
    ``z + i``; ``prev_high`` is ``h_{first-1}`` (0 before the first value).
    """
    lb = np.uint64(low_bits)
    mask = (_U1 << lb) - _U1
    s = sample_rate
    for t in range(values.shape[0]):
        i = first + t
        v = values[t]
        if low_bits > 0:
            bit = i * low_bits
            w = bit >> 6
            sh = bit & 63
            lv = v & mask
            low[w] |= lv << np.uint64(sh)
            if sh + low_bits > 64:
                low[w + 1] |= lv >> np.uint64(64 - sh)
        h = np.int64(v >> lb)
        pos = h + i
        high[pos >> 6] |= _U1 << np.uint64(pos & 63)
        if i % s == 0:
            select1[i // s] = pos
        for z in range(-(-prev_high // s) * s, h, s):
            select0[z // s] = z + i
        prev_high = h
    return prev_high


class EliasFanoBuilder:
    """Encode exactly ``n`` strictly increasing uint64 values below ``universe``, in chunks.

    The output arrays are allocated up front from the layout, so a layer larger than memory can be
    encoded from its sorted runs (a k-way merge) chunk by chunk; only the coded form is held.

    Parameters
    ----------
    n : int
        Number of values that will be pushed (sets the low-bit width).
    universe : int
        Exclusive upper bound ``U`` of the values, ``n <= U <= 2**64``.
    sample_rate : int, optional
        Select sample rate (see the module docstring), default 512.

    Raises
    ------
    ValueError
        From :func:`ef_layout` for bad parameters.

    Examples
    --------
    >>> b = EliasFanoBuilder(3, 100)
    >>> b.extend(np.array([3, 50], np.uint64)); b.push(99)
    >>> seq = b.build(); seq.index_of(50)
    1
    """

    def __init__(self, n, universe, sample_rate=DEFAULT_SAMPLE_RATE):
        self.layout = ef_layout(n, universe, sample_rate)
        lay = self.layout
        self._arrays = {name: np.zeros(lay.words[name], np.uint64) for name in ARRAY_NAMES}
        self._count = 0
        self._last = None
        self._prev_high = 0
        self._built = False

    def __len__(self):
        """Number of values pushed so far."""
        return self._count

    def push(self, value):
        """Append one value (an int ``0 <= value < universe``, above every value pushed so far)."""
        value = _as_int(value, "value")
        if not 0 <= value < MAX_UNIVERSE:
            raise ValueError(f"value {value} at position {self._count} is outside the universe "
                             f"[0, {self.layout.universe})")
        self.extend(np.array([value], np.uint64))

    def extend(self, values):
        """Append a chunk of values.

        Parameters
        ----------
        values : array_like of int, shape (k,)
            Strictly increasing, above every value pushed so far, below the universe; integer
            dtype (converted to uint64).

        Raises
        ------
        ValueError
            On a negative, repeated, decreasing or out-of-universe value, or more than ``n`` values;
            the message names the value and its position in the whole sequence. Nothing of a
            rejected chunk is appended.
        """
        if self._built:
            raise ValueError("build() was already called on this builder")
        values = _as_uint64_array(values, "values", self._count)
        k = values.shape[0]
        if k == 0:
            return
        lay = self.layout
        if self._count + k > lay.n:
            raise ValueError(f"value {int(values[lay.n - self._count])} at position {lay.n} is one "
                             f"more than the n = {lay.n} values declared to the builder")
        bad = np.flatnonzero(values[1:] <= values[:-1])
        if self._last is not None and values[0] <= self._last:
            bad = np.array([-1])
        if bad.size:
            t = int(bad[0]) + 1
            prev = self._last if t == 0 else int(values[t - 1])
            kind = "repeated" if int(values[t]) == prev else "decreasing"
            raise ValueError(f"value {int(values[t])} at position {self._count + t} is {kind}: "
                             f"the previous value is {prev}; values must be strictly increasing")
        if lay.universe < MAX_UNIVERSE and int(values[-1]) >= lay.universe:
            t = int(np.searchsorted(values, np.uint64(lay.universe)))
            raise ValueError(f"value {int(values[t])} at position {self._count + t} is outside the "
                             f"universe [0, {lay.universe})")
        a = self._arrays
        self._prev_high = _encode(values, self._count, a["low"], a["high"], a["select1"],
                                  lay.low_bits, lay.sample_rate, a["select0"], self._prev_high)
        self._count += k
        self._last = int(values[-1])

    def build(self):
        """Finish and return the read-only :class:`EliasFano` sequence.

        Raises
        ------
        ValueError
            If the number of values pushed is not the ``n`` given to the constructor.
        """
        lay = self.layout
        if self._built:
            raise ValueError("build() was already called on this builder")
        if self._count != lay.n:
            raise ValueError(f"the builder was declared with n = {lay.n} values but "
                             f"{self._count} were pushed")
        # zeros after the last value: zero z at position z + n
        s = lay.sample_rate
        s0 = self._arrays["select0"]
        first = -(-self._prev_high // s)
        z = np.arange(first * s, lay.num_buckets, s, dtype=np.int64)
        s0[first:] = (z + lay.n).astype(np.uint64)
        self._built = True
        return EliasFano(lay, self._arrays)


def _as_uint64_array(values, name, offset=0):
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
    if values.dtype == np.uint64:
        return np.ascontiguousarray(values)
    if values.size == 0:
        return np.zeros(0, np.uint64)
    if values.dtype.kind not in "ui":
        raise ValueError(f"{name} must have an integer dtype, got {values.dtype}")
    neg = np.flatnonzero(values < 0)
    if neg.size:
        t = int(neg[0])
        raise ValueError(f"value {int(values[t])} at position {offset + t} of {name} is negative: "
                         f"allowed 0 <= value < 2**64")
    return values.astype(np.uint64)


# ------------------------------------------------------------------------------------------------
# Read-only sequence


class EliasFano:
    """A read-only Elias-Fano coded sequence of strictly increasing uint64 values.

    Build one with :class:`EliasFanoBuilder`, or load one with :meth:`from_arrays` /
    :func:`load_zarr`. Queries take Python ints; the ``*_batch`` forms take uint64 arrays (any
    integer dtype with non-negative values is converted) and run in parallel without the GIL.

    Attributes
    ----------
    n, universe, low_bits, sample_rate : int
        As in :class:`EFLayout`.
    layout : EFLayout
    arrays : EFArrays
        The raw arrays, for numba kernels (:func:`ef_index_of`, :func:`ef_access`, ...).
    size_in_bits : int
        Serialized size in bits (a multiple of 64).
    """

    def __init__(self, layout, arrays):
        self.layout = layout
        views = []
        for name in ARRAY_NAMES:
            view = arrays[name].view()  # read-only view; the owner's flags stay as they were
            view.flags.writeable = False
            views.append(view)
        arrays = EFArrays(*views, layout.n, layout.low_bits, layout.sample_rate,
                          layout.num_buckets, np.empty(0, np.uint64))
        fence = _fence(arrays)
        fence.flags.writeable = False
        self.arrays = arrays._replace(fence=fence)

    n = property(lambda self: self.layout.n)
    universe = property(lambda self: self.layout.universe)
    low_bits = property(lambda self: self.layout.low_bits)
    sample_rate = property(lambda self: self.layout.sample_rate)
    size_in_bits = property(lambda self: self.layout.size_in_bits)

    def __len__(self):
        return self.layout.n

    def __repr__(self):
        return (f"EliasFano(n={self.n}, universe={self.universe}, low_bits={self.low_bits}, "
                f"sample_rate={self.sample_rate}, size_in_bits={self.size_in_bits})")

    # -- scalar queries

    def access(self, i):
        """The ``i``-th value (int), ``0 <= i < n``; raises IndexError otherwise."""
        i = _as_int(i, "i")
        if not 0 <= i < self.n:
            raise IndexError(f"index {i} is out of range: allowed 0 <= i < {self.n}")
        return int(ef_access(self.arrays, i))

    def rank(self, x):
        """Number of values ``< x`` (int); ``x`` any int in ``[0, 2**64)``."""
        return int(_lower_bound(self.arrays, _query(x))[0])

    def successor(self, x):
        """``(index, value)`` of the smallest value ``>= x``, or None when every value is ``< x``."""
        i, value = ef_successor(self.arrays, _query(x))
        return None if i == self.n else (int(i), int(value))

    def contains(self, x):
        """Whether ``x`` is a value of the sequence."""
        return bool(_lower_bound(self.arrays, _query(x))[1])

    __contains__ = contains

    def index_of(self, x):
        """Index of value ``x`` (int), or -1 when absent."""
        return int(ef_index_of(self.arrays, _query(x)))

    # -- batch queries

    def access_batch(self, indices):
        """Values (uint64[k]) at ``indices`` (int[k], each ``0 <= i < n``); raises IndexError."""
        indices = np.asarray(indices)
        if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "ui"):
            raise ValueError(f"indices must be a one-dimensional integer array, got "
                             f"{indices.dtype}{list(indices.shape)}")
        indices = indices.astype(np.int64, copy=False)
        bad = np.flatnonzero((indices < 0) | (indices >= self.n))
        if bad.size:
            raise IndexError(f"index {int(indices[bad[0]])} at position {int(bad[0])} is out of "
                             f"range: allowed 0 <= i < {self.n}")
        return _access_batch(self.arrays, indices)

    def rank_batch(self, xs):
        """Number of values ``< x`` (int64[k]) for each ``x`` of ``xs`` (uint64[k])."""
        return _rank_batch(self.arrays, _as_uint64_array(xs, "xs"))

    def successor_batch(self, xs):
        """``(index int64[k], value uint64[k])`` of the smallest value ``>= x`` for each ``x``.

        Where there is none, ``index`` is ``n`` and ``value`` is 0 (test ``index == n``, since 0
        may be a value).
        """
        return _successor_batch(self.arrays, _as_uint64_array(xs, "xs"))

    def contains_batch(self, xs):
        """Whether each ``x`` of ``xs`` (uint64[k]) is a value: bool[k]."""
        return self.index_of_batch(xs) >= 0

    def index_of_batch(self, xs):
        """Index of each ``x`` of ``xs`` (uint64[k]) in the sequence, -1 when absent: int64[k]."""
        return _index_of_batch(self.arrays, _as_uint64_array(xs, "xs"))

    def index_of_increasing(self, xs):
        """Like :meth:`index_of_batch` for non-decreasing ``xs``, by one forward pass
        (:func:`ef_index_of_increasing`). Raises ValueError if ``xs`` decreases somewhere."""
        xs = _as_uint64_array(xs, "xs")
        if xs.size > 1 and (xs[1:] < xs[:-1]).any():
            raise ValueError("xs must be non-decreasing for index_of_increasing")
        out = np.empty(xs.shape[0], np.int64)
        ef_index_of_increasing(self.arrays, xs, out)
        return out

    def decode_all(self, chunk_size=1 << 16):
        """All values in order (uint64[n]), decoded in blocks of ``chunk_size`` on numba's threads
        (the forward and backward stages decode whole layers: serially 0.55-0.99 CPU s for 1.6e7
        afterstates of 4x3, bench/RECORD.md). ValueError if ``chunk_size`` < 1."""
        chunk_size = _as_int(chunk_size, "chunk_size")
        if chunk_size < 1:
            raise ValueError(f"chunk_size {chunk_size} is out of range: allowed chunk_size >= 1")
        out = np.empty(self.n, np.uint64)
        # a block no longer than the sequence: the block count cannot overflow int64
        _decode_all(self.arrays, out, min(chunk_size, max(1, self.n)))
        return out

    def iter_chunks(self, chunk_size=1 << 20):
        """Yield the values in order as uint64 arrays of ``chunk_size`` (the last may be shorter)."""
        chunk_size = _as_int(chunk_size, "chunk_size")
        if chunk_size < 1:
            raise ValueError(f"chunk_size {chunk_size} is out of range: allowed chunk_size >= 1")
        for first in range(0, self.n, chunk_size):
            out = np.empty(min(chunk_size, self.n - first), np.uint64)
            _decode_range(self.arrays, first, out)
            yield out

    # -- serialization

    def to_arrays(self):
        """The stored form: ``(arrays, attrs)``.

        Returns
        -------
        arrays : dict of str to uint64 ndarray
            ``low``, ``high``, ``select1``, ``select0``; their total ``nbytes`` is
            ``size_in_bits / 8``.
        attrs : dict
            JSON-able: ``format``, ``version``, ``n``, ``universe`` (a decimal string, since it may
            be 2**64), ``low_bits``, ``sample_rate``, ``size_in_bits``.
        """
        arrays = {name: getattr(self.arrays, name) for name in ARRAY_NAMES}
        lay = self.layout
        attrs = {"format": FORMAT, "version": FORMAT_VERSION, "n": lay.n,
                 "universe": str(lay.universe), "low_bits": lay.low_bits,
                 "sample_rate": lay.sample_rate, "size_in_bits": lay.size_in_bits}
        return arrays, attrs

    def to_words(self):
        """The stored form as one array: ``(words, attrs)``, ``words`` = ``low``, ``high``,
        ``select1``, ``select0`` concatenated (uint64, in :data:`ARRAY_NAMES` order; their lengths
        follow from the attributes by :func:`ef_layout`). One array per layer instead of four
        quarters the per-array cost of a small zarr layer."""
        arrays, attrs = self.to_arrays()
        return np.concatenate([arrays[name] for name in ARRAY_NAMES]), attrs

    @classmethod
    def from_words(cls, words, attrs):
        """Rebuild a sequence from :meth:`to_words` output (ValueError as :meth:`from_arrays`, or
        when ``words`` has the wrong length)."""
        try:
            lay = ef_layout(attrs["n"], int(attrs["universe"]), attrs["sample_rate"])
        except KeyError as err:
            raise ValueError(f"attribute {err.args[0]!r} is missing") from None
        words = np.asarray(words)
        total = sum(lay.words[name] for name in ARRAY_NAMES)
        if words.dtype != np.uint64 or words.shape != (total,):
            raise ValueError(f"words is {words.dtype}{list(words.shape)}, the layout needs uint64[{total}]")
        ends = np.cumsum([lay.words[name] for name in ARRAY_NAMES])
        return cls.from_arrays(dict(zip(ARRAY_NAMES, np.split(words, ends[:-1]))), attrs)

    @classmethod
    def from_arrays(cls, arrays, attrs):
        """Rebuild a sequence from :meth:`to_arrays` output, validated against the layout.

        Raises
        ------
        ValueError
            If the format or version is unknown, an attribute disagrees with the layout, an array
            is missing or has the wrong dtype or shape, or the high bits do not hold ``n`` ones;
            the message names the mismatch.
        """
        if attrs.get("format") != FORMAT or attrs.get("version") != FORMAT_VERSION:
            raise ValueError(f"not an Elias-Fano sequence of format {FORMAT!r} version "
                             f"{FORMAT_VERSION}: format {attrs.get('format')!r} version "
                             f"{attrs.get('version')!r}")
        try:
            universe = int(attrs["universe"])
            lay = ef_layout(attrs["n"], universe, attrs["sample_rate"])
        except KeyError as err:
            raise ValueError(f"attribute {err.args[0]!r} is missing") from None
        if attrs.get("low_bits") != lay.low_bits:
            raise ValueError(f"attribute low_bits = {attrs.get('low_bits')!r} disagrees with the "
                             f"layout of n = {lay.n}, universe = {universe}: {lay.low_bits}")
        if "size_in_bits" in attrs and attrs["size_in_bits"] != lay.size_in_bits:
            raise ValueError(f"attribute size_in_bits = {attrs['size_in_bits']!r} disagrees with "
                             f"the layout: {lay.size_in_bits}")
        loaded = {}
        for name in ARRAY_NAMES:
            if name not in arrays:
                raise ValueError(f"array {name!r} is missing")
            a = np.asarray(arrays[name])
            if a.dtype != np.uint64 or a.shape != (lay.words[name],):
                raise ValueError(f"array {name!r} is {a.dtype}{list(a.shape)}, the layout needs "
                                 f"uint64[{lay.words[name]}]")
            loaded[name] = np.ascontiguousarray(a)
        ones = _popcount_words(loaded["high"])
        if ones != lay.n:
            raise ValueError(f"array 'high' holds {ones} one bits, the layout needs n = {lay.n}")
        return cls(lay, loaded)


def _query(x):
    x = _as_int(x, "x")
    if not 0 <= x < MAX_UNIVERSE:
        raise ValueError(f"query {x} is out of range: allowed 0 <= x < 2**64")
    return np.uint64(x)


# ------------------------------------------------------------------------------------------------
# zarr v3


def save_zarr(group, seq, chunk_words=1 << 20):
    """Write ``seq`` into a zarr v3 group: arrays ``low``, ``high``, ``select1``, ``select0`` and
    the attribute ``eliasfano`` (the attrs of :meth:`EliasFano.to_arrays`).

    Parameters
    ----------
    group : zarr.Group or str or os.PathLike
        An open writable group (the caller, e.g. the layer store, owns atomicity), or a path: then
        the group is written under a temporary name beside it and renamed into place.
    seq : EliasFano
    chunk_words : int
        zarr chunk length in words (8 MiB by default). Arrays are stored uncompressed: the coded
        bits are close to random, so a compressor would only cost time.

    Raises
    ------
    FileExistsError
        If ``group`` is a path that already exists.
    """
    import zarr

    if isinstance(group, (str, os.PathLike)):
        path = Path(group)
        if path.exists():
            raise FileExistsError(f"{path} already exists; remove it or choose another path")
        tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex}")
        try:
            save_zarr(zarr.open_group(str(tmp), mode="w-"), seq, chunk_words)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        return
    arrays, attrs = seq.to_arrays()
    for name, data in arrays.items():
        arr = group.create_array(name, shape=data.shape, dtype=np.uint64,
                                 chunks=(max(1, min(chunk_words, data.shape[0])),),
                                 compressors=None, fill_value=0)
        if data.size:
            arr[:] = data
    group.attrs["eliasfano"] = attrs


def load_zarr(group):
    """Read a sequence written by :func:`save_zarr` from a zarr group or a path; validated by
    :meth:`EliasFano.from_arrays` (ValueError naming the mismatch)."""
    import zarr

    if isinstance(group, (str, os.PathLike)):
        group = zarr.open_group(str(group), mode="r")
    if "eliasfano" not in group.attrs:
        raise ValueError(f"zarr group {group.store_path!s} holds no 'eliasfano' attribute")
    arrays = {name: group[name][:] for name in ARRAY_NAMES if name in group}
    return EliasFano.from_arrays(arrays, dict(group.attrs["eliasfano"]))


def bits_bound(n, universe):
    """The Elias-Fano bound ``2 + ceil(log2(U / n))`` bits per value (Elias 1974), for reports
    (exact integer arithmetic; 0 for an empty sequence)."""
    n = _as_int(n, "n")
    if n == 0:
        return 0
    # smallest k with 2**k >= ceil(U / n)
    return 2 + (-(-_as_int(universe, "universe") // n) - 1).bit_length()
