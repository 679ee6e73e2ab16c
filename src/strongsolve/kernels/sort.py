"""Sort-unique of uint64 ID runs (the layers of the forward pass)."""

import numpy as np


def sort_unique(ids):
    """Sorted unique copy of a uint64 array.

    Parameters
    ----------
    ids : uint64[N]

    Returns
    -------
    uint64[M], M <= N, strictly increasing
    """
    if ids.dtype != np.uint64:
        raise TypeError(f"sort_unique needs uint64 IDs, got {ids.dtype}")
    return np.unique(ids)
