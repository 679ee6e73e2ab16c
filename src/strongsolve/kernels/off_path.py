"""Play off the equilibrium path: a sequential best-response refinement of a solved profile.

CFR's average strategy is an equilibrium only where its own player reaches: at an information set
that player's strategy never leads to, the average holds whatever the regrets left (uniform where
the strategy sum is zero, or the first iterations' moves), so a dominated move can show there. This
module replaces the strategy of every such information set by a best response to the opponent's
strategy from that point on.

Definitions (every solver uses these, ``refine_tabular`` and ``refine_forest``):

- *Own reach* of an information set ``I`` of player p: the product of p's own action
  probabilities under the profile along the path to ``I`` (the same for all its nodes: perfect
  recall), in float64. ``I`` is *off the equilibrium path* when its own reach is at most
  :data:`OFF_PATH_REACH`. Why not exactly zero: a DCFR average weighs iteration t by (t / T)^2
  (``kernels.cfr.dcfr_weights``, gamma = 2), so a move the regrets drop after t0 iterations keeps a
  probability of order (t0 / T)^3, never 0, and the information sets after it hold only the first
  iterations' strategies (uniform ones at first). Measured on the 11-row trees of 9- and 11-card
  decks after 20 to 90 iterations (bench/RECORD.md, 2026-12-04): no information set has own reach
  exactly 0, the smallest have 5e-6 to 4e-4. Rows of own reach at most ``OFF_PATH_REACH`` move the value and
  the NashConv by little, but a rare equilibrium mix (a bluff) turned into a pure best response can
  be exploited: the solve evaluates the refined profile and, where the value moves by more than
  its NashConv target or the NashConv rises above the larger of the solve's and the target, takes
  the next threshold of :data:`OFF_PATH_REACHES`, down to 0, where nothing the equilibrium plays
  changes (games/truco/stages/groups.py).
- *Beliefs* at an off-path information set ``I``: each node ``h`` of ``I`` weighs with the reach
  of chance and of the opponent's strategy. Where the opponent's strategy also gives probability 0
  to an action on the way (the opponent deviated too), the weights are the limit of a vanishing
  tremble: only the nodes with the fewest zero-probability opponent actions count, each with the
  product of chance and the opponent's positive probabilities. So after the opponent's own
  deviation the beliefs over its hand are those of chance (card removal) and its play before and
  after it.
- *Best response*: at ``I`` the action of highest value for p (player 0 maximises its utility,
  player 1 minimises it) under those beliefs, where below ``I`` the opponent follows its
  strategy as given (the CFR average, not refined: the two players' refinements do not depend on
  each other) and p plays the best response at its later information sets (all off the path
  too). Exact ties go to the first action. The refined row is that action with probability 1.

On-path rows are copied bit for bit. An information set's nodes all share one depth (both game
forms check it), so the best response runs level by level from the deepest, as the solvers' own
best responses do (``kernels.cfr._best_response``); its cost is about one best-response pass per
player, the cost of one NashConv check of the solve. Scratch: per node 8 bytes each of own reach,
belief weight and value, 4 of the zero-probability count (tabular); the forest form holds these
per node of one hand's deals at a time per thread, plus its first child and code (36 bytes per
node, against the best response's 28: ``forest_cfr.SCRATCH_BYTES_PER_HAND_NODE``).
"""

import numba
import numpy as np

from .cfr import CHANCE, DECISION, TERMINAL
from .forest_cfr import ID_MASK, _parallel, _schedule
from .options import njit, njit_parallel

OFF_PATH_REACH = 1e-3
"""An information set whose own reach (module docstring) is at most this is off the equilibrium
path (a probability)."""

OFF_PATH_REACHES = (OFF_PATH_REACH, 1e-4, 1e-5, 1e-6, 0.0)
"""The thresholds a solve tries in turn (module docstring); the one taken is stored with the
subgame."""

NO_DEVIATION = np.iinfo(np.int32).max  # no node of the information set is reached (kmin sentinel)


@njit
def _refine_tabular(node_type, node_player, node_infoset, child_ptr, child, child_prob, utility,
                    infoset_ptr, level_order, level_ptr, strategy, p, tau, out, off):
    """Player p's half of ``refine_tabular``: marks p's off-path sets in ``off`` and writes their
    rows of ``out``."""
    n = node_type.shape[0]
    own = np.empty(n)
    r = np.empty(n)  # chance x opponent reach, zero-probability opponent actions skipped
    k = np.empty(n, np.int32)  # zero-probability opponent actions on the way
    own[0] = 1.0
    r[0] = 1.0
    k[0] = 0
    for x in range(n):
        t = node_type[x]
        if t == TERMINAL:
            continue
        lo = child_ptr[x]
        if t == DECISION and node_player[x] == p and own[x] <= tau:
            off[node_infoset[x]] = True
        for e in range(lo, child_ptr[x + 1]):
            c = child[e]
            if t == CHANCE:
                own[c] = own[x]
                r[c] = r[x] * child_prob[e]
                k[c] = k[x]
                continue
            s = strategy[infoset_ptr[node_infoset[x]] + e - lo]
            if node_player[x] == p:
                own[c] = own[x] * s
                r[c] = r[x]
                k[c] = k[x]
            elif s > 0.0:
                own[c] = own[x]
                r[c] = r[x] * s
                k[c] = k[x]
            else:
                own[c] = own[x]
                r[c] = r[x]
                k[c] = k[x] + 1
    n_is = infoset_ptr.shape[0] - 1
    kmin = np.full(n_is, NO_DEVIATION, np.int32)
    q = np.zeros(strategy.shape[0])
    best = np.full(n_is, -1, np.int64)
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
                if off[i] and best[i] < 0:
                    lo, hi = infoset_ptr[i], infoset_ptr[i + 1]
                    arg = lo
                    for kk in range(lo + 1, hi):
                        if (q[kk] > q[arg]) if p == 0 else (q[kk] < q[arg]):
                            arg = kk
                    best[i] = arg - lo
                    for kk in range(lo, hi):
                        out[kk] = 1.0 if kk == arg else 0.0
        for j in range(a, b):
            x = level_order[j]
            t = node_type[x]
            if t == TERMINAL:
                v[x] = utility[x]
                continue
            lo = child_ptr[x]
            if t == DECISION and node_player[x] == p and off[node_infoset[x]]:
                v[x] = v[child[lo + best[node_infoset[x]]]]
                continue
            s = 0.0
            for e in range(lo, child_ptr[x + 1]):
                pr = child_prob[e] if t == CHANCE else strategy[infoset_ptr[node_infoset[x]] + e - lo]
                if pr > 0.0:
                    s += pr * v[child[e]]
            v[x] = s



def refine_tabular(game, strategy, tau=OFF_PATH_REACH):
    """The off-path refinement (module docstring) of a profile on a ``kernels.cfr.TabularGame``.

    Parameters
    ----------
    game : kernels.cfr.TabularGame
    strategy : float64[M]
        Both players' behaviour strategies (the solve's average strategy).
    tau : float
        The own-reach threshold of an off-path information set (:data:`OFF_PATH_REACH`).

    Returns
    -------
    (float64[M], bool[I])
        The refined profile (on-path rows copied bit for bit, off-path rows one best action with
        probability 1) and the off-path mask per information set.
    """
    g = game
    strategy = np.ascontiguousarray(strategy, np.float64)
    out = strategy.copy()
    off = np.zeros(g.n_infosets, np.bool_)
    for p in range(2):
        _refine_tabular(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                        g.child_prob, g.utility, g.infoset_ptr, g.level_order, g.level_ptr,
                        strategy, p, tau, out, off)
    return out, off


def _refine_forest_hand(code, deal_start, deal_prob, hand_ptr, hand_deals, n_nodes, infoset_ptr,
                        infoset_depth, infoset_local, n_slots, utility, strategy, p, h, tau, out,
                        off):
    """``refine_tabular`` for player p over the deals where p holds hand h (the only deals where
    h's information sets occur), laid out as ``forest_cfr._best_response_hand``."""
    own = np.empty(n_nodes)
    r = np.empty(n_nodes)
    k = np.empty(n_nodes, np.int32)
    v = np.empty(n_nodes)
    first = np.empty(n_nodes, np.int32)
    cd = np.empty(n_nodes, np.int32)
    count = np.zeros(257, np.int64)
    off_ = 0
    for j in range(hand_ptr[p, h], hand_ptr[p, h + 1]):
        d = hand_deals[p, j]
        b = deal_start[d]
        n = deal_start[d + 1] - b
        own[off_] = 1.0
        r[off_] = deal_prob[d]
        k[off_] = 0
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
            if mine and own[x] <= tau:
                off[c] = True
            for a in range(na):
                z = off_ + nxt + a
                s = strategy[lo + a]
                if mine:
                    own[z] = own[x] * s
                    r[z] = r[x]
                    k[z] = k[x]
                elif s > 0.0:
                    own[z] = own[x]
                    r[z] = r[x] * s
                    k[z] = k[x]
                else:
                    own[z] = own[x]
                    r[z] = r[x]
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
    q = np.zeros(n_slots)
    kmin = np.full(n_slots, NO_DEVIATION, np.int32)  # at each information set's first local slot
    done = np.zeros(n_slots, np.bool_)
    choice = np.zeros(n_slots, np.int32)
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
                for a in range(1, na):
                    if (q[base + a] > q[base + arg]) if p == 0 else (q[base + a] < q[base + arg]):
                        arg = a
                done[base] = True
                choice[base] = arg
                for a in range(na):
                    out[infoset_ptr[c] + a] = 1.0 if a == arg else 0.0
        for j in range(a0, a1):
            x = order[j]
            c = cd[x] & ID_MASK
            if (cd[x] >> 30) == p and off[c]:
                v[x] = v[first[x] + choice[infoset_local[c]]]
                continue
            s = 0.0
            lo = infoset_ptr[c]
            for a in range(infoset_ptr[c + 1] - lo):
                if strategy[lo + a] > 0.0:
                    s += strategy[lo + a] * v[first[x] + a]
            v[x] = s


def _refine_forest_py(code, deal_start, deal_prob, hand_ptr, hand_deals, hand_nodes, infoset_ptr,
                      infoset_depth, infoset_local, group_slots, utility, strategy, p, tau, out,
                      off):
    for h in numba.prange(hand_ptr.shape[1] - 1):
        if hand_ptr[p, h + 1] > hand_ptr[p, h]:
            _refine_forest_hand(code, deal_start, deal_prob, hand_ptr, hand_deals, hand_nodes[p, h],
                                infoset_ptr, infoset_depth, infoset_local, group_slots[p, h],
                                utility, strategy, p, h, tau, out, off)


_refine_forest_hand = njit(_refine_forest_hand)
_refine_forest = njit_parallel(_refine_forest_py)
_refine_forest_serial = njit(_refine_forest_py)


def refine_forest(forest, strategy, tau=OFF_PATH_REACH):
    """``refine_tabular`` on a ``kernels.forest_cfr.Forest`` (the same definitions and results;
    threads take whole hands of the refined player, whose information sets no other hand touches,
    so the result does not depend on the thread count).

    Parameters
    ----------
    forest : kernels.forest_cfr.Forest
    strategy : float64[M]
    tau : float

    Returns
    -------
    (float64[M], bool[I])
        As ``refine_tabular``.
    """
    f = forest
    strategy = np.ascontiguousarray(strategy, np.float64)
    out = strategy.copy()
    off = np.zeros(f.n_infosets, np.bool_)
    run = _refine_forest if _parallel(f) else _refine_forest_serial
    with _schedule(_parallel(f)):
        for p in range(2):
            run(f.node_code, f.deal_start, f.deal_prob, f.hand_ptr, f.hand_deals, f.hand_nodes,
                f.infoset_ptr, f.infoset_depth, f.infoset_local, f.group_slots, f.utility, strategy,
                p, tau, out, off)
    return out, off
