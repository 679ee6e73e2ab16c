"""kernels.sort: sort_unique (numpy's sort or the radix sort, then dedup), its bucketed parallel form
over runs, radix_argsort and merge_unique against numpy; distinct (hash set)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strongsolve.kernels import sort as sort_module
from strongsolve.kernels.sort import (RADIX_MIN, distinct, distinct_index, merge_unique, radix_argsort,
                                     sort_unique, sort_unique_runs)


@pytest.fixture(params=["numpy", "radix"])
def sorter(request, monkeypatch):
    """Either sort sort_unique may pick on a CPU (kernels.sort.numpy_sort_is_faster)."""
    monkeypatch.setattr(sort_module, "numpy_sort_is_faster", lambda: request.param == "numpy")
    return request.param


def test_the_sort_choice_is_measured_once():
    sort_module._probe_sorts.cache_clear()
    choice = sort_module.numpy_sort_is_faster()
    assert isinstance(choice, bool)
    assert sort_module._probe_sorts.cache_info().misses == 1
    assert sort_module.numpy_sort_is_faster() is choice
    assert sort_module._probe_sorts.cache_info().misses == 1


@pytest.mark.parametrize("n", [0, 1, RADIX_MIN - 1, RADIX_MIN, RADIX_MIN + 1, 70_000])
@pytest.mark.parametrize("high", [1, 255, 2**36, 2**64 - 1])
def test_sort_unique_matches_numpy(n, high, sorter):
    ids = np.random.default_rng(n + high % 1000).integers(0, high, n, dtype=np.uint64, endpoint=True)
    out = sort_unique(ids)
    assert out.dtype == np.uint64
    np.testing.assert_array_equal(out, np.unique(ids))
    np.testing.assert_array_equal(sort_unique(ids, compact=False), out)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=RADIX_MIN, max_size=3000), st.integers(0, 63))
def test_sort_unique_random_bit_patterns(values, shift):
    # IDs that differ only in a few digits exercise the skipped radix passes
    ids = (np.array(values, dtype=np.uint64) >> np.uint64(shift)) << np.uint64(shift // 2)
    np.testing.assert_array_equal(sort_unique(ids), np.unique(ids))


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("kind", ["wide", "narrow", "one_bucket", "constant", "top_bit"])
def test_sort_unique_runs_of_one_array_equals_numpy(kind, threads, monkeypatch, sorter):
    # buckets by the top varying bits: spread, a few values, nearly all in one bucket, all equal,
    # and IDs that differ in bit 63 only among others
    monkeypatch.setenv("STRONGSOLVE_THREADS", threads)
    monkeypatch.setattr(sort_module, "PARALLEL_SORT_MIN", 1000)
    rng = np.random.default_rng(len(kind))
    n = 50_000
    ids = {"wide": rng.integers(0, 2**48, n, dtype=np.uint64),
           "narrow": rng.integers(0, 300, n, dtype=np.uint64),
           "one_bucket": np.where(rng.random(n) < 0.99, np.uint64(5) << np.uint64(40),
                                  rng.integers(0, 2**44, n, dtype=np.uint64)),
           "constant": np.full(n, 2**40 + 3, np.uint64),
           "top_bit": rng.integers(0, 2**20, n, dtype=np.uint64) | (
               rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))}[kind]
    out = sort_unique_runs([ids[:n // 3], ids[n // 3:]])  # views of one array, as a spill gives
    assert out.dtype == np.uint64
    np.testing.assert_array_equal(out, np.unique(ids))


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("kind", ["wide", "narrow", "one_bucket", "top_bit"])
def test_sort_unique_runs_equals_numpy_on_the_concatenation(kind, threads, monkeypatch, sorter):
    # runs of very different lengths (a forward layer's chunks), empty ones among them, repeats
    # within and across runs; the list is emptied
    monkeypatch.setenv("STRONGSOLVE_THREADS", threads)
    monkeypatch.setattr(sort_module, "PARALLEL_SORT_MIN", 1000)
    rng = np.random.default_rng(7 + len(kind))
    lengths = [0, 1, 3000, 0, 17, 25_000, 5, 12_000, 0, 640]
    high = {"wide": 2**60, "narrow": 900, "one_bucket": 2**12, "top_bit": 2**20}[kind]
    runs = [rng.integers(0, high, k, dtype=np.uint64) for k in lengths]
    if kind == "one_bucket":
        runs[5] = np.full(25_000, 3, np.uint64)
    if kind == "top_bit":
        runs = [r | (rng.integers(0, 2, r.size, dtype=np.uint64) << np.uint64(63)) for r in runs]
    expected = np.unique(np.concatenate(runs))
    given_runs = list(runs)
    out = sort_unique_runs(given_runs)
    assert out.dtype == np.uint64 and given_runs == []
    np.testing.assert_array_equal(out, expected)
    assert sort_unique_runs([]).size == 0
    with pytest.raises(TypeError, match="sort_unique_runs needs uint64 IDs, got int64"):
        sort_unique_runs([runs[2], runs[5].astype(np.int64)])


def test_sort_unique_rejects_other_dtypes():
    with pytest.raises(TypeError, match="uint64"):
        sort_unique(np.arange(5, dtype=np.int64))


@pytest.mark.parametrize("n", [0, 1, 5, 3000])
def test_radix_argsort_is_numpys_stable_argsort(n):
    keys = np.random.default_rng(n).integers(0, 50, n).astype(np.uint64) << np.uint64(20)
    np.testing.assert_array_equal(radix_argsort(keys), np.argsort(keys, kind="stable"))


def first_occurrences(ids):
    """Reference for ``distinct``: numpy's unique values, put back in order of first occurrence."""
    _, first = np.unique(ids, return_index=True)
    return ids[np.sort(first)]


@pytest.mark.parametrize("n", [0, 1, 2, 1000, 70_000])
def test_distinct_keeps_first_occurrences(n):
    rng = np.random.default_rng(n)
    ids = rng.integers(0, max(1, n // 3), n).astype(np.uint64) * np.uint64(0x10001)  # many repeats
    if n > 1:
        ids[rng.integers(0, n, 3)] = 0  # 0 is the table's free marker, handled apart
    np.testing.assert_array_equal(distinct(ids), first_occurrences(ids))
    values, index = distinct_index(ids)
    np.testing.assert_array_equal(values, first_occurrences(ids))
    np.testing.assert_array_equal(values[index], ids)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=500), st.integers(0, 6))
def test_distinct_random_bit_patterns(values, repeat_bits):
    # values folded onto few distinct ones so that collisions and repeats both happen
    ids = np.array(values, np.uint64) >> np.uint64(repeat_bits * 10)
    np.testing.assert_array_equal(distinct(ids), first_occurrences(ids))
    values, index = distinct_index(ids)
    np.testing.assert_array_equal(values, first_occurrences(ids))
    assert index.dtype == np.int64
    np.testing.assert_array_equal(values[index], ids)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=300), max_size=9), st.integers(0, 60))
def test_merge_unique_is_the_union(runs, shift):
    # shifted down so that runs share values (ties advance both sides of a merge)
    runs = [np.unique(np.array(r, np.uint64) >> np.uint64(shift)) for r in runs]
    expected = np.unique(np.concatenate(runs)) if runs else np.empty(0, np.uint64)
    out = merge_unique(runs)
    assert out.dtype == np.uint64
    np.testing.assert_array_equal(out, expected)


def test_merge_unique_rejects_other_dtypes():
    with pytest.raises(TypeError, match="uint64"):
        merge_unique([np.arange(5, dtype=np.uint64), np.arange(5, dtype=np.int64)])
