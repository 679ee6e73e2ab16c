"""Subgames of a Truco match: one hand, keyed by the role-ordered score and the vira class.

A subgame ``(a, b, c)`` is a hand with mano at ``a`` points, pé at ``b`` (0..11 each) and a vira of
class ``c`` (encoding.py): 144 scores x 9 classes = 1296. Its value is mano's match-win
probability. After a hand scoring ``(pm, pp)`` the score is ``(a + pm, b + pp)``; reaching 12 ends
the match, otherwise the next hand has the roles swapped (the dealer rotates), so its role-ordered
score is ``(b + pp, a + pm)`` and the old mano wins with ``1 - W(b + pp, a + pm)``, where
``W(s) = sum_c P(c) V(s, c)`` averages over the next vira.

Outside the 11 row a hand has the raise ladder and scores 1, 3, 6, 9 or 12 points to one side (or
nothing after three ties); ``raise_utility_table`` maps its outcomes through ``after_hand``.

The 11 row (a player at 11) closes by itself: a hand of eleven scores 1 (fold) or 3 (played), and
three ties score nothing, so it only leads to other 11-row scores. It is solved in groups
``(11, 11)`` and then ``{(11, x), (x, 11)}`` for x = 10 .. 0; a group depends on the groups x + 1
and x + 3, and the two scores of a group on each other through three ties (roles swap, no points),
so a group is iterated to a fixed point.
"""

import numpy as np

from .rules import MAO_DE_ONZE_FOLD, MAO_DE_ONZE_VALUE, TARGET
from .tree import FOLD, MANO_WINS, NOBODY, N_OUTCOMES, PE_WINS, outcome_points

N_SCORES = 12


def check_score(a, b):
    if not (0 <= a < N_SCORES and 0 <= b < N_SCORES):
        raise ValueError(f"bad score {a}-{b}: each side has 0..11 points before a hand")


def eleven_player(a, b):
    """Who decides a hand of eleven at role-ordered score (a, b): 0 mano, 1 pé, -1 nobody."""
    check_score(a, b)
    if a == 11 and b < 11:
        return 0
    if b == 11 and a < 11:
        return 1
    return -1


def in_row11(a, b):
    return a == 11 or b == 11


def row11_groups():
    """The 11 row as dependency-ordered groups: [(11, 11)], then [(11, x), (x, 11)] for x = 10..0."""
    return [[(11, 11)]] + [[(11, x), (x, 11)] for x in range(10, -1, -1)]


def group_name(a, b):
    """Name of the 11-row group of score (a, b): 'x' where the other side has x points."""
    if not in_row11(a, b):
        raise ValueError(f"score {a}-{b} is not in the 11 row (a player at 11)")
    return str(min(a, b))


def group_dependencies(x):
    """Groups (by name) whose values group ``x`` needs: x + 1 and x + 3 within 0..11."""
    if x == 11:
        return []
    return sorted({str(min(y, 11)) for y in (x + 1, x + 3) if y <= 11}, key=int)


def after_hand(a, b, pm, pp, W):
    """Mano's match-win probability after a hand at (a, b) scored (pm, pp); ``W`` maps role-ordered
    scores to values before the next vira (KeyError if a needed score is missing)."""
    if a + pm >= TARGET:
        return 1.0
    if b + pp >= TARGET:
        return 0.0
    return 1.0 - W[(b + pp, a + pm)]


def utility_table(a, b, W):
    """float64[4]: mano's utility of FOLD, MANO_WINS, PE_WINS, NOBODY in the 11-row hand at (a, b).

    A hand of eleven is worth 3 and a fold gives the opponent 1; at 11-11 any win ends the match.
    """
    if not in_row11(a, b):
        raise ValueError(f"score {a}-{b} is not in the 11 row")
    e = eleven_player(a, b)
    value = MAO_DE_ONZE_VALUE if e >= 0 else 1
    t = np.zeros(N_OUTCOMES)
    if e == 0:
        t[FOLD] = after_hand(a, b, 0, MAO_DE_ONZE_FOLD, W)
    elif e == 1:
        t[FOLD] = after_hand(a, b, MAO_DE_ONZE_FOLD, 0, W)
    t[MANO_WINS] = after_hand(a, b, value, 0, W)
    t[PE_WINS] = after_hand(a, b, 0, value, W)
    t[NOBODY] = after_hand(a, b, 0, 0, W)
    return t


def points_utility_table(a, b, points, W):
    """float64[K]: mano's match-win probability after each outcome of a hand at (a, b).

    Parameters
    ----------
    a, b : int
        Role-ordered score before the hand (mano's, pé's points, 0..11).
    points : int array (K, 2)
        Points (mano's, pé's) scored at each outcome code (``tree.outcome_points``).
    W : mapping or float array (12, 12)
        ``W[(x, y)]``: mano's match-win probability before a hand at role-ordered score (x, y),
        averaged over the vira (only scores below 12 are read: a side reaching 12 has won).

    Raises
    ------
    ValueError
        On a score outside 0..11; KeyError if ``W`` lacks a needed score.
    """
    check_score(a, b)
    return np.array([after_hand(a, b, int(pm), int(pp), W) for pm, pp in np.asarray(points)])


def raise_utility_table(a, b, W):
    """float64[N_RAISE_OUTCOMES]: mano's utility of each outcome code of a hand with raises at (a, b)
    (neither side at 11), for ``tree.build_hand_tree(..., raises=True)``.

    A win at ladder value v (rules.LADDER: 1, 3, 6, 9, 12, on the cards or by a fold to a raise)
    adds v to the winner's score; reaching 12 wins the match (value 1 or 0), otherwise the next
    hand is valued by ``W`` with the roles swapped (``after_hand``). The FOLD entry, an outcome
    only a hand of eleven has, carries the no-points value. ValueError in the 11 row.
    """
    if in_row11(a, b):
        raise ValueError(f"score {a}-{b} is in the 11 row (no raises): use utility_table")
    return points_utility_table(a, b, outcome_points(raises=True), W)
