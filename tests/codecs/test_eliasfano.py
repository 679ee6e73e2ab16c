"""Elias-Fano codec: every query against numpy.searchsorted on a plain sorted array."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from strongsolve.codecs.eliasfano import (
    EliasFano,
    EliasFanoBuilder,
    bits_bound,
    ef_access,
    ef_index_of,
    ef_layout,
    load_zarr,
    save_zarr,
)

TOP = 1 << 64
RATES = (1, 2, 3, 512)


def build(values, universe, sample_rate, chunk=None):
    values = np.asarray(values, np.uint64)
    b = EliasFanoBuilder(len(values), universe, sample_rate)
    step = chunk or max(1, len(values))
    for first in range(0, len(values), step):
        b.extend(values[first:first + step])
    return b.build()


def queries(values, universe, rng):
    """Members, their neighbours, both ends of the universe and of uint64, random points."""
    v = [int(x) for x in values]
    pts = set(v) | {x + 1 for x in v} | {x - 1 for x in v}
    pts |= {0, 1, universe - 1, universe, universe + 1, TOP - 1, TOP - 2}
    hi = min(universe, TOP - 1)
    if hi > 0:
        pts |= {int(x) for x in rng.integers(0, hi, 200, dtype=np.uint64, endpoint=True)}
    return np.array(sorted(x for x in pts if 0 <= x < TOP), np.uint64)


def check_all(seq, values, universe, rng):
    values = np.asarray(values, np.uint64)
    n = len(values)
    assert len(seq) == n and seq.n == n and seq.universe == universe
    arrays, attrs = seq.to_arrays()
    assert sum(a.nbytes for a in arrays.values()) == -(-seq.size_in_bits // 8)
    assert seq.size_in_bits % 64 == 0
    # access
    assert np.array_equal(seq.access_batch(np.arange(n)), values)
    for i in list(range(min(n, 5))) + list(range(max(0, n - 5), n)):
        assert seq.access(i) == int(values[i])
    # iteration
    for chunk in (1, 7, 1 << 20):
        parts = list(seq.iter_chunks(chunk))
        assert all(p.dtype == np.uint64 and 0 < len(p) <= chunk for p in parts)
        got = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
        assert np.array_equal(got, values)
        # the whole sequence in parallel blocks of the same size
        whole = seq.decode_all(chunk)
        assert whole.dtype == np.uint64 and np.array_equal(whole, values)
    # rank, successor, index_of, contains
    xs = rng.permutation(queries(values, universe, rng))
    rank = np.searchsorted(values, xs, side="left").astype(np.int64)
    member = (rank < n) & (values[np.minimum(rank, max(n - 1, 0))] == xs) if n else rank < 0
    assert np.array_equal(seq.rank_batch(xs), rank)
    idx, val = seq.successor_batch(xs)
    assert np.array_equal(idx, rank)
    assert np.array_equal(val, np.where(rank < n, values[np.minimum(rank, max(n - 1, 0))] if n
                                        else 0, 0).astype(np.uint64))
    assert np.array_equal(seq.index_of_batch(xs), np.where(member, rank, -1))
    order = np.argsort(xs, kind="stable")  # the same queries in increasing order (with repeats)
    assert np.array_equal(seq.index_of_increasing(xs[order]), np.where(member, rank, -1)[order])
    assert np.array_equal(seq.contains_batch(xs), member)
    for x, r, m in list(zip(xs, rank, member))[:60]:
        x, r = int(x), int(r)
        assert seq.rank(x) == r
        assert seq.index_of(x) == (r if m else -1)
        assert seq.contains(x) == bool(m) == (x in seq)
        assert seq.successor(x) == (None if r == n else (r, int(values[r])))


def _random_sorted(rng, n, lo, hi):
    """n distinct sorted values in [lo, hi) (Python ints, hi may be 2**64)."""
    out = set()
    while len(out) < n:
        out |= {lo + int(x) for x in rng.integers(0, hi - lo, n, dtype=np.uint64)}
    return sorted(out)[:n] if n else []


def cases():
    rng = np.random.default_rng(20250301)
    near_top = _random_sorted(rng, 400, TOP - 5000, TOP)
    return {
        "empty_U0": ([], 0),
        "empty": ([], 100),
        "empty_U2^64": ([], TOP),
        "one_zero": ([0], 1),
        "one_mid": ([5], 10),
        "one_top": ([TOP - 1], TOP),
        "one_zero_U2^64": ([0], TOP),
        "dense_all": (list(range(1000)), 1000),
        "dense_half": (list(range(0, 2000, 2)), 2000),
        "sparse": (_random_sorted(rng, 300, 0, 1 << 40), 1 << 40),
        "sparse_U2^64": (_random_sorted(rng, 300, 0, TOP), TOP),
        "near_top": (near_top, TOP),
        "both_ends": ([0] + _random_sorted(rng, 200, 1, 999_999) + [999_999], 1_000_000),
        "both_ends_U2^64": ([0, 1, TOP // 2, TOP - 2, TOP - 1], TOP),
        # a big bucket (binary search of the low bits) and long runs of zeros between clusters
        "clusters": (list(range(2000)) + [(1 << 50) + 3 * i for i in range(2000)]
                     + [(1 << 59) + i for i in range(0, 64000, 16)], 1 << 60),
        # clustered like canonical 2048 boards: buckets of 40..1500 values whose ends fall anywhere
        # between two fence entries (the in-bucket search starts from the fence)
        "clusters_fenced": (sorted({(c << 40) + v for c in range(1, 40)
                                    for v in _random_sorted(rng, 40 + 37 * c, 0, 1 << 20)}),
                            1 << 46),
    }


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("name", list(cases()))
def test_queries_match_searchsorted(name, rate):
    values, universe = cases()[name]
    rng = np.random.default_rng(len(values) + rate)
    seq = build(values, universe, rate)
    check_all(seq, values, universe, rng)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 64).flatmap(
    lambda bits: st.tuples(st.just(1 << bits),
                           st.sets(st.integers(0, (1 << bits) - 1), max_size=300))),
       st.integers(1, 5), st.integers(0, 2**32))
def test_queries_property(universe_values, rate, seed):
    universe, values = universe_values
    values = sorted(values)
    check_all(build(values, universe, rate), values, universe, np.random.default_rng(seed))


def test_chunked_build_equals_one_shot():
    rng = np.random.default_rng(7)
    values = np.array(_random_sorted(rng, 5000, 0, 1 << 30), np.uint64)
    ref, _ = build(values, 1 << 30, 3).to_arrays()
    cuts = np.sort(rng.choice(np.arange(1, 5000), 40, replace=False))
    b = EliasFanoBuilder(5000, 1 << 30, 3)
    for part in np.split(values, cuts):
        if len(part) == 1:
            b.push(int(part[0]))
        else:
            b.extend(part.astype(np.int64))  # any non-negative integer dtype is accepted
        b.extend(np.zeros(0, np.uint64))
    got, attrs = b.build().to_arrays()
    for name in ref:
        assert np.array_equal(got[name], ref[name]), name
    assert attrs["n"] == 5000 and attrs["universe"] == str(1 << 30)


@pytest.mark.parametrize("chunks, message", [
    ([[1, 5, 4]], r"value 4 at position 2 is decreasing: the previous value is 5"),
    ([[1, 5], [3]], r"value 3 at position 2 is decreasing: the previous value is 5"),
    ([[1, 5, 5]], r"value 5 at position 2 is repeated"),
    ([[1, 5], [5]], r"value 5 at position 2 is repeated"),
    ([[1, 100]], r"value 100 at position 1 is outside the universe \[0, 100\)"),
    ([[1, 2], [3, 4]], r"value 4 at position 3 is one more than the n = 3 values"),
    ([[-1]], r"value -1 at position 0 of values is negative"),
])
def test_builder_rejects_bad_input(chunks, message):
    b = EliasFanoBuilder(3, 100)
    with pytest.raises(ValueError, match=message):
        for chunk in chunks:
            b.extend(np.array(chunk, np.int64))


def test_builder_rejects_bad_push_and_count():
    b = EliasFanoBuilder(3, TOP)
    b.push(TOP - 2)
    with pytest.raises(ValueError, match=r"value 18446744073709551616 at position 1 is outside"):
        b.push(TOP)
    with pytest.raises(ValueError, match=r"value 18446744073709551614 at position 1 is repeated"):
        b.push(TOP - 2)
    with pytest.raises(ValueError, match=r"declared with n = 3 values but 1 were pushed"):
        b.build()
    with pytest.raises(ValueError, match="integer dtype"):
        b.extend(np.array([1.5]))
    with pytest.raises(ValueError, match=r"n = 5 distinct values cannot lie below universe 4"):
        EliasFanoBuilder(5, 4)
    with pytest.raises(ValueError, match=r"universe 18446744073709551617 is out of range"):
        EliasFanoBuilder(1, TOP + 1)
    with pytest.raises(ValueError, match=r"sample_rate 0 is out of range"):
        EliasFanoBuilder(1, 10, 0)


def test_scalar_query_errors():
    seq = build([3, 9], 10, 2)
    with pytest.raises(IndexError, match=r"index 2 is out of range: allowed 0 <= i < 2"):
        seq.access(2)
    with pytest.raises(IndexError, match=r"index -1 at position 1 is out of range"):
        seq.access_batch(np.array([0, -1]))
    with pytest.raises(ValueError, match=r"query -1 is out of range"):
        seq.rank(-1)
    with pytest.raises(ValueError, match=r"query 18446744073709551616 is out of range"):
        seq.index_of(TOP)


def test_layout_low_bits_and_bound():
    # l = max(0, floor(log2(U / n))): the largest l with n * 2**l <= U, capped at 63
    for n, universe in [(1, 1), (1, 2), (3, 7), (3, 24), (3, 25), (1000, 1000), (7, 1 << 40),
                        (1, TOP), (2, TOP), (3, TOP), (TOP - 1, TOP), (1 << 20, (1 << 48) - 1)]:
        lay = ef_layout(n, universe, 8)
        l = max(k for k in range(65) if n << k <= universe)
        assert lay.low_bits == min(l, 63), (n, universe)
        assert lay.num_buckets == ((universe - 1) >> lay.low_bits) + 1
        # the low and high parts stay within the Elias-Fano bound of 2 + ceil(log2(U/n)) bits
        assert n * lay.low_bits + lay.high_len <= n * bits_bound(n, universe)
    assert bits_bound(1000, 1000) == 2
    assert bits_bound(1000, 1001) == 3
    assert bits_bound(3, TOP) == 2 + 63
    assert bits_bound(0, 10) == 0


@njit
def _lookup_all(ef, xs):
    # a game kernel's view: look IDs up inside its own njit loop on the raw arrays
    out = np.empty(xs.shape[0], np.int64)
    for t in range(xs.shape[0]):
        i = ef_index_of(ef, xs[t])
        out[t] = i
        if i >= 0 and ef_access(ef, i) != xs[t]:
            out[t] = -2
    return out


def test_raw_kernel_from_njit():
    values = np.array([2, 3, 5, 7, 11, 13, 1 << 40], np.uint64)
    seq = build(values, 1 << 41, 2)
    xs = np.arange(20, dtype=np.uint64)
    want = np.array([int(np.searchsorted(values, x)) if x in values else -1 for x in xs])
    assert np.array_equal(_lookup_all(seq.arrays, xs), want)
    assert _lookup_all(seq.arrays, np.array([1 << 40], np.uint64))[0] == 6


@pytest.mark.parametrize("name", ["empty", "one_top", "near_top", "clusters"])
def test_zarr_round_trip(tmp_path, name):
    import zarr

    values, universe = cases()[name]
    seq = build(values, universe, 3)
    save_zarr(tmp_path / "ids.zarr", seq)
    with pytest.raises(FileExistsError):
        save_zarr(tmp_path / "ids.zarr", seq)
    assert [p.name for p in tmp_path.iterdir()] == ["ids.zarr"]  # no temporary left behind
    loaded = load_zarr(tmp_path / "ids.zarr")
    check_all(loaded, values, universe, np.random.default_rng(3))
    a, attrs = seq.to_arrays()
    b, attrs_b = loaded.to_arrays()
    assert attrs == attrs_b and all(np.array_equal(a[k], b[k]) for k in a)
    # into an open group, as the layer store does
    group = zarr.open_group(str(tmp_path / "layer.zarr"), mode="w").require_group("ids")
    save_zarr(group, seq)
    check_all(load_zarr(zarr.open_group(str(tmp_path / "layer.zarr"), mode="r")["ids"]),
              values, universe, np.random.default_rng(4))


def test_from_arrays_validates():
    seq = build([1, 4, 9, 16, 25], 30, 2)
    arrays, attrs = seq.to_arrays()
    assert EliasFano.from_arrays(arrays, attrs).index_of(16) == 3

    def broken(**changes):
        a, t = dict(arrays), dict(attrs)
        for key, value in changes.items():
            if key in a:
                a[key] = value
            else:
                t[key] = value
        return a, t

    cases_ = [
        (broken(low=arrays["low"][:-1]), r"array 'low' is uint64\[0\], the layout needs uint64\[1\]"),
        (broken(select1=arrays["select1"].astype(np.int64)), r"array 'select1' is int64\[3\]"),
        (broken(low_bits=3), r"attribute low_bits = 3 disagrees with the layout .*: 2"),
        (broken(n=6), r"array 'high' holds 5 one bits, the layout needs n = 6"),
        (broken(version=99), r"format 'strongsolve.eliasfano' version 99"),
        (broken(high=arrays["high"] ^ np.uint64(1 << 40)), r"array 'high' holds 6 one bits, .* n = 5"),
    ]
    for (a, t), message in cases_:
        with pytest.raises(ValueError, match=message):
            EliasFano.from_arrays(a, t)
    a = dict(arrays)
    del a["select0"]
    with pytest.raises(ValueError, match=r"array 'select0' is missing"):
        EliasFano.from_arrays(a, attrs)
    t = dict(attrs)
    del t["sample_rate"]
    with pytest.raises(ValueError, match=r"attribute 'sample_rate' is missing"):
        EliasFano.from_arrays(arrays, t)


def test_sequence_is_read_only():
    seq = build([1, 2, 3], 4, 1)
    with pytest.raises(ValueError, match="read-only"):
        seq.arrays.high[0] = 0


def test_bench_runs_on_a_small_board(capsys):
    # the benchmark entry point, on the 2x2 board (every layer small), checked against the layout
    import json
    import runpy
    from pathlib import Path

    from strongsolve.games.g2048.encoding.compact_ids import universe
    from strongsolve.games.g2048.stages.forward import forward_layers

    bench = runpy.run_path(str(Path(__file__).resolve().parents[2] / "bench" / "eliasfano.py"))
    report = bench["main"](["--json", "--layers", "2x2", "--max-queries", "64",
                            "--sweep-queries", "64"])
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(report))
    sizes = {layer.age: len(layer.afterstates) for layer in forward_layers(2, 2, None)}
    res = report["shapes"]["2x2"]
    assert {layer["age"]: layer["n"] for layer in res["layers"]} == {
        age: n for age, n in sizes.items() if n}
    for layer in res["layers"]:
        for name, (base_adjust, omit_cell) in bench["OPTIONS"].items():
            o = layer["options"][name]
            U = universe(2, 2, layer["age"], base_adjust, omit_cell)
            assert o["universe"] == str(U)
            assert o["size_in_bits"] == ef_layout(layer["n"], U).size_in_bits
            assert o["bound_bits_per_id"] == bits_bound(layer["n"], U)


def test_decode_all_block_sizes():
    values = list(range(0, 3000, 3))
    seq = build(values, 3000, 8)
    for chunk in (1 << 16, 2**63 - 1):  # the default, and a block longer than the sequence
        assert np.array_equal(seq.decode_all(chunk), np.array(values, np.uint64))
    with pytest.raises(ValueError, match="chunk_size 0 is out of range: allowed chunk_size >= 1"):
        seq.decode_all(0)


def test_index_of_increasing_rejects_decreasing_queries():
    seq = build(np.array([1, 5, 9], np.uint64), 10, 512)
    with pytest.raises(ValueError, match="non-decreasing"):
        seq.index_of_increasing(np.array([5, 1], np.uint64))


def test_words_round_trip_and_wrong_length():
    values = np.array([3, 9, 10, 200, 4000], np.uint64)
    seq = build(values, 5000, 2)
    words, attrs = seq.to_words()
    assert words.dtype == np.uint64 and words.nbytes * 8 == seq.size_in_bits
    back = EliasFano.from_words(words, attrs)
    assert np.array_equal(back.access_batch(np.arange(5)), values)
    with pytest.raises(ValueError, match="layout needs uint64"):
        EliasFano.from_words(words[:-1], attrs)
