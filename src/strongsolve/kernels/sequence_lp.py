"""The exact equilibrium of a small tabular game by the sequence-form linear program.

A player's mixed strategy in an extensive-form game with perfect recall is a *realization plan*: one
weight per sequence (the empty sequence, or an information set's action slot), with ``E x = e``,
``x >= 0`` (the empty sequence weighs 1; an information set's action weights sum to the weight of
the sequence that leads to it). The payoff is bilinear, ``x^T A y``, where ``A[s0, s1]`` sums chance
reach x player 0's utility over the terminals whose last sequences are ``s0`` and ``s1``. The
equilibrium is then one linear program per player (Koller, Megiddo and von Stengel, "Efficient
computation of equilibria for extensive two-person games", Games and Economic Behavior 14, 1996,
section 4; von Stengel 1996): player 0 solves ``max q_0`` over ``(x, q)`` with ``F^T q <= A^T x``
(the dual of player 1's best response to ``x``), player 1 symmetrically. Both go to HiGHS's dual
simplex (scipy), whose vertex solutions are accurate to about 1e-12 on these games.

This is the exact counterpart of the discounted CFR of :mod:`.cfr` for games small enough to hold
the LP (a few hundred thousand sequences): the small decks' grids, where the CFR's residual error
(each subgame within its NashConv of the game value) would add up along the chain of hands. Its
result is a ``CFRResult`` like the CFR's, evaluated by the same exact best response, so a caller
reads value and NashConv the same way.
"""

import time

import numpy as np

from .cfr import CHANCE, DECISION, TERMINAL, CFRResult, evaluate
from .options import njit


@njit
def _last_sequences(node_type, node_player, node_infoset, child_ptr, child, child_prob, infoset_ptr,
                    slot_seq):
    """Top-down over the nodes (topological order): each node's last sequence of each player
    (int64[N, 2], 0 = empty) and its chance reach (float64[N])."""
    n = node_type.shape[0]
    seq = np.zeros((n, 2), np.int64)
    reach = np.zeros(n)
    reach[0] = 1.0
    for u in range(n):
        lo = child_ptr[u]
        for j in range(child_ptr[u + 1] - lo):
            v = child[lo + j]
            seq[v, 0] = seq[u, 0]
            seq[v, 1] = seq[u, 1]
            reach[v] = reach[u]
            if node_type[u] == CHANCE:
                reach[v] *= child_prob[lo + j]
            elif node_type[u] == DECISION:
                seq[v, node_player[u]] = slot_seq[infoset_ptr[node_infoset[u]] + j]
    return seq, reach


def _plan_constraints(p, infoset_player, infoset_parent, infoset_ptr, slot_seq, n_seq):
    """Player ``p``'s ``E`` (rows: 1 + its information sets, columns: its sequences, sparse) and
    ``e`` (float64[rows], 1 then zeros)."""
    from scipy.sparse import coo_matrix

    mine = np.flatnonzero(infoset_player == p)
    rows = [np.zeros(1, np.int64)]
    cols = [np.zeros(1, np.int64)]
    vals = [np.ones(1)]
    for r, i in enumerate(mine, start=1):
        slots = np.arange(infoset_ptr[i], infoset_ptr[i + 1])
        rows += [np.full(len(slots) + 1, r)]
        cols += [np.append(slot_seq[slots], infoset_parent[i])]
        vals += [np.append(np.ones(len(slots)), -1.0)]
    E = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                   shape=(len(mine) + 1, n_seq)).tocsr()
    e = np.zeros(len(mine) + 1)
    e[0] = 1.0
    return E, e


def _best_plan(A, E, e, F, f, maximise):
    """One player's side of the equilibrium: ``maximise`` (player 0): max ``f.q`` over ``(x, q)``
    with ``F^T q - A^T x <= 0``, ``E x = e``, ``x >= 0``; else (player 1, with ``A`` the transposed
    payoff in the roles swapped) min ``f.q`` with ``A^T x - F^T q <= 0``. Returns the plan ``x``,
    the game value and the simplex iterations (RuntimeError if HiGHS does not report optimal)."""
    from scipy.optimize import linprog
    from scipy.sparse import bmat, csr_matrix

    nx, nq = E.shape[1], F.shape[0]
    sign = 1.0 if maximise else -1.0
    a_ub = bmat([[-sign * A.T, sign * F.T]], format="csr")
    a_eq = bmat([[E, csr_matrix((E.shape[0], nq))]], format="csr")
    cost = np.concatenate([np.zeros(nx), -sign * f])
    bounds = [(0.0, None)] * nx + [(None, None)] * nq
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq, b_eq=e,
                  bounds=bounds, method="highs-ds",
                  options=dict(primal_feasibility_tolerance=1e-10,
                               dual_feasibility_tolerance=1e-10))
    if res.status != 0:
        raise RuntimeError(f"sequence-form LP not solved (HiGHS status {res.status}: {res.message})")
    return res.x[:nx], -sign * res.fun, int(res.nit)


def solve_lp(game, validate=True):
    """The exact equilibrium of ``game`` by the sequence-form LP (module docstring).

    Parameters
    ----------
    game : TabularGame
        A two-player zero-sum tree with perfect recall (every node of an information set has the
        same sequence of its player's own earlier actions).
    validate : bool
        Check the tree first (``TabularGame.validate``).

    Returns
    -------
    CFRResult
        ``strategy`` float64[M]: behaviour strategies from the two realization plans (an
        information set its own player never reaches plays uniformly); value, NashConv and
        exploitability by the exact best response of :func:`.cfr.evaluate` (player 0's utility);
        ``iterations``: simplex iterations of the two LPs; ``regret`` zeros and ``strat_sum`` the
        strategy itself (the accumulators a later CFR could start from).

    Raises
    ------
    ValueError
        A malformed tree, or one without perfect recall.
    RuntimeError
        HiGHS does not find the optimum.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    g = game
    if validate:
        g.validate()
    m = int(g.infoset_ptr[-1])
    dec = g.node_type == DECISION
    infoset_player = np.full(g.n_infosets, -1, np.int64)
    infoset_player[g.node_infoset[dec]] = g.node_player[dec]
    slot_player = np.repeat(infoset_player, np.diff(g.infoset_ptr))
    slot_seq = np.zeros(m, np.int64)  # sequences of each player numbered 1.. over its slots
    n_seq = []
    for p in (0, 1):
        mine = slot_player == p
        slot_seq[mine] = np.arange(1, mine.sum() + 1)
        n_seq.append(int(mine.sum()) + 1)
    seq, reach = _last_sequences(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                                 g.child_prob, g.infoset_ptr, slot_seq)
    nodes = np.flatnonzero(dec)
    own = seq[nodes, g.node_player[nodes]]
    infoset_parent = np.zeros(g.n_infosets, np.int64)
    infoset_parent[g.node_infoset[nodes]] = own
    if np.any(infoset_parent[g.node_infoset[nodes]] != own):
        raise ValueError("the game lacks perfect recall: nodes of one information set follow "
                         "different own sequences; the sequence form needs perfect recall")
    from scipy.sparse import coo_matrix

    term = np.flatnonzero(g.node_type == TERMINAL)
    A = coo_matrix((reach[term] * g.utility[term], (seq[term, 0], seq[term, 1])),
                   shape=tuple(n_seq)).tocsr()
    E, e = _plan_constraints(0, infoset_player, infoset_parent, g.infoset_ptr, slot_seq, n_seq[0])
    F, f = _plan_constraints(1, infoset_player, infoset_parent, g.infoset_ptr, slot_seq, n_seq[1])
    x, _, nit0 = _best_plan(A, E, e, F, f, maximise=True)
    y, _, nit1 = _best_plan(A.T.tocsr(), F, f, E, e, maximise=False)
    plan = np.zeros(m)
    for p, z in ((0, x), (1, y)):
        mine = slot_player == p
        plan[mine] = np.maximum(z[slot_seq[mine]], 0.0)
    # behaviour strategy: an action's weight over its information set's total (its parent's weight
    # up to the LP's tolerance); uniform where the player's own plan never gets there
    total = np.add.reduceat(plan, g.infoset_ptr[:-1]) if m else np.zeros(0)
    total = np.repeat(total, np.diff(g.infoset_ptr))
    width = np.repeat(np.diff(g.infoset_ptr), np.diff(g.infoset_ptr)).astype(np.float64)
    strategy = np.where(total > 1e-14, plan / np.where(total > 1e-14, total, 1.0), 1.0 / width)
    ev = evaluate(g, strategy)
    return CFRResult(strategy, np.zeros(m), strategy.copy(), ev["value"], ev["nash_conv"],
                     ev["exploitability"], nit0 + nit1, time.perf_counter() - t0,
                     time.process_time() - c0)
