"""Lossless abstraction of a Truco deal: cards become strength classes.

Outside the manilhas suits never matter (rules.py: common cards of one rank tie whatever their
suits), so swapping two cards of one common rank is a symmetry of the game. Classing cards by trick
strength (0..12) merges exactly the orbits of that symmetry group, so the abstract game is
equivalent to the physical one (lossless in the sense of Gilpin and Sandholm, "Lossless abstraction
of imperfect information games", JACM 2007). A deck is described by ``cap[t]``, the number of unseen
cards of class ``t``; an abstract hand is a multiset of classes, weighted by its number of physical
hands; a deal pair (mano's hand, pé's hand) by its number of physical deals.

Vira classes: with the vira of rank ``v`` (0..9 in the order 4 5 6 7 Q J K A 2 3) the common class
with three unseen cards is the vira's own rank, at position ``min(v, 8)`` among the commons; the deck
structure depends on nothing else. So the ten vira ranks fall into nine classes, vira 2 and vira 3
(``v = 8, 9``) sharing class 8.
"""

from math import comb

import numpy as np

from .rules import HAND_SIZE, N_RANKS, N_STRENGTHS, strength

N_VIRA_CLASSES = 9


def vira_class(vira_rank):
    """Structural class (0..8) of a vira rank (0..9); ValueError outside 0..9."""
    if not 0 <= vira_rank < N_RANKS:
        raise ValueError(f"bad vira rank {vira_rank}: allowed 0..9 (4 5 6 7 Q J K A 2 3)")
    return min(vira_rank, N_VIRA_CLASSES - 1)


def vira_class_probabilities():
    """float64[9]: probability of each vira class (a uniform vira card: 1/10 per rank)."""
    p = np.zeros(N_VIRA_CLASSES)
    for v in range(N_RANKS):
        p[vira_class(v)] += 1.0 / N_RANKS
    return p


def class_capacities(vclass):
    """int64[13]: unseen cards per strength class under a vira of class ``vclass``."""
    if not 0 <= vclass < N_VIRA_CLASSES:
        raise ValueError(f"bad vira class {vclass}: allowed 0..8")
    cap = np.full(N_STRENGTHS, 4, np.int64)
    cap[9:] = 1
    cap[vclass] = 3
    return cap


def multisets(cap, size=HAND_SIZE):
    """All multisets of ``size`` types within capacities, as sorted tuples, in lexicographic order."""
    out = []

    def rec(start, left, prefix):
        if left == 0:
            out.append(tuple(prefix))
            return
        for t in range(start, len(cap)):
            used = prefix.count(t)
            if used < cap[t]:
                rec(t, left - 1, prefix + [t])

    rec(0, size, [])
    return out


def hand_weight(hand, cap):
    """Number of physical hands behind an abstract hand (a multiset of classes)."""
    w = 1
    for t in set(hand):
        w *= comb(int(cap[t]), hand.count(t))
    return w


def pair_weight(h0, h1, cap):
    """Number of physical deals behind an abstract deal pair (0 if the capacities forbid it)."""
    w = 1
    for t in set(h0) | set(h1):
        k0, k1 = h0.count(t), h1.count(t)
        if k0 + k1 > cap[t]:
            return 0
        w *= comb(int(cap[t]), k0) * comb(int(cap[t]) - k0, k1)
    return w


def deal_pairs(cap):
    """Abstract hands and deal pairs of a deck.

    Parameters
    ----------
    cap : int array (n_types,)
        Unseen cards per type.

    Returns
    -------
    hands : list of tuple
        Abstract hands (sorted tuples of 3 types).
    pairs : int64[P, 2]
        Indices into ``hands`` of (mano's hand, pé's hand) for every feasible pair.
    weights : int64[P]
        Physical deals behind each pair; they sum to C(n, 3) * C(n - 3, 3), n = sum(cap).
    """
    hands = multisets(cap)
    pairs, weights = [], []
    for i, h0 in enumerate(hands):
        for j, h1 in enumerate(hands):
            w = pair_weight(h0, h1, cap)
            if w:
                pairs.append((i, j))
                weights.append(w)
    return hands, np.array(pairs, np.int64).reshape(-1, 2), np.array(weights, np.int64)


def abstraction_sizes():
    """Per vira class: abstract hands, abstract deal pairs, physical hands and deals (ints).

    The physical counts are C(39, 3) = 9139 hands and C(39, 3) * C(36, 3) = 9139 * 7140 deals.
    """
    rows = []
    for c in range(N_VIRA_CLASSES):
        cap = class_capacities(c)
        hands, pairs, weights = deal_pairs(cap)
        rows.append(dict(vira_class=c, abstract_hands=len(hands), abstract_pairs=len(pairs),
                         physical_hands=sum(hand_weight(h, cap) for h in hands),
                         physical_deals=int(weights.sum())))
    return rows


def abstract_hand(cards, vira_rank):
    """The abstract hand (sorted strength classes) of physical ``cards`` under ``vira_rank``."""
    return tuple(sorted(strength(c, vira_rank) for c in cards))


def deck_capacities(cards, vira_rank):
    """int64[13]: unseen cards per strength class of an arbitrary set of physical ``cards`` (a small
    deck for checks, or the 39 cards left by the vira)."""
    cap = np.zeros(N_STRENGTHS, np.int64)
    for c in cards:
        cap[strength(c, vira_rank)] += 1
    return cap
