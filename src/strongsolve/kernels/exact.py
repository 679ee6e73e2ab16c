"""Exact rational values of a small game over the CSR expansion.

The float solvers of :mod:`.iteration` give values to about 1e-13. Where the outcome probabilities
and the rewards are rationals, the optimal values are rationals too, and this module finds them
exactly with :class:`fractions.Fraction`: policy iteration in exact arithmetic (Howard 1960), started
from the float solution's policy, which is usually optimal already. Each step evaluates the policy by
sparse Gaussian elimination over fractions (:func:`exact_policy_value`), then switches every outcome
to a candidate that is strictly better in exact arithmetic; a step that switches nothing proves the
values optimal (Bellman's equation holds exactly). Elimination in the order of the given
``elimination_order`` costs one substitution per edge on an acyclic game whose order puts
successors first (each row is already a constant when reached); on a cyclic game it fills in, so the
cost grows quickly with the number of nodes: callers bound the size they accept.
"""

from fractions import Fraction

import numpy as np


def exact_probabilities(out_prob, denominator):
    """The outcome probabilities as fractions with a known common denominator.

    Parameters
    ----------
    out_prob : float64[O]
        Probabilities as the expansion holds them (rounded to float).
    denominator : int
        A common denominator of the true probabilities (e.g. ``f**2`` for two f-faced dice).

    Returns
    -------
    list of Fraction
        ``round(p * denominator) / denominator`` per outcome.

    Raises
    ------
    ValueError
        A probability that is not a multiple of ``1/denominator`` to 1e-9 (naming it).
    """
    out = []
    for p in np.asarray(out_prob, np.float64).tolist():
        k = round(p * denominator)
        if abs(k - p * denominator) > 1e-9:
            raise ValueError(f"outcome probability {p!r} is not a multiple of 1/{denominator}")
        out.append(Fraction(k, denominator))
    return out


def _integers(values, what):
    out = []
    for v in np.asarray(values, np.float64).tolist():
        if v != int(v):
            raise ValueError(f"{what} {v!r} is not a whole number: the exact solver takes whole "
                             "rewards and signs")
        out.append(int(v))
    return out


def _solve_sparse(rows, constants, order):
    # rows[u]: {v: c} meaning x_u = constants[u] + sum c * x_v over unknowns v. Eliminate in
    # ``order``: express x_u through the unknowns not yet eliminated and substitute it into every
    # row that uses it; then back-substitute in reverse order.
    users = {u: set() for u in rows}
    for u, row in rows.items():
        for v in row:
            users[v].add(u)
    for u in order:
        row = rows[u]
        self_coef = row.pop(u, 0)
        users[u].discard(u)
        if self_coef:
            scale = 1 / (1 - self_coef)  # a proper policy leaves 1 - self_coef > 0
            constants[u] *= scale
            for v in row:
                row[v] *= scale
        for w in users[u]:
            target = rows[w]
            c = target.pop(u)
            constants[w] += c * constants[u]
            for v, cv in row.items():
                new = target.get(v, 0) + c * cv
                if new:
                    target[v] = new
                    users[v].add(w)
                else:
                    target.pop(v, None)
                    users[v].discard(w)
        for v in row:
            users[v].discard(u)
        users[u] = set()
    value = {}
    for u in reversed(order):
        value[u] = constants[u] + sum(c * value[v] for v, c in rows[u].items())
    return value


def exact_policy_value(exp, prob, policy, finite, elimination_order):
    """Exact value of a fixed policy, by sparse elimination over fractions.

    Parameters
    ----------
    exp : Expansion
        The game (:mod:`.bellman`); rewards and signs whole numbers.
    prob : list of Fraction
        Exact outcome probabilities, one per outcome (:func:`exact_probabilities`).
    policy : sequence of int
        Per outcome, the chosen candidate's position within the outcome.
    finite : bool[X]
        Nodes to solve; a chosen candidate of a finite node must lead to a finite node.
    elimination_order : sequence of int
        Every finite node once; successors first makes an acyclic game cost one step per edge.

    Returns
    -------
    dict
        ``{node: Fraction}`` for every finite node (0 for a node with no outcome).

    Raises
    ------
    ZeroDivisionError
        When the policy never ends the game from some node (an improper policy).
    """
    node_ptr, out_ptr = exp.node_ptr, exp.out_ptr
    reward = _integers(exp.cand_reward, "reward")
    sign = _integers(exp.cand_sign, "sign")
    nxt = exp.cand_next
    rows, constants = {}, {}
    for u in np.flatnonzero(finite).tolist():
        row, const = {}, Fraction(0)
        for o in range(node_ptr[u], node_ptr[u + 1]):
            a = out_ptr[o] + policy[o]
            const += prob[o] * reward[a]
            v = int(nxt[a])
            if not finite[v]:
                raise ValueError(f"policy leads from finite node {u} to infinite node {v}")
            row[v] = row.get(v, 0) + prob[o] * sign[a]
        rows[u] = {v: c for v, c in row.items() if c}
        constants[u] = const
    return _solve_sparse(rows, constants, list(elimination_order))


def exact_policy_iteration(exp, prob, policy, value_float, *, maximize, elimination_order,
                           max_iter=100):
    """Exact optimal values by policy iteration over fractions, started from a float solution.

    Parameters
    ----------
    exp : Expansion
        The game; every outcome of a finite node has at least one candidate.
    prob : list of Fraction
        Exact outcome probabilities (:func:`exact_probabilities`).
    policy : int64[O]
        The float solver's policy (``Solution.policy``); a start, exactness does not depend on it.
    value_float : float64[X]
        The float solver's values: a node of infinite value (the game cannot be ended surely from
        it, found by graph reachability) stays infinite.
    maximize : bool
        Maximise (else minimise) reward + sign * successor value.
    elimination_order : sequence of int
        Every finite node once (see :func:`exact_policy_value`).
    max_iter : int
        Improvement steps allowed before giving up.

    Returns
    -------
    values : dict
        ``{node: Fraction}`` per finite node, ``{node: None}`` per infinite one.
    policy : list of int
        An optimal policy (per outcome, position of the candidate; -1 at infinite nodes).
    steps : int
        Policies evaluated.

    Raises
    ------
    RuntimeError
        No exactly optimal policy after ``max_iter`` evaluations.
    """
    finite = np.isfinite(np.asarray(value_float, np.float64))
    reward = _integers(exp.cand_reward, "reward")
    sign = _integers(exp.cand_sign, "sign")
    nxt = exp.cand_next.tolist()
    node_ptr, out_ptr = exp.node_ptr, exp.out_ptr
    policy = [int(p) for p in np.asarray(policy).tolist()]
    better = (lambda a, b: a > b) if maximize else (lambda a, b: a < b)
    order = [u for u in elimination_order if finite[u]]
    for step in range(1, max_iter + 1):
        value = exact_policy_value(exp, prob, policy, finite, order)
        changed = False
        for u in order:
            for o in range(node_ptr[u], node_ptr[u + 1]):
                lo, hi = out_ptr[o], out_ptr[o + 1]

                def total(a):
                    return reward[a] + sign[a] * value[nxt[a]] if finite[nxt[a]] else None

                best = lo + policy[o]
                best_total = total(best)
                for a in range(lo, hi):
                    t = total(a)
                    if t is not None and better(t, best_total):
                        best, best_total = a, t
                if best != lo + policy[o]:
                    policy[o] = best - lo
                    changed = True
        if not changed:
            value.update({u: None for u in np.flatnonzero(~finite).tolist()})
            return value, policy, step
    raise RuntimeError(f"exact policy iteration did not settle in {max_iter} evaluations")
