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
  probability 1. The two players' refinements depend on each other only through the rows below, so
  sweeps of both players, each a backward pass level by level from the deepest, settle: sweep n
  fixes at least the deepest n levels (``_sweeps``). A limit: the beliefs are the solved
  profile's, so where the other player's row between two sets of p was refined, p's later choice
  is a best response under beliefs the refined profile no longer holds, and the earlier set's move
  can fall short of the best continuation from it. Beliefs from the refined profile would make the
  two refinements depend on each other both ways (a fixed point with no bound on its sweeps). On
  the 9-card 11-11 tree with random pure profiles, where deviations of both players abound, 2 of
  12 profiles show such a set; the tests pin profiles without one.

On-path rows are copied bit for bit. An information set's nodes all share one depth (both game
forms check it), so the best response runs level by level from the deepest, as the solvers' own
best responses do (``kernels.cfr._best_response``); a sweep costs about one best-response pass per
player, the cost of one NashConv check of the solve. Scratch: per node 8 bytes each of own reach,
belief weight, chance reach (tabular), opponent reach and value, 8 (tabular) or 4 (forest) of p's
last set on the way and 4 of the zero-probability count; the forest form holds these per node of
one hand's deals at a time per thread, plus its first child and code (44 bytes per node, against
the best response's 28: ``forest_cfr.SCRATCH_BYTES_PER_HAND_NODE``).
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
"""The thresholds a solve tries in turn (module docstring); the one taken is stored with the
subgame."""

NO_DEVIATION = np.iinfo(np.int32).max  # no node of the information set is reached (kmin sentinel)


@njit
def _refine_tabular(node_type, node_player, node_infoset, child_ptr, child, child_prob, utility,
                    infoset_ptr, level_order, level_ptr, strategy, reach_of, p, tau, unreached,
                    mark, out, off):
    """One sweep of player p in ``refine_tabular``: with ``mark``, adds to ``off`` p's sets off the
    path under the profile ``reach_of`` (module docstring); then writes the rows of p's off-path
    sets of ``out``, each the best action against ``out`` below it (beliefs from ``strategy``)."""
    n = node_type.shape[0]
    n_is = infoset_ptr.shape[0] - 1
    own = np.empty(n)
    r = np.empty(n)  # chance x opponent reach, zero-probability opponent actions skipped
    k = np.empty(n, np.int32)  # zero-probability opponent actions on the way
    cc = np.empty(n)  # chance reach
    o = np.empty(n)  # opponent reach, zeros included
    last = np.empty(n, np.int64)  # p's last information set on the way (-1: none)
    sum_o = np.zeros(n_is)
    own_i = np.zeros(n_is)
    parent = np.full(n_is, -1, np.int64)
    own[0] = r[0] = cc[0] = o[0] = 1.0
    k[0] = 0
    last[0] = -1
    for x in range(n):
        t = node_type[x]
        if t == TERMINAL:
            continue
        lo = child_ptr[x]
        mine = t == DECISION and node_player[x] == p
        if mine and mark:
            i = node_infoset[x]
            sum_o[i] += cc[x] * o[x]
            own_i[i] = own[x]
            parent[i] = last[x]
        for e in range(lo, child_ptr[x + 1]):
            c = child[e]
            own[c], r[c], k[c], cc[c], o[c] = own[x], r[x], k[x], cc[x], o[x]
            last[c] = node_infoset[x] if mine else last[x]
            if t == CHANCE:
                r[c] = r[x] * child_prob[e]
                cc[c] = cc[x] * child_prob[e]
                continue
            s = strategy[infoset_ptr[node_infoset[x]] + e - lo]
            m = reach_of[infoset_ptr[node_infoset[x]] + e - lo]
            if mine:
                own[c] = own[x] * m
            else:
                o[c] = o[x] * m
                if s > 0.0:
                    r[c] = r[x] * s
                else:
                    k[c] = k[x] + 1
    if mark:  # shallow to deep: a set below an off-path one of p is off the path too
        for j in range(level_order.shape[0]):
            x = level_order[j]
            if node_type[x] == DECISION and node_player[x] == p:
                i = node_infoset[x]
                off[i] = (off[i] or own_i[i] <= tau or (unreached and sum_o[i] == 0.0)
                          or (parent[i] >= 0 and off[parent[i]]))
    kmin = np.full(n_is, NO_DEVIATION, np.int32)
    q = np.zeros(strategy.shape[0])
    done = np.zeros(n_is, np.bool_)
    v = np.empty(n)  # player 0's expected utility from the node on (conditional, not weighted)
    for d in range(level_ptr.shape[0] - 2, -1, -1):
        a, b = level_ptr[d], level_ptr[d + 1]
        for j in range(a, b):
            x = level_order[j]
            if node_type[x] == DECISION and node_player[x] == p and r[x] > 0.0:
                i = node_infoset[x]
                if off[i] and k[x] < kmin[i]:
                    kmin[i] = k[x]
        for j in range(a, b):
            x = level_order[j]
            if node_type[x] == DECISION and node_player[x] == p and r[x] > 0.0:
                i = node_infoset[x]
                if off[i] and k[x] == kmin[i]:
                    lo = child_ptr[x]
                    base = infoset_ptr[i]
                    for e in range(lo, child_ptr[x + 1]):
                        q[base + e - lo] += r[x] * v[child[e]]
        for j in range(a, b):
            x = level_order[j]
            if node_type[x] == DECISION and node_player[x] == p:
                i = node_infoset[x]
                if off[i] and not done[i]:
                    done[i] = True
                    lo, hi = infoset_ptr[i], infoset_ptr[i + 1]
                    arg = lo
                    for kk in range(lo + 1, hi):
                        if ((q[kk] > q[arg]) if p == 0 else (q[kk] < q[arg])) or (
                                q[kk] == q[arg] and strategy[kk] > strategy[arg]):
                            arg = kk
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


def _sweeps(sweep, strategy, n_infosets, n_levels):
    """The refined profile and mask. ``sweep(strategy, reach_of, p, mark, out, off)`` runs for
    p = 0 then 1, repeated until a repetition changes no row: sweep n fixes the rows of the
    deepest n levels at least (a row depends on the rows below it only), so at most
    ``n_levels + 1`` sweeps. The first sweep marks the sets off the path under the solve's profile;
    then the mask is marked again under the refined profile (a refined row of the opponent can
    leave a set unreached), and the sweeps run again until a marking adds no set: the mask only
    grows, so this ends."""
    strategy = np.ascontiguousarray(strategy, np.float64)
    out = strategy.copy()
    off = np.zeros(n_infosets, np.bool_)
    reach_of = strategy
    while True:
        size = int(off.sum())
        for n in range(n_levels + 2):
            before = out.copy()
            for p in range(2):
                sweep(strategy, reach_of, p, n == 0, out, off)
            if n == 0 and reach_of is not strategy and int(off.sum()) == size:
                return out, off  # no set added: the sweep changed no row
            if n > 0 and np.array_equal(before, out):
                break
        else:
            raise RuntimeError(f"the off-path refinement changed rows after {n_levels + 2} sweeps "
                               f"of a tree of {n_levels} levels: a fault of the kernel")
        reach_of = out.copy()


def refine_tabular(game, strategy, tau=OFF_PATH_REACH, unreached=True):
    """The off-path refinement (module docstring) of a profile on a ``kernels.cfr.TabularGame``.

    Parameters
    ----------
    game : kernels.cfr.TabularGame
    strategy : float64[M]
        Both players' behaviour strategies (the solve's average strategy).
    tau : float
        The own-reach threshold of an off-path information set (a probability; module docstring).
    unreached : bool
        Also the sets the opponent's strategy never reaches (module docstring).

    Returns
    -------
    (float64[M], bool[I])
        The refined profile (on-path rows copied bit for bit, off-path rows one best action with
        probability 1) and the off-path mask per information set.

    Raises
    ------
    RuntimeError
        If the sweeps do not settle within the tree's depth (a fault of the kernel).
    """
    g = game

    def sweep(st, reach_of, p, mark, out, off):
        _refine_tabular(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                        g.child_prob, g.utility, g.infoset_ptr, g.level_order, g.level_ptr,
                        st, reach_of, p, tau, unreached, mark, out, off)

    return _sweeps(sweep, strategy, g.n_infosets, g.level_ptr.shape[0] - 1)


def _refine_forest_hand(code, deal_start, deal_prob, hand_ptr, hand_deals, n_nodes, infoset_ptr,
                        infoset_depth, infoset_local, n_slots, utility, strategy, reach_of, p, h,
                        tau, unreached, mark, out, off):
    """``_refine_tabular`` for player p over the deals where p holds hand h (the only deals where
    h's information sets occur), laid out as ``forest_cfr._best_response_hand``."""
    own = np.empty(n_nodes)
    r = np.empty(n_nodes)
    k = np.empty(n_nodes, np.int32)
    o = np.empty(n_nodes)
    last = np.empty(n_nodes, np.int32)
    v = np.empty(n_nodes)
    first = np.empty(n_nodes, np.int32)
    cd = np.empty(n_nodes, np.int32)
    count = np.zeros(257, np.int64)
    sum_o = np.zeros(n_slots)  # at each information set's first local slot
    own_i = np.zeros(n_slots)
    parent = np.full(n_slots, -1, np.int32)
    off_ = 0
    for j in range(hand_ptr[p, h], hand_ptr[p, h + 1]):
        d = hand_deals[p, j]
        b = deal_start[d]
        n = deal_start[d + 1] - b
        own[off_] = o[off_] = 1.0
        r[off_] = deal_prob[d]
        k[off_] = 0
        last[off_] = -1
        nxt = 1
        for li in range(n):
            x = off_ + li
            y = code[b + li]
            cd[x] = y
            if y < 0:
                v[x] = utility[-1 - y]
                continue
            c = y & ID_MASK
            lo = infoset_ptr[c]
            na = infoset_ptr[c + 1] - lo
            first[x] = off_ + nxt
            mine = (y >> 30) == p
            if mine and mark:
                base = infoset_local[c]
                sum_o[base] += deal_prob[d] * o[x]
                own_i[base] = own[x]
                parent[base] = last[x]
            for a in range(na):
                z = off_ + nxt + a
                s = strategy[lo + a]
                m = reach_of[lo + a]
                own[z], r[z], k[z], o[z] = own[x], r[x], k[x], o[x]
                last[z] = c if mine else last[x]
                if mine:
                    own[z] = own[x] * m
                else:
                    o[z] = o[x] * m
                    if s > 0.0:
                        r[z] = r[x] * s
                    else:
                        k[z] = k[x] + 1
            nxt += na
            count[infoset_depth[c] + 1] += 1
        off_ += n
    for dd in range(1, 257):  # decision nodes ordered by depth (counting sort)
        count[dd] += count[dd - 1]
    order = np.empty(count[256], np.int32)
    fill = count[:256].copy()
    for x in range(off_):
        if cd[x] >= 0:
            dd = infoset_depth[cd[x] & ID_MASK]
            order[fill[dd]] = x
            fill[dd] += 1
    if mark:  # shallow to deep: a set below an off-path one of p is off the path too
        for j in range(order.shape[0]):
            x = order[j]
            c = cd[x] & ID_MASK
            if (cd[x] >> 30) == p:
                base = infoset_local[c]
                off[c] = (off[c] or own_i[base] <= tau or (unreached and sum_o[base] == 0.0)
                          or (parent[base] >= 0 and off[parent[base]]))
    q = np.zeros(n_slots)
    kmin = np.full(n_slots, NO_DEVIATION, np.int32)  # at each information set's first local slot
    done = np.zeros(n_slots, np.bool_)
    for dd in range(255, -1, -1):
        a0, a1 = count[dd], count[dd + 1]
        if a0 == a1:
            continue
        for j in range(a0, a1):
            x = order[j]
            c = cd[x] & ID_MASK
            if (cd[x] >> 30) == p and off[c] and r[x] > 0.0 and k[x] < kmin[infoset_local[c]]:
                kmin[infoset_local[c]] = k[x]
        for j in range(a0, a1):
            x = order[j]
            c = cd[x] & ID_MASK
            if (cd[x] >> 30) == p and off[c] and r[x] > 0.0 and k[x] == kmin[infoset_local[c]]:
                base = infoset_local[c]
                for a in range(infoset_ptr[c + 1] - infoset_ptr[c]):
                    q[base + a] += r[x] * v[first[x] + a]
        for j in range(a0, a1):
            x = order[j]
            c = cd[x] & ID_MASK
            if (cd[x] >> 30) == p and off[c] and not done[infoset_local[c]]:
                base = infoset_local[c]
                na = infoset_ptr[c + 1] - infoset_ptr[c]
                arg = 0
                lo = infoset_ptr[c]
                for a in range(1, na):
                    if ((q[base + a] > q[base + arg]) if p == 0 else (q[base + a] < q[base + arg])) or (
                            q[base + a] == q[base + arg] and strategy[lo + a] > strategy[lo + arg]):
                        arg = a
                done[base] = True
                for a in range(na):
                    out[infoset_ptr[c] + a] = 1.0 if a == arg else 0.0
        for j in range(a0, a1):
            x = order[j]
            c = cd[x] & ID_MASK
            s = 0.0
            lo = infoset_ptr[c]
            for a in range(infoset_ptr[c + 1] - lo):
                if out[lo + a] > 0.0:
                    s += out[lo + a] * v[first[x] + a]
            v[x] = s


def _refine_forest_py(code, deal_start, deal_prob, hand_ptr, hand_deals, hand_nodes, infoset_ptr,
                      infoset_depth, infoset_local, group_slots, utility, strategy, reach_of, p,
                      tau, unreached, mark, out, off):
    for h in numba.prange(hand_ptr.shape[1] - 1):
        if hand_ptr[p, h + 1] > hand_ptr[p, h]:
            _refine_forest_hand(code, deal_start, deal_prob, hand_ptr, hand_deals, hand_nodes[p, h],
                                infoset_ptr, infoset_depth, infoset_local, group_slots[p, h],
                                utility, strategy, reach_of, p, h, tau, unreached, mark, out,
                                off)


_refine_forest_hand = njit(_refine_forest_hand)
_refine_forest = njit_parallel(_refine_forest_py)
_refine_forest_serial = njit(_refine_forest_py)


def refine_forest(forest, strategy, tau=OFF_PATH_REACH, unreached=True):
    """``refine_tabular`` on a ``kernels.forest_cfr.Forest`` (the same definitions and results;
    threads take whole hands of the refined player, whose information sets no other hand touches,
    so the result does not depend on the thread count).

    Parameters
    ----------
    forest : kernels.forest_cfr.Forest
    strategy : float64[M]
    tau : float
    unreached : bool

    Returns
    -------
    (float64[M], bool[I])
        As ``refine_tabular``.

    Raises
    ------
    RuntimeError
        As ``refine_tabular``.
    """
    f = forest
    run = _refine_forest if _parallel(f) else _refine_forest_serial

    def sweep(st, reach_of, p, mark, out, off):
        run(f.node_code, f.deal_start, f.deal_prob, f.hand_ptr, f.hand_deals, f.hand_nodes,
            f.infoset_ptr, f.infoset_depth, f.infoset_local, f.group_slots, f.utility, st,
            reach_of, p, tau, unreached, mark, out, off)

    with _schedule(_parallel(f)):
        n_levels = int(f.infoset_depth.max()) + 2 if f.n_infosets else 1
        return _sweeps(sweep, strategy, f.n_infosets, n_levels)
