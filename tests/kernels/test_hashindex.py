"""kernels.hashindex: every key's value back, absent keys reported, the layout's wrap-around, and
the input checks; against a Python dict."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strongsolve.kernels import hashindex
from strongsolve.kernels.hashindex import _build_range, _home, hash_index, lookup
from strongsolve.parallel import chunk_bounds


def check(keys, values, absent):
    index = hash_index(keys, values)
    assert index.shape == (keys.size + keys.size // 2 + 1, 2) and index.dtype == np.uint64
    out, missing = lookup(index, keys)
    assert missing == 0
    reference = dict(zip(keys.tolist(), values.tolist()))
    assert out.tolist() == [reference[k] for k in keys.tolist()]  # exact: the bits are kept
    out, missing = lookup(index, absent)
    assert missing == absent.size and np.isnan(out).all()
    # both at once, in an order of their own, from a view with a negative stride
    both = np.concatenate([absent, keys, absent])[::-1]
    out, missing = lookup(index, both)
    assert missing == 2 * absent.size
    assert [reference.get(k) for k in both.tolist()] == [None if np.isnan(v) else v for v in out]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 1000, 50_000])
@pytest.mark.parametrize("high", [2**12, 2**48, 2**64 - 1])
def test_lookup_returns_each_value(n, high):
    rng = np.random.default_rng(n)
    ids = np.unique(rng.integers(1, high, 2 * n + 10, dtype=np.uint64, endpoint=True))
    rng.shuffle(ids)
    keys, absent = ids[:n], ids[n:]
    check(keys, rng.normal(size=keys.size) * 1e6, absent)


def test_consecutive_board_like_keys():
    # sorted, dense IDs as a layer holds them (a Fibonacci hash spreads them over the slots)
    keys = np.arange(1, 40_001, dtype=np.uint64) * np.uint64(16)
    check(keys, np.arange(keys.size, dtype=np.float64) / 3, keys[:100] + np.uint64(1))


@settings(max_examples=50, deadline=None)
@given(st.sets(st.integers(1, 2**64 - 1), max_size=300),
       st.sets(st.integers(1, 2**64 - 1), max_size=50))
def test_lookup_random_keys(keys, others):
    keys = np.array(sorted(keys), dtype=np.uint64)
    absent = np.array(sorted(others - set(keys.tolist())), dtype=np.uint64)
    check(keys, np.linspace(-1.0, 1.0, keys.size), absent)


def test_probing_wraps_past_the_last_slot():
    # ten keys, sixteen slots: keys whose home is the last slot fill it, then slots 0, 1, ...
    size = np.uint64(10 + 5 + 1)
    last = [k for k in range(1, 200_000) if _home(np.uint64(k), size) == size - np.uint64(1)][:6]
    others = [k for k in range(1, 200_000) if _home(np.uint64(k), size) < 3][:4]
    assert len(last) == 6 and len(others) == 4
    keys = np.array(last + others, dtype=np.uint64)
    index = hash_index(keys, np.arange(10.0))
    assert index[-1, 0] == keys[0] and index[0, 0] == keys[1]  # wrapped to the first slot
    check(keys, np.arange(10.0), np.array([200_001], dtype=np.uint64))


@pytest.mark.parametrize("threads", ["2", "3"])
def test_index_built_on_threads_gives_every_value(threads, monkeypatch):
    # each thread fills its own range of home slots; keys whose probe runs past their range's end
    # (here: many keys homed on each range's last slot, the last range's wrapping to slot 0) are
    # inserted after, across the boundary
    monkeypatch.setenv("STRONGSOLVE_THREADS", threads)
    monkeypatch.setattr(hashindex, "PARALLEL_BUILD_MIN", 1000)
    n = 30_000
    size = n + n // 2 + 1
    bounds = chunk_bounds(size, -(-size // int(threads)))
    ends = {hi - 1 for _, hi in bounds}
    crowded, k = [], 1
    while len(crowded) < 6 * len(ends):
        if int(_home(np.uint64(k), np.uint64(size))) in ends:
            crowded.append(k)
        k += 1
    rng = np.random.default_rng(int(threads))
    others = np.setdiff1d(np.unique(rng.integers(k, 2**63, n, dtype=np.uint64)), crowded)
    keys = np.concatenate([np.array(crowded, np.uint64), others[:n - len(crowded)]])
    rng.shuffle(keys)
    values = rng.normal(size=n)
    deferred = _build_range(keys, values.view(np.uint64), np.zeros((size, 2), np.uint64), *bounds[-1], 32)
    assert deferred.size >= 5  # the last range's crowded keys do run past its end
    check(keys, values, others[n - len(crowded):n - len(crowded) + 500])


def test_key_zero_is_never_found():
    # 0 marks a free slot, so no index holds it, empty or not
    for keys in (np.empty(0, np.uint64), np.arange(1, 100, dtype=np.uint64)):
        out, missing = lookup(hash_index(keys, np.ones(keys.size)), np.zeros(3, np.uint64))
        assert missing == 3 and np.isnan(out).all()


def test_bad_input_is_named():
    index = hash_index(np.arange(1, 4, dtype=np.uint64), np.zeros(3))
    with pytest.raises(TypeError, match="uint64 vector of keys, got int64"):
        lookup(index, np.arange(1, 4))
    with pytest.raises(TypeError, match="hash index"):
        lookup(index[:, 0], np.arange(1, 4, dtype=np.uint64))
    with pytest.raises(TypeError, match="uint64 keys and float64 values, got int64"):
        hash_index(np.arange(1, 4), np.zeros(3))
    with pytest.raises(TypeError, match="float32"):
        hash_index(np.arange(1, 4, dtype=np.uint64), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"one value per key: \(3,\) keys, \(2,\) values"):
        hash_index(np.arange(1, 4, dtype=np.uint64), np.zeros(2))
    with pytest.raises(ValueError, match="key 0 is not allowed"):
        hash_index(np.arange(0, 3, dtype=np.uint64), np.zeros(3))
