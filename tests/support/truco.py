"""The tiny Truco decks of the 11-row tests: one physical deck of 7 unseen cards per vira class."""

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R


def tiny_cards(c):
    """Physical tiny deck of vira class c: (vira card, the 7 unseen cards)."""
    v = c  # vira rank c has class c for c <= 8
    m = R.manilha_rank(v)
    commons = [r for r in range(R.N_RANKS) if r != m]
    other = commons[(c + 4) % 9]
    cards = [v * 4 + s for s in (1, 2, 3)] + [other * 4 + 0, other * 4 + 1, m * 4 + 0, m * 4 + 3]
    return v * 4, cards


def tiny_capacities(c):
    vira, cards = tiny_cards(c)
    return ab.deck_capacities(cards, vira // 4)
