"""Shut the Box: the two rule sets, their parameters, rolls and the cards a roll offers.

Two rule sets:

``flip-one``
    Cards 1..n, all clear at the start. Two dice with faces 1..f are rolled; after seeing the roll
    (x, y) the player flips exactly one existing card among x, y and x + y (a bit toggle: it can
    close or reopen a card). If none of the three is a card (possible when f > n), the roll passes.
    The game ends when every card is set; objective ``min-rolls``: minimise the expected number of
    rolls. The ordered rolls (x, y) and (y, x) offer the same cards, so they are merged into one
    outcome of probability 2/f^2 (1/f^2 for doubles).
    Node = mask of set cards (bit c-1 for card c); start 0, goal ``2^n - 1``.

``standard``
    Tiles 1..n, all open. Roll two f-faced dice and shut any set of open tiles whose sum equals the
    total; when no such set exists the game ends (Wikipedia, "Shut the box"; D. Butler,
    http://www.durangobill.com/ShutTheBox.html). Objectives ``max-shut`` (probability of shutting
    every tile) and ``min-sum`` (expected sum of the tiles left open). Option ``one_die``: a single
    die is rolled whenever the open tiles sum to 6 or less (Butler's standard game). Node = mask of
    open tiles (bit t-1 for tile t); start ``2^n - 1``; node ``2^n`` is the absorbing end. Every
    game end is a candidate into it whose reward is the final utility: 1 for shutting the box
    (``max-shut``), the open sum (``min-sum``), 0 otherwise; so node 0 (all shut) has one sure
    outcome paying that utility.
"""

import numpy as np


RULES = ("flip-one", "standard")


OBJECTIVES = {"flip-one": ("min-rolls",), "standard": ("max-shut", "min-sum")}


ONE_DIE_SUM = 6  # open tiles summing to this or less roll one die (Butler's standard game)


MAX_CARDS = 20  # 2^20 nodes: about a gigabyte of expansion


# Largest sizes solved in fractions by ``--exact`` (measured on 2 shared cores, f = 6, see
# README): flip-one is cyclic, so its exact elimination fills in (n = 10: about 5 s, each card
# more about 4.7 times that); standard is acyclic, one substitution per candidate.
MAX_EXACT_CARDS = {"flip-one": 10, "standard": 14}


def check_params(cards, faces, rule="flip-one", objective="min-rolls", one_die=False):
    """Validate a Shut the Box variant.

    Raises
    ------
    ValueError
        Naming the bad value: ``cards`` outside 1..20, ``faces`` < 1, an unknown rule, an objective
        the rule does not have, or ``one_die`` with the flip-one rule.
    """
    if isinstance(cards, bool) or not isinstance(cards, (int, np.integer)) \
            or not 1 <= cards <= MAX_CARDS:
        raise ValueError(f"cards must be an integer in 1..{MAX_CARDS}, got {cards!r}")
    if isinstance(faces, bool) or not isinstance(faces, (int, np.integer)) or not 1 <= faces <= 100:
        raise ValueError(f"faces must be an integer in 1..100, got {faces!r}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if objective not in OBJECTIVES[rule]:
        raise ValueError(f"objective {objective!r} does not apply to rule {rule!r}; "
                         f"allowed: {', '.join(OBJECTIVES[rule])}")
    if one_die and rule != "standard":
        raise ValueError("one_die applies only to the standard rule")


def unordered_rolls(faces):
    """The rolls of two f-faced dice up to order.

    Returns
    -------
    rolls : int64[R, 2]
        ``(x, y)`` with ``x <= y``, in lexicographic order; R = f (f + 1) / 2.
    prob : float64[R]
        2/f^2 if x < y, else 1/f^2.
    """
    rolls = np.array([(x, y) for x in range(1, faces + 1) for y in range(x, faces + 1)], np.int64)
    prob = np.where(rolls[:, 0] < rolls[:, 1], 2.0, 1.0) / faces ** 2
    return rolls, prob


def flip_cards(x, y, cards):
    """The cards the flip-one rule offers after the roll (x, y): distinct cards among x, y, x + y
    that exist, in that order (the order of the candidates in the expansion)."""
    out = []
    for c in (x, y, x + y):
        if c <= cards and c not in out:
            out.append(c)
    return out


def roll_totals(faces, dice):
    """Distribution of the total of ``dice`` (1 or 2) f-faced dice: (totals int64[T], prob[T])."""
    if dice == 1:
        return np.arange(1, faces + 1), np.full(faces, 1.0 / faces)
    totals = np.arange(2, 2 * faces + 1)
    ways = faces - np.abs(totals - (faces + 1))
    return totals, ways / faces ** 2
