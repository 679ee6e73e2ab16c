"""The off-path refinement (kernels/off_path.py) on small Truco trees, against the plain-recursion
reference of tests/naive/truco.py: every information set off the path after any deviation proposes
a move whose value against the opponent's strategy is the best any continuation gets; on-path rows,
the value and NashConv are unchanged; the forest form gives the tabular form's arrays."""

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.forest import build_raise_forest
from strongsolve.games.truco.stages.grid import small_deck
from strongsolve.games.truco.tree import N_RAISE_OUTCOMES, build_hand_tree
from strongsolve.kernels import cfr
from strongsolve.kernels import forest_cfr as fc
from strongsolve.kernels.off_path import OFF_PATH_REACH, refine_forest, refine_tabular

from naive import truco as naive

DECK7 = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah"]
DECK9 = DECK7 + ["Kd", "Ks"]
STRENGTHS = np.arange(R.N_STRENGTHS)


def _deal(cards, vclass):
    hands, pairs, weights = ab.deal_pairs(small_deck(cards).capacities[vclass])
    return np.array(hands), pairs, weights


def _raise_tree(caps, seed):
    hands, pairs, weights = _deal(DECK7, 1)
    tree = build_hand_tree(STRENGTHS, hands, pairs, weights, raises=True, raise_caps=caps)
    table = np.random.default_rng(seed).random(N_RAISE_OUTCOMES)
    tree.set_utilities(table)
    forest = build_raise_forest(STRENGTHS, hands, pairs, weights, raise_caps=caps)
    forest.set_utilities(table)
    return tree, forest


def _eleven_tree():
    hands, pairs, weights = _deal(DECK9, 0)
    tree = build_hand_tree(STRENGTHS, hands, pairs, weights)  # 11-11: cards only
    from strongsolve.games.truco.tree import N_OUTCOMES
    tree.set_utilities(np.random.default_rng(7).random(N_OUTCOMES))
    return tree


def _check_against_naive(game, strategy, refined, off, tau=OFF_PATH_REACH):
    """Every off-path set of the reference is off here, its proposed move's value is the best
    available (1e-9) and the move is pure; returns the number of off-path sets checked."""
    nested = naive.truco_nested_from_tabular(game)
    ptr = game.infoset_ptr

    def stored(key, n):
        return [float(x) for x in strategy[ptr[key]:ptr[key] + n]]

    def proposed(key, n):
        return [float(x) for x in refined[ptr[key]:ptr[key] + n]]

    checked = 0
    for p in range(2):
        sets = naive.truco_off_path_beliefs(nested, stored, p, tau)
        mine = {int(i) for i in np.flatnonzero(off)
                if game.node_player[np.flatnonzero(game.node_infoset == i)[0]] == p}
        assert set(sets) == mine
        for key, members in sets.items():
            row = refined[ptr[key]:ptr[key + 1]]
            assert sorted(row.tolist())[-1] == 1.0 and np.count_nonzero(row) == 1
            # the refined profile from here on: p's refined rows, the opponent's stored ones
            mixed = lambda k, n: proposed(k, n) if k in sets else stored(k, n)  # noqa: E731
            total = sum(w for _, w in members)
            got = sum(w * naive.truco_continuation_value(n, mixed) for n, w in members) / total
            best = naive.truco_best_continuation(members, stored, p)
            assert (got >= best - 1e-9) if p == 0 else (got <= best + 1e-9), key
            checked += 1
    return checked


def _solve(game, target):
    return cfr.solve(game, target_nash_conv=target, max_iterations=3000, check_every=10)


@pytest.mark.parametrize("target", [1e-3, 1e-5])
def test_eleven_eleven_after_every_deviation_the_move_is_a_best_response(target):
    tree = _eleven_tree()
    res = _solve(tree.game, target)
    refined, off = refine_tabular(tree.game, res.strategy)
    assert off.any()
    assert _check_against_naive(tree.game, res.strategy, refined, off) == off.sum()
    _assert_on_path_and_evaluation_unchanged(tree.game, res.strategy, refined, off, cfr.evaluate,
                                             target)


def test_raise_tree_after_every_deviation_the_move_is_a_best_response():
    tree, _ = _raise_tree((1, 1), 3)
    target = 1e-3
    res = _solve(tree.game, target)
    refined, off = refine_tabular(tree.game, res.strategy)
    assert off.any()
    assert _check_against_naive(tree.game, res.strategy, refined, off) == off.sum()
    _assert_on_path_and_evaluation_unchanged(tree.game, res.strategy, refined, off, cfr.evaluate,
                                             target)


def _pure_profile(game, seed):
    """A random pure profile: every action but one a deviation, on both sides."""
    rng = np.random.default_rng(seed)
    strategy = np.empty(int(game.infoset_ptr[-1]))
    for i in range(game.n_infosets):
        lo, hi = game.infoset_ptr[i], game.infoset_ptr[i + 1]
        row = np.zeros(hi - lo)
        row[rng.integers(hi - lo)] = 1.0
        strategy[lo:hi] = row
    return strategy


def test_a_pure_profile_gives_the_reference_choice_after_deviations_of_both():
    # exact zeros on both sides: the opponent's deviations exercise the beliefs of the fewest
    # zero-probability actions
    g = _eleven_tree().game
    strategy = _pure_profile(g, 5)
    refined, off = refine_tabular(g, strategy)
    assert _check_against_naive(g, strategy, refined, off) == off.sum() > 0


def test_the_forest_gives_the_tabular_arrays_for_a_pure_profile():
    tree, forest = _raise_tree((1, 1), 12)
    strategy = _pure_profile(tree.game, 9)
    refined, off = refine_tabular(tree.game, strategy)
    assert _check_against_naive(tree.game, strategy, refined, off) == off.sum() > 0
    f_refined, f_off = refine_forest(forest, strategy)
    assert np.array_equal(off, f_off) and np.array_equal(refined, f_refined)


def _assert_on_path_and_evaluation_unchanged(game, strategy, refined, off, evaluate, tol):
    rows = np.repeat(off, np.diff(game.infoset_ptr))
    assert np.array_equal(refined[~rows], strategy[~rows])  # bit for bit
    before, after = evaluate(game, strategy), evaluate(game, refined)
    # rows of own reach at most OFF_PATH_REACH weigh little: within the solve's target, and the
    # best responses there leave the profile no more exploitable
    assert after["value"] == pytest.approx(before["value"], abs=tol)
    assert after["nash_conv"] <= before["nash_conv"] + 1e-12


@pytest.mark.parametrize("caps", [(1, 1), (2, 1)])
def test_the_forest_gives_the_tabular_arrays(caps):
    tree, forest = _raise_tree(caps, 11)
    res = _solve(tree.game, 1e-3)
    refined, off = refine_tabular(tree.game, res.strategy)
    f_refined, f_off = refine_forest(forest, res.strategy)
    assert np.array_equal(off, f_off)
    assert np.abs(refined - f_refined).max() <= 1e-12
    _assert_on_path_and_evaluation_unchanged(forest, res.strategy, f_refined, f_off, fc.evaluate,
                                             1e-3)


def test_the_exact_lp_solve_is_refined_too():
    # the sequence-form LP's equilibrium has exact zeros: its refinement at the first threshold
    from strongsolve.games.truco.stages.groups import _solve_one, check_params
    from strongsolve.kernels.sequence_lp import solve_lp

    deck = _deal(DECK9, 0)
    table = np.random.default_rng(7).random(4)
    rec = _solve_one((11, 11), 0, (deck[0].tolist(), deck[1], deck[2]), table,
                     check_params(dict(solver="lp")), None, None, True)[2]
    tree = _eleven_tree()
    tree.set_utilities(table)
    raw = solve_lp(tree.game).strategy
    refined, off = refine_tabular(tree.game, raw, rec["off_path_reach"])
    assert np.array_equal(rec["arrays"]["off_path"], off) and off.sum() > 0
    assert np.array_equal(rec["arrays"]["policy"], refined)
    assert _check_against_naive(tree.game, raw, refined, off, rec["off_path_reach"]) == off.sum()
