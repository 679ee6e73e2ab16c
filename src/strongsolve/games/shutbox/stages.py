"""Shut the Box solved: value or policy iteration over the expansion (:mod:`.encoding`), the
exact solve in fractions, and the policy tables saved with a result."""

from typing import NamedTuple

import numpy as np

from ...kernels.exact import exact_policy_iteration, exact_probabilities
from ...kernels.iteration import Expansion, evaluate_policy, policy_iteration, value_iteration
from .encoding import expansion
from .rules import MAX_EXACT_CARDS, ONE_DIE_SUM, check_params, flip_cards, roll_totals, unordered_rolls


class ShutboxSolution(NamedTuple):
    """A solved Shut the Box variant.

    Attributes
    ----------
    value_start : float
        Rolls (min-rolls), probability (max-shut) or points (min-sum) from the start.
    value : float64[X]
        Per node (see the module docstring for the node encoding).
    policy : int64[O]
        Best candidate per outcome (position within the outcome).
    expansion : Expansion
    iterations, sweeps : int
    residual : float
        Bellman residual of ``value``.
    """

    value_start: float
    value: np.ndarray
    policy: np.ndarray
    expansion: Expansion
    iterations: int
    sweeps: int
    residual: float


def solve(cards, faces, rule="flip-one", objective="min-rolls", one_die=False,
          method="policy-iteration", tol=1e-13):
    """Solve a Shut the Box variant exactly (to ``tol``).

    Parameters
    ----------
    cards, faces, rule, objective, one_die
        See :func:`check_params` and the module docstring.
    method : {"policy-iteration", "value-iteration", "value-iteration-jacobi"}
        Policy iteration, or value iteration with Gauss-Seidel or Jacobi sweeps.
    tol : float
        Final tolerance on a sweep's largest change (value units).

    Returns
    -------
    ShutboxSolution

    Raises
    ------
    ValueError
        Bad parameters (naming the value) or method.
    """
    exp, start, maximize = expansion(cards, faces, rule, objective, one_die)
    if method == "policy-iteration":
        sol = policy_iteration(exp, maximize=maximize, tol=tol)
    elif method in ("value-iteration", "value-iteration-jacobi"):
        sol = value_iteration(exp, maximize=maximize, tol=tol,
                              method="jacobi" if method.endswith("jacobi") else "gauss-seidel")
    else:
        raise ValueError("method must be policy-iteration, value-iteration or "
                         f"value-iteration-jacobi, got {method!r}")
    return ShutboxSolution(float(sol.value[start]), sol.value, sol.policy, exp, sol.iterations,
                           sol.sweeps, sol.residual)


def exact_policy_value(solution):
    """Value of the solution's policy by one sparse linear solve (float64[X])."""
    return evaluate_policy(solution.expansion, solution.policy)


def flip_one_policy_table(cards, faces, policy):
    """The flip-one policy as a table: the card to flip per set-card mask and unordered roll.

    Returns
    -------
    rolls : int64[R, 2]
        As :func:`unordered_rolls`.
    flip : int64[2^n, R]
        Card to flip (1..n), 0 where the roll passes, -1 at the goal (no roll).
    """
    rolls, _ = unordered_rolls(faces)
    n_rolls = len(rolls)
    goal = (1 << cards) - 1
    offered = [flip_cards(int(x), int(y), cards) for x, y in rolls]
    flip = np.full((1 << cards, n_rolls), -1, np.int64)
    body = np.asarray(policy).reshape(goal, n_rolls)  # the goal has no outcome and comes last
    for r, cards_r in enumerate(offered):
        lookup = np.array(cards_r or [0], np.int64)
        flip[:goal, r] = lookup[body[:, r]]
    return rolls, flip


def standard_policy_table(cards, faces, one_die, policy, exp):
    """The standard-game policy: per open-tile mask and total, the mask of tiles to shut.

    Returns
    -------
    dict
        ``{mask: {total: shut_mask}}`` for masks 1..2^n-1 (``shut_mask`` 0 where the game ends).
    """
    t1, _ = roll_totals(faces, 1)
    t2, _ = roll_totals(faces, 2)
    table = {}
    for mask in range(1, 1 << cards):
        open_sum = sum(t + 1 for t in range(cards) if mask >> t & 1)
        totals = t1 if one_die and open_sum <= ONE_DIE_SUM else t2
        row = {}
        for k, total in enumerate(totals):
            o = exp.node_ptr[mask] + k
            a = exp.out_ptr[o] + policy[o]
            nxt = exp.cand_next[a]
            row[int(total)] = 0 if nxt == 1 << cards else int(mask ^ nxt)
        table[mask] = row
    return table


class ExactShutboxSolution(NamedTuple):
    """A Shut the Box variant solved in rationals.

    Attributes
    ----------
    value_start : Fraction or None
        Rolls (min-rolls), probability (max-shut) or points (min-sum) from the start; None when
        infinite (the dice cannot set every card).
    value : dict
        ``{node: Fraction or None}`` per node (module docstring for the node encoding).
    policy : list of int
        An optimal policy, per outcome (as ``ShutboxSolution.policy``).
    steps : int
        Policies evaluated in fractions (1 when the float solver's policy is exactly optimal).
    float_solution : ShutboxSolution
        The float solve it started from.
    """

    value_start: object
    value: dict
    policy: list
    steps: int
    float_solution: ShutboxSolution


def float_command(cards, faces, rule, objective, one_die=False):
    """The ``strongsolve shutbox`` command that solves this variant in floats (str)."""
    return (f"strongsolve shutbox --cards {cards} --faces {faces} --rule {rule} --objective "
            f"{objective}{' --one-die' if one_die else ''}")


def solve_exact(cards, faces, rule="flip-one", objective="min-rolls", one_die=False,
                method="policy-iteration", tol=1e-13):
    """Solve a small Shut the Box variant exactly, in rationals.

    The dice probabilities are multiples of 1/f^2 and the rewards whole numbers, so the optimal
    values are rationals; :func:`strongsolve.kernels.exact.exact_policy_iteration` finds them with
    :class:`fractions.Fraction`, starting from the float solution's policy and proving optimality
    by an exact improvement step that changes nothing.

    Parameters
    ----------
    cards, faces, rule, objective, one_die
        See :func:`check_params`; ``cards`` at most ``MAX_EXACT_CARDS[rule]``.
    method, tol
        The float solve that gives the starting policy (:func:`solve`).

    Returns
    -------
    ExactShutboxSolution

    Raises
    ------
    ValueError
        Bad parameters, or more cards than ``MAX_EXACT_CARDS[rule]`` (naming the size, the limit
        and the float command that solves the variant).
    """
    check_params(cards, faces, rule, objective, one_die)
    limit = MAX_EXACT_CARDS[rule]
    if cards > limit:
        raise ValueError(
            f"--exact solves the {rule} rule in fractions up to {limit} cards; {cards} cards would "
            f"take too long (2^{cards} positions; flip-one's exact elimination grows about 4.7 "
            f"times per card). For the float value, accurate to about 1e-13, run "
            f"`{float_command(cards, faces, rule, objective, one_die)}`")
    sol = solve(cards, faces, rule, objective, one_die, method, tol)
    exp = sol.expansion
    prob = exact_probabilities(exp.out_prob, faces * faces)  # one die: 1/f = f/f^2
    if rule == "flip-one":  # closest to the goal (more cards set) first
        order = sorted(range(exp.n_nodes), key=lambda m: (-bin(m).count("1"), m))
        start = 0
    else:  # shutting only clears bits: the end node, then masks upward, is successors first
        order = [exp.n_nodes - 1, *range(exp.n_nodes - 1)]
        start = (1 << cards) - 1
    value, policy, steps = exact_policy_iteration(exp, prob, sol.policy, sol.value,
                                                  maximize=objective == "max-shut",
                                                  elimination_order=order)
    return ExactShutboxSolution(value[start], value, policy, steps, sol)
