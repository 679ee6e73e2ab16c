"""Blind play at 11-11 ("At 11-11 the hand is played without raises (option: blind play,
cards in random order)"): every card is drawn uniformly from the player's remaining cards, so the
tree has chance nodes only. Values are checked against the plain enumerations of tests/naive/truco.py.
"""

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.stages.groups import solve_group
from strongsolve.games.truco.saved import read_subgame, subgame_path
from strongsolve.games.truco.tree import MANO_WINS, NOBODY, PE_WINS, build_hand_tree
from strongsolve.kernels.cfr import CHANCE, solve

from naive import truco as naive
from support.truco import tiny_capacities, tiny_cards

VIRA = "7c"  # the manilhas are the queens (pagat)
# 7 and A twice each, so three tied tricks happen; two manilhas; the K pair ties too
DECK = ["Qh", "Qc", "7d", "7s", "Ad", "As", "Kd", "Ks"]
TABLE = (0.0, 0.83, 0.21, 0.47)  # FOLD (absent at 11-11), MANO_WINS, PE_WINS, NOBODY


def _utility(table):
    return {(1, 0): table[MANO_WINS], (0, 1): table[PE_WINS], (0, 0): table[NOBODY]}


def _trees(deck, vira, three_ties):
    vr = R.parse_card(vira) // 4
    cards = [R.parse_card(c) for c in deck]
    hands, pairs, weights = ab.deal_pairs(ab.deck_capacities(cards, vr))
    abstract = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights,
                               three_ties=three_ties, blind=True)
    hands, pairs, weights = ab.deal_pairs(np.ones(len(cards), np.int64))
    physical = build_hand_tree(np.array([R.strength(c, vr) for c in cards]), np.array(hands), pairs,
                               weights, three_ties=three_ties, blind=True)
    return abstract, physical


@pytest.mark.parametrize("three_ties", ["nobody", "mano"])
def test_blind_value_matches_enumeration_of_play_orders(three_ties):
    want = naive.truco_blind_value(DECK, VIRA, _utility(TABLE), three_ties)
    vr = R.parse_card(VIRA) // 4
    by_tricks = naive.truco_blind_value_by_tricks([R.strength(R.parse_card(c), vr) for c in DECK],
                                                  _utility(TABLE), three_ties)
    assert by_tricks == pytest.approx(want, rel=1e-12)  # the two references agree
    for tree in _trees(DECK, VIRA, three_ties):
        g = tree.game
        g.validate()
        assert g.n_infosets == 0 and not np.any(g.node_type == 2)
        tree.set_utilities(TABLE)
        res = solve(g, target_nash_conv=1e-12, max_iterations=1, check_every=1)
        assert res.nash_conv == 0.0 and len(res.strategy) == 0
        assert res.value == pytest.approx(want, rel=1e-9)


def test_blind_counts_physical_cards():
    # a hand of two cards of one type and one other: the pair is drawn first with probability 2/3
    tree = build_hand_tree(np.arange(3), np.array([[0, 0, 1], [2, 2, 2]]), np.array([[0, 1]]), [1.0],
                           blind=True)
    g = tree.game
    assert g.node_type[1] == CHANCE
    assert list(g.child_prob[g.child_ptr[1]:g.child_ptr[2]]) == [pytest.approx(2 / 3), pytest.approx(1 / 3)]


def test_blind_full_deck_one_vira_class():
    vira = "Jd"  # class 5: the kings are manilhas, three jacks left
    vr = R.parse_card(vira) // 4
    strengths = [R.strength(c, vr) for c in range(R.N_CARDS) if c != R.parse_card(vira)]
    want = naive.truco_blind_value_by_tricks(strengths, _utility(TABLE))
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(ab.vira_class(vr)))
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, blind=True)
    tree.set_utilities(TABLE)
    assert tree.game.n_infosets == 0
    assert solve(tree.game, max_iterations=1, check_every=1).value == pytest.approx(want, rel=1e-9)


def test_blind_option_in_the_row11_driver(tmp_path):
    solve_group(11, tmp_path, dict(eleven_eleven="blind", fixed_point_tol=1e-12),
                log=lambda m: None, capacities=tiny_capacities)
    for c in (0, 4, 8):
        attrs, data = read_subgame(subgame_path(tmp_path, 11, 11, c))
        assert attrs["params"]["eleven_eleven"] == "blind" and len(data["policy"]) == 0
        vira, cards = tiny_cards(c)
        want = naive.truco_blind_value([R.card_text(x) for x in cards], R.card_text(vira),
                                       _utility(attrs["utility"]))
        assert attrs["value"] == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match="eleven_eleven"):
        solve_group(11, tmp_path, dict(eleven_eleven="closed"), capacities=tiny_capacities)
    # the CLI's policy query names the blind rule instead of a missing decision
    from strongsolve.games.truco.advice import policy
    with pytest.raises(ValueError, match="blind play"):
        policy((11, 11), 0, "7c", "Ac 3h 4s", results=tmp_path)


def test_bad_option_combinations():
    args = (np.arange(3), np.array([[0, 1, 2]]), np.array([[0, 0]]), [1.0])
    with pytest.raises(ValueError, match="eleven=0"):
        build_hand_tree(*args, eleven=0, blind=True)
    with pytest.raises(ValueError, match="blind"):
        build_hand_tree(*args, raises=True, blind=True)
