"""Compact 2048 IDs: base adjustment and cell omission of Kaneko & Yamashita 2025.

The reference below is plain Python on digit lists, written apart from the numba kernels.
"""

import functools
import itertools

import numpy as np
import pytest
from numba import njit

from strongsolve.games.g2048.encoding.compact_ids import (board_id, compact_id, decode_ids,
                                                          encode_ids, kernel_params, max_exponent,
                                                          universe)
from support.g2048 import all_boards_by_age

OPTIONS = list(itertools.product([False, True], repeat=2))  # (base_adjust, omit_cell)


def exps_of(board_id, cells):
    return [(board_id >> (4 * i)) & 15 for i in range(cells)]


def age_of(board_id, cells):
    return sum(1 << e for e in exps_of(board_id, cells) if e)


def reference_code(board_id, cells, age, base_adjust, omit_cell):
    """Digits e_i in base m+1 (or 16), cell 0 least significant; cell 0 dropped when omitted."""
    m = min(15, age.bit_length() - 1) if age >= 2 else 0
    base = m + 1 if base_adjust else 16
    digits = exps_of(board_id, cells)[1 if omit_cell else 0:]
    return sum(e * base ** k for k, e in enumerate(digits))


@functools.lru_cache(maxsize=None)
def random_layers(rows, cols, count, seed, num_layers=30):
    """Random boards of a shape, grouped by age: the ``num_layers`` largest groups, as
    {age: sorted unique uint64 IDs}. Tiles up to 2^7 keep the ages few, so the groups are large."""
    cells = rows * cols
    rng = np.random.default_rng(seed)
    e = rng.integers(1, 8, (count, cells))
    e[rng.random(e.shape) < 0.45] = 0
    ids = (e.astype(np.uint64) << (4 * np.arange(cells, dtype=np.uint64))).sum(1, dtype=np.uint64)
    ages = np.where(e > 0, 1 << e, 0).sum(1)
    layers = {int(a): np.unique(ids[ages == a]) for a in np.unique(ages)}
    return dict(sorted(layers.items(), key=lambda kv: -len(kv[1]))[:num_layers])


def check_layer(ids, rows, cols, age, base_adjust, omit_cell, reference_sample=50):
    codes = encode_ids(ids, rows, cols, age, base_adjust, omit_cell)
    # order kept: a sorted unique layer gives strictly increasing codes
    assert np.all(codes[1:] > codes[:-1])
    assert int(codes[-1]) < universe(rows, cols, age, base_adjust, omit_cell)
    assert np.array_equal(decode_ids(codes, rows, cols, age, base_adjust, omit_cell), ids)
    scratch = codes.copy()
    assert decode_ids(scratch, rows, cols, age, base_adjust, omit_cell, in_place=True) is scratch
    assert np.array_equal(scratch, ids)
    step = max(1, len(ids) // reference_sample)
    for b, c in zip(ids[::step], codes[::step]):
        assert int(c) == reference_code(int(b), rows * cols, age, base_adjust, omit_cell)


@pytest.mark.parametrize("base_adjust, omit_cell", OPTIONS)
@pytest.mark.parametrize("rows, cols", [(4, 3), (3, 3), (4, 4), (1, 2)])
def test_random_layers_round_trip_and_order(rows, cols, base_adjust, omit_cell):
    layers = random_layers(rows, cols, 40_000, seed=rows * 10 + cols)
    assert sum(len(v) for v in layers.values()) > (300 if rows * cols > 2 else 3)
    for age, ids in layers.items():
        check_layer(ids, rows, cols, age, base_adjust, omit_cell)


@pytest.mark.parametrize("base_adjust, omit_cell", OPTIONS)
def test_every_2x2_board(base_adjust, omit_cell):
    # exhaustive: all 8^4 boards with tiles up to 2^7; every age group keeps its order and
    # round-trips
    layers = all_boards_by_age(2, 2)
    assert sum(len(v) for v in layers.values()) == 8 ** 4 and len(layers) == 129
    for age, ids in layers.items():
        check_layer(ids, 2, 2, age, base_adjust, omit_cell, reference_sample=10)


def test_real_2x3_layers():
    from strongsolve.games.g2048.stages.forward import forward_layers

    seen = 0
    for layer in forward_layers(2, 3, 120):
        if layer.afterstates.size:
            for base_adjust, omit_cell in OPTIONS:
                check_layer(layer.afterstates, 2, 3, layer.age, base_adjust, omit_cell)
            seen += 1
    assert seen >= 50


def test_dropping_the_last_cell_would_break_order():
    # why cell 0 is the omitted one: on a 1x3 board at age 4, [0, 4, 0] < [2, 0, 2] as IDs, but
    # without the most significant (last) cell their codes compare the other way
    a, b = 0x020, 0x101
    assert age_of(a, 3) == age_of(b, 3) == 4 and a < b
    assert (a & 0xFF) > (b & 0xFF)
    codes = encode_ids(np.array([a, b], np.uint64), 1, 3, 4, False, True)
    assert list(codes) == [0x02, 0x10]


def test_universe_values():
    assert universe(4, 3, 4) == 16 ** 12 == 2 ** 48
    assert universe(4, 3, 4, omit_cell=True) == 2 ** 44
    assert universe(4, 3, 4, base_adjust=True) == 3 ** 12  # m = 2: tiles up to 4
    assert universe(4, 3, 4, True, True) == 3 ** 11
    assert universe(4, 3, 7, True) == 3 ** 12
    assert universe(4, 3, 8, True) == 4 ** 12
    assert universe(4, 3, 16380, True, True) == 14 ** 11  # last 4x3 age: tiles up to 2^13
    assert universe(4, 4, 200_000, True) == 16 ** 16 == 2 ** 64  # m capped at 15
    assert universe(4, 4, 200_000) == 2 ** 64
    assert [max_exponent(a) for a in (0, 1, 2, 3, 4, 1023, 1024, 1 << 20)] == [0, 0, 1, 1, 2, 9, 10, 15]
    # the universe bounds every code of a full layer: the largest 2x2 code at each age is below it
    for age, ids in all_boards_by_age(2, 2).items():
        for base_adjust, omit_cell in OPTIONS:
            u = universe(2, 2, age, base_adjust, omit_cell)
            top = max(reference_code(int(b), 4, age, base_adjust, omit_cell) for b in ids[-3:])
            assert top < u


def test_in_place_decoding_on_numba_threads():
    # a layer above PARALLEL_MIN decodes on numba's threads, in place as in a new array
    from strongsolve.games.g2048.encoding.compact_ids import PARALLEL_MIN
    layers = random_layers(4, 3, 40_000, seed=43)
    age, ids = next(iter(layers.items()))
    ids = np.tile(ids, -(-PARALLEL_MIN // ids.size) + 1)
    assert ids.size > PARALLEL_MIN
    codes = encode_ids(ids, 4, 3, age, True, True)
    assert np.array_equal(decode_ids(codes, 4, 3, age, True, True), ids)
    assert np.array_equal(decode_ids(codes, 4, 3, age, True, True, in_place=True), ids)
    assert np.array_equal(codes, ids)


def test_errors_name_the_bad_value():
    ids = np.array([0x11, 0x12], np.uint64)  # ages 4 and 6
    with pytest.raises(ValueError, match=r"board ID 0x12 at position 1 has tiles summing to 6, not "
                                         r"the layer's age 4"):
        encode_ids(ids, 2, 2, 4)
    with pytest.raises(ValueError, match=r"board ID 0x10001 at position 0 has bits above the last "
                                         r"cell of a 2x2 board"):
        encode_ids(np.array([0x10001], np.uint64), 2, 2, 4)
    with pytest.raises(ValueError, match=r"code 81 at position 0 is outside the universe 81"):
        decode_ids(np.array([81], np.uint64), 2, 2, 4, True, False)
    # omitted cell 0 is rebuilt as age - (sum of the others): at age 4, code 1 (a 2 in cell 1)
    # leaves a 2; code 3 (an 8 in cell 1) would leave -4; at age 10, code 2 (a 4) would leave 6
    assert list(decode_ids(np.array([1], np.uint64), 2, 2, 4, False, True)) == [0x11]
    with pytest.raises(ValueError, match=r"code 3 at position 1 does not decode to a board of age 4"):
        decode_ids(np.array([1, 3], np.uint64), 2, 2, 4, False, True)
    with pytest.raises(ValueError, match=r"code 2 at position 0 does not decode to a board of age 10"):
        decode_ids(np.array([2], np.uint64), 2, 2, 10, False, True)
    # in place: the bad code is still named (its place is not overwritten)
    with pytest.raises(ValueError, match=r"code 3 at position 1 does not decode to a board of age 4"):
        decode_ids(np.array([1, 3], np.uint64), 2, 2, 4, False, True, in_place=True)
    with pytest.raises(ValueError, match=r"code 81 at position 1 is outside the universe 81"):
        decode_ids(np.array([4, 81], np.uint64), 2, 2, 4, True, False, in_place=True)
    with pytest.raises(ValueError, match=r"in_place=True\) needs a contiguous uint64 array of codes, got "
                                         r"uint64\[2\]; pass in_place=False"):
        decode_ids(np.arange(4, dtype=np.uint64)[::2], 2, 2, 4, False, True, in_place=True)
    with pytest.raises(ValueError, match=r"ids must be a one-dimensional uint64 array"):
        encode_ids(np.array([1, 2]), 2, 2, 4)
    with pytest.raises(ValueError, match=r"age -2 is not allowed"):
        universe(2, 2, -2)
    with pytest.raises(ValueError, match=r"rows = 5 is not allowed"):
        universe(5, 2, 4)
    with pytest.raises(ValueError, match=r"omit_cell must be True or False"):
        universe(2, 2, 4, False, 1)


@njit
def _round_trip_in_kernel(ids, cells, age, base, omit):
    out = np.empty_like(ids)
    for t in range(ids.shape[0]):
        b, ok = board_id(compact_id(ids[t], cells, age, base, omit), cells, age, base, omit)
        out[t] = b if ok else np.uint64(0)
    return out


@pytest.mark.parametrize("base_adjust, omit_cell", OPTIONS)
def test_scalar_kernels_from_njit(base_adjust, omit_cell):
    # the scalar kernels a backward pass calls inside its own njit loop
    age, ids = next(iter(random_layers(4, 3, 40_000, seed=43).items()))
    params = kernel_params(4, 3, age, base_adjust, omit_cell)
    assert np.array_equal(_round_trip_in_kernel(ids, *params), ids)


@pytest.mark.parametrize("base_adjust, omit_cell", OPTIONS)
def test_numba_threads_code_as_the_calling_thread(monkeypatch, base_adjust, omit_cell):
    # layers of at least PARALLEL_MIN IDs are coded on numba's threads, smaller ones serially
    #; both paths must give the reference codes
    from strongsolve.games.g2048.encoding import compact_ids
    layers = random_layers(4, 3, 40_000, seed=7)
    monkeypatch.setattr(compact_ids, "PARALLEL_MIN", 1)
    for age, ids in layers.items():
        check_layer(ids, 4, 3, age, base_adjust, omit_cell)
    monkeypatch.setattr(compact_ids, "PARALLEL_MIN", 1 << 40)
    for age, ids in layers.items():
        check_layer(ids, 4, 3, age, base_adjust, omit_cell)
