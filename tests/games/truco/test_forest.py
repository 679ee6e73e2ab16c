"""The forest CFR of raise subgames against the tabular CFR of kernels/cfr.py on
the same trees: small decks and a slice of the full deck, several raise caps, cold and warm starts,
the exact best response, the outcome probabilities, and the grid driver's use of it."""

import numba
import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.forest import build_raise_forest
from strongsolve.games.truco.public_tree import build_public_raise_tree
from strongsolve.games.truco.stages.grid import small_deck
from strongsolve.games.truco.sizes import raise_tree_sizes
from strongsolve.games.truco.stages.groups import (DEFAULTS, _solve_one, check_params,
                                                   transfer_regrets)
from strongsolve.games.truco.tree import N_RAISE_OUTCOMES, build_hand_tree
from strongsolve.kernels import cfr
from strongsolve.kernels import forest_cfr as fc
from strongsolve.kernels import public_cfr
from strongsolve.kernels.off_path import refine_tabular

DECK9 = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah", "Kd", "Ks"]
DECK7 = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah"]
STRENGTHS = np.arange(R.N_STRENGTHS)


def _deal(cards, vclass):
    hands, pairs, weights = ab.deal_pairs(small_deck(cards).capacities[vclass])
    return np.array(hands), pairs, weights


def _full_slice(n_hands):
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(0))
    keep = pairs[:, 0] < n_hands
    return np.array(hands), pairs[keep], weights[keep]


def _both(deal, caps, table):
    hands, pairs, weights = deal
    tree = build_hand_tree(STRENGTHS, hands, pairs, weights, raises=True, raise_caps=caps)
    tree.set_utilities(table)
    forest = build_raise_forest(STRENGTHS, hands, pairs, weights, raise_caps=caps)
    forest.set_utilities(table)
    return tree, forest


def _table(seed):
    return np.random.default_rng(seed).random(N_RAISE_OUTCOMES)


def _assert_same(a, b):
    for k in ("value", "nash_conv", "exploitability"):
        assert getattr(b, k) == pytest.approx(getattr(a, k), abs=1e-12), k
    assert np.abs(a.strategy - b.strategy).max() <= 1e-12
    assert a.iterations == b.iterations
    # every per-slot sum is taken in the tabular order: the accumulators are equal bit for bit
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.strat_sum, b.strat_sum)


CASES = [(DECK9, 0, (1, 1)), (DECK9, 1, (2, 1)), (DECK9, 0, (0, 2)), (DECK7, 1, (4, 4))]


@pytest.mark.parametrize("cards,vclass,caps", CASES)
def test_forest_layout_equals_the_tabular_tree(cards, vclass, caps):
    tree, forest = _both(_deal(cards, vclass), caps, _table(0))
    g = tree.game
    assert forest.n_nodes == g.n_nodes and forest.n_infosets == g.n_infosets
    assert np.array_equal(forest.infoset_key, tree.infoset_key)
    assert np.array_equal(forest.infoset_ptr, g.infoset_ptr)
    assert forest.raise_caps == tree.raise_caps
    # the nodes of each deal are the tabular tree's, root first, then the deal's block in order
    dec = g.node_type == cfr.DECISION
    expected = np.where(dec, g.node_infoset + fc.PLAYER_BIT * (g.node_player == 1),
                        -1 - tree.outcome.astype(np.int64))
    start = 1 + forest.n_deals
    for d in range(forest.n_deals):
        codes = forest.node_code[forest.deal_start[d]:forest.deal_start[d + 1]]
        assert codes[0] == expected[1 + d]
        assert np.array_equal(codes[1:], expected[start:start + len(codes) - 1])
        start += len(codes) - 1
    assert start == g.n_nodes


@pytest.mark.parametrize("cards,vclass,caps", CASES)
def test_the_forest_of_given_information_sets_is_the_counted_one(cards, vclass, caps):
    """Built with the public tree's keys and slot offsets (one pass over the deals), the forest
    equals the one whose information sets are counted (three passes), array by array; a tree of
    other raise caps is refused."""
    hands, pairs, weights = _deal(cards, vclass)
    counted = build_raise_forest(STRENGTHS, hands, pairs, weights, raise_caps=caps)
    public = build_public_raise_tree(STRENGTHS, hands, pairs, weights, raise_caps=caps)
    given = build_raise_forest(STRENGTHS, hands, pairs, weights, raise_caps=caps,
                               infosets=(public.infoset_key, public.infoset_ptr))
    for name in ("node_code", "deal_start", "deal_prob", "deal_hands", "hand_ptr", "hand_deals",
                 "hand_nodes", "infoset_key", "infoset_ptr", "infoset_depth", "infoset_local",
                 "group_slots"):
        a, b = getattr(counted, name), getattr(given, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert given.raise_caps == counted.raise_caps
    other = (1, 1) if caps != (1, 1) else (2, 2)
    with pytest.raises(ValueError, match="not this tree's"):
        build_raise_forest(STRENGTHS, hands, pairs, weights, raise_caps=other,
                           infosets=(public.infoset_key, public.infoset_ptr))


@pytest.mark.parametrize("cards,vclass,caps", CASES)
def test_forest_solve_equals_tabular_cold_and_warm(cards, vclass, caps):
    tree, forest = _both(_deal(cards, vclass), caps, _table(1))
    a = cfr.solve(tree.game, target_nash_conv=1e-14, max_iterations=12, check_every=6)
    b = fc.solve(forest, target_nash_conv=1e-14, max_iterations=12, check_every=6)
    _assert_same(a, b)
    # warm start with other utilities (the next fixed-point round of a group)
    tree.set_utilities(_table(2))
    forest.set_utilities(_table(2))
    warm = (a.regret, a.strat_sum, a.iterations)
    a2 = cfr.solve(tree.game, target_nash_conv=1e-14, max_iterations=8, check_every=8, warm_start=warm)
    b2 = fc.solve(forest, target_nash_conv=1e-14, max_iterations=8, check_every=8, warm_start=warm)
    _assert_same(a2, b2)
    assert a2.iterations == 20
    assert np.array_equal(warm[0], b.regret)  # not overwritten without overwrite_warm_start


def test_forest_solve_on_a_slice_of_the_full_deck():
    deal = _full_slice(3)
    tree, forest = _both(deal, (1, 1), _table(3))
    assert forest.n_nodes > 50_000
    a = cfr.solve(tree.game, target_nash_conv=1e-14, max_iterations=4, check_every=2)
    b = fc.solve(forest, target_nash_conv=1e-14, max_iterations=4, check_every=2)
    _assert_same(a, b)
    warm = (a.regret, a.strat_sum, a.iterations)
    _assert_same(cfr.solve(tree.game, target_nash_conv=1e-14, max_iterations=2, check_every=2,
                           warm_start=warm),
                 fc.solve(forest, target_nash_conv=1e-14, max_iterations=2, check_every=2,
                          warm_start=warm))
    counted = raise_tree_sizes(ab.class_capacities(0), (1, 1), hands_limit=3)
    assert (forest.n_nodes, forest.n_infosets, forest.n_slots) == (
        counted["nodes"], counted["infosets"], counted["action_slots"])


@pytest.mark.parametrize("cards,vclass,caps", CASES[:2] + CASES[3:])
def test_best_response_and_outcome_probabilities_of_any_profile(cards, vclass, caps):
    tree, forest = _both(_deal(cards, vclass), caps, _table(4))
    rng = np.random.default_rng(7)
    strategy = cfr.average_strategy(tree.game, rng.random(forest.n_slots) ** 3)
    ev = cfr.evaluate(tree.game, strategy)
    ef = fc.evaluate(forest, strategy)
    for k in ("value", "br0", "br1", "nash_conv", "exploitability"):
        assert ef[k] == pytest.approx(ev[k], abs=1e-12), k
    reach = cfr.reach_probabilities(tree.game, strategy)
    term = tree.outcome >= 0
    expected = np.bincount(tree.outcome[term], weights=reach[term], minlength=N_RAISE_OUTCOMES)
    assert np.abs(ef["outcome_probabilities"] - expected).max() <= 1e-12
    assert ef["outcome_probabilities"].sum() == pytest.approx(1.0, abs=1e-12)


def test_parallel_kernels_equal_the_tabular_solver(monkeypatch):
    tree, forest = _both(_deal(DECK9, 0), (2, 2), _table(5))
    a = cfr.solve(tree.game, target_nash_conv=1e-14, max_iterations=6, check_every=3)
    monkeypatch.setattr(fc, "PARALLEL_MIN_NODES", 0)  # the parallel kernels even on a small game
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            b = fc.solve(forest, target_nash_conv=1e-14, max_iterations=6, check_every=3)
            _assert_same(a, b)
            ev = cfr.evaluate(tree.game, b.strategy)
            assert b.outcome_probabilities.sum() == pytest.approx(1.0, abs=1e-12)
            assert fc.evaluate(forest, b.strategy)["br1"] == pytest.approx(ev["br1"], abs=1e-12)
    finally:
        numba.set_num_threads(before)


def test_transfer_regrets_merge_join_on_sorted_keys():
    src_key = np.array([3, 8, 10, 15])
    src_ptr = np.array([0, 2, 5, 7, 9])
    src_regret = np.arange(9.0) + 1
    dst_key = np.array([1, 8, 15, 20])
    dst_ptr = np.array([0, 2, 5, 7, 9])
    out = transfer_regrets(src_key, src_ptr, src_regret, dst_key, dst_ptr)
    assert out.tolist() == [0, 0, 3, 4, 5, 8, 9, 0, 0]


def test_grid_driver_gives_the_same_record_with_either_solver():
    deck = ab.deal_pairs(small_deck(DECK9).capacities[0])
    table = _table(6)
    recs = {}
    for solver in ("forest", "tabular"):
        prm = check_params(dict(solver=solver, max_iterations=10, check_every=5))
        recs[solver] = _solve_one((9, 10), 0, deck, table, prm, None, None, True)
    f, t = recs["forest"][2], recs["tabular"][2]
    for k in ("value", "nash_conv", "exploitability", "p_nobody"):
        assert f[k] == pytest.approx(t[k], abs=1e-12), k
    for k in ("iterations", "n_nodes", "n_infosets", "raise_caps", "prune"):
        assert f[k] == t[k], k
    for k in ("policy", "off_path", "infoset_ptr", "infoset_key", "hands"):
        assert np.array_equal(f["arrays"][k], t["arrays"][k]), k
    for k in ("off_path_sets", "off_path_value", "off_path_nash_conv"):
        assert f[k] == pytest.approx(t[k], abs=1e-12), k
    assert f["off_path_sets"] == t["arrays"]["off_path"].sum() > 0
    # the public tree's solve is refined on the forest of the same keys: its record holds the
    # tabular refinement of its own average strategy (which differs from the forest's where a
    # regret is 0 in one solver and 1e-17 in the other, kernels/public_cfr.py)
    prm = check_params(dict(solver="public", max_iterations=10, check_every=5))
    u = _solve_one((9, 10), 0, deck, table, prm, None, None, True)[2]
    hands, pairs, weights = deck
    game = build_public_raise_tree(STRENGTHS, np.array(hands), pairs, weights,
                                   raise_caps=tuple(u["raise_caps"]))
    game.set_utilities(table)
    raw = public_cfr.solve(game, max_iterations=10, check_every=5).strategy
    tree = build_hand_tree(STRENGTHS, np.array(hands), pairs, weights, raises=True,
                           raise_caps=tuple(u["raise_caps"]))
    tree.set_utilities(table)
    policy, off = refine_tabular(tree.game, raw)
    assert np.array_equal(u["arrays"]["policy"], policy) and np.array_equal(u["arrays"]["off_path"], off)
    assert u["off_path_sets"] == off.sum() > 0
    # the transfer triple warm-starts the next class the same way
    nxt = ab.deal_pairs(small_deck(DECK9).capacities[1])
    prm = check_params(dict(max_iterations=5, check_every=5, solver="forest"))
    a = _solve_one((9, 10), 1, nxt, table, prm, None, recs["forest"][4], True)[2]
    b = _solve_one((9, 10), 1, nxt, table, dict(prm, solver="tabular"), None, recs["tabular"][4],
                   True)[2]
    assert a["nash_conv"] == pytest.approx(b["nash_conv"], abs=1e-12)
    assert recs["forest"][2]["p_nobody"] > 0 and DEFAULTS["solver"] == "auto"
    with pytest.raises(ValueError, match="bad solver 'fast'"):
        check_params(dict(solver="fast"))


def test_forest_bytes_arithmetic():
    assert fc.forest_bytes(10, 3, 2, 1) == 10 * 4 + 3 * 24 + 2 * 21 + 32
    _, forest = _both(_deal(DECK7, 0), (1, 1), _table(0))
    per_node = forest.node_code.nbytes / (forest.n_nodes - 1)
    assert per_node == fc.BYTES_PER_NODE


def test_spilled_group_solve_equals_the_in_memory_one(tmp_path):
    from strongsolve.games.truco.stages.grid import successors
    from strongsolve.games.truco.stages.groups import solve_scores

    deck = small_deck(DECK7)
    decks = {c: ab.deal_pairs(deck.capacities[c]) for c in deck.classes}
    group = [(9, 10), (10, 9)]
    W = {t: 0.5 + 0.01 * (t[0] - t[1]) for s in group for t in successors(*s) if t not in group}
    prm = check_params(dict(target_nash_conv=1e-3, check_every=10, max_iterations=100,
                            fixed_point_tol=1e-9, max_fixed_point_rounds=2))
    lines = []
    runs = []
    for d in (None, tmp_path):
        try:  # two rounds: the second warm-starts from the first's (spilled) accumulators
            runs.append(solve_scores(group, W, decks, deck.probabilities, prm, lines.append, "test",
                                     spill_dir=d))
        except RuntimeError as e:
            assert "no fixed point within 2 rounds" in str(e)
            runs.append(e)
    assert str(runs[0]) == str(runs[1])
    assert any("round 1 score 9-10 class 1" in m for m in lines)
    prm["max_fixed_point_rounds"] = 1
    prm["fixed_point_tol"] = 1.0
    spill = tmp_path / "one_round"
    runs = [solve_scores(group, W, decks, deck.probabilities, prm, lines.append, "test",
                         spill_dir=d) for d in (None, spill)]
    (mem, r_mem), (disk, r_disk) = runs
    assert r_mem == r_disk and mem.keys() == disk.keys()
    for key in mem:
        assert disk[key]["value"] == mem[key]["value"]
        assert disk[key]["iterations"] == mem[key]["iterations"]
        for name, arr in mem[key]["arrays"].items():
            assert isinstance(disk[key]["arrays"][name], np.memmap)
            assert np.array_equal(disk[key]["arrays"][name], arr)
    # round 0's seven arrays (the stored five, regrets, strategy sums) and its record (the
    # checkpoint), no temporary file left
    assert len(list(spill.glob("s9-10_v0_r0_*.npy"))) == 7 and (spill / "s9-10_v0_r0.json").exists()
    assert not list(spill.glob(".*tmp*"))
