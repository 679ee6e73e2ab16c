"""A hand's raise tree as a public tree (``kernels.public_cfr.PublicGame``).

The per-deal raise tree (tree.py ``_build_raises``, forest.py) repeats the public history of a hand
once per deal. Here each public history is one node: the played card types (face up, so public),
the raises and their answers. A player's range at a node is a vector over the abstract hands that
hold the cards that player has played so far (a *hand set*: the hands containing a multiset of
types); the deal-pair table of encoding.py weighs the opponent's range (card removal).

Rules and numbering are those of ``tree._build_raises`` with ``face_down=False``: at a card node
the mover plays one of the distinct types left in their hand (ascending) or raises if a raise is
open to them; at a pending raise the other side accepts, folds or raises again. A hand with a
single legal action has no information set there (the per-deal builder applies such a move without
a node). Information-set keys are ``tree.HandTree.infoset_key``'s, so the action slots are laid out
as ``forest.build_raise_forest``'s (keys sorted) and accumulators move between the two solvers.

Face-down play makes a covered card's type private; its histories are no longer public, so this
builder refuses ``face_down`` (the solve driver takes the tabular solver for it).
"""

from itertools import combinations

import numpy as np

from ...kernels.options import njit
from ...kernels.public_cfr import make_public_game
from .tree import (ANSWERS, N_LEVELS, N_RAISE_CODES, N_RAISE_OUTCOMES, NOBODY, RAISE_DIGITS,
                   _hand_winner, deal_arrays, ladder_outcome)


def hand_sets(hands, n_types):
    """Every multiset of types held within some hand, and its hands.

    Parameters
    ----------
    hands : int64[H, 3]
        Sorted types of each hand.
    n_types : int

    Returns
    -------
    set_ptr : int64[S + 1], set_hand : int32[...]
        Hands containing multiset s, ascending: ``set_hand[set_ptr[s]:set_ptr[s + 1]]``; set 0 is
        the empty multiset (every hand).
    add : int32[S, n_types]
        The set of multiset s plus one card of type t, -1 if no hand holds it.
    """
    ids = {(): 0}
    members = {(): list(range(len(hands)))}
    for h, hand in enumerate(hands):
        subs = set()
        for k in (1, 2, 3):
            for c in combinations(range(3), k):
                subs.add(tuple(int(hand[i]) for i in c))
        for m in sorted(subs):
            if m not in ids:
                ids[m] = len(ids)
                members[m] = []
            members[m].append(h)
    order = sorted(ids, key=ids.get)
    set_ptr = np.zeros(len(order) + 1, np.int64)
    np.cumsum([len(members[m]) for m in order], out=set_ptr[1:])
    set_hand = np.concatenate([np.array(members[m], np.int32) for m in order])
    add = np.full((len(order), n_types), -1, np.int32)
    for m in order:
        if len(m) < 3:
            for t in range(n_types):
                grown = tuple(sorted(m + (t,)))
                if grown in ids:
                    add[ids[m], t] = ids[grown]
    return set_ptr, set_hand, add


@njit
def _feasible(set_ptr, set_hand, weights, weights_t):
    """``ok[p, h, s]``: some hand of set s may be dealt to p's opponent beside p's hand h."""
    n_sets = set_ptr.shape[0] - 1
    n_hands = weights.shape[0]
    ok = np.zeros((2, n_hands, n_sets), np.bool_)
    for p in range(2):
        w = weights if p == 0 else weights_t
        for h in range(n_hands):
            for s in range(n_sets):
                for j in range(set_ptr[s], set_ptr[s + 1]):
                    if w[h, set_hand[j]] > 0.0:
                        ok[p, h, s] = True
                        break
    return ok


@njit
def _sets_feasible(ok, set_ptr, set_hand):
    """``both[p, s, so]``: some hand of set s may be dealt to p beside some hand of set so."""
    n_sets = set_ptr.shape[0] - 1
    both = np.zeros((2, n_sets, n_sets), np.bool_)
    for p in range(2):
        for s in range(n_sets):
            for so in range(n_sets):
                for j in range(set_ptr[s], set_ptr[s + 1]):
                    if ok[p, set_hand[j], so]:
                        both[p, s, so] = True
                        break
    return both


@njit
def _grow(a, n):
    if n <= a.shape[0]:
        return a
    b = np.empty((max(n, 2 * a.shape[0]),) + a.shape[1:], a.dtype)
    b[:a.shape[0]] = a
    return b


@njit
def _build(strengths, n_hands, set_ptr, set_hand, set_pos, add, ok, both, three_ties_mano, top,
           cap=1 << 16, ecap=1 << 20):
    """Breadth-first public tree of a raise hand; returns the node arrays and, per (node, acting
    hand), the legal-children mask and the information-set key (-1: no information set)."""
    n_types = strengths.shape[0]
    base = n_types + 1
    player = np.full(cap, -1, np.int8)
    outcome = np.full(cap, -1, np.int32)
    first = np.zeros(cap, np.int64)
    nchild = np.zeros(cap, np.int32)
    nset = np.zeros((cap, 2), np.int32)
    # public state per node (small ints in bytes: the full-deck t1 tree has 12 M nodes)
    code = np.ones(cap, np.int64)
    rcode = np.zeros(cap, np.int32)
    level = np.zeros(cap, np.int8)
    raiser = np.full(cap, -1, np.int8)
    pend = np.full(cap, -1, np.int8)
    leader = np.zeros(cap, np.int8)
    lead = np.full(cap, -1, np.int8)  # the leading card's type in the open trick, -1 none
    res = np.zeros((cap, 3), np.int8)
    nt = np.zeros(cap, np.int8)
    played = np.zeros(cap, np.int8)
    e_mask = np.zeros(ecap, np.uint16)
    e_key = np.full(ecap, -1, np.int64)
    hand_ptr = np.zeros(cap + 1, np.int64)
    pw = np.ones(N_LEVELS, np.int64)
    for i in range(1, N_LEVELS):
        pw[i] = pw[i - 1] * RAISE_DIGITS
    kids = np.zeros(16, np.int64)  # card type of each child, -1 raise; at answers: j
    n = 1
    x = 0
    ne = 0
    while x < n:
        if player[x] == -2:  # terminal (outcome set by the parent)
            player[x] = -1
            hand_ptr[x + 1] = ne
            x += 1
            continue
        pe = pend[x]
        mover = pe if pe >= 0 else (leader[x] if lead[x] < 0 else 1 - leader[x])
        sa, so = nset[x, mover], nset[x, 1 - mover]
        nk = 0
        if pe >= 0:
            nk = 3 if level[x] + 1 < top[mover] else 2
            for j in range(nk):
                kids[j] = j
        else:
            for t in range(n_types):
                c = add[sa, t]
                if c >= 0 and both[mover, c, so]:
                    kids[nk] = t
                    nk += 1
            if level[x] < top[mover] and (raiser[x] < 0 or raiser[x] == mover):
                kids[nk] = -1
                nk += 1
        player[x] = mover
        first[x] = n
        nchild[x] = nk
        need = n + nk
        if need > player.shape[0]:
            player = _grow(player, need)
            player[n:] = -1
            outcome = _grow(outcome, need)
            first = _grow(first, need)
            nchild = _grow(nchild, need)
            nset = _grow(nset, need)
            code = _grow(code, need)
            rcode = _grow(rcode, need)
            level = _grow(level, need)
            raiser = _grow(raiser, need)
            pend = _grow(pend, need)
            leader = _grow(leader, need)
            lead = _grow(lead, need)
            res = _grow(res, need)
            nt = _grow(nt, need)
            played = _grow(played, need)
            hand_ptr = _grow(hand_ptr, player.shape[0] + 1)
        for j in range(nk):
            c = n + j
            player[c] = 0  # inner until a terminal is found
            outcome[c] = -1
            first[c] = 0
            nchild[c] = 0
            nset[c, 0], nset[c, 1] = nset[x, 0], nset[x, 1]
            code[c], rcode[c], level[c], raiser[c], pend[c] = code[x], rcode[x], level[x], raiser[x], -1
            leader[c], lead[c], nt[c], played[c] = leader[x], lead[x], nt[x], played[x]
            for i in range(3):
                res[c, i] = res[x, i]
            if pe >= 0:
                if j == 1:  # fold: the raiser scores the value before the raise
                    player[c] = -2
                    outcome[c] = ladder_outcome(1 - mover, level[x])
                    continue
                rcode[c] = rcode[x] + (1 + j // 2) * pw[level[x]]
                level[c] = level[x] + 1
                if j == 0:
                    raiser[c] = mover
                else:
                    rcode[c] += (1 + ANSWERS * played[x]) * pw[level[x] + 1]
                    pend[c] = 1 - mover
            elif kids[j] < 0:  # raise
                rcode[c] = rcode[x] + (1 + ANSWERS * played[x]) * pw[level[x]]
                pend[c] = 1 - mover
            else:
                t = kids[j]
                nset[c, mover] = add[sa, t]
                code[c] = code[x] * base + t + 1
                played[c] = played[x] + 1
                if lead[x] < 0:
                    leader[c] = mover
                    lead[c] = t
                else:
                    a = strengths[lead[x]]
                    b = strengths[t]
                    rr = 2 if a == b else (leader[x] if a > b else mover)
                    res[c, nt[x]] = rr
                    nt[c] = nt[x] + 1
                    w = _hand_winner(res[c, 0], res[c, 1], res[c, 2], nt[c], three_ties_mano)
                    leader[c] = leader[x] if rr == 2 else rr
                    lead[c] = -1
                    if w != -2:
                        player[c] = -2
                        outcome[c] = NOBODY if w < 0 else ladder_outcome(w, level[x])
        # the mover's hands: legal children and information-set keys
        hist = code[x] * N_RAISE_CODES + rcode[x]
        lo = set_ptr[sa]
        na = set_ptr[sa + 1] - lo
        if ne + na > e_mask.shape[0]:
            e_mask = _grow(e_mask, ne + na)
            e_key = _grow(e_key, ne + na)
        for i in range(na):
            h = set_hand[lo + i]
            m = 0
            k = 0
            for j in range(nk):
                legal = True
                if pe < 0 and kids[j] >= 0:
                    legal = set_pos[add[sa, kids[j]], h] >= 0
                if legal:
                    m |= 1 << j
                    k += 1
            e_mask[ne + i] = m
            e_key[ne + i] = (hist * (2 * n_hands) + h * 2 + mover) if k >= 2 and ok[mover, h, so] else -1
        ne += na
        n += nk
        hand_ptr[x + 1] = ne
        x += 1
    return (player[:n], outcome[:n], first[:n], nchild[:n], nset[:n], hand_ptr[:n + 1],
            e_mask[:ne], e_key[:ne])


def build_public_raise_tree(strengths, hands, pairs, weights, three_ties="nobody",
                            raise_caps=None, face_down=False):
    """The raise tree of ``tree.build_hand_tree(..., raises=True)`` as a ``PublicGame``.

    Parameters
    ----------
    strengths, hands, pairs, weights, three_ties, raise_caps
        As ``forest.build_raise_forest``.
    face_down : bool
        Must be False (module docstring).

    Returns
    -------
    PublicGame
        With ``infoset_key`` (int64[I], sorted: ``build_hand_tree``'s keys and slot layout),
        ``hands``, ``raise_caps`` and ``n_public_nodes`` attributes.

    Raises
    ------
    ValueError
        On ``face_down=True``, a bad ``three_ties`` or ``raise_caps``, or inconsistent shapes.
    """
    if face_down:
        raise ValueError("face_down=True: a covered card's type is private, so histories are not "
                         "public; solve face-down trees with truco.solver: tabular")
    if three_ties not in ("nobody", "mano"):
        raise ValueError(f"bad three_ties {three_ties!r}: allowed 'nobody' or 'mano'")
    if raise_caps is not None and (len(raise_caps) != 2
                                   or not all(0 <= int(c) <= N_LEVELS - 1 for c in raise_caps)):
        raise ValueError(f"bad raise_caps {raise_caps!r}: two ladder indices 0..{N_LEVELS - 1}")
    strengths, hands, pairs, probs = deal_arrays(strengths, hands, pairs, weights)
    n_hands = len(hands)
    W = np.zeros((n_hands, n_hands))
    np.add.at(W, (pairs[:, 0], pairs[:, 1]), probs)
    set_ptr, set_hand, add = hand_sets(hands, len(strengths))
    ok = _feasible(set_ptr, set_hand, W, np.ascontiguousarray(W.T))
    top = np.array(raise_caps if raise_caps is not None else (N_LEVELS - 1,) * 2, np.int64)
    set_pos = np.full((len(set_ptr) - 1, n_hands), -1, np.int32)
    for s in range(len(set_ptr) - 1):
        set_pos[s, set_hand[set_ptr[s]:set_ptr[s + 1]]] = np.arange(set_ptr[s + 1] - set_ptr[s])
    player, outcome, first, nchild, nset, hand_ptr, mask, key = _build(
        strengths, n_hands, set_ptr, set_hand, set_pos, add, ok,
        _sets_feasible(ok, set_ptr, set_hand), three_ties == "mano", top)
    has = key >= 0
    keys, inv = np.unique(key[has], return_inverse=True)
    if len(keys) != int(has.sum()):
        raise AssertionError("two (node, hand) pairs share an information-set key")
    nact = np.unpackbits(mask[has].astype(">u2").view(np.uint8).reshape(-1, 2), axis=1).sum(1)
    infoset_ptr = np.zeros(len(keys) + 1, np.int64)
    infoset_ptr[1:][inv.ravel()] = nact
    np.cumsum(infoset_ptr, out=infoset_ptr)
    slot = np.full(len(key), -1, np.int64)
    slot[has] = infoset_ptr[inv.ravel()]
    # terminals become edges of their parents (-1 - outcome): the kernel values them there
    inner = player >= 0
    new_id = np.cumsum(inner) - 1
    k = nchild[inner].astype(np.int64)
    edge_ptr = np.zeros(len(k) + 1, np.int64)
    np.cumsum(k, out=edge_ptr[1:])
    old = np.repeat(first[inner], k) + np.arange(edge_ptr[-1]) - np.repeat(edge_ptr[:-1], k)
    child = np.where(inner[old], new_id[old], -1 - outcome[old].astype(np.int64))
    hand_ptr = np.append(hand_ptr[:-1][inner], hand_ptr[-1])
    game = make_public_game(player[inner], edge_ptr, child, nset[inner], set_ptr, set_hand,
                            n_hands, hand_ptr, slot, mask, W, infoset_ptr, N_RAISE_OUTCOMES)
    game.infoset_key = keys
    game.hands = hands
    game.raise_caps = tuple(int(c) for c in top)
    game.n_public_nodes = len(player)
    return game
