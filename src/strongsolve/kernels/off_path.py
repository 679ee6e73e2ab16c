"""Play off the equilibrium path: a sequential best-response refinement of a solved profile.

CFR's average strategy is an equilibrium only where the play reaches: at an information set the
profile (nearly) never leads to, the regrets are weighed by that small reach, so the average holds
whatever they left (uniform where the strategy sum is zero, or the first iterations' moves), and a
dominated move can keep weight there. This module replaces the strategy of every such information
set, of either player, by a best response to the other player's (refined) strategy from that point
on.

Definitions (every solver uses these, ``refine_tabular`` and ``refine_forest``):

- *Own reach* of an information set ``I`` of player p: the product of p's own action
  probabilities under the profile along the path to ``I`` (the same for all its nodes: perfect
  recall), in float64. ``I`` is *off the equilibrium path* when (a) its own reach is at most a
  threshold ``tau``; or (b, with ``unreached``) no node of ``I`` has positive reach by chance and
  the opponent's strategy: the opponent made it unreachable, so after the other player's
  deviation the sets of the player who did not deviate are refined too; or (c) p's previous
  information set on the way is off the path (so a best response from ``I`` also chooses at p's
  later sets). The mask is marked under the solve's profile, then again under the refined one
  (an opponent's refined row can leave a set unreached) until nothing is added.
- Why a threshold on (a) and not exactly zero: a DCFR average weighs iteration t by (t / T)^2
  (``kernels.cfr.dcfr_weights``, gamma = 2), so a move the regrets drop after t0 iterations keeps a
  probability of order (t0 / T)^3, never 0, and the information sets after it hold the early
  iterations' strategies. Measured on the 11-row trees of 9- and 11-card decks after 20 to 90
  iterations (bench/RECORD.md, 2026-12-04): no information set has own reach exactly 0, the
  smallest have 5e-6 to 4e-4; on a 7-card raise tree solved to 1e-4 (tests/kernels/
  test_off_path.py) sets of own reach between 1e-3 and 1e-1 keep weight on a move worse than the
  best by 0.57 in match-win probability. A set of own reach ``tau`` weighs at most ``tau`` in the
  value, but a rare equilibrium mix (a bluff) turned into a pure best response can be exploited,
  and so can a pure best response at a set the opponent reaches only by deviating (beliefs there
  come from trembles, not from the hands that would deviate). So the solve tries a ladder
  (games/truco/stages/groups.py): the thresholds of :data:`OFF_PATH_REACHES` from the largest
  with (b), then the same without (b); it evaluates each refined profile and takes the first
  whose value stays within its NashConv target of the solve's and whose NashConv stays at most
  the larger of the solve's and the target. The last rung (own reach 0, without (b)) changes
  nothing the equilibrium plays. The check, not the threshold, bounds what the refinement may
  cost, so the ladder starts as high as 1e-1.
- *Beliefs* at an off-path information set ``I``: each node ``h`` of ``I`` weighs with the reach
  of chance and of the opponent's strategy as solved (not refined: the beliefs are fixed before
  the best responses, which then depend only on the rows below them). Where the opponent's
  strategy gives probability 0 to an action on the way (the opponent deviated), the weights are
  the limit of a vanishing tremble: only the nodes with the fewest zero-probability opponent actions count, each
  with the product of chance and the opponent's positive probabilities. So after the opponent's
  own deviation the beliefs over its hand are those of chance (card removal) and its play before
  and after it.
- *Best response*: at ``I`` the action of highest value for p (player 0 maximises its utility,
  player 1 minimises it) under those beliefs, where below ``I`` both players follow the refined
  profile: the opponent its on-path rows as solved and its off-path rows refined, p its own later
  rows (all off the path). Exact ties go to the action the solve's profile weighs most (then the
  first), so a row that already is a best response keeps its move. The refined row is that action with
  probability 1. A row depends only on the rows below it (both players'), so one backward pass,
  level by level from the deepest, refines both players' rows at once: at each level the rows of
  that level from the values below, then the values of that level (``_backup_*``). A limit: the
  beliefs are the solved profile's, so where the other player's row between two sets of p was
  refined, p's later choice is a best response under beliefs the refined profile no longer holds,
  and the earlier set's move can fall short of the best continuation from it. Beliefs from the
  refined profile would make the two refinements depend on each other both ways (a fixed point
  with no bound on its passes). On the 9-card 11-11 tree with random pure profiles, where
  deviations of both players abound, 2 of 12 profiles show such a set; the tests pin profiles
  without one.

On-path rows are copied bit for bit. An information set's nodes all share one depth (both game
forms check it), so the best response runs level by level from the deepest, as the solvers' own
best responses do (``kernels.cfr._best_response``). The beliefs (each decision node's weight and
zero-probability count for the player who acts there) depend on the solved profile only, so a
refiner (``tabular_refiner``, ``forest_refiner``) computes them once and every threshold of the
ladder reuses them; a threshold then costs one marking pass per marking round (the rounds end when
a marking adds no set, usually the second) and one backward pass per round, about one
best-response pass of the solve each. Memory of the forest refiner: per node 8 bytes of weight, 8
of value, 1 of the count and 2 of the offset to the first child (a deal has at most 16384 nodes),
8 per decision node of the level order, per information set 26 (own reach, depth order, previous
set, smallest count, two flags) and per action slot 16 (the refined row and its values): the
constants ``BYTES_PER_*`` and ``refiner_bytes``. The tabular refiner holds 52 bytes per node.
"""

import numba
import numpy as np

from .cfr import CHANCE, DECISION, TERMINAL
from .forest_cfr import ID_MASK, _parallel, _schedule
from .options import njit, njit_parallel

OFF_PATH_REACH = 1e-3
"""The default threshold of ``refine_tabular`` and ``refine_forest``: an information set whose
own reach (module docstring) is at most this is off the equilibrium path (a probability)."""

OFF_PATH_REACHES = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 0.0)
"""The thresholds a solve tries (module docstring); the one taken is stored with the subgame."""

NO_DEVIATION = np.iinfo(np.int32).max  # no node of the information set is reached (kmin sentinel)
BYTES_PER_NODE = 8 + 8 + 1 + 2
BYTES_PER_DECISION = 8
BYTES_PER_INFOSET = 8 + 8 + 4 + 4 + 1 + 1
BYTES_PER_SLOT = 8 + 8
MAX_DEAL_NODES = 1 << 16  # the first-child offset is a uint16


def refiner_bytes(nodes, decisions, infosets, slots):
    """Bytes ``forest_refiner`` holds beside the forest and the solve's arrays (module docstring).

    Parameters
    ----------
    nodes, decisions, infosets, slots : int
        Nodes, decision nodes, information sets and action slots of the forest.

    Returns
    -------
    int
    """
    return (nodes * BYTES_PER_NODE + decisions * BYTES_PER_DECISION + infosets * BYTES_PER_INFOSET
            + slots * BYTES_PER_SLOT)


def _rounds(mark, backup, strategy, n_infosets):
    """The refined profile and mask: ``mark(reach_of, off)`` adds to ``off`` the sets off the path
    under the profile ``reach_of``; ``backup(out, off)`` writes the rows of the sets of ``off``
    into ``out``. The first marking is under the solve's profile; after each backward pass the
    mask is marked again under the refined profile (a refined row of the opponent can leave a set
    unreached) until a marking adds no set: the mask only grows, so this ends."""
    out = strategy.copy()
    off = np.zeros(n_infosets, np.bool_)
    mark(strategy, off)
    while True:
        backup(out, off)
        size = int(off.sum())
        mark(out, off)
        if int(off.sum()) == size:
            return out, off


def _pick(q, strategy, lo, hi, maximise):
    """The slot of the best action of one row (ties: the solve's most weighed, then the first)."""
    arg = lo
    for kk in range(lo + 1, hi):
        if ((q[kk] > q[arg]) if maximise else (q[kk] < q[arg])) or (
                q[kk] == q[arg] and strategy[kk] > strategy[arg]):
            arg = kk
    return arg


_pick = njit(_pick)


# ---------------------------------------------------------------- tabular


@njit
def _tabular_beliefs(node_type, node_player, node_infoset, child_ptr, child, child_prob,
                     infoset_ptr, strategy, w, k):
    """Each decision node's belief weight ``w`` (chance x the solved opponent's positive action
    probabilities) and zero-probability count ``k``, for the player who acts there."""
    n = node_type.shape[0]
    r = np.empty(n)
    kk = np.empty(n, np.int32)
    for p in range(2):
        r[0] = 1.0
        kk[0] = 0
        for x in range(n):
            t = node_type[x]
            if t == TERMINAL:
                continue
            mine = t == DECISION and node_player[x] == p
            if mine:
                w[x] = r[x]
                k[x] = kk[x]
            lo = child_ptr[x]
            for e in range(lo, child_ptr[x + 1]):
                c = child[e]
                r[c], kk[c] = r[x], kk[x]
                if t == CHANCE:
                    r[c] = r[x] * child_prob[e]
                elif not mine:
                    s = strategy[infoset_ptr[node_infoset[x]] + e - lo]
                    if s > 0.0:
                        r[c] = r[x] * s
                    else:
                        kk[c] = kk[x] + 1


@njit
def _tabular_mark(node_type, node_player, node_infoset, child_ptr, child, child_prob, infoset_ptr,
                  level_order, reach_of, tau, unreached, off):
    """Adds to ``off`` both players' sets off the path under ``reach_of`` (module docstring)."""
    n = node_type.shape[0]
    n_is = infoset_ptr.shape[0] - 1
    own = np.empty(n)
    cc = np.empty(n)
    o = np.empty(n)
    last = np.empty(n, np.int64)
    reached = np.zeros(n_is, np.bool_)
    own_i = np.zeros(n_is)
    parent = np.full(n_is, -1, np.int64)
    for p in range(2):
        own[0] = cc[0] = o[0] = 1.0
        last[0] = -1
        for x in range(n):
            t = node_type[x]
            if t == TERMINAL:
                continue
            mine = t == DECISION and node_player[x] == p
            if mine:
                i = node_infoset[x]
                if cc[x] * o[x] > 0.0:
                    reached[i] = True
                own_i[i] = own[x]
                parent[i] = last[x]
            lo = child_ptr[x]
            for e in range(lo, child_ptr[x + 1]):
                c = child[e]
                own[c], cc[c], o[c] = own[x], cc[x], o[x]
                last[c] = node_infoset[x] if mine else last[x]
                if t == CHANCE:
                    cc[c] = cc[x] * child_prob[e]
                elif mine:
                    own[c] = own[x] * reach_of[infoset_ptr[node_infoset[x]] + e - lo]
                else:
                    o[c] = o[x] * reach_of[infoset_ptr[node_infoset[x]] + e - lo]
    for j in range(level_order.shape[0]):  # shallow to deep: below an off-path set of p, off too
        x = level_order[j]
        if node_type[x] == DECISION:
            i = node_infoset[x]
            off[i] = (off[i] or own_i[i] <= tau or (unreached and not reached[i])
                      or (parent[i] >= 0 and off[parent[i]]))


@njit
def _tabular_backup(node_type, node_player, node_infoset, child_ptr, child, child_prob, utility,
                    infoset_ptr, level_order, level_ptr, strategy, w, k, out, off):
    """One backward pass: the rows of both players' sets of ``off`` in ``out``, each the best
    action under the beliefs ``w``, ``k`` against ``out`` below it (module docstring)."""
    n = node_type.shape[0]
    n_is = infoset_ptr.shape[0] - 1
    kmin = np.full(n_is, NO_DEVIATION, np.int32)
    q = np.zeros(strategy.shape[0])
    done = np.zeros(n_is, np.bool_)
    v = np.empty(n)  # player 0's expected utility from the node on (conditional, not weighted)
    for d in range(level_ptr.shape[0] - 2, -1, -1):
        a, b = level_ptr[d], level_ptr[d + 1]
        for j in range(a, b):
            x = level_order[j]
            if node_type[x] == DECISION and w[x] > 0.0:
                i = node_infoset[x]
                if off[i] and k[x] < kmin[i]:
                    kmin[i] = k[x]
        for j in range(a, b):
            x = level_order[j]
            if node_type[x] == DECISION and w[x] > 0.0:
                i = node_infoset[x]
                if off[i] and k[x] == kmin[i]:
                    lo = child_ptr[x]
                    base = infoset_ptr[i]
                    for e in range(lo, child_ptr[x + 1]):
                        q[base + e - lo] += w[x] * v[child[e]]
        for j in range(a, b):
            x = level_order[j]
            if node_type[x] == DECISION:
                i = node_infoset[x]
                if off[i] and not done[i]:
                    done[i] = True
                    lo, hi = infoset_ptr[i], infoset_ptr[i + 1]
                    arg = _pick(q, strategy, lo, hi, node_player[x] == 0)
                    for kk in range(lo, hi):
                        out[kk] = 1.0 if kk == arg else 0.0
        for j in range(a, b):
            x = level_order[j]
            t = node_type[x]
            if t == TERMINAL:
                v[x] = utility[x]
                continue
            lo = child_ptr[x]
            s = 0.0
            for e in range(lo, child_ptr[x + 1]):
                pr = child_prob[e] if t == CHANCE else out[infoset_ptr[node_infoset[x]] + e - lo]
                if pr > 0.0:
                    s += pr * v[child[e]]
            v[x] = s


def tabular_refiner(game, strategy):
    """The off-path refinement (module docstring) of a profile on a ``kernels.cfr.TabularGame``,
    its beliefs computed once for every threshold.

    Parameters
    ----------
    game : kernels.cfr.TabularGame
    strategy : float64[M]
        Both players' behaviour strategies (the solve's average strategy).

    Returns
    -------
    callable
        ``refine(tau, unreached) -> (float64[M], bool[I])``: with ``tau`` the own-reach threshold
        of an off-path information set (a probability) and ``unreached`` also the sets the
        opponent's strategy never reaches (module docstring), the refined profile (on-path rows
        copied bit for bit, off-path rows one best action with probability 1) and the off-path
        mask per information set.
    """
    g = game
    strategy = np.ascontiguousarray(strategy, np.float64)
    w = np.zeros(g.n_nodes)
    k = np.zeros(g.n_nodes, np.int32)
    _tabular_beliefs(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                     g.child_prob, g.infoset_ptr, strategy, w, k)

    def refine(tau, unreached):
        def mark(reach_of, off):
            _tabular_mark(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                          g.child_prob, g.infoset_ptr, g.level_order, reach_of, tau, unreached, off)

        def backup(out, off):
            _tabular_backup(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                            g.child_prob, g.utility, g.infoset_ptr, g.level_order, g.level_ptr,
                            strategy, w, k, out, off)

        return _rounds(mark, backup, strategy, g.n_infosets)

    return refine


def refine_tabular(game, strategy, tau=OFF_PATH_REACH, unreached=True):
    """``tabular_refiner(game, strategy)(tau, unreached)``: one threshold (its docstring)."""
    return tabular_refiner(game, strategy)(tau, unreached)


# ---------------------------------------------------------------- forest

DEAL_CHUNK = 1024  # deals per task of the parallel passes over deals


@njit
def _chunk(deal_start, chunk):
    """The deals ``d0:d1`` of task ``chunk`` and the nodes of its largest deal (its scratch)."""
    d0 = chunk * DEAL_CHUNK
    d1 = min(deal_start.shape[0] - 1, d0 + DEAL_CHUNK)
    size = 1
    for d in range(d0, d1):
        size = max(size, deal_start[d + 1] - deal_start[d])
    return d0, d1, size


def _forest_beliefs_py(code, deal_start, deal_prob, infoset_ptr, utility, strategy, w, k, step, v):
    """``_tabular_beliefs`` on the forest, deal by deal; also each decision node's offset to its
    first child ``step`` and each terminal's value ``v``."""
    n_deals = deal_prob.shape[0]
    for chunk in numba.prange((n_deals + DEAL_CHUNK - 1) // DEAL_CHUNK):
        d0, d1, size = _chunk(deal_start, chunk)
        r = np.empty((2, size))
        kk = np.empty((2, size), np.int32)
        for d in range(d0, d1):
            b = deal_start[d]
            r[0, 0] = r[1, 0] = deal_prob[d]
            kk[0, 0] = kk[1, 0] = 0
            nxt = 1
            for li in range(deal_start[d + 1] - b):
                y = code[b + li]
                if y < 0:
                    v[b + li] = utility[-1 - y]
                    continue
                c = y & ID_MASK
                p = y >> 30
                w[b + li] = r[p, li]
                k[b + li] = kk[p, li]
                step[b + li] = nxt - li
                lo = infoset_ptr[c]
                for a in range(infoset_ptr[c + 1] - lo):
                    z = nxt + a
                    r[p, z], kk[p, z] = r[p, li], kk[p, li]
                    s = strategy[lo + a]
                    if s > 0.0:
                        r[1 - p, z], kk[1 - p, z] = r[1 - p, li] * s, kk[1 - p, li]
                    else:
                        r[1 - p, z], kk[1 - p, z] = r[1 - p, li], kk[1 - p, li] + 1
                nxt += infoset_ptr[c + 1] - lo


def _forest_mark_py(code, deal_start, deal_prob, infoset_ptr, reach_of, own_i, reached, parent):
    """Per information set: its player's own reach under ``reach_of`` (``own_i``), whether any of
    its nodes has positive chance x opponent reach (``reached``) and its player's previous set on
    the way (``parent``, -1: none). A player's reach from the root is its own reach, and the
    opponent's reach of a node is the other player's own reach there."""
    n_deals = deal_prob.shape[0]
    for chunk in numba.prange((n_deals + DEAL_CHUNK - 1) // DEAL_CHUNK):
        d0, d1, size = _chunk(deal_start, chunk)
        own = np.empty((2, size))
        last = np.empty((2, size), np.int32)
        for d in range(d0, d1):
            b = deal_start[d]
            own[0, 0] = own[1, 0] = 1.0
            last[0, 0] = last[1, 0] = -1
            nxt = 1
            for li in range(deal_start[d + 1] - b):
                y = code[b + li]
                if y < 0:
                    continue
                c = y & ID_MASK
                p = y >> 30
                if deal_prob[d] * own[1 - p, li] > 0.0:  # same writes from every thread: no race
                    reached[c] = True
                own_i[c] = own[p, li]
                parent[c] = last[p, li]
                lo = infoset_ptr[c]
                for a in range(infoset_ptr[c + 1] - lo):
                    z = nxt + a
                    own[p, z], last[p, z] = own[p, li] * reach_of[lo + a], c
                    own[1 - p, z], last[1 - p, z] = own[1 - p, li], last[1 - p, li]
                nxt += infoset_ptr[c + 1] - lo


def _forest_values_py(code, infoset_ptr, order, a0, a1, step, out, v):
    """The values of the decision nodes ``order[a0:a1]`` (one level) from those below."""
    for j in numba.prange(a0, a1):
        x = order[j]
        c = code[x] & ID_MASK
        lo = infoset_ptr[c]
        s = 0.0
        for a in range(infoset_ptr[c + 1] - lo):
            if out[lo + a] > 0.0:
                s += out[lo + a] * v[x + step[x] + a]
        v[x] = s


_forest_beliefs = njit_parallel(_forest_beliefs_py)
_forest_beliefs_serial = njit(_forest_beliefs_py)
_forest_mark = njit_parallel(_forest_mark_py)
_forest_mark_serial = njit(_forest_mark_py)
_forest_values = njit_parallel(_forest_values_py)
_forest_values_serial = njit(_forest_values_py)


@njit
def _forest_flags(infoset_order, own_i, reached, parent, tau, unreached, off):
    """Adds to ``off`` the sets off the path (``infoset_order``: shallow to deep)."""
    for j in range(infoset_order.shape[0]):
        c = infoset_order[j]
        off[c] = (off[c] or own_i[c] <= tau or (unreached and not reached[c])
                  or (parent[c] >= 0 and off[parent[c]]))


@njit
def _forest_rows(code, infoset_ptr, order, a0, a1, strategy, w, k, step, v, off, kmin, q, out):
    """``_tabular_backup``'s rows for one level ``order[a0:a1]`` (the nodes in deal order, so each
    row's sums run in the order of the per-hand passes of ``forest_cfr``)."""
    for j in range(a0, a1):
        x = order[j]
        c = code[x] & ID_MASK
        if off[c] and w[x] > 0.0 and k[x] < kmin[c]:
            kmin[c] = k[x]
    for j in range(a0, a1):
        x = order[j]
        c = code[x] & ID_MASK
        if off[c] and w[x] > 0.0 and k[x] == kmin[c]:
            lo = infoset_ptr[c]
            for a in range(infoset_ptr[c + 1] - lo):
                q[lo + a] += w[x] * v[x + step[x] + a]
    for j in range(a0, a1):
        x = order[j]
        c = code[x] & ID_MASK
        if off[c] and kmin[c] != -1:
            kmin[c] = -1  # done
            lo, hi = infoset_ptr[c], infoset_ptr[c + 1]
            arg = _pick(q, strategy, lo, hi, (code[x] >> 30) == 0)
            for kk in range(lo, hi):
                out[kk] = 1.0 if kk == arg else 0.0


@njit
def _level_order(code, infoset_depth):
    """The decision nodes sorted by depth (counting sort, stable) and each depth's start."""
    count = np.zeros(257, np.int64)
    for x in range(code.shape[0]):
        if code[x] >= 0:
            count[infoset_depth[code[x] & ID_MASK] + 1] += 1
    for d in range(1, 257):
        count[d] += count[d - 1]
    order = np.empty(count[256], np.int64)
    fill = count[:256].copy()
    for x in range(code.shape[0]):
        if code[x] >= 0:
            d = infoset_depth[code[x] & ID_MASK]
            order[fill[d]] = x
            fill[d] += 1
    return order, count


def forest_refiner(forest, strategy):
    """``tabular_refiner`` on a ``kernels.forest_cfr.Forest``: the same definitions and results,
    bit for bit (each row's sums run over its nodes in deal order, as the per-hand passes do).
    Threads take chunks of deals in the passes over deals and nodes of one level in the values; no
    sum is split between threads, so the result does not depend on the thread count.

    Parameters
    ----------
    forest : kernels.forest_cfr.Forest
    strategy : float64[M]

    Returns
    -------
    callable
        As ``tabular_refiner``. Memory: ``refiner_bytes``.

    Raises
    ------
    ValueError
        If a deal has more than ``MAX_DEAL_NODES`` nodes (the builders make at most 16384).
    """
    f = forest
    if f.n_deals and int(np.diff(f.deal_start).max()) > MAX_DEAL_NODES:
        raise ValueError(f"a deal of {int(np.diff(f.deal_start).max())} nodes: the off-path "
                         f"refinement takes at most {MAX_DEAL_NODES} per deal")
    par = _parallel(f)
    strategy = np.ascontiguousarray(strategy, np.float64)
    n = len(f.node_code)
    w = np.zeros(n)
    k = np.zeros(n, np.uint8)
    step = np.zeros(n, np.uint16)
    v = np.zeros(n)
    with _schedule(par):
        (_forest_beliefs if par else _forest_beliefs_serial)(
            f.node_code, f.deal_start, f.deal_prob, f.infoset_ptr, f.utility, strategy, w, k, step, v)
    order, level_ptr = _level_order(f.node_code, f.infoset_depth)
    infoset_order = np.argsort(f.infoset_depth, kind="stable")
    values = _forest_values if par else _forest_values_serial

    def refine(tau, unreached):
        def mark(reach_of, off):
            own_i = np.zeros(f.n_infosets)
            reached = np.zeros(f.n_infosets, np.bool_)
            parent = np.full(f.n_infosets, -1, np.int32)
            with _schedule(par):
                (_forest_mark if par else _forest_mark_serial)(
                    f.node_code, f.deal_start, f.deal_prob, f.infoset_ptr, reach_of, own_i,
                    reached, parent)
            _forest_flags(infoset_order, own_i, reached, parent, tau, unreached, off)

        def backup(out, off):
            kmin = np.full(f.n_infosets, NO_DEVIATION, np.int32)
            q = np.zeros(len(strategy))
            for d in range(255, -1, -1):
                a0, a1 = level_ptr[d], level_ptr[d + 1]
                if a0 < a1:
                    _forest_rows(f.node_code, f.infoset_ptr, order, a0, a1, strategy, w, k, step,
                                 v, off, kmin, q, out)
                    values(f.node_code, f.infoset_ptr, order, a0, a1, step, out, v)

        return _rounds(mark, backup, strategy, f.n_infosets)

    return refine


def refine_forest(forest, strategy, tau=OFF_PATH_REACH, unreached=True):
    """``forest_refiner(forest, strategy)(tau, unreached)``: one threshold (its docstring)."""
    return forest_refiner(forest, strategy)(tau, unreached)
