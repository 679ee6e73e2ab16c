"""Lossless raise pruning, checked exactly on a small deck at every score.

For every role-ordered score outside the 11 row the hand is built with the whole ladder and with
the pruned ladders of pruning.py ("min", and "player" where the utility table certifies it). For
random profiles of the pruned game and their lift to the whole game, the value and both best
responses agree to 1e-12 (the module's step 3: equal best responses for every lifted profile make
the lift of an equilibrium an equilibrium, so the game values and exploitabilities are equal); the
sequence-form LP of tests/naive/truco.py gives the same game value with and without pruning.
"""

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.pruning import (lift_map, lift_policy, player_prune_is_lossless,
                                             raise_cap, raise_caps, strip_pruned)
from strongsolve.games.truco.subgames import raise_utility_table
from strongsolve.games.truco.tree import build_hand_tree, ladder_outcome
from strongsolve.kernels.cfr import evaluate, solve

from naive import truco as naive

VIRA = "7c"  # the manilhas are the queens (pagat)
DECK6 = ["Qc", "Qd", "7d", "7s", "Ad", "As"]  # two manilhas, two tied pairs
SCORES = [(a, b) for a in range(11) for b in range(11)]


def continuation(x, y):
    """A made-up match-win table W before a hand at x-y, increasing in one's own points."""
    return 0.5 + 0.035 * (x - y) + 0.0013 * x * y - 0.0007 * y * y


W = {(x, y): continuation(x, y) for x in range(12) for y in range(12)}


@pytest.fixture(scope="module")
def trees():
    vr = R.parse_card(VIRA) // 4
    hands, pairs, weights = ab.deal_pairs(ab.deck_capacities([R.parse_card(c) for c in DECK6], vr))
    cache = {}

    def get(caps):
        if caps not in cache:
            cache[caps] = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights,
                                          raises=True, raise_caps=caps)
        return cache[caps]
    return get


def test_tiers_follow_the_ladder():
    # the tiers: min score 9-10 -> {1, 3}; 6-8 -> {1, 3, 6}; 3-5 -> {1, 3, 6, 9}; 0-2 full
    want = {9: 1, 10: 1, 6: 2, 7: 2, 8: 2, 3: 3, 4: 3, 5: 3, 0: 4, 1: 4, 2: 4}
    assert {m: raise_cap(m) for m in range(11)} == want
    assert raise_caps(9, 3, "min") == (3, 3) and raise_caps(9, 3, "player") == (1, 3)
    assert raise_caps(0, 10, "none") == (4, 4)
    with pytest.raises(ValueError, match="bad prune mode"):
        raise_caps(1, 1, "max")
    with pytest.raises(ValueError, match="0..10"):
        raise_cap(11)


def test_strip_pruned_histories():
    strengths = np.arange(13)
    # at a cap of 1 for both, the raise to 6 (from 3) and its accept vanish; cards stay
    assert strip_pruned(["raise", "accept", 5, "raise", "accept", 7], strengths, (1, 1)) == \
        (["raise", "accept", 5, 7], "ok")
    # a counter-raise past the cap is an accept of the pending raise
    assert strip_pruned(["raise", "raise"], strengths, (1, 1)) == (["raise", "accept"], "answer")
    # the raise to 6 is pending: its answer is the lift's accept
    assert strip_pruned(["raise", "accept", 5, 2, 1, "raise"], strengths, (1, 1))[1] == "answer"
    with pytest.raises(ValueError, match="accept"):
        strip_pruned(["accept"], strengths, (1, 1))


def _random_profile(game, rng):
    p = rng.dirichlet(np.ones(int(game.infoset_ptr[-1])))  # positive weights, normalised per set
    out = np.empty_like(p)
    for i in range(game.n_infosets):
        lo, hi = game.infoset_ptr[i], game.infoset_ptr[i + 1]
        out[lo:hi] = p[lo:hi] / p[lo:hi].sum()
    return out


def test_best_responses_agree_at_every_score(trees):
    rng = np.random.default_rng(21)
    full = trees((4, 4))
    maps = {}
    checked = {"min": 0, "player": 0}
    for a, b in SCORES:
        table = raise_utility_table(a, b, W)
        assert player_prune_is_lossless(table, a, b)  # W grows with one's own points
        full.set_utilities(table)
        for mode in ("min", "player"):
            caps = raise_caps(a, b, mode)
            if caps == (4, 4):
                continue
            pruned = trees(caps)
            pruned.set_utilities(table)
            if caps not in maps:
                maps[caps] = lift_map(pruned, full)
            profile = _random_profile(pruned.game, rng)
            got = evaluate(full.game, lift_policy(pruned, profile, full, maps[caps]))
            want = evaluate(pruned.game, profile)
            for k in ("value", "br0", "br1", "nash_conv"):
                assert got[k] == pytest.approx(want[k], abs=1e-12), (a, b, mode, k)
            checked[mode] += 1
    assert checked == {"min": 8 * 8, "player": 121 - 3 * 3}  # min 3..10; a side at 3..10


@pytest.mark.parametrize("score,mode", [((9, 10), "min"), ((7, 6), "min"), ((4, 5), "min"),
                                        ((10, 1), "player"), ((3, 9), "player")])
def test_game_values_agree_with_the_lp(trees, score, mode):
    table = raise_utility_table(*score, W)
    full, pruned = trees((4, 4)), trees(raise_caps(*score, mode))
    for t in (full, pruned):
        t.set_utilities(table)
    assert pruned.game.n_nodes < full.game.n_nodes
    exact = naive.truco_lp_value_of_tabular(full.game)
    assert naive.truco_lp_value_of_tabular(pruned.game) == pytest.approx(exact, abs=1e-9)
    res = solve(pruned.game, target_nash_conv=1e-6, max_iterations=20_000, check_every=25)
    lifted = evaluate(full.game, lift_policy(pruned, res.strategy, full))
    assert lifted["nash_conv"] == pytest.approx(res.nash_conv, abs=1e-12)
    assert lifted["br1"] - 1e-12 <= exact <= lifted["br0"] + 1e-12


def test_player_rule_needs_a_monotone_table():
    table = raise_utility_table(9, 2, W)
    assert player_prune_is_lossless(table, 9, 2)
    bad = table.copy()
    # pé (at 2) winning 9 points would be worth less to pé than winning 6: mano at 9 may not skip
    # the raise to 9
    bad[ladder_outcome(1, 3)] = bad[ladder_outcome(1, 2)] + 0.01
    assert not player_prune_is_lossless(bad, 9, 2)
