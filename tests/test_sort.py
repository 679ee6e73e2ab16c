"""kernels.sort.sort_unique (radix sort + dedup) against numpy.unique."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strongsolve.kernels.sort import RADIX_MIN, radix_argsort, sort_unique


@pytest.mark.parametrize("n", [0, 1, RADIX_MIN - 1, RADIX_MIN, RADIX_MIN + 1, 70_000])
@pytest.mark.parametrize("high", [1, 255, 2**36, 2**64 - 1])
def test_sort_unique_matches_numpy(n, high):
    ids = np.random.default_rng(n + high % 1000).integers(0, high, n, dtype=np.uint64, endpoint=True)
    out = sort_unique(ids)
    assert out.dtype == np.uint64
    np.testing.assert_array_equal(out, np.unique(ids))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=RADIX_MIN, max_size=3000), st.integers(0, 63))
def test_sort_unique_random_bit_patterns(values, shift):
    # IDs that differ only in a few digits exercise the skipped radix passes
    ids = (np.array(values, dtype=np.uint64) >> np.uint64(shift)) << np.uint64(shift // 2)
    np.testing.assert_array_equal(sort_unique(ids), np.unique(ids))


def test_sort_unique_rejects_other_dtypes():
    with pytest.raises(TypeError, match="uint64"):
        sort_unique(np.arange(5, dtype=np.int64))


@pytest.mark.parametrize("n", [0, 1, 5, 3000])
def test_radix_argsort_is_numpys_stable_argsort(n):
    keys = np.random.default_rng(n).integers(0, 50, n).astype(np.uint64) << np.uint64(20)
    np.testing.assert_array_equal(radix_argsort(keys), np.argsort(keys, kind="stable"))
