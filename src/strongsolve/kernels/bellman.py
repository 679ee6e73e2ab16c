"""The Bellman backup shared by every game: chance, then decision.

A position ``x`` first meets chance with outcomes ``o`` of probability ``p(o|x)``; then the player
picks a candidate action ``a`` among ``A(x, o)``::

    V(x) = sum_o p(o|x) * opt_{a in A(x,o)} [ r(x,o,a) + s(x,o,a) * V'(T(x,o,a)) ]

``opt`` is max or min; ``s`` is +1, or -1 for a zero-sum two-player game seen by the player to move
(negamax: with ``r = 1, s = -1`` a win probability ``1 - V(next)``). An outcome with no candidate
(a 2048 state with no legal move) contributes ``empty_value``. See the reference design (DESIGN.md), "One
abstraction for every game".

The expansion is given as a two-level CSR structure, built by the game:

- ``node_ptr``  int64[X+1]: outcomes of node ``x`` are ``node_ptr[x]:node_ptr[x+1]``
- ``out_prob``  float64[O]: probability of each outcome (sums to 1 per node, not checked here)
- ``out_ptr``   int64[O+1]: candidates of outcome ``o`` are ``out_ptr[o]:out_ptr[o+1]``
- ``cand_reward`` float64[C]: immediate reward (points, rolls, ...)
- ``cand_next`` int64[C]: index of the successor in ``next_value``
- ``cand_sign`` float64[C]: +1 or -1 (see above)

Ties go to the first best candidate, so results are deterministic. The kernels are serial and release
the GIL; large layers are backed up chunk by chunk in parallel (:mod:`strongsolve.parallel`).
"""

import numpy as np
from .options import njit


@njit
def _backup_node(x, node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, next_value,
                 maximize, empty_value, best):
    total = 0.0
    for o in range(node_ptr[x], node_ptr[x + 1]):
        lo = out_ptr[o]
        hi = out_ptr[o + 1]
        if lo == hi:
            best[o] = -1
            total += out_prob[o] * empty_value
            continue
        arg = lo
        opt = cand_reward[lo] + cand_sign[lo] * next_value[cand_next[lo]]
        for a in range(lo + 1, hi):
            v = cand_reward[a] + cand_sign[a] * next_value[cand_next[a]]
            if (v > opt) if maximize else (v < opt):
                opt = v
                arg = a
        best[o] = arg - lo
        total += out_prob[o] * opt
    return total


@njit
def backup(node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, next_value, maximize,
           empty_value):
    """One Jacobi Bellman backup of every node (serial; ``nogil``).

    Parameters
    ----------
    node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign
        The expansion, as in the module docstring.
    next_value : float64[N]
        Values of the successors (the next layer, or the current iterate for a cyclic game).
    maximize : bool
        True for max, False for min.
    empty_value : float
        Value of an outcome with no candidate.

    Returns
    -------
    value : float64[X]
        The backed-up value of each node.
    best : int64[O]
        Per outcome, the position of the best candidate within the outcome (-1 if none).
    """
    n = node_ptr.shape[0] - 1
    value = np.empty(n, np.float64)
    best = np.empty(out_prob.shape[0], np.int64)
    for x in range(n):
        value[x] = _backup_node(x, node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign,
                                next_value, maximize, empty_value, best)
    return value, best


@njit
def backup_in_place(node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, value, maximize,
                    empty_value):
    """One Gauss-Seidel sweep: like :func:`backup`, but each node's new value is used at once by the
    nodes after it (``value`` is both the successor values and the output, float64[X]).

    Returns
    -------
    delta : float
        The largest absolute change of a value in this sweep.
    best : int64[O]
        As in :func:`backup`.
    """
    n = node_ptr.shape[0] - 1
    best = np.empty(out_prob.shape[0], np.int64)
    delta = 0.0
    for x in range(n):
        v = _backup_node(x, node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, value,
                         maximize, empty_value, best)
        d = abs(v - value[x])
        if d > delta:
            delta = d
        value[x] = v
    return delta, best
