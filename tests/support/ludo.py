"""Ludo boards in the form the naive reference takes."""

from fractions import Fraction


def naive_board(data):
    """The board mapping in the form naive/ludo.py takes (die as a list of Fractions)."""
    die = data.get("die", 6)
    die = [Fraction(1, die)] * die if isinstance(die, int) else [Fraction(p) for p in die]
    return dict(data, die=die)
