"""Sort-unique of uint64 ID runs (the layers of the forward pass)."""

import numpy as np

from .options import njit


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


def sort_unique(ids):
    """Sorted unique copy of a uint64 array.

    numpy's sort (SIMD-accelerated for uint64 on x86) followed by a numba pass dropping repeats; this is
    several times faster than ``numpy.unique``, which hashes before it sorts.

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
    if ids.dtype != np.uint64:
        raise TypeError(f"sort_unique needs uint64 IDs, got {ids.dtype}")
    a = np.sort(ids)
    return a[:_drop_repeats(a)].copy()
