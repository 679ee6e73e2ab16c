"""Discounted CFR and exact best response on a chance-rooted forest of small trees, in little memory.

A Truco raise subgame (games/truco/tree.py) is a chance node over deals whose subtrees are small
(at most ``MAX_NODES_PER_DEAL_RAISES`` = 16384 nodes each) and whose terminal utilities depend only
on an outcome code. ``kernels.cfr`` holds it as a general ``TabularGame`` (about 122 bytes per node
at its peak); this module keeps only what the game needs:

- per node, one int32 ``node_code``: at a decision node its information set plus ``PLAYER_BIT``
  (2**30) if player 1 acts (so the player costs no memory access), ``-1 - outcome`` at a
  terminal. Each deal's nodes are stored in the builder's breadth-first order (its root first),
  so the children of the decision nodes follow one another: the first child of a node is one
  past the children of the nodes before it, counted while walking, and a node's child count is
  its information set's action count. No child pointer, depth or player array.
- per information set: key int64, ``infoset_ptr`` int64, depth uint8, and the offset of its first
  slot among its player's hand's slots int32 (for the update and the best response): 21 bytes.
- per action slot: regret, strategy sum and current strategy, float64 each: 24 bytes.
- per deal: start int64, probability float64, both hands int32, and its place in the deal lists
  by mano's and by pé's hand int32 each: 32 bytes.

So ``BYTES_PER_NODE = 4``, ``BYTES_PER_INFOSET = 21``, ``BYTES_PER_SLOT = 24`` (``forest_bytes``);
a whole-ladder subgame (895,521,171 nodes, 84,085,760 information sets, 180,543,104 slots) holds
9.0 GiB, plus per-thread scratch of at most a hand's deals (``hand_nodes``, 28 bytes per node).

Parallelism. An information set belongs to one player and one hand of that player (its key holds
both), and occurs only in deals where that player holds that hand. So when player p's regrets are
updated, or p's best response is computed, the deals of one hand of p touch that hand's information
sets only: threads take whole hands (numba ``prange``) and never write the same slot, and the
results do not depend on the thread count (each hand's sums run in one thread, in one order).

Arithmetic: that of ``kernels.cfr.solve`` (DCFR, alternating updates p = 0 then 1, the current
strategy from all regrets before each player's update, that player's regrets discounted then
increased by the sum of its instantaneous regrets), every sum per slot taken in the same order
(``_update_player``), so the regrets, strategy sums and average strategy are the same numbers, bit
for bit. Only sums over hands (value, best-response totals) run in another order.
"""

import contextlib
import time
from dataclasses import dataclass

import numba
import numpy as np

from .cfr import (CFRResult, dcfr_weights, discount_and_add, normalise_sums, normalise_sums_parallel,
                  regret_matching, regret_matching_parallel, run_checked, warm_arrays)
from .options import njit, njit_parallel

PLAYER_BIT = 1 << 30  # node_code of a decision node of player 1: information set + PLAYER_BIT
ID_MASK = PLAYER_BIT - 1
BYTES_PER_NODE = 4
BYTES_PER_INFOSET = 8 + 8 + 1 + 4
BYTES_PER_SLOT = 3 * 8
BYTES_PER_DEAL = 8 + 8 + 2 * 4 + 2 * 4
SCRATCH_BYTES_PER_HAND_NODE = 8 + 8 + 4 + 4 + 4  # best response: reach, value, first child, code, order


def forest_bytes(nodes, slots, infosets, deals=0):
    """Bytes of the arrays a ``Forest`` solve holds for a game of these counts (module docstring).

    Parameters
    ----------
    nodes, slots, infosets, deals : int
        Nodes (root included), action slots, information sets and deals of the game.

    Returns
    -------
    int
        ``4 nodes + 24 slots + 21 infosets + 32 deals`` (thread scratch and the interpreter apart).
    """
    return (nodes * BYTES_PER_NODE + slots * BYTES_PER_SLOT + infosets * BYTES_PER_INFOSET
            + deals * BYTES_PER_DEAL)


@dataclass
class Forest:
    """A chance-rooted forest game as compact arrays (see the module docstring).

    Attributes
    ----------
    node_code : int32[N - 1]
        Per node but the root: information set (+ ``PLAYER_BIT`` for player 1) or
        ``-1 - outcome`` (terminal).
    deal_start : int64[D + 1]
        Deal d's nodes are ``node_code[deal_start[d]:deal_start[d + 1]]``, its root first.
    deal_prob : float64[D]
        Chance probability of each deal.
    deal_hands : int32[D, 2]
        Each deal's hand index of player 0 (mano) and player 1 (pé).
    hand_ptr : int64[2, H + 1], hand_deals : int32[2, D]
        Deals where player p holds hand h: ``hand_deals[p, hand_ptr[p, h]:hand_ptr[p, h + 1]]``.
    hand_nodes : int64[2, H]
        Nodes of those deals (scratch size of the best response).
    infoset_key : int64[I]
        Sorted keys (the numbering of ``tree.build_hand_tree``); player = key & 1.
    infoset_ptr : int64[I + 1]
        Action slots of information set i: ``infoset_ptr[i]:infoset_ptr[i + 1]``.
    infoset_depth : uint8[I]
        Number of public actions before the information set.
    infoset_local : int32[I]
        First slot of i among the slots of its player's hand (``group_slots``).
    group_slots : int64[2, H]
        Action slots of player p's information sets with hand h.
    utility : float64[n_outcomes]
        Player 0's utility of each outcome code (``set_utilities``).
    """

    node_code: np.ndarray
    deal_start: np.ndarray
    deal_prob: np.ndarray
    deal_hands: np.ndarray
    hand_ptr: np.ndarray
    hand_deals: np.ndarray
    hand_nodes: np.ndarray
    infoset_key: np.ndarray
    infoset_ptr: np.ndarray
    infoset_depth: np.ndarray
    infoset_local: np.ndarray
    group_slots: np.ndarray
    utility: np.ndarray

    @property
    def n_nodes(self):
        """Nodes of the game, the root chance node included (as ``TabularGame.n_nodes``)."""
        return len(self.node_code) + 1

    @property
    def n_infosets(self):
        return len(self.infoset_key)

    @property
    def n_slots(self):
        return int(self.infoset_ptr[-1])

    @property
    def n_deals(self):
        return len(self.deal_prob)

    def set_utilities(self, table):
        """Set player 0's utility of each outcome code (float64[n_outcomes]; ValueError on shape)."""
        table = np.asarray(table, np.float64)
        if table.shape != self.utility.shape:
            raise ValueError(f"utility table must have {len(self.utility)} entries, one per outcome "
                             f"code; got shape {table.shape}")
        self.utility[:] = table

    def nbytes(self):
        """Bytes held by the game's arrays (accumulators apart)."""
        return sum(getattr(self, f).nbytes for f in self.__dataclass_fields__)


def make_forest(node_code, deal_start, deal_prob, deal_hands, n_hands, infoset_key, infoset_nact,
                infoset_depth, n_outcomes):
    """Assemble a ``Forest`` from its per-node, per-deal and per-information-set arrays, deriving
    the deal lists per hand, the slot layout and the best-response offsets.

    Parameters
    ----------
    node_code : int32[N - 1]
        As ``Forest.node_code``.
    deal_start : int64[D + 1]
    deal_prob : float64[D]
    deal_hands : int32[D, 2]
    n_hands : int
    infoset_key : int64[I]
        Sorted, unique, ``... * 2 * n_hands + hand * 2 + player``.
    infoset_nact : int array (I,)
        Actions of each information set.
    infoset_depth : int array (I,)
        Depth of each information set (< 256).
    n_outcomes : int

    Raises
    ------
    ValueError
        If keys are unsorted or repeated, or a depth does not fit a byte.
    """
    infoset_key = np.ascontiguousarray(infoset_key, np.int64)
    if len(infoset_key) > ID_MASK:
        raise ValueError(f"{len(infoset_key)} information sets: node_code holds at most {ID_MASK}")
    if len(infoset_key) > 1 and np.any(np.diff(infoset_key) <= 0):
        raise ValueError("infoset_key must be sorted and unique")
    if len(infoset_depth) and (infoset_depth.min() < 0 or infoset_depth.max() > 255):
        raise ValueError(f"an information set depth {int(infoset_depth.max())} does not fit uint8")
    infoset_ptr = np.zeros(len(infoset_key) + 1, np.int64)
    np.cumsum(infoset_nact, out=infoset_ptr[1:])
    player = (infoset_key & 1).astype(np.int8)
    hand = (infoset_key >> 1) % n_hands
    local, group_slots = _local_slots(player, hand, infoset_ptr, n_hands)
    hand_ptr = np.zeros((2, n_hands + 1), np.int64)
    hand_deals = np.zeros((2, len(deal_prob)), np.int32)
    hand_nodes = np.zeros((2, n_hands), np.int64)
    sizes = np.diff(deal_start)
    for p in range(2):
        order = np.argsort(deal_hands[:, p], kind="stable")
        hand_deals[p] = order
        np.cumsum(np.bincount(deal_hands[:, p], minlength=n_hands), out=hand_ptr[p, 1:])
        hand_nodes[p] = np.bincount(deal_hands[:, p], weights=sizes, minlength=n_hands)
    return Forest(node_code=node_code, deal_start=deal_start, deal_prob=deal_prob,
                  deal_hands=deal_hands, hand_ptr=hand_ptr, hand_deals=hand_deals,
                  hand_nodes=hand_nodes, infoset_key=infoset_key, infoset_ptr=infoset_ptr,
                  infoset_depth=infoset_depth.astype(np.uint8),
                  infoset_local=local, group_slots=group_slots, utility=np.zeros(n_outcomes))


@njit
def _local_slots(player, hand, infoset_ptr, n_hands):
    local = np.empty(player.shape[0], np.int32)
    count = np.zeros((2, n_hands), np.int64)
    for i in range(player.shape[0]):
        p, h = player[i], hand[i]
        local[i] = count[p, h]
        count[p, h] += infoset_ptr[i + 1] - infoset_ptr[i]
    return local, count


# ---------------------------------------------------------------- DCFR


@njit
def _update_deal(code, b, n, prob, infoset_ptr, infoset_local, utility, strategy, p, ro, rw, val,
                 regret_new, strat_new, root_new):
    """One deal of player p's update: reaches top-down, values bottom-up, and p's instantaneous
    regrets and reach-weighted strategy added to the hand's ``regret_new`` / ``strat_new`` (local
    slots); the root's are written to ``root_new`` (2 x 4 actions) instead, to be added after
    every deal's other nodes, in ``kernels.cfr``'s order (there the deal roots come first)."""
    ro[0] = prob
    rw[0] = 1.0
    nxt = 1
    for li in range(n):
        x = code[b + li]
        if x < 0:
            continue
        c = x & ID_MASK
        lo = infoset_ptr[c]
        k = infoset_ptr[c + 1] - lo
        if (x >> 30) == p:
            for j in range(k):
                ro[nxt + j] = ro[li]
                rw[nxt + j] = rw[li] * strategy[lo + j]
        else:
            for j in range(k):
                ro[nxt + j] = ro[li] * strategy[lo + j]
                rw[nxt + j] = rw[li]
        nxt += k
    sign = 1.0 if p == 0 else -1.0
    for li in range(n - 1, -1, -1):
        x = code[b + li]
        if x < 0:
            val[li] = utility[-1 - x]
            continue
        c = x & ID_MASK
        lo = infoset_ptr[c]
        k = infoset_ptr[c + 1] - lo
        nxt -= k
        v = 0.0
        for j in range(k):
            v += strategy[lo + j] * val[nxt + j]
        val[li] = v
        if (x >> 30) == p:
            w = ro[li] * sign
            base = infoset_local[c]
            for j in range(k):
                r = w * (val[nxt + j] - v)
                s = rw[li] * strategy[lo + j]
                if li == 0:
                    root_new[0, j] = r
                    root_new[1, j] = s
                else:
                    regret_new[base + j] += r
                    strat_new[base + j] += s


def _update_player_py(code, deal_start, deal_prob, hand_ptr, hand_deals, infoset_ptr, infoset_local,
                   group_slots, utility, strategy, p, regret, strat_sum, scratch, pos, neg, avg):
    """Player p's DCFR update, one hand of p per thread. Within a hand the deals run from the last
    to the first and each bottom-up, the roots last: per slot, the order in which
    ``kernels.cfr._values_and_regrets`` adds (reverse node order), so the sums are the same."""
    n_hands = hand_ptr.shape[1] - 1
    for h in numba.prange(n_hands):
        lo_d, hi_d = hand_ptr[p, h], hand_ptr[p, h + 1]
        if lo_d == hi_d:
            continue
        ns = group_slots[p, h]
        ro = np.empty(scratch)
        rw = np.empty(scratch)
        val = np.empty(scratch)
        regret_new = np.zeros(ns)
        strat_new = np.zeros(ns)
        roots = np.zeros((hi_d - lo_d, 2, 4))
        for j in range(hi_d - 1, lo_d - 1, -1):
            d = hand_deals[p, j]
            b = deal_start[d]
            _update_deal(code, b, deal_start[d + 1] - b, deal_prob[d], infoset_ptr, infoset_local,
                         utility, strategy, p, ro, rw, val, regret_new, strat_new, roots[j - lo_d])
        done = np.zeros(ns, np.bool_)
        for j in range(hi_d - 1, lo_d - 1, -1):
            x = code[deal_start[hand_deals[p, j]]]
            if x >= 0 and (x >> 30) == p:
                c = x & ID_MASK
                base = infoset_local[c]
                for a in range(infoset_ptr[c + 1] - infoset_ptr[c]):
                    regret_new[base + a] += roots[j - lo_d, 0, a]
                    strat_new[base + a] += roots[j - lo_d, 1, a]
        # discount and add, once per information set of the hand (found on the deals' nodes)
        for j in range(lo_d, hi_d):
            d = hand_deals[p, j]
            for y in range(deal_start[d], deal_start[d + 1]):
                x = code[y]
                if x < 0 or (x >> 30) != p:
                    continue
                c = x & ID_MASK
                base = infoset_local[c]
                if done[base]:
                    continue
                done[base] = True
                discount_and_add(regret, strat_sum, infoset_ptr[c], infoset_ptr[c + 1], regret_new,
                                 strat_new, base, pos, neg, avg)


_update_player = njit_parallel(_update_player_py)
_update_player_serial = njit(_update_player_py)


@njit
def _dcfr_loop(code, deal_start, deal_prob, hand_ptr, hand_deals, infoset_ptr, infoset_local,
               group_slots, utility, regret, strat_sum, strategy, scratch, t0, iters, alpha, beta,
               gamma, parallel):
    """All iterations in one compiled call (a small game's iteration takes microseconds)."""
    for it in range(iters):
        pos, neg, avg = dcfr_weights(float(t0 + it + 1), alpha, beta, gamma)
        for p in range(2):
            if parallel:
                regret_matching_parallel(regret, infoset_ptr, strategy)
                _update_player(code, deal_start, deal_prob, hand_ptr, hand_deals, infoset_ptr,
                               infoset_local, group_slots, utility, strategy, p, regret, strat_sum,
                               scratch, pos, neg, avg)
            else:
                regret_matching(regret, infoset_ptr, strategy)
                _update_player_serial(code, deal_start, deal_prob, hand_ptr, hand_deals,
                                      infoset_ptr, infoset_local, group_slots, utility, strategy, p,
                                      regret, strat_sum, scratch, pos, neg, avg)


PARALLEL_MIN_NODES = 200_000  # below this, one thread: a parallel launch costs more than a pass


def _parallel(forest):
    return numba.get_num_threads() > 1 and forest.n_nodes >= PARALLEL_MIN_NODES


def _schedule(parallel):
    """Hands differ in size: a parallel loop hands them out one by one. Nothing for a serial run
    (setting the chunk size starts numba's thread pool)."""
    return numba.parallel_chunksize(1) if parallel else contextlib.nullcontext()


def dcfr_iterations(forest, regret, strat_sum, strategy, t0, iters, alpha=1.5, beta=0.0,
                    gamma=2.0):
    """Run ``iters`` DCFR iterations in place, continuing from iteration ``t0``.

    Parameters
    ----------
    forest : Forest
    regret, strat_sum, strategy : float64[M]
        Accumulators (updated in place) and scratch for the current strategy.
    t0, iters : int
    alpha, beta, gamma : float
        DCFR discounts (``kernels.cfr.solve``).
    """
    f = forest
    scratch = int(np.diff(f.deal_start).max()) if f.n_deals else 1
    parallel = _parallel(f)
    with _schedule(parallel):
        _dcfr_loop(f.node_code, f.deal_start, f.deal_prob, f.hand_ptr, f.hand_deals, f.infoset_ptr,
                   f.infoset_local, f.group_slots, f.utility, regret, strat_sum, strategy, scratch,
                   t0, iters, alpha, beta, gamma, parallel)


def average_strategy(forest, strat_sum, out=None):
    """float64[M]: the normalised average strategy (uniform where never reached), in ``out`` if given."""
    out = np.empty_like(strat_sum) if out is None else out
    normalise = normalise_sums_parallel if _parallel(forest) else normalise_sums
    normalise(strat_sum, forest.infoset_ptr, out)
    return out


# ---------------------------------------------------------------- evaluation


@njit
def _best_response_hand(code, deal_start, deal_prob, hand_ptr, hand_deals, n_nodes, infoset_ptr,
                        infoset_depth, infoset_local, n_slots, utility, strategy, p, h):
    """Player 0's utility, summed over the deals where p holds hand h, when p best-responds to the
    other player's ``strategy`` (chance and that player's reach included), as
    ``kernels.cfr._best_response`` restricted to these deals: level by level from the deepest."""
    w = np.empty(n_nodes)
    val = np.empty(n_nodes)
    first = np.empty(n_nodes, np.int32)
    cd = np.empty(n_nodes, np.int32)
    count = np.zeros(257, np.int64)
    off = 0
    for j in range(hand_ptr[p, h], hand_ptr[p, h + 1]):
        d = hand_deals[p, j]
        b = deal_start[d]
        n = deal_start[d + 1] - b
        w[off] = deal_prob[d]
        nxt = 1
        for li in range(n):
            x = off + li
            y = code[b + li]
            cd[x] = y
            if y < 0:
                val[x] = w[x] * utility[-1 - y]
                continue
            c = y & ID_MASK
            lo = infoset_ptr[c]
            k = infoset_ptr[c + 1] - lo
            first[x] = off + nxt
            if (y >> 30) == p:
                for a in range(k):
                    w[off + nxt + a] = w[x]
            else:
                for a in range(k):
                    w[off + nxt + a] = w[x] * strategy[lo + a]
            nxt += k
            count[infoset_depth[c] + 1] += 1
        off += n
    for dd in range(1, 257):  # decision nodes ordered by depth (counting sort)
        count[dd] += count[dd - 1]
    order = np.empty(count[256], np.int32)
    fill = count[:256].copy()
    for x in range(off):
        if cd[x] >= 0:
            dd = infoset_depth[cd[x] & ID_MASK]
            order[fill[dd]] = x
            fill[dd] += 1
    q = np.zeros(n_slots)
    best = np.zeros(n_slots, np.int8)
    for dd in range(255, -1, -1):
        a0, a1 = count[dd], count[dd + 1]
        if a0 == a1:
            continue
        for j in range(a0, a1):
            x = order[j]
            if (cd[x] >> 30) == p:
                c = cd[x] & ID_MASK
                base = infoset_local[c]
                for a in range(infoset_ptr[c + 1] - infoset_ptr[c]):
                    q[base + a] += val[first[x] + a]
        for j in range(a0, a1):
            x = order[j]
            if (cd[x] >> 30) == p:
                c = cd[x] & ID_MASK
                base = infoset_local[c]
                arg = 0
                for a in range(1, infoset_ptr[c + 1] - infoset_ptr[c]):
                    if (q[base + a] > q[base + arg]) if p == 0 else (q[base + a] < q[base + arg]):
                        arg = a
                best[base] = arg
        for j in range(a0, a1):
            x = order[j]
            c = cd[x] & ID_MASK
            if (cd[x] >> 30) == p:
                val[x] = val[first[x] + best[infoset_local[c]]]
            else:
                s = 0.0
                for a in range(infoset_ptr[c + 1] - infoset_ptr[c]):
                    s += val[first[x] + a]
                val[x] = s
    total = 0.0
    off = 0
    for j in range(hand_ptr[p, h], hand_ptr[p, h + 1]):
        d = hand_deals[p, j]
        total += val[off]
        off += deal_start[d + 1] - deal_start[d]
    return total


def _best_response_py(code, deal_start, deal_prob, hand_ptr, hand_deals, hand_nodes, infoset_ptr,
                   infoset_depth, infoset_local, group_slots, utility, strategy, p):
    n_hands = hand_ptr.shape[1] - 1
    per_hand = np.zeros(n_hands)
    for h in numba.prange(n_hands):
        if hand_ptr[p, h + 1] > hand_ptr[p, h]:
            per_hand[h] = _best_response_hand(code, deal_start, deal_prob, hand_ptr, hand_deals,
                                              hand_nodes[p, h], infoset_ptr, infoset_depth,
                                              infoset_local, group_slots[p, h], utility, strategy,
                                              p, h)
    total = 0.0
    for h in range(n_hands):
        total += per_hand[h]
    return total


_best_response = njit_parallel(_best_response_py)
_best_response_serial = njit(_best_response_py)


def _outcome_probabilities_py(code, deal_start, deal_prob, hand_ptr, hand_deals, infoset_ptr,
                           strategy, n_outcomes, scratch):
    """Probability of each outcome code when both players follow ``strategy`` (per hand of player
    0, then summed in hand order)."""
    n_hands = hand_ptr.shape[1] - 1
    per_hand = np.zeros((n_hands, n_outcomes))
    for h in numba.prange(n_hands):
        r = np.empty(scratch)
        for j in range(hand_ptr[0, h], hand_ptr[0, h + 1]):
            d = hand_deals[0, j]
            b = deal_start[d]
            r[0] = deal_prob[d]
            nxt = 1
            for li in range(deal_start[d + 1] - b):
                x = code[b + li]
                if x < 0:
                    per_hand[h, -1 - x] += r[li]
                    continue
                c = x & ID_MASK
                lo = infoset_ptr[c]
                k = infoset_ptr[c + 1] - lo
                for a in range(k):
                    r[nxt + a] = r[li] * strategy[lo + a]
                nxt += k
    out = np.zeros(n_outcomes)
    for h in range(n_hands):
        for o in range(n_outcomes):
            out[o] += per_hand[h, o]
    return out


_outcome_probabilities = njit_parallel(_outcome_probabilities_py)
_outcome_probabilities_serial = njit(_outcome_probabilities_py)


def outcome_probabilities(forest, strategy):
    """float64[n_outcomes]: probability of each outcome code when both players follow ``strategy``
    (float64[M]); equals the sums of ``kernels.cfr.reach_probabilities`` over each code's terminals."""
    f = forest
    scratch = int(np.diff(f.deal_start).max()) if f.n_deals else 1
    run = _outcome_probabilities if _parallel(f) else _outcome_probabilities_serial
    with _schedule(_parallel(f)):
        return run(f.node_code, f.deal_start, f.deal_prob, f.hand_ptr,
                                      f.hand_deals, f.infoset_ptr, strategy, len(f.utility), scratch)


def evaluate(forest, strategy):
    """Player 0's expected utility, both exact best responses and NashConv of ``strategy``.

    Parameters
    ----------
    forest : Forest
    strategy : float64[M]
        A behaviour strategy profile (both players' information sets).

    Returns
    -------
    dict
        As ``kernels.cfr.evaluate``: ``value``, ``br0``, ``br1``, ``nash_conv = br0 - br1``,
        ``exploitability``; plus ``outcome_probabilities`` (float64[n_outcomes]).
    """
    f = forest
    run = _best_response if _parallel(f) else _best_response_serial
    with _schedule(_parallel(f)):
        br = [run(f.node_code, f.deal_start, f.deal_prob, f.hand_ptr, f.hand_deals,
                             f.hand_nodes, f.infoset_ptr, f.infoset_depth, f.infoset_local,
                             f.group_slots, f.utility, strategy, p) for p in (0, 1)]
    probs = outcome_probabilities(f, strategy)
    value = float(np.dot(probs, f.utility))
    return dict(value=value, br0=br[0], br1=br[1], nash_conv=br[0] - br[1],
                exploitability=(br[0] - br[1]) / 2, outcome_probabilities=probs)


def solve(forest, target_nash_conv=1e-4, max_iterations=100_000, check_every=50, alpha=1.5,
          beta=0.0, gamma=2.0, warm_start=None, overwrite_warm_start=False, progress=None,
          checkpoint=None, check_first=False):
    """Run discounted CFR on a ``Forest`` until the average strategy's NashConv is at most
    ``target_nash_conv``: ``kernels.cfr.solve`` for a chance-rooted forest.

    Parameters
    ----------
    forest : Forest
    target_nash_conv, max_iterations, check_every, alpha, beta, gamma
        As ``kernels.cfr.solve``.
    warm_start : tuple (regret, strat_sum, iterations[, checks]) or None
        As ``kernels.cfr.solve`` (float64[M] each, in ``infoset_key`` order).
    overwrite_warm_start : bool
        Update the warm-start arrays in place instead of copying them (saves 16 bytes per slot
        when the caller drops them anyway); read-only arrays (memory maps) are copied anyway.
    progress, checkpoint : callable or None
        As ``kernels.cfr.solve``.
    check_first : bool
        As ``kernels.cfr.solve``: evaluate the warm start before iterating.

    Returns
    -------
    CFRResult
        ``strategy`` is the average strategy; ``regret``, ``strat_sum`` the accumulators. The
        evaluation's outcome probabilities are in the attribute ``outcome_probabilities``.

    Raises
    ------
    ValueError
        On a parameter out of range or warm-start arrays of the wrong size.
    """
    if target_nash_conv <= 0 or check_every < 1 or max_iterations < 1:
        raise ValueError("target_nash_conv must be > 0, check_every and max_iterations >= 1")
    regret, strat_sum, done, checks = warm_arrays(warm_start, forest.n_slots,
                                                  copy=not overwrite_warm_start)
    strategy = np.empty(forest.n_slots)
    start = time.perf_counter()
    cpu_start = time.process_time()

    def iterate(first, k):
        dcfr_iterations(forest, regret, strat_sum, strategy, first, k, alpha, beta, gamma)

    def evaluate_average():
        average_strategy(forest, strat_sum, out=strategy)  # the scratch is free until the next pass
        return evaluate(forest, strategy)

    ev, iters, checks = run_checked(iterate, evaluate_average, done, checks, target_nash_conv,
                                    max_iterations, check_every, regret, strat_sum, progress,
                                    checkpoint, check_first)
    res = CFRResult(strategy, regret, strat_sum, ev["value"], ev["nash_conv"], ev["exploitability"],
                    done + iters, time.perf_counter() - start, time.process_time() - cpu_start)
    res.checks = checks
    res.outcome_probabilities = ev["outcome_probabilities"]
    return res
