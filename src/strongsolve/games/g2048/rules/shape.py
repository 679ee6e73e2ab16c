"""Board shapes and the age bound of a 2048 run: the rules a run's job list needs, without kernels.

The workflow's Snakefile builds a run's job list from these (:class:`.run.Run`) when it is parsed,
on every ``snakemake`` command: kept apart from :mod:`.board`, whose kernels load numba, so that the
parse does not (the Snakefile's imports took 0.4 s of every command). :mod:`.board`
uses :func:`check_shape`.
"""

import numpy as np

from .spawn import largest_spawn


def check_shape(rows, cols):
    """Validate a board shape.

    Raises
    ------
    ValueError
        If ``rows`` or ``cols`` is not an integer in 1..4, or the board has a single cell
        (the random start places two tiles).
    """
    for name, v in (("rows", rows), ("cols", cols)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 4:
            raise ValueError(f"2048 board {name} = {v!r} is not allowed; allowed: an integer 1..4")
    if rows * cols < 2:
        raise ValueError("a 1x1 board cannot hold the two start tiles; use at least 2 cells")


def last_age(rows, cols, target_tile=0, p2=0.9):
    """The last age of a run: no state is older (the job list's bound, fixed before the solve).

    Score objective: 2^(r*c+2) - 4, every tile from 4 to 2^(r*c+1) once (DESIGN.md).

    Reach-a-tile (target ``t``): a move that makes ``t`` ends the position, so an
    afterstate holds tiles of at most ``t/2``, and at least one empty cell (a legal move either
    merges, which frees a cell, or slides a tile into an empty one); its age is at most
    ``(r*c - 1) * t/2``. A state is an afterstate plus one spawn (at most 4, or 2 when ``p2 == 1``;
    :func:`spawn.largest_spawn`) or a start state (age <= 8, below the bound for every allowed
    target), so its age is at most ``(r*c - 1) * t/2 + largest spawn``. A board with every cell at
    ``t/2`` (age ``r*c*t/2``) is never an afterstate, and a state only when ``t/2`` is the largest
    spawn (``t = 8``, or 4 when ``p2 == 1``), where it is this same bound. The bound is attained on
    some boards (1x3, target 16), not on most (2x3, target 64: last state of age 112, bound 164);
    the forward pass stops computing after two consecutive empty afterstate layers
    (:mod:`forward`). The score objective's bound caps it too.

    Parameters
    ----------
    rows, cols : int
    target_tile : int
        0 for the score objective, else the target (a power of two).
    p2 : float
        Probability that a spawn is a 2.

    Returns
    -------
    int
        An even age >= 4.
    """
    score = 2 ** (rows * cols + 2) - 4
    if not target_tile:
        return score
    return min(score, (rows * cols - 1) * (target_tile // 2) + largest_spawn(p2))
