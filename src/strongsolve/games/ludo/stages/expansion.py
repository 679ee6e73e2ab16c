"""The expansion solver of a Ludo race: value iteration over the whole expansion
(:func:`.encoding.race_expansion`), the optimal policy, and matches against simple policies.
"""

from typing import NamedTuple

import numpy as np

from ....kernels.iteration import (alternate_policies, evaluate_policy, outcome_order,
                                   permute_expansion, value_iteration)

from ..encoding import Race, race_expansion
from ..rules import cells_without_goal, unreachable_goal_message


class RaceSolution(NamedTuple):
    """Optimal play of a race.

    Attributes
    ----------
    race : Race
    value : float64[M*M]
        Win probability of the player to move (0 at ended games).
    policy : int64[O]
        Best candidate per outcome (see :func:`race_expansion` for the order).
    win_probability : float
        Of the first player to move from the start (every piece at 0).
    sweeps : int
    residual : float
    """

    race: Race
    value: np.ndarray
    policy: np.ndarray
    win_probability: float
    sweeps: int
    residual: float


def sweep_order(race):
    """Nodes by decreasing total progress (sum of every piece's cell), for Gauss-Seidel sweeps:
    a move adds progress unless it hits a trap or captures, so a sweep in this order is close to
    backward induction (int64[X])."""
    enc = race.encoding
    own = enc.cells[enc.tuples].sum(axis=1)
    m = enc.n_tuples
    progress = (own[:, None] + own[None, :]).reshape(m * m)
    return np.argsort(-progress, kind="stable")


def solve_race(board, pieces, tol=1e-12, max_iter=100_000, progress=None):
    """Win probability under optimal play by both (negamax Gauss-Seidel value iteration, nodes swept
    in :func:`sweep_order`); ``progress(sweep, delta)`` is called after each sweep when given.

    Raises
    ------
    ValueError
        Bad ``pieces``, a position count above ``MAX_RACE_NODES``, or a goal that some rest cell
        cannot reach (:func:`cells_without_goal`; checked first, since value iteration would never
        settle); ``RuntimeError`` if ``max_iter`` sweeps do not reach ``tol``.
    """
    stuck = cells_without_goal(board)
    if stuck:
        raise ValueError(unreachable_goal_message(board, stuck))
    race = race_expansion(board, pieces)
    order = sweep_order(race)
    sol = value_iteration(permute_expansion(race.expansion, order), maximize=True, tol=tol,
                          max_iter=max_iter, progress=progress)
    value = np.empty_like(sol.value)
    value[order] = sol.value
    policy = np.empty_like(sol.policy)
    policy[outcome_order(race.expansion, order)] = sol.policy
    start = race.encoding.node((0,) * pieces, (0,) * pieces)
    return RaceSolution(race, value, policy, float(value[start]), sol.sweeps, sol.residual)


def simple_policy(race, kind):
    """Candidate positions of a simple policy: ``leading`` moves the most advanced movable piece,
    ``trailing`` the least advanced; either passes only when no piece can move (int64[O])."""
    if kind not in ("leading", "trailing"):
        raise ValueError(f"simple policy must be 'leading' or 'trailing', got {kind!r}")
    sizes = np.diff(race.expansion.out_ptr)
    # the pass, when offered, is the last candidate; the moves come before it
    moves = sizes - (race.piece[race.expansion.out_ptr[1:] - 1] < 0)
    if kind == "leading":
        return np.maximum(moves - 1, 0)
    return np.zeros_like(sizes)


def match_win_probability(race, policy_a, policy_b, tol=1e-13, progress=None):
    """Win probabilities of A (policy_a) against B (policy_b) from the start, by Gauss-Seidel
    sweeps until no value changes by more than ``tol``; ``progress(sweep, delta)`` is called after
    each sweep when given (the two-piece classic race takes minutes).

    Returns
    -------
    (float, float)
        P(A wins) when A moves first, and when B moves first.
    """
    n = race.expansion.n_nodes
    order = sweep_order(race)
    order = np.stack([order, order + n], axis=1).ravel()  # both players' copies of a position
    exp = permute_expansion(alternate_policies(race.expansion, policy_a, policy_b), order)
    new = evaluate_policy(exp, np.zeros(exp.out_prob.size, np.int64), method="gauss-seidel",
                          tol=tol, progress=progress)
    value = np.empty_like(new)
    value[order] = new
    p = race.encoding.tuples.shape[1]
    start = race.encoding.node((0,) * p, (0,) * p)
    return float(value[start]), float(1.0 - value[start + n])


def best_moves(solution, own, opponent):
    """The optimal piece for every roll in a position.

    Returns
    -------
    list of dict
        Per face with probability > 0: ``face``, ``move_from`` (cell of the piece to move, None for
        a pass) and ``win_probability`` after the choice (of the player to move).
    """
    race = solution.race
    exp = race.expansion
    x = race.encoding.node(own, opponent)
    out = []
    faces = [d for d, p in enumerate(race.board.die, 1) if p > 0]
    for o, face in zip(range(exp.node_ptr[x], exp.node_ptr[x + 1]), faces):
        a = exp.out_ptr[o] + solution.policy[o]
        q = exp.cand_reward[a] + exp.cand_sign[a] * solution.value[exp.cand_next[a]]
        cell = race.piece[a]
        out.append({"face": face, "move_from": None if cell < 0 else int(race.encoding.cells[cell]),
                    "win_probability": float(q)})
    return out
