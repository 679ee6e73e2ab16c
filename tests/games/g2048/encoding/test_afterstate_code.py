"""Stored afterstate layers: Elias-Fano over compact IDs, format 2, and the
reader of format 1 (raw IDs).

Expected look-ups come from ``numpy.searchsorted`` on the raw IDs, expected sizes from an
Elias-Fano code of the raw IDs built here, apart from the code under test.
"""

import json
import os
import shutil

import numpy as np
import pytest
from numba import njit

from strongsolve.codecs.eliasfano import EliasFanoBuilder
from strongsolve.games.g2048.stages import pipeline
from strongsolve.games.g2048.encoding.afterstate_code import (AFTERSTATE_FORMAT, AfterstateLayer,
                                                              CompactLayer, encode_layer,
                                                              from_stored)
from strongsolve.games.g2048.encoding.expand import _REACHED, layer_index_of_increasing, layer_size
from strongsolve.games.g2048.saved import Run
from strongsolve.games.g2048.advice import Solution
from strongsolve.store.errors import CorruptLayerError
from strongsolve.store.layers import read_layer, write_layer
from support.g2048 import all_boards_by_age


@njit
def look_up(layer, xs):
    out = np.empty(xs.shape[0], np.int64)
    layer_index_of_increasing(layer, xs, out)
    return out, layer_size(layer)


def expected_index(ids, xs):
    rank = np.searchsorted(ids, xs)
    hit = (rank < ids.size) & (ids[np.minimum(rank, max(ids.size - 1, 0))] == xs)
    return np.where(hit, rank, -1)


def raw_code(ids):
    """Format 1 as first written: the Elias-Fano code of the raw IDs, universe max + 1."""
    builder = EliasFanoBuilder(ids.size, int(ids[-1]) + 1 if ids.size else 1)
    builder.extend(ids)
    seq = builder.build()
    words, ef_attrs = seq.to_words()
    return seq, {"words": words}, {"eliasfano": ef_attrs,
                                   "bits_per_afterstate": seq.size_in_bits / max(ids.size, 1)}


@pytest.mark.parametrize("rows, cols", [(2, 2), (1, 4)])
def test_every_board_of_an_age_round_trips_and_is_found(rows, cols):
    # every board with tiles up to 2^7, by age: members, and non-members of the age and of others
    by_age = all_boards_by_age(rows, cols)
    rng = np.random.default_rng(rows * 10 + cols)
    for age in [a for a in by_age if a >= 4 and by_age[a].size >= 4][::3]:
        everything = by_age[age]
        ids = np.sort(rng.choice(everything, everything.size // 2, replace=False))
        layer, arrays, attrs = encode_layer(ids, rows, cols, age)
        assert attrs["afterstate_format"] == AFTERSTATE_FORMAT == 2
        opened = from_stored(arrays, attrs, rows, cols, age)
        assert np.array_equal(opened.ids(), ids) and np.array_equal(layer.ids(), ids)
        others = np.concatenate([by_age[a][:20] for a in by_age if a != age])
        xs = np.sort(np.concatenate([everything, others, [np.uint64(_REACHED)],
                                     [np.uint64(1) << np.uint64(4 * rows * cols)]]).astype(np.uint64))
        want = expected_index(ids, xs)
        got, size = look_up(opened.arrays, xs)
        assert size == ids.size
        assert np.array_equal(got, want)
        assert np.array_equal(opened.index_of_increasing(xs), want)
        out = np.empty(xs.size, np.int64)
        layer_index_of_increasing(opened.arrays, xs, out)  # the Python path of the dispatch
        assert np.array_equal(out, want)


def test_an_empty_layer_codes_and_answers_nothing():
    layer, arrays, attrs = encode_layer(np.empty(0, np.uint64), 3, 3, 20)
    opened = from_stored(arrays, attrs, 3, 3, 20)
    assert opened.ids().size == 0 and attrs["bits_per_afterstate"] == 0.0
    got, size = look_up(opened.arrays, np.array([0x121], np.uint64))
    assert size == 0 and got.tolist() == [-1]


def test_format_1_raw_ids_are_still_read():
    ids = all_boards_by_age(2, 2)[20]
    seq, arrays, attrs = raw_code(ids)
    opened = from_stored(arrays, attrs, 2, 2, 20)  # no afterstate_format: format 1
    assert not opened.compact and isinstance(opened, AfterstateLayer)
    assert not isinstance(opened.arrays, CompactLayer)
    assert np.array_equal(opened.ids(), ids)
    xs = np.sort(np.concatenate([ids, all_boards_by_age(2, 2)[18]]))
    assert np.array_equal(look_up(opened.arrays, xs)[0], expected_index(ids, xs))


@pytest.fixture(scope="module")
def run_2x3(solved):
    return Run(solved(2, 3), 2, 3)


def test_stored_layers_are_compact_and_smaller_than_raw(run_2x3):
    compact_bits = raw_bits = 0
    for n in run_2x3.ages():
        arrays, attrs = read_layer(run_2x3.afterstate_path(n))
        ids = run_2x3.load_afterstates(n)[0]
        assert attrs["afterstate_format"] == 2
        assert attrs["id_code"]["base"] == min(15, n.bit_length() - 1) + 1  # largest exponent + 1
        assert attrs["id_code"]["digits"] == 5
        assert attrs["num_afterstates"] == ids.size
        assert np.all(ids[1:] > ids[:-1])
        compact_bits += attrs["eliasfano"]["size_in_bits"]
        raw_bits += raw_code(ids)[0].size_in_bits
    assert compact_bits < 0.8 * raw_bits
    doc = json.loads((run_2x3.directory / "solution.json").read_text())
    assert doc["afterstate_bytes"] * 8 == compact_bits


def rewrite(path, arrays, attrs):
    shutil.rmtree(path)
    write_layer(path, arrays, attrs)


def test_a_format_1_layer_in_a_run_gives_the_same_ids_and_values(run_2x3, tmp_path):
    directory = tmp_path / "run"
    shutil.copytree(run_2x3.directory, directory)
    run = Run(directory, 2, 3)
    n = 40
    before = Solution(run_2x3.directory)
    ids, attrs = run.load_afterstates(n)
    keep = {k: v for k, v in attrs.items()
            if k not in ("afterstate_format", "id_code", "eliasfano", "bits_per_afterstate",
                         "format", "arrays", "complete", "attrs_checksum")}
    _, arrays, code_attrs = raw_code(ids)
    rewrite(run.afterstate_path(n), arrays, dict(keep, **code_attrs))
    assert "afterstate_format" not in read_layer(run.afterstate_path(n))[1]
    assert np.array_equal(run.load_afterstates(n)[0], ids)
    after = Solution(directory)
    assert np.array_equal(after.layer(n)[1], before.layer(n)[1])
    board = int(ids[len(ids) // 2])
    assert after.afterstate_value(board) == before.afterstate_value(board)


@pytest.mark.parametrize("change, message", [
    ({"afterstate_format": 99}, "afterstate format 99 is unknown"),
    ({"id_code": {"base_adjust": True, "omit_cell": True, "base": 16, "digits": 5}},
     "disagrees with a 2x3 layer of age 40"),
])
def test_an_unreadable_layer_names_itself_and_the_rebuild(run_2x3, tmp_path, change, message):
    directory = tmp_path / "run"
    shutil.copytree(run_2x3.directory, directory)
    run = Run(directory, 2, 3)
    path = run.afterstate_path(40)
    arrays, attrs = read_layer(path)
    keep = {k: v for k, v in attrs.items()
            if k not in ("format", "arrays", "complete", "attrs_checksum")}
    rewrite(path, arrays, dict(keep, **change))
    with pytest.raises(CorruptLayerError, match=message) as err:
        run.load_afterstates(40)
    assert str(path) in str(err.value) and "rm -rf" in str(err.value)


def test_a_code_that_decodes_to_no_board_of_the_age_is_corrupt(run_2x3, tmp_path):
    # a valid Elias-Fano code whose values are not compact IDs of the age: caught at decode
    directory = tmp_path / "run"
    shutil.copytree(run_2x3.directory, directory)
    run = Run(directory, 2, 3)
    path = run.afterstate_path(40)
    arrays, attrs = read_layer(path)
    keep = {k: v for k, v in attrs.items()
            if k not in ("format", "arrays", "complete", "attrs_checksum", "eliasfano")}
    builder = EliasFanoBuilder(2, 4)
    builder.extend(np.array([0, 3], np.uint64))  # code 0: all cells but cell 0 empty, tile 40
    words, ef_attrs = builder.build().to_words()
    rewrite(path, {"words": words}, dict(keep, eliasfano=ef_attrs))
    with pytest.raises(CorruptLayerError, match="does not decode to boards of age 40"):
        run.load_afterstates(40)


@pytest.mark.slow
def test_3x3_expected_score_is_bit_for_bit_what_raw_ids_gave(tmp_path):
    # 5468.486797410265: the 3x3 expected score of the solve with raw stored IDs (main at a2036eb,
    # `strongsolve 2048 solve --rows 3 --cols 3`); the stored IDs must not change a value
    with open(os.devnull, "w") as log:
        doc = pipeline.solve(tmp_path / "run", 3, 3, log=log)
    assert doc["expected_score"] == 5468.486797410265
    assert doc["afterstate_bytes"] * 8 <= 14.5 * doc["num_afterstates"]
