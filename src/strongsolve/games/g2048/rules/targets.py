"""Which tiles a reach-a-tile run can target on a board: pure Python, no numba, so the
workflow's config validation can refuse a bad target before the kernels load.

A target is meaningful when no start state holds it and the board can make it:

- The random start places two spawned tiles, so a start holds a 4 whenever a 4 can spawn
  (``p2 < 1``); with ``p2 == 1`` only 2s spawn. A target no larger than the largest spawn would be
  won before the first move: the smallest allowed target is twice the largest spawn (8, or 4 when
  ``p2 == 1``).
- On a board of ``n`` cells whose spawns are at most ``s``, the largest tile that can be made is
  ``s * 2^(n-1)`` (2^(n+1) with 4-spawns, 2^n with 2s only), capped at 2^15 by the 4-bit cells. The
  bound: making a tile ``T > s`` merges two ``T/2``; the first ``T/2`` holds one cell, untouched,
  while the second is made, so the second is made on ``n - 1`` cells, and by induction
  ``T/2 <= s * 2^(n-2)``. Every shape the tests brute-force (tests/naive/g2048.py, up to 2x3) makes it.
"""

from .spawn import largest_spawn

MAX_TILE = 1 << 15
"""The largest tile a 4-bit cell holds (board.MAX_EXPONENT)."""


def target_range(rows, cols, p2):
    """The smallest and the largest meaningful target tile of a board and spawn distribution.

    Parameters
    ----------
    rows, cols : int
        Board shape (validated by the caller).
    p2 : float
        Probability that a spawn is a 2 (else a 4), in [0, 1].

    Returns
    -------
    (smallest, largest) : (int, int)
        Powers of two: twice the largest spawn, and the largest tile the board can make.
    """
    spawn = largest_spawn(p2)
    return 2 * spawn, min(spawn << (rows * cols - 1), MAX_TILE)


def check_target(rows, cols, p2, target_tile, key="target_tile"):
    """Refuse a reach-a-tile target that a start state already holds or the board cannot make.

    Parameters
    ----------
    rows, cols : int
    p2 : float
    target_tile : int
        A power of two (the caller checks the form).
    key : str
        How the caller names the value in the message (``"--target-tile"``,
        ``"config key g2048.target_tile"``).

    Raises
    ------
    ValueError
        Naming the target and the smallest or the largest allowed target, e.g. ``target_tile = 4 is
        not allowed: a start state already holds a 4 (p2 = 0.9 < 1, so a 4 can spawn at the start)
        and the game is won before the first move; the smallest allowed target is 8``.
    """
    smallest, largest = target_range(rows, cols, p2)
    if target_tile < smallest:
        spawned = "a 4 can spawn" if p2 < 1.0 else "2s spawn"
        raise ValueError(
            f"{key} = {target_tile} is not allowed: a start state already holds a {target_tile} "
            f"(p2 = {p2:g}, so {spawned} at the start) and the game is won before the first move; "
            f"the smallest allowed target is {smallest}")
    if target_tile > largest:
        raise ValueError(
            f"{key} = {target_tile} is not allowed: the largest tile a {rows}x{cols} board can make "
            f"is {largest} ({rows * cols} cells, spawned tiles up to {largest_spawn(p2)}); allowed: "
            f"{smallest} to {largest}")
