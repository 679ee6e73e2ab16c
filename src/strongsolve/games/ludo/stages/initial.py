"""Starting values for the values solver: the race as if no piece could capture.

The sweeps of :mod:`.values` reach the same fixed point from any start; from zeros, the first
sweeps only carry the end of the race back to its beginning (three pieces on
``bench/data/ludo_half30.yaml``: 36 sweeps to 1e-12 with reduced rank extrapolation). This module
starts them from an approximation of the race without captures, where each side only counts its
turns:

1. **Turns to finish.** For each tuple a alone on the board, T_a is the number of turns (a bonus
   roll is part of the same turn) to bring every piece to N when each roll takes the move that least
   expects turns (:func:`turn_moments`: the means by Gauss-Seidel over the tuples from the highest
   progress until they change by at most :data:`TOLERANCE` turns, then the second moments under
   the moves so chosen until they change by at most that, relative).
2. **Who finishes first.** The player to move with tuple a against b wins the independent race when
   T_a <= T_b. With T_a and T_b taken as independent normal variables of those means and variances
   (a continuity correction of half a turn for the integer turns), the starting value is
   ``Phi((mean_b - mean_a + 0.5) / sqrt(var_a + var_b))`` (:func:`fill_independent_race`).

Captures are what this leaves out: on ``bench/data/ludo_half30.yaml`` the start is 0.10 from the
solution on average (0.37 at worst), and the solve takes 30 sweeps instead of 36 (bench/RECORD.md).
Every value is computed on its own, so the start, and the values solved from it, are the same bit for
bit on any number of threads.
"""

import math

import numpy as np
from numba import prange

from ....kernels.options import njit, njit_parallel

TOLERANCE = 1e-12  # the largest change of a Gauss-Seidel sweep that ends it: turns for the means,
# relative for the second moments
MAX_ITERATIONS = 10_000  # sweeps of either iteration (a pass loop contracts by at most 5/6 a roll)


@njit
def _means(succ, n_moves, can_pass, home, probs, again, choice):
    # mean turns to finish, each roll taking the move of least mean (the first such in increasing
    # cell order, a pass only when strictly less), recorded in choice[a, d]; whether they settled
    m = succ.shape[0]
    mean = np.zeros(m)
    for _ in range(MAX_ITERATIONS):
        worst = 0.0
        for a in range(m - 1, -1, -1):  # highest progress first: most moves read updated means
            if a == home:
                continue
            total = 0.0
            for d in range(probs.shape[0]):
                if probs[d] == 0:
                    continue
                best = -1
                least = math.inf
                for j in range(n_moves[a, d]):
                    a2 = succ[a, d, j]
                    t = 0.0 if a2 == home else mean[a2]
                    if t < least:
                        least = t
                        best = a2
                if can_pass[a, d] and mean[a] < least:
                    best = a
                choice[a, d] = best
                if best == home:  # finished in this turn
                    total += probs[d]
                elif again == d + 1:  # a bonus roll: the turn goes on
                    total += probs[d] * mean[best]
                else:  # this turn and the turns after
                    total += probs[d] * (1.0 + mean[best])
            worst = max(worst, abs(total - mean[a]))
            mean[a] = total
        if worst <= TOLERANCE:
            return mean, True
    return mean, False


@njit
def _second_moments(choice, mean, home, probs, again):
    # E[T^2] under the recorded choices (a linear iteration: no choice changes); whether settled
    m = mean.shape[0]
    square = np.zeros(m)
    for _ in range(MAX_ITERATIONS):
        worst = 0.0
        for a in range(m - 1, -1, -1):
            if a == home:
                continue
            total = 0.0
            for d in range(probs.shape[0]):
                if probs[d] == 0:
                    continue
                best = choice[a, d]
                if best == home:
                    total += probs[d]
                elif again == d + 1:
                    total += probs[d] * square[best]
                else:  # E[(1 + T')^2]
                    total += probs[d] * (1.0 + 2.0 * mean[best] + square[best])
            worst = max(worst, abs(total - square[a]) / max(1.0, total))
            square[a] = total
        if worst <= TOLERANCE:
            return square, True
    return square, False


def turn_moments(race):
    """Mean and variance of the turns each tuple needs to finish alone on the board.

    Parameters
    ----------
    race : values.ValueRace

    Returns
    -------
    mean, variance : float64[M]
        In turns (a bonus roll continues the turn), indexed as ``race.tuples``; 0 for the tuple with
        every piece home.

    Raises
    ------
    RuntimeError
        If the moments do not settle to :data:`TOLERANCE` in :data:`MAX_ITERATIONS` sweeps.
    """
    board = race.board
    probs = np.array([float(p) for p in board.die])
    again = 0 if board.roll_again_on is None else int(board.roll_again_on)
    choice = np.full(race.n_moves.shape, -1, np.int64)
    mean, settled = _means(race.succ, race.n_moves, race.can_pass, race.home, probs, again, choice)
    if settled:
        square, settled = _second_moments(choice, mean, race.home, probs, again)
    if not settled:
        raise RuntimeError(f"the moments of the turns to finish did not settle to {TOLERANCE} in "
                           f"{MAX_ITERATIONS} sweeps")
    return mean, np.maximum(square - mean * mean, 0.0)


@njit_parallel
def _fill(value, mean, variance, home):
    m = mean.shape[0]
    for i in prange(m):
        for j in range(m):
            if i == home or j == home:
                value[i, j] = 0.0  # an ended game, never read (as the solver keeps it)
            else:
                spread = math.sqrt(max(variance[i] + variance[j], 1e-12))
                z = (mean[j] - mean[i] + 0.5) / spread
                value[i, j] = 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def fill_independent_race(race, value):
    """Write the starting values (module docstring) into ``value``.

    Parameters
    ----------
    race : values.ValueRace
    value : float64[M, M]
        Overwritten: the win probability of the player to move in the race without captures, under
        the normal approximation of each side's turns to finish; 0 where a side has finished.
    """
    mean, variance = turn_moments(race)
    _fill(value, mean, variance, race.home)
