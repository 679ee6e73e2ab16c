"""Ludo boards: the bench's small boards, and boards in the form the naive reference takes."""

import functools
from fractions import Fraction
from pathlib import Path

from strongsolve.games.ludo import rules

BENCH_BOARDS = Path(__file__).resolve().parents[2] / "bench" / "data"


@functools.lru_cache(maxsize=None)
def bench_board(name):
    """bench/data/ludo_<name>.yaml (small9, quarter14, half30, three_quarter45: the classic
    board's features on fewer cells) as a rules.Board."""
    return rules.load_board(BENCH_BOARDS / f"ludo_{name}.yaml")


def naive_board(data):
    """The board mapping in the form naive/ludo.py takes (die as a list of Fractions)."""
    die = data.get("die", 6)
    die = [Fraction(1, die)] * die if isinstance(die, int) else [Fraction(p) for p in die]
    return dict(data, die=die)
