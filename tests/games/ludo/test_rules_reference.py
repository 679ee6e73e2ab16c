"""Two-piece Ludo races against naive.ludo_race_reference, a plain-Python Jacobi solver
over *ordered* piece tuples that shares no code with the solver or with naive.race_values: exact
agreement (1e-9) at every position on small boards that carry every feature of the classic board
(shortcut, trap, safe cell, overshoot "stay", a six-faced die) and, besides, a stack of two pieces
captured at once and a bonus roll."""

import numpy as np
import pytest

from naive import ludo as naive
from strongsolve.games.ludo import encoding, rules
from strongsolve.games.ludo.stages import expansion
from support.ludo import naive_board

BOARDS = [
    # the classic board's features on 8 cells: a shortcut 2->5, a trap 6->3, a safe cell, a d6
    {"length": 8, "jumps": {2: 5, 6: 3}, "safe": [4], "die": 6},
    # a loaded d4 and a bonus roll on 4
    {"length": 7, "jumps": {3: 6, 5: 1}, "die": ["2/5", "1/5", "1/5", "1/5"], "roll_again_on": 4},
]
# the rule these checks were written for (tests/games/ludo/test_rules.py checks both)
BOARDS = [dict(data, pass_by_overshoot=False) for data in BOARDS]


@pytest.mark.parametrize("pieces", [1, 2])
@pytest.mark.parametrize("data", BOARDS)
def test_race_matches_the_ordered_tuple_reference_everywhere(data, pieces):
    sol = expansion.solve_race(rules.Board.from_mapping(data), pieces, tol=1e-13)
    ref = naive.ludo_race_reference(naive_board(data), pieces, pass_by_overshoot=False)
    enc = sol.race.encoding
    live = np.flatnonzero(np.diff(sol.race.expansion.node_ptr) > 0)
    assert live.size > 0
    for x in live:
        assert sol.value[x] == pytest.approx(ref[enc.position(x)], abs=1e-9), enc.position(x)


def test_a_stack_is_captured_whole():
    # the opponent's two pieces share cell 3 (not safe); the mover's piece at 1 rolls 2 and sends
    # both back to 0; the reference's options say the same
    board = BOARDS[0]
    options = naive.ludo_race_options(naive_board(board), (1, 0), (3, 3), 2, False)
    assert ((3, 0), (0, 0), True) in options
    race = encoding.race_expansion(rules.Board.from_mapping(board), 2)
    enc = race.encoding
    x = enc.node((0, 1), (3, 3))
    o = race.expansion.node_ptr[x] + 1  # face 2
    lo, hi = race.expansion.out_ptr[o], race.expansion.out_ptr[o + 1]
    after = {enc.position(int(race.expansion.cand_next[a])) for a in range(lo, hi)}
    assert ((0, 0), (0, 3)) in after  # the opponent, now to move, has both pieces back at 0
