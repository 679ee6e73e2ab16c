"""Small-deck check: the abstract game (strength classes, weighted deals) has the value of the
physical game, solved exactly by the plain sequence-form LP of tests/naive/truco.py.

The deck: vira 7c (manilhas are the queens, pagat "Brazilian Truco") and the eight cards
Qh Qc 7d 7s 7h Ad As Ah: two manilhas, a common rank with the vira's three copies left and a
common rank with three copies, so trick ties, manilha suits and the three-tie rule all occur.
"""

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.tree import FOLD, MANO_WINS, NOBODY, PE_WINS, build_hand_tree
from strongsolve.kernels.cfr import solve

from naive import truco as naive

VIRA = "7c"
DECK = ["Qh", "Qc", "7d", "7s", "7h", "Ad", "As", "Ah"]

# (score, player at 11, utilities of FOLD, MANO_WINS, PE_WINS, NOBODY); arbitrary match-win values
CASES = [
    ((11, 6), 0, (0.35, 1.0, 0.1, 0.55)),
    ((6, 11), 1, (0.62, 0.9, 0.0, 0.45)),
    ((11, 11), -1, (0.0, 1.0, 0.0, 0.5)),
]


def _points_utility(score, eleven, table):
    value = 1 if eleven < 0 else R.MAO_DE_ONZE_VALUE
    fold = (0, 1) if eleven == 0 else (1, 0)
    return {fold: table[FOLD], (value, 0): table[MANO_WINS], (0, value): table[PE_WINS],
            (0, 0): table[NOBODY]}


def _abstract_tree(eleven, table):
    vr = R.parse_card(VIRA) // 4
    cap = ab.deck_capacities([R.parse_card(c) for c in DECK], vr)
    hands, pairs, weights = ab.deal_pairs(cap)
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, eleven=eleven)
    tree.set_utilities(table)
    return tree, cap


def _physical_tree(eleven, table):
    vr = R.parse_card(VIRA) // 4
    strengths = [R.strength(R.parse_card(c), vr) for c in DECK]
    hands, pairs, weights = ab.deal_pairs(np.ones(len(DECK), np.int64))
    tree = build_hand_tree(np.array(strengths), np.array(hands), pairs, weights, eleven=eleven)
    tree.set_utilities(table)
    return tree


@pytest.mark.parametrize("score,eleven,table", CASES)
def test_physical_and_abstract_values_agree(score, eleven, table):
    exact = naive.truco_lp_value(naive.truco_hand_tree(DECK, VIRA, score,
                                                       _points_utility(score, eleven, table)))
    abstract, cap = _abstract_tree(eleven, table)
    physical = _physical_tree(eleven, table)
    assert abstract.game.n_infosets < physical.game.n_infosets
    for tree in (abstract, physical):
        res = solve(tree.game, target_nash_conv=1e-7, max_iterations=20_000, check_every=25)
        assert res.nash_conv <= 1e-7
        assert res.value == pytest.approx(exact, abs=1e-7)


def test_small_deck_sizes():
    _, cap = _abstract_tree(0, CASES[0][2])
    hands, pairs, weights = ab.deal_pairs(cap)
    assert weights.sum() == 56 * 10  # C(8,3) * C(5,3) physical deals
    assert list(cap[[3, 6, 11, 12]]) == [3, 3, 1, 1] and cap.sum() == 8
