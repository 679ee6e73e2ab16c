"""A hand's raise tree as a public tree (``kernels.public_cfr.PublicGame``).

The per-deal raise tree (tree.py ``_build_raises``, forest.py) repeats the public history of a hand
once per deal. Here each public history is one node: the played card types (face up, so public),
the raises and their answers. A player's range at a node is a vector over the abstract hands that
hold the cards that player has played so far (a *hand set*: the hands containing a multiset of
types); the deal-pair table of encoding.py weighs the opponent's range (card removal).

Rules and numbering are those of ``tree._build_raises``: at a card node the mover plays one of the
distinct types left in their hand (ascending; with ``face_down``, from trick 2 on, each face up
then face down) or raises if a raise is open to them; at a pending raise the other side accepts,
folds or raises again. A hand with a single legal action has no information set there (the
per-deal builder applies such a move without a node). Information-set keys are
``tree.HandTree.infoset_key``'s, so the action slots are laid out as ``forest.build_raise_forest``'s
and ``tree.build_hand_tree``'s (keys sorted) and accumulators move between the solvers.

Face-down play (rules.py, ``face_down``): a covered card's type is private, but the covering is
public and so is every trick outcome with a covered card (it loses; two covered cards tie), so the
terminal payoffs still depend on public information only. The public history records a covered
card as "covered" (digit 0 of ``tree._card_digits``'s opponent view), and a player's private state
at a node is an *item*: the hand and the types that player covered so far, in the order covered
(``item_sets``; the order is part of the tabular key). A set is then (F, k), the multiset F played
face up and the number k of covers, and the range is a vector over its items (h, c), F + c within
h. The face-down moves of one node (one per type) are edges with the covered type as label that
share one public child, whose items are reached from their item before the cover
(``PublicGame.edge_label``, ``item_parent``); the deal-pair table stays over hands (an item's hand
is ``set_hand``). Without ``face_down`` the items are the hands and the tree is the one built
before the option.

Why one module of more than 500 lines: the item sets, the numba builder that walks the public
histories and the driver that lays out the information sets by the tabular keys share one
numbering of items, sets and edges; split, each part would have to restate it.
"""

from itertools import combinations

import numpy as np

from ...kernels.options import njit
from ...kernels.public_cfr import make_public_game
from .tree import (ANSWERS, N_LEVELS, N_RAISE_CODES, N_RAISE_OUTCOMES, NOBODY, RAISE_DIGITS,
                   _hand_winner, deal_arrays, ladder_outcome)


def _multisets(hands):
    """{multiset: id} of every multiset of types held within some hand (the empty one first, then
    in order of first appearance) and {multiset: hands holding it, ascending}."""
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
    return ids, members


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
    ids, members = _multisets(hands)
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


def item_sets(hands, n_types):
    """The private states of face-down play and their sets (module docstring).

    A private state (an *item*) is a hand and the types its player covered so far, in the order
    covered (at most two: covering starts at trick 2). A set is (F, k): the multiset F of types a
    player played face up and the number k of cards they covered, both public; its members are the
    items (h, c) with k covers and F + c within h. Only sets with F non-empty hold a cover (the
    first card is always face up).

    Parameters
    ----------
    hands : int64[H, 3]
        Sorted types of each hand.
    n_types : int

    Returns
    -------
    dict
        ``set_ptr`` int64[S + 1], ``set_item`` int32[...] (items of set s, ascending),
        ``set_hand`` int32[...] (the hand of each member), ``add`` int32[S, n_types] (the set after
        playing type t face up, -1 if no hand holds it), ``add_down`` int32[S] (the set after
        covering a card, -1 if the set cannot cover), ``set_ms`` int32[S] (``hand_sets``'s id of
        F: the hands of the set), ``item_hand`` int32[K], ``item_cover`` int64[K, 2] (the covered
        types in order, -1 beyond), ``item_add`` int32[K, n_types] (the item after covering type
        t, -1 if the hand has no such card left), ``item_label`` int8[K] (the last covered type,
        -1 none), ``item_parent`` int32[K] (the item before the last cover; itself without one),
        ``n_items`` K. Items 0..H-1 are the hands with no cover; set 0 is (empty, 0).
    """
    ms_ids, members = _multisets(hands)
    item_id = {(h, ()): h for h in range(len(hands))}
    for h, hand in enumerate(hands):
        hand = [int(t) for t in hand]
        seqs = sorted({(t,) for t in hand} | {(hand[i], hand[j]) for i in range(3) for j in range(3)
                                               if i != j})
        for c in seqs:
            item_id[(h, c)] = len(item_id)
    n_items = len(item_id)
    item_hand = np.zeros(n_items, np.int32)
    item_cover = np.full((n_items, 2), -1, np.int64)
    item_add = np.full((n_items, n_types), -1, np.int32)
    item_label = np.full(n_items, -1, np.int8)
    item_parent = np.arange(n_items, dtype=np.int32)
    for (h, c), k in item_id.items():
        item_hand[k] = h
        item_cover[k, :len(c)] = c
        if c:
            item_label[k] = c[-1]
            item_parent[k] = item_id[(h, c[:-1])]
        for t in range(n_types):
            if (h, c + (t,)) in item_id:
                item_add[k, t] = item_id[(h, c + (t,))]
    ids = {((), 0): 0}
    order = [((), 0)]
    up, down = {}, {}
    i = 0
    while i < len(order):  # breadth-first over the sets reachable by plays
        f, k = order[i]
        si = i
        i += 1
        if len(f) + k == 3:
            continue
        nexts = [((tuple(sorted(f + (t,))), k), (up, (si, t))) for t in range(n_types)
                 if tuple(sorted(f + (t,))) in ms_ids]
        if f and k < 2:
            nexts.append(((f, k + 1), (down, si)))
        for key, (table, at) in nexts:
            if key not in ids:
                ids[key] = len(order)
                order.append(key)
            table[at] = ids[key]
    n_sets = len(order)
    by_hand = {}
    for (h, c), it in item_id.items():
        by_hand.setdefault(len(c), []).append((h, c, it))
    mem = []
    for f, k in order:
        need = {t: f.count(t) for t in f}
        mem.append(sorted(it for h, c, it in by_hand[k]
                          if all(list(hands[h]).count(t) >= need.get(t, 0) + c.count(t)
                                 for t in set(f) | set(c))))
    set_ptr = np.zeros(n_sets + 1, np.int64)
    np.cumsum([len(m) for m in mem], out=set_ptr[1:])
    set_item = np.concatenate([np.array(m, np.int32) for m in mem])
    add = np.full((n_sets, n_types), -1, np.int32)
    add_down = np.full(n_sets, -1, np.int32)
    for (si, t), v in up.items():
        add[si, t] = v
    for si, v in down.items():
        add_down[si] = v
    set_ms = np.array([ms_ids[f] for f, k in order], np.int32)
    return dict(set_ptr=set_ptr, set_item=set_item, set_hand=item_hand[set_item], add=add,
                add_down=add_down, set_ms=set_ms, item_hand=item_hand, item_cover=item_cover,
                item_add=item_add, item_label=item_label, item_parent=item_parent, n_items=n_items)


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
def _build(strengths, n_hands, set_ptr, set_item, set_hand, set_pos, add, add_down, set_ms,
           item_cover, item_add, face_down, ok, both, three_ties_mano, top, cap=1 << 16,
           ecap=1 << 20):
    """Breadth-first public tree of a raise hand; returns the node arrays, the edges (``edge_to``:
    the child node, ``edge_lab``: the covered type of a face-down edge, -1 otherwise; the edges
    of node x are ``nedge[x]`` consecutive ones from ``edge_first[x]``) and, per (node, acting
    private state), the legal-edges mask and the information-set key (-1: no information set).
    ``ok`` and ``both`` (``_feasible``, ``_sets_feasible``) are over hands and ``hand_sets``'s
    multisets, which ``set_ms`` names for each set."""
    n_types = strengths.shape[0]
    base = 2 * n_types + 1 if face_down else n_types + 1
    player = np.full(cap, -1, np.int8)
    outcome = np.full(cap, -1, np.int32)
    edge_first = np.zeros(cap, np.int64)
    nedge = np.zeros(cap, np.int32)
    nset = np.zeros((cap, 2), np.int32)
    # public state per node (small ints in bytes: the full-deck t1 tree has 12 M nodes)
    code = np.ones(cap, np.int64)  # the public history: a covered card is digit 0
    rcode = np.zeros(cap, np.int32)
    level = np.zeros(cap, np.int8)
    raiser = np.full(cap, -1, np.int8)
    pend = np.full(cap, -1, np.int8)
    leader = np.zeros(cap, np.int8)
    lead = np.full(cap, -1, np.int8)  # the open trick's leading type (n_types: covered), -1 none
    res = np.zeros((cap, 3), np.int8)
    nt = np.zeros(cap, np.int8)
    played = np.zeros(cap, np.int8)
    ncov = np.zeros((cap, 2), np.int8)  # cards each player covered
    cpos = np.zeros((cap, 2, 2), np.int8)  # cards played before each covered card
    edge_to = np.zeros(cap, np.int64)
    edge_lab = np.full(cap, -1, np.int8)
    e_mask = np.zeros(ecap, np.uint32)
    e_key = np.full(ecap, -1, np.int64)
    hand_ptr = np.zeros(cap + 1, np.int64)
    pw = np.ones(N_LEVELS, np.int64)
    for i in range(1, N_LEVELS):
        pw[i] = pw[i - 1] * RAISE_DIGITS
    bp = np.ones(8, np.int64)
    for i in range(1, 8):
        bp[i] = bp[i - 1] * base
    kids = np.zeros(32, np.int64)  # card type of each edge, -1 raise; at answers: j
    kdown = np.zeros(32, np.bool_)  # the edge covers its card
    knode = np.zeros(32, np.int64)  # the edge's child node
    n = 1
    x = 0
    ne = 0
    ned = 0
    while x < n:
        if player[x] == -2:  # terminal (outcome set by the parent)
            player[x] = -1
            hand_ptr[x + 1] = ne
            x += 1
            continue
        pe = pend[x]
        mover = pe if pe >= 0 else (leader[x] if lead[x] < 0 else 1 - leader[x])
        sa, so = nset[x, mover], nset[x, 1 - mover]
        mo = set_ms[so]
        nk = 0
        if pe >= 0:
            nk = 3 if level[x] + 1 < top[mover] else 2
            for j in range(nk):
                kids[j] = j
                kdown[j] = False
        else:
            cover = face_down and nt[x] >= 1 and add_down[sa] >= 0
            for t in range(n_types):
                c = add[sa, t]
                if c >= 0 and both[mover, set_ms[c], mo]:
                    kids[nk] = t
                    kdown[nk] = False
                    nk += 1
                    if cover:  # the same card face down: one public child for every type
                        kids[nk] = t
                        kdown[nk] = True
                        nk += 1
            if level[x] < top[mover] and (raiser[x] < 0 or raiser[x] == mover):
                kids[nk] = -1
                kdown[nk] = False
                nk += 1
        nn = 0  # distinct children: the face-down edges share one
        cover_node = -1
        for j in range(nk):
            if kdown[j] and cover_node >= 0:
                knode[j] = cover_node
            else:
                knode[j] = n + nn
                if kdown[j]:
                    cover_node = n + nn
                nn += 1
        player[x] = mover
        edge_first[x] = ned
        nedge[x] = nk
        need = n + nn
        if need > player.shape[0]:
            player = _grow(player, need)
            player[n:] = -1
            outcome = _grow(outcome, need)
            edge_first = _grow(edge_first, need)
            nedge = _grow(nedge, need)
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
            ncov = _grow(ncov, need)
            cpos = _grow(cpos, need)
            hand_ptr = _grow(hand_ptr, player.shape[0] + 1)
        if ned + nk > edge_to.shape[0]:
            edge_to = _grow(edge_to, ned + nk)
            edge_lab = _grow(edge_lab, ned + nk)
        for j in range(nk):
            c = knode[j]
            edge_to[ned + j] = c
            edge_lab[ned + j] = kids[j] if kdown[j] else -1
            if kdown[j] and _seen_before(kdown, knode, j, c):
                continue
            player[c] = 0  # inner until a terminal is found
            outcome[c] = -1
            edge_first[c] = 0
            nedge[c] = 0
            nset[c, 0], nset[c, 1] = nset[x, 0], nset[x, 1]
            code[c], rcode[c], level[c], raiser[c], pend[c] = code[x], rcode[x], level[x], raiser[x], -1
            leader[c], lead[c], nt[c], played[c] = leader[x], lead[x], nt[x], played[x]
            for i in range(3):
                res[c, i] = res[x, i]
            for q in range(2):
                ncov[c, q] = ncov[x, q]
                cpos[c, q, 0], cpos[c, q, 1] = cpos[x, q, 0], cpos[x, q, 1]
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
                down = kdown[j]
                if down:
                    nset[c, mover] = add_down[sa]
                    code[c] = code[x] * base
                    cpos[c, mover, ncov[x, mover]] = played[x]
                    ncov[c, mover] = ncov[x, mover] + 1
                else:
                    nset[c, mover] = add[sa, t]
                    code[c] = code[x] * base + t + 1
                played[c] = played[x] + 1
                if lead[x] < 0:
                    leader[c] = mover
                    lead[c] = n_types if down else t
                else:
                    a = -1 if lead[x] >= n_types else strengths[lead[x]]
                    b = -1 if down else strengths[t]
                    rr = 2 if a == b else (leader[x] if a > b else mover)
                    res[c, nt[x]] = rr
                    nt[c] = nt[x] + 1
                    w = _hand_winner(res[c, 0], res[c, 1], res[c, 2], nt[c], three_ties_mano)
                    leader[c] = leader[x] if rr == 2 else rr
                    lead[c] = -1
                    if w != -2:
                        player[c] = -2
                        outcome[c] = NOBODY if w < 0 else ladder_outcome(w, level[x])
        # the mover's private states: legal edges and information-set keys
        lo = set_ptr[sa]
        na = set_ptr[sa + 1] - lo
        if ne + na > e_mask.shape[0]:
            e_mask = _grow(e_mask, ne + na)
            e_key = _grow(e_key, ne + na)
        for i in range(na):
            it = set_item[lo + i]
            h = set_hand[lo + i]
            m = 0
            k = 0
            for j in range(nk):
                legal = True
                if pe < 0 and kids[j] >= 0:
                    if kdown[j]:
                        ia = item_add[it, kids[j]]
                        legal = ia >= 0 and set_pos[add_down[sa], ia] >= 0
                    else:
                        legal = set_pos[add[sa, kids[j]], it] >= 0
                if legal:
                    m |= 1 << j
                    k += 1
            e_mask[ne + i] = m
            if k >= 2 and ok[mover, h, mo]:
                own = code[x]  # the mover's view: the types of the cards they covered
                for q in range(ncov[x, mover]):
                    own += (n_types + 1 + item_cover[it, q]) * bp[played[x] - 1 - cpos[x, mover, q]]
                e_key[ne + i] = (own * N_RAISE_CODES + rcode[x]) * (2 * n_hands) + h * 2 + mover
            else:
                e_key[ne + i] = -1
        ne += na
        ned += nk
        n += nn
        hand_ptr[x + 1] = ne
        x += 1
    return (player[:n], outcome[:n], edge_first[:n], nedge[:n], edge_to[:ned], edge_lab[:ned],
            nset[:n], hand_ptr[:n + 1], e_mask[:ne], e_key[:ne])


@njit
def _seen_before(kdown, knode, j, c):
    """Whether an edge before j leads to the shared face-down child ``c``."""
    for i in range(j):
        if kdown[i] and knode[i] == c:
            return True
    return False


@njit
def _popcount(mask):
    out = np.zeros(mask.shape[0], np.int64)
    for i in range(mask.shape[0]):
        m = mask[i]
        k = 0
        while m:
            m &= m - 1
            k += 1
        out[i] = k
    return out


def build_public_raise_tree(strengths, hands, pairs, weights, three_ties="nobody",
                            raise_caps=None, face_down=False):
    """The raise tree of ``tree.build_hand_tree(..., raises=True)`` as a ``PublicGame``.

    Parameters
    ----------
    strengths, hands, pairs, weights, three_ties, raise_caps
        As ``forest.build_raise_forest``.
    face_down : bool
        From trick 2 on each card may also be played face down (rules.py; module docstring):
        the tree of ``build_hand_tree(..., raises=True, face_down=True)``.

    Returns
    -------
    PublicGame
        With ``infoset_key`` (int64[I], sorted: ``build_hand_tree``'s keys and slot layout),
        ``hands``, ``raise_caps``, ``n_public_nodes`` (inner and terminal public nodes) and
        ``face_down`` attributes.

    Raises
    ------
    ValueError
        On a bad ``three_ties`` or ``raise_caps``, inconsistent shapes, or with ``face_down`` a
        deck whose information-set keys would overflow int64.
    """
    if three_ties not in ("nobody", "mano"):
        raise ValueError(f"bad three_ties {three_ties!r}: allowed 'nobody' or 'mano'")
    if raise_caps is not None and (len(raise_caps) != 2
                                   or not all(0 <= int(c) <= N_LEVELS - 1 for c in raise_caps)):
        raise ValueError(f"bad raise_caps {raise_caps!r}: two ladder indices 0..{N_LEVELS - 1}")
    strengths, hands, pairs, probs = deal_arrays(strengths, hands, pairs, weights)
    n_hands = len(hands)
    if face_down and (2 * len(strengths) + 1) ** 7 * N_RAISE_CODES * 2 * n_hands >= 2 ** 63:
        raise ValueError(f"face_down with {len(strengths)} card types and {n_hands} hands: "
                         "information-set keys would overflow int64; use the abstract deck")
    W = np.zeros((n_hands, n_hands))
    np.add.at(W, (pairs[:, 0], pairs[:, 1]), probs)
    ms_ptr, ms_hand, ms_add = hand_sets(hands, len(strengths))
    if face_down:
        st = item_sets(hands, len(strengths))
    else:  # the private state is the hand: the sets are the multisets'
        n_sets = len(ms_ptr) - 1
        st = dict(set_ptr=ms_ptr, set_item=ms_hand, set_hand=ms_hand, add=ms_add,
                  add_down=np.full(n_sets, -1, np.int32), set_ms=np.arange(n_sets, dtype=np.int32),
                  item_cover=np.full((n_hands, 2), -1, np.int64),
                  item_add=np.full((n_hands, len(strengths)), -1, np.int32),
                  item_label=np.full(n_hands, -1, np.int8),
                  item_parent=np.arange(n_hands, dtype=np.int32), n_items=n_hands)
    ok = _feasible(ms_ptr, ms_hand, W, np.ascontiguousarray(W.T))
    top = np.array(raise_caps if raise_caps is not None else (N_LEVELS - 1,) * 2, np.int64)
    set_ptr = st["set_ptr"]
    set_pos = np.full((len(set_ptr) - 1, st["n_items"]), -1, np.int32)
    for s in range(len(set_ptr) - 1):
        set_pos[s, st["set_item"][set_ptr[s]:set_ptr[s + 1]]] = np.arange(set_ptr[s + 1] - set_ptr[s])
    player, outcome, _, nedge, edge_to, edge_lab, nset, hand_ptr, mask, key = _build(
        strengths, n_hands, set_ptr, st["set_item"], st["set_hand"], set_pos, st["add"],
        st["add_down"], st["set_ms"], st["item_cover"], st["item_add"], bool(face_down), ok,
        _sets_feasible(ok, ms_ptr, ms_hand), three_ties == "mano", top)
    del set_pos
    has = key >= 0
    keys, inv = np.unique(key[has], return_inverse=True)
    if len(keys) != int(has.sum()):
        raise AssertionError("two (node, private state) pairs share an information-set key")
    infoset_ptr = np.zeros(len(keys) + 1, np.int64)
    infoset_ptr[1:][inv.ravel()] = _popcount(mask[has])
    np.cumsum(infoset_ptr, out=infoset_ptr)
    slot = np.full(len(key), -1, np.int64)
    slot[has] = infoset_ptr[inv.ravel()]
    # terminals become edges of their parents (-1 - outcome): the kernel values them there
    inner = player >= 0
    new_id = np.cumsum(inner) - 1
    edge_ptr = np.zeros(int(inner.sum()) + 1, np.int64)
    np.cumsum(nedge[inner], out=edge_ptr[1:])
    child = np.where(inner[edge_to], new_id[edge_to], -1 - outcome[edge_to].astype(np.int64))
    hand_ptr = np.append(hand_ptr[:-1][inner], hand_ptr[-1])
    if nedge.max(initial=0) <= 16:
        mask = mask.astype(np.uint16)
    game = make_public_game(player[inner], edge_ptr, child, nset[inner], set_ptr, st["set_hand"],
                            n_hands, hand_ptr, slot, mask, W, infoset_ptr, N_RAISE_OUTCOMES,
                            set_item=st["set_item"], n_items=st["n_items"], edge_label=edge_lab,
                            item_label=st["item_label"], item_parent=st["item_parent"])
    game.infoset_key = keys
    game.hands = hands
    game.raise_caps = tuple(int(c) for c in top)
    game.n_public_nodes = len(player)
    game.face_down = bool(face_down)
    return game
