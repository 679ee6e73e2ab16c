"""Vector-form (public-tree) discounted CFR for games whose terminal payoffs are public.

The game: chance deals each player a private hand (player 0's hand ``h``, player 1's ``h'``, with
probability ``W[h, h']``, zero where the hands cannot be dealt together: card removal), then both
act on a public tree whose nodes are public histories. Every terminal's utility depends only on
its public history (in Truco: the cards played face up, the raises and a fold), never on the
unplayed cards. An information set is (player, own hand, public node); a hand can take only the
actions its cards allow.

Each player's range at a public node is a vector over the hands consistent with that player's
public actions so far: a *hand set* (``set_ptr`` / ``set_hand``; a node names one per player).
One iteration is one pass over the public tree per player instead of one per deal
(kernels/forest_cfr.py): reaches top-down as vectors, terminal values

    v_p(z, h) = u(z) * sum_{h'} W_p[h, h'] * reach_o(z, h')

(card-removal-aware: the opponent's reach weighted by the deal-pair table), values bottom-up. The
work per iteration is about (sum over public nodes of the range sizes) plus, at terminals, the
consistent hand pairs; the per-deal tree visits every (deal, node) pair several times.

Arithmetic: DCFR as ``kernels.cfr.solve`` (alternating updates p = 0 then 1, the current strategy
from all regrets before each player's update, p's regrets discounted then increased by the
iteration's regret, the strategy sums discounted then increased by the own-reach-weighted strategy
summed over the deals where the information set occurs). The per-deal solvers add the same terms
deal by deal; here they arrive summed over the opponent's hands first, so from the same
accumulators each update's regrets and strategy sums equal the per-deal solvers' up to round-off
(tests/kernels/test_public_cfr.py), and the values and NashConv (``evaluate``: exact best responses on
the public tree) are those of the same game. Whole runs are not bit-identical: a regret that is
zero in exact arithmetic (two card orders with one outcome) may be 0.0 in one solver and 1e-17 in
the other, and regret matching turns that into a uniform or a pure strategy there. The strategy sum of an information set carries the number of deals in which it occurs
(``hand_count``), as the per-deal sums do; the average strategy does not depend on it.

Layout (``PublicGame``): inner nodes in breadth-first order (a parent before its children);
terminals are not nodes but edges ``-1 - outcome`` of their parent, valued there: for the player
who acts, u(z) times the opponent's reach weighed against each hand (one product with the deal-pair
table per node, shared by all its terminal children); for the other, one product with the actor's
reach times its expected terminal utility. Per node and hand of the acting player (``hand_ptr``):
the first action slot of its information set (-1 where the hand has a single legal action or no
deal reaches the node with it: no information set), a bitmask over the node's children of the
actions the hand may take (its k-th set bit is the information set's k-th action), and its deal
count.

Threads: the passes are serial (a full-deck Truco t1 subgame iterates in well under a second);
a tier job solves its subgames in worker processes side by side (games/truco/stages/groups.py), which
keeps both cores busy without sharing memory. Results do not depend on the thread count.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from .cfr import (CFRResult, dcfr_weights, normalise_sums, regret_matching, run_checked,
                  warm_arrays)
from .options import njit

MAX_CHILDREN = 32  # the children bitmask is a uint16 up to 16 children, else a uint32


@dataclass
class PublicGame:
    """A public tree with vector ranges (module docstring). N inner nodes, E edges, S hand sets,
    H hands, F (node, acting hand) entries, M action slots.

    Attributes
    ----------
    node_player : int8[N]
        Acting player (0, 1).
    edge_ptr : int64[N + 1], child : int64[E]
        Children of n: ``child[edge_ptr[n]:edge_ptr[n + 1]]`` (at most 16), an inner node (>= 0)
        or a terminal ``-1 - outcome``.
    node_terminal : bool[N]
        Whether n has a terminal child.
    node_set : int32[N, 2]
        Each player's hand set at the node.
    set_ptr : int64[S + 1], set_item : int32[...], set_hand : int32[...]
        Members of set s: the private states ``set_item[set_ptr[s]:set_ptr[s + 1]]`` (ascending)
        and the hand of each (``set_hand``, what the deal-pair table is indexed by). Without
        private states beyond the hand (K = H) both are the same array.
    set_pos : int32[S, K]
        Position of private state k in set s, -1 if absent.
    hand_ptr : int64[N + 1]
        Entries of node n: ``hand_ptr[n]:hand_ptr[n + 1]``, one per hand of the actor's set.
    hand_slot : int32[F], hand_mask : uint16[F] or uint32[F], hand_count : float32[F]
        First action slot (-1: no information set), legal children (uint32 where a node has more
        than 16 children), deals of the information set (an integer, exact in float32; 10 bytes per
        entry, 13.6 M entries in a full-deck t1 tree).
    weights : float64[H, H]
        ``W[h, h']``: probability of player 0 holding h and player 1 h' (sums to 1).
    weights_t : float64[H, H]
        Its transpose, contiguous.
    reach_off : int64[N, 2], val_off : int64[N, 2]
        Where each node's range of each player starts in the reach and value scratch (a player who
        does not act at the parent shares the parent's reach vector).
    n_reach, n_val : int
        Sizes of that scratch.
    infoset_ptr : int64[I + 1]
        Action slots of each information set.
    utility : float64[n_outcomes]
        Player 0's utility of each outcome code.
    edge_label : int8[E], edge_dup : bool[E]
        -1 on an edge whose child holds the mover's private states unchanged; a label l >= 0 on
        an edge that turns state ``item_parent[k]`` into k for the child's states k of
        ``item_label[k] == l`` (Truco: covering a card of type l; the edges of one node with
        labels share their child, ``edge_dup`` marks all but the first of them).
    item_label : int8[K], item_parent : int32[K]
        The label of the edge into each private state (-1 none) and the state before it.
    """

    node_player: np.ndarray
    edge_ptr: np.ndarray
    child: np.ndarray
    node_terminal: np.ndarray
    node_set: np.ndarray
    set_ptr: np.ndarray
    set_item: np.ndarray
    set_hand: np.ndarray
    set_pos: np.ndarray
    hand_ptr: np.ndarray
    hand_slot: np.ndarray
    hand_mask: np.ndarray
    hand_count: np.ndarray
    weights: np.ndarray
    weights_t: np.ndarray
    reach_off: np.ndarray
    val_off: np.ndarray
    n_reach: int
    n_val: int
    infoset_ptr: np.ndarray
    utility: np.ndarray
    edge_label: np.ndarray
    edge_dup: np.ndarray
    item_label: np.ndarray
    item_parent: np.ndarray
    extra: dict = field(default_factory=dict)

    @property
    def n_nodes(self):
        """Inner public nodes (terminals are edges)."""
        return len(self.node_player)

    @property
    def n_terminals(self):
        return int(np.count_nonzero(self.child < 0))

    @property
    def n_infosets(self):
        return len(self.infoset_ptr) - 1

    @property
    def n_slots(self):
        return int(self.infoset_ptr[-1])

    def set_utilities(self, table):
        """Set player 0's utility of each outcome code (float64[n_outcomes]; ValueError on shape)."""
        table = np.asarray(table, np.float64)
        if table.shape != self.utility.shape:
            raise ValueError(f"utility table must have {len(self.utility)} entries, one per outcome "
                             f"code; got shape {table.shape}")
        self.utility[:] = table

    def nbytes(self):
        """Bytes held by the game's arrays and the solver's scratch (accumulators apart)."""
        arrays = sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))
        return arrays + 8 * (self.n_reach + self.n_val)


@njit
def _duplicates(edge_ptr, child, edge_label):
    """``edge_dup``: a labelled edge after the first labelled one of its node (same child)."""
    dup = np.zeros(child.shape[0], np.bool_)
    for x in range(edge_ptr.shape[0] - 1):
        seen = False
        for e in range(edge_ptr[x], edge_ptr[x + 1]):
            if edge_label[e] >= 0:
                dup[e] = seen
                seen = True
    return dup


@njit
def _offsets(node_player, edge_ptr, child, edge_dup, node_set, set_ptr):
    """Reach offsets (the non-acting player shares the parent's vector) and value offsets (one
    layout per player)."""
    n = node_player.shape[0]
    reach_off = np.zeros((n, 2), np.int64)
    val_off = np.zeros((n, 2), np.int64)
    nr = 0
    for q in range(2):
        s = node_set[0, q]
        reach_off[0, q] = nr
        nr += set_ptr[s + 1] - set_ptr[s]
    for x in range(n):
        a = node_player[x]
        for e in range(edge_ptr[x], edge_ptr[x + 1]):
            c = child[e]
            if c < 0 or edge_dup[e]:
                continue
            reach_off[c, 1 - a] = reach_off[x, 1 - a]
            s = node_set[c, a]
            reach_off[c, a] = nr
            nr += set_ptr[s + 1] - set_ptr[s]
    nv = np.zeros(2, np.int64)
    for x in range(n):
        for q in range(2):
            s = node_set[x, q]
            val_off[x, q] = nv[q]
            nv[q] += set_ptr[s + 1] - set_ptr[s]
    return reach_off, val_off, nr, max(nv[0], nv[1])


@njit
def _hand_counts(node_player, node_set, set_ptr, set_hand, hand_ptr, weights, weights_t):
    """Deals of each (node, acting hand): the opponent's hands in its set dealt with it."""
    out = np.zeros(hand_ptr[-1], np.float32)
    for x in range(node_player.shape[0]):
        a = node_player[x]
        w = weights if a == 0 else weights_t
        sa, so = node_set[x, a], node_set[x, 1 - a]
        for i in range(set_ptr[sa + 1] - set_ptr[sa]):
            h = set_hand[set_ptr[sa] + i]
            k = 0
            for j in range(set_ptr[so], set_ptr[so + 1]):
                if w[h, set_hand[j]] > 0.0:
                    k += 1
            out[hand_ptr[x] + i] = k
    return out


def make_public_game(node_player, edge_ptr, child, node_set, set_ptr, set_hand, n_hands, hand_ptr,
                     hand_slot, hand_mask, weights, infoset_ptr, n_outcomes, set_item=None,
                     n_items=None, edge_label=None, item_label=None, item_parent=None, **extra):
    """Assemble a ``PublicGame``, deriving set positions, deal counts and offsets.

    Parameters
    ----------
    node_player, edge_ptr, child, node_set, set_ptr, set_hand, hand_ptr, hand_slot, hand_mask,
    infoset_ptr
        As the ``PublicGame`` attributes (any integer dtypes; converted).
    n_hands : int
    weights : float64[H, H]
        Deal-pair probabilities (player 0's hand first).
    n_outcomes : int
    set_item : int array or None
        The private state of each set member (``PublicGame.set_item``); None: ``set_hand`` (the
        private state is the hand).
    n_items : int or None
        Number of private states K (None: ``n_hands``).
    edge_label, item_label, item_parent : int arrays or None
        As the ``PublicGame`` attributes; None: no labelled edge.
    extra
        Kept in ``game.extra``.

    Raises
    ------
    ValueError
        On a node with more than ``MAX_CHILDREN`` children, a child before its parent, 2**31 action
        slots or more, or weights of the wrong shape.
    """
    node_player = np.ascontiguousarray(node_player, np.int8)
    edge_ptr = np.ascontiguousarray(edge_ptr, np.int64)
    child = np.ascontiguousarray(child, np.int64)
    n_child = np.diff(edge_ptr)
    if n_child.max(initial=0) > MAX_CHILDREN:
        raise ValueError(f"a node has {n_child.max()} children; at most {MAX_CHILDREN}")
    parent = np.repeat(np.arange(len(node_player)), n_child)
    if np.any((child >= 0) & (child <= parent)):
        raise ValueError("children must follow their parent (breadth-first order)")
    if len(infoset_ptr) and infoset_ptr[-1] >= 2 ** 31:
        raise ValueError(f"{infoset_ptr[-1]} action slots: hand_slot holds at most 2**31 - 1")
    weights = np.ascontiguousarray(weights, np.float64)
    if weights.shape != (n_hands, n_hands):
        raise ValueError(f"weights must be ({n_hands}, {n_hands}); got {weights.shape}")
    weights_t = np.ascontiguousarray(weights.T)
    node_set = np.ascontiguousarray(node_set, np.int32)
    set_ptr = np.ascontiguousarray(set_ptr, np.int64)
    set_hand = np.ascontiguousarray(set_hand, np.int32)
    set_item = set_hand if set_item is None else np.ascontiguousarray(set_item, np.int32)
    if set_item.shape != set_hand.shape:
        raise ValueError(f"set_item has {len(set_item)} members, set_hand {len(set_hand)}")
    set_pos = np.full((len(set_ptr) - 1, n_hands if n_items is None else n_items), -1, np.int32)
    for s in range(len(set_ptr) - 1):
        members = set_item[set_ptr[s]:set_ptr[s + 1]]
        set_pos[s, members] = np.arange(len(members), dtype=np.int32)
    mask_type = np.uint16 if n_child.max(initial=0) <= 16 else np.uint32
    hand_ptr = np.ascontiguousarray(hand_ptr, np.int64)
    n_items = n_hands if n_items is None else n_items
    edge_label = (np.full(len(child), -1, np.int8) if edge_label is None
                  else np.ascontiguousarray(edge_label, np.int8))
    item_label = (np.full(n_items, -1, np.int8) if item_label is None
                  else np.ascontiguousarray(item_label, np.int8))
    item_parent = (np.arange(n_items, dtype=np.int32) if item_parent is None
                   else np.ascontiguousarray(item_parent, np.int32))
    edge_dup = _duplicates(edge_ptr, child, edge_label)
    reach_off, val_off, n_reach, n_val = _offsets(node_player, edge_ptr, child, edge_dup, node_set,
                                                  set_ptr)
    counts = _hand_counts(node_player, node_set, set_ptr, set_hand, hand_ptr, weights, weights_t)
    node_terminal = np.zeros(len(node_player), np.bool_)
    node_terminal[parent[child < 0]] = True
    return PublicGame(node_player=node_player, edge_ptr=edge_ptr, child=child,
                      node_terminal=node_terminal, node_set=node_set, set_ptr=set_ptr,
                      set_item=set_item, set_hand=set_hand, set_pos=set_pos, hand_ptr=hand_ptr,
                      hand_slot=np.ascontiguousarray(hand_slot, np.int32),
                      hand_mask=np.ascontiguousarray(hand_mask, mask_type), hand_count=counts,
                      weights=weights, weights_t=weights_t, reach_off=reach_off, val_off=val_off,
                      n_reach=int(n_reach), n_val=int(n_val),
                      infoset_ptr=np.ascontiguousarray(infoset_ptr, np.int64),
                      utility=np.zeros(n_outcomes), edge_label=edge_label, edge_dup=edge_dup,
                      item_label=item_label, item_parent=item_parent, extra=extra)


@njit
def _deal_nodes(node_player, edge_ptr, child, hand_ptr, hand_slot, hand_mask, hand_count):
    total = 1  # the chance root
    for x in range(node_player.shape[0]):
        f = edge_ptr[x]
        for e in range(hand_ptr[x], hand_ptr[x + 1]):
            k = int(hand_count[e])
            if hand_slot[e] >= 0:
                total += k
            for j in range(edge_ptr[x + 1] - f):
                if child[f + j] < 0 and (hand_mask[e] >> j) & 1:
                    total += k
    return total


def deal_node_count(game):
    """Nodes of the same game as a per-deal tree (``kernels.forest_cfr``, ``kernels.cfr``): the
    chance root, then per deal its decision nodes where the mover has a choice (a move with one
    legal action has no node there) and its terminals. int; the size the per-deal solvers' CPU
    and memory figures are quoted per."""
    g = game
    return int(_deal_nodes(g.node_player, g.edge_ptr, g.child, g.hand_ptr, g.hand_slot,
                           g.hand_mask, g.hand_count))


# ---------------------------------------------------------------- passes


@njit
def _action_index(mask, j):
    """Index among the hand's actions of child j (the set bits of ``mask`` below j)."""
    m = mask & ((1 << j) - 1)
    k = 0
    while m:
        m &= m - 1
        k += 1
    return k


@njit
def _prob(strategy, slot, mask, j):
    """The hand's probability of child j: 0 if illegal, 1 without an information set."""
    if (mask >> j) & 1 == 0:
        return 0.0
    if slot < 0:
        return 1.0
    return strategy[slot + _action_index(mask, j)]


@njit
def _label_edges(edge_label, f, nc, lab2j):
    """Fill ``lab2j[label]`` with the node's edge of each label (edges ``f:f + nc``)."""
    for j in range(nc):
        if edge_label[f + j] >= 0:
            lab2j[edge_label[f + j]] = j


@njit
def _reach(node_player, edge_ptr, child, node_set, set_ptr, set_item, set_pos, hand_ptr,
           hand_slot, hand_mask, reach_off, strategy, reach, edge_label, edge_dup, item_label,
           item_parent):
    """Top-down reaches of both players under ``strategy`` (1 where a hand has no information
    set and one legal action)."""
    lab2j = np.full(128, -1, np.int64)
    for q in range(2):
        s = node_set[0, q]
        for i in range(set_ptr[s + 1] - set_ptr[s]):
            reach[reach_off[0, q] + i] = 1.0
    for x in range(node_player.shape[0]):
        a = node_player[x]
        ps = node_set[x, a]
        po = reach_off[x, a]
        e0 = hand_ptr[x]
        f = edge_ptr[x]
        nc = edge_ptr[x + 1] - f
        for j in range(nc):
            c = child[f + j]
            if c < 0 or edge_dup[f + j]:
                continue
            cs = node_set[c, a]
            co = reach_off[c, a]
            if edge_label[f + j] >= 0:  # the shared child of the labelled edges
                _label_edges(edge_label, f, nc, lab2j)
                for i in range(set_ptr[cs + 1] - set_ptr[cs]):
                    it = set_item[set_ptr[cs] + i]
                    jj = lab2j[item_label[it]]
                    if jj < 0:
                        reach[co + i] = 0.0
                        continue
                    pi = set_pos[ps, item_parent[it]]
                    e = e0 + pi
                    reach[co + i] = reach[po + pi] * _prob(strategy, hand_slot[e], hand_mask[e], jj)
                for jj in range(nc):
                    if edge_label[f + jj] >= 0:
                        lab2j[edge_label[f + jj]] = -1
                continue
            for i in range(set_ptr[cs + 1] - set_ptr[cs]):
                pi = i if cs == ps else set_pos[ps, set_item[set_ptr[cs] + i]]
                e = e0 + pi
                reach[co + i] = reach[po + pi] * _prob(strategy, hand_slot[e], hand_mask[e], j)


@njit
def _largest_set(set_ptr):
    """Members of the largest set (the scratch vectors' length)."""
    n = 0
    for s in range(set_ptr.shape[0] - 1):
        n = max(n, set_ptr[s + 1] - set_ptr[s])
    return n


@njit
def _against(w, set_ptr, set_hand, sp, so, ro, reach, out):
    """``out[i] = sum_j w[h_i, h'_j] reach[ro + j]`` over hands h_i of set sp, h'_j of set so:
    the card-removal-weighted reach of the opponent against each hand."""
    lo, hi = set_ptr[so], set_ptr[so + 1]
    for i in range(set_ptr[sp + 1] - set_ptr[sp]):
        h = set_hand[set_ptr[sp] + i]
        acc = 0.0
        for j in range(lo, hi):
            acc += w[h, set_hand[j]] * reach[ro + j - lo]
        out[i] = acc


TRAILING_ZEROS = np.array([(m & -m).bit_length() - 1 for m in range(1 << 16)], np.int8)
"""Lowest set bit of each 16-bit children mask: the loops visit a hand's legal children only."""


@njit
def _low(tz, m):
    """Lowest set bit of a nonzero children mask of up to 32 bits (``tz``: ``TRAILING_ZEROS``)."""
    lo = m & 0xFFFF
    if lo:
        return tz[lo]
    return 16 + tz[(m >> 16) & 0xFFFF]


@njit
def _values(node_player, edge_ptr, child, node_terminal, node_set, set_ptr, set_hand, set_item,
            set_pos, hand_ptr, hand_slot, hand_mask, hand_count, reach_off, val_off, w, utility, strategy,
            reach, val, p, mode, regret, strat_sum, pos, neg, avg, tz, edge_label, edge_dup,
            item_label, item_parent):
    """Bottom-up values of player p's ranges (player 0's utility). ``mode`` 0: p follows
    ``strategy`` and gets its DCFR update (regrets discounted, then the iteration's added; the
    strategy sums likewise); 1: p best-responds (max for player 0, min for player 1). Terminal
    children are valued at their parent: u(z) times the opponent's reach weighed against each hand
    by the deal-pair table (the vector ``q``, or, where the opponent acts, its reach times its
    expected terminal utility ``y``). ``tz``: ``TRAILING_ZEROS``. Returns the root's sum."""
    sign = 1.0 if p == 0 else -1.0
    n_hands = _largest_set(set_ptr)
    q = np.empty(n_hands)
    y = np.empty(n_hands)
    cvm = np.empty((n_hands, MAX_CHILDREN))
    lab2j = np.full(128, -1, np.int64)
    for x in range(node_player.shape[0] - 1, -1, -1):
        a = node_player[x]
        o = 1 - a
        ps = node_set[x, p]
        vo = val_off[x, p]
        b = set_ptr[ps]
        n_p = set_ptr[ps + 1] - b
        f = edge_ptr[x]
        nc = edge_ptr[x + 1] - f
        e0 = hand_ptr[x]
        if a != p:
            for i in range(n_p):
                val[vo + i] = 0.0
            for j in range(nc):
                c = child[f + j]
                if c >= 0 and not edge_dup[f + j]:
                    co = val_off[c, p]
                    for i in range(n_p):
                        val[vo + i] += val[co + i]
            if node_terminal[x]:
                sa = node_set[x, a]
                ra = reach_off[x, a]
                lo = set_ptr[sa]
                na = set_ptr[sa + 1] - lo
                for k in range(na):
                    e = e0 + k
                    m = hand_mask[e]
                    sl = hand_slot[e]
                    acc = 0.0
                    kk = 0
                    while m:
                        j = _low(tz, m)
                        m &= m - 1
                        c = child[f + j]
                        if c < 0:
                            acc += (1.0 if sl < 0 else strategy[sl + kk]) * utility[-1 - c]
                        kk += 1
                    y[k] = reach[ra + k] * acc
                for i in range(n_p):
                    h = set_hand[b + i]
                    acc = 0.0
                    for k in range(na):
                        acc += w[h, set_hand[lo + k]] * y[k]
                    val[vo + i] += acc
            continue
        if node_terminal[x]:
            _against(w, set_ptr, set_hand, ps, node_set[x, o], reach_off[x, o], reach, q)
        for j in range(nc):
            c = child[f + j]
            if c < 0 or edge_dup[f + j]:
                continue
            cs = node_set[c, p]
            co = val_off[c, p]
            if edge_label[f + j] >= 0:  # the shared child of the labelled edges
                _label_edges(edge_label, f, nc, lab2j)
                for ci in range(set_ptr[cs + 1] - set_ptr[cs]):
                    it = set_item[set_ptr[cs] + ci]
                    jj = lab2j[item_label[it]]
                    if jj >= 0:
                        cvm[set_pos[ps, item_parent[it]], jj] = val[co + ci]
                for jj in range(nc):
                    if edge_label[f + jj] >= 0:
                        lab2j[edge_label[f + jj]] = -1
            elif cs == ps:
                for i in range(n_p):
                    cvm[i, j] = val[co + i]
            else:
                for ci in range(set_ptr[cs + 1] - set_ptr[cs]):
                    cvm[set_pos[ps, set_item[set_ptr[cs] + ci]], j] = val[co + ci]
        ro = reach_off[x, p]
        for i in range(n_p):
            e = e0 + i
            m = hand_mask[e]
            s = hand_slot[e]
            mm = m
            while mm:
                j = _low(tz, mm)
                mm &= mm - 1
                c = child[f + j]
                if c < 0:
                    cvm[i, j] = utility[-1 - c] * q[i]
            if s < 0 or mode == 1:  # no information set: one legal action, or no deal
                best = 0.0
                first = True
                mm = m
                while mm:
                    j = _low(tz, mm)
                    mm &= mm - 1
                    if first or (cvm[i, j] > best if p == 0 else cvm[i, j] < best):
                        best = cvm[i, j]
                        first = False
                val[vo + i] = best
                continue
            v = 0.0
            k = 0
            mm = m
            while mm:
                j = _low(tz, mm)
                mm &= mm - 1
                v += strategy[s + k] * cvm[i, j]
                k += 1
            val[vo + i] = v
            wr = reach[ro + i] * hand_count[e]
            k = 0
            mm = m
            while mm:
                j = _low(tz, mm)
                mm &= mm - 1
                r = regret[s + k]
                r *= pos if r > 0.0 else neg
                regret[s + k] = r + sign * (cvm[i, j] - v)
                strat_sum[s + k] = strat_sum[s + k] * avg + wr * strategy[s + k]
                k += 1
    total = 0.0
    s0 = node_set[0, p]
    for i in range(set_ptr[s0 + 1] - set_ptr[s0]):
        total += val[val_off[0, p] + i]
    return total


@njit
def _outcome_probabilities(node_player, edge_ptr, child, node_terminal, node_set, set_ptr,
                           set_hand, hand_ptr, hand_slot, hand_mask, reach_off, weights, weights_t,
                           strategy, reach, n_outcomes):
    """Probability of each outcome code when both players follow ``strategy`` (reaches filled)."""
    out = np.zeros(n_outcomes)
    q = np.empty(_largest_set(set_ptr))
    for x in range(node_player.shape[0]):
        if not node_terminal[x]:
            continue
        a = node_player[x]
        sa = node_set[x, a]
        _against(weights if a == 0 else weights_t, set_ptr, set_hand, sa, node_set[x, 1 - a],
                 reach_off[x, 1 - a], reach, q)
        ra = reach_off[x, a]
        f = edge_ptr[x]
        for i in range(set_ptr[sa + 1] - set_ptr[sa]):
            e = hand_ptr[x] + i
            for j in range(edge_ptr[x + 1] - f):
                c = child[f + j]
                if c < 0:
                    out[-1 - c] += reach[ra + i] * _prob(strategy, hand_slot[e], hand_mask[e], j) * q[i]
    return out


class _Scratch:
    """Reach and value vectors of one solve (float64, ``n_reach`` and ``n_val`` entries)."""

    def __init__(self, game):
        self.reach = np.zeros(game.n_reach)
        self.val = np.zeros(game.n_val)


def _reach_of(g, strategy, reach):
    _reach(g.node_player, g.edge_ptr, g.child, g.node_set, g.set_ptr, g.set_item, g.set_pos,
           g.hand_ptr, g.hand_slot, g.hand_mask, g.reach_off, strategy, reach, g.edge_label,
           g.edge_dup, g.item_label, g.item_parent)


def _values_of(g, strategy, sc, p, mode, regret, strat_sum, pos=1.0, neg=1.0, avg=1.0):
    return _values(g.node_player, g.edge_ptr, g.child, g.node_terminal, g.node_set, g.set_ptr,
                   g.set_hand, g.set_item, g.set_pos, g.hand_ptr, g.hand_slot, g.hand_mask, g.hand_count,
                   g.reach_off, g.val_off, g.weights if p == 0 else g.weights_t, g.utility,
                   strategy, sc.reach, sc.val, p, mode, regret, strat_sum, pos, neg, avg,
                   TRAILING_ZEROS, g.edge_label, g.edge_dup, g.item_label, g.item_parent)


def update_player(game, regret, strat_sum, strategy, p, pos, neg, avg, scratch=None):
    """Player p's half of a DCFR iteration: ``strategy`` (float64[M]) set by regret matching from
    all regrets, reaches under it, then p's regrets and strategy sums (float64[M], in place)
    discounted by ``pos`` / ``neg`` / ``avg`` (``cfr.dcfr_weights``) and increased by the
    iteration's."""
    sc = scratch if scratch is not None else _Scratch(game)
    regret_matching(regret, game.infoset_ptr, strategy)
    _reach_of(game, strategy, sc.reach)
    _values_of(game, strategy, sc, p, 0, regret, strat_sum, pos, neg, avg)


def dcfr_iterations(game, regret, strat_sum, strategy, t0, iters, alpha=1.5, beta=0.0, gamma=2.0,
                    scratch=None):
    """Run ``iters`` DCFR iterations in place, continuing from iteration ``t0``.

    Parameters
    ----------
    game : PublicGame
    regret, strat_sum, strategy : float64[M]
        Accumulators (updated in place) and scratch for the current strategy.
    t0, iters : int
    alpha, beta, gamma : float
        DCFR discounts (``kernels.cfr.solve``).
    scratch : _Scratch or None
        Reused reach / value vectors (allocated if None).
    """
    sc = scratch if scratch is not None else _Scratch(game)
    for it in range(iters):
        pos, neg, avg = dcfr_weights(float(t0 + it + 1), alpha, beta, gamma)
        for p in range(2):
            update_player(game, regret, strat_sum, strategy, p, pos, neg, avg, sc)


def average_strategy(game, strat_sum, out=None):
    """float64[M]: the normalised average strategy (uniform where never reached), in ``out`` if given."""
    out = np.empty_like(strat_sum) if out is None else out
    normalise_sums(strat_sum, game.infoset_ptr, out)
    return out


def evaluate(game, strategy, scratch=None):
    """Player 0's expected utility, both exact best responses and NashConv of ``strategy``.

    Parameters
    ----------
    game : PublicGame
    strategy : float64[M]
        A behaviour strategy profile (both players' information sets).
    scratch : _Scratch or None

    Returns
    -------
    dict
        As ``kernels.forest_cfr.evaluate``: ``value``, ``br0``, ``br1``, ``nash_conv = br0 - br1``,
        ``exploitability``, ``outcome_probabilities`` (float64[n_outcomes]).
    """
    g = game
    sc = scratch if scratch is not None else _Scratch(g)
    _reach_of(g, strategy, sc.reach)
    none = np.zeros(0)
    br = [_values_of(g, strategy, sc, p, 1, none, none) for p in range(2)]
    probs = _outcome_probabilities(g.node_player, g.edge_ptr, g.child, g.node_terminal, g.node_set,
                                   g.set_ptr, g.set_hand, g.hand_ptr, g.hand_slot, g.hand_mask,
                                   g.reach_off, g.weights, g.weights_t, strategy, sc.reach,
                                   len(g.utility))
    value = float(np.dot(probs, g.utility))
    return dict(value=value, br0=br[0], br1=br[1], nash_conv=br[0] - br[1],
                exploitability=(br[0] - br[1]) / 2, outcome_probabilities=probs)


def solve(game, target_nash_conv=1e-4, max_iterations=100_000, check_every=50, alpha=1.5,
          beta=0.0, gamma=2.0, warm_start=None, overwrite_warm_start=False, progress=None,
          checkpoint=None, check_first=False):
    """Run discounted CFR on a ``PublicGame`` until the average strategy's NashConv is at most
    ``target_nash_conv``: ``kernels.forest_cfr.solve`` on the public tree.

    Parameters
    ----------
    game : PublicGame
    target_nash_conv, max_iterations, check_every, alpha, beta, gamma, warm_start,
    overwrite_warm_start, progress, checkpoint, check_first
        As ``kernels.forest_cfr.solve`` (accumulators float64[M] in the game's slot order).

    Returns
    -------
    CFRResult
        With ``checks`` and ``outcome_probabilities`` attributes.

    Raises
    ------
    ValueError
        On a parameter out of range or warm-start arrays of the wrong size.
    """
    if target_nash_conv <= 0 or check_every < 1 or max_iterations < 1:
        raise ValueError("target_nash_conv must be > 0, check_every and max_iterations >= 1")
    regret, strat_sum, done, checks = warm_arrays(warm_start, game.n_slots,
                                                  copy=not overwrite_warm_start)
    strategy = np.empty(game.n_slots)
    sc = _Scratch(game)
    start = time.perf_counter()
    cpu_start = time.process_time()

    def iterate(first, k):
        dcfr_iterations(game, regret, strat_sum, strategy, first, k, alpha, beta, gamma, sc)

    def evaluate_average():
        average_strategy(game, strat_sum, out=strategy)
        return evaluate(game, strategy, sc)

    ev, iters, checks = run_checked(iterate, evaluate_average, done, checks, target_nash_conv,
                                    max_iterations, check_every, regret, strat_sum, progress,
                                    checkpoint, check_first)
    res = CFRResult(strategy, regret, strat_sum, ev["value"], ev["nash_conv"], ev["exploitability"],
                    done + iters, time.perf_counter() - start, time.process_time() - cpu_start)
    res.checks = checks
    res.outcome_probabilities = ev["outcome_probabilities"]
    return res
