"""The sequence-form LP (kernels/sequence_lp.py) against Kuhn poker's known value, the plain LP of
tests/naive/truco.py (its own sequences, built from the nested tree) and the exact best response."""

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.pruning import raise_caps
from strongsolve.games.truco.subgames import raise_utility_table
from strongsolve.games.truco.tree import N_OUTCOMES, build_hand_tree
from strongsolve.kernels.cfr import evaluate
from strongsolve.kernels.sequence_lp import solve_lp

from naive import truco as naive
from support.cfr import kuhn_game

DECK7 = ["Qc", "Qh", "7d", "7s", "Ad", "As", "Kh"]


def test_kuhn_poker_exactly():
    # Kuhn 1950: the first player's equilibrium value is -1/18
    game, _ = kuhn_game()
    res = solve_lp(game)
    assert res.value == pytest.approx(-1 / 18, abs=1e-12)
    assert abs(res.nash_conv) <= 1e-12  # an exact equilibrium: the two best responses meet
    assert res.iterations > 0 and res.strategy.shape == (int(game.infoset_ptr[-1]),)


def _raise_tree(score, face_down, seed):
    vr = R.parse_card("7c")
    hands, pairs, weights = ab.deal_pairs(ab.deck_capacities([R.parse_card(c) for c in DECK7], vr // R.N_SUITS))
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, raises=True,
                           raise_caps=raise_caps(*score, "min"), face_down=face_down)
    rng = np.random.default_rng(seed)
    W = {(x, y): float(rng.random()) for x in range(12) for y in range(12)}
    tree.set_utilities(raise_utility_table(*score, W))
    return tree


@pytest.mark.parametrize("score,face_down", [((10, 9), False), ((6, 8), False), ((4, 7), False),
                                             ((9, 9), True)])
def test_raise_hands_against_the_plain_lp(score, face_down):
    tree = _raise_tree(score, face_down, seed=sum(score))
    res = solve_lp(tree.game)
    want = naive.truco_lp_value_of_tabular(tree.game)
    assert res.value == pytest.approx(want, rel=1e-9, abs=1e-12)
    # the profile is an equilibrium: neither best response gains more than the LP's tolerance
    ev = evaluate(tree.game, res.strategy)
    assert abs(ev["nash_conv"]) <= 1e-10 and ev["value"] == res.value
    # behaviour strategies: a distribution at every information set
    sums = np.add.reduceat(res.strategy, tree.game.infoset_ptr[:-1])
    assert np.allclose(sums, 1.0, atol=1e-12) and res.strategy.min() >= 0


def test_a_tree_without_choices():
    # a blind 11-11 hand: chance and terminals only, the value is the chance average
    vr = R.parse_card("7c")
    hands, pairs, weights = ab.deal_pairs(ab.deck_capacities([R.parse_card(c) for c in DECK7], vr // R.N_SUITS))
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, eleven=-1,
                           blind=True)
    tree.set_utilities(np.linspace(0.1, 0.9, N_OUTCOMES))
    res = solve_lp(tree.game)
    assert res.value == pytest.approx(naive.truco_lp_value_of_tabular(tree.game), abs=1e-12)
    assert res.nash_conv == pytest.approx(0.0, abs=1e-15)


def test_the_grid_refuses_the_lp_on_the_full_deck():
    # the LP is the small decks' exact solver: a full-deck subgame names the setting that solves it
    from strongsolve.games.truco.stages.groups import _solve_one, check_params

    deck = ab.deal_pairs(ab.class_capacities(0))
    table = raise_utility_table(9, 9, {(x, y): 0.5 for x in range(12) for y in range(12)})
    with pytest.raises(ValueError, match=r"solver lp .* score 9-9 class 0 has \d+: use truco.solver: auto"):
        _solve_one((9, 9), 0, deck, table, check_params(dict(solver="lp")), None, None, True)
