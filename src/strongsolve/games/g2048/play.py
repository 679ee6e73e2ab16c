"""Monte Carlo play with the solved policy.

Games start from the random start (two spawns on the empty board) and follow the optimal policy of
a solved run: in every state, the first best move in direction order, as the backward pass chose it
(:func:`backward.state_values`). All games advance together, age by age: a move keeps the tile sum
and a spawn raises it, so after the games of age ``n`` have moved and spawned, no game is at age
``n`` any more. Each afterstate layer is therefore loaded once, and memory holds one layer at a time.

Randomness comes from one seeded ``numpy.random.Generator`` (PCG64): the same seed and number of
games give the same games on every machine.
"""

from dataclasses import asdict, dataclass

import numpy as np

from ...kernels.options import njit
from .stages.backward import state_values
from .rules.board import count_empty, moves
from .encoding.expand import has_tile

Z95 = 1.959963984540054
"""Two-sided 95 % quantile of the standard normal distribution (the interval's half-width in
standard errors)."""


@njit
def _apply_moves(states, best, rows, cols, line_result, line_reward, sym):
    """Board (in its own orientation) and merge reward of each state's chosen move.

    ``best[k]`` is the position of the move among the state's legal moves in direction order
    (-1: no legal move, the board is returned unchanged with reward 0).
    """
    n = states.shape[0]
    after = states.copy()
    reward = np.zeros(n, np.int64)
    moved = np.empty(4, np.uint64)
    rewards = np.empty(4, np.int64)
    for k in range(n):
        if best[k] < 0:
            continue
        moves(states[k], rows, cols, line_result, line_reward, sym, moved, rewards)
        m = 0
        for d in range(4):
            if moved[d] != states[k]:
                if m == best[k]:
                    after[k] = moved[d]
                    reward[k] = rewards[d]
                    break
                m += 1
    return after, reward


@njit
def _spawn(boards, cells, u, p2):
    """Put a tile on a uniformly chosen empty cell of each board: ``u[k, 0]`` in [0, 1) picks the
    cell, ``u[k, 1] < p2`` makes it a 2, else a 4. Every board must have an empty cell."""
    out = boards.copy()
    for k in range(boards.shape[0]):
        b = boards[k]
        empty = count_empty(b, cells)
        j = min(int(u[k, 0] * empty), empty - 1)
        e = np.uint64(1) if u[k, 1] < p2 else np.uint64(2)
        for i in range(cells):
            sh = np.uint64(4 * i)
            if ((b >> sh) & np.uint64(15)) == 0:
                if j == 0:
                    out[k] = b | (e << sh)
                    break
                j -= 1
    return out


@njit
def _ages_and_largest(boards, cells):
    """Tile sum (points) and largest tile of each board."""
    n = boards.shape[0]
    ages = np.zeros(n, np.int64)
    largest = np.zeros(n, np.int64)
    for k in range(n):
        for i in range(cells):
            e = (boards[k] >> np.uint64(4 * i)) & np.uint64(15)
            if e:
                v = 1 << e
                ages[k] += v
                largest[k] = max(largest[k], v)
    return ages, largest


@njit
def _reached(boards, target_exp):
    out = np.zeros(boards.shape[0], np.bool_)
    for k in range(boards.shape[0]):
        out[k] = has_tile(boards[k], target_exp)
    return out


@dataclass(frozen=True)
class PlayResult:
    """Outcome of :func:`play`.

    Attributes
    ----------
    games, seed : int
    objective : str
        ``"score"`` or ``"reach_tile"``.
    target_tile : int or None
    mean_score : float
        Mean score per game in the run's objective: merge points (score), or 1 for a game that makes
        the target tile and 0 otherwise (reach-a-tile: the fraction of games that reach it).
    std_error : float
        Sample standard deviation / sqrt(games).
    ci95 : (float, float)
        mean_score -/+ 1.96 standard errors (normal approximation).
    expected_score : float
        The exact value of the random start under the same policy (the solve's ``expected_score``).
    mean_points : float
        Mean merge points per game (equal to mean_score for the score objective).
    largest_tile : dict of int -> int
        Number of games ending with each largest tile.
    """

    games: int
    seed: int
    objective: str
    target_tile: object
    mean_score: float
    std_error: float
    ci95: tuple
    expected_score: float
    mean_points: float
    largest_tile: dict

    def to_dict(self):
        """JSON-ready dict (tile keys as strings)."""
        d = asdict(self)
        d["ci95"] = list(self.ci95)
        d["largest_tile"] = {str(k): v for k, v in self.largest_tile.items()}
        return d


MAX_GAMES = 10_000_000  # all games advance together, some 100 bytes each: about 1 GB at most


def check_games(games):
    """``games`` when it is a number of games :func:`play` takes (2..:data:`MAX_GAMES`).

    Raises
    ------
    ValueError
        Not an integer in 2..MAX_GAMES; the message names the value and the range.
    """
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or not 2 <= games <= MAX_GAMES:
        raise ValueError(f"games = {games!r} is not allowed; allowed: an integer from 2 to "
                         f"{MAX_GAMES:,} (all games are held in memory at once; play more in "
                         "separate runs with other seeds)")
    return games


def play(solution, games, seed, progress=False, policy=None):
    """Play ``games`` games from random starts with the solved policy.

    Parameters
    ----------
    solution : solution.Solution
        A solved run.
    games : int
        Number of games, 2..:data:`MAX_GAMES` (the interval needs a sample variance; all games
        are held in memory at once).
    seed : int
        Seed of the ``numpy.random.Generator`` (>= 0).
    progress : bool
        Show a tqdm bar of finished games (on a terminal only).
    policy : policy.PolicyStore, optional
        Take each move, and the exact expected score, from this optimal-play store
        instead of the value layers: ``solution`` then needs no layer (a directory holding only
        ``policy/``).

    Returns
    -------
    PlayResult

    Raises
    ------
    ValueError
        If ``games`` is outside 2..MAX_GAMES, ``seed`` < 0, or the run has no values at all (forward-only).
    CorruptLayerError
        If a layer the games reach is missing or corrupt (a value layer deleted from a solved run,
        say): the message names it and the command that rebuilds it (:meth:`Solution.layer`).
    """
    from tqdm import tqdm

    check_games(games)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed = {seed!r} is not allowed; allowed: an integer >= 0")
    run = solution.run
    tables = run.tables
    rows, cols, line_result, line_reward, sym = tables.kernel_args()
    cells = rows * cols
    rng = np.random.default_rng(seed)
    boards = np.zeros(games, np.uint64)
    for _ in range(2):
        boards = _spawn(boards, cells, rng.random((games, 2)), run.p2)
    ages, _ = _ages_and_largest(boards, cells)
    points = np.zeros(games, np.int64)
    reached = np.zeros(games, np.bool_)
    done = np.zeros(games, np.bool_)
    with tqdm(total=games, unit="game", desc="play", disable=None if progress else True) as bar:
        for n in range(4, run.last_age + 1, 2):
            at = np.flatnonzero(~done & (ages == n))
            if at.size == 0:
                if done.all():
                    break
                continue
            if policy is not None:
                best = policy.best_positions(boards[at], n)
            else:
                ids, values = solution.layer(n)
                _, best = state_values(boards[at], tables, run.target_exp, ids, values)
            after, reward = _apply_moves(boards[at], best, rows, cols, line_result, line_reward, sym)
            points[at] += reward
            end = best < 0
            if run.target_exp:
                hit = _reached(after, run.target_exp) & ~end
                reached[at[hit]] = True
                end |= hit
            boards[at[end]] = after[end]
            done[at[end]] = True
            going = at[~end]
            boards[going] = _spawn(after[~end], cells, rng.random((going.size, 2)), run.p2)
            ages[going] = _ages_and_largest(boards[going], cells)[0]
            bar.update(int(end.sum()))
    if not done.all():
        raise RuntimeError("some games passed the last age without ending; the run is inconsistent")
    score = reached.astype(np.float64) if run.target_exp else points.astype(np.float64)
    mean = float(score.mean())
    se = float(score.std(ddof=1) / np.sqrt(games))
    tiles, counts = np.unique(_ages_and_largest(boards, cells)[1], return_counts=True)
    return PlayResult(
        games=int(games), seed=int(seed), objective=solution.objective,
        target_tile=run.target_tile or None, mean_score=mean, std_error=se,
        ci95=(mean - Z95 * se, mean + Z95 * se),
        expected_score=(solution if policy is None else policy).expected_score(),
        mean_points=float(points.mean()),
        largest_tile={int(t): int(c) for t, c in zip(tiles, counts)},
    )
