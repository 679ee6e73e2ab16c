"""The values solver's starting values (stages/initial.py): each tuple's turns to finish alone on
the board against naive.solo_turns (plain-Python Gauss-Seidel over ordered tuples, no shared code)
and a hand-solved board; the start against the normal approximation written out here; the solve from
it against the solve from zeros (the same values, fewer sweeps: regression counts measured with this
code, 2026-12-07)."""

import functools
import math

import numba
import numpy as np
import pytest

from naive import ludo as naive
from strongsolve.games.ludo import rules
from strongsolve.games.ludo.stages import initial
from strongsolve.games.ludo.stages import values as ludo_values
from support.ludo import bench_board, naive_board

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py

BOARDS = [
    # a shortcut 1->3, a trap 3->2, a safe cell, a d2
    ({"length": 4, "jumps": {1: 3, 3: 2}, "safe": [2], "die": 2}, 3),
    # a loaded d3 and a bonus roll on 3
    ({"length": 3, "jumps": {1: 2}, "die": ["1/2", "1/4", "1/4"], "roll_again_on": 3}, 3),
    # a trap back 5->1 and a bonus roll on the loaded face 4
    ({"length": 7, "jumps": {3: 6, 5: 1}, "die": ["2/5", "1/5", "1/5", "1/5"], "roll_again_on": 4},
     2),
]


@pytest.mark.parametrize("rule", [True, False])
@pytest.mark.parametrize("data, pieces", BOARDS)
def test_turns_to_finish_match_the_plain_python_reference(data, pieces, rule):
    data = dict(data, pass_by_overshoot=rule)
    race = ludo_values.race_tables(rules.Board.from_mapping(data), pieces)
    mean, variance = initial.turn_moments(race)
    ref_mean, ref_variance = naive.solo_turns(naive_board(data), pieces, rule)
    for i, t in enumerate(race.tuples):
        cells = tuple(int(c) for c in race.cells[t])
        assert mean[i] == pytest.approx(ref_mean[cells], rel=1e-9, abs=1e-12), cells
        assert variance[i] == pytest.approx(ref_variance[cells], rel=1e-9, abs=1e-12), cells


def test_turns_to_finish_on_a_board_solved_by_hand():
    # one piece, cells 0..2, a d2, overshoot stays: from 1 it finishes on a 1 (geometric, p = 1/2:
    # mean 2, variance 2); from 0 a 2 finishes, a 1 leads to 1: mean 1/2 + 1/2 (1 + 2) = 2,
    # second moment 1/2 + 1/2 (1 + 2 * 2 + 6) = 6, variance 2
    board = rules.Board.from_mapping({"length": 2, "die": 2})
    race = ludo_values.race_tables(board, 1)
    mean, variance = initial.turn_moments(race)
    cells = [int(race.cells[t[0]]) for t in race.tuples]
    assert dict(zip(cells, mean.tolist())) == pytest.approx({0: 2.0, 1: 2.0, 2: 0.0}, rel=1e-9)
    assert dict(zip(cells, variance.tolist())) == pytest.approx({0: 2.0, 1: 2.0, 2: 0.0}, rel=1e-9)


@functools.lru_cache(maxsize=None)
def start(name, pieces):
    race = ludo_values.race_tables(bench_board(name), pieces)
    value = np.empty((race.n_tuples, race.n_tuples))
    initial.fill_independent_race(race, value)
    return race, value


def test_the_start_is_the_normal_approximation_of_the_independent_race():
    race, value = start("small9", 3)
    mean, variance = initial.turn_moments(race)
    for i in range(race.n_tuples):
        for j in range(race.n_tuples):
            if race.home in (i, j):
                expected = 0.0
            else:
                z = (mean[j] - mean[i] + 0.5) / math.sqrt(2 * (variance[i] + variance[j]))
                expected = 0.5 * math.erfc(-z)
            assert value[i, j] == pytest.approx(expected, rel=1e-12, abs=1e-15), (i, j)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_the_start_does_not_depend_on_the_thread_count():
    race, one = start("quarter14", 3)
    ludo_values.set_threads(2)
    two = np.empty_like(one)
    initial.fill_independent_race(race, two)
    assert np.array_equal(one, two)


# (board, pieces): sweeps to 1e-13 with reduced rank extrapolation from zeros and from the start
COUNTS = {("small9", 3): (34, 28), ("quarter14", 3): (36, 30)}


@pytest.mark.parametrize("name, pieces", list(COUNTS))
def test_from_the_start_the_same_values_as_from_zeros_in_fewer_sweeps(name, pieces):
    board = bench_board(name)
    zero = ludo_values.solve_values(board, pieces, tol=1e-13, start="zero")
    warm = ludo_values.solve_values(board, pieces, tol=1e-13)
    assert np.abs(warm.value - zero.value).max() <= 1e-12
    assert (zero.sweeps, warm.sweeps) == COUNTS[name, pieces]


def test_an_unknown_start_is_refused():
    with pytest.raises(ValueError, match="start must be one of independent, zero, got 'ones'"):
        ludo_values.solve_values(bench_board("small9"), 3, start="ones")
