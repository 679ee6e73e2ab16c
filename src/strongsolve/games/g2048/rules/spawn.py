"""Spawn probabilities as floats whose sums never exceed 1, so probabilities computed with them
never exceed 1 either. Pure Python (no numba).

A value is an expectation, ``sum_o p_o * v_o``, over the spawns into an afterstate (or over the
random start). Rounded one by one (``p2 / k`` on each of ``k`` empty cells), the probabilities of
a distribution can add up to more than 1 in floating point (p2 = 0.9 and 15 empty cells:
1.0000000000000007), and a reach-a-tile probability came out as 1.0000000000000002.

So each distribution is rounded here so that its float sum, added in the order the kernels add it
(:func:`expected_value`, :func:`strongsolve.kernels.bellman.backup`), is at most 1: the larger
probability is lowered by one unit in the last place until it is. Then no clamp is needed: rounding
is monotone, so when every ``v_o <= 1``, ``fl(p_o * v_o) <= p_o`` and each partial sum of the
products is at most the same partial sum of the probabilities, hence at most 1. By induction over
the ages every reach-a-tile value is at most 1 (a state's value is 1 for a move that makes the
target, else the value of an afterstate). The probabilities differ from ``p2 / k`` by a few units
in the last place (relative 1e-16), within every tolerance of the score objective's tests.
"""

import math
from functools import lru_cache

import numpy as np


def largest_spawn(p2):
    """The largest spawned tile: 4 when a 4 can spawn (``p2 < 1``), else 2."""
    return 4 if p2 < 1.0 else 2


def _sequential_sum(values):
    total = 0.0
    for v in values:
        total += v
    return total


def cap_sum(probabilities):
    """Probabilities lowered, largest first by one unit in the last place each time, until their
    float sum in index order is at most 1 (float64[N], a new array)."""
    p = np.array(probabilities, np.float64)
    while _sequential_sum(p) > 1.0:
        i = int(np.argmax(p))
        p[i] = math.nextafter(p[i], 0.0)
    return p


@lru_cache(maxsize=64)
def spawn_probabilities(p2, cells):
    """Per number ``k`` of empty cells, the probability of a 2 and of a 4 on each of them.

    Parameters
    ----------
    p2 : float
        Probability that a spawn is a 2, in [0, 1].
    cells : int
        Cells of the board.

    Returns
    -------
    float64[cells + 1, 2]
        Row ``k``: ``(p2 / k, (1 - p2) / k)``, lowered so that the ``k`` pairs added cell by cell,
        a 2 then a 4 (a spawn of probability 0 left out, as the kernels do), sum to at most 1.
        Row 0 is unused (zeros). Read-only.
    """
    table = np.zeros((cells + 1, 2), np.float64)
    kinds = [j for j, p in enumerate((p2, 1.0 - p2)) if p > 0.0]
    for k in range(1, cells + 1):
        q = [p2 / k, (1.0 - p2) / k]
        while _sequential_sum(q[j] for _ in range(k) for j in kinds) > 1.0:
            j = max(kinds, key=q.__getitem__)
            q[j] = math.nextafter(q[j], 0.0)
        table[k] = q
    table.flags.writeable = False
    return table


def expected_value(probabilities, values):
    """``sum_i probabilities[i] * values[i]`` added in index order, the order :func:`cap_sum`
    bounds: at most 1 when the probabilities come from :func:`cap_sum` and the values are in
    [0, 1] (see the module docstring; ``numpy.dot`` adds in an order of its own). Returns a float."""
    total = 0.0
    for p, v in zip(np.asarray(probabilities, np.float64).tolist(),
                    np.asarray(values, np.float64).tolist()):
        total += p * v
    return total
