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
from strongsolve.kernels.off_path import OFF_PATH_REACH, refine_forest, refine_tabular, tabular_refiner

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


def _check_against_naive(game, strategy, refined, off, tau=OFF_PATH_REACH, unreached=True):
    """Every set off the path under the profile or under the refined one (the reference) is off
    here; at every set off here the proposed move is pure and its value is the best available
    (1e-9) against the refined profile; returns the number of off-path sets checked."""
    nested = naive.truco_nested_from_tabular(game)
    ptr = game.infoset_ptr

    def stored(key, n):
        return [float(x) for x in strategy[ptr[key]:ptr[key] + n]]

    def proposed(key, n):
        return [float(x) for x in refined[ptr[key]:ptr[key] + n]]

    checked = 0
    marked = {int(i) for i in np.flatnonzero(off)}
    for p in range(2):
        mine = {i for i in marked
                if game.node_player[np.flatnonzero(game.node_infoset == i)[0]] == p}
        for profile in (stored, proposed):
            assert set(naive.truco_off_path_beliefs(nested, profile, p, tau, unreached)) <= mine
        sets = naive.truco_off_path_beliefs(nested, stored, p, tau, unreached, force=mine)
        assert set(sets) == mine
        for key, members in sets.items():
            row = refined[ptr[key]:ptr[key + 1]]
            assert sorted(row.tolist())[-1] == 1.0 and np.count_nonzero(row) == 1
            # the refined profile from here on, both players' refined rows: p's move is the best
            # any continuation of p gets against the opponent's refined strategy
            total = sum(w for _, w in members)
            got = sum(w * naive.truco_continuation_value(n, proposed) for n, w in members) / total
            best = naive.truco_best_continuation(members, proposed, p)
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


def _own_reach(nested, strategy, player):
    """{key: own reach} of ``player``'s information sets (the product of its own probabilities)."""
    out = {}

    def walk(node, own):
        if node["kind"] == "terminal":
            return
        probs = (node["probs"] if node["kind"] == "chance"
                 else strategy(node["key"], len(node["children"])))
        mine = node["kind"] == "decision" and node["player"] == player
        if mine:
            out[node["key"]] = own
        for p, c in zip(probs, node["children"]):
            walk(c, own * p if mine else own)

    walk(nested, 1.0)
    return out


def test_the_sets_the_opponent_made_unreachable_are_refined_too():
    # a pure profile: the sets after the other player's deviation have own reach 1, off the path
    # only through the opponent's reach; each is a best response (the reference) like the others
    g = _eleven_tree().game
    strategy = _pure_profile(g, 0)
    refined, off = refine_tabular(g, strategy)
    nested = naive.truco_nested_from_tabular(g)
    ptr = g.infoset_ptr

    def stored(key, n):
        return [float(x) for x in strategy[ptr[key]:ptr[key] + n]]

    for p in range(2):
        own = _own_reach(nested, stored, p)
        theirs = [k for k in naive.truco_off_path_beliefs(nested, stored, p, OFF_PATH_REACH)
                  if own[k] == 1.0]
        assert theirs and all(off[k] for k in theirs)
        # at least one of them moves: the profile's row was not the best response
        assert any(not np.array_equal(refined[ptr[k]:ptr[k + 1]], strategy[ptr[k]:ptr[k + 1]])
                   for k in theirs)
    assert _check_against_naive(g, strategy, refined, off) == off.sum()


def test_a_rarely_reached_set_drops_a_dominated_move():
    """The threshold ladder of a solve (groups._off_path) from 1e-1: on a 7-card raise tree solved
    to 1e-4, the first threshold is taken, and at information sets its player's own strategy
    reaches with a probability between 1e-3 and 1e-1, where the CFR average keeps weight on a move
    worse by more than 0.1 than the best (the reference's values against the refined profile), the
    refined row is the best move."""
    from strongsolve.games.truco.stages.groups import _off_path
    from strongsolve.kernels.off_path import OFF_PATH_REACHES

    g = _raise_tree((1, 1), 11)[0].game
    target = 1e-4
    res = _solve(g, target)
    rec = _off_path((11, 11), 0, res, tabular_refiner(g, res.strategy),
                    lambda st: cfr.evaluate(g, st), target)
    assert rec["off_path_reach"] == OFF_PATH_REACHES[0] == 1e-1 and rec["off_path_unreached"]
    policy = rec["policy"]
    assert abs(rec["off_path_value"] - res.value) <= target
    assert rec["off_path_nash_conv"] <= max(res.nash_conv, target)
    nested = naive.truco_nested_from_tabular(g)
    ptr = g.infoset_ptr

    def raw(key, n):
        return [float(x) for x in res.strategy[ptr[key]:ptr[key] + n]]

    def proposed(key, n):
        return [float(x) for x in policy[ptr[key]:ptr[key] + n]]

    dropped = 0
    for p in range(2):
        wide = naive.truco_off_path_beliefs(nested, raw, p, 1e-1, unreached=False)
        narrow = naive.truco_off_path_beliefs(nested, raw, p, OFF_PATH_REACH, unreached=False)
        for key in set(wide) - set(narrow):
            members = wide[key]
            n = len(members[0][0]["children"])
            total = sum(w for _, w in members)
            values = [sum(w * naive.truco_continuation_value(m["children"][a], proposed)
                          for m, w in members) / total for a in range(n)]
            best = max(values) if p == 0 else min(values)
            worse = [a for a in range(n) if abs(values[a] - best) > 0.1 and raw(key, n)[a] > 0]
            row = proposed(key, n)
            assert row.count(1.0) == 1 and abs(values[row.index(1.0)] - best) <= 1e-9
            dropped += bool(worse)
    assert dropped >= 2
    assert _check_against_naive(g, res.strategy, policy, rec["off_path"], 1e-1) == rec["off_path"].sum()


def test_one_refiner_for_every_rung_on_any_thread_count(monkeypatch):
    """The forest refiner computes its beliefs once and serves every rung of the ladder: each rung
    gives the tabular form's arrays, on one thread and on two (the parallel passes forced on)."""
    import numba

    from strongsolve.kernels.off_path import forest_refiner

    tree, forest = _raise_tree((2, 1), 13)
    res = _solve(tree.game, 1e-3)
    monkeypatch.setattr(fc, "PARALLEL_MIN_NODES", 0)
    threads = numba.get_num_threads()
    results = {}
    try:
        for n in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(n)
            refine = forest_refiner(forest, res.strategy)
            results[n] = [refine(tau, u) for u in (True, False) for tau in (1e-1, 1e-3, 0.0)]
    finally:
        numba.set_num_threads(threads)
    tabular = tabular_refiner(tree.game, res.strategy)
    for i, (u, tau) in enumerate((u, tau) for u in (True, False) for tau in (1e-1, 1e-3, 0.0)):
        refined, off = tabular(tau, u)
        assert np.array_equal(results[1][i][0], results[max(results)][i][0])  # bit for bit
        assert np.array_equal(results[1][i][1], results[max(results)][i][1])
        assert np.array_equal(off, results[1][i][1])
        assert np.abs(refined - results[1][i][0]).max() <= 1e-12


@pytest.mark.parametrize("first", range(19))
def test_the_ladder_takes_the_first_passing_rung_in_at_most_five_tries(first):
    """groups._off_path bisects each half of the ladder: with a check that passes from rung
    ``first`` on (18: none passes), it takes that rung after at most 5 refinements, or raises."""
    from types import SimpleNamespace

    from strongsolve.games.truco.stages.groups import LADDER, _off_path

    res = SimpleNamespace(strategy=np.zeros(2), value=0.5, nash_conv=1e-3)
    calls = []

    def refine(tau, unreached):
        calls.append(LADDER.index((unreached, tau)))
        return np.full(2, float(calls[-1])), np.zeros(3, bool)

    # the check passes from ``first`` on within each half (one half's last rung decides the half);
    # a failing rung moves the NashConv above the target
    half = len(LADDER) // 2
    if first < half:
        passing = lambda i: first <= i < half or i >= half  # noqa: E731
    else:
        passing = lambda i: i >= first  # noqa: E731

    def evaluate(policy):
        return dict(value=0.5, nash_conv=1e-3 if passing(int(policy[0])) else 2e-3)

    if first == len(LADDER):
        with pytest.raises(RuntimeError, match="even at own reach 0"):
            _off_path((10, 10), 0, res, refine, evaluate, 1e-3)
        return
    rec = _off_path((10, 10), 0, res, refine, evaluate, 1e-3)
    assert (rec["off_path_unreached"], rec["off_path_reach"]) == LADDER[first]
    assert rec["policy"][0] == first
    assert rec["off_path_rungs"] == len(set(calls)) == len(calls) <= 5
